"""Evaluation of posterior samples: calibration (posterior quantiles of the truth, KS
statistic against Uniform(0, 1) and its critical value, interval coverage) and utility
(unbiased MMD² with a Gaussian kernel).

Everything here is generic (any model, any paper): it takes arrays of draws and true values.

Calibration (Cook, Gelman & Rubin 2006; Talts et al. 2018)
----------------------------------------------------------
Draw θ_i from the prior and data from p(x | θ_i); if the inference is exact, the posterior
quantile U_i = F_i(θ_i) is Uniform(0, 1). With L draws from the posterior,
:func:`posterior_quantile` returns the randomised rank (r_i + V_i)/(L + 1), r_i = #{draws
< θ_i}, V_i ~ Uniform(0, 1), which is *exactly* Uniform(0, 1) for L iid draws from the exact
posterior, for every L (no discreteness), and close to it for long MCMC runs. Uniformity of
U_1..U_M is judged by the Kolmogorov-Smirnov statistic (:func:`ks_uniform`) and its
critical value (:func:`ks_critical_value`, exact finite-M distribution).

Utility (Gretton et al. 2012)
-----------------------------
:func:`mmd2_unbiased` is the unbiased estimator MMD²_u of Gretton et al. (2012, Lemma 6)
with a Gaussian kernel k(x, y) = exp(−‖x − y‖² / (2 h²)); h = 1 is the "standard normal
kernel" of Bernstein & Sheldon (2018, Sec. 4). It may be slightly negative when the two
distributions are equal.

References
----------
.. [1] S. R. Cook, A. Gelman and D. B. Rubin (2006), "Validation of software for Bayesian
   models using posterior quantiles", JCGS 15(3).
.. [2] S. Talts, M. Betancourt, D. Simpson, A. Vehtari and A. Gelman (2018), "Validating
   Bayesian inference algorithms with simulation-based calibration", arXiv:1804.06788.
.. [3] A. Gretton, K. M. Borgwardt, M. J. Rasch, B. Schölkopf and A. Smola (2012), "A kernel
   two-sample test", JMLR 13. Eq. 3 (MMD²_u), Lemma 6.
.. [4] F. J. Massey (1951), "The Kolmogorov-Smirnov test for goodness of fit", JASA 46.
.. [5] G. Bernstein and D. Sheldon (2018), NeurIPS, Sec. 4 (calibration by KS of posterior
   quantiles; MMD to the non-private posterior).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from .._validation import SeedLike, check_array, check_int, check_positive, check_random_state, check_real

if TYPE_CHECKING:  # pandas is imported lazily
    import pandas as pd

__all__ = [
    "posterior_quantile",
    "ks_uniform",
    "ks_critical_value",
    "calibration_summary",
    "ecdf",
    "interval_coverage",
    "gaussian_kernel",
    "median_bandwidth",
    "mmd2_unbiased",
]


def posterior_quantile(draws: Any, truth: Any, *, seed: SeedLike = None, randomize: bool = True) -> np.ndarray:
    """Posterior quantile of the true value in each of M trials.

    Parameters
    ----------
    draws : array_like, shape (M, L)
        L posterior draws per trial (a 1-d array is one trial).
    truth : array_like, shape (M,)
        The true value per trial.
    seed : int, Generator or None
        Randomness of the tie-breaking uniforms (reproducibility only).
    randomize : bool, default True
        ``True``: (r + V (t + 1))/(L + 1) with r = #{draws < truth}, t = #{draws == truth},
        V ~ Uniform(0, 1): exactly Uniform(0, 1) under iid exact draws. ``False``: the
        plain fraction r/L of draws below the truth (the paper's definition).

    Returns
    -------
    numpy.ndarray, shape (M,)
    """
    d = check_array(draws, "draws", ndim=(1, 2), kinds="iuf")
    d = d[None, :] if d.ndim == 1 else d
    t = check_array(truth, "truth", ndim=(0, 1), kinds="iuf").reshape(-1)
    if t.shape[0] != d.shape[0]:
        raise ValueError(f"truth must have one value per trial ({d.shape[0]}), got {t.shape[0]}")
    if d.shape[1] == 0:
        raise ValueError("draws must hold at least one draw per trial")
    below = (d < t[:, None]).sum(axis=1)
    if not randomize:
        return below / d.shape[1]
    ties = (d == t[:, None]).sum(axis=1)
    v = check_random_state(seed).random(t.shape[0])
    return (below + v * (ties + 1)) / (d.shape[1] + 1)


def _check_u(u: Any) -> np.ndarray:
    arr = check_array(u, "u", ndim=1, kinds="iuf")
    if arr.size == 0:
        raise ValueError("u must hold at least one value")
    if np.any((arr < 0) | (arr > 1)):
        raise ValueError("u must hold values in [0, 1]")
    return arr


def ks_uniform(u: Any) -> tuple[float, float]:
    """Kolmogorov-Smirnov statistic D = sup |F_M(u) − u| of ``u`` against Uniform(0, 1),
    and its exact p-value. Lower D is better; 0 is perfect uniformity."""
    res = stats.kstest(_check_u(u), "uniform")
    return float(res.statistic), float(res.pvalue)


def ks_critical_value(m: int, alpha: float = 0.01) -> float:
    """Critical value of the one-sample KS statistic for m values at level ``alpha``:
    P(D_m > c) = alpha under uniformity (exact distribution, ``scipy.stats.kstwo``)."""
    m = check_int(m, "m", minimum=1)
    a = check_real(alpha, "alpha")
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(stats.kstwo.ppf(1.0 - a, m))


def calibration_summary(
    table: pd.DataFrame,
    by: Sequence[str],
    *,
    u_column: str = "u",
    alpha: float = 0.01,
) -> pd.DataFrame:
    """KS statistic, p-value, number of trials and critical value at ``alpha`` for each group
    of a long table with one posterior quantile per row (rows with NaN quantiles are
    dropped and counted in ``missing``)."""
    import pandas as pd

    if u_column not in table.columns:
        raise ValueError(f"table has no column {u_column!r}; columns: {list(table.columns)}")
    missing_cols = [c for c in by if c not in table.columns]
    if missing_cols:
        raise ValueError(f"table has no column(s) {missing_cols}")
    rows = []
    for key, group in table.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        u = group[u_column].to_numpy(dtype=float)
        ok = np.isfinite(u)
        row = dict(zip(by, key))
        if ok.sum() == 0:
            row.update(ks=np.nan, pvalue=np.nan, trials=0, critical=np.nan, missing=int((~ok).sum()))
        else:
            d, p = ks_uniform(u[ok])
            row.update(
                ks=d,
                pvalue=p,
                trials=int(ok.sum()),
                critical=ks_critical_value(int(ok.sum()), alpha),
                missing=int((~ok).sum()),
            )
        rows.append(row)
    out = pd.DataFrame(rows)
    out["calibrated"] = out["ks"] <= out["critical"]
    return out


def ecdf(u: Any, grid: Any) -> np.ndarray:
    """Empirical CDF of ``u`` evaluated at ``grid``."""
    arr = np.sort(_check_u(u))
    g = check_array(grid, "grid", ndim=1, kinds="iuf")
    return np.searchsorted(arr, g, side="right") / arr.size


def interval_coverage(draws: Any, truth: Any, level: float = 0.9) -> np.ndarray:
    """Whether the central ``level`` credible interval of each trial's draws (M, L) covers
    the truth (M,); the mean over trials estimates the coverage."""
    lv = check_real(level, "level")
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    d = check_array(draws, "draws", ndim=2, kinds="iuf")
    t = check_array(truth, "truth", ndim=1, kinds="iuf")
    if t.shape[0] != d.shape[0]:
        raise ValueError(f"truth must have one value per trial ({d.shape[0]}), got {t.shape[0]}")
    lo, hi = np.quantile(d, [(1 - lv) / 2, (1 + lv) / 2], axis=1)
    return (lo <= t) & (t <= hi)


def _as_samples(x: Any, name: str) -> np.ndarray:
    arr = check_array(x, name, ndim=(1, 2), kinds="iuf")
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.shape[0] < 2:
        raise ValueError(f"{name} must hold at least 2 samples, got {arr.shape[0]}")
    return arr


def gaussian_kernel(x: Any, y: Any, bandwidth: float = 1.0) -> np.ndarray:
    """Gram matrix exp(−‖x_i − y_j‖² / (2 h²)) of samples x (m, d) and y (n, d)."""
    h = check_positive(bandwidth, "bandwidth")
    a = _as_samples(x, "x")
    b = _as_samples(y, "y")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"x and y must have the same dimension, got {a.shape[1]} and {b.shape[1]}")
    return _gram(a, b, h)


def _gram(a: np.ndarray, b: np.ndarray, h: float) -> np.ndarray:
    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.exp(-np.maximum(sq, 0.0) / (2.0 * h * h))


def median_bandwidth(x: Any, y: Any, *, max_points: int = 1000) -> float:
    """Median heuristic: the median pairwise distance in the pooled sample (at most
    ``max_points`` evenly spaced points of each sample are used)."""
    a = _as_samples(x, "x")
    b = _as_samples(y, "y")
    pooled = np.concatenate([a[:: max(1, a.shape[0] // max_points)], b[:: max(1, b.shape[0] // max_points)]])
    sq = (pooled * pooled).sum(1)[:, None] + (pooled * pooled).sum(1)[None, :] - 2.0 * pooled @ pooled.T
    iu = np.triu_indices(pooled.shape[0], k=1)
    med = float(np.sqrt(np.median(np.maximum(sq[iu], 0.0))))
    if med <= 0:
        raise ValueError("median_bandwidth: all pooled samples are identical; give a bandwidth")
    return med


def _kernel_sum(a: np.ndarray, b: np.ndarray, h: float, chunk: int, exclude_diagonal: bool) -> float:
    total = 0.0
    for i in range(0, a.shape[0], chunk):
        k = _gram(a[i : i + chunk], b, h)
        if exclude_diagonal:
            rows = np.arange(k.shape[0])
            k[rows, i + rows] = 0.0
        total += float(k.sum())
    return total


def mmd2_unbiased(x: Any, y: Any, *, bandwidth: float | str = 1.0, chunk: int = 2048) -> float:
    """Unbiased estimate MMD²_u of the squared maximum mean discrepancy between the
    distributions of samples ``x`` (m,) or (m, d) and ``y`` (n,) or (n, d):

        1/(m(m−1)) Σ_{i≠j} k(x_i, x_j) + 1/(n(n−1)) Σ_{i≠j} k(y_i, y_j) − 2/(mn) Σ_{i,j} k(x_i, y_j)

    (Gretton et al. 2012, Eq. 3), Gaussian kernel of bandwidth ``bandwidth`` (a number, or
    ``"median"`` for the median heuristic). Gram matrices are built ``chunk`` rows at a time,
    so memory stays O(chunk · max(m, n)).
    """
    a = _as_samples(x, "x")
    b = _as_samples(y, "y")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"x and y must have the same dimension, got {a.shape[1]} and {b.shape[1]}")
    if isinstance(bandwidth, str):
        if bandwidth != "median":
            raise ValueError(f"bandwidth must be a positive number or 'median', got {bandwidth!r}")
        h = median_bandwidth(a, b)
    else:
        h = check_positive(bandwidth, "bandwidth")
    chunk = check_int(chunk, "chunk", minimum=1)
    m, n = a.shape[0], b.shape[0]
    kxx = _kernel_sum(a, a, h, chunk, exclude_diagonal=True)
    kyy = _kernel_sum(b, b, h, chunk, exclude_diagonal=True)
    kxy = _kernel_sum(a, b, h, chunk, exclude_diagonal=False)
    return kxx / (m * (m - 1)) + kyy / (n * (n - 1)) - 2.0 * kxy / (m * n)
