"""Bayesian stacking of MCMC chains for posteriors whose chains do not mix.

When a posterior has several deep modes, NUTS chains started apart settle in different modes
and never cross; pooling their draws then weights every mode by the share of chains that
happened to land in it, which estimates neither the posterior nor anything else defined by
the model. Yao, Vehtari & Gelman (2022) combine such chains by *stacking*: chain k gets the
weight w_k that maximises the leave-one-out predictive performance of the mixture,

    max_{w in simplex}  sum_i log sum_k w_k p_k(y_i | y_{-i}),

where p_k(y_i | y_{-i}) is chain k's leave-one-out (PSIS-LOO) predictive density of data
point i. The stacked predictive ``sum_k w_k p_k(y~)`` is then an estimate of a predictive
distribution, not of the posterior: where the chains agree it is the posterior predictive,
where they do not it is the best mixture (for LOO log score) of the modes found.

This module is generic (no model in it): :func:`chain_loo_lpd` takes pointwise
log-likelihood draws of any fit, :func:`stacking_weights` the per-chain LOO densities,
:func:`stacked_predictive` held-out densities, and :func:`chain_modes` groups chains by a
label-invariant summary (e.g. their mean log-likelihood) to count the modes found.

References
----------
.. [1] Y. Yao, A. Vehtari and A. Gelman (2022), "Stacking for non-mixing Bayesian
   computations: the curse and blessing of multimodal posteriors", Journal of Machine
   Learning Research 23(79), 1-45. (Eq. 3: the chain-stacking objective.)
.. [2] Y. Yao, A. Vehtari, D. Simpson and A. Gelman (2018), "Using stacking to average
   Bayesian predictive distributions", Bayesian Analysis 13(3), 917-1007.
.. [3] A. Vehtari, A. Gelman and J. Gabry (2017), "Practical Bayesian model evaluation using
   leave-one-out cross-validation and WAIC", Statistics and Computing 27, 1413-1432.
.. [4] A. Vehtari, D. Simpson, A. Gelman, Y. Yao and J. Gabry (2024), "Pareto smoothed
   importance sampling", Journal of Machine Learning Research 25(72), 1-58 (k > 0.7:
   the importance-sampling estimate is unreliable).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from .._validation import _show, check_array, check_positive, check_real

__all__ = [
    "PARETO_K_THRESHOLD",
    "STACKED_PREDICTIVE",
    "ChainLOO",
    "ChainModes",
    "chain_loo_lpd",
    "chain_modes",
    "stacked_predictive",
    "stacking_objective",
    "stacking_weights",
]

#: how a number computed with :func:`stacking_weights` is labelled: an estimate of a predictive
#: (the best leave-one-out mixture of the modes found), never of the posterior; the posterior's
#: weights of the modes are :func:`pystanprivacy.sampling.modes.mode_masses`
STACKED_PREDICTIVE = "stacked predictive"

#: Pareto-k above which a PSIS-LOO estimate of a point is unreliable (Vehtari et al. 2024, Sec. 3)
PARETO_K_THRESHOLD = 0.7

#: how far the weights may be from summing to 1 in :func:`stacked_predictive`
_SIMPLEX_TOL = 1e-8


# ------------------------------------------------------------------------------- checks
def _check_lpd(lpd: Any, name: str, *, ndim: int = 2) -> np.ndarray:
    """A finite float array of ``ndim`` dimensions with at least one entry on each axis."""
    arr = check_array(lpd, name, ndim=ndim, kinds="iuf")
    if any(size < 1 for size in arr.shape):
        raise ValueError(f"{name} must have at least one entry on every axis, got shape {arr.shape}")
    return arr


def _check_weights(weights: Any, n_chains: int) -> np.ndarray:
    w = check_array(weights, "weights", shape=(n_chains,), kinds="iuf")
    if np.any(w < 0) or abs(float(w.sum()) - 1.0) > _SIMPLEX_TOL:
        raise ValueError(
            f"weights must lie on the simplex (every weight >= 0, sum 1 within {_SIMPLEX_TOL:g}); "
            f"got {_show(w.tolist())}"
        )
    return w


# ---------------------------------------------------------------------------- stacking
def stacking_objective(lpd: Any, weights: Any) -> float:
    """The chain-stacking objective ``sum_i log sum_k w_k exp(lpd[i, k])`` (Yao et al. 2022, Eq. 3).

    Parameters
    ----------
    lpd : array (n_points, n_chains)
        Pointwise log predictive densities of every chain (finite).
    weights : array (n_chains,)
        Weights on the simplex.

    Returns
    -------
    float
    """
    arr = _check_lpd(lpd, "lpd")
    w = _check_weights(weights, arr.shape[1])
    return float(stacked_predictive(arr.T, w).sum())


def _neg_objective(a: np.ndarray, shifted: np.ndarray) -> tuple[float, np.ndarray]:
    """Minus the mean stacking objective at softmax weights of ``(a, 0)`` and its gradient in
    ``a``; ``shifted`` is lpd minus its row maxima (exp never overflows, every row has a 0)."""
    logits = np.append(a, 0.0)
    log_w = logits - logsumexp(logits)
    terms = shifted + log_w[None, :]  # (n, K)
    log_mix = logsumexp(terms, axis=1)  # (n,)
    resp = np.exp(terms - log_mix[:, None])  # responsibilities r_ik, rows sum to 1
    n = shifted.shape[0]
    # d/da_j mean_i log sum_k w_k p_ik = mean_i r_ij - w_j
    grad = resp.mean(axis=0) - np.exp(log_w)
    return -float(log_mix.sum()) / n, -grad[:-1]


def stacking_weights(lpd: Any, *, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Chain-stacking weights: the point of the simplex that maximises
    ``sum_i log sum_k w_k exp(lpd[i, k])`` (Yao et al. 2022, Eq. 3).

    The objective is concave in ``w``; it is maximised over the softmax coordinates
    ``w = softmax(a_1, ..., a_{K-1}, 0)`` with L-BFGS-B and the analytic gradient
    ``mean_i r_ik - w_k`` (``r_ik`` the share of point i's mixture density from chain k),
    every log density shifted by its row maximum and mixed with log-sum-exp, so that no
    density under- or overflows. A chain whose optimum weight is 0 gets a weight that
    tends to 0 (about ``1e-6`` or less at the default ``tol``), never exactly 0.

    Parameters
    ----------
    lpd : array (n_points, n_chains)
        Pointwise log predictive densities, e.g. ``chain_loo_lpd(...).lpd`` (leave-one-out)
        or held-out log densities of a validation set. Finite values only.
    tol : float, default 1e-10
        Tolerance of the optimiser on the gradient of the mean objective (``gtol``) and its
        relative change (``ftol``).
    max_iter : int, default 10000
        Largest number of L-BFGS-B iterations.

    Returns
    -------
    ndarray (n_chains,)
        Non-negative weights summing to 1; with one chain, ``[1.0]``.

    Raises
    ------
    ValueError
        ``lpd`` not 2-dimensional, without a point or a chain, or holding NaN or infinite
        values; ``tol`` not > 0; the optimiser not converging within ``max_iter``.

    Notes
    -----
    Chains that sample the same mode predict alike, so the objective is flat along the
    directions that move weight among them: only the total weight of a group of identical
    chains is determined (symmetric chains start at equal weights and keep them).

    References
    ----------
    .. [1] Yao, Vehtari & Gelman (2022), JMLR 23(79), Sec. 3 (Eq. 3).
    .. [2] Yao, Vehtari, Simpson & Gelman (2018), Bayesian Analysis 13(3), Sec. 3.
    """
    arr = _check_lpd(lpd, "lpd")
    tol = check_positive(tol, "tol")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an int >= 1, got {_show(max_iter)}")
    n_chains = arr.shape[1]
    if n_chains == 1:
        return np.ones(1)
    shifted = arr - arr.max(axis=1, keepdims=True)
    result = minimize(
        _neg_objective,
        np.zeros(n_chains - 1),
        args=(shifted,),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": tol, "ftol": tol * 1e-3, "maxiter": int(max_iter)},
    )
    if not result.success and result.nit >= max_iter:
        raise ValueError(f"stacking_weights did not converge within max_iter={int(max_iter)} iterations")
    return softmax(np.append(result.x, 0.0))


def stacked_predictive(lpd: Any, weights: Any) -> np.ndarray:
    """Log density of the stacked predictive per point: ``log sum_k w_k exp(lpd[k, i])``.

    Parameters
    ----------
    lpd : array (n_chains, n_points)
        Every chain's log predictive density of each point (e.g. held-out entries), finite.
    weights : array (n_chains,)
        Weights on the simplex (e.g. :func:`stacking_weights` of the chains' LOO densities
        on the training data). Chains of weight 0 drop out.

    Returns
    -------
    ndarray (n_points,)

    References
    ----------
    .. [1] Yao, Vehtari & Gelman (2022), JMLR 23(79), Sec. 3 (the stacked predictive).
    """
    arr = _check_lpd(lpd, "lpd")
    w = _check_weights(weights, arr.shape[0])
    with np.errstate(divide="ignore"):
        log_w = np.log(w)
    return logsumexp(arr + log_w[:, None], axis=0)


# --------------------------------------------------------------------- per-chain PSIS-LOO
@dataclasses.dataclass(frozen=True)
class ChainLOO:
    """Per-chain PSIS-LOO of a fit (:func:`chain_loo_lpd`).

    Attributes
    ----------
    lpd : ndarray (n_points, n_chains)
        ``log p_k(y_i | y_{-i})``: chain k's PSIS-LOO log predictive density of point i (the
        input of :func:`stacking_weights`).
    pareto_k : ndarray (n_points, n_chains)
        The Pareto shape estimate of every point's importance weights in every chain.
    k_threshold : float
        Above it a point's estimate is unreliable (:data:`PARETO_K_THRESHOLD`).
    """

    lpd: np.ndarray
    pareto_k: np.ndarray
    k_threshold: float = PARETO_K_THRESHOLD

    @property
    def n_bad(self) -> np.ndarray:
        """Points with ``pareto_k > k_threshold`` in each chain: (n_chains,) ints."""
        return (self.pareto_k > self.k_threshold).sum(axis=0)

    @property
    def elpd(self) -> np.ndarray:
        """Each chain's PSIS-LOO expected log predictive density ``sum_i lpd[i, k]``."""
        return self.lpd.sum(axis=0)

    def warnings(self) -> list[str]:
        """One line per chain with points whose Pareto k exceeds the threshold (empty when none)."""
        return [
            f"chain {k}: {int(n)} of {self.lpd.shape[0]} points have Pareto k > {self.k_threshold:g} "
            f"(max {float(self.pareto_k[:, k].max()):.2f}); their PSIS-LOO estimates are unreliable"
            for k, n in enumerate(self.n_bad)
            if n
        ]


def chain_loo_lpd(log_lik: Any, *, reff: float = 1.0, k_threshold: float = PARETO_K_THRESHOLD) -> ChainLOO:
    """Every chain's PSIS-LOO log predictive density of every data point, with its Pareto k.

    For chain k alone, the importance ratios ``1 / p(y_i | theta_s)`` of its draws are
    Pareto-smoothed (:func:`arviz.psislw`) and ``log p_k(y_i | y_{-i}) = log sum_s w_{is}
    p(y_i | theta_s)`` with the normalised smoothed weights ``w_is``.

    Parameters
    ----------
    log_lik : array (n_chains, n_draws, n_points)
        Pointwise log-likelihood ``log p(y_i | theta_s)`` of every draw (finite).
    reff : float, default 1.0
        Relative efficiency (ESS / draws) of the chain's draws, as :func:`arviz.psislw` takes
        it; 1.0 is what :func:`arviz.loo` uses for a single chain.
    k_threshold : float, default 0.7
        Points with a Pareto k above it are counted and reported (:attr:`ChainLOO.n_bad`,
        :meth:`ChainLOO.warnings`); their estimates are kept, never hidden or replaced.

    Returns
    -------
    ChainLOO

    References
    ----------
    .. [1] Vehtari, Gelman & Gabry (2017), Statistics and Computing 27, Sec. 2.1 (PSIS-LOO).
    .. [2] Vehtari, Simpson, Gelman, Yao & Gabry (2024), JMLR 25(72) (Pareto k diagnostic).
    .. [3] Yao, Vehtari & Gelman (2022), JMLR 23(79), Sec. 3 (per-chain LOO for stacking).
    """
    import arviz

    arr = _check_lpd(log_lik, "log_lik", ndim=3)
    reff = check_positive(reff, "reff")
    k_threshold = check_real(k_threshold, "k_threshold")
    if not math.isfinite(k_threshold):
        raise ValueError(f"k_threshold must be a finite number, got {_show(k_threshold)}")
    lpd = np.empty((arr.shape[2], arr.shape[0]))
    khat = np.empty_like(lpd)
    for c in range(arr.shape[0]):
        ll = arr[c].T  # (points, draws): psislw reads the last axis as draws
        log_w, k = arviz.psislw(-ll, reff=reff)
        lpd[:, c] = logsumexp(np.asarray(log_w) + ll, axis=1)
        khat[:, c] = np.asarray(k)
    return ChainLOO(lpd=lpd, pareto_k=khat, k_threshold=k_threshold)


# ---------------------------------------------------------------------------- modes found
@dataclasses.dataclass(frozen=True)
class ChainModes:
    """Chains grouped by a label-invariant summary (:func:`chain_modes`).

    Attributes
    ----------
    labels : ndarray (n_chains,) of int
        The mode of every chain, 0-based; mode 0 has the largest centre (first summary).
    centres : ndarray (n_modes, n_summaries)
        Mean summary of the chains in each mode.
    tol : ndarray (n_summaries,)
        The tolerance the chains were grouped with.
    """

    labels: np.ndarray
    centres: np.ndarray
    tol: np.ndarray

    @property
    def n_modes(self) -> int:
        return int(self.centres.shape[0])

    def members(self, mode: int) -> np.ndarray:
        """The chains (0-based) in ``mode``."""
        return np.flatnonzero(self.labels == mode)


def chain_modes(values: Any, *, tol: Any) -> ChainModes:
    """Group chains whose label-invariant summaries agree within ``tol``: the modes found.

    Two chains are linked when every summary differs by at most ``tol`` (per summary);
    modes are the connected groups of linked chains (single linkage), so a mode can span
    more than ``tol`` through chains in between. Modes are numbered by decreasing centre of
    the first summary (with the mean log-likelihood as first summary: the best mode first).

    Parameters
    ----------
    values : array (n_chains,) or (n_chains, n_summaries)
        Per chain, summaries that do not depend on labels, e.g. the chain's mean
        log-likelihood (and the sorted state occupancy of an HMM). Finite values only.
    tol : float or array (n_summaries,)
        Largest difference (>= 0) within a mode, per summary. Choose it from the Monte Carlo
        error of the summary (a few posterior standard deviations of the chain mean), not
        from the values.

    Returns
    -------
    ChainModes

    Raises
    ------
    ValueError
        ``values`` not 1- or 2-dimensional or with non-finite entries; ``tol`` negative, not
        finite, or of the wrong length.

    References
    ----------
    .. [1] Yao, Vehtari & Gelman (2022), JMLR 23(79), Sec. 2 (chains in different modes).
    """
    arr = check_array(values, "values", ndim=(1, 2), kinds="iuf")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"values must hold at least one chain and one summary, got shape {arr.shape}")
    t = check_array(tol, "tol", ndim=(0, 1), kinds="iuf")
    t = np.broadcast_to(t, (arr.shape[1],)) if t.ndim == 0 else t
    if t.shape != (arr.shape[1],):
        raise ValueError(f"tol must be a number or one per summary ({arr.shape[1]}), got shape {t.shape}")
    if np.any(t < 0):
        raise ValueError(f"tol must be >= 0, got {_show(t.tolist())}")
    n = arr.shape[0]
    linked = np.all(np.abs(arr[:, None, :] - arr[None, :, :]) <= t[None, None, :], axis=2)
    group = -np.ones(n, dtype=int)
    n_groups = 0
    for start in range(n):
        if group[start] >= 0:
            continue
        stack = [start]
        group[start] = n_groups
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(linked[i] & (group < 0)):
                group[j] = n_groups
                stack.append(int(j))
        n_groups += 1
    centres = np.array([arr[group == g].mean(axis=0) for g in range(n_groups)])
    order = np.argsort(-centres[:, 0], kind="stable")
    rank = np.empty(n_groups, dtype=int)
    rank[order] = np.arange(n_groups)
    return ChainModes(labels=rank[group], centres=centres[order], tol=np.array(t, dtype=float))
