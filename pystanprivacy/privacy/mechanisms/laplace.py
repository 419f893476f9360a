"""The Laplace mechanism (pure epsilon-DP for an L1 sensitivity); without a seed, exact
discrete Laplace noise on a power-of-two grid.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", 2014, Definition 3.3 and Theorem 3.6.
.. [2] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
   Differential Privacy", NeurIPS 2020 (the exact discrete Laplace sampler).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..._validation import SeedLike
from .. import noise as _noise
from ..noise import discrete_laplace, discrete_laplace_array
from ._additive import _AdditiveNoise, _check_scale, _float_or_inf
from ._base import _Plan

__all__ = ["Laplace"]


class Laplace(_AdditiveNoise):
    """Laplace mechanism: ``value + Laplace(0, b)``, ``b = sensitivity / epsilon``.

    epsilon-DP for queries with L1 sensitivity ``sensitivity``.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float
        L1 sensitivity, finite, > 0.
    seed : int, numpy.random.Generator or None, optional
        Reproducibility only, not security.

    References
    ----------
    .. [1] Dwork & Roth (2014), Definition 3.3 and Theorem 3.6 (the Laplace
       mechanism with scale Delta_1 f / epsilon is epsilon-DP).
    """

    name = "laplace"
    sensitivity_norm = "l1"

    def __init__(self, *, epsilon: float, sensitivity: float, seed: SeedLike = None) -> None:
        super().__init__(epsilon=epsilon, delta=0.0, sensitivity=sensitivity, seed=seed)
        self._scale = _check_scale(
            self._sensitivity / self._epsilon,
            "the Laplace scale sensitivity / epsilon",
            f"epsilon={self._epsilon!r} and sensitivity={self._sensitivity!r}",
        )

    def _noise(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng.laplace(0.0, self._scale, size=shape)

    def _log_noise_density(self, z: np.ndarray) -> np.ndarray:
        return -math.log(2.0 * self._scale) - np.abs(z) / self._scale

    _secure_noise = "discrete_laplace (exact sampler; grid set per release)"
    _discrete_noise = staticmethod(discrete_laplace)
    _vector_noise = staticmethod(discrete_laplace_array)

    def _plan(self, x: np.ndarray, *, integer: bool, changed: int | None) -> _Plan:
        """Integer input: discrete Laplace on the integers, ``t = floor(sensitivity)/eps``.
        Real input: grid ``2^k`` (:func:`~pystanprivacy.privacy.noise.grid_exponent`), integer
        sensitivity ``floor(sensitivity / 2^k) + c`` (``c`` changed coordinates, each
        rounded by at most half a step), ``t`` = that / eps; scale ``t 2^k``.

        Range (public inputs only, before any charge): ``t`` must be at most
        :data:`~pystanprivacy.privacy.noise.MAX_LAPLACE_SCALE_UNITS` (about 1e14), so that
        ``P(|K| > 2^52) <= 2 exp(-2^52/t) <= 2^-64`` per coordinate. A wider noise moves
        to a coarser grid (integer input then counts as real input); ``ValueError``
        naming epsilon when even the coarsest grid needs ``t >= c/eps`` above the limit.
        The input is never inspected here: its values are neither refused nor clamped;
        integer input is an ndarray of integer dtype (a declaration, never the values)."""
        c = changed if changed is not None else max(1, int(x.size))
        eps = Fraction(self._epsilon)
        t_max = _noise.MAX_LAPLACE_SCALE_UNITS
        if integer:
            k, d_int = 0, max(1, math.floor(self._sensitivity))
            t = Fraction(d_int) / eps
        if not integer or t > t_max:
            integer = False  # too wide for the integers: real input on a coarser grid
            if Fraction(c) / eps > t_max:  # every grid needs t >= c / eps
                raise ValueError(
                    f"epsilon={self._epsilon!r} is too small for this release: with {c} changed "
                    f"coordinate(s) the discrete Laplace noise (scale >= {c}/epsilon grid steps) would "
                    f"exceed the exactly representable 2^52 grid steps with probability above 2^-64; "
                    f"epsilon must be >= {float(Fraction(c) / t_max):.6g} here"
                )
            sens = Fraction(self._sensitivity)
            k = _noise.grid_exponent(self._sensitivity, c)
            while True:  # coarsen (t decreases in k) until the noise fits; ends since c/eps <= t_max
                d_int = math.floor(sens / Fraction(2) ** k) + c
                t = Fraction(d_int) / eps
                if t <= t_max:
                    break
                k += 1
        self._check_grid_exponent(k, f"epsilon={self._epsilon!r} and sensitivity={self._sensitivity!r}")
        scale = self._check_plan_scale(_float_or_inf(t * Fraction(2) ** k))
        details = {
            "noise": f"discrete_laplace on grid 2^{k}" + (" (integer input)" if integer else ""),
            **self._grid_details(k, c),
            "integer_sensitivity": d_int,
            "scale_grid_units": float(t),
        }
        return _Plan(scale=scale, details=details, grid_exponent=k, param=t)
