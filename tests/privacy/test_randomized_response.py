"""Tests for binary randomised response."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from pystanprivacy.privacy.mechanisms import RandomizedResponse


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 1.0, 3.0, 20.0])
def test_keep_probability(epsilon):
    mech = RandomizedResponse(epsilon=epsilon)
    assert mech.p_keep == pytest.approx(math.exp(epsilon) / (1 + math.exp(epsilon)), rel=1e-14)


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 1.0, 3.0, 20.0, 700.0])
def test_log_prob_exact_and_ratio_is_epsilon(epsilon):
    mech = RandomizedResponse(epsilon=epsilon)
    with mp.workdps(40):  # reference log p_keep and log p_flip
        log_keep = float(-mp.log1p(mp.exp(-epsilon)))
        log_flip = float(-mp.log1p(mp.exp(epsilon)))
    lp = {(y, x): float(mech.log_prob(y, x)) for y, x in itertools.product([0, 1], repeat=2)}
    assert lp[1, 1] == pytest.approx(log_keep, rel=1e-13)
    assert lp[0, 1] == pytest.approx(log_flip, rel=1e-13)
    assert lp[0, 0] == lp[1, 1] and lp[1, 0] == lp[0, 1]
    # Normalised over outputs, for each input.
    for x in (0, 1):
        assert math.exp(lp[0, x]) + math.exp(lp[1, x]) == pytest.approx(1.0, rel=1e-14)
    # The privacy loss of every output is exactly +-epsilon.
    for y in (0, 1):
        assert abs(lp[y, y] - lp[y, 1 - y]) == pytest.approx(epsilon, rel=1e-14)


def test_log_prob_vectorised_and_dtype():
    mech = RandomizedResponse(epsilon=1.0)
    out = mech.log_prob(np.array([[0, 1], [1, 1]]), np.array([0, 1]))
    assert out.shape == (2, 2) and out.dtype == np.float64
    keep, flip = -math.log1p(math.exp(-1.0)), -math.log1p(math.exp(1.0))
    np.testing.assert_allclose(out, [[keep, keep], [flip, keep]], rtol=1e-14)


@pytest.mark.parametrize("epsilon, bit, seed", [(0.5, 0, 1), (0.5, 1, 2), (2.0, 0, 3), (2.0, 1, 4)])
def test_keep_rate_binomial(epsilon, bit, seed):
    # Exact two-sided binomial test of the keep rate at alpha=1e-3. Fixed seed:
    # deterministic; false-rejection rate 1e-3 over seeds.
    n = 20_000
    mech = RandomizedResponse(epsilon=epsilon, seed=seed)
    kept = int(np.count_nonzero(mech.randomise(np.full(n, bit)) == bit))
    assert stats.binomtest(kept, n, mech.p_keep).pvalue > 1e-3


def test_joint_distribution_matches_log_prob_chisquare():
    # Chi-square goodness of fit of (input, output) pair counts against
    # exp(log_prob), alpha=1e-3; fixed seed; false-rejection rate 1e-3.
    mech = RandomizedResponse(epsilon=1.2, seed=5)
    x = np.repeat([0, 1], [30_000, 10_000])
    y = mech.randomise(x)
    observed = [np.count_nonzero((x == a) & (y == b)) for a in (0, 1) for b in (0, 1)]
    expected = [np.count_nonzero(x == a) * math.exp(mech.log_prob(b, a)) for a in (0, 1) for b in (0, 1)]
    # ddof=2: the two input totals are fixed, leaving 2 degrees of freedom.
    assert stats.chisquare(observed, expected, ddof=2).pvalue > 1e-3


def test_chisquare_has_power_against_wrong_epsilon():
    mech = RandomizedResponse(epsilon=1.2, seed=6)
    wrong = RandomizedResponse(epsilon=1.0)
    x = np.zeros(40_000, dtype=int)
    y = mech.randomise(x)
    observed = [np.count_nonzero(y == 0), np.count_nonzero(y == 1)]
    expected = [x.size * math.exp(wrong.log_prob(b, 0)) for b in (0, 1)]
    assert stats.chisquare(observed, expected).pvalue < 1e-10


def test_estimate_mean_unbiased():
    # True mean 0.3; the estimator's sd is sqrt(p(1-p))/((2p-1) sqrt(n)) at
    # worst; a 5-sd tolerance has false-rejection rate < 1e-6 (fixed seed).
    n, eps = 200_000, 1.0
    mech = RandomizedResponse(epsilon=eps, seed=7)
    x = (np.arange(n) < 0.3 * n).astype(int)
    est = mech.estimate_mean(mech.randomise(x))
    p = mech.p_keep
    sd = math.sqrt(p * (1 - p)) / ((2 * p - 1) * math.sqrt(n))
    assert abs(est - 0.3) < 5 * sd
    with pytest.raises(ValueError, match="reports"):
        mech.estimate_mean(np.zeros(0, dtype=int))


def test_outputs_are_bits_and_types():
    mech = RandomizedResponse(epsilon=1.0, seed=8)
    out = mech.randomise(np.array([0, 1, 1, 0, True, False]))
    assert out.dtype == np.int64 and set(np.unique(out)) <= {0, 1}
    assert isinstance(mech.randomise(1), int)
    assert mech.randomise(np.ones((2, 3))).shape == (2, 3)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([0, 2]), "outside the declared bounds"),
        (np.array([0.5]), "non-integer"),
        (np.array([np.nan]), "NaN"),
        (-1, "outside the declared bounds"),
    ],
)
def test_rejects_non_bits(bad, match):
    with pytest.raises(ValueError, match=f"value contains .*{match}|value contains NaN"):
        RandomizedResponse(epsilon=1.0).randomise(bad)


def test_reproducible():
    a = RandomizedResponse(epsilon=0.5, seed=1).randomise(np.zeros(50, dtype=int))
    b = RandomizedResponse(epsilon=0.5, seed=np.random.default_rng(1)).randomise(np.zeros(50, dtype=int))
    np.testing.assert_array_equal(a, b)


def test_record():
    rec = RandomizedResponse(epsilon=0.5).record(n=100)
    assert rec.mechanism == "randomized_response" and rec.epsilon == 0.5 and rec.delta == 0.0
    assert rec.n == 100 and rec.scale is None and rec.sensitivity is None
    assert rec.details["p_keep"] == pytest.approx(1 / (1 + math.exp(-0.5)))
