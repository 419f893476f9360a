"""Mode masses by bridge sampling (:mod:`pystanprivacy.sampling.modes`) against known answers,
with exact draws from each mode (numpy only; the Stan program's case is in
``test_modes_stan.py``).

Calibration (seeds 0-39, measured): in the 8-D Student-t mixture below the estimated weight of
the minor mode had mean 0.2502 and sd 0.0051 around the exact 0.25, the largest error 0.014; the
tolerance 0.03 is 6 sds, a false-rejection rate below 1e-8 per seed under a normal
approximation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from pystanprivacy.sampling.modes import (
    POSTERIOR_MODE_MASS,
    ModeMasses,
    bridge_log_evidence,
    mode_masses,
)

P = 8
WEIGHTS = (0.25, 0.75)
TOL = 0.03


def _mixture():
    """Two 8-D Student-t (df 5) components 30 units from the origin on opposite sides, of
    different shapes (a correlated one, a diagonal one with scales 0.5-2), weights 1/4 and 3/4.
    The mass of the half-space around each is its weight (the other component's mass beyond the
    mid-plane is below 1e-5): the exact answer."""
    rng = np.random.default_rng(0)
    a1 = rng.normal(size=(P, P)) * 0.3 + np.eye(P)
    a2 = np.diag(np.linspace(0.5, 2.0, P))
    comps = [
        stats.multivariate_t(loc=np.full(P, -30.0), shape=a1 @ a1.T, df=5),
        stats.multivariate_t(loc=np.full(P, 30.0), shape=a2 @ a2.T, df=5),
    ]
    log_w = np.log(WEIGHTS)

    def log_q(x):  # unnormalised: the constant 3 is not part of any mode's mass ratio
        return 3.0 + logsumexp(np.stack([lw + c.logpdf(x) for lw, c in zip(log_w, comps)]), axis=0)

    return comps, log_q


@pytest.mark.parametrize("seed", [1, 2])
def test_mode_masses_recover_the_exact_weights_that_chain_counts_miss(seed):
    """Three chains in the minor mode, one in the major: pooling the draws gives the minor mode
    3/4, the exact mass is 1/4; the bridge estimate is within 0.03 of 1/4 (6 Monte Carlo sds)."""
    comps, log_q = _mixture()
    rng = np.random.default_rng(seed)
    minor = comps[0].rvs(size=3 * 1000, random_state=rng).reshape(3, 1000, P)
    major = comps[1].rvs(size=1000, random_state=rng).reshape(1, 1000, P)
    masses = mode_masses([minor, major], log_q, seed=seed)
    assert masses.estimate == POSTERIOR_MODE_MASS
    assert masses.weights.sum() == pytest.approx(1.0)
    assert masses.weights[0] == pytest.approx(WEIGHTS[0], abs=TOL)
    assert masses.top == 1
    pooled = 3 / 4  # the share of the chains (and of the pooled draws) in the minor mode
    assert abs(pooled - WEIGHTS[0]) > 10 * TOL
    # the per-chain weights give each chain its mode's mass over the mode's chains
    np.testing.assert_allclose(
        masses.chain_weights([0, 0, 0, 1]), [masses.weights[0] / 3] * 3 + [masses.weights[1]], rtol=1e-12
    )


def test_bridge_recovers_a_known_normalising_constant():
    """q = e^3 times a 5-D correlated normal density: log Z = 3 exactly. The estimate is within
    5 of its own estimated standard errors of 3 (and that error is below 0.05: a real estimate,
    not a vacuous one). Draws come from two 'chains' of the exact law."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(5, 5)) + 2 * np.eye(5)
    law = stats.multivariate_normal(mean=np.arange(5.0), cov=a @ a.T)
    draws = law.rvs(size=2 * 800, random_state=rng).reshape(2, 800, 5)
    est = bridge_log_evidence(draws, lambda x: 3.0 + law.logpdf(x), seed=4)
    assert 0 < est.log_sd < 0.05
    assert abs(est.log_evidence - 3.0) < 5 * est.log_sd
    assert est.n_draws == 800 and est.n_proposal == 800


def test_a_skewed_one_dimensional_mode_has_its_exact_mass():
    """A Gamma(2, 1) density on log scale (x = log g, density e^{2x - e^x}, skewed: not a
    normal) times 7: log Z = log 7 + log Gamma(2) = log 7."""
    rng = np.random.default_rng(5)
    x = np.log(rng.gamma(2.0, 1.0, size=(4, 500, 1)))
    est = bridge_log_evidence(x, lambda p: math.log(7.0) + 2 * p[:, 0] - np.exp(p[:, 0]), seed=6)
    assert abs(est.log_evidence - math.log(7.0)) < max(5 * est.log_sd, 0.02)


def test_gap_and_its_error():
    m = ModeMasses(
        log_mass=np.array([-10.0, -2.0, -5.0]),
        log_sd=np.array([0.1, 0.3, 0.4]),
        rel_error=np.zeros(3),
        weights=np.array([0.0, 0.9, 0.1]),
    )
    assert m.top == 1 and m.log_gap() == pytest.approx(3.0) and m.gap_sd() == pytest.approx(0.5)
    one = ModeMasses(np.array([1.0]), np.array([0.1]), np.zeros(1), np.array([1.0]))
    assert one.log_gap() == math.inf and one.gap_sd() == 0.0


def test_bad_input_is_refused_with_the_argument_named():
    good = np.zeros((2, 10, 3)) + np.random.default_rng(0).normal(size=(2, 10, 3))
    with pytest.raises(ValueError, match="draws"):
        bridge_log_evidence(np.zeros((2, 2, 3)), lambda x: np.zeros(len(x)))
    with pytest.raises(TypeError, match="log_density"):
        bridge_log_evidence(good, "not callable")
    with pytest.raises(ValueError, match="one value per point"):
        bridge_log_evidence(good, lambda x: np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        bridge_log_evidence(good, lambda x: np.full(len(x), np.nan))
    with pytest.raises(ValueError, match="-inf at a posterior draw"):
        bridge_log_evidence(good, lambda x: np.full(len(x), -np.inf))
    with pytest.raises(TypeError, match="one array of draws per mode"):
        mode_masses(good, lambda x: np.zeros(len(x)))
    with pytest.raises(ValueError, match="same number of coordinates"):
        mode_masses([good, good[..., :2]], lambda x: -0.5 * (x**2).sum(axis=1))
    m = ModeMasses(np.zeros(2), np.zeros(2), np.zeros(2), np.full(2, 0.5))
    with pytest.raises(ValueError, match="every one of the 2 modes"):
        m.chain_weights([0, 0])


def test_too_few_draws_per_coordinate_are_flagged_and_are_wrong():
    """Two exact Gaussian modes in 300 dimensions with different diagonal scales, masses 1/4 and
    3/4, 3 chains and 1 chain of 400 draws: the proposals are fitted to 0.67-2 draws per
    coordinate, below MIN_DRAWS_PER_COORDINATE, and ``reliable`` says so. The estimate is then far
    off (measured: the minor mode's weight 0.9999 for this seed), which is why the OPS rule refuses
    such a comparison. In the 8-D case above, 62.5 draws per coordinate: reliable."""
    P = 300
    rng = np.random.default_rng(0)
    scales = [np.exp(rng.normal(0.0, 0.5, P)), np.exp(rng.normal(0.3, 0.5, P))]
    means = [np.full(P, -3.0), np.full(P, 3.0)]
    log_w = np.log(WEIGHTS)

    def log_q(x):
        parts = [
            lw + stats.norm.logpdf((x - m) / s).sum(axis=1) - np.log(s).sum() for lw, m, s in zip(log_w, means, scales)
        ]
        return logsumexp(np.stack(parts), axis=0)

    draws = [m + s * rng.normal(size=(n, 400, P)) for m, s, n in zip(means, scales, (3, 1))]
    masses = mode_masses(draws, log_q, seed=1)
    assert masses.draws_per_coordinate == pytest.approx(200 / 300)
    assert not masses.reliable
    assert abs(masses.weights[0] - WEIGHTS[0]) > 0.1
    comps, log_q8 = _mixture()
    ok = mode_masses(
        [comps[0].rvs(size=(3, 1000), random_state=2), comps[1].rvs(size=(1, 1000), random_state=3)], log_q8
    )
    assert ok.reliable and ok.draws_per_coordinate == pytest.approx(62.5)
