"""Optimal unary encoding (OUE): epsilon-local DP frequency reports for categories in
{0, ..., d-1}; without a seed, exact Bernoulli bits.

References
----------
.. [1] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private
   Protocols for Frequency Estimation", USENIX Security 2017, Section 4.4.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import expit

from ..._validation import SeedLike, check_array, check_int
from .. import noise as _noise
from ._base import Mechanism, _Plan

__all__ = ["OptimalUnaryEncoding"]

_LOG_HALF = -math.log(2.0)


class OptimalUnaryEncoding(Mechanism):
    """Optimal unary encoding (OUE) for categorical data in {0, ..., d-1}.

    Each user's category is one-hot encoded; the true bit is reported as 1
    with probability p = 1/2 and every other bit as 1 with probability
    q = 1/(e^eps + 1), independently. epsilon-LDP.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    d : int
        Number of categories, >= 2.
    seed : int, numpy.random.Generator or None, optional

    References
    ----------
    .. [1] Wang, Blocki, Li & Jha (2017), Section 4.4 (OUE: p = 1/2,
       q = 1/(e^eps + 1)) and Eq. (4)/(5) (unary encoding is eps-LDP with
       eps = ln(p(1-q) / ((1-p)q))).
    """

    name = "oue"

    def __init__(self, *, epsilon: float, d: int, seed: SeedLike = None) -> None:
        super().__init__(epsilon=epsilon, seed=seed)
        self._d = check_int(d, "d", minimum=2)
        self._q = float(expit(-self._epsilon))
        self._log_q = -float(np.logaddexp(0.0, self._epsilon))
        self._log_1mq = -float(np.logaddexp(0.0, -self._epsilon))

    @property
    def d(self) -> int:
        """Number of categories."""
        return self._d

    @property
    def p(self) -> float:
        """Probability that the true category's bit is 1 (= 1/2)."""
        return 0.5

    @property
    def q(self) -> float:
        """Probability that any other bit is 1 (= 1/(e^eps + 1))."""
        return self._q

    def _repr_params(self) -> dict[str, Any]:
        return {"epsilon": self._epsilon, "d": self._d}

    def _check_value(self, value: Any) -> np.ndarray:
        return check_array(value, "value", integer=True, bounds=(0, self._d - 1))

    def _check_output(self, output: Any) -> np.ndarray:
        out = check_array(output, "output", integer=True, bounds=(0, 1))
        if out.ndim == 0 or out.shape[-1] != self._d:
            raise ValueError(f"output must have last dimension d={self._d}, got shape {out.shape}")
        return out

    def _one_hot(self, x: np.ndarray) -> np.ndarray:
        return x[..., None] == np.arange(self._d)

    def _sample(self, x: np.ndarray) -> np.ndarray:
        threshold = np.where(self._one_hot(x), 0.5, self._q)
        return (self._rng.random(threshold.shape) < threshold).astype(np.int64)

    _seeded_noise = "float64 uniform threshold (numpy)"
    _secure_noise = (
        "exact bits: true category Bernoulli(1/2), others Bernoulli(1/(1+e^eps)) "
        "(integer arithmetic, eps as its exact binary value)"
    )

    def _secure_sample(self, x: np.ndarray, plan: _Plan) -> np.ndarray:
        hot = self._one_hot(x)
        eps = Fraction(self._epsilon)
        src = self._source
        flat = hot.reshape(-1)
        out = np.fromiter(
            (src.randbelow(2) if h else int(_noise.bernoulli_logistic(eps, src)) for h in flat),
            dtype=np.int64,
            count=flat.size,
        )
        return out.reshape(hot.shape)

    def _log_prob(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        other = np.where(output == 1, self._log_q, self._log_1mq)
        return np.where(self._one_hot(x), _LOG_HALF, other).sum(axis=-1)

    def _details(self) -> dict[str, Any]:
        return {"d": self._d, "p": 0.5, "q": self._q, "local": True}

    def estimate_counts(self, reports: Any) -> np.ndarray:
        """Unbiased estimates of the category counts from an n x d report matrix.

        ``c_hat_j = (sum_i y_ij - n q) / (p - q)`` (Wang et al. 2017,
        Eq. (2)). Post-processing: costs no privacy.
        """
        y = check_array(reports, "reports", ndim=2, shape=(None, self._d), integer=True, bounds=(0, 1))
        n = y.shape[0]
        gap = 0.5 * math.tanh(self._epsilon / 2.0)  # p - q, accurate for tiny epsilon
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            out = (y.sum(axis=0) - n * self._q) / gap if gap > 0 else np.full(self._d, np.inf)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"epsilon={self._epsilon!r} is too small to estimate counts (p - q underflows)")
        return out
