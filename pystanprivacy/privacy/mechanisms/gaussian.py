"""The Gaussian mechanisms ((epsilon, delta)-DP for an L2 sensitivity): the classical one
(:class:`Gaussian`, epsilon < 1) and the analytic one (:class:`AnalyticGaussian`, any
epsilon, with its calibration :func:`analytic_gaussian_sigma`); without a seed, exact
discrete Gaussian noise on a power-of-two grid, its sigma re-calibrated for the discrete
mechanism.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", 2014, Theorem A.1.
.. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
   Differential Privacy: Analytical Calibration and Optimal Denoising",
   ICML 2018.
.. [3] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
   Differential Privacy", NeurIPS 2020, Theorems 7 and 14, Corollary 13.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import log_ndtr

from ..._validation import SeedLike, check_delta, check_epsilon, check_positive
from .. import noise as _noise
from ..noise import discrete_gaussian, discrete_gaussian_array
from ._additive import _AdditiveNoise, _check_scale, _float_or_inf
from ._base import Mechanism, _Plan

__all__ = ["Gaussian", "AnalyticGaussian", "analytic_gaussian_sigma"]


class Gaussian(_AdditiveNoise):
    """Classical Gaussian mechanism, ``sigma = sqrt(2 ln(1.25/delta)) Delta / epsilon``.

    (epsilon, delta)-DP for queries with L2 sensitivity ``sensitivity``,
    **only for epsilon < 1**; use :class:`AnalyticGaussian` otherwise (it is
    also tighter for every epsilon).

    Parameters
    ----------
    epsilon : float
        In (0, 1).
    delta : float
        In (0, 1).
    sensitivity : float
        L2 sensitivity, finite, > 0.
    seed : int, numpy.random.Generator or None, optional

    References
    ----------
    .. [1] Dwork & Roth (2014), Theorem A.1: for epsilon in (0, 1) and
       c^2 > 2 ln(1.25/delta), sigma >= c Delta_2 f / epsilon is
       (epsilon, delta)-DP.
    """

    name = "gaussian"
    sensitivity_norm = "l2"

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float, seed: SeedLike = None) -> None:
        eps = check_epsilon(epsilon)
        if eps >= 1.0:
            raise ValueError(
                f"epsilon must be < 1 for the classical Gaussian mechanism, got {epsilon!r}; "
                "use AnalyticGaussian (Balle & Wang 2018) for epsilon >= 1"
            )
        check_delta(delta, positive=True)
        super().__init__(epsilon=eps, delta=delta, sensitivity=sensitivity, seed=seed)
        # ln(1.25/delta) as ln(1.25) - ln(delta): 1.25/delta overflows for delta < 1.25/FLOAT_MAX
        # (a subnormal delta), its logarithm (<= 745) never does
        c = math.sqrt(2.0 * (math.log(1.25) - math.log(self._delta)))
        self._scale = _check_scale(
            c * self._sensitivity / self._epsilon,
            "the Gaussian noise sigma",
            f"epsilon={self._epsilon!r}, delta={self._delta!r} and sensitivity={self._sensitivity!r}",
        )

    def _noise(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng.normal(0.0, self._scale, size=shape)

    def _log_noise_density(self, z: np.ndarray) -> np.ndarray:
        return -0.5 * math.log(2.0 * math.pi) - math.log(self._scale) - 0.5 * (z / self._scale) ** 2

    def _details(self) -> dict[str, Any]:
        return {"calibration": "classical"}

    _secure_noise = "discrete_gaussian (exact sampler; grid and sigma set per release)"
    _discrete_noise = staticmethod(discrete_gaussian)
    _vector_noise = staticmethod(discrete_gaussian_array)
    _MIN_SIGMA_UNITS = 128.0

    def _sensitivity_units(self, k: int, c: int, integer: bool) -> float:
        """The sensitivity in grid units on grid ``2^k``: integer input (``k <= 0``, on the
        grid) none of the rounding allowance; real input ``floor(sens/2^k) + 1`` (c = 1, an
        int) or ``sens/2^k + sqrt(c)`` rounded up (L2, c > 1)."""
        sens = self._sensitivity
        if integer:
            return (max(1, math.floor(sens)) if c == 1 else sens) * 2.0**-k
        steps = Fraction(sens) / Fraction(2) ** k
        return (
            math.floor(steps) + 1
            if c == 1
            else math.nextafter(math.nextafter(float(steps) + math.sqrt(c), math.inf), math.inf)
        )

    def _plan(self, x: np.ndarray, *, integer: bool, changed: int | None) -> _Plan:
        """Discrete Gaussian on a grid ``2^k`` with sigma >= this mechanism's (continuous)
        sigma, increased until the discrete mechanism meets delta: one changed coordinate,
        integer sensitivity ``D`` and the exact delta of CKS 2020 Theorem 7; ``c > 1``
        changed coordinates, L2 sensitivity ``sensitivity/2^k + sqrt(c)`` grid units and
        zCDP (Theorem 14, Corollary 13). Integer input is exactly on every grid ``2^k``,
        ``k <= 0`` (no rounding allowance); the grid keeps sigma >= 128 steps.

        Range (public inputs only, before any charge): sigma must be at most
        :data:`~pystanprivacy.privacy.noise.MAX_GAUSSIAN_SIGMA_UNITS` grid steps (about 4.7e14),
        so that ``P(|K| > 2^52) <= 2 exp(-2^104/(2 sigma^2)) <= 2^-64`` per coordinate (the
        discrete Gaussian is sub-Gaussian, CKS 2020 Corollary 9). A wider noise moves to a
        coarser grid; ``ValueError`` naming epsilon when no grid is coarse enough. The input
        is never inspected here: its values are neither refused nor clamped."""
        c = changed if changed is not None else max(1, int(x.size))
        sens, sigma = self._sensitivity, self._scale
        s_max = _noise.MAX_GAUSSIAN_SIGMA_UNITS
        k_sigma = math.frexp(sigma / self._MIN_SIGMA_UNITS)[1] - 1  # 2^k <= sigma/128
        k = min(0, k_sigma) if integer else min(_noise.grid_exponent(sens, c), k_sigma)
        too_small = ValueError(
            f"epsilon={self._epsilon!r} is too small for this release (delta={self._delta!r}, "
            f"{c} changed coordinate(s)): the discrete Gaussian sigma would exceed {s_max:.4g} grid "
            f"steps on every grid, so the noise would pass 2^52 grid steps with probability above "
            f"2^-64; increase epsilon (or delta)"
        )
        # the least sigma in grid units of any grid: a coarse grid keeps a sensitivity of 1
        # (c = 1) or sqrt(c) (c > 1) grid units; integer input on the integers has sens
        least = sigma * (1.0 if c == 1 else math.sqrt(c)) / sens
        if integer:
            least = min(least, sigma * (max(1, math.floor(sens)) if c == 1 else sens) / sens)
        if least > s_max:
            raise too_small
        k_last = math.frexp(sens)[1] + 64  # beyond it sens / 2^k < 2^-63: the allowance is all
        while True:
            on_integers = integer and k <= 0
            d_units = self._sensitivity_units(k, c, on_integers)
            # sigma in grid units, scaled by D_units / (sens / 2^k); rounded up so that scale >= sigma
            start = math.nextafter(sigma * float(d_units) / sens, math.inf)
            if start <= s_max:
                sigma_u, delta_bound = _noise.discrete_gaussian_sigma(
                    self._epsilon, self._delta, d_units, changed=max(1, c), start=start
                )
                if sigma_u <= s_max:
                    break
                start = sigma_u
            if k >= k_last:
                raise too_small
            # coarsen: sigma_u roughly halves per step of k, so jump by the excess bits
            excess = math.log2(start / s_max) if math.isfinite(start) else 64.0
            k = min(k_last, k + max(1, math.floor(excess)))
        self._check_grid_exponent(
            k, f"epsilon={self._epsilon!r}, delta={self._delta!r} and sensitivity={self._sensitivity!r}"
        )
        scale = self._check_plan_scale(_float_or_inf(Fraction(sigma_u) * Fraction(2) ** k))
        details = {
            "noise": f"discrete_gaussian on grid 2^{k}" + (" (integer input)" if on_integers else ""),
            **self._grid_details(k, c),
            "sigma_grid_units": sigma_u,
            "delta_bound": delta_bound,
            ("integer_sensitivity" if c == 1 else "l2_sensitivity_grid_units"): d_units,
            "discrete_calibration": (
                "exact delta, Canonne-Kamath-Steinke 2020 Theorem 7"
                if c == 1
                else "rho-zCDP (CKS 2020 Theorem 14) to (eps, delta) (Corollary 13)"
            ),
        }
        return _Plan(scale=scale, details=details, grid_exponent=k, param=Fraction(sigma_u) ** 2)


# --------------------------------------------------------------------------
# Analytic Gaussian calibration
# --------------------------------------------------------------------------


def _log1mexp(x: float) -> float:
    """``log(1 - exp(x))`` for ``x < 0``, accurately (Maechler 2012)."""
    if x >= 0.0:
        return -math.inf
    if x > -math.log(2.0):
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def _log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """log delta(sigma) for the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    delta(sigma) = Phi(D/(2s) - e s/D) - exp(e) Phi(-D/(2s) - e s/D),
    evaluated as log Phi(a) + log(1 - exp(e + log Phi(b) - log Phi(a))).
    Returns ``-inf`` where delta underflows or rounds to <= 0.
    """
    u = sigma / sensitivity
    a = 0.5 / u - epsilon * u
    b = -0.5 / u - epsilon * u
    log_pa = float(log_ndtr(a))
    log_pb = epsilon + float(log_ndtr(b))
    return log_pa + _log1mexp(log_pb - log_pa)


# generous per-term relative error of log_ndtr etc. (a Python float: a division by zero below
# raises ZeroDivisionError, refused by analytic_gaussian_sigma, instead of a NumPy NaN)
_ROUNDING = float(64.0 * np.finfo(float).eps)


def _log_gaussian_delta_upper(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Rigorous-in-practice upper bound on log delta(sigma) under rounding.

    Inflates :func:`_log_gaussian_delta` by the propagated error of its
    terms: an absolute error ``err`` in ``x = log(e^eps Phi(b)) - log Phi(a)``
    changes ``log(1 - e^x)`` by at most ``log1p(err / expm1(-x))``, and
    ``log Phi(a)`` itself carries a relative error ``err_a``. This matters
    for small epsilon, where ``x`` is close to 0 (cancellation).
    """
    u = sigma / sensitivity
    a = 0.5 / u - epsilon * u
    b = -0.5 / u - epsilon * u
    log_pa = float(log_ndtr(a))
    log_pb = epsilon + float(log_ndtr(b))
    x = log_pb - log_pa
    err_a = _ROUNDING * (abs(log_pa) + 1e-300)
    err_x = _ROUNDING * (abs(log_pa) + abs(log_pb) + epsilon) + 1e-300
    if x >= 0.0:
        return log_pa + err_a  # delta <= Phi(a): nothing better is certain
    rel = err_x / math.expm1(-x)
    if rel >= 1.0:
        return log_pa + err_a
    return log_pa + _log1mexp(x) + err_a + math.log1p(rel)


def _bracket_log_sigma(f, t0: float) -> tuple[float, float]:
    """Find ``lo < hi`` in log-sigma with ``f(lo) > 0 >= f(hi)``."""
    lo = hi = t0
    step = math.log(2.0)
    for _ in range(2000):
        if f(lo) > 0:
            break
        lo -= step
    else:  # pragma: no cover - needs sigma < 2**-2000
        raise ArithmeticError("could not bracket the analytic Gaussian sigma from below")
    for _ in range(2000):
        if f(hi) <= 0:
            break
        hi += step
    else:  # pragma: no cover
        raise ArithmeticError("could not bracket the analytic Gaussian sigma from above")
    return lo, hi


def _bisect_log_sigma(f, lo: float, hi: float) -> float:
    """Bisection down to adjacent floats; returns the upper end (f <= 0)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP.

    Solves, for sigma, the exact condition of Balle & Wang (2018, Theorem 8)

    .. math::
        \\Phi\\left(\\frac{\\Delta}{2\\sigma} - \\frac{\\epsilon\\sigma}{\\Delta}\\right)
        - e^{\\epsilon}\\,\\Phi\\left(-\\frac{\\Delta}{2\\sigma}
        - \\frac{\\epsilon\\sigma}{\\Delta}\\right) \\le \\delta ,

    whose left side decreases in sigma. The condition is evaluated in log
    space (``scipy.special.log_ndtr`` and a stable ``log(1 - exp(.))``) so
    that it is accurate for tiny delta and large epsilon; the root is found
    by bisection in ``log sigma`` to float precision. Finally sigma is
    increased by tiny, doubling relative steps until an upper bound on
    delta(sigma) that includes the propagated rounding error of the
    log-space evaluation is <= ``delta``, so the returned sigma never gives
    more than ``delta`` (the margin costs < 1e-8 relative in sigma on the
    tested range).

    Parameters
    ----------
    epsilon : float
        Finite, > 0 (tested on [1e-3, 50]).
    delta : float
        In (0, 1) (tested on [1e-12, 0.5]).
    sensitivity : float
        L2 sensitivity, finite, > 0.

    Returns
    -------
    float
        sigma, proportional to ``sensitivity``.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018, Theorem 8 (the condition above) and Algorithm 1 (the
       analytic Gaussian mechanism, which computes the same sigma via a
       change of variables and binary search).
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, positive=True)
    sens = check_positive(sensitivity, "sensitivity")
    target = math.log(dlt)

    def f(t: float) -> float:
        return _log_gaussian_delta(math.exp(t), eps, 1.0) - target

    try:
        t0 = math.log(math.sqrt(2.0 * math.log(1.25 / dlt)) / eps)
        lo, hi = _bracket_log_sigma(f, t0)
        u = math.exp(_bisect_log_sigma(f, lo, hi))
        # Check and bump: the rounding-aware upper bound on delta must be <= delta.
        sigma = u * sens
        step = 1e-15
        while not _log_gaussian_delta_upper(sigma, eps, sens) <= target:  # NaN never meets delta
            sigma *= 1.0 + step
            step *= 2.0
            if not math.isfinite(sigma):
                raise OverflowError
    except (OverflowError, ArithmeticError, ValueError):
        raise ValueError(
            f"the analytic Gaussian sigma cannot be computed for epsilon={eps!r}, delta={dlt!r}, "
            f"sensitivity={sens!r} (outside the supported range)"
        ) from None
    return sigma


class AnalyticGaussian(Gaussian):
    """Analytic Gaussian mechanism (Balle & Wang 2018), any epsilon > 0.

    sigma is the smallest value satisfying the exact (epsilon, delta)
    condition; see :func:`analytic_gaussian_sigma`.

    Parameters
    ----------
    epsilon : float
        Finite, > 0 (any size, unlike the classical :class:`Gaussian`).
    delta, sensitivity, seed
        As for :class:`Gaussian`.

    References
    ----------
    .. [1] Balle & Wang (2018), Theorem 8 and Algorithm 1.
    """

    name = "analytic_gaussian"

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float, seed: SeedLike = None) -> None:
        check_delta(delta, positive=True)
        Mechanism.__init__(self, epsilon=epsilon, delta=delta, sensitivity=sensitivity, seed=seed)
        self._scale = _check_scale(
            analytic_gaussian_sigma(self._epsilon, self._delta, self._sensitivity),
            "the analytic Gaussian noise sigma",
            f"epsilon={self._epsilon!r}, delta={self._delta!r} and sensitivity={self._sensitivity!r}",
        )

    def _details(self) -> dict[str, Any]:
        return {"calibration": "analytic"}
