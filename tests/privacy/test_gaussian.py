"""Tests for the classical Gaussian mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Gaussian

KS_ALPHA = 1e-3


@pytest.mark.parametrize("epsilon, delta, sensitivity", [(0.5, 1e-5, 1.0), (0.1, 1e-8, 3.0), (0.999, 0.01, 0.2)])
def test_sigma_classical_formula(epsilon, delta, sensitivity):
    mech = Gaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    # Dwork & Roth (2014), Theorem A.1.
    expected = math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / epsilon
    assert mech.scale == pytest.approx(expected, rel=1e-15)


def test_sigma_known_value():
    # eps = 0.5, delta = 1e-5, Delta = 1: sqrt(2 ln 125000) / 0.5 = 9.68961052521...
    assert Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0).scale == pytest.approx(9.68961052521, rel=1e-11)


@pytest.mark.parametrize("epsilon", [1.0, 1.5, 10.0])
def test_epsilon_at_least_one_rejected_with_pointer_to_analytic(epsilon):
    with pytest.raises(ValueError, match="AnalyticGaussian") as info:
        Gaussian(epsilon=epsilon, delta=1e-5, sensitivity=1.0)
    assert "epsilon" in str(info.value) and repr(epsilon) in str(info.value)


def test_delta_zero_rejected():
    with pytest.raises(ValueError, match=r"delta must be a finite number in \(0, 1\)"):
        Gaussian(epsilon=0.5, delta=0.0, sensitivity=1.0)


def test_classical_is_valid_but_looser_than_analytic():
    for eps in (0.01, 0.1, 0.5, 0.9):
        for delta in (1e-10, 1e-5, 1e-2):
            classic = Gaussian(epsilon=eps, delta=delta, sensitivity=1.0).scale
            analytic = AnalyticGaussian(epsilon=eps, delta=delta, sensitivity=1.0).scale
            assert analytic < classic


@pytest.mark.parametrize("epsilon, delta, seed", [(0.5, 1e-5, 1), (0.9, 1e-2, 2)])
def test_noise_distribution_ks(epsilon, delta, seed):
    # KS test at alpha=1e-3 against N(0, sigma^2). Fixed seed: deterministic;
    # false-rejection rate 1e-3 over seeds.
    mech = Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0, seed=seed)
    noise = mech.randomise(np.full(20_000, -2.0)) + 2.0
    assert stats.kstest(noise, stats.norm(scale=mech.scale).cdf).pvalue > KS_ALPHA


def test_ks_detects_wrong_sigma():
    # Power: a 10% too large sigma is rejected at n=50000 (p < 1e-10).
    mech = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, seed=3)
    noise = mech.randomise(np.zeros(50_000))
    assert stats.kstest(noise, stats.norm(scale=1.1 * mech.scale).cdf).pvalue < 1e-10


def test_log_prob_matches_scipy():
    mech = Gaussian(epsilon=0.3, delta=1e-6, sensitivity=2.0)
    out = np.linspace(-50, 50, 37)
    x = np.linspace(5, -5, 37)
    np.testing.assert_allclose(mech.log_prob(out, x), stats.norm.logpdf(out, loc=x, scale=mech.scale), rtol=1e-13)


def test_reproducible_and_vectorised():
    a = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, seed=9).randomise(np.zeros((2, 3)))
    b = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, seed=np.random.default_rng(9)).randomise(np.zeros((2, 3)))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (2, 3) and np.unique(a).size == 6


def test_record():
    rec = Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0).record()
    assert rec.mechanism == "gaussian" and rec.sensitivity_norm == "l2"
    assert rec.delta == 1e-5 and rec.scale == pytest.approx(9.68961052521, rel=1e-11)
    assert rec.details["calibration"] == "classical"
