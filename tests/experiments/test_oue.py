"""Tests for optimal unary encoding (Wang et al. 2017)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.privacy.mechanisms import OptimalUnaryEncoding


def _all_outputs(d):
    return np.array(list(itertools.product([0, 1], repeat=d)))


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 2.0, 8.0])
def test_ldp_ratio_exact_by_enumeration(epsilon):
    # d = 4: enumerate all 16 outputs; the maximum likelihood ratio over all
    # outputs and ordered input pairs is exactly e^eps (eps-LDP, tight).
    d = 4
    mech = OptimalUnaryEncoding(epsilon=epsilon, d=d)
    outputs = _all_outputs(d)
    logp = np.stack([mech.log_prob(outputs, np.full(16, c)) for c in range(d)])  # (d, 16)
    max_log_ratio = max(np.max(logp[i] - logp[j]) for i in range(d) for j in range(d) if i != j)
    assert math.exp(max_log_ratio) == pytest.approx(math.exp(epsilon), rel=1e-12)
    assert max_log_ratio <= epsilon + 1e-12


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 5.0])
def test_log_prob_normalised_and_exact(epsilon):
    d = 4
    mech = OptimalUnaryEncoding(epsilon=epsilon, d=d)
    outputs = _all_outputs(d)
    q = 1.0 / (math.exp(epsilon) + 1.0)
    for c in range(d):
        lp = mech.log_prob(outputs, c)
        assert lp.shape == (16,) and lp.dtype == np.float64
        assert np.exp(lp).sum() == pytest.approx(1.0, rel=1e-13)
        # Direct product formula for every output.
        others = np.delete(outputs, c, axis=1)
        direct = 0.5 * np.prod(np.where(others == 1, q, 1 - q), axis=1)
        np.testing.assert_allclose(np.exp(lp), direct, rtol=1e-13)


def test_parameters():
    mech = OptimalUnaryEncoding(epsilon=1.0, d=5)
    assert mech.p == 0.5 and mech.d == 5
    assert mech.q == pytest.approx(1 / (math.e + 1), rel=1e-15)


def test_joint_distribution_chisquare_d3():
    # Chi-square of the counts of all 8 outputs (d = 3) for category 1
    # against exp(log_prob); alpha=1e-3, fixed seed; false-rejection 1e-3.
    mech = OptimalUnaryEncoding(epsilon=1.0, d=3, seed=11)
    n = 40_000
    bits = mech.randomise(np.full(n, 1))
    assert bits.shape == (n, 3) and bits.dtype == np.int64
    outputs = _all_outputs(3)
    codes = bits @ np.array([4, 2, 1])
    observed = np.bincount(codes, minlength=8)
    expected = n * np.exp(mech.log_prob(outputs, 1))
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_chisquare_has_power_against_wrong_q():
    # Same test with expected probabilities for eps = 1.3 must reject.
    bits = OptimalUnaryEncoding(epsilon=1.0, d=3, seed=12).randomise(np.full(40_000, 1))
    codes = bits @ np.array([4, 2, 1])
    wrong = OptimalUnaryEncoding(epsilon=1.3, d=3)
    expected = 40_000 * np.exp(wrong.log_prob(_all_outputs(3), 1))
    assert stats.chisquare(np.bincount(codes, minlength=8), expected).pvalue < 1e-10


def test_bit_rates_binomial():
    # Per-column exact binomial tests (true bit rate 1/2, others q) with a
    # Bonferroni correction over 6 columns: overall false-rejection rate 1e-3.
    d, n = 6, 30_000
    mech = OptimalUnaryEncoding(epsilon=2.0, d=d, seed=13)
    cats = np.arange(n) % d
    bits = mech.randomise(cats)
    true_bits = bits[np.arange(n), cats]
    assert stats.binomtest(int(true_bits.sum()), n, 0.5).pvalue > 1e-3 / (d + 1)
    for j in range(d):
        col = bits[cats != j, j]
        assert stats.binomtest(int(col.sum()), col.size, mech.q).pvalue > 1e-3 / (d + 1)


def test_estimate_counts_unbiased():
    # Var of each count estimate <= n q(1-q)/(p-q)^2 + n/4/(p-q)^2; 5-sd
    # tolerance per category, 4 categories: false-rejection rate < 3e-6.
    d, n = 4, 100_000
    mech = OptimalUnaryEncoding(epsilon=1.5, d=d, seed=14)
    true_counts = np.array([50_000, 30_000, 15_000, 5_000])
    cats = np.repeat(np.arange(d), true_counts)
    est = mech.estimate_counts(mech.randomise(cats))
    q = mech.q
    sd = math.sqrt(n * (q * (1 - q) + 0.25)) / (0.5 - q)
    assert np.all(np.abs(est - true_counts) < 5 * sd)
    assert abs(est.sum() - n) < 5 * d * sd


def test_shapes_and_scalar_input():
    mech = OptimalUnaryEncoding(epsilon=1.0, d=3, seed=1)
    assert mech.randomise(2).shape == (3,)
    assert mech.randomise(np.zeros((2, 5), dtype=int)).shape == (2, 5, 3)
    assert mech.log_prob(np.zeros((2, 5, 3), dtype=int), np.zeros((2, 5), dtype=int)).shape == (2, 5)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([0, 3]), "outside the declared bounds"),
        (np.array([-1]), "outside the declared bounds"),
        (np.array([1.5]), "non-integer"),
        (np.array([np.nan]), "NaN"),
    ],
)
def test_rejects_bad_categories(bad, match):
    with pytest.raises(ValueError, match=f"value contains .*{match}|value contains NaN"):
        OptimalUnaryEncoding(epsilon=1.0, d=3).randomise(bad)


def test_log_prob_rejects_bad_outputs():
    mech = OptimalUnaryEncoding(epsilon=1.0, d=3)
    with pytest.raises(ValueError, match="output must have last dimension d=3"):
        mech.log_prob(np.zeros((2, 4), dtype=int), np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match="output contains 1 value"):
        mech.log_prob(np.array([0, 2, 0]), 0)


def test_reproducible():
    a = OptimalUnaryEncoding(epsilon=1.0, d=4, seed=5).randomise(np.arange(4))
    b = OptimalUnaryEncoding(epsilon=1.0, d=4, seed=5).randomise(np.arange(4))
    np.testing.assert_array_equal(a, b)


def test_record():
    rec = OptimalUnaryEncoding(epsilon=1.0, d=4).record(n=10)
    assert rec.mechanism == "oue" and rec.epsilon == 1.0 and rec.n == 10
    assert rec.details["d"] == 4 and rec.details["p"] == 0.5
    assert rec.details["q"] == pytest.approx(1 / (math.e + 1))
