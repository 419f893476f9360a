"""Additive noise, ``output = value + noise`` on finite reals: the shared base of the Laplace
(:mod:`.laplace`) and Gaussian (:mod:`.gaussian`) mechanisms, with the output check and the
secure path on a power-of-two grid (:mod:`pystanprivacy.privacy.noise`). No finite value is
clamped: every one has an exact grid index, and only a noisy value beyond the float64 range
is returned as the largest float64 (post-processing).

References
----------
.. [1] I. Mironov, "On Significance of the Least Significant Bits for
   Differential Privacy", CCS 2012 (why the secure path uses a grid).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..._validation import check_array, declares_integer
from .. import noise as _noise
from ._base import _MAX_MAGNITUDE, Mechanism, _Plan

#: largest noise scale of a secure-path plan (a coarsened grid can add a little to the
#: continuous scale); keeps the recorded scale and the output range finite
_MAX_PLAN_SCALE = 2.0**1010


def _check_scale(scale: float, what: str, given: str) -> float:
    """A noise scale computed from public arguments: finite, > 0, <= 2**1000.

    ``given`` names the public arguments it came from with their values (e.g.
    ``"epsilon=1.0 and sensitivity=2.0"``); the ``ValueError`` names them, not only ``what``.
    """
    if not (math.isfinite(scale) and 0.0 < scale <= _MAX_MAGNITUDE):
        raise ValueError(
            f"{given} give {what} = {scale!r}, outside (0, 2**1000]: they are out of range "
            "(allowed: any whose noise scale is finite, > 0 and <= 2**1000)"
        )
    return scale


def _check_magnitude(arr: np.ndarray, name: str) -> np.ndarray:
    """Refuse outputs (public released values given to ``log_prob``) beyond 2**1000."""
    n_big = int(np.count_nonzero(np.abs(arr) > _MAX_MAGNITUDE))
    if n_big:
        raise ValueError(
            f"{name} contains {n_big} value(s) larger than 2**1000 in magnitude; noise cannot be "
            "added to them without overflow"
        )
    return arr


def _float_or_inf(value: Fraction) -> float:
    """``float(value)``, ``inf`` where it is too large for float64 (instead of OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


class _AdditiveNoise(Mechanism):
    """Shared logic for ``output = value + noise`` on real arrays.

    A subclass sets ``self._scale`` in ``__init__`` (checked with :func:`_check_scale`) and
    ``_discrete_noise``, the exact integer sampler of the secure path, and implements
    ``_noise``, ``_log_noise_density`` and ``_plan``.
    """

    requires_sensitivity = True
    _scale: float
    #: the secure path's exact integer sampler, called as ``sampler(plan.param, source)``
    _discrete_noise: ClassVar[Callable[[Fraction, Any], int]]
    #: its vectorised twin (the same distribution), called as ``sampler(plan.param, n, source)``
    _vector_noise: ClassVar[Callable[[Fraction, int, Any], np.ndarray]]

    @property
    def scale(self) -> float:
        """Scale of the continuous (seeded) noise: the Laplace ``b = sensitivity / epsilon``,
        the Gaussians' standard deviation sigma. A release without a seed records the scale
        of the discrete noise it actually added (``release.record.scale``)."""
        return self._scale

    def _check_value(self, value: Any) -> np.ndarray:
        # finite reals are the domain (NaN/inf refused by check_array); no finite value is
        # refused or clamped (a data-dependent refusal would distinguish neighbours)
        arr = check_array(value, "value", kinds="iuf")
        # declared integers keep their dtype: a float64 copy would round values beyond 2^53
        # (neighbours 2^53 + 1 and 2^53 + 2 would differ by 2 steps, twice the sensitivity)
        return np.array(value, copy=True) if declares_integer(value) else arr

    def _check_output(self, output: Any) -> np.ndarray:
        return _check_magnitude(check_array(output, "output", kinds="iuf"), "output")

    def _range_details(self) -> dict[str, Any]:
        # every finite float64 is released near itself (the secure plan adds its exact range)
        return {"representable_range": [-_noise.FLOAT_MAX, _noise.FLOAT_MAX]}

    def _sample(self, x: np.ndarray) -> np.ndarray:
        # the noise is finite (scale <= 2**1000); a sum beyond float64 becomes the largest
        # float64 of its sign (post-processing of the noisy value)
        with np.errstate(over="ignore"):
            out = x + self._noise(x.shape)
        return np.clip(out, -_noise.FLOAT_MAX, _noise.FLOAT_MAX)

    def _log_prob(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        return self._log_noise_density(output - x)

    def _secure_sample(self, x: np.ndarray, plan: _Plan) -> np.ndarray:
        # exact grid indices and noisy sums (int64 where they cannot overflow, Python ints
        # beyond: no clamp, no overflow), then the float64 nearest each noisy value
        # (post-processing of m + K): nothing here can raise
        return _noise.noisy_grid_release(x, plan.grid_exponent, self._draw(plan.param))

    def _draw(self, param: Fraction) -> Callable[[], int]:
        """A zero-argument callable returning one exact integer noise draw; its ``many(n)``
        (:class:`~pystanprivacy.privacy.noise.NoiseDraw`) draws ``n`` at once from the CSPRNG."""
        return _noise.NoiseDraw(self._discrete_noise, self._vector_noise, param, self._source)

    def _grid_details(self, k: int, c: int) -> dict[str, Any]:
        # every finite value is represented; within 2^52 steps it comes back on the grid
        exact = math.ldexp(1.0, 52 + k) if 52 + k <= 1023 else _noise.FLOAT_MAX
        return {
            "grid": math.ldexp(1.0, k),
            "grid_exponent": k,
            "changed_coordinates": c,
            "representable_range": [-_noise.FLOAT_MAX, _noise.FLOAT_MAX],
            "exact_range": [-exact, exact],
            "exact_range_noise_bound": _noise.OVERFLOW_PROBABILITY,
        }

    def _check_plan_scale(self, scale: float) -> float:
        if not (math.isfinite(scale) and scale <= _MAX_PLAN_SCALE):
            raise ValueError(
                f"the discrete noise scale for epsilon={self._epsilon!r}, sensitivity={self._sensitivity!r} "
                f"is {scale!r}, above 2**1010: epsilon and sensitivity are out of range"
            )
        return scale

    @staticmethod
    def _check_grid_exponent(k: int, what: str) -> int:
        if k > 1020:  # the grid 2^k itself would leave no float64 range
            raise ValueError(f"{what} are out of range: they need a noise grid 2^{k} beyond 2^1020")
        return k

    @abc.abstractmethod
    def _noise(self, shape: tuple[int, ...]) -> np.ndarray: ...

    @abc.abstractmethod
    def _log_noise_density(self, z: np.ndarray) -> np.ndarray: ...
