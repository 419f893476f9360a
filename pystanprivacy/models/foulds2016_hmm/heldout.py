"""Held-out log-likelihood of the war-logs HMM (Foulds et al. 2016, Fig. 6): the held-out
cells' entries under a fit's state weights, and the state weights of a held-out cell from
one released draw's neighbouring states."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

__all__ = ["heldout_log_likelihood", "neighbour_state_log_weights"]


def heldout_log_likelihood(
    theta: np.ndarray, log_state_weights: np.ndarray, counts: np.ndarray, heldout: np.ndarray
) -> np.ndarray:
    """Held-out log-likelihood of the entries of held-out cells, per draw.

    ``sum_{c held out} log sum_k w_{c,k} prod_{d,j} theta^(k,d)_j ^ n_{c,d,j}`` with
    ``theta`` (S, K, J) or (K, J), normalised log state weights (S, R, T, K) or (R, T, K)
    -- e.g. the forward-backward probabilities of a fit that masked those cells, or
    :func:`neighbour_state_log_weights` of a released OPS draw -- and the true counts
    (R, T, J). Returns an array (S,) (a scalar array for unbatched input).
    """
    theta = np.asarray(theta, dtype=float)
    w = np.asarray(log_state_weights, dtype=float)
    single = theta.ndim == 2
    if single:
        theta, w = theta[None], w[None]
    mask = np.asarray(heldout, dtype=bool)
    n = np.asarray(counts, dtype=float)[mask]  # (C, J)
    # emission log-likelihoods of held-out cells: (S, C, K); a probability that underflowed
    # to 0 in Stan's exp(log theta) is read as the smallest positive double
    E = np.einsum("cj,skj->sck", n, np.log(np.maximum(theta, np.finfo(float).tiny)))
    out = logsumexp(w[:, mask, :] + E, axis=2).sum(axis=1)
    return out[0] if single else out


def neighbour_state_log_weights(A: np.ndarray, z: np.ndarray, heldout: np.ndarray) -> np.ndarray:
    """Log predictive state weights of held-out cells from one draw of (A, z):
    ``w_{r,t,k} ∝ A[z_{r,t-1}, k] A[k, z_{r,t+1}]`` (the dummy row ``A[0]`` before the
    first timestep, no right factor after the last). Shape (R, T, K); cells not held out
    get uniform weights (they are not used)."""
    A = np.asarray(A, dtype=float)
    z = np.asarray(z, dtype=int)
    R, T = z.shape
    K = A.shape[1]
    mask = np.asarray(heldout, dtype=bool)
    with np.errstate(divide="ignore"):
        logA = np.log(A)
    out = np.full((R, T, K), -math.log(K))
    for r, t in zip(*np.nonzero(mask)):
        w = logA[0].copy() if t == 0 else logA[1 + z[r, t - 1]].copy()
        if t + 1 < T:
            w = w + logA[1:, z[r, t + 1]]
        out[r, t] = w - logsumexp(w)
    return out
