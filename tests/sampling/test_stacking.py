"""Bayesian stacking of chains (``pystanprivacy.sampling.stacking``; Yao, Vehtari & Gelman 2022).

Every check compares with a computation made here without the module: the two-chain optimum
from its first-order condition (scipy ``brentq``), exact leave-one-out densities of a
conjugate normal model in closed form, a two-mode posterior by quadrature on a grid, and
single-linkage clusters from ``scipy.cluster.hierarchy``. The random inputs use fixed seeds;
the tolerances are set from the Monte Carlo error of those inputs (stated at each test), so
the tests are deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.optimize import brentq
from scipy.special import logsumexp

from pystanprivacy.sampling.stacking import (
    PARETO_K_THRESHOLD,
    chain_loo_lpd,
    chain_modes,
    stacked_predictive,
    stacking_objective,
    stacking_weights,
)


def _two_chain_optimum(lpd: np.ndarray) -> float:
    """The weight of chain 1 that solves sum_i (p1_i - p2_i) / (w p1_i + (1 - w) p2_i) = 0
    (the derivative of the concave objective in w), scaled per point to avoid underflow."""
    p = np.exp(lpd - lpd.max(axis=1, keepdims=True))
    f = lambda w: np.sum((p[:, 0] - p[:, 1]) / (w * p[:, 0] + (1 - w) * p[:, 1]))
    assert f(0.0) > 0 > f(1.0), "the inputs must have an interior optimum"
    return brentq(f, 0.0, 1.0, xtol=1e-14)


# ------------------------------------------------------------------------- the weights
def test_two_chains_solve_the_first_order_condition():
    rng = np.random.default_rng(0)
    lpd = rng.normal(-1.0, 1.0, size=(300, 2)) + np.array([0.0, -0.1])
    w = stacking_weights(lpd)
    assert w.shape == (2,) and w.min() >= 0 and abs(w.sum() - 1) < 1e-12
    # brentq finds the root to 1e-14; the optimiser's gtol 1e-10 puts w within ~1e-8 of it
    assert w[0] == pytest.approx(_two_chain_optimum(lpd), abs=1e-6)
    # the objective at the weights is what the definition gives
    direct = np.sum(np.log(w[0] * np.exp(lpd[:, 0]) + w[1] * np.exp(lpd[:, 1])))
    assert stacking_objective(lpd, w) == pytest.approx(direct, rel=1e-12)


def test_large_log_densities_do_not_overflow():
    """Log densities of -5000 (exp underflows to 0) and shifted copies give the same weights."""
    rng = np.random.default_rng(1)
    lpd = rng.normal(-1.0, 1.0, size=(100, 2))
    shift = rng.normal(0.0, 2000.0, size=(100, 1)) - 5000.0  # per point: does not change the optimum
    assert np.allclose(stacking_weights(lpd + shift), stacking_weights(lpd), atol=1e-7)
    assert stacking_weights(lpd + shift)[0] == pytest.approx(_two_chain_optimum(lpd), abs=1e-6)


def test_a_chain_that_predicts_worse_everywhere_gets_weight_zero():
    rng = np.random.default_rng(2)
    good = rng.normal(-1.0, 1.0, size=200)
    worse = good - 0.2 - rng.exponential(0.5, size=200)
    # the optimum is at w = (1, 0): the objective's slope towards chain 2 there,
    # sum_i p2_i / p1_i - n, is negative (every ratio < 1)
    assert np.sum(np.exp(worse - good)) - 200 < 0
    w = stacking_weights(np.column_stack([good, worse]))
    assert w[1] < 1e-5 and w[0] > 1 - 1e-5


def test_identical_chains_share_their_mode_weight_equally():
    rng = np.random.default_rng(3)
    a, b = rng.normal(-1.0, 1.0, size=(2, 250))
    w = stacking_weights(np.column_stack([a, a, b]))
    assert w[0] == pytest.approx(w[1], abs=1e-9)
    # their total is the optimum of the two distinct chains
    assert w[0] + w[1] == pytest.approx(_two_chain_optimum(np.column_stack([a, b])), abs=1e-6)
    assert stacking_weights(np.column_stack([a])) == pytest.approx([1.0])


def test_bad_input_is_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="lpd must have 2 dimension"):
        stacking_weights(np.zeros(5))
    with pytest.raises(ValueError, match="lpd must have at least one entry on every axis"):
        stacking_weights(np.zeros((5, 0)))
    with pytest.raises(ValueError, match="lpd contains NaN"):
        stacking_weights(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="lpd contains 1 infinite"):
        stacking_weights(np.array([[0.0, -np.inf]]))
    with pytest.raises(TypeError, match="lpd must be an array of numbers"):
        stacking_weights("x")
    with pytest.raises(ValueError, match="tol must be a finite number > 0"):
        stacking_weights(np.zeros((3, 2)), tol=0.0)
    with pytest.raises(ValueError, match="weights must lie on the simplex"):
        stacked_predictive(np.zeros((2, 3)), [0.7, 0.7])
    with pytest.raises(ValueError, match=r"weights must have shape \(2\)"):
        stacked_predictive(np.zeros((2, 3)), [1.0])
    with pytest.raises(ValueError, match="log_lik must have 3 dimension"):
        chain_loo_lpd(np.zeros((4, 10)))
    with pytest.raises(ValueError, match="tol must be >= 0"):
        chain_modes([1.0, 2.0], tol=-1.0)
    with pytest.raises(ValueError, match=r"tol must be a number or one per summary \(2\)"):
        chain_modes(np.zeros((3, 2)), tol=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="values contains NaN"):
        chain_modes([1.0, np.nan], tol=1.0)


def test_stacked_predictive_is_the_weighted_mixture():
    rng = np.random.default_rng(4)
    lpd = rng.normal(-2.0, 1.0, size=(3, 7))
    w = np.array([0.2, 0.0, 0.8])
    direct = np.log(0.2 * np.exp(lpd[0]) + 0.8 * np.exp(lpd[2]))
    assert np.allclose(stacked_predictive(lpd, w), direct, rtol=1e-13)


# ------------------------------------------------------------------------ PSIS-LOO per chain
def test_psis_loo_per_chain_equals_exact_loo_of_a_conjugate_normal_model():
    """y_i ~ N(mu, 1), mu ~ N(0, 10^2): the leave-one-out predictive of y_i is
    N(m_{-i}, 1 + 1/P_{-i}) with P_{-i} = 1/100 + (n - 1), m_{-i} = sum_{j != i} y_j / P_{-i}.
    Each chain holds 4000 exact posterior draws. Over data seeds 5-9 the largest per-point
    error of PSIS-LOO (Monte Carlo error of importance sampling) was 0.014 at ordinary points
    and 0.033 at the outlier; the tolerances 0.04 and 0.08 are far below what leaving nothing
    out costs at the outlier (0.36-0.47 over those seeds, asserted > 0.3)."""
    rng = np.random.default_rng(5)
    n, chains, draws = 30, 3, 4000
    y = rng.normal(1.0, 1.0, size=n)
    y[0] = 4.5  # an outlier: its LOO density differs clearly from its in-sample one
    prec = 1 / 100 + n
    mu = rng.normal(y.sum() / prec, 1 / np.sqrt(prec), size=(chains, draws))
    log_lik = stats.norm.logpdf(y[None, None, :], loc=mu[..., None], scale=1.0)  # (chains, draws, n)
    prec_loo = 1 / 100 + (n - 1)
    mean_loo = (y.sum() - y) / prec_loo
    exact = stats.norm.logpdf(y, loc=mean_loo, scale=np.sqrt(1 + 1 / prec_loo))

    loo = chain_loo_lpd(log_lik)
    assert loo.lpd.shape == (n, chains) and loo.pareto_k.shape == (n, chains)
    err = np.abs(loo.lpd - exact[:, None])
    assert err[0].max() < 0.08 and err[1:].max() < 0.04
    assert np.all(loo.n_bad == 0) and loo.warnings() == [] and loo.k_threshold == PARETO_K_THRESHOLD
    assert loo.elpd == pytest.approx(np.full(chains, exact.sum()), abs=0.2)
    in_sample = logsumexp(log_lik[0], axis=0) - np.log(draws)
    assert in_sample[0] - exact[0] > 0.3  # the check above can tell LOO from no LOO


def test_pareto_k_above_threshold_is_reported_not_hidden():
    """The conjugate normal model of the test above with n = 10 and one observation at 10
    (10 sd from the others): leaving it out moves the posterior by ~1 sd, so its importance
    ratios are heavy-tailed. Its Pareto k is 1.05 and 1.21 in the two chains of this seed
    (0.88-1.20 over seeds 6-8), every other point's below 0.66: exactly that point is reported."""
    rng = np.random.default_rng(6)
    n = 10
    y = rng.normal(0.0, 1.0, size=n)
    y[0] = 10.0
    prec = 1 / 100 + n
    mu = rng.normal(y.sum() / prec, 1 / np.sqrt(prec), size=(2, 1000))
    log_lik = stats.norm.logpdf(y[None, None, :], loc=mu[..., None], scale=1.0)
    loo = chain_loo_lpd(log_lik)
    assert np.all(loo.pareto_k[0] > 0.7) and np.all(loo.pareto_k[1:] <= 0.7)
    assert loo.n_bad.tolist() == [1, 1]
    assert len(loo.warnings()) == 2 and "1 of 10 points have Pareto k > 0.7" in loo.warnings()[0]
    assert np.all(np.isfinite(loo.lpd))  # the estimate is kept, and flagged


# ------------------------------------------------------------ a two-mode posterior, known answer
def _cauchy_two_modes():
    """Cauchy(theta, 1) observations in two mirrored clusters (around -4 and +4, 20 each),
    prior theta ~ N(0, 10^2): the posterior has two modes, at about -4 and +4, with a valley
    at 0 some 25 nats deep, and it is symmetric: each mode holds mass 1/2 exactly."""
    rng = np.random.default_rng(7)
    half = -4.0 + rng.normal(0.0, 0.5, size=20)
    y = np.concatenate([half, -half])
    grid = np.linspace(-15.0, 15.0, 60_001)
    log_post = stats.norm.logpdf(grid, 0, 10) + stats.cauchy.logpdf(y[:, None] - grid[None, :]).sum(axis=0)
    post = np.exp(log_post - log_post.max())
    post /= np.trapezoid(post, grid)
    return y, grid, post


def _draws_in_mode(rng, grid, post, side: int, size: int) -> np.ndarray:
    """Exact draws from the posterior restricted to theta < 0 (side -1) or theta > 0 (side +1):
    a chain that cannot leave its mode. Inverse CDF on the grid, uniform within a grid step."""
    keep = (grid * side) > 0
    g, p = grid[keep], post[keep]
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    idx = np.searchsorted(cdf, rng.random(size))
    return g[idx] + (rng.random(size) - 0.5) * (grid[1] - grid[0])


def test_stacking_recovers_the_mode_masses_that_pooling_gets_wrong():
    """Known answer: by the symmetry of data and prior, the posterior puts mass 1/2 on each
    mode (checked by quadrature), and the exact posterior predictive density of a new point is
    the quadrature integral of Cauchy(y~ - theta) over the posterior. Three chains sit in the
    mode at -4 and one in the mode at +4, none crossing (draws made per mode).

    * Pooling the chains weights the modes 3/4 and 1/4: its predictive misses the exact one
      by more than 0.3 in log density at y~ = -4 and +4 (asserted).
    * Stacking the chains by their PSIS-LOO densities gives the modes total weights 1/2 and
      1/2 (to 0.02: the Monte Carlo error of 2000 draws per chain moves them by < 0.005 over
      these seeds) whatever the split of chains, and its predictive matches the exact one
      within 0.02 in log density."""
    y, grid, post = _cauchy_two_modes()
    assert np.trapezoid(np.where(grid < 0, post, 0.0), grid) == pytest.approx(0.5, abs=1e-6)
    rng = np.random.default_rng(8)
    draws = 2000
    theta = np.stack([_draws_in_mode(rng, grid, post, side, draws) for side in (-1, -1, -1, +1)])
    log_lik = stats.cauchy.logpdf(y[None, None, :] - theta[..., None])  # (4, draws, 40)

    loo = chain_loo_lpd(log_lik)
    w = stacking_weights(loo.lpd)
    assert w[:3].sum() == pytest.approx(0.5, abs=0.02) and w[3] == pytest.approx(0.5, abs=0.02)

    new = np.array([-4.0, 0.0, 4.0, 9.0])
    exact = np.log(np.trapezoid(stats.cauchy.pdf(new[:, None] - grid[None, :]) * post[None, :], grid, axis=1))
    per_chain = logsumexp(stats.cauchy.logpdf(new[None, None, :] - theta[..., None]), axis=1) - np.log(draws)
    stacked = stacked_predictive(per_chain, w)
    pooled = stacked_predictive(per_chain, np.full(4, 0.25))
    assert np.max(np.abs(stacked - exact)) < 0.02
    assert np.abs(pooled - exact)[[0, 2]].min() > 0.3
    # the pooled draws put 3/4 of the mass on the mode at -4
    assert np.mean(theta < 0) == pytest.approx(0.75)


# ----------------------------------------------------------------------------- modes found
def test_chain_modes_groups_chains_and_orders_the_best_first():
    modes = chain_modes([-1000.0, -400.2, -400.0, -1000.5, -2500.0], tol=5.0)
    assert modes.n_modes == 3
    assert modes.labels.tolist() == [1, 0, 0, 1, 2]
    assert modes.members(0).tolist() == [1, 2]
    assert modes.centres[:, 0] == pytest.approx([-400.1, -1000.25, -2500.0])
    # single linkage: a chain between two others joins them into one mode
    assert chain_modes([0.0, 0.9, 1.8], tol=1.0).n_modes == 1
    assert chain_modes([0.0, 1.8], tol=1.0).n_modes == 2


def test_chain_modes_are_single_linkage_clusters_of_the_chebyshev_distance():
    """Against scipy's single-linkage clustering cut at tol (Chebyshev metric; the same
    partition, up to the numbering of the clusters)."""
    rng = np.random.default_rng(9)
    for trial in range(20):
        values = rng.normal(0.0, 3.0, size=(12, 2)) * np.array([1.0, 0.1])
        tol = np.array([1.5, 0.15])
        modes = chain_modes(values, tol=tol)
        ref = fcluster(linkage(values / tol, method="single", metric="chebyshev"), t=1.0, criterion="distance")
        same = modes.labels[:, None] == modes.labels[None, :]
        assert np.array_equal(same, ref[:, None] == ref[None, :]), trial
