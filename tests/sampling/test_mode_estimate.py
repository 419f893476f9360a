"""A quantity of a multimodal posterior from its modes (:func:`pystanprivacy.sampling.modes.mode_estimate`):
the mode-mass weighted value against a hand computation, and the range over the modes found that
bounds it whatever the weights. Deterministic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pystanprivacy.sampling.modes import MODE_RANGE, POSTERIOR_MODE_MASS, mode_estimate


def test_a_posterior_mean_is_the_mass_weighted_mean_of_the_modes():
    est = mode_estimate([-5.0, -7.0, -6.0], [0.5, 0.2, 0.3], reliable=True)
    assert est.estimate == POSTERIOR_MODE_MASS
    assert est.posterior == pytest.approx(0.5 * -5.0 + 0.2 * -7.0 + 0.3 * -6.0, abs=1e-12)  # -5.7
    assert (est.low, est.high) == (-7.0, -5.0) and est.interval == pytest.approx((-5.7, -5.7))


def test_a_log_of_a_mean_mixes_the_modes_means_not_their_logs():
    """Each value is log E_m[L]; the posterior's log E[L] = log(sum_m w_m E_m[L]), computed here
    term by term: it differs from the weighted mean of the logs by Jensen's gap."""
    values, weights = [-1.0, -3.0], [0.25, 0.75]
    est = mode_estimate(values, weights, reliable=True, log_mean=True)
    by_hand = math.log(0.25 * math.exp(-1.0) + 0.75 * math.exp(-3.0))
    assert est.posterior == pytest.approx(by_hand, abs=1e-12)
    assert est.posterior > 0.25 * -1.0 + 0.75 * -3.0 + 0.1  # not the mean of the logs (-2.5)


def test_without_reliable_masses_only_the_range_is_reported_and_it_bounds_every_weighting():
    values = np.array([-5.2, -5.9, -5.4])
    est = mode_estimate(values, [0.9, 0.05, 0.05], reliable=False)
    assert est.estimate == MODE_RANGE and math.isnan(est.posterior)
    assert est.interval == (-5.9, -5.2)
    # any weighting of the modes found lies inside the range: 200 random weightings, both forms
    rng = np.random.default_rng(0)
    for w in rng.dirichlet(np.ones(3), size=200):
        for log_mean in (False, True):
            v = mode_estimate(values, w, reliable=True, log_mean=log_mean).posterior
            assert est.low <= v <= est.high


def test_one_mode_is_its_own_posterior():
    est = mode_estimate([-4.2], [1.0], reliable=True)
    assert est.posterior == -4.2 and est.interval == (-4.2, -4.2)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="one length"):
        mode_estimate([1.0, 2.0], [1.0], reliable=True)
    with pytest.raises(ValueError, match="finite"):
        mode_estimate([1.0, np.nan], [0.5, 0.5], reliable=True)
    with pytest.raises(ValueError, match="sum to 1"):
        mode_estimate([1.0, 2.0], [0.5, 0.6], reliable=True)
