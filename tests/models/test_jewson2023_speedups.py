"""Exact speed-ups of the beta-D programs (issue 15), each tested against the program it replaces.

stan/functions/betad.stanfunctions now evaluates the beta-D Bernoulli loss with the labels split
by position (log f(y_i) taken from log inv_logit(eta) at the ones and log(1 - inv_logit(eta)) at
the zeros, instead of y .* log f(1) + (1 - y) .* log f(0), and f(1)^beta + f(0)^beta as two
exponentials instead of through log_sum_exp), and the network's output in one matrix product
[1, X] [b_in'; W] instead of X W plus the biases. These are the same functions of the
parameters, so stan/jewson2023/logistic.stan, nn_classifier.stan and nn_regression.stan keep
their posteriors:

* at random networks, inputs, labels and beta (beta - 1 from 1e-4 to 40, outputs up to |eta|
  ~ 60), the new loss and output equal the former ones (tests/stan/jewson2023_betad_speedup_functions.stan,
  under fixed_param) and the loss equals -sum of the independent numpy
  pystanprivacy.models.jewson2023.betad_loss_bernoulli up to its constant N / (beta - 1):
  deterministic, no false rejections;
* the classifier and the former program (tests/stan/jewson2023_nn_classifier_former.stan),
  fitted to the same data, give the same posterior of the network's outputs at the reference
  inputs (Monte-Carlo z-tests, false-rejection rate stated with the test).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_kulkarni2022_inputs_ss import _z_scores

from pystanprivacy.models.jewson2023 import (
    NNClassifierBetaD,
    betad_loss_bernoulli,
    simulate_nn_records,
    simulate_nn_truth,
)
from pystanprivacy.sampling.stan import StanModel

STAN = Path(__file__).parents[1] / "stan"


@pytest.fixture(scope="module")
def functions() -> StanModel:
    return StanModel.get(str(STAN / "jewson2023_betad_speedup_functions.stan"))


@pytest.fixture(scope="module")
def former_classifier() -> StanModel:
    return StanModel.get(str(STAN / "jewson2023_nn_classifier_former.stan"))


def _case(seed: int, n: int, p: int, h: int, scale: float, beta: float) -> dict:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    if seed % 3 == 0:
        y[:] = 1 if seed % 2 else 0  # one class only: an empty index array
    return {
        "N": n,
        "P": p,
        "H": h,
        "X": rng.uniform(-1, 2, size=(n, p)),
        "y": y,
        "beta": beta,
        "W": scale * rng.normal(size=(p, h)),
        "b_in": scale * rng.normal(size=h),
        "w_out": scale * rng.normal(size=h),
        "b_out": float(scale * rng.normal()),
    }


@pytest.mark.parametrize(
    "seed, n, p, h, scale, beta",
    [
        (0, 1, 1, 1, 1.0, 1.0001),
        (1, 37, 2, 10, 1.0, 1.4),
        (2, 200, 5, 10, 3.0, 3.0),
        (3, 50, 8, 4, 10.0, 41.0),
        (4, 120, 3, 10, 0.3, 1.05),
        (5, 80, 2, 10, 6.0, 11.0),
    ],
)
def test_loss_and_output_equal_the_former_forms(functions, seed, n, p, h, scale, beta):
    data = _case(seed, n, p, h, scale, beta)
    out = functions.fixed_param(data, draws=1, seed=1)
    eta, eta_former = out.draws("eta")[0], out.draws("eta_former")[0]
    np.testing.assert_allclose(eta, eta_former, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(eta_former).max()))
    loss, former = float(out.draws("loss")[0]), float(out.draws("loss_former")[0])
    assert loss == pytest.approx(former, rel=1e-11, abs=1e-11)
    # the numpy loss (every constant kept): Stan's value is -sum l - N / (beta - 1)
    expected = -betad_loss_bernoulli(data["y"], eta_former, beta).sum() - n / (beta - 1)
    assert loss == pytest.approx(expected, rel=1e-9, abs=1e-9 * n)


def test_classifier_same_posterior_as_the_former_program(former_classifier):
    """Both programs on one simulated data set (n = 150, d = 2, beta-D loss at epsilon = 5):
    posterior mean and sd of the network's outputs f_ref at the first 5 reference inputs ->
    10 comparisons, |difference| / sqrt(mcse_1^2 + mcse_2^2) (ESS-based, independent seeds)
    below the Bonferroni two-sided normal bound for an overall false-rejection rate of 1e-3
    (z ~ 3.9). The outputs are invariant to the network's symmetries, so label switching
    between chains does not enter. Power: the same comparison rejects the former program at a
    beta 30 % larger."""
    from scipy import stats

    rng = np.random.default_rng(11)
    truth = simulate_nn_truth(rng, 2, 10, 1.0, "classification")
    X, y = simulate_nn_records(rng, truth, 150, "classification")
    model = NNClassifierBetaD()
    beta = model.beta(5.0)
    data = model.stan_data(X, y, beta=beta)
    sampler = dict(chains=4, warmup=1000, draws=1000)
    new = model.stan_model.sample(data, seed=21, **sampler)
    old = former_classifier.sample(data, seed=22, **sampler)
    wrong = former_classifier.sample({**data, "beta": 1.3 * beta}, seed=22, **sampler)
    z_crit = stats.norm.isf(1e-3 / 2 / 10)

    def outputs(post):  # the first 5 reference outputs, each (chains, draws)
        f = post.draws("f_ref", combine_chains=False)
        return {f"f_ref[{k}]": f[:, :, k] for k in range(5)}

    def z_max(a, b):
        return max(max(z) for z in _z_scores(outputs(a), outputs(b)).values())

    assert z_max(new, old) < z_crit
    assert z_max(wrong, old) > z_crit
