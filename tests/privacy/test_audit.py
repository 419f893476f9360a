"""Tests for the empirical privacy audit.

Each audit's Clopper--Pearson bounds hold with probability >= 1 - alpha/(4m)
each, Bonferroni-corrected over all 4m one-sided bounds (m events), so a
correct mechanism yields epsilon_lb > epsilon with probability <= alpha =
0.05 over seeds; with the fixed seeds used here each test is deterministic.
The "power" tests check that under-noised mechanisms are caught.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.privacy.audit import (
    AuditResult,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
)
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Laplace, RandomizedResponse

N = 1_000_000


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (500, 100_000), (99_999, 100_000)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    # A two-sided exact interval at level 1 - 2a has one-sided a-bounds as ends.
    a = 0.01
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 2 * a, method="exact")
    assert clopper_pearson_lower(k, n, a) == pytest.approx(ci.low, rel=1e-9, abs=1e-15)
    assert clopper_pearson_upper(k, n, a) == pytest.approx(ci.high, rel=1e-9, abs=1e-15)


def test_clopper_pearson_coverage_edges():
    assert clopper_pearson_lower(0, 100, 0.05) == 0.0
    assert clopper_pearson_upper(100, 100, 0.05) == 1.0
    # k = 0: upper bound solves (1 - p)^n = alpha.
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-12)


def _pair(mech, x0, x1):
    return (lambda n: mech.randomise(np.full(n, x0)), lambda n: mech.randomise(np.full(n, x1)))


def test_laplace_audit_valid_and_close():
    mech = Laplace(epsilon=1.0, sensitivity=1.0, seed=2024)
    res = epsilon_lower_bound(*_pair(mech, 0.0, 1.0), n_draws=N)
    assert isinstance(res, AuditResult)
    assert 0.5 < res.epsilon_lb <= 1.0
    assert res.n_events == 128 and res.n_bounds == 512 and res.n_draws == N
    assert res.p_lower > 0 and res.p_upper > 0
    assert res.epsilon_lb == pytest.approx(np.log(res.p_lower / res.p_upper), rel=1e-12)


class _HalfScaleLaplace(Laplace):
    """Deliberately broken: claims epsilon but adds noise of half the scale."""

    @property
    def scale(self):
        return 0.5 * super().scale

    def _noise(self, shape):
        return self._rng.laplace(0.0, self.scale, size=shape)


def test_under_noised_laplace_detected():
    mech = _HalfScaleLaplace(epsilon=1.0, sensitivity=1.0, seed=7)
    assert mech.scale == 0.5
    res = epsilon_lower_bound(*_pair(mech, 0.0, 1.0), n_draws=N)
    assert res.epsilon_lb > 1.0  # true epsilon of this mechanism is 2


def test_analytic_gaussian_audit_respects_epsilon_delta():
    mech = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=99)
    res = epsilon_lower_bound(*_pair(mech, 0.0, 1.0), n_draws=N, delta=1e-5)
    assert res.delta == 1e-5
    assert 0.0 < res.epsilon_lb <= 1.0
    # The reported bound uses (P_lower - delta) / P_upper.
    assert res.epsilon_lb == pytest.approx(np.log((res.p_lower - 1e-5) / res.p_upper), rel=1e-12)


def test_under_noised_gaussian_detected():
    sigma = AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0).scale / 4
    rng = np.random.default_rng(5)
    res = epsilon_lower_bound(
        lambda n: rng.normal(0.0, sigma, n), lambda n: rng.normal(1.0, sigma, n), n_draws=N, delta=1e-5
    )
    assert res.epsilon_lb > 1.0


def test_custom_events_randomized_response():
    # Events {y = 1} and {y = 0}; RR with eps = 1 has every ratio exactly e.
    mech = RandomizedResponse(epsilon=1.0, seed=3)

    def events(y):
        return np.column_stack([y == 1, y == 0])

    res = epsilon_lower_bound(*_pair(mech, 0, 1), n_draws=200_000, events=events)
    assert 0.9 < res.epsilon_lb <= 1.0
    assert res.n_events == 2 and res.n_bounds == 8


def test_fixed_thresholds_and_no_signal():
    # Identical distributions: the true epsilon of this pair is 0, so any
    # positive bound would be a false positive (probability <= alpha).
    rng = np.random.default_rng(8)
    res = epsilon_lower_bound(
        lambda n: rng.normal(size=n), lambda n: rng.normal(size=n), n_draws=200_000, thresholds=[-1.0, 0.0, 1.0]
    )
    assert res.n_events == 6
    assert res.epsilon_lb == 0.0


def test_more_draws_tighten_bound():
    mech = Laplace(epsilon=1.0, sensitivity=1.0, seed=11)
    small = epsilon_lower_bound(*_pair(mech, 0.0, 1.0), n_draws=5_000)
    large = epsilon_lower_bound(*_pair(mech, 0.0, 1.0), n_draws=N)
    assert small.epsilon_lb < large.epsilon_lb <= 1.0


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(alpha=0.0), ValueError, "alpha"),
        (dict(alpha=1.0), ValueError, "alpha"),
        (dict(alpha="0.05"), TypeError, "alpha"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(n_draws=0), ValueError, "n_draws"),
        (dict(n_draws=10.5), TypeError, "n_draws"),
        (dict(thresholds=[0.0], events=lambda y: y[:, None] > 0), ValueError, "at most one"),
        (dict(thresholds=[np.nan]), ValueError, "thresholds"),
        (dict(events="y > 0"), TypeError, "events"),
    ],
)
def test_validation(kw, exc, match):
    rng = np.random.default_rng(0)
    with pytest.raises(exc, match=match):
        epsilon_lower_bound(lambda n: rng.normal(size=n), lambda n: rng.normal(size=n), **{"n_draws": 100, **kw})


def test_sampler_output_checked():
    with pytest.raises(ValueError, match="sample_d"):
        epsilon_lower_bound(lambda n: np.zeros(n - 1), lambda n: np.zeros(n), n_draws=10)
    with pytest.raises(TypeError, match="sample_d_prime must be callable"):
        epsilon_lower_bound(lambda n: np.zeros(n), None, n_draws=10)
    with pytest.raises(ValueError, match="NaN"):
        epsilon_lower_bound(lambda n: np.full(n, np.nan), lambda n: np.zeros(n), n_draws=10)
