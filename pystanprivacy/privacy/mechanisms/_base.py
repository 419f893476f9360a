"""The base of every mechanism (:class:`Mechanism`) and what the families share: the
public range constants and checks, and the secure path's noise plan.

Private helpers that other modules need (``_clamp_magnitude`` and ``_MAX_MAGNITUDE``, used by
:mod:`pystanprivacy.privacy.ldp`) live here and are imported from here.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", 2014.
.. [2] N. Holohan et al., "Diffprivlib: The IBM Differential Privacy
   Library", arXiv:1907.02444, 2019.
"""

from __future__ import annotations

import abc
import dataclasses
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..._validation import (
    SeedLike,
    check_delta,
    check_epsilon,
    check_int,
    check_label,
    check_positive,
    check_random_state,
    declares_integer,
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

__all__ = ["Mechanism"]

#: largest noise scale the additive mechanisms accept (and the coordinate clamp of
#: ldp.gaussian_reports before its row clipping), so that the noise itself is finite
_MAX_MAGNITUDE = 2.0**1000


def _clamp_magnitude(arr: np.ndarray) -> np.ndarray:
    """Clamp private values to ``[-2**1000, 2**1000]``, never refusing them: a
    refusal would depend on the data (a distinguishing test between neighbours), while
    clamping every coordinate to a data-independent interval is a contraction (the
    sensitivity is unchanged) and leaves values in range bit-identical."""
    return np.asarray(np.clip(arr, -_MAX_MAGNITUDE, _MAX_MAGNITUDE), dtype=np.float64)


def _unwrap(out: np.ndarray) -> Any:
    """Return a Python scalar for 0-d results, the array otherwise."""
    return out.item() if out.ndim == 0 else out


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How the secure path privatises one input: noise scale, record details, parameters."""

    scale: float | None
    details: dict[str, Any]
    grid_exponent: int = 0
    param: Fraction | None = None  # discrete Laplace t or discrete Gaussian sigma^2 (grid units)


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

    def __init__(
        self, *, epsilon: float, delta: float = 0.0, sensitivity: float | None = None, seed: SeedLike = None
    ) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._delta = check_delta(delta)
        self._sensitivity = (
            None
            if sensitivity is None and not self.requires_sensitivity
            else check_positive(sensitivity, "sensitivity")
        )
        self._seeded = seed is not None
        self._rng = check_random_state(seed)
        # the CSPRNG, or the seeded source of a simulation block (noise.simulated_randomness)
        self._source = None if self._seeded else _noise.secure_source()

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
        """Public range facts of the mechanism (the additive ones: the float64 range)."""
        return {}

    # ---- secure (unseeded) path -------------------------------------------
    _seeded_noise: ClassVar[str] = "continuous float64 (numpy)"
    _secure_noise: ClassVar[str] = "discrete (exact integer sampler)"

    def _randomness_details(self) -> dict[str, Any]:
        if self._seeded:
            return {"secure": False, "randomness": SEEDED_RANDOMNESS, "noise": self._seeded_noise}
        if not self._source.secure:  # noise.simulated_randomness: the secure path, a seeded source
            return {
                "secure": False,
                "simulated": True,
                "randomness": _noise.SIMULATED_RANDOMNESS,
                "noise": self._secure_noise,
            }
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
        # integer data only where the caller declared it (an ndarray's dtype), never a dtype
        # NumPy would infer from a list's values: [1, 2**63 - 1] and [1, 2**63] are both real
        integer = declares_integer(value)
        x = self._check_value(value)
        changed = None if changed is None else check_int(changed, "changed", minimum=1)
        try:  # the plan reads only public inputs (parameters, shape, dtype), never the values
            plan = None if self._seeded else self._plan(x, integer=integer, changed=changed)
        except ArithmeticError:  # OverflowError, or a calibration that cannot converge in float64
            raise ValueError(
                f"epsilon={self._epsilon!r}, delta={self._delta!r} and sensitivity={self._sensitivity!r} "
                "are out of range for the secure discrete noise (its calibration overflows float64; "
                "the discrete Gaussian needs epsilon <= about 709, where e^epsilon is finite)"
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

    def log_prob(self, output: Any, input: Any) -> np.ndarray:
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
        details = {
            "seeded": self._seeded,
            **self._randomness_details(),
            **self._range_details(),
            **self._details(),
            **extra,
            **context,
        }
        return PrivacyRecord(
            mechanism=self.name,
            epsilon=self._epsilon,
            delta=self._delta,
            sensitivity=self._sensitivity,
            sensitivity_norm=self.sensitivity_norm,
            scale=self.scale,
            details=details,
            **top,
        )

    def release(
        self,
        value: Any,
        *,
        accountant: PrivacyAccountant | None = None,
        n: int | None = None,
        bounds: tuple[float, float] | None = None,
        neighbouring: str = "replace-one",
        label: str | None = None,
        changed: int | None = None,
    ) -> Release:
        """Validate ``value``, charge ``accountant``, privatise, and return a Release.

        Nothing is charged if validation fails (an empty ``value`` included),
        and nothing is released if the accountant refuses the spend
        (:class:`~pystanprivacy.privacy.records.BudgetExceededError`); once charged, the
        release cannot fail (finite values are neither refused nor clamped; the recorded
        ``representable_range`` is the float64 range). Without a seed
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
                record,
                scale=plan.scale if plan.scale is not None else record.scale,
                details={**record.details, **plan.details},
            )
        if accountant is not None:
            if not isinstance(accountant, PrivacyAccountant):
                raise TypeError(f"accountant must be a PrivacyAccountant or None, got {type(accountant).__name__}")
            charged = accountant.spend(self._epsilon, self._delta, label=label, record=record)
            if charged is not None:  # a persistent ledger: the release names its entry
                record = charged.stamp(record)
        return Release(values=self._privatise(x, plan), record=record)
