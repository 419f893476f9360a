"""Binary randomised response (epsilon-local DP on bits); without a seed, exact
Bernoulli(1/(1+e^eps)) flips.

References
----------
.. [1] S. L. Warner, "Randomized Response: A Survey Technique for
   Eliminating Evasive Answer Bias", JASA 60(309), 1965.
.. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", 2014, Section 3.2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import expit

from ..._validation import SeedLike, check_array
from .. import noise as _noise
from ._base import Mechanism, _Plan

__all__ = ["RandomizedResponse"]


class RandomizedResponse(Mechanism):
    """Binary randomised response: report the true bit w.p. e^eps/(1+e^eps).

    epsilon-(local)-DP: for any output, the probability ratio between the
    two inputs is exactly e^epsilon.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    seed : int, numpy.random.Generator or None, optional

    References
    ----------
    .. [1] S. L. Warner, "Randomized Response: A Survey Technique for
       Eliminating Evasive Answer Bias", JASA 60(309), 1965.
    .. [2] Dwork & Roth (2014), Section 3.2 (randomised response); keep
       probability e^eps / (1 + e^eps) gives eps-DP.
    """

    name = "randomized_response"

    def __init__(self, *, epsilon: float, seed: SeedLike = None) -> None:
        super().__init__(epsilon=epsilon, seed=seed)
        self._p_keep = float(expit(self._epsilon))
        # log p_keep = -log(1 + e^-eps); log p_flip = log p_keep - eps.
        self._log_keep = -float(np.logaddexp(0.0, -self._epsilon))
        self._log_flip = self._log_keep - self._epsilon

    @property
    def p_keep(self) -> float:
        """Probability e^eps / (1 + e^eps) of reporting the true bit."""
        return self._p_keep

    def _check_value(self, value: Any) -> np.ndarray:
        return check_array(value, "value", integer=True, bounds=(0, 1))

    def _check_output(self, output: Any) -> np.ndarray:
        return check_array(output, "output", integer=True, bounds=(0, 1))

    def _sample(self, x: np.ndarray) -> np.ndarray:
        flip = self._rng.random(x.shape) >= self._p_keep
        return np.where(flip, 1 - x, x).astype(np.int64)

    _seeded_noise = "float64 uniform threshold (numpy)"
    _secure_noise = "exact Bernoulli(1/(1+e^eps)) flips (integer arithmetic, eps as its exact binary value)"

    def _secure_sample(self, x: np.ndarray, plan: _Plan) -> np.ndarray:
        flip = _noise.sample_bernoulli_logistic(self._epsilon, x.shape, rng=self._source)
        return np.where(flip == 1, 1 - x, x).astype(np.int64)

    def _log_prob(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.where(output == x, self._log_keep, self._log_flip)

    def _details(self) -> dict[str, Any]:
        return {"p_keep": self._p_keep, "local": True}

    def estimate_mean(self, reports: Any) -> float:
        """Unbiased estimate of the fraction of true ones from reported bits.

        ``E[mean(reports)] = (1 - p) + (2p - 1) mu``, so
        ``mu_hat = (mean(reports) - (1 - p)) / (2p - 1)`` (may fall outside
        [0, 1]). Post-processing: costs no privacy.
        """
        y = check_array(reports, "reports", integer=True, bounds=(0, 1))
        if y.size == 0:
            raise ValueError("reports must contain at least one report")
        gap = math.tanh(self._epsilon / 2.0)  # 2p - 1, accurate for tiny epsilon
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            out = (y.mean() - float(expit(-self._epsilon))) / gap if gap > 0 else math.inf
        if not math.isfinite(out):
            raise ValueError(f"epsilon={self._epsilon!r} is too small to estimate the mean (2p - 1 underflows)")
        return float(out)
