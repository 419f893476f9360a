"""Tests for the Laplace mechanism."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.privacy.mechanisms import Laplace

KS_ALPHA = 1e-3


@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1.0), (0.1, 2.0), (4.0, 0.5)])
def test_scale_is_sensitivity_over_epsilon(epsilon, sensitivity):
    mech = Laplace(epsilon=epsilon, sensitivity=sensitivity)
    assert mech.scale == sensitivity / epsilon
    assert mech.epsilon == epsilon and mech.sensitivity == sensitivity and mech.delta == 0.0


@pytest.mark.parametrize("epsilon, sensitivity, seed", [(1.0, 1.0, 1), (0.3, 2.0, 2), (5.0, 1.0, 3)])
def test_noise_distribution_ks(epsilon, sensitivity, seed):
    # KS test at alpha=1e-3 against Laplace(0, sensitivity/epsilon). With a
    # fixed seed this is deterministic; false-rejection rate 1e-3 over seeds.
    mech = Laplace(epsilon=epsilon, sensitivity=sensitivity, seed=seed)
    noise = mech.randomise(np.full(20_000, 3.0)) - 3.0
    p = stats.kstest(noise, stats.laplace(scale=sensitivity / epsilon).cdf).pvalue
    assert p > KS_ALPHA


def test_ks_detects_wrong_scale():
    # Power check of the same KS test: noise of the right family but half the
    # scale must be rejected (p is astronomically small at n=20000).
    mech = Laplace(epsilon=2.0, sensitivity=1.0, seed=4)
    noise = mech.randomise(np.zeros(20_000))
    assert stats.kstest(noise, stats.laplace(scale=1.0).cdf).pvalue < 1e-10


def test_log_prob_matches_scipy():
    mech = Laplace(epsilon=0.7, sensitivity=1.3)
    out = np.linspace(-10, 10, 41)
    x = np.linspace(2, -3, 41)
    expected = stats.laplace.logpdf(out, loc=x, scale=1.3 / 0.7)
    got = mech.log_prob(out, x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


def test_log_prob_broadcasts():
    mech = Laplace(epsilon=1.0, sensitivity=1.0)
    got = mech.log_prob(np.zeros((3, 1)), np.array([0.0, 1.0]))
    assert got.shape == (3, 2)
    np.testing.assert_allclose(got[:, 1] - got[:, 0], -1.0, rtol=1e-14)


def test_log_prob_ratio_bounded_by_epsilon():
    # Pure DP: |log p(y|x) - log p(y|x')| <= eps * |x - x'| / sensitivity.
    mech = Laplace(epsilon=0.8, sensitivity=2.0)
    y = np.linspace(-20, 20, 1001)
    diff = mech.log_prob(y, 0.0) - mech.log_prob(y, 2.0)
    assert np.max(np.abs(diff)) == pytest.approx(0.8, rel=1e-12)
    assert np.all(np.abs(diff) <= 0.8 * (1 + 1e-12))


def test_same_int_seed_same_output():
    a = Laplace(epsilon=1.0, sensitivity=1.0, seed=123).randomise(np.zeros(10))
    b = Laplace(epsilon=1.0, sensitivity=1.0, seed=123).randomise(np.zeros(10))
    c = Laplace(epsilon=1.0, sensitivity=1.0, seed=124).randomise(np.zeros(10))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_generator_accepted_and_advanced():
    g = np.random.default_rng(5)
    mech = Laplace(epsilon=1.0, sensitivity=1.0, seed=g)
    first = mech.randomise(np.zeros(4))
    second = mech.randomise(np.zeros(4))
    assert not np.array_equal(first, second)
    expected = np.random.default_rng(5).laplace(0.0, 1.0, size=4)
    np.testing.assert_array_equal(first, expected)


def test_scalar_and_shape_preserved():
    mech = Laplace(epsilon=1.0, sensitivity=1.0, seed=0)
    assert isinstance(mech.randomise(1.0), float)
    assert isinstance(mech.randomise(3), float)
    out = mech.randomise(np.zeros((4, 5)))
    assert out.shape == (4, 5) and out.dtype == np.float64
    assert mech.randomise(np.zeros(0)).shape == (0,)


def test_input_not_modified():
    mech = Laplace(epsilon=1.0, sensitivity=1.0, seed=0)
    x = np.arange(5.0)
    mech.randomise(x)
    np.testing.assert_array_equal(x, np.arange(5.0))


def test_independent_noise_per_element():
    # Lag-1 correlation of i.i.d. noise is ~N(0, 1/n); |r| < 4.5/sqrt(n) has
    # false-rejection rate ~7e-6 (fixed seed: deterministic).
    n = 50_000
    noise = Laplace(epsilon=1.0, sensitivity=1.0, seed=11).randomise(np.zeros(n))
    assert np.unique(noise).size == n
    r = np.corrcoef(noise[:-1], noise[1:])[0, 1]
    assert abs(r) < 4.5 / np.sqrt(n)


def test_randomise_rejects_bad_values():
    mech = Laplace(epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="value contains NaN"):
        mech.randomise(np.array([0.0, np.nan]))
    with pytest.raises(TypeError, match="value"):
        mech.randomise(np.array([True]))
    with pytest.raises(TypeError, match="value"):
        mech.randomise("1.0")
    with pytest.raises(ValueError, match="output contains"):
        mech.log_prob(np.inf, 0.0)


def test_record_describes_mechanism():
    rec = Laplace(epsilon=0.5, sensitivity=2.0, seed=1).record(n=10, bounds=(0, 2))
    assert rec.mechanism == "laplace"
    assert (rec.epsilon, rec.delta, rec.sensitivity, rec.scale) == (0.5, 0.0, 2.0, 4.0)
    assert rec.sensitivity_norm == "l1"
    assert rec.n == 10 and rec.bounds == (0.0, 2.0)
    assert rec.details["seeded"] is True
    assert Laplace(epsilon=0.5, sensitivity=2.0).record().details["seeded"] is False


def test_record_context_cannot_override_parameters():
    mech = Laplace(epsilon=0.5, sensitivity=2.0)
    with pytest.raises(ValueError, match="epsilon"):
        mech.record(epsilon=100.0)
    rec = mech.record(clipping={"lower": 0, "upper": 1}, details={"note": "x"})
    assert rec.details["clipping"]["upper"] == 1 and rec.details["note"] == "x"


def test_repr_shows_parameters():
    assert repr(Laplace(epsilon=0.5, sensitivity=2.0)) == "Laplace(epsilon=0.5, sensitivity=2.0)"
