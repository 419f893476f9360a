"""The OPS privacy calibration of the war-logs HMM (Foulds et al. 2016, Eq. 6-10, Fig. 6):
emissions truncated at theta_j >= a0_d bound one log entry's log-likelihood term, and the
temperature T = max(1, 2Δ/ε) makes one draw of the tempered posterior ε-DP."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._validation import check_array, check_epsilon, check_real
from .counts import _feature_sizes

__all__ = ["ops_log_likelihood_sensitivity", "ops_temperature", "ops_truncation"]


def _check_multiplier(multiplier: Any) -> float:
    m = check_real(multiplier, "multiplier")
    if not (math.isfinite(m) and m > 1):
        raise ValueError(f"multiplier M must be a finite number > 1 (a0 = 1/(M K_d) < 1/K_d), got {multiplier!r}")
    return m


def ops_truncation(feature_sizes: Sequence[int], multiplier: float) -> np.ndarray:
    """Truncation points a0_d = 1 / (M K_d) of the paper's OPS experiments (Fig. 6)."""
    return 1.0 / (_check_multiplier(multiplier) * _feature_sizes(feature_sizes))


def _check_a0(a0: Any, sizes: np.ndarray) -> np.ndarray:
    arr = check_array(a0, "a0", shape=(len(sizes),), kinds="iuf")
    n_bad = int((~((arr > 0) & (arr * sizes < 1))).sum())
    if n_bad:
        raise ValueError(f"a0 must satisfy 0 < a0_d < 1/K_d for every feature; {n_bad} entr(y/ies) do not")
    return arr


def ops_log_likelihood_sensitivity(feature_sizes: Sequence[int], a0: Any) -> float:
    """Δ = sum_d log((1 - (K_d - 1) a0_d) / a0_d): the most one log entry's log-likelihood
    term sum_d log theta^(z,d)_{x_d} can change when the entry is replaced (also by one in
    another cell, whose state may differ), for emissions truncated at theta_j >= a0_d. The
    largest feasible theta_j is 1 - (K_d - 1) a0_d, the smallest a0_d. With a0_d = 1/(M K_d):
    Δ = sum_d log((M - 1) K_d + 1). The transition and prior terms do not involve the data.
    """
    sizes = _feature_sizes(feature_sizes)
    a = _check_a0(a0, sizes)
    return float(np.sum(np.log1p(-(sizes - 1) * a) - np.log(a)))


def ops_temperature(epsilon: float, feature_sizes: Sequence[int], a0: Any) -> float:
    """T = max(1, 2Δ/ε) that makes one draw of the tempered posterior ε-DP (Eq. 10)."""
    eps = check_epsilon(epsilon)
    return max(1.0, 2.0 * ops_log_likelihood_sensitivity(feature_sizes, a0) / eps)
