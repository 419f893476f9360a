"""The Stan functions of the Kulkarni et al. (2022) regression models
(stan/functions/ldp_regression.stanfunctions), evaluated by the test-only program
tests/stan/kulkarni2022_regression_functions.stan under fixed_param, against numpy mirrors,
Monte Carlo, scipy quadrature and an independent closed form.

Monte-Carlo checks use fixed seeds and a 5-standard-error band per element (two-sided
false-rejection rate ~6e-7 per element, < 1e-4 for all elements of a test together)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from pystanprivacy.models.kulkarni2022_regression import (
    chebyshev_sigmoid,
    linreg_moments,
    linreg_statistics,
    logit_stein,
    logreg_moments,
    logreg_statistics,
    pair_layout,
    quadrature_grid,
)
from pystanprivacy.sampling.stan import StanModel

PROGRAM = Path(__file__).parents[1] / "stan" / "kulkarni2022_regression_functions.stan"
S_VALUES = [0.0, 1e-3, 0.5, 2.0, 6.0, 20.0]
QUAD = quadrature_grid()


def _mc_check(samples: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> None:
    """Sample mean and covariance of ``samples`` agree with ``mean``/``cov`` within 5 s.e."""
    n = samples.shape[0]
    centred = samples - mean
    se_mean = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(centred.mean(axis=0)) < 5 * se_mean + 1e-12)
    emp = centred.T @ centred / n
    sq = centred * centred
    se_cov = np.sqrt(np.maximum(sq.T @ sq / n - emp**2, 0.0) / n)
    assert np.all(np.abs(emp - cov) < 5 * se_cov + 1e-12), np.max(np.abs(emp - cov) / se_cov)


def _evaluate(
    model: StanModel, Sigma, theta, sigma, zx, zy, zb, sigma_x=0.7, sigma_y=0.9, p_keep=0.8, cheb=None
) -> dict[str, np.ndarray]:
    Sigma = np.asarray(Sigma, float)
    zx = np.atleast_2d(np.asarray(zx, float))
    data = {
        "d": Sigma.shape[0],
        "Sigma": Sigma,
        "theta": np.asarray(theta, float),
        "sigma": sigma,
        "n_quad": QUAD[0].size,
        "quad_x": QUAD[0],
        "quad_w": QUAD[1],
        "n_s": len(S_VALUES),
        "s_values": S_VALUES,
        "n": zx.shape[0],
        "zx": zx,
        "zy": np.asarray(zy, float),
        "zb": np.asarray(zb, int),
        "sigma_x": sigma_x,
        "sigma_y": sigma_y,
        "p_keep": p_keep,
        "cheb": chebyshev_sigmoid(4.0) if cheb is None else cheb,
    }
    fit = model.fixed_param(data, draws=1, seed=1)
    return {name: fit.draws(name)[0] for name in fit.variables}


@pytest.fixture(scope="module")
def model() -> StanModel:
    return StanModel.get(str(PROGRAM))


@pytest.fixture(scope="module")
def case3(model):
    rng = np.random.default_rng(5)
    A = rng.normal(size=(3, 3))
    Sigma = A @ A.T / 3 + 0.2 * np.eye(3)
    theta = np.array([0.8, -1.1, 0.5])
    zx = rng.normal(size=(4, 3))
    zy = rng.normal(size=4)
    return Sigma, theta, 0.6, _evaluate(model, Sigma, theta, 0.6, zx, zy, [0, 1, 1, 0])


def test_layout_matches_python(case3):
    _, _, _, out = case3
    I, J, w = pair_layout(3, with_y=True)
    np.testing.assert_array_equal(out["pair_i"], I + 1)
    np.testing.assert_array_equal(out["pair_j"], J + 1)
    np.testing.assert_allclose(out["pair_w"], w, rtol=1e-15)
    # the statistic's norm identity behind Lemma 3.1: ||t2(x)|| = ||x||^2
    x = np.random.default_rng(0).normal(size=(5, 3))
    s = linreg_statistics(x, np.zeros(5))
    np.testing.assert_allclose(np.linalg.norm(s[:, :6], axis=1), np.sum(x * x, axis=1) ** 1, rtol=1e-12)


def test_linear_moments_stan_equal_numpy_and_monte_carlo(case3):
    Sigma, theta, sigma, out = case3
    mean, cov = linreg_moments(Sigma, theta, sigma)
    np.testing.assert_allclose(out["lin_mean"], mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["lin_cov"], cov, rtol=1e-12, atol=1e-14)
    rng = np.random.default_rng(11)
    x = rng.multivariate_normal(np.zeros(3), Sigma, size=400_000)
    y = x @ theta + rng.normal(0, sigma, size=x.shape[0])
    _mc_check(linreg_statistics(x, y), mean, cov)


def test_logistic_moments_stan_equal_numpy_and_monte_carlo(case3):
    Sigma, theta, _, out = case3
    mean, cov = logreg_moments(Sigma, theta, QUAD)
    assert math.sqrt(theta @ Sigma @ theta) > 1.0  # the sigmoid is far from linear here
    np.testing.assert_allclose(out["log_mean"], mean, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(out["log_cov"], cov, rtol=1e-10, atol=1e-13)
    rng = np.random.default_rng(12)
    x = rng.multivariate_normal(np.zeros(3), Sigma, size=400_000)
    y = np.where(rng.random(x.shape[0]) < expit(x @ theta), 1.0, -1.0)
    _mc_check(logreg_statistics(x, y), mean, cov)


def test_stein_constants_match_quadrature(case3):
    *_, out = case3
    for k, s in enumerate(S_VALUES):

        def gprime(t):
            return 0.5 * (1 - np.tanh(0.5 * t) ** 2)  # = 0.5 / cosh(t/2)^2 without overflow

        def g3(t):
            h2 = np.tanh(0.5 * t) ** 2
            return -0.25 * (1 - h2) * (1 - 3 * h2)

        if s == 0:
            ref = (0.5, -0.25)
        else:
            ref = tuple(
                integrate.quad(
                    lambda t, f=f, s=s: f(t) * stats.norm.pdf(t, 0, s),
                    -40 * s,
                    40 * s,
                    points=[0.0],
                    limit=500,
                    epsabs=1e-13,
                )[0]
                for f in (gprime, g3)
            )
        np.testing.assert_allclose(out["stein"][k], ref, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(logit_stein(s, QUAD), ref, rtol=1e-9, atol=1e-11)


def _normal_pdf(x: float, mean: float, sd: float) -> float:
    """The N(mean, sd^2) density at the scalar ``x``."""
    return math.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))


def _linear_inputs_integral(zx, zy, Sigma, theta, sigma, sx, sy):
    """p(z_x, z_y) for d = 1 by 2-d quadrature over the latent (x, y). The integrand is the
    Gaussian density written out (``_normal_pdf``): ``scipy.stats.norm.pdf`` costs ~50 us a call,
    and the quadrature makes ~10^5 of them per point (a minute of the test suite)."""
    sd_x = math.sqrt(Sigma)

    def f(y, x):
        return (
            _normal_pdf(x, 0, sd_x) * _normal_pdf(zx, x, sx) * _normal_pdf(y, theta * x, sigma) * _normal_pdf(zy, y, sy)
        )

    return integrate.dblquad(
        f,
        -12 * sd_x,
        12 * sd_x,
        lambda x: theta * x - 12 * sigma,
        lambda x: theta * x + 12 * sigma,
        epsabs=1e-300,
        epsrel=1e-10,
    )[0]


def test_linear_inputs_likelihood_is_the_marginal(model):
    Sigma, theta, sigma, sx, sy = 0.3, 1.7, 0.4, 0.8, 1.3
    zx = np.array([0.1, -1.5, 3.0, 6.0])  # the last far in the tail
    zy = np.array([0.2, -2.0, 1.0, 9.0])
    out = _evaluate(model, [[Sigma]], [theta], sigma, zx[:, None], zy, [0, 1, 0, 1], sigma_x=sx, sigma_y=sy)
    for i in range(zx.size):
        ref = _linear_inputs_integral(zx[i], zy[i], Sigma, theta, sigma, sx, sy)
        assert out["lin_inputs_ll"][i] == pytest.approx(math.log(ref), rel=1e-7, abs=1e-7)
    assert out["lin_inputs_total"] == pytest.approx(out["lin_inputs_ll"].sum(), rel=1e-12)


def test_linear_inputs_likelihood_equals_joint_gaussian(case3):
    """Independent closed form for d = 3: (z_x, z_y) is jointly Gaussian."""
    Sigma, theta, sigma, out = case3
    rng = np.random.default_rng(5)
    rng.normal(size=(3, 3))
    zx = rng.normal(size=(4, 3))
    zy = rng.normal(size=4)
    c = Sigma @ theta
    V = np.block([[Sigma + 0.7**2 * np.eye(3), c[:, None]], [c[None, :], np.array([[theta @ c + sigma**2 + 0.9**2]])]])
    ref = stats.multivariate_normal(np.zeros(4), V).logpdf(np.column_stack([zx, zy]))
    np.testing.assert_allclose(out["lin_inputs_ll"], ref, rtol=1e-10)


def test_logistic_inputs_likelihood_is_the_marginal(model):
    """d = 1: quadrature over the latent x with y summed out, the sigmoid replaced by its
    Chebyshev polynomial (the model's stated approximation, Eq. 44). The approximation itself
    is crude: against the exact sigmoid it is off by up to 0.08 in probability at these points
    (asserted < 0.1, so that a change in the approximation shows up here)."""
    Sigma, theta, sx, p = 0.25, 2.0, 0.6, 0.75
    b = chebyshev_sigmoid(4.0)
    zx = np.array([0.0, 0.9, -1.4, 2.5])
    zb = np.array([1, 0, 1, 1])
    out = _evaluate(model, [[Sigma]], [theta], 0.5, zx[:, None], np.zeros(4), zb, sigma_x=sx, p_keep=p, cheb=b)
    for i in range(zx.size):

        def joint(x, f, i=i):
            return stats.norm.pdf(x, 0, math.sqrt(Sigma)) * stats.norm.pdf(zx[i], x, sx) * f(theta * x)

        poly = lambda t: b[0] + b[1] * t + b[2] * t * t
        marg = integrate.quad(lambda x: joint(x, lambda t: 1.0), -10, 10, epsabs=1e-14)[0]
        ey_poly = integrate.quad(lambda x, poly=poly: joint(x, poly), -10, 10, epsabs=1e-14)[0] / marg
        ey_exact = integrate.quad(lambda x: joint(x, expit), -10, 10, epsabs=1e-14)[0] / marg
        assert 0 < ey_poly < 1
        q = (1 - p) + (2 * p - 1) * ey_poly
        ref = math.log(marg) + math.log(q if zb[i] == 1 else 1 - q)
        assert out["log_inputs_ll"][i] == pytest.approx(ref, rel=1e-8, abs=1e-8)
        assert abs(ey_poly - ey_exact) < 0.1
    assert out["log_inputs_total"] == pytest.approx(out["log_inputs_ll"].sum(), rel=1e-12)
