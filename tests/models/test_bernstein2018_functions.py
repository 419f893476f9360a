"""The Stan functions of the Bernstein & Sheldon (2018) models (stan/functions/
normal_laplace.stanfunctions and expfam_clt.stanfunctions) against scipy / mpmath, evaluated
by the test-only program tests/stan/bernstein2018_functions.stan under fixed_param."""

from __future__ import annotations

import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from pystanprivacy.models.bernstein2018 import rs_clt_exponential
from pystanprivacy.sampling.stan import StanModel

PROGRAM = Path(__file__).parents[1] / "stan" / "bernstein2018_functions.stan"

# normal-Laplace arguments (y, mu, sigma, b): moderate cases checked against quadrature,
# extreme ones (sigma/b up to 500: n = 1e6 records at epsilon = 1; sigma/b = 1e-4; far tails)
# against the closed form in 60-digit arithmetic
MODERATE = [
    (3.0, 1.0, 2.0, 0.5),
    (-40.0, 2.0, 1.0, 10.0),
    (5.0, 5.0, 30.0, 1.0),
    (0.0, 0.0, 1.0, 1.0),
    (120.0, 100.0, 7.0, 100.0),
]
EXTREME = [
    (500_300.0, 500_000.0, 500.0, 1.0),
    (4.9e5, 5e5, 500.0, 1.0),
    (10.0, 0.0, 1e-4, 1.0),
    (2500.0, 0.0, 10.0, 20.0),
    (-3000.0, 0.0, 1.0, 2.0),
    (1e6, 0.0, 1e4, 1.0),
]
# truncated exponential: (theta, v, w, n); w < 0 means +infinity
TRUNC = [
    (2.0, 0.0, 0.04, 100.0),
    (2.0, 0.3, 0.35, 10.0),
    (2.0, 0.3, 0.3499, 10.0),
    (4.0, 0.0063, 1.17, 1e6),
    (0.5, 1.0, 3.0, 50.0),
    (3.0, 0.0, 20.0, 7.0),
    (3.0, 1.17, -1.0, 1000.0),
    (30.0, 0.0, 2.0, 5.0),
]


def _normal_laplace_mp(y, mu, sigma, b):
    mpmath.mp.dps = 60
    y, mu, sigma, b = (mpmath.mpf(v) for v in (y, mu, sigma, b))
    r, z = sigma / b, (y - mu) / sigma
    val = (
        mpmath.exp(r * r / 2)
        / (2 * b)
        * (mpmath.exp(-z * r) * mpmath.ncdf(z - r) + mpmath.exp(z * r) * mpmath.ncdf(-z - r))
    )
    return float(mpmath.log(val))


@pytest.fixture(scope="module")
def values():
    rng = np.random.default_rng(0)
    nl = MODERATE + EXTREME
    k = 3
    mn_theta = rng.dirichlet(np.ones(k), size=4)
    mn_theta[3] = [1e-6, 0.5 - 1e-6, 0.5]  # a category with almost no mass
    mn_n = np.array([100.0, 1e4, 1e6, 50.0])
    mn_var = rng.exponential(200.0, size=(4, k))
    mn_var[2] = [1e-3, 5.0, 1e5]
    mn_y = mn_n[:, None] * mn_theta + rng.normal(0, 20, size=(4, k))
    data = {
        "N_nl": len(nl),
        "nl_y": [a[0] for a in nl],
        "nl_mu": [a[1] for a in nl],
        "nl_sigma": [a[2] for a in nl],
        "nl_b": [a[3] for a in nl],
        "N_te": len(TRUNC),
        "te_theta": [a[0] for a in TRUNC],
        "te_v": [a[1] for a in TRUNC],
        "te_w": [a[2] for a in TRUNC],
        "te_n": [a[3] for a in TRUNC],
        "N_mn": 4,
        "K": k,
        "mn_y": mn_y,
        "mn_theta": mn_theta,
        "mn_n": mn_n,
        "mn_var": mn_var,
    }
    fit = StanModel.get(str(PROGRAM)).fixed_param(data, draws=1, seed=1)
    out = {name: fit.draws(name)[0] for name in ("nl_lpdf", "te_moments", "te_rsclt", "mn_lpdf")}
    out["mn"] = (mn_y, mn_theta, mn_n, mn_var)
    return out


def test_normal_laplace_lpdf_is_the_convolution(values):
    for i, (y, mu, sigma, b) in enumerate(MODERATE):
        ref = integrate.quad(
            lambda s, y=y, mu=mu, sigma=sigma, b=b: stats.norm.pdf(s, mu, sigma) * stats.laplace.pdf(y, s, b),
            mu - 14 * sigma,
            mu + 14 * sigma,
            points=[y],
            limit=400,
        )[0]
        assert values["nl_lpdf"][i] == pytest.approx(math.log(ref), rel=1e-8, abs=1e-10)


def test_normal_laplace_lpdf_is_stable_in_extreme_regimes(values):
    for j, args in enumerate(EXTREME):
        got = values["nl_lpdf"][len(MODERATE) + j]
        assert np.isfinite(got)
        assert got == pytest.approx(_normal_laplace_mp(*args), rel=1e-9, abs=1e-9), args


def test_truncated_exponential_moments_and_rs_clt(values):
    for i, (theta, v, w, n) in enumerate(TRUNC):
        mean, var = values["te_moments"][i]
        if w < 0:
            assert (mean, var) == pytest.approx((v + 1 / theta, 1 / theta**2), rel=1e-12)
            w = np.inf
        else:
            ref = stats.truncexpon(b=theta * (w - v), loc=v, scale=1 / theta)
            assert mean == pytest.approx(ref.mean(), rel=1e-10)
            assert var == pytest.approx(ref.var(), rel=1e-7)
        m, v_ = rs_clt_exponential(np.array([theta]), n, v, w)  # numpy twin, checked by simulation
        assert values["te_rsclt"][i] == pytest.approx([m[0], v_[0]], rel=1e-10)


def test_multinomial_clt_noisy_lpdf_is_the_dense_normal(values):
    y, theta, n, var = values["mn"]
    for i in range(4):
        t = theta[i]
        cov = n[i] * (np.diag(t) - np.outer(t, t)) + np.diag(var[i])
        ref = stats.multivariate_normal(mean=n[i] * t, cov=cov, allow_singular=False).logpdf(y[i])
        assert values["mn_lpdf"][i] == pytest.approx(ref, rel=1e-7, abs=1e-7)


def test_zero_length_outputs_come_back_as_empty_arrays():
    """A run whose generated quantities have a zero-length dimension (here no normal-Laplace
    and no truncated-exponential points) returns correctly shaped empty arrays; the pystan
    backend used to fail reshaping them."""
    k = 2
    data = {
        "N_nl": 0,
        "nl_y": [],
        "nl_mu": [],
        "nl_sigma": [],
        "nl_b": [],
        "N_te": 0,
        "te_theta": [],
        "te_v": [],
        "te_w": [],
        "te_n": [],
        "N_mn": 1,
        "K": k,
        "mn_y": [[5.0, 5.0]],
        "mn_theta": [[0.5, 0.5]],
        "mn_n": [10.0],
        "mn_var": [[1.0, 1.0]],
    }
    fit = StanModel.get(str(PROGRAM)).fixed_param(data, draws=3, seed=1)
    assert fit.draws("nl_lpdf").shape == (3, 0)
    assert fit.draws("te_moments").shape == (3, 0, 2)
    mn = fit.draws("mn_lpdf")
    assert mn.shape == (3, 1) and np.all(np.isfinite(mn))
