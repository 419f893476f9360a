"""The mass of each mode of a multimodal posterior, by bridge sampling within the mode.

When MCMC chains settle in different modes and never cross, the share of chains in a mode says
nothing about its posterior mass (pooling), and stacking weighs the modes by how well they
predict left-out data (a predictive, not the posterior: :mod:`pystanprivacy.sampling.stacking`).
This module estimates what the posterior itself puts on each mode found: the normalising
constant of the density restricted to the mode,

    Z_m = ∫_{B_m} q(x) dx,   q the unnormalised density (e.g. Stan's log density with the
                                Jacobian, on the unconstrained scale),

by Meng & Wong's (1996) optimal bridge sampling between the mode's own draws and a
multivariate normal fitted to them (the ``"normal"`` method of Gronau et al. 2017), and reports
``w_m = Z_m / sum_k Z_k``: the posterior probability of mode m among the modes found.
Nothing in it is a Laplace (Gaussian) approximation of the posterior: the normal is only the
bridge's proposal, and the estimate is consistent whatever the shape of the mode; a poor
proposal shows as a large estimated error, not as a bias.

Assumptions (the estimate is of the modes' masses only where they hold):

* **Each mode's draws cover that mode**: they come from the density restricted to it (chains
  that stayed in it after warm-up and explored it).
* **The modes are disjoint** and the proposal fitted to one mode puts negligible probability
  on the others (far-apart modes; the estimator's draws from the proposal are not checked for
  membership).
* **The modes found are the modes that carry the mass**: a mode no chain visited has no
  estimate, and the weights are relative to the modes found.
* Symmetric copies (e.g. the K! relabellings of a mixture's or an HMM's states) are counted
  once: each mode's draws must lie in one copy (chains aligned to one labelling), and every mode
  is assumed to have the same number of copies.

Failure modes: a mode only partly explored (chains still drifting, a chain that switches
labels within itself) gives draws that do not cover it; in high dimension with few draws per
mode the proposal's covariance is poor and the estimated relative error grows (reported per
mode in :attr:`ModeMasses.rel_error`); modes that overlap, or a proposal that reaches into
another mode, make ``Z_m`` include mass that is not the mode's.

References
----------
.. [1] X.-L. Meng and W. H. Wong (1996), "Simulating ratios of normalizing constants via a
   simple identity: a theoretical exploration", Statistica Sinica 6, 831-860 (Eq. 4.1, the
   optimal bridge function, and its iterative solution, Eq. 4.2).
.. [2] Q. F. Gronau, A. Sarafoglou, D. Matzke, A. Ly, U. Boehm, M. Marsman, D. S. Leslie,
   J. J. Forster, E.-J. Wagenmakers and H. Steingroever (2017), "A tutorial on bridge
   sampling", Journal of Mathematical Psychology 81, 80-97 (Sec. 3: the normal proposal fitted
   to the first half of the draws, the iterative scheme on the second half).
.. [3] S. Frühwirth-Schnatter (2004), "Estimating marginal likelihoods for mixture and Markov
   switching models using bridge sampling techniques", Econometrics Journal 7, 143-167 (the
   relative mean-squared error of the bridge estimate; label switching, Sec. 4).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats
from scipy.optimize import brentq
from scipy.special import logsumexp, softmax

from .._validation import SeedLike, check_array, check_int, check_positive, check_random_state

__all__ = [
    "MIN_DRAWS_PER_COORDINATE",
    "MODE_RANGE",
    "ONE_MODE",
    "POSTERIOR_MODE_MASS",
    "BridgeEstimate",
    "ModeEstimate",
    "ModeMasses",
    "bridge_log_evidence",
    "mode_estimate",
    "mode_masses",
]

#: how a number computed from the modes weighted by :func:`mode_masses` is labelled
POSTERIOR_MODE_MASS = "posterior (mode-mass weighted)"
#: how a number computed from one mode's draws alone is labelled
ONE_MODE = "one mode"
#: how the interval [smallest, largest] of a quantity over the modes found is labelled: it holds
#: the posterior value of any quantity that is a weighted mean of the modes' values, whatever
#: the modes' masses, when the modes found carry the posterior mass (:func:`mode_estimate`)
MODE_RANGE = "range over the modes found"

#: fewest posterior draws per coordinate, in the half of each mode's draws that fits the proposal,
#: for which the mode masses are trusted (:attr:`ModeMasses.reliable`). Measured: two exact
#: Gaussian or Student-t (df 10) modes of masses 1/4 and 3/4 with different diagonal scales were
#: recovered within 0.02 at 56 coordinates and 10 draws per coordinate, but the minor mode got
#: weight 0.43-1.0 at 560 coordinates and 0.45-1.3 draws per coordinate (the estimated errors,
#: about 1 log unit, did not cover that bias)
MIN_DRAWS_PER_COORDINATE = 10.0

LogDensity = Callable[[np.ndarray], np.ndarray]


@dataclasses.dataclass(frozen=True)
class BridgeEstimate:
    """One mode's normalising constant (:func:`bridge_log_evidence`).

    Attributes
    ----------
    log_evidence : float
        log Z, Z = the integral of the unnormalised density over the mode (up to the constant
        the density omits).
    rel_error : float
        Estimated relative root-mean-squared error of Z (Frühwirth-Schnatter 2004, Eq. 16:
        the proposal draws' variance plus the posterior draws' variance over their ESS).
    log_sd : float
        The matching standard error of log Z, ``sqrt(log(1 + rel_error^2))``.
    n_draws, n_proposal : int
        Posterior draws in the bridge (the second half of each chain) and proposal draws.
    iterations : int
        Evaluations of the fixed-point equation (bracketing and Brent's method).
    """

    log_evidence: float
    rel_error: float
    log_sd: float
    n_draws: int
    n_proposal: int
    iterations: int


def _check_draws(draws: Any, name: str) -> np.ndarray:
    arr = check_array(draws, name, ndim=(2, 3), kinds="iuf")
    if arr.ndim == 2:
        arr = arr[None]
    if arr.shape[1] < 4 or arr.shape[2] < 1:
        raise ValueError(
            f"{name} must hold at least 4 draws per chain and 1 coordinate "
            f"(shape (chains, draws, P) or (draws, P)), got shape {arr.shape}"
        )
    return arr


def _evaluate(log_density: LogDensity, points: np.ndarray, what: str) -> np.ndarray:
    out = np.asarray(log_density(points), dtype=float).reshape(-1)
    if out.shape != (points.shape[0],):
        raise ValueError(f"log_density must return one value per point ({points.shape[0]}), got shape {out.shape}")
    if np.isnan(out).any() or np.isposinf(out).any():
        raise ValueError(f"log_density returned NaN or +inf at {what}")
    return out


def _ess(values: np.ndarray) -> float:
    """Bulk ESS of per-chain draws (chains, n) by ArviZ (rank-normalised, Vehtari et al. 2021)."""
    from .posterior import _arviz

    if np.ptp(values) == 0:
        return float(values.size)
    return float(_arviz().ess(np.asarray(values, dtype=float), method="bulk"))


def _cv2(log_f: np.ndarray) -> float:
    """Squared coefficient of variation var(f) / mean(f)^2 of ``f = exp(log_f)``, computed in logs."""
    n = log_f.size
    log_m1 = logsumexp(log_f) - math.log(n)
    log_m2 = logsumexp(2.0 * log_f) - math.log(n)
    return float(max(math.expm1(min(log_m2 - 2.0 * log_m1, 700.0)), 0.0))


def bridge_log_evidence(
    draws: Any,
    log_density: LogDensity,
    *,
    seed: SeedLike = None,
    n_proposal: int | None = None,
    tol: float = 1e-10,
    max_iter: int = 1000,
) -> BridgeEstimate:
    """log Z of the density ``exp(log_density)`` over the region its ``draws`` explore, by
    optimal bridge sampling with a normal proposal.

    The first half of every chain fixes the proposal g = N(mean, cov) (Ledoit-Wolf shrunk
    covariance when the draws are fewer than 10 per coordinate); the second half (``n1`` draws)
    and ``n2`` draws of g enter Meng & Wong's fixed point (solved for log r by Brent's method)

        r <- [1/n2 sum_j l2_j / (s1 l2_j + s2 r)] / [1/n1 sum_i 1 / (s1 l1_i + s2 r)],

    with ``l = q / g`` at the proposal's (l2) and the posterior's (l1) draws and
    ``s_i = n_i / (n1 + n2)``, computed in logs.

    Parameters
    ----------
    draws : array (chains, draws, P) or (draws, P)
        Draws of the density restricted to the mode, on an unbounded scale (e.g. Stan's
        unconstrained parameters), chains of equal length.
    log_density : callable
        ``log_density(points (M, P)) -> (M,)``: the unnormalised log density, the same function
        for every mode compared (e.g. :meth:`pystanprivacy.sampling.stan.StanModel.log_density`
        with ``unconstrained=``, which includes the Jacobian). ``-inf`` is allowed (zero
        density), NaN is not.
    seed : int, Generator or None
        Seed of the proposal draws.
    n_proposal : int, optional
        Draws of the proposal (default: as many as the posterior draws in the bridge).
    tol, max_iter : float, int
        Convergence of the root of the fixed-point equation in log r (Brent's method): to
        ``tol`` in log r, in at most ``max_iter`` evaluations.

    Returns
    -------
    BridgeEstimate

    References
    ----------
    .. [1] Meng & Wong (1996), Statistica Sinica 6, Eq. 4.1-4.2.
    .. [2] Gronau et al. (2017), J. Math. Psych. 81, Sec. 3.
    .. [3] Frühwirth-Schnatter (2004), Econometrics Journal 7, Eq. 16 (the error).
    """
    arr = _check_draws(draws, "draws")
    if not callable(log_density):
        raise TypeError(f"log_density must be callable, got {type(log_density).__name__}")
    rng = check_random_state(seed)
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    _, n, P = arr.shape
    half = n // 2
    fit, est = arr[:, :half].reshape(-1, P), arr[:, half:]
    n1 = est.shape[0] * est.shape[1]
    n2 = n1 if n_proposal is None else check_int(n_proposal, "n_proposal", minimum=2)
    mean = fit.mean(axis=0)
    if fit.shape[0] >= 10 * P:
        cov = np.atleast_2d(np.cov(fit, rowvar=False))
    else:
        from sklearn.covariance import LedoitWolf

        cov = LedoitWolf().fit(fit).covariance_
    # a coordinate that never moved would make the proposal singular
    cov = cov + np.eye(P) * 1e-10 * max(float(np.trace(cov)) / P, 1e-300)
    proposal = stats.multivariate_normal(mean=mean, cov=cov, allow_singular=False)
    prop = np.atleast_2d(proposal.rvs(size=n2, random_state=rng)).reshape(n2, P)
    flat = est.reshape(-1, P)
    l1 = _evaluate(log_density, flat, "a posterior draw") - proposal.logpdf(flat).reshape(-1)
    if not np.all(np.isfinite(l1)):
        raise ValueError("log_density is -inf at a posterior draw: the draws are not from this density")
    l2 = _evaluate(log_density, prop, "a proposal draw") - proposal.logpdf(prop).reshape(-1)
    log_s1, log_s2 = math.log(n1 / (n1 + n2)), math.log(n2 / (n1 + n2))
    lstar = float(np.median(l1))
    a1, a2 = l1 - lstar, l2 - lstar

    def excess(log_r: float) -> float:
        """log of the fixed point's right-hand side minus log r: decreasing from +inf to -inf,
        its one root is the optimal bridge estimate (Meng & Wong 1996, Eq. 4.2)."""
        num = logsumexp(a2 - np.logaddexp(log_s1 + a2, log_s2 + log_r)) - math.log(n2)
        den = logsumexp(-np.logaddexp(log_s1 + a1, log_s2 + log_r)) - math.log(n1)
        return float(num - den - log_r)

    # a bracket of the root (the fixed-point iteration itself can take thousands of steps when
    # the proposal and the mode overlap little, as in hundreds of dimensions)
    lo, hi, step = -1.0, 1.0, 1.0
    iterations = 0
    while excess(lo) <= 0 or excess(hi) >= 0:
        step *= 2.0
        lo, hi = lo - step, hi + step
        iterations += 1
        if iterations > max_iter:
            raise RuntimeError(f"bridge sampling found no bracket of its root in max_iter={max_iter} steps")
    log_r, info = brentq(excess, lo, hi, xtol=tol, rtol=4 * np.finfo(float).eps, maxiter=max_iter, full_output=True)
    if not info.converged:
        raise RuntimeError(f"bridge sampling did not converge in max_iter={max_iter} iterations (tol={tol:g})")
    log_r = float(log_r)
    iterations += info.function_calls
    # Frühwirth-Schnatter (2004): f1 at the proposal draws, f2 at the posterior draws, their
    # squared coefficients of variation in logs (where the proposal and the mode barely overlap,
    # f1 and f2 underflow in linear scale and their variance would read as 0)
    lf1 = -np.logaddexp(log_s1, log_s2 - (a2 - log_r))
    lf2 = -np.logaddexp(log_s1 + (a1 - log_r), log_s2)
    ess2 = _ess(np.exp(lf2 - lf2.max()).reshape(est.shape[0], est.shape[1])) if n1 > 3 else float(n1)
    re2 = _cv2(lf1) / n2 + _cv2(lf2) / max(ess2, 1.0)
    return BridgeEstimate(
        log_evidence=log_r + lstar,
        rel_error=float(math.sqrt(re2)),
        log_sd=float(math.sqrt(math.log1p(re2))),
        n_draws=n1,
        n_proposal=n2,
        iterations=iterations,
    )


@dataclasses.dataclass(frozen=True)
class ModeMasses:
    """The posterior mass of every mode found (:func:`mode_masses`).

    Attributes
    ----------
    log_mass : ndarray (n_modes,)
        log Z_m of every mode (up to one constant shared by all modes).
    log_sd : ndarray (n_modes,)
        Standard error of every log Z_m.
    rel_error : ndarray (n_modes,)
        Estimated relative error of every Z_m.
    weights : ndarray (n_modes,)
        ``Z_m / sum_k Z_k``: the posterior probability of each mode among those found.
    estimate : str
        :data:`POSTERIOR_MODE_MASS`: what a number weighted by ``weights`` estimates.
    draws_per_coordinate : float
        The fewest draws per coordinate that fitted a mode's proposal (``inf`` when unknown).
    """

    log_mass: np.ndarray
    log_sd: np.ndarray
    rel_error: np.ndarray
    weights: np.ndarray
    estimate: str = POSTERIOR_MODE_MASS
    draws_per_coordinate: float = math.inf

    @property
    def reliable(self) -> bool:
        """Whether every mode's proposal was fitted to at least :data:`MIN_DRAWS_PER_COORDINATE`
        draws per coordinate (always true with one mode: nothing is compared). Below it the
        masses can be biased far beyond their estimated errors (the data of the constant)."""
        return self.n_modes == 1 or self.draws_per_coordinate >= MIN_DRAWS_PER_COORDINATE

    @property
    def n_modes(self) -> int:
        return int(self.log_mass.shape[0])

    @property
    def top(self) -> int:
        """The mode of largest estimated mass (0-based)."""
        return int(np.argmax(self.log_mass))

    def log_gap(self) -> float:
        """log Z of the top mode minus that of the next one (``inf`` with one mode)."""
        if self.n_modes == 1:
            return math.inf
        s = np.sort(self.log_mass)
        return float(s[-1] - s[-2])

    def gap_sd(self) -> float:
        """Standard error of :meth:`log_gap` (0 with one mode)."""
        if self.n_modes == 1:
            return 0.0
        order = np.argsort(self.log_mass)
        return float(math.hypot(self.log_sd[order[-1]], self.log_sd[order[-2]]))

    def chain_weights(self, labels: Any) -> np.ndarray:
        """Per-chain weights from the mode weights: mode m's weight split equally among its
        chains (``labels``: every chain's mode, 0-based), for
        :func:`~pystanprivacy.sampling.stacking.stacked_predictive` of per-chain densities,
        which then estimates the posterior predictive (mode-mass weighted)."""
        lab = check_array(labels, "labels", ndim=1, kinds="iu", bounds=(0, self.n_modes - 1), integer=True).astype(int)
        counts = np.bincount(lab, minlength=self.n_modes)
        if np.any(counts == 0):
            raise ValueError(f"labels must name every one of the {self.n_modes} modes at least once")
        return self.weights[lab] / counts[lab]


def mode_masses(
    draws: Sequence[Any],
    log_density: LogDensity,
    *,
    seed: SeedLike = None,
    n_proposal: int | None = None,
) -> ModeMasses:
    """The posterior mass of every mode from each mode's own draws (:func:`bridge_log_evidence`
    per mode, the same ``log_density`` for all).

    Parameters
    ----------
    draws : sequence of arrays (chains_m, draws, P) or (draws, P)
        One entry per mode: the draws of the chains that found it (on the unconstrained scale,
        symmetric copies aligned to one labelling within the mode).
    log_density : callable
        ``(M, P) -> (M,)``, the unnormalised log density of the posterior.
    seed : int, Generator or None
        Seed of the proposal draws (one Generator for all modes).
    n_proposal : int, optional
        Proposal draws per mode.

    Returns
    -------
    ModeMasses
        ``weights`` estimate the posterior probability of each mode among those found, under
        the assumptions in the module docstring.

    References
    ----------
    .. [1] Meng & Wong (1996); Gronau et al. (2017); Frühwirth-Schnatter (2004), Sec. 4
       (mixtures: every mode's copies counted once).
    """
    if isinstance(draws, np.ndarray) or not isinstance(draws, Sequence) or len(draws) < 1:
        raise TypeError("draws must be a non-empty sequence with one array of draws per mode")
    dims = {_check_draws(d, f"draws[{m}]").shape[2] for m, d in enumerate(draws)}
    if len(dims) != 1:
        raise ValueError(f"every mode's draws must have the same number of coordinates, got {sorted(dims)}")
    rng = check_random_state(seed)
    shapes = [_check_draws(d, f"draws[{m}]").shape for m, d in enumerate(draws)]
    per_coordinate = min(c * (n // 2) / p for c, n, p in shapes)
    found = [bridge_log_evidence(d, log_density, seed=rng, n_proposal=n_proposal) for d in draws]
    log_mass = np.array([f.log_evidence for f in found])
    return ModeMasses(
        log_mass=log_mass,
        log_sd=np.array([f.log_sd for f in found]),
        rel_error=np.array([f.rel_error for f in found]),
        weights=softmax(log_mass),
        draws_per_coordinate=float(per_coordinate),
    )


@dataclasses.dataclass(frozen=True)
class ModeEstimate:
    """A quantity of a multimodal posterior from its modes' values (:func:`mode_estimate`).

    Attributes
    ----------
    posterior : float
        The mode-mass weighted value (:data:`POSTERIOR_MODE_MASS`), ``nan`` where the masses
        cannot be compared (not reliable).
    low, high : float
        The smallest and largest value over the modes found (:data:`MODE_RANGE`).
    estimate : str
        What :attr:`value` is: :data:`POSTERIOR_MODE_MASS` or :data:`MODE_RANGE`.
    """

    posterior: float
    low: float
    high: float
    estimate: str

    @property
    def interval(self) -> tuple[float, float]:
        """The posterior value as a point ``(v, v)`` where the masses are reliable, else the range
        over the modes found: in both cases an interval holding the posterior value over the
        modes found (for comparisons that must hold whatever the weights)."""
        if self.estimate == POSTERIOR_MODE_MASS:
            return (self.posterior, self.posterior)
        return (self.low, self.high)


def mode_estimate(values: Any, weights: Any, *, reliable: bool, log_mean: bool = False) -> ModeEstimate:
    """A posterior quantity from per-mode values and the modes' masses, or its range over the
    modes found.

    Parameters
    ----------
    values : array (n_modes,)
        The quantity computed within each mode (e.g. a mode's mean held-out log-likelihood).
    weights : array (n_modes,)
        The modes' posterior probabilities (:attr:`ModeMasses.weights`), summing to 1.
    reliable : bool
        Whether the masses can be compared (:attr:`ModeMasses.reliable`); if not, only the
        range is reported.
    log_mean : bool, default False
        ``False``: the quantity is a posterior mean, so its posterior value is
        ``sum_m w_m v_m``. ``True``: each value is the log of a posterior mean (e.g. the log of
        the mean held-out likelihood within the mode), so the posterior value is
        ``log sum_m w_m exp(v_m)``.

    Returns
    -------
    ModeEstimate

    Notes
    -----
    Both forms are weighted means (of ``v_m``, or of ``exp(v_m)`` then a monotone map), so for
    ANY weights on the modes found the posterior value lies in ``[min_m v_m, max_m v_m]``: the
    range bounds it without the masses, under one assumption, that the modes found carry the
    posterior mass (a mode no chain visited could lie outside it).
    """
    v = np.asarray(values, dtype=float).reshape(-1)
    w = np.asarray(weights, dtype=float).reshape(-1)
    if v.size == 0 or v.shape != w.shape:
        raise ValueError(f"values and weights must be non-empty and of one length, got {v.shape} and {w.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"values must be finite, got {v.tolist()}")
    if reliable and (np.any(w < 0) or not math.isclose(float(w.sum()), 1.0, abs_tol=1e-9)):
        raise ValueError(f"weights must be non-negative and sum to 1, got {w.tolist()}")
    low, high = float(v.min()), float(v.max())
    if not reliable:
        return ModeEstimate(posterior=math.nan, low=low, high=high, estimate=MODE_RANGE)
    if log_mean:
        with np.errstate(divide="ignore"):
            value = float(logsumexp(v, b=w))
    else:
        value = float(np.dot(w, v))
    # rounding can put a weighted mean a few ulps outside its values' range
    return ModeEstimate(posterior=min(max(value, low), high), low=low, high=high, estimate=POSTERIOR_MODE_MASS)
