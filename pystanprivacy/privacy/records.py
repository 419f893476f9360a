"""Privacy records, releases and a budget accountant.

* :class:`PrivacyRecord` describes *how* a value was privatised (mechanism,
  epsilon, delta, sensitivity, noise scale, data bounds, ...). It is public
  metadata and JSON-serialisable.
* :class:`Release` pairs privatised values with their record. Its array is
  read-only.
* :class:`PrivacyAccountant` tracks a total (epsilon, delta) budget under
  basic sequential composition (the default, with exact rational arithmetic) or a
  tight rule built from each release's record (zCDP, Rényi DP, privacy-loss
  distributions: :mod:`pystanprivacy.privacy.accounting`), with a lock so that
  concurrent spending can never exceed the budget.

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", Foundations and Trends in Theoretical Computer Science 9(3-4),
   2014. Theorem 3.16 (basic sequential composition: mechanisms that are
   (eps_i, delta_i)-DP compose to (sum eps_i, sum delta_i)-DP).
"""

from __future__ import annotations

import math
import threading
import types
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import (
    check_bounds,
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_label,
    check_positive,
)

__all__ = [
    "NEIGHBOURING_RELATIONS",
    "SENSITIVITY_NORMS",
    "PrivacyRecord",
    "Release",
    "BudgetExceededError",
    "COMPOSITION_RULES",
    "PrivacyAccountant",
    "ReproducibleNotSecureWarning",
    "warn_reproducible_not_secure",
    "reset_reproducible_warning",
    "noise_details",
]

NEIGHBOURING_RELATIONS = ("replace-one", "add-remove")
SENSITIVITY_NORMS = ("l1", "l2", "linf")


# --------------------------------------------------------------------------
# JSON-safe, immutable "details" mapping
# --------------------------------------------------------------------------

def _freeze(value: Any, path: str) -> Any:
    """Convert ``value`` to an immutable JSON-compatible structure."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.generic):
        value = value.item()
        if isinstance(value, bool):
            return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path} must be finite to be JSON-serialisable, got {value!r}")
        return float(value)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path} keys must be str, got {type(key).__name__} {key!r}")
            out[key] = _freeze(item, f"{path}[{key!r}]")
        return types.MappingProxyType(out)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item, f"{path}[{i}]") for i, item in enumerate(value))
    raise TypeError(
        f"{path} must contain only str, int, float, bool, None, lists and "
        f"mappings, got {type(value).__name__}"
    )


def _thaw(value: Any) -> Any:
    """Inverse of :func:`_freeze`: plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


# --------------------------------------------------------------------------
# PrivacyRecord
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class PrivacyRecord:
    """Public description of one privatisation step.

    Parameters
    ----------
    mechanism : str
        E.g. ``"laplace"``, ``"gaussian"``, ``"analytic_gaussian"``,
        ``"randomized_response"``, ``"oue"``, ``"ops"``.
    epsilon : float
        Finite, > 0.
    delta : float, default 0.0
        In [0, 1).
    sensitivity : float, optional
        Finite, > 0, measured in ``sensitivity_norm``.
    sensitivity_norm : {"l1", "l2", "linf"}, optional
    scale : float, optional
        Noise scale (Laplace ``b``, Gaussian ``sigma``); finite, > 0.
    bounds : (float, float), optional
        Declared data bounds used to derive the sensitivity.
    n : int, optional
        Number of records (>= 1).
    neighbouring : {"replace-one", "add-remove"}, default "replace-one"
    details : Mapping[str, Any]
        Anything else (clipping, projection, budget split, ``seeded``).
        Must be JSON-compatible; stored as a read-only mapping.

    References
    ----------
    .. [1] Dwork & Roth (2014), Definition 2.4 ((epsilon, delta)-DP) and
       Section 2.3 (neighbouring databases).
    """

    mechanism: str
    epsilon: float
    delta: float = 0.0
    sensitivity: float | None = None
    sensitivity_norm: str | None = None
    scale: float | None = None
    bounds: tuple[float, float] | None = None
    n: int | None = None
    neighbouring: str = "replace-one"
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str) or not self.mechanism:
            raise TypeError(f"mechanism must be a non-empty str, got {self.mechanism!r}")
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        set_("epsilon", check_epsilon(self.epsilon))
        set_("delta", check_delta(self.delta))
        if self.sensitivity is not None:
            set_("sensitivity", check_positive(self.sensitivity, "sensitivity"))
        if self.sensitivity_norm is not None:
            check_choice(self.sensitivity_norm, "sensitivity_norm", SENSITIVITY_NORMS)
        if self.scale is not None:
            set_("scale", check_positive(self.scale, "scale"))
        if self.bounds is not None:
            set_("bounds", check_bounds(self.bounds))
        if self.n is not None:
            set_("n", check_int(self.n, "n", minimum=1))
        check_choice(self.neighbouring, "neighbouring", NEIGHBOURING_RELATIONS)
        if not isinstance(self.details, Mapping):
            raise TypeError(f"details must be a mapping, got {type(self.details).__name__}")
        set_("details", _freeze(self.details, "details"))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable ``dict`` (floats, ints, str, lists)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["bounds"] = None if self.bounds is None else list(self.bounds)
        out["details"] = _thaw(self.details)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PrivacyRecord:
        """Rebuild a record from :meth:`to_dict` output (unknown keys raise)."""
        if not isinstance(d, Mapping):
            raise TypeError(f"d must be a mapping, got {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown PrivacyRecord field(s): {unknown}")
        kwargs = dict(d)
        if kwargs.get("bounds") is not None:
            kwargs["bounds"] = tuple(kwargs["bounds"])
        return cls(**kwargs)


# --------------------------------------------------------------------------
# Release
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Release:
    """Privatised values together with the record of how they were made.

    ``values`` is stored as a read-only copy. Because the values are already
    privatised, showing them is safe; ``repr`` shows only shape and record.
    The values must be finite: no mechanism releases NaN or ±inf, so a
    non-finite ``values`` is refused (``ValueError``, a count), and a forged
    release cannot carry one into a model. They must also hold at least one
    value: every mechanism refuses empty input, so ``values`` of size 0 (shape
    ``(0,)``, ``(2, 0)``, ...) is refused (``ValueError`` naming ``values``),
    by the constructor and by :meth:`from_dict`.
    """

    values: np.ndarray
    record: PrivacyRecord

    def __post_init__(self) -> None:
        if not isinstance(self.record, PrivacyRecord):
            raise TypeError(f"record must be a PrivacyRecord, got {type(self.record).__name__}")
        try:
            arr = np.array(self.values, copy=True)
        except (TypeError, ValueError):
            # numpy's message may quote the values: do not chain it
            raise TypeError("values must be an array of numbers (a ragged or non-numeric "
                            "sequence was given)") from None
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"values must be numeric, got dtype {arr.dtype}")
        if arr.size == 0:  # no mechanism releases nothing: refuse forged or truncated values
            raise ValueError(f"values must hold at least one value (a release is never empty), "
                             f"got shape {arr.shape}")
        if arr.dtype.kind == "f":
            n_bad = int(np.count_nonzero(~np.isfinite(arr)))
            if n_bad:  # no mechanism releases NaN/inf: refuse forged or corrupted values
                raise ValueError(f"values contains {n_bad} non-finite value(s) (NaN or inf); "
                                 "a release holds finite numbers only")
        arr.flags.writeable = False
        object.__setattr__(self, "values", arr)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Release):
            return NotImplemented
        return (self.record == other.record
                and self.values.shape == other.values.shape
                and bool(np.array_equal(self.values, other.values, equal_nan=True)))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Release(shape={self.values.shape}, dtype={self.values.dtype}, "
                f"record={self.record!r})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict: ``values`` (nested lists), ``shape``, ``record``."""
        return {
            "values": self.values.tolist(),
            "shape": list(self.values.shape),
            "record": self.record.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Release:
        """Inverse of :meth:`to_dict`.

        ``d`` must be a mapping with keys ``values`` and ``record`` (``shape`` optional);
        a missing key is a ``ValueError`` naming it, not a bare ``KeyError``.
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"d must be a mapping with keys 'values' and 'record', got {type(d).__name__}")
        missing = [key for key in ("values", "record") if key not in d]
        if missing:
            raise ValueError(f"d is missing the key(s) {missing}; a Release dict needs 'values' and "
                             "'record' ('shape' optional), as written by Release.to_dict")
        unknown = sorted(str(key) for key in set(d) - {"values", "record", "shape"})
        if unknown:
            raise ValueError(f"d has unknown key(s) {unknown}; allowed: 'values', 'record', 'shape'")
        try:
            values = np.asarray(d["values"])
        except (TypeError, ValueError):
            raise TypeError("d['values'] must be an array of numbers (a ragged or non-numeric "
                            "sequence was given)") from None
        if d["values"] is None:
            raise TypeError("d['values'] is None; it must be an array of numbers (nested lists, as "
                            "written by Release.to_dict)")
        if values.dtype.kind not in "biuf":  # checked before 'shape', which would count the values
            raise TypeError(f"d['values'] must be an array of numbers, got dtype {values.dtype}")
        if "shape" in d:
            shape = d["shape"]
            if isinstance(shape, (str, bytes)) or not isinstance(shape, (list, tuple)) or not all(
                    isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) for n in shape):
                raise TypeError(f"d['shape'] must be a list of ints, got {type(shape).__name__}")
            if math.prod(int(n) for n in shape) != values.size or any(int(n) < 0 for n in shape):
                raise ValueError(f"d['shape'] = {list(shape)} does not match the {values.size} value(s) given")
            values = values.reshape(tuple(int(n) for n in shape))
        return cls(values=values, record=PrivacyRecord.from_dict(d["record"]))


# --------------------------------------------------------------------------
# Accountant
# --------------------------------------------------------------------------

class BudgetExceededError(ValueError):
    """Raised when a spend would exceed the accountant's remaining budget."""


#: the accountant's composition rules (:mod:`pystanprivacy.privacy.accounting` for the tight ones)
COMPOSITION_RULES = ("basic", "zcdp", "rdp", "pld")

#: relative tolerance between a spend's (epsilon, delta) and the sum over its records
_RECORD_TOLERANCE = Fraction(1, 10**9)


def _exact(x: float) -> Fraction:
    """Exact rational for the decimal a float prints as (``0.1`` -> 1/10)."""
    return Fraction(repr(float(x)))


def _check_records(record: Any, eps: Fraction, dlt: Fraction) -> tuple[PrivacyRecord, ...]:
    """``record`` as a tuple of records whose (epsilon, delta) add up to the spend's."""
    if record is None:
        return ()
    if isinstance(record, PrivacyRecord):
        records: tuple[Any, ...] = (record,)
    elif isinstance(record, (list, tuple)) and record:
        records = tuple(record)
    else:
        raise TypeError(f"record must be a PrivacyRecord, a non-empty list or tuple of them, or None, "
                        f"got {type(record).__name__}{' (empty)' if isinstance(record, (list, tuple)) else ''}")
    bad = [type(r).__name__ for r in records if not isinstance(r, PrivacyRecord)]
    if bad:
        raise TypeError(f"record must hold only PrivacyRecord objects, got {bad[0]}")
    for name, want, got in (("epsilon", eps, sum((_exact(r.epsilon) for r in records), Fraction(0))),
                            ("delta", dlt, sum((_exact(r.delta) for r in records), Fraction(0)))):
        if abs(got - want) > _RECORD_TOLERANCE * max(want, got):
            raise ValueError(f"the record(s) state {name} = {float(got)!r} in all, but the spend charges "
                             f"{name}={float(want)!r}; they must describe the same release")
    return records


class PrivacyAccountant:
    """Total (epsilon, delta) budget, composed by basic composition or a tight rule.

    Parameters
    ----------
    epsilon : float
        Total epsilon budget, finite > 0.
    delta : float, default 0.0
        Total delta budget in [0, 1).
    composition : {"basic", "zcdp", "rdp", "pld"}, default "basic"
        How releases compose. ``"basic"``: epsilons and deltas add up (Dwork & Roth
        Thm 3.16), exactly as described below. The tight rules build each release's privacy
        curve from the record passed to :meth:`spend` (never from data) and compose the
        curves: zero-concentrated DP, Rényi DP or privacy-loss distributions
        (:mod:`pystanprivacy.privacy.accounting`). A release without a record, or whose
        record has no curve, is added to the tight total by basic composition (its (ε, δ)),
        and the ledger says so.

    Notes
    -----
    *Basic.* Amounts are stored as exact fractions of the *shortest decimal* that
    round-trips each float (``Fraction(repr(x))``), so ten spends of 0.1
    fit exactly in a budget of 1.0. This treats ``0.1`` as exactly 1/10,
    i.e. it ignores the ~1e-17 relative representation error of binary
    floats.

    *Tight rules.* The composed guarantee is stated at the budget's δ: ``spent`` is
    ``(ε, δ)`` with ε the smaller of the tight ε at the budget's δ (curves composed at
    what the fallbacks leave of δ, plus the fallbacks' ε) and, when it is smaller, the
    basic sums ``(Σε, Σδ)``; both are valid guarantees of the same releases. A spend is
    refused when neither fits the budget. ``remaining`` is the budget less ``spent``; it
    does not tell what one more release may cost (composition is not additive): ask
    :meth:`check`.

    All reads and writes take a :class:`threading.Lock`, so concurrent spends never
    overspend, under every rule.

    References
    ----------
    .. [1] Dwork & Roth (2014), Theorem 3.16 (basic composition).
    .. [2] See :mod:`pystanprivacy.privacy.accounting` for the tight rules.
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, composition: str = "basic") -> None:
        self._total = (_exact(check_epsilon(epsilon)), _exact(check_delta(delta)))
        self._rule = check_choice(composition, "composition", COMPOSITION_RULES)
        self._spent = (Fraction(0), Fraction(0))
        self._ledger: list[tuple[str | None, float, float]] = []
        self._entries: list[Any] = []
        self._composed = (0.0, 0.0)
        self._tight = None
        if self._rule != "basic":
            from .accounting import TightComposition

            self._tight = TightComposition(self._rule)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        eps, delta = self.spent
        rule = "" if self._rule == "basic" else f", composition={self._rule!r}"
        return (f"PrivacyAccountant(epsilon={float(self._total[0])!r}, "
                f"delta={float(self._total[1])!r}{rule}, spent=({eps!r}, {delta!r}))")

    @staticmethod
    def _request(epsilon: Any, delta: Any) -> tuple[Fraction, Fraction]:
        return _exact(check_epsilon(epsilon)), _exact(check_delta(delta))

    def _fits(self, eps: Fraction, delta: Fraction) -> bool:
        return (self._spent[0] + eps <= self._total[0]
                and self._spent[1] + delta <= self._total[1])

    def _counted(self, records: tuple[PrivacyRecord, ...], eps: Fraction, dlt: Fraction
                 ) -> tuple[list[Any], tuple[Fraction, Fraction], tuple[str, ...]]:
        """Curves, basic fallback (exact) and the ledger's description of one spend."""
        if self._tight is None:
            return [], (eps, dlt), ("(eps, delta) by basic composition",)
        if not records:
            return [], (eps, dlt), ("(eps, delta) by basic composition: no record given",)
        from .accounting import curve_from_record

        curves, fallback, said = [], (Fraction(0), Fraction(0)), []
        for rec in records:
            curve, why = curve_from_record(rec)
            if curve is None:
                fallback = (fallback[0] + _exact(rec.epsilon), fallback[1] + _exact(rec.delta))
                said.append(f"{rec.mechanism}: (eps={rec.epsilon!r}, delta={rec.delta!r}) by basic composition: {why}")
            else:
                curves.append(curve)
                said.append(f"{rec.mechanism}: {curve.describe()}")
        return curves, fallback, tuple(said)

    def _candidate(self, eps: Fraction, dlt: Fraction, records: tuple[PrivacyRecord, ...]
                   ) -> tuple[bool, tuple[float, float], Any, tuple[str, ...]]:
        """Under the lock: whether the spend fits, the composed (ε, δ) after it, the tight
        state to commit and the ledger's description."""
        curves, fallback, said = self._counted(records, eps, dlt)
        basic = (self._spent[0] + eps, self._spent[1] + dlt)
        basic_float = (float(basic[0]), float(basic[1]))
        if self._tight is None:
            return self._fits(eps, dlt), basic_float, None, said
        parts = self._tight.parts.plus(curves, fallback)
        tight_eps = self._tight.epsilon(parts, float(self._total[1]))
        if self._fits(eps, dlt) and basic_float[0] <= tight_eps:
            return True, basic_float, parts, said
        return tight_eps <= float(self._total[0]), (tight_eps, float(self._total[1])), parts, said

    def check(self, epsilon: float, delta: float = 0.0, *, record: Any = None) -> bool:
        """Whether charging ``(epsilon, delta)`` (with ``record``, as in :meth:`spend`) would
        fit the budget; nothing is charged."""
        eps, dlt = self._request(epsilon, delta)
        records = _check_records(record, eps, dlt)
        with self._lock:
            return self._candidate(eps, dlt, records)[0]

    def spend(self, epsilon: float, delta: float = 0.0, *, label: str | None = None,
              record: Any = None) -> None:
        """Charge ``(epsilon, delta)`` to the budget.

        Parameters
        ----------
        epsilon, delta : float
            The release's guarantee (what basic composition adds up).
        label : str, optional
            Shown in the ledger.
        record : PrivacyRecord or sequence of PrivacyRecord, optional
            The record(s) of the release (several are charged atomically, e.g. one per
            feature); their epsilons and deltas must add up to ``epsilon`` and ``delta``
            (``ValueError`` otherwise, nothing charged). A tight rule builds the release's
            privacy curve from them; the basic rule only checks them.

        Raises
        ------
        BudgetExceededError
            If the spend would exceed the total budget; the state is then
            unchanged.
        """
        eps, dlt = self._request(epsilon, delta)
        label = check_label(label)
        records = _check_records(record, eps, dlt)
        with self._lock:
            fits, composed, parts, said = self._candidate(eps, dlt, records)
            if not fits:
                raise BudgetExceededError(self._refusal(eps, dlt, composed))
            self._spent = (self._spent[0] + eps, self._spent[1] + dlt)
            self._ledger.append((label, float(epsilon), float(delta)))
            if self._tight is not None:
                self._tight.parts = parts
                self._composed = composed
            from .accounting import LedgerEntry

            self._entries.append(LedgerEntry(label, float(epsilon), float(delta), said, *composed))

    def _refusal(self, eps: Fraction, dlt: Fraction, composed: tuple[float, float]) -> str:
        if self._tight is None:
            rem_eps = float(self._total[0] - self._spent[0])
            rem_delta = float(self._total[1] - self._spent[1])
            return (f"requested (epsilon={float(eps)!r}, delta={float(dlt)!r}) exceeds "
                    f"the remaining budget (epsilon={rem_eps!r}, delta={rem_delta!r})")
        return (f"requested (epsilon={float(eps)!r}, delta={float(dlt)!r}) would take the composed guarantee "
                f"({self._rule} composition) to epsilon={composed[0]!r} at delta={composed[1]!r}, over the budget "
                f"(epsilon={float(self._total[0])!r}, delta={float(self._total[1])!r})")

    @property
    def composition(self) -> str:
        """The composition rule: ``"basic"``, ``"zcdp"``, ``"rdp"`` or ``"pld"``."""
        return self._rule

    @property
    def total(self) -> tuple[float, float]:
        """The total (epsilon, delta) budget."""
        return float(self._total[0]), float(self._total[1])

    @property
    def spent(self) -> tuple[float, float]:
        """(epsilon, delta) spent so far: the basic sums, or under a tight rule the composed
        guarantee (see the class notes)."""
        with self._lock:
            if self._tight is not None:
                return self._composed
            return float(self._spent[0]), float(self._spent[1])

    @property
    def remaining(self) -> tuple[float, float]:
        """(epsilon, delta) still available: the budget less :attr:`spent`."""
        with self._lock:
            if self._tight is not None:
                return (float(self._total[0] - _exact(self._composed[0])),
                        float(self._total[1] - _exact(self._composed[1])))
            return (float(self._total[0] - self._spent[0]),
                    float(self._total[1] - self._spent[1]))

    @property
    def ledger(self) -> list[tuple[str | None, float, float]]:
        """Copy of the list of ``(label, epsilon, delta)`` spends, in order."""
        with self._lock:
            return list(self._ledger)

    @property
    def entries(self) -> list[Any]:
        """Copy of the :class:`~pystanprivacy.privacy.accounting.LedgerEntry` list: each spend,
        how its records were counted and the composed (ε, δ) after it."""
        with self._lock:
            return list(self._entries)

    def ledger_table(self) -> str:
        """The ledger as a text table (a reviewer's check of the total, by hand)."""
        entries = self.entries
        eps, delta = self.total
        lines = [f"budget (epsilon={eps!r}, delta={delta!r}), {self._rule} composition",
                 "  #  label  |  (eps, delta) stated  |  composed (eps, delta) after  |  counted as"]
        for i, e in enumerate(entries, 1):
            lines.append(f"{i:3d}  {e.label or '-'}  |  ({e.epsilon:.6g}, {e.delta:.3g})  |  "
                         f"({e.composed_epsilon:.6g}, {e.composed_delta:.3g})  |  {'; '.join(e.counted_as)}")
        return "\n".join(lines)


# --------------------------------------------------------------------------
# Seeded (reproducible, not secure) releases
# --------------------------------------------------------------------------

class ReproducibleNotSecureWarning(UserWarning):
    """A release was made with a seed: reproducible, **not secure**.

    Anyone who knows the seed can regenerate the release's randomness: the noise of a
    mechanism (continuous float64 noise on the seeded path, whose low-order bits can leak,
    Mironov 2012) or, for a one-posterior-sampling draw, Stan's seed and the choice of the
    released draw. NumPy's generators are not cryptographically secure. Use ``seed=None``
    for a real release.
    Issued once per process (:func:`reset_reproducible_warning` re-arms it).
    """


_SEEDED_WARNED = False
_SEEDED_LOCK = threading.Lock()

SEEDED_RANDOMNESS = "seeded numpy generator: reproducible, not secure"
SECURE_RANDOMNESS = "cryptographic (secrets)"


def warn_reproducible_not_secure() -> None:
    """Warn (once per process) that a seeded release is reproducible but not secure."""
    global _SEEDED_WARNED
    with _SEEDED_LOCK:
        if _SEEDED_WARNED:
            return
        _SEEDED_WARNED = True
    import warnings

    warnings.warn(
        "a seed was given: this release is reproducible, NOT secure (its randomness can be "
        "regenerated from the seed: a mechanism's noise, which is then continuous float64 "
        "noise, or a one-posterior-sampling draw's Stan seed and chosen draw); use seed=None "
        "for a real release (floating-point-safe discrete noise, cryptographic randomness). "
        "This warning is shown once per process.",
        ReproducibleNotSecureWarning,
        stacklevel=3,
    )


def reset_reproducible_warning() -> None:
    """Re-arm the once-per-process :class:`ReproducibleNotSecureWarning` (for tests)."""
    global _SEEDED_WARNED
    with _SEEDED_LOCK:
        _SEEDED_WARNED = False


def noise_details(record: PrivacyRecord) -> dict[str, Any]:
    """``secure``, ``randomness`` and ``noise`` of a mechanism's record (those present), to
    carry into the record of a release built from it."""
    return {k: record.details[k] for k in ("secure", "randomness", "noise") if k in record.details}
