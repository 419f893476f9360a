"""The network programs in symmetry-free coordinates (stan/jewson2023/nn_regression_fast.stan,
:class:`NNRegressionFastBetaD`; nn_classifier_fast.stan, :class:`NNClassifierFastBetaD`) against the
programs they speed up (nn_regression.stan, nn_classifier.stan): the same posterior of every
network output (and of sigma2).

Why it is exact. The network m(x) = b_out + sum_j v_j tanh(w_j' x + b_j) is unchanged by a
permutation of the H hidden units and by flipping a unit's signs, (w_j, b_j, v_j) ->
(-w_j, -b_j, -v_j) (tanh is odd); the priors (iid N(0, prior_sd^2) on every weight and bias)
are unchanged too, so the current program's density takes the same value at all 2^H H! images
of a point. Restricting v to 0 < v_1 < ... < v_H (``positive_ordered``) keeps one image of
almost every point (the ties v_j = v_k and v_j = 0 have measure zero): the unnormalised
densities are equal there, the normalised ones differ by exactly log(2^H H!), and every
symmetry-invariant quantity (the outputs f(x), sigma2) has the same posterior. The output bias
is sampled as c_out = m(x_centre), i.e. b_out = c_out - sum_j v_j tanh(w_j' x_centre + b_j): a
shift of one coordinate by a function of the others, unit Jacobian, the prior kept on b_out.

Tests:

* the log density of the fast program at the canonical image of a random point (signs flipped
  to v_j > 0, units sorted by v, c_out the output at the centre) equals the current program's
  at the point itself, to 1e-8, once the log Jacobian of Stan's positive_ordered transform,
  log v_(1) + sum_k log(v_(k) - v_(k-1)), is taken off (both programs drop the same constants
  of their ``~`` statements and share sigma2's transform); the current program's density is
  the same at the point and at its canonical image (its priors are symmetric and
  exchangeable); deterministic, for both losses and two centres;
* both programs fitted to the same data give the same posterior of the outputs (two-sample
  z-tests on MCMC means and sds, false-rejection rate stated in the test).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from test_kulkarni2022_inputs_ss import _z_scores

from pystanprivacy.models.jewson2023 import (
    NNClassifierBetaD,
    NNClassifierFastBetaD,
    NNRegressionBetaD,
    NNRegressionFastBetaD,
    canonical_network,
    nn_forward,
    simulate_nn_records,
    simulate_nn_truth,
)


@pytest.fixture(scope="session")
def standard_program():
    return NNRegressionBetaD().stan_model


@pytest.fixture(scope="session")
def fast_program():
    return NNRegressionFastBetaD().stan_model


@pytest.fixture(scope="session")
def standard_classifier():
    return NNClassifierBetaD().stan_model


@pytest.fixture(scope="session")
def fast_classifier():
    return NNClassifierFastBetaD().stan_model


def _point(rng: np.random.Generator, p: int, h: int, regression: bool = True) -> dict:
    """A parameter point of the current program: output weights of both signs, in no order."""
    v = rng.choice([-1.0, 1.0], size=h) * rng.uniform(0.05, 2.0, size=h)
    point = {"W": rng.normal(size=(p, h)), "b_in": rng.normal(size=h), "w_out": v, "b_out": float(rng.normal())}
    return {**point, "sigma2": float(0.2 + rng.exponential())} if regression else point


def _canonical(point: dict, centre: float) -> dict:
    """Its image with every v_j > 0 (the unit's signs flipped) and the units sorted by v, in the
    fast program's parameters (c_out: the output at every feature = centre)."""
    sign = np.sign(point["w_out"])
    order = np.argsort(np.abs(point["w_out"]))
    W, b, v = (point["W"] * sign)[:, order], (point["b_in"] * sign)[order], np.abs(point["w_out"])[order]
    x = np.full(W.shape[0], centre)
    c_out = point["b_out"] + float(np.sum(v * np.tanh(x @ W + b)))
    return {"W": W, "b_in": b, "w_out": v, "c_out": c_out, **{k: point[k] for k in ("sigma2",) if k in point}}


@pytest.mark.parametrize(
    "task, betad, centre",
    [
        ("regression", 1, 0.5),
        ("regression", 0, 0.5),
        ("regression", 1, -1.3),
        ("classification", 1, 0.5),
        ("classification", 0, 2.0),
    ],
)
def test_log_density_is_the_current_programs_at_the_canonical_image(
    standard_program, fast_program, standard_classifier, fast_classifier, task, betad, centre
):
    regression = task == "regression"
    standard, fast = (standard_program, fast_program) if regression else (standard_classifier, fast_classifier)
    rng = np.random.default_rng(3 + betad)
    n, p, h = 30, 2, 4
    X = rng.uniform(size=(n, p))
    if regression:
        y, model = rng.normal(size=n), NNRegressionBetaD(hidden=h, s2=0.05)
    else:
        y, model = (rng.random(n) < 0.4).astype(int), NNClassifierBetaD(hidden=h)
    data = model.stan_data(X, y, beta=1.7) if betad else model.stan_data(X, y, w=0.8)
    fast_data = {**data, "x_centre": np.full(p, centre)}
    points = [_point(rng, p, h, regression) for _ in range(6)]
    canonical = [_canonical(q, centre) for q in points]
    lp_old, _ = standard.log_density(data, points)
    as_old = [{**{k: c[k] for k in c if k != "c_out"}, "b_out": q["b_out"]} for c, q in zip(canonical, points)]
    lp_old_canonical, _ = standard.log_density(data, as_old)
    lp_new, _ = fast.log_density(fast_data, canonical)
    # Stan's positive_ordered transform: v_1 = exp(u_1), v_k = v_(k-1) + exp(u_k)
    v = np.array([c["w_out"] for c in canonical])
    log_jacobian = np.log(np.diff(v, axis=1, prepend=0.0)).sum(axis=1)
    np.testing.assert_allclose(lp_old_canonical, lp_old, rtol=0, atol=1e-8)
    np.testing.assert_allclose(lp_new - log_jacobian, lp_old, rtol=0, atol=1e-8)
    # the comparison can fail: a point that is not an image (one weight's sign flipped) has another density
    broken = [{**c, "W": c["W"] * np.r_[-1.0, np.ones(h - 1)]} for c in canonical]
    lp_broken, _ = fast.log_density(fast_data, broken)
    assert np.min(np.abs(lp_broken - log_jacobian - lp_old)) > 1e-3


def test_canonical_network_keeps_the_outputs():
    rng = np.random.default_rng(9)
    points = [_point(rng, 3, 5) for _ in range(4)]
    X = rng.uniform(size=(50, 3))
    for q in points:
        c = canonical_network(q)
        assert np.all(np.diff(c["w_out"]) > 0) and c["w_out"][0] > 0
        np.testing.assert_allclose(
            nn_forward(X, c["W"], c["b_in"], c["w_out"], c["b_out"]),
            nn_forward(X, q["W"], q["b_in"], q["w_out"], q["b_out"]),
            rtol=1e-12,
            atol=1e-12,
        )
    batch = {k: np.stack([q[k] for q in points]) for k in points[0]}
    got = canonical_network(batch)
    for i, q in enumerate(points):
        np.testing.assert_array_equal(got["W"][i], canonical_network(q)["W"])
        np.testing.assert_array_equal(got["w_out"][i], _canonical(q, 0.5)["w_out"])


def test_same_posterior_of_the_outputs(standard_program, fast_program):
    """Both programs on one simulated data set (n = 40, d = 2, 3 hidden units, the beta-D loss at
    epsilon = 5 with s2 = 1 / (2 pi) as in the experiments), 4 chains x (1000 + 1000) each:
    posterior mean and sd of sigma2 and of the outputs f_ref at the first 4 reference inputs ->
    10 comparisons, |difference| / sqrt(mcse_1^2 + mcse_2^2) (ESS-based MCSE, independent seeds)
    below the Bonferroni two-sided normal bound for an overall false-rejection rate of 1e-3
    (z ~ 3.9). Power: the same comparison rejects the current program at a beta 15 % larger."""
    rng = np.random.default_rng(5)
    truth = simulate_nn_truth(rng, 2, 3, 1.0, "regression")
    X, y = simulate_nn_records(rng, truth, 40, "regression")
    model = NNRegressionFastBetaD(hidden=3, s2=1.0 / (2.0 * np.pi))
    beta = model.beta(5.0)
    data = model.stan_data(X, y, beta=beta)
    old_data = {k: v for k, v in data.items() if k != "x_centre"}
    sampler = dict(chains=4, warmup=1000, draws=1000)
    new = fast_program.sample(data, seed=31, **sampler)
    old = standard_program.sample(old_data, seed=32, **sampler)
    wrong = standard_program.sample({**old_data, "beta": 1.15 * beta}, seed=33, **sampler)
    for post in (new, old):
        assert post.num_divergences == 0
        assert float(np.max(post.rhat()["f_ref"][:4])) < 1.05
    assert np.all(new.draws("w_out")[:, 0] > 0) and np.all(np.diff(new.draws("w_out"), axis=1) > 0)
    z_crit = stats.norm.isf(1e-3 / 2 / 10)

    def outputs(post):  # sigma2 and the first 4 reference outputs, each (chains, draws)
        f = post.draws("f_ref", combine_chains=False)
        return {"sigma2": post.draws("sigma2", combine_chains=False), **{f"f_ref[{k}]": f[:, :, k] for k in range(4)}}

    def z_max(a, b):
        return max(max(z) for z in _z_scores(outputs(a), outputs(b)).values())

    assert z_max(new, old) < z_crit
    assert z_max(wrong, old) > z_crit


def test_classifier_same_posterior_of_the_outputs(standard_classifier, fast_classifier):
    """Both classifier programs on one simulated data set (n = 60, d = 2, 3 hidden units, the beta-D
    loss at epsilon = 5), 4 chains x (1000 + 1000) each: posterior mean and sd of the outputs f_ref
    at the first 5 reference inputs -> 10 comparisons, z as above below the Bonferroni bound for an
    overall false-rejection rate of 1e-3 (z ~ 3.9). Power: the same comparison rejects the current
    program at a beta 30 % larger."""
    rng = np.random.default_rng(6)
    truth = simulate_nn_truth(rng, 2, 3, 1.0, "classification")
    X, y = simulate_nn_records(rng, truth, 60, "classification")
    model = NNClassifierFastBetaD(hidden=3)
    beta = model.beta(5.0)
    data = model.stan_data(X, y, beta=beta)
    old_data = {k: v for k, v in data.items() if k != "x_centre"}
    sampler = dict(chains=4, warmup=1000, draws=1000)
    new = fast_classifier.sample(data, seed=41, **sampler)
    old = standard_classifier.sample(old_data, seed=42, **sampler)
    wrong = standard_classifier.sample({**old_data, "beta": 1.3 * beta}, seed=43, **sampler)
    for post in (new, old):
        assert post.num_divergences == 0
        assert float(np.max(post.rhat()["f_ref"][:5])) < 1.05
    assert np.all(new.draws("w_out")[:, 0] > 0) and np.all(np.diff(new.draws("w_out"), axis=1) > 0)
    z_crit = stats.norm.isf(1e-3 / 2 / 10)

    def outputs(post):  # the first 5 reference outputs, each (chains, draws)
        f = post.draws("f_ref", combine_chains=False)
        return {f"f_ref[{k}]": f[:, :, k] for k in range(5)}

    def z_max(a, b):
        return max(max(z) for z in _z_scores(outputs(a), outputs(b)).values())

    assert z_max(new, old) < z_crit
    assert z_max(wrong, old) > z_crit
