"""Gradients of the normal log-CDF and of the likelihoods built on it
(stan/functions/log_phi.stanfunctions, ldp.stanfunctions, normal_laplace.stanfunctions).

Stan's std_normal_lcdf is accurate in value, but its derivative has relative errors of about
1e-5, and of 2e-3 at x = -74. The Gaussian-Laplace convolutions add a large h = sigma^2 /
(2 beta^2) to a log-CDF near -h, so that error became a gradient wrong by a factor 15 at
sigma / beta = 74 (Kulkarni calibration, epsilon = 10): NUTS chains that jumped there early in
warm-up stopped moving (step size 1e-6, > 15 min for a 16 s fit). ``logPhi`` is exact in
value and derivative; these tests compare

* logPhi and its derivative with scipy (log_ndtr, phi / Phi) from x = -300 to 30;
* the autodiff gradient of the Gaussian local-DP likelihood and of the normal-Laplace density
  with central finite differences of their log density (whose values the quadrature tests
  check), at the point where the chains stalled and across both branches of the likelihood.

Deterministic: no Monte-Carlo error, no false rejections. The log density and its gradient
come from :meth:`StanModel.log_density`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.special import log_ndtr
from scipy.stats import norm

from pystanprivacy.sampling.stan import StanModel

PROGRAM = Path(__file__).parents[1] / "stan" / "log_phi_gradients.stan"
XS = np.array(
    [
        -300.0,
        -150.0,
        -100.0,
        -74.0,
        -50.0,
        -40.0,
        -37.6,
        -37.4,
        -30.01,
        -30.0,
        -29.99,
        -20.0,
        -8.0,
        -5.0,
        -1.0,
        0.0,
        1.5,
        5.0,
        8.0,
        30.0,
    ]
)


@pytest.fixture(scope="module")
def density():
    """``density(which, x, a=-5, b=5, beta=1)``: a function of the point p (2,) returning
    (log density, gradient), through :meth:`StanModel.log_density`."""
    model = StanModel.get(str(PROGRAM))

    def build(which, x, a=-5.0, b=5.0, beta=1.0):
        data = {"which": which, "N": len(x), "x": np.asarray(x, float), "a": a, "b": b, "beta": beta}

        def at(p):
            lp, grad = model.log_density(data, {"p": np.asarray(p, float)})
            return lp[0], grad[0]

        return at

    return build


def _central_difference(at, p, step=1e-5):
    p = np.asarray(p, float)
    out = np.zeros_like(p)
    for k in range(p.size):
        e = np.zeros_like(p)
        e[k] = step
        out[k] = (at(p + e)[0] - at(p - e)[0]) / (2 * step)
    return out


@pytest.mark.parametrize("which", [0, 1], ids=["scalar", "vector"])
def test_logphi_value_and_derivative_match_scipy(density, which):
    for x in XS:
        at = density(which, [x])
        value, grad = at([0.0, 0.0])
        exact = log_ndtr(x)
        slope = np.exp(norm.logpdf(x) - log_ndtr(x))  # d/dx log Phi(x) = phi / Phi
        assert value == pytest.approx(exact, rel=1e-10, abs=1e-15), x
        assert grad[0] == pytest.approx(slope, rel=1e-10, abs=1e-14), x
        assert grad[1] == 0.0


def _reports(mu, sigma, n, epsilon, seed, a=-5.0, b=5.0):
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(mu, sigma, n), a, b)
    return x + rng.laplace(0.0, (b - a) / epsilon, n)


# (mu, log sigma) where the gradient is checked: the point where an epsilon = 10 chain
# stalled (sigma / beta = 74), deeper still (200), the log-scale and fast branches, tiny sigma
GAUSS_POINTS = [
    (1.375, np.log(73.9)),
    (0.0, np.log(200.0)),
    (-0.23, np.log(12.67)),
    (1.375, np.log(30.0)),
    (3.85, np.log(0.9)),
    (3.85, np.log(0.2)),
    (0.0, np.log(3.0)),
    (-4.0, np.log(0.05)),
]


def test_gaussian_ldp_gradient_matches_finite_differences(density):
    z = _reports(3.84, 0.71, 2000, epsilon=10.0, seed=11)  # beta = 1 on [-5, 5]
    at = density(2, z)
    for p in GAUSS_POINTS:
        lp, grad = at(p)
        assert np.isfinite(lp), p
        fd = _central_difference(at, p)
        assert np.allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max()), (p, grad, fd)


def test_normal_laplace_gradient_matches_finite_differences(density):
    # sigma / beta from 0.5 to 150: large populations under little noise put the density's
    # two log-CDF terms deep in the tail
    y = np.array([-3.0, 0.2, 4.0, 40.0])
    for beta in (2.0, 0.1, 0.02):
        at = density(3, y, beta=beta)
        for p in [(0.0, 0.0), (1.0, np.log(3.0)), (0.5, np.log(1.5))]:
            lp, grad = at(p)
            assert np.isfinite(lp), (beta, p)
            fd = _central_difference(at, p)
            assert np.allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max()), (beta, p, grad, fd)


def test_gaussian_model_keeps_the_former_log_density_and_its_gradient_is_exact():
    """stan/kulkarni2022/gaussian.stan against the program it replaces
    (tests/stan/kulkarni2022_gaussian_former.stan, log Phi through std_normal_lcdf): the same
    log density (so the same posterior) at every point, and a gradient equal to central finite
    differences, at the point where the former chains stalled too."""
    current = StanModel.get("kulkarni2022/gaussian")
    former = StanModel.get(str(Path(__file__).parents[1] / "stan" / "kulkarni2022_gaussian_former.stan"))
    z = _reports(3.84, 0.71, 2000, epsilon=10.0, seed=11)
    data = {
        "R": 1,
        "N": [len(z)],
        "z": z,
        "a": -5.0,
        "b": 5.0,
        "beta": 1.0,
        "mu_prior_mean": 0.0,
        "mu_prior_sd": 2.0,
        "sigma_prior_shape": 2.0,
        "sigma_prior_rate": 1.0,
    }
    step = 1e-5
    points = []
    for mu, log_sigma in GAUSS_POINTS:
        for dm, ds in ((0, 0), (step, 0), (-step, 0), (0, step), (0, -step)):
            points.append({"mu": [mu + dm], "sigma": [float(np.exp(log_sigma + ds))]})
    lp, grad = current.log_density(data, points)
    lp_former, _ = former.log_density(data, points)
    np.testing.assert_allclose(lp, lp_former, rtol=1e-12, atol=1e-9)
    for j in range(len(GAUSS_POINTS)):
        base = 5 * j
        fd = np.array([(lp[base + 1] - lp[base + 2]) / (2 * step), (lp[base + 3] - lp[base + 4]) / (2 * step)])
        assert np.allclose(grad[base], fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max()), (GAUSS_POINTS[j], grad[base], fd)
