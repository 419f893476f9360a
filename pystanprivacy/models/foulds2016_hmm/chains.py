"""Chains of an HMM fit that do not mix: the modes they found and their stacking.

On logs like the real war logs the naive-Bayes HMM's posterior has several deep modes that
NUTS does not cross; chains from dispersed starts (``init="dispersed"``) settle in different
ones. :func:`chain_summary` says how many modes the chains found (label-invariant R-hat of the
log-likelihood, :func:`~pystanprivacy.sampling.stacking.chain_modes` of the chains' mean
log-likelihood) and weighs the chains by Bayesian stacking (Yao, Vehtari & Gelman 2022) on
their leave-one-cell-out predictive densities; the stacked held-out density of held-out
cells is then an estimate of a predictive (the best LOO mixture of the modes found), not of
the posterior.

The "points" are the region/month cells: the HMM's likelihood does not factorise over cells,
so each cell's pointwise term is its conditional density given every other cell in the
likelihood, ``log p(y_c | y_{-c}, A, theta)`` (:func:`cell_log_likelihood`), the term that
leave-one-out needs for a non-factorised model (Bürkner, Gabry & Vehtari 2021).

References
----------
.. [1] Y. Yao, A. Vehtari and A. Gelman (2022), "Stacking for non-mixing Bayesian
   computations: the curse and blessing of multimodal posteriors", JMLR 23(79).
.. [2] P.-C. Bürkner, J. Gabry and A. Vehtari (2021), "Efficient leave-one-out
   cross-validation for Bayesian non-factorized normal and Student-t models",
   Computational Statistics 36, 1243-1261 (Sec. 2: LOO with the conditional log-likelihood).
.. [3] L. R. Rabiner (1989), "A tutorial on hidden Markov models and selected applications
   in speech recognition", Proc. IEEE 77(2) (forward-backward recursions).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
from scipy.special import logsumexp

from ..._validation import check_array, check_positive
from ...sampling.diagnostics import split_rhat
from ...sampling.posterior import Posterior
from ...sampling.stacking import (
    PARETO_K_THRESHOLD,
    STACKED_PREDICTIVE,
    ChainLOO,
    ChainModes,
    chain_loo_lpd,
    chain_modes,
    stacked_predictive,
    stacking_weights,
)

__all__ = ["ChainSummary", "cell_log_likelihood", "chain_summary"]


def _check_counts(counts: Any) -> np.ndarray:
    """Finite counts (R, T, J) >= 0; the message gives how many are negative, never a value."""
    arr = check_array(counts, "counts", ndim=3)
    n_neg = int(np.count_nonzero(arr < 0))
    if n_neg:
        raise ValueError(f"counts contains {n_neg} value(s) below 0; counts must be >= 0")
    return arr


def cell_log_likelihood(theta: Any, A: Any, counts: Any, observed: Any) -> np.ndarray:
    """Per draw, every cell's log density given the other cells in the likelihood.

    For a cell c in the likelihood (``observed``) it is ``log p(y_c | y_{O - c}, A, theta)``,
    for a held-out cell ``log p(y_c | y_O, A, theta)`` (O: the observed cells of the region),
    from one forward-backward pass per draw:
    ``log sum_k alpha~_c(k) e_c(k) beta_c(k) - log sum_k alpha~_c(k) beta_c(k)``, with
    ``alpha~_c`` the forward message before cell c's emission, ``beta_c`` the backward message
    and ``e_c(k) = prod_j theta_kj ^ n_cj`` (without the multinomial coefficient of the cell,
    which is the same for every draw and chain).

    Parameters
    ----------
    theta : array (S, K, J)
        Emission probabilities per draw (every feature's block on its simplex).
    A : array (S, K + 1, K)
        Transitions per draw: row 0 the dummy initial state, row k + 1 state k.
    counts : array (R, T, J)
        The counts the fit saw (for a Laplace fit: the released counts) or, for held-out
        cells, the counts to evaluate.
    observed : array (R, T) of bool
        Cells in the likelihood.

    Returns
    -------
    ndarray (S, R, T)

    References
    ----------
    .. [1] Bürkner, Gabry & Vehtari (2021), Computational Statistics 36, Sec. 2.
    .. [2] Rabiner (1989), Proc. IEEE 77(2), Sec. III.A (forward-backward).
    """
    theta = check_array(theta, "theta", ndim=3, bounds=(0.0, 1.0))
    S, K, J = theta.shape
    A = check_array(A, "A", shape=(S, K + 1, K), bounds=(0.0, 1.0))
    counts = _check_counts(counts)
    R, T, _ = counts.shape
    if counts.shape[2] != J:
        raise ValueError(f"counts must have {J} values per cell (theta's J), got shape {counts.shape}")
    obs = check_array(observed, "observed", shape=(R, T), kinds="biu", bounds=(0, 1), integer=True).astype(bool)
    with np.errstate(divide="ignore"):
        log_theta = np.log(np.maximum(theta, np.finfo(float).tiny))
        log_a = np.log(A)
    E = np.einsum("rtj,skj->srtk", counts, log_theta)  # (S, R, T, K)
    E_in = np.where(obs[None, :, :, None], E, 0.0)  # observed cells only enter the messages
    trans = log_a[:, None, 1:, :]  # (S, 1, K, K): from state i (row) to j
    pred = np.empty((S, R, T, K))  # log p(z_t, y_{O, <t})
    back = np.zeros((S, R, T, K))  # log p(y_{O, >t} | z_t)
    pred[:, :, 0] = log_a[:, None, 0, :]
    for t in range(1, T):
        filt = pred[:, :, t - 1] + E_in[:, :, t - 1]
        pred[:, :, t] = logsumexp(filt[..., :, None] + trans, axis=-2)
    for t in range(T - 2, -1, -1):
        nxt = E_in[:, :, t + 1] + back[:, :, t + 1]
        back[:, :, t] = logsumexp(trans + nxt[..., None, :], axis=-1)
    return logsumexp(pred + E + back, axis=-1) - logsumexp(pred + back, axis=-1)


@dataclasses.dataclass(frozen=True)
class ChainSummary:
    """What the chains of one HMM fit found, and their stacking (:func:`chain_summary`).

    Attributes
    ----------
    mean_log_lik : ndarray (chains,)
        Each chain's mean log-likelihood (label-invariant).
    rhat_log_lik : float
        Rank-normalised split R-hat of the log-likelihood over all chains (label-invariant).
    modes : ChainModes
        Chains grouped by mean log-likelihood within ``tol``: ``modes.n_modes`` modes found.
    loo : ChainLOO
        Every chain's PSIS-LOO density of every cell in the likelihood (leave one cell out),
        with the Pareto k of each (reported, not hidden).
    weights : ndarray (chains,)
        Stacking weights of the chains on ``loo.lpd``.
    heldout_lpd : ndarray (chains, n_heldout) or None
        Each chain's log predictive density of every held-out cell (log of the mean over the
        chain's draws of ``p(y_c | y_O, A, theta)``), when cells were held out.
    """

    mean_log_lik: np.ndarray
    rhat_log_lik: float
    modes: ChainModes
    loo: ChainLOO
    weights: np.ndarray
    heldout_lpd: np.ndarray | None

    #: what each held-out number estimates (report it with the number): the stacked one is a
    #: predictive, the pooled one weighs the modes by chain counts; the posterior (mode-mass
    #: weighted) one is ``stacked_predictive(heldout_lpd, HMMModes.chain_weights())``
    #: (:func:`~pystanprivacy.models.foulds2016_hmm.modes.hmm_mode_masses`)
    estimates: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "stacked_heldout_lpd": STACKED_PREDICTIVE,
            "pooled_heldout_lpd": "pooled chains (modes weighted by chain counts)",
        }
    )

    @property
    def stacked_heldout_lpd(self) -> np.ndarray | None:
        """Log density of the stacked predictive of every held-out cell (n_heldout,): labelled
        ``"stacked predictive"``, an estimate of a predictive, not of the posterior."""
        return None if self.heldout_lpd is None else stacked_predictive(self.heldout_lpd, self.weights)

    @property
    def pooled_heldout_lpd(self) -> np.ndarray | None:
        """Log density of every held-out cell under all draws pooled (equal chain weights)."""
        if self.heldout_lpd is None:
            return None
        n = self.heldout_lpd.shape[0]
        return stacked_predictive(self.heldout_lpd, np.full(n, 1.0 / n))


def chain_summary(
    posterior: Posterior,
    counts: Any,
    *,
    heldout: Any = None,
    tol: float,
    k_threshold: float = PARETO_K_THRESHOLD,
) -> ChainSummary:
    """The modes the chains of an HMM fit found and their stacking weights.

    Parameters
    ----------
    posterior : Posterior
        A fit of :class:`~pystanprivacy.models.foulds2016_hmm.NaiveBayesHMM` (draws of theta,
        A and log_lik), best with ``init="dispersed"``.
    counts : array (R, T, J)
        The counts the fit saw: for a Laplace fit the RELEASED counts (the weights are then
        post-processing of the release); for a non-private fit the exact counts. Held-out
        cells of ``counts`` are only evaluated (:attr:`ChainSummary.heldout_lpd`).
    heldout : array (R, T) of bool, optional
        The cells the fit held out (its ``heldout``).
    tol : float
        Chains whose mean log-likelihoods differ by at most ``tol`` are in one mode
        (:func:`~pystanprivacy.sampling.stacking.chain_modes`): a few times the Monte Carlo
        error of a chain's mean log-likelihood.
    k_threshold : float, default 0.7
        Pareto k above which a cell's PSIS-LOO estimate is reported as unreliable.

    Returns
    -------
    ChainSummary

    References
    ----------
    .. [1] Yao, Vehtari & Gelman (2022), JMLR 23(79), Sec. 3-4.
    """
    if not isinstance(posterior, Posterior):
        raise TypeError(f"posterior must be a Posterior of an HMM fit, got {type(posterior).__name__}")
    tol = check_positive(tol, "tol")
    counts = _check_counts(counts)
    R, T, _ = counts.shape
    mask = (
        np.zeros((R, T), dtype=bool)
        if heldout is None
        else check_array(heldout, "heldout", shape=(R, T), kinds="biu", bounds=(0, 1), integer=True).astype(bool)
    )
    theta = posterior.draws("theta", combine_chains=False)  # (C, N, K, J)
    A = posterior.draws("A", combine_chains=False)
    log_lik = posterior.draws("log_lik", combine_chains=False)  # (C, N)
    C, N = log_lik.shape
    # one chain at a time: the forward-backward arrays are (draws, R, T, K) floats
    cells = np.stack([cell_log_likelihood(theta[c], A[c], counts, ~mask).reshape(N, R * T) for c in range(C)])
    flat = mask.ravel()
    loo = chain_loo_lpd(cells[:, :, ~flat], k_threshold=k_threshold)
    heldout_lpd = logsumexp(cells[:, :, flat], axis=1) - np.log(N) if flat.any() else None
    means = log_lik.mean(axis=1)
    return ChainSummary(
        mean_log_lik=means,
        rhat_log_lik=float(split_rhat(log_lik)),
        modes=chain_modes(means, tol=tol),
        loo=loo,
        weights=stacking_weights(loo.lpd),
        heldout_lpd=heldout_lpd,
    )
