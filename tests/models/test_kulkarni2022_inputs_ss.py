"""Exact speed-ups of the perturbed-inputs regressions (issue 15), each tested against the program
it replaces.

stan/kulkarni2022/linear_regression_inputs.stan evaluates the likelihood of the n perturbed
inputs through their (d + 1) x (d + 1) scatter matrix S = sum_i u_i u_i', u_i = (z_x,i, z_y,i)
(ldp_linreg_inputs_scatter_lpdf: O(d^3) per gradient) instead of summing every user's marginal
(ldp_linreg_inputs_lpdf, Eq. 34-41: O(n d)). The two are the same function of the parameters:

* the scatter lpdf equals the per-user sum (constants kept by both) and an independent scipy
  multivariate-normal sum, u_i ~ N(0, C), at random (Sigma, theta, sigma, sigma_x, sigma_y,
  data) for d = 1, 2, 3, including n < d + 1 (S singular) and a nearly deterministic y | x,
  evaluated by the test-only program tests/stan/kulkarni2022_inputs_scatter_functions.stan
  under fixed_param (deterministic: no false rejections);
* the program and the former one (tests/stan/kulkarni2022_linear_regression_inputs_per_user.stan)
  fitted to one release of LinearRegressionInputs.release give the same posterior (Monte-Carlo
  z-tests; false-rejection rate stated with the test).

stan/kulkarni2022/logistic_regression_inputs.stan evaluates the features' term of Eq. 42-44,
sum_i log N(z_x,i; 0, Sigma + sigma_x^2 I), through the d x d scatter matrix of z_x
(ldp_features_scatter_lpdf) instead of user by user; the labels' term is unchanged. Tested the
same two ways: the likelihoods agree with the per-user ones and with scipy at random arguments
(tests/stan/kulkarni2022_logreg_inputs_scatter_functions.stan), and the program and the former one
(tests/stan/kulkarni2022_logistic_regression_inputs_per_user.stan) give the same posterior.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from test_kulkarni2022_ss_reparam import _mean_sd_mcse, _scalars

from pystanprivacy.models.kulkarni2022_regression import (
    LinearRegressionInputs,
    LogisticRegressionInputs,
    chebyshev_sigmoid,
)
from pystanprivacy.privacy.mechanisms import ClipL2
from pystanprivacy.sampling.stan import StanModel

FUNCTIONS = Path(__file__).parents[1] / "stan" / "kulkarni2022_inputs_scatter_functions.stan"
PER_USER = Path(__file__).parents[1] / "stan" / "kulkarni2022_linear_regression_inputs_per_user.stan"
LOGREG_FUNCTIONS = Path(__file__).parents[1] / "stan" / "kulkarni2022_logreg_inputs_scatter_functions.stan"
LOGREG_PER_USER = Path(__file__).parents[1] / "stan" / "kulkarni2022_logistic_regression_inputs_per_user.stan"


@pytest.fixture(scope="module")
def functions() -> StanModel:
    return StanModel.get(str(FUNCTIONS))


@pytest.fixture(scope="module")
def per_user() -> StanModel:
    return StanModel.get(str(PER_USER))


def _case(d: int, n: int, seed: int, stiff: bool = False) -> dict:
    """Random parameters and n reports drawn from the model (Eq. 34: x ~ N(0, Sigma),
    y | x ~ N(x' theta, sigma^2); z_x = x + N(0, sigma_x^2 I), z_y = y + N(0, sigma_y^2)).
    ``stiff``: sigma, sigma_y ~ 1e-3, sigma_x ~ 1e-2, so that z_y is nearly a linear function of
    z_x and C is ill-conditioned (cond ~ 8e4)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    Sigma = 0.3 * (A @ A.T / d + 0.2 * np.eye(d))
    theta = rng.normal(0, 1.5, size=d)
    sigma, sx, sy = (1e-3, 1e-2, 1e-3) if stiff else tuple(rng.uniform([0.1, 0.2, 0.2], [1.0, 2.0, 2.0]))
    x = rng.multivariate_normal(np.zeros(d), Sigma, size=n)
    y = x @ theta + rng.normal(0, sigma, size=n)
    return {
        "d": d,
        "n": n,
        "zx": x + rng.normal(0, sx, size=(n, d)),
        "zy": y + rng.normal(0, sy, size=n),
        "Sigma": Sigma,
        "theta": theta,
        "sigma": float(sigma),
        "sigma_x": float(sx),
        "sigma_y": float(sy),
    }


def _scipy_loglik(data: dict) -> float:
    """sum_i log N(u_i; 0, C), C = [[Sigma + sigma_x^2 I, Sigma theta], [., theta' Sigma theta
    + sigma^2 + sigma_y^2]]: the joint law of one user's report, from Eq. 34 directly."""
    Sigma, theta, d = data["Sigma"], data["theta"], data["d"]
    c = Sigma @ theta
    C = np.block(
        [
            [Sigma + data["sigma_x"] ** 2 * np.eye(d), c[:, None]],
            [c[None, :], np.array([[theta @ c + data["sigma"] ** 2 + data["sigma_y"] ** 2]])],
        ]
    )
    u = np.column_stack([data["zx"], data["zy"]])
    return float(np.sum(np.atleast_1d(stats.multivariate_normal(np.zeros(d + 1), C).logpdf(u))))


@pytest.mark.parametrize(
    "d, n, seed, stiff, rtol",
    [
        (1, 1, 1, False, 1e-12),  # n < d + 1: S has rank 1 of 2
        (1, 9, 2, False, 1e-12),
        (2, 2, 3, False, 1e-12),  # rank 2 of 3
        (2, 2000, 4, False, 1e-12),
        (3, 1, 5, False, 1e-12),  # rank 1 of 4
        (3, 3, 6, False, 1e-12),  # rank 3 of 4
        (3, 60, 7, False, 1e-12),
        (3, 500, 8, True, 1e-10),  # cond(C) ~ 8e4: rounding ~ 1e-16 cond (seen: 1.6e-12)
    ],
)
def test_scatter_lpdf_equals_per_user_sum(functions, d, n, seed, stiff, rtol):
    """ldp_linreg_inputs_scatter_lpdf(S | n, ...) = sum_i ldp_linreg_inputs_lpdf (both keep
    their constants, so exactly, not up to -n (d + 1)/2 log(2 pi)) = the scipy sum; S = Z'Z."""
    data = _case(d, n, seed, stiff)
    fit = functions.fixed_param(data, draws=1, seed=1)
    out = {k: fit.draws(k)[0] for k in ("scatter", "per_user", "via_scatter")}
    u = np.column_stack([data["zx"], data["zy"]])
    np.testing.assert_allclose(out["scatter"], u.T @ u, rtol=1e-13, atol=1e-13 * np.abs(u).max() ** 2)
    assert np.linalg.matrix_rank(u.T @ u) == min(n, d + 1)
    assert np.isfinite(out["via_scatter"])
    assert out["via_scatter"] == pytest.approx(out["per_user"], rel=rtol)
    assert out["via_scatter"] == pytest.approx(_scipy_loglik(data), rel=rtol)


def _release(n: int = 2000, epsilon: float = 32.0):
    """One release of LinearRegressionInputs (d = 2) from clipped Gaussian data."""
    rng = np.random.default_rng(21)
    Sigma = np.array([[0.09, 0.02], [0.02, 0.05]])
    x = ClipL2(1.0)(rng.multivariate_normal(np.zeros(2), Sigma, size=n))
    y = np.clip(x @ np.array([1.5, -2.0]) + rng.normal(0, 0.3, size=n), -2.0, 2.0)
    return LinearRegressionInputs.release(x, y, epsilon=epsilon, R_y=2.0, seed=22)


def _z_scores(a: dict, b: dict) -> dict[str, tuple[float, float]]:
    """|difference| / sqrt(mcse_1^2 + mcse_2^2) of the posterior mean and sd of every element."""
    out = {}
    for name, draws in a.items():
        m1, s1, em1, es1 = _mean_sd_mcse(draws)
        m2, s2, em2, es2 = _mean_sd_mcse(b[name])
        out[name] = (abs(m1 - m2) / np.hypot(em1, em2), abs(s1 - s2) / np.hypot(es1, es2))
    return out


def _compare_posteriors(new, old, n_scalars: int) -> float:
    """Both fits mixed (R-hat < 1.02, no divergences) and every one of the ``n_scalars`` elements'
    posterior mean and sd agree: z below the Bonferroni two-sided normal bound for an overall
    false-rejection rate of 1e-3. Returns that bound."""
    for post in (new, old):
        assert max(float(np.nanmax(v)) for v in post.rhat().values()) < 1.02
        assert post.num_divergences == 0
    a, b = _scalars(new), _scalars(old)
    assert len(a) == n_scalars and a.keys() == b.keys()
    z_crit = stats.norm.isf(1e-3 / (2 * 2 * len(a)))
    for name, (z_mean, z_sd) in _z_scores(a, b).items():
        assert z_mean < z_crit and z_sd < z_crit, (name, z_mean, z_sd, z_crit)
    return z_crit


def test_same_posterior_as_the_per_user_program(per_user):
    """The program and the former per-user program on the same data (one release, n = 2000,
    d = 2, epsilon = 32: at this n a smaller budget leaves theta near its prior): posterior
    mean and sd of every element of theta (2), sigma (1) and the upper triangle of Sigma (3)
    -> 12 comparisons, |difference| / sqrt(mcse_1^2 + mcse_2^2) (ESS-based MCSE, independent
    seeds) below the Bonferroni two-sided normal bound for an overall false-rejection rate of
    1e-3 (z ~ 3.9, ~8e-5 per comparison). Power: the data move theta well away from its prior,
    and the same comparison rejects the program fitted with sigma_y 5 % too large."""
    model = LinearRegressionInputs()
    data = model.data(_release())
    sampler = dict(chains=4, warmup=500, draws=1000, adapt_delta=0.9)
    new = model.stan_model.sample(data, seed=31, **sampler)
    old = per_user.sample(data, seed=32, **sampler)
    assert np.all(new.draws("theta").std(axis=0) < 0.5 * data["prior_theta_sd"])
    z_crit = _compare_posteriors(new, old, 6)
    wrong = model.stan_model.sample({**data, "sigma_y": 1.05 * data["sigma_y"]}, seed=31, **sampler)
    assert max(max(z) for z in _z_scores(_scalars(wrong), _scalars(old)).values()) > z_crit


# ------------------------------------------------------------------ logistic regression
@pytest.fixture(scope="module")
def logreg_functions() -> StanModel:
    return StanModel.get(str(LOGREG_FUNCTIONS))


@pytest.fixture(scope="module")
def logreg_per_user() -> StanModel:
    return StanModel.get(str(LOGREG_PER_USER))


def _logreg_case(d: int, n: int, seed: int) -> dict:
    """Random parameters and n reports from Eq. 42: x ~ N(0, Sigma), y ~ Bernoulli(inv_logit(x'
    theta)); z_x = x + N(0, sigma_x^2 I), z_y = y flipped with probability 1 - p_keep."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    Sigma = 0.3 * (A @ A.T / d + 0.2 * np.eye(d))
    theta = rng.normal(0, 1.5, size=d)
    sx = float(rng.uniform(0.2, 2.0))
    p_keep = float(rng.uniform(0.55, 0.95))
    x = rng.multivariate_normal(np.zeros(d), Sigma, size=n)
    y = rng.random(n) < 1 / (1 + np.exp(-x @ theta))
    zy = np.where(rng.random(n) < p_keep, y, ~y).astype(np.int64)
    return {
        "d": d,
        "n": n,
        "zx": x + rng.normal(0, sx, size=(n, d)),
        "zy": zy,
        "Sigma": Sigma,
        "theta": theta,
        "sigma_x": sx,
        "p_keep": p_keep,
        "cheb": chebyshev_sigmoid(4.0, 2),
    }


@pytest.mark.parametrize("d, n, seed", [(1, 1, 1), (2, 1, 2), (2, 7, 3), (3, 2, 4), (3, 400, 5), (5, 3000, 6)])
def test_logreg_scatter_lpmf_equals_per_user_sum(logreg_functions, d, n, seed):
    """ldp_features_scatter_lpdf(Sx | n, L) = ldp_features_lpdf(zx | L) = the scipy sum of
    log N(z_x,i; 0, Sigma + sigma_x^2 I), and ldp_logreg_inputs_scatter_lpmf =
    ldp_logreg_inputs_lpmf, to rounding (relative 1e-12), including n < d (Sx singular)."""
    data = _logreg_case(d, n, seed)
    fit = logreg_functions.fixed_param(data, draws=1, seed=1)
    out = {k: fit.draws(k)[0] for k in ("scatter", "features_per_user", "features_scatter", "per_user", "via_scatter")}
    np.testing.assert_allclose(
        out["scatter"], data["zx"].T @ data["zx"], rtol=1e-13, atol=1e-13 * np.abs(data["zx"]).max() ** 2
    )
    K = data["Sigma"] + data["sigma_x"] ** 2 * np.eye(d)
    ref = float(np.sum(np.atleast_1d(stats.multivariate_normal(np.zeros(d), K).logpdf(data["zx"]))))
    assert out["features_scatter"] == pytest.approx(out["features_per_user"], rel=1e-12)
    assert out["features_scatter"] == pytest.approx(ref, rel=1e-12)
    assert np.isfinite(out["via_scatter"])
    assert out["via_scatter"] == pytest.approx(out["per_user"], rel=1e-12)


def test_logreg_same_posterior_as_the_per_user_program(logreg_per_user):
    """The logistic program and the former per-user one on one release of
    LogisticRegressionInputs.release (n = 3000, d = 2, epsilon = 16): posterior mean and sd of
    theta (2) and the upper triangle of Sigma (3), 10 comparisons, each z below the Bonferroni
    bound for an overall false-rejection rate of 1e-3, as for the linear model. Power: the same
    comparison rejects the per-user program fitted with sigma_x 5 % too large."""
    rng = np.random.default_rng(41)
    Sigma = np.array([[0.09, 0.02], [0.02, 0.05]])
    x = ClipL2(1.0)(rng.multivariate_normal(np.zeros(2), Sigma, size=3000))
    y = (rng.random(3000) < 1 / (1 + np.exp(-x @ np.array([3.0, -4.0])))).astype(int)
    model = LogisticRegressionInputs()
    data = model.data(LogisticRegressionInputs.release(x, y, epsilon=16.0, seed=42))
    sampler = dict(chains=4, warmup=500, draws=1000, adapt_delta=0.9)
    new = model.stan_model.sample(data, seed=43, **sampler)
    # the former program samples log(tau), as the current one does here ("auto"; the signed-tau
    # coordinates are tested against these in test_kulkarni2022_signed_tau.py)
    assert data.pop("signed_tau") == 0
    old = logreg_per_user.sample(data, seed=44, **sampler)
    z_crit = _compare_posteriors(new, old, 5)
    wrong = logreg_per_user.sample({**data, "sigma_x": 1.05 * data["sigma_x"]}, seed=44, **sampler)
    assert max(max(z) for z in _z_scores(_scalars(new), _scalars(wrong)).values()) > z_crit
