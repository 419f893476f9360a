"""Differential-privacy mechanisms, clipping and projections.

Every mechanism is a small class with keyword-only arguments:

* ``randomise(value)`` -- privatise a scalar or an array (independent noise
  per element);
* ``log_prob(output, input)`` -- exact log density / log probability of an
  output given an input (elementwise, float64);
* ``record(**context)`` -- a :class:`~pystanprivacy.privacy.records.PrivacyRecord`
  describing the mechanism;
* ``release(value, *, accountant=None, ...)`` -- validate, charge an
  accountant, privatise, and return a :class:`~pystanprivacy.privacy.records.Release`.

Randomness and noise
--------------------
* ``seed=None`` (the default, for real releases): **floating-point-safe noise
  and cryptographic randomness** (:mod:`pystanprivacy.privacy.noise`). Integer inputs
  (integer dtype) get exact discrete Laplace / discrete Gaussian noise on the
  integers; real inputs are rounded exactly to a power-of-two grid ``2^k``
  first (the rounding is charged to the sensitivity) and the output is
  ``(m + K) 2^k`` in float64. The Gaussian mechanisms' sigma is re-calibrated
  for the discrete Gaussian (exact delta, Canonne-Kamath-Steinke 2020,
  Theorem 7, for one changed coordinate; zCDP otherwise). Randomised response
  and OUE flip bits with exact Bernoulli(1/(1+e^eps)) draws. The record's
  ``scale`` is the scale of the noise actually added and ``details`` state
  ``noise``, ``randomness``, ``secure``, ``grid``.
* Data domain and range: the additive mechanisms take **finite reals** (NaN,
  ±inf and non-numbers are refused as not being data). No finite value is
  refused: a refusal that depends on the private values would tell
  neighbouring inputs apart without any noise. Each coordinate is instead
  clamped to the public ``details["representable_range"]`` (``±2^1000`` on the
  seeded path; ``±2^52`` grid steps, at most ``±2^1000``, on the secure path):
  per-coordinate clamping to a data-independent interval is a contraction, so
  the L1/L2 sensitivity and the guarantee are unchanged, and values in range
  are released bit-identically. Parameters whose noise could overflow the
  output are refused from the public inputs alone, before anything is charged
  (:mod:`pystanprivacy.privacy.noise`, "Range"); after the charge nothing can raise.
* An empty input is refused before anything is charged (its emptiness is a
  public property of its shape).
* ``seed`` given (an int or ``numpy.random.Generator``): the continuous NumPy
  samplers, **reproducible, not secure** (noise from a known seed can be
  regenerated; float noise leaks through its low-order bits, Mironov 2012).
  For research and simulation; marked in the record and warned about once
  (:class:`~pystanprivacy.privacy.records.ReproducibleNotSecureWarning`).

``log_prob`` is the density of the continuous (seeded) mechanism; see
:mod:`pystanprivacy.privacy.noise` for how far the discrete one is from it.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", 2014.
.. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
   Differential Privacy: Analytical Calibration and Optimal Denoising",
   ICML 2018.
.. [3] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private
   Protocols for Frequency Estimation", USENIX Security 2017.
.. [4] I. Mironov, "On Significance of the Least Significant Bits for
   Differential Privacy", CCS 2012.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit, log_ndtr

from ..._validation import (
    SeedLike,
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_label,
    check_positive,
    check_random_state,
)
from .. import noise as _noise
from ..records import (
    SECURE_RANDOMNESS,
    SEEDED_RANDOMNESS,
    PrivacyAccountant,
    PrivacyRecord,
    Release,
    warn_reproducible_not_secure,
)

__all__ = [
    "Mechanism",
    "Laplace",
    "Gaussian",
    "AnalyticGaussian",
    "analytic_gaussian_sigma",
    "RandomizedResponse",
    "OptimalUnaryEncoding",
    "Clip",
    "ClipL2",
    "project_nonnegative",
    "project_simplex",
    "row_norms",
]

_LOG_HALF = -math.log(2.0)

#: largest noise scale the additive mechanisms accept and the interval every value is clamped
#: to: with both at most 2**1000, value + noise overflows float64 with probability < exp(-10**7)
_MAX_MAGNITUDE = 2.0**1000

#: largest noise scale of a secure-path plan (a coarsened grid can add a little to the
#: continuous scale); keeps the recorded scale and the output range finite
_MAX_PLAN_SCALE = 2.0**1010


def _check_scale(scale: float, what: str) -> float:
    """A noise scale computed from epsilon/delta/sensitivity: finite, > 0, <= 2**1000."""
    if not (math.isfinite(scale) and 0.0 < scale <= _MAX_MAGNITUDE):
        raise ValueError(
            f"{what} = {scale!r} is outside (0, 2**1000]: epsilon and sensitivity are out of range"
        )
    return scale


def _clamp_magnitude(arr: np.ndarray) -> np.ndarray:
    """Clamp private values to ``[-2**1000, 2**1000]``, never refusing them: a
    refusal would depend on the data (a distinguishing test between neighbours), while
    clamping every coordinate to a data-independent interval is a contraction (the
    sensitivity is unchanged) and leaves values in range bit-identical."""
    return np.asarray(np.clip(arr, -_MAX_MAGNITUDE, _MAX_MAGNITUDE), dtype=np.float64)


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


def _unwrap(out: np.ndarray) -> Any:
    """Return a Python scalar for 0-d results, the array otherwise."""
    return out.item() if out.ndim == 0 else out


def _integer_input(value: Any) -> bool:
    """Whether ``value`` has an integer dtype (a public property of its type, not its values)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, np.integer)):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return np.dtype(dtype).kind in "iu"
    try:
        return np.asarray(value).dtype.kind in "iu"
    except (ValueError, TypeError):
        return False


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How the secure path privatises one input: noise scale, record details, parameters."""

    scale: float | None
    details: dict[str, Any]
    grid_exponent: int = 0
    param: Fraction | None = None  # discrete Laplace t or discrete Gaussian sigma^2 (grid units)


# ==========================================================================
# Base class
# ==========================================================================

class Mechanism(abc.ABC):
    """Base class: parameter storage, ``record`` and ``release`` logic.

    Subclasses set ``name`` and ``sensitivity_norm`` and implement
    ``_check_value``, ``_check_output``, ``_sample`` and ``_log_prob``.

    References
    ----------
    .. [1] Dwork & Roth (2014), Definition 2.4 ((epsilon, delta)-DP) and
       Theorem 3.16 (basic composition, used when an accountant is charged).
    .. [2] N. Holohan et al., "Diffprivlib: The IBM Differential Privacy
       Library", arXiv:1907.02444, 2019 (the one-class-per-mechanism
       ``randomise`` interface).
    """

    name: ClassVar[str]
    sensitivity_norm: ClassVar[str | None] = None
    requires_sensitivity: ClassVar[bool] = False
    _RESERVED: ClassVar[frozenset[str]] = frozenset(
        {"mechanism", "epsilon", "delta", "sensitivity", "sensitivity_norm", "scale"}
    )

    def __init__(self, *, epsilon: float, delta: float = 0.0,
                 sensitivity: float | None = None, seed: SeedLike = None) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._delta = check_delta(delta)
        self._sensitivity = (None if sensitivity is None and not self.requires_sensitivity
                             else check_positive(sensitivity, "sensitivity"))
        self._seeded = seed is not None
        self._rng = check_random_state(seed)
        self._source = None if self._seeded else _noise.SecureRandom()

    # ---- public read-only parameters ------------------------------------
    @property
    def epsilon(self) -> float:
        """Privacy parameter epsilon."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """Privacy parameter delta (0 for pure DP)."""
        return self._delta

    @property
    def sensitivity(self) -> float | None:
        """Sensitivity of the query, in ``sensitivity_norm``."""
        return self._sensitivity

    @property
    def scale(self) -> float | None:
        """Noise scale of the continuous (seeded) mechanism, where meaningful (None otherwise).

        A release without a seed records the scale of the discrete noise it actually added
        (``release.record.scale``), which can be slightly larger (grid allowance, discrete
        Gaussian calibration)."""
        return None

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._repr_params().items())
        return f"{type(self).__name__}({params})"

    def _repr_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"epsilon": self._epsilon}
        if self._delta:
            out["delta"] = self._delta
        if self._sensitivity is not None:
            out["sensitivity"] = self._sensitivity
        return out

    # ---- hooks -----------------------------------------------------------
    @abc.abstractmethod
    def _check_value(self, value: Any) -> np.ndarray:
        """Validate an input (private data): returns a fresh array."""

    @abc.abstractmethod
    def _check_output(self, output: Any) -> np.ndarray:
        """Validate an output passed to ``log_prob``."""

    @abc.abstractmethod
    def _sample(self, x: np.ndarray) -> np.ndarray:
        """Privatise a validated input array."""

    @abc.abstractmethod
    def _log_prob(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Elementwise log density / probability of validated arrays."""

    def _details(self) -> dict[str, Any]:
        return {}

    def _range_details(self) -> dict[str, Any]:
        """Public range facts of the mechanism (the additive ones clamp to an interval)."""
        return {}

    # ---- secure (unseeded) path -------------------------------------------
    _seeded_noise: ClassVar[str] = "continuous float64 (numpy)"
    _secure_noise: ClassVar[str] = "discrete (exact integer sampler)"

    def _randomness_details(self) -> dict[str, Any]:
        if self._seeded:
            return {"secure": False, "randomness": SEEDED_RANDOMNESS, "noise": self._seeded_noise}
        return {"secure": True, "randomness": SECURE_RANDOMNESS, "noise": self._secure_noise}

    def _plan(self, x: np.ndarray, *, integer: bool, changed: int | None) -> _Plan:
        """Noise plan of the secure path for the validated input ``x`` (raises before any spend)."""
        return _Plan(scale=None, details={})

    def _secure_sample(self, x: np.ndarray, plan: _Plan) -> np.ndarray:
        """Privatise ``x`` with exact discrete noise from ``self._source``."""
        raise NotImplementedError  # pragma: no cover

    def _privatise(self, x: np.ndarray, plan: _Plan | None) -> np.ndarray:
        if plan is None:
            warn_reproducible_not_secure()
            return self._sample(x)
        return self._secure_sample(x, plan)

    def _validated(self, value: Any, changed: Any) -> tuple[np.ndarray, _Plan | None]:
        """The validated input and, on the secure path, its noise plan (``None`` when
        seeded); raises before anything is charged or drawn."""
        integer = _integer_input(value)
        x = self._check_value(value)
        changed = None if changed is None else check_int(changed, "changed", minimum=1)
        try:  # the plan reads only public inputs (parameters, shape, dtype), never the values
            plan = None if self._seeded else self._plan(x, integer=integer, changed=changed)
        except OverflowError:
            raise ValueError(
                f"epsilon={self._epsilon!r}, delta={self._delta!r} and sensitivity={self._sensitivity!r} "
                "are out of range for the secure discrete noise (an intermediate overflows float64)"
            ) from None
        return x, plan

    # ---- public API ------------------------------------------------------
    def randomise(self, value: Any, *, changed: int | None = None) -> Any:
        """Privatise ``value`` (scalar or array; independent noise per element).

        Returns a Python scalar for scalar input and an array otherwise.
        ``changed`` (additive mechanisms, secure path): how many elements one
        neighbouring change can alter (default: all of them); it sets the
        rounding allowance of the grid.
        """
        x, plan = self._validated(value, changed)
        return _unwrap(self._privatise(x, plan))

    def log_prob(self, output: Any, input: Any) -> np.ndarray:  # noqa: A002
        """Log density (or log probability) of ``output`` given ``input``.

        The arguments broadcast; the result is a float64 array.
        """
        out = self._check_output(output)
        x = self._check_value(input)
        return np.asarray(self._log_prob(out, x), dtype=np.float64)

    def record(self, **context: Any) -> PrivacyRecord:
        """Describe this mechanism as a :class:`PrivacyRecord`.

        ``n``, ``bounds`` and ``neighbouring`` in ``context`` become record
        fields; everything else (and a ``details`` mapping) goes into
        ``details``, together with ``seeded`` and mechanism specifics.
        """
        clash = sorted(self._RESERVED & set(context))
        if clash:
            raise ValueError(f"record() context cannot override {clash}; they come from the mechanism")
        top = {k: context.pop(k) for k in ("n", "bounds", "neighbouring") if k in context}
        extra = context.pop("details", None) or {}
        details = {"seeded": self._seeded, **self._randomness_details(), **self._range_details(),
                   **self._details(), **extra, **context}
        return PrivacyRecord(
            mechanism=self.name, epsilon=self._epsilon, delta=self._delta,
            sensitivity=self._sensitivity, sensitivity_norm=self.sensitivity_norm,
            scale=self.scale, details=details, **top,
        )

    def release(self, value: Any, *, accountant: PrivacyAccountant | None = None,
                n: int | None = None, bounds: tuple[float, float] | None = None,
                neighbouring: str = "replace-one", label: str | None = None,
                changed: int | None = None) -> Release:
        """Validate ``value``, charge ``accountant``, privatise, and return a Release.

        Nothing is charged if validation fails (an empty ``value`` included),
        and nothing is released if the accountant refuses the spend
        (:class:`~pystanprivacy.privacy.records.BudgetExceededError`); once charged, the
        release cannot fail (finite values are clamped to the recorded
        ``representable_range``, never refused; see the module docstring). Without a seed
        the noise is discrete and the record's ``scale`` and ``details``
        describe it (see the module docstring); ``changed`` as in
        :meth:`randomise`.
        """
        x, plan = self._validated(value, changed)
        if x.size == 0:  # a public property of the shape: refused before any charge
            raise ValueError(f"value must hold at least one element to release, got shape {x.shape}")
        label = check_label(label)
        context: dict[str, Any] = {"n": n, "bounds": bounds, "neighbouring": neighbouring}
        if label is not None:
            context["label"] = label
        record = self.record(**context)
        if plan is not None:
            record = dataclasses.replace(
                record, scale=plan.scale if plan.scale is not None else record.scale,
                details={**record.details, **plan.details})
        if accountant is not None:
            if not isinstance(accountant, PrivacyAccountant):
                raise TypeError(
                    f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}"
                )
            accountant.spend(self._epsilon, self._delta, label=label)
        return Release(values=self._privatise(x, plan), record=record)


# ==========================================================================
# Additive noise mechanisms
# ==========================================================================

class _AdditiveNoise(Mechanism):
    """Shared logic for ``output = value + noise`` on real arrays."""

    requires_sensitivity = True

    def _check_value(self, value: Any) -> np.ndarray:
        # finite reals are the domain (NaN/inf refused by check_array); |x| > 2**1000 is
        # clamped, not refused (a data-dependent refusal would distinguish neighbours)
        return _clamp_magnitude(check_array(value, "value", kinds="iuf"))

    def _check_output(self, output: Any) -> np.ndarray:
        return _check_magnitude(check_array(output, "output", kinds="iuf"), "output")

    def _range_details(self) -> dict[str, Any]:
        # seeded path: values clamped to +-2**1000 (the secure plan records its grid range)
        return {"representable_range": [-_MAX_MAGNITUDE, _MAX_MAGNITUDE]}

    def _sample(self, x: np.ndarray) -> np.ndarray:
        return x + self._noise(x.shape)

    def _log_prob(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        return self._log_noise_density(output - x)

    def _secure_sample(self, x: np.ndarray, plan: _Plan) -> np.ndarray:
        # inputs clamped to +-2^52 steps (a contraction); the noisy sum clamped to
        # +-output_bound(k) steps (post-processing of m + K, active with probability
        # <= 2^-64 per coordinate by the plan's check): nothing here can raise
        k = plan.grid_exponent
        m = _noise.to_grid(x, k)
        y = _noise.clamped_noisy_sum(m, self._draw(plan.param), _noise.output_bound(k))
        return _noise.from_grid(y, k)

    def _draw(self, param: Fraction):
        """A zero-argument callable returning one exact integer noise draw."""
        raise NotImplementedError  # pragma: no cover

    def _grid_details(self, k: int, c: int) -> dict[str, Any]:
        # the input range in value units is also capped by the +-2**1000 value clamp
        rng_in = math.ldexp(1.0, 52 + k) if 52 + k <= 1000 else _MAX_MAGNITUDE
        rng_out = math.ldexp(float(_noise.output_bound(k)), k)
        return {"grid": math.ldexp(1.0, k), "grid_exponent": k, "changed_coordinates": c,
                "representable_range": [-rng_in, rng_in], "output_range": [-rng_out, rng_out],
                "overflow_probability_bound": _noise.OVERFLOW_PROBABILITY}

    def _check_plan_scale(self, scale: float) -> float:
        if not (math.isfinite(scale) and scale <= _MAX_PLAN_SCALE):
            raise ValueError(
                f"the discrete noise scale for epsilon={self._epsilon!r}, sensitivity={self._sensitivity!r} "
                f"is {scale!r}, above 2**1010: epsilon and sensitivity are out of range"
            )
        return scale

    @staticmethod
    def _check_grid_exponent(k: int, what: str) -> int:
        if k > 1020:  # no float64 range left above the grid (noise.output_bound)
            raise ValueError(f"{what} are out of range: they need a noise grid 2^{k} beyond 2^1020")
        return k

    @abc.abstractmethod
    def _noise(self, shape: tuple[int, ...]) -> np.ndarray: ...

    @abc.abstractmethod
    def _log_noise_density(self, z: np.ndarray) -> np.ndarray: ...


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
        self._b = _check_scale(self._sensitivity / self._epsilon, "the Laplace scale sensitivity / epsilon")

    @property
    def scale(self) -> float:
        """Laplace scale ``b = sensitivity / epsilon``."""
        return self._b

    def _noise(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng.laplace(0.0, self._b, size=shape)

    def _log_noise_density(self, z: np.ndarray) -> np.ndarray:
        return -math.log(2.0 * self._b) - np.abs(z) / self._b

    _secure_noise = "discrete_laplace (exact sampler; grid set per release)"

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
        The input is never inspected here: its values are clamped, not refused."""
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
        details = {"noise": f"discrete_laplace on grid 2^{k}" + (" (integer input)" if integer else ""),
                   **self._grid_details(k, c), "integer_sensitivity": d_int,
                   "scale_grid_units": float(t)}
        return _Plan(scale=scale, details=details, grid_exponent=k, param=t)

    def _draw(self, param: Fraction):
        src = self._source
        return lambda: _noise.discrete_laplace(param, src)


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

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float,
                 seed: SeedLike = None) -> None:
        eps = check_epsilon(epsilon)
        if eps >= 1.0:
            raise ValueError(
                f"epsilon must be < 1 for the classical Gaussian mechanism, got {epsilon!r}; "
                "use AnalyticGaussian (Balle & Wang 2018) for epsilon >= 1"
            )
        check_delta(delta, positive=True)
        super().__init__(epsilon=eps, delta=delta, sensitivity=sensitivity, seed=seed)
        self._sigma = _check_scale(math.sqrt(2.0 * math.log(1.25 / self._delta))
                                   * self._sensitivity / self._epsilon, "the Gaussian noise sigma")

    @property
    def scale(self) -> float:
        """Standard deviation sigma of the noise."""
        return self._sigma

    def _noise(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng.normal(0.0, self._sigma, size=shape)

    def _log_noise_density(self, z: np.ndarray) -> np.ndarray:
        return -0.5 * math.log(2.0 * math.pi) - math.log(self._sigma) - 0.5 * (z / self._sigma) ** 2

    def _details(self) -> dict[str, Any]:
        return {"calibration": "classical"}

    _secure_noise = "discrete_gaussian (exact sampler; grid and sigma set per release)"
    _MIN_SIGMA_UNITS = 128.0

    def _sensitivity_units(self, k: int, c: int, integer: bool) -> float:
        """The sensitivity in grid units on grid ``2^k``: integer input (``k <= 0``, on the
        grid) none of the rounding allowance; real input ``floor(sens/2^k) + 1`` (c = 1, an
        int) or ``sens/2^k + sqrt(c)`` rounded up (L2, c > 1)."""
        sens = self._sensitivity
        if integer:
            return (max(1, math.floor(sens)) if c == 1 else sens) * 2.0 ** -k
        steps = Fraction(sens) / Fraction(2) ** k
        return (math.floor(steps) + 1 if c == 1
                else math.nextafter(math.nextafter(float(steps) + math.sqrt(c), math.inf), math.inf))

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
        is never inspected here: its values are clamped, not refused."""
        c = changed if changed is not None else max(1, int(x.size))
        sens, sigma = self._sensitivity, self._sigma
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
                    self._epsilon, self._delta, d_units, changed=c if c > 1 else 1, start=start)
                if sigma_u <= s_max:
                    break
                start = sigma_u
            if k >= k_last:
                raise too_small
            # coarsen: sigma_u roughly halves per step of k, so jump by the excess bits
            excess = math.log2(start / s_max) if math.isfinite(start) else 64.0
            k = min(k_last, k + max(1, math.floor(excess)))
        self._check_grid_exponent(k, f"epsilon={self._epsilon!r}, delta={self._delta!r} and "
                                     f"sensitivity={self._sensitivity!r}")
        scale = self._check_plan_scale(_float_or_inf(Fraction(sigma_u) * Fraction(2) ** k))
        details = {"noise": f"discrete_gaussian on grid 2^{k}" + (" (integer input)" if on_integers else ""),
                   **self._grid_details(k, c), "sigma_grid_units": sigma_u, "delta_bound": delta_bound,
                   ("integer_sensitivity" if c == 1 else "l2_sensitivity_grid_units"): d_units,
                   "discrete_calibration": ("exact delta, Canonne-Kamath-Steinke 2020 Theorem 7" if c == 1 else
                                            "rho-zCDP (CKS 2020 Theorem 14) to (eps, delta) (Corollary 13)")}
        return _Plan(scale=scale, details=details, grid_exponent=k, param=Fraction(sigma_u) ** 2)

    def _draw(self, param: Fraction):
        src = self._source
        return lambda: _noise.discrete_gaussian(param, src)


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


_ROUNDING = 64.0 * np.finfo(float).eps  # generous per-term relative error of log_ndtr etc.


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
        while _log_gaussian_delta_upper(sigma, eps, sens) > target:
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
        Finite, > 0.
    delta : float
        In (0, 1).
    sensitivity : float
        L2 sensitivity, finite, > 0.
    seed : int, numpy.random.Generator or None, optional

    References
    ----------
    .. [1] Balle & Wang (2018), Theorem 8 and Algorithm 1.
    """

    name = "analytic_gaussian"

    def __init__(self, *, epsilon: float, delta: float, sensitivity: float,
                 seed: SeedLike = None) -> None:
        check_delta(delta, positive=True)
        Mechanism.__init__(self, epsilon=epsilon, delta=delta,
                           sensitivity=sensitivity, seed=seed)
        self._sigma = _check_scale(analytic_gaussian_sigma(self._epsilon, self._delta, self._sensitivity),
                                   "the analytic Gaussian noise sigma")

    def _details(self) -> dict[str, Any]:
        return {"calibration": "analytic"}


# ==========================================================================
# Local (discrete) mechanisms
# ==========================================================================

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
            raise ValueError(
                f"output must have last dimension d={self._d}, got shape {out.shape}"
            )
        return out

    def _one_hot(self, x: np.ndarray) -> np.ndarray:
        return x[..., None] == np.arange(self._d)

    def _sample(self, x: np.ndarray) -> np.ndarray:
        threshold = np.where(self._one_hot(x), 0.5, self._q)
        return (self._rng.random(threshold.shape) < threshold).astype(np.int64)

    _seeded_noise = "float64 uniform threshold (numpy)"
    _secure_noise = ("exact bits: true category Bernoulli(1/2), others Bernoulli(1/(1+e^eps)) "
                     "(integer arithmetic, eps as its exact binary value)")

    def _secure_sample(self, x: np.ndarray, plan: _Plan) -> np.ndarray:
        hot = self._one_hot(x)
        eps = Fraction(self._epsilon)
        src = self._source
        flat = hot.reshape(-1)
        out = np.fromiter((src.randbelow(2) if h else int(_noise.bernoulli_logistic(eps, src)) for h in flat),
                          dtype=np.int64, count=flat.size)
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
        y = check_array(reports, "reports", ndim=2, shape=(None, self._d),
                        integer=True, bounds=(0, 1))
        n = y.shape[0]
        gap = 0.5 * math.tanh(self._epsilon / 2.0)  # p - q, accurate for tiny epsilon
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            out = (y.sum(axis=0) - n * self._q) / gap if gap > 0 else np.full(self._d, np.inf)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"epsilon={self._epsilon!r} is too small to estimate counts (p - q underflows)")
        return out


# ==========================================================================
# Clipping and projections (deterministic)
# ==========================================================================

class Clip:
    """Clip values elementwise to ``[lower, upper]``.

    Bounding the data this way makes e.g. a sum have L1 sensitivity
    ``upper - lower`` under replace-one neighbouring.

    References
    ----------
    .. [1] Dwork & Roth (2014), Section 3.3 (sensitivity of bounded queries).
    """

    def __init__(self, lower: float, upper: float) -> None:
        self.lower, self.upper = check_bounds((lower, upper), "(lower, upper)")

    def __repr__(self) -> str:
        return f"Clip(lower={self.lower!r}, upper={self.upper!r})"

    def __call__(self, x: Any) -> np.ndarray:
        """Return a clipped float64 copy of ``x`` (no NaN/inf allowed)."""
        arr = check_array(x, "x", kinds="iuf")
        return np.clip(arr, self.lower, self.upper)

    def details(self) -> dict[str, Any]:
        """JSON-safe description for ``PrivacyRecord.details``."""
        return {"clipping": {"type": "interval", "lower": self.lower, "upper": self.upper}}


def row_norms(rows: np.ndarray, *, strict: bool = False) -> np.ndarray:
    """L2 norm of each row of a 2-d array, without overflow or underflow.

    With ``strict``, return the larger of this and the plain
    ``numpy.linalg.norm`` (where finite), so that a bound checked against it
    also holds for the straightforward computation.
    """
    peak = np.max(np.abs(rows), axis=1, initial=0.0)
    safe = np.where(peak > 0, peak, 1.0)
    norms = peak * np.linalg.norm(rows / safe[:, None], axis=1)
    if strict:
        with np.errstate(over="ignore"):
            plain = np.linalg.norm(rows, axis=1)
        norms = np.maximum(norms, np.where(np.isfinite(plain), plain, 0.0))
    return norms


class ClipL2:
    """Scale each row with L2 norm above ``radius`` down to norm ``radius``.

    After clipping, every row's norm is ``<= radius`` exactly (checked in
    floating point), so replacing one row changes a sum by at most
    ``2 * radius`` in L2 (``radius`` under add/remove).

    References
    ----------
    .. [1] M. Abadi et al., "Deep Learning with Differential Privacy", CCS
       2016, Algorithm 1 (per-example norm clipping x / max(1, ||x||/C)).
    """

    def __init__(self, radius: float) -> None:
        self.radius = check_positive(radius, "radius")

    def __repr__(self) -> str:
        return f"ClipL2(radius={self.radius!r})"

    def __call__(self, x: Any) -> np.ndarray:
        """Clip the rows of an ``(n, d)`` array (a 1-d array is one row)."""
        arr = check_array(x, "x", ndim=(1, 2), kinds="iuf")
        rows = np.atleast_2d(arr)
        # norm = peak * |rows / peak| with |rows / peak| in [1, sqrt(d)]: compare and scale
        # through the unit rows, so neither the norm (> 1.8e308) nor the factor
        # radius / norm (subnormal) is ever formed
        peak = np.max(np.abs(rows), axis=1, initial=0.0)
        unit = rows / np.where(peak > 0, peak, 1.0)[:, None]
        unit_norm = np.linalg.norm(unit, axis=1)
        big = peak > self.radius / np.where(unit_norm > 0, unit_norm, 1.0)
        rows[big] = unit[big] * (self.radius / unit_norm[big])[:, None]
        for _ in range(8):  # rounding may leave a norm 1 ulp above radius
            over = row_norms(rows, strict=True) > self.radius
            if not over.any():
                break
            rows[over] *= np.nextafter(1.0, 0.0) ** 4
        else:
            raise RuntimeError("ClipL2 could not bring every row within the radius")  # pragma: no cover
        return rows.reshape(arr.shape)

    def details(self) -> dict[str, Any]:
        """JSON-safe description for ``PrivacyRecord.details``."""
        return {"clipping": {"type": "l2", "radius": self.radius}}


def project_nonnegative(x: Any) -> np.ndarray:
    """Euclidean projection onto the nonnegative orthant, ``max(x, 0)``.

    Post-processing of a private release: costs no privacy.

    References
    ----------
    .. [1] Dwork & Roth (2014), Proposition 2.1 (post-processing).
    """
    return np.maximum(check_array(x, "x", kinds="iuf"), 0.0)


def project_simplex(x: Any, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of each row onto ``{v >= 0, sum(v) = total}``.

    Sort-based algorithm: sort ``u`` descending, let
    ``rho = max{j : u_j - (sum_{i<=j} u_i - total)/j > 0}`` and
    ``theta = (sum_{i<=rho} u_i - total)/rho``; the projection is
    ``max(x - theta, 0)``. Vectorised over the rows of a 2-d array.

    Parameters
    ----------
    x : array_like, shape (d,) or (n, d)
    total : float, default 1.0
        Finite, > 0.

    Returns
    -------
    numpy.ndarray
        Same shape as ``x``.

    References
    ----------
    .. [1] J. Duchi, S. Shalev-Shwartz, Y. Singer and T. Chandra, "Efficient
       Projections onto the l1-Ball for Learning in High Dimensions", ICML
       2008, Figure 1.
    .. [2] W. Wang and M. A. Carreira-Perpinan, "Projection onto the
       probability simplex: An efficient algorithm with a simple proof",
       arXiv:1309.1541, 2013, Algorithm 1.
    """
    total = check_positive(total, "total")
    arr = check_array(x, "x", ndim=(1, 2), kinds="iuf")
    if arr.shape[-1] == 0:
        raise ValueError("x must have at least one column")
    rows = np.atleast_2d(arr)
    # The projection does not change when a constant is added to a row: shift each row so
    # that its largest value is 0, and raise values that cannot be in the support (below
    # max - total) to -total, so that huge inputs neither overflow nor swamp the total.
    peak = np.max(rows, axis=1, keepdims=True, initial=-np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        rows = np.maximum(rows - peak, -total)
    u = -np.sort(-rows, axis=1)
    css = np.cumsum(u, axis=1) - total
    j = np.arange(1, rows.shape[1] + 1)
    rho = np.count_nonzero(u - css / j > 0, axis=1)  # >= 1 always
    theta = css[np.arange(rows.shape[0]), rho - 1] / rho
    return np.maximum(rows - theta[:, None], 0.0).reshape(arr.shape)
