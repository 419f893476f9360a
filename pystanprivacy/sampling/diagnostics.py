"""Rank-normalised split R-hat and bulk/tail ESS, vectorised over the elements of a variable.

ArviZ (``arviz.rhat(method="rank")``, ``arviz.ess(method="bulk"|"tail")``) computes these
one element at a time in Python. A batched run (one Stan program over R independent data
sets, e.g. Foulds et al. 2016 Figure 2 with R = 1000) has R elements, and the per-element
loop cost ~4.3 s of a ~10 s fit on the 2-core development machine -- more than Stan's own
sampling. The functions below do the same arithmetic for all elements at once: the same
splitting of chains, the same rank normalisation (Blom offset 3/8), the same FFT
autocovariance, Geyer's initial positive and monotone sequences, and the same R-type-7
quantiles. ``tests/sampling/test_mcmc_diagnostics.py`` checks them against ArviZ element by element.

Every function takes draws shaped ``(chains, draws, *shape)`` and returns an array shaped
``shape``; an element with a NaN draw, or too few chains or draws for the statistic, gives
NaN, as in ArviZ.

References
----------
Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C. (2021).
Rank-normalization, folding, and localization: an improved R-hat for assessing convergence
of MCMC. Bayesian Analysis 16(2), 667-718. (Eqs. 3-4: split R-hat; Sec. 3.1: rank
normalisation and folding; Sec. 4.3: tail ESS from the 5 % and 95 % quantile indicators.)

Geyer, C. J. (1992). Practical Markov chain Monte Carlo. Statistical Science 7(4), 473-483.
(Initial positive and initial monotone sequence estimators of the autocorrelation sum.)
"""

from __future__ import annotations

import numpy as np
from scipy import fft as _fft
from scipy import special as _special
from scipy import stats as _stats

#: Blom's offset of the rank normalisation (Vehtari et al. 2021, Eq. 14)
_BLOM = 3.0 / 8.0
#: the tail ESS uses the indicators of these quantiles (Vehtari et al. 2021, Sec. 4.3)
TAIL_PROBS = (0.05, 0.95)


def _as_elements(draws: np.ndarray, name: str = "draws") -> tuple[np.ndarray, tuple[int, ...]]:
    """``(chains, draws, *shape)`` -> ``(elements, chains, draws)`` and ``shape``."""
    arr = np.asarray(draws, dtype=float)
    if arr.ndim < 2:
        raise ValueError(f"{name} must have shape (chains, draws, ...), got shape {arr.shape}")
    shape = arr.shape[2:]
    flat = arr.reshape(arr.shape[0], arr.shape[1], -1)
    return np.moveaxis(flat, 2, 0), shape


def _split_chains(x: np.ndarray) -> np.ndarray:
    """(K, C, N) -> (K, 2C, N // 2): first and last halves of every chain (the middle draw
    of an odd-length chain is dropped)."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, x.shape[2] - half :]], axis=1)


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalise each element over all its chains and draws: average ranks, Blom's
    offset, the standard normal quantile (Vehtari et al. 2021, Eq. 14)."""
    k, c, n = x.shape
    ranks = _stats.rankdata(x.reshape(k, c * n), method="average", axis=1)
    # ndtri is the standard normal quantile that scipy.stats.norm.ppf calls, without its checks
    return _special.ndtri((ranks - _BLOM) / (c * n - 2 * _BLOM + 1)).reshape(k, c, n)


def _rhat(x: np.ndarray) -> np.ndarray:
    """Potential scale reduction of (K, C, N) chains (Vehtari et al. 2021, Eqs. 3-4)."""
    n = x.shape[2]
    chain_mean = x.mean(axis=2)
    within = x.var(axis=2, ddof=1).mean(axis=1)
    between = n * chain_mean.var(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def _autocov(x: np.ndarray) -> np.ndarray:
    """Autocovariance at every lag along the last axis, through a zero-padded FFT."""
    n = x.shape[-1]
    m = _fft.next_fast_len(2 * n)
    centred = x - x.mean(axis=-1, keepdims=True)
    spec = np.fft.rfft(centred, n=m, axis=-1)
    spec *= np.conjugate(spec)
    return np.fft.irfft(spec, n=m, axis=-1)[..., :n] / n


def _ess(x: np.ndarray) -> np.ndarray:
    """Effective sample size of (K, C, N) chains: the autocorrelation sum truncated by
    Geyer's initial positive sequence, made monotone (Geyer 1992; Vehtari et al. 2021,
    Eqs. 10-11). A constant element counts all its C·N draws as effective. ``x`` holds no
    NaN: the public functions pass only the elements :func:`_valid` accepts."""
    k, c, n = x.shape
    out = np.full(k, np.nan)
    constant = x.max(axis=(1, 2)) - x.min(axis=(1, 2)) < np.finfo(float).resolution
    out[constant] = c * n
    todo = ~constant
    if not todo.any():
        return out
    x = x[todo]
    acov = _autocov(x)
    mean_acov = acov.mean(axis=1)  # (K, N): the chains' mean autocovariance at each lag
    mean_var = mean_acov[:, 0] * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if c > 1:
        var_plus = var_plus + x.mean(axis=2).var(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho_lag = 1.0 - (mean_var[:, None] - mean_acov) / var_plus[:, None]  # (K, N)
    rho = np.zeros_like(rho_lag)
    rho[:, 0] = 1.0
    rho[:, 1] = rho_lag[:, 1]
    even = np.ones(len(x))
    odd = rho_lag[:, 1].copy()
    t_end = np.ones(len(x), dtype=int)  # where each element's positive sequence stops
    # Geyer's initial positive sequence: extend while the sum of a pair stays positive
    for t in range(1, n - 3, 2):
        active = (even + odd) > 0.0
        if not active.any():
            break
        even = np.where(active, rho_lag[:, t + 1], even)
        odd = np.where(active, rho_lag[:, t + 2], odd)
        keep = active & ((even + odd) >= 0)
        rho[keep, t + 1] = even[keep]
        rho[keep, t + 2] = odd[keep]
        t_end[active] = t + 2
    max_t = t_end - 2
    rows = np.arange(len(x))
    improve = even > 0  # the last even autocorrelation, if positive, closes the sum
    rho[rows[improve], max_t[improve] + 1] = even[improve]
    # Geyer's initial monotone sequence: no pair sum larger than the one before it
    for t in range(1, int(max_t.max(initial=0)) - 1, 2):
        mono = (t <= max_t - 2) & ((rho[:, t + 1] + rho[:, t + 2]) > (rho[:, t - 1] + rho[:, t]))
        if mono.any():
            rho[mono, t + 1] = (rho[mono, t - 1] + rho[mono, t]) / 2.0
            rho[mono, t + 2] = rho[mono, t + 1]
    lags = np.arange(n)
    total = c * n
    tau = -1.0 + 2.0 * np.where(lags <= max_t[:, None], rho, 0.0).sum(axis=1) + rho[rows, max_t + 1]
    tau = np.maximum(tau, 1.0 / np.log10(total))
    ess = total / tau
    ess[np.isnan(rho).any(axis=1)] = np.nan
    out[todo] = ess
    return out


def _quantile_type7(x: np.ndarray, prob: float) -> np.ndarray:
    """R's type-7 quantile of each row of (K, M), with the arithmetic of
    ``scipy.stats.mstats.mquantiles(alphap=1, betap=1)`` that ArviZ uses."""
    m = x.shape[1]
    p = np.float64(prob)
    aleph = m * p + (1.0 + p * (1.0 - 1.0 - 1.0))
    j = int(np.floor(np.clip(aleph, 1, m - 1)))
    gamma = np.clip(aleph - j, 0, 1)
    ordered = np.sort(x, axis=1)
    return (1.0 - gamma) * ordered[:, j - 1] + gamma * ordered[:, j]


def _valid(x: np.ndarray, *, min_chains: int, min_draws: int = 4) -> np.ndarray:
    """Elements of (K, C, N) with no NaN and enough chains and draws."""
    enough = x.shape[1] >= min_chains and x.shape[2] >= min_draws
    return ~np.isnan(x).any(axis=(1, 2)) & enough


def split_rhat(draws: np.ndarray) -> np.ndarray:
    """Rank-normalised split R-hat of every element: the larger of the bulk R-hat (split,
    rank-normalised chains) and the tail R-hat (the same after folding about the median)
    -- Vehtari et al. (2021), Sec. 3.1; ArviZ ``rhat(method="rank")``. Needs at least 2
    chains of 4 draws."""
    x, shape = _as_elements(draws)
    out = np.full(len(x), np.nan)
    ok = _valid(x, min_chains=2)
    if ok.any():
        split = _split_chains(x[ok])
        bulk = _rhat(_z_scale(split))
        k = len(split)
        median = np.median(split.reshape(k, -1), axis=1)
        tail = _rhat(_z_scale(np.abs(split - median[:, None, None])))
        out[ok] = np.where(tail > bulk, tail, bulk)  # Python's max(bulk, tail), NaN included
    return out.reshape(shape)


def ess_bulk(draws: np.ndarray) -> np.ndarray:
    """Bulk effective sample size of every element: the ESS of the split, rank-normalised
    chains (Vehtari et al. 2021, Sec. 3.2; ArviZ ``ess(method="bulk")``)."""
    x, shape = _as_elements(draws)
    out = np.full(len(x), np.nan)
    ok = _valid(x, min_chains=1)
    if ok.any():
        out[ok] = _ess(_z_scale(_split_chains(x[ok])))
    return out.reshape(shape)


def ess_tail(draws: np.ndarray, probs: tuple[float, float] = TAIL_PROBS) -> np.ndarray:
    """Tail effective sample size of every element: the smaller ESS of the indicators
    ``draw <= q`` at the 5 % and 95 % quantiles (Vehtari et al. 2021, Sec. 4.3; ArviZ
    ``ess(method="tail")``)."""
    x, shape = _as_elements(draws)
    out = np.full(len(x), np.nan)
    ok = _valid(x, min_chains=1)
    if ok.any():
        xs = x[ok]
        flat = xs.reshape(len(xs), -1)
        low, high = (_ess(_split_chains((xs <= _quantile_type7(flat, p)[:, None, None]).astype(float))) for p in probs)
        out[ok] = np.where(high < low, high, low)  # Python's min(low, high)
    return out.reshape(shape)


__all__ = ["TAIL_PROBS", "split_rhat", "ess_bulk", "ess_tail"]
