"""pystanprivacy.experiments.kulkarni2022.exponential_check (part ``exponential_check`` of
``reproduce kulkarni2022``), the Stan-free check of the exponential calibration (REPRODUCTION.md, K11): its Gauss-Legendre likelihood and report CDF against scipy's adaptive
quadrature, and its posterior quantile against a brute-force grid. Deterministic (no sampling),
so no false-rejection rate; tolerances are quadrature error, not Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats


@pytest.fixture(scope="module")
def ec():
    from pystanprivacy.experiments.kulkarni2022 import exponential_check

    return exponential_check


B, BETA = 5.0, 5.0 / 3.0  # clip bound and Laplace scale at epsilon = 3
Z = np.array([-2.0, 0.3, 1.7, 4.9, 7.5])  # reports below, inside and above [0, b]


def _density(z: float, theta: float) -> float:
    """p(z | theta) by scipy.integrate.quad, split at the kink of the Laplace kernel."""
    lap = stats.laplace(scale=BETA).pdf
    f = lambda x: theta * np.exp(-theta * x) * lap(z - x)
    kink = min(max(z, 0.0), B)
    return integrate.quad(f, 0.0, kink)[0] + integrate.quad(f, kink, B)[0] + np.exp(-theta * B) * lap(z - B)


def test_likelihood_matches_adaptive_quadrature(ec):
    thetas = np.array([0.2, 1.0, 4.0])
    prior = stats.gamma(2.0, scale=0.5)
    got = ec.log_posterior(Z, thetas, B, BETA, 2.0, 2.0)
    want = np.array([sum(np.log(_density(z, t)) for z in Z) + prior.logpdf(t) for t in thetas])
    # the script drops log(2 beta) per report: compare differences between thetas
    np.testing.assert_allclose(got - got[0], want - want[0], rtol=0, atol=1e-9)


def test_report_cdf_matches_adaptive_quadrature(ec):
    lap = stats.laplace(scale=BETA).cdf
    for theta in (0.3, 2.0):
        f = lambda x, z, theta=theta: theta * np.exp(-theta * x) * lap(z - x)
        want = [
            integrate.quad(f, 0.0, min(max(z, 0.0), B), args=(z,))[0]
            + integrate.quad(f, min(max(z, 0.0), B), B, args=(z,))[0]
            + np.exp(-theta * B) * lap(z - B)
            for z in Z
        ]
        np.testing.assert_allclose(ec.report_cdf(Z, theta, B, BETA), want, rtol=0, atol=1e-10)
    # a distribution function: 0 far below, 1 far above, and its slope is the density
    assert ec.report_cdf(np.array([-200.0]), 1.0, B, BETA)[0] < 1e-40
    assert abs(ec.report_cdf(np.array([200.0]), 1.0, B, BETA)[0] - 1.0) < 1e-12
    h = 1e-5
    slope = (ec.report_cdf(Z + h, 1.0, B, BETA) - ec.report_cdf(Z - h, 1.0, B, BETA)) / (2 * h)
    np.testing.assert_allclose(slope, [_density(z, 1.0) for z in Z], rtol=1e-6)


def test_quantile_matches_a_brute_force_grid(ec):
    grid = np.linspace(1e-4, 8.0, 8_001)
    logp = ec.log_posterior(Z, grid, B, BETA, 2.0, 2.0)
    p = np.exp(logp - logp.max())
    cdf = integrate.cumulative_trapezoid(p, grid, initial=0.0)
    for truth in (0.3, 1.0, 2.5):
        want = np.interp(truth, grid, cdf / cdf[-1])
        assert abs(ec.quadrature_quantile(Z, truth, B, BETA, 2.0, 2.0) - want) < 2e-4
