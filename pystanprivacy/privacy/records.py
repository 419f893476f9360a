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
  concurrent spending can never exceed the budget. :meth:`PrivacyAccountant.open` keeps the
  budget in a file shared by processes (:mod:`pystanprivacy.privacy.ledger`).

References
----------
.. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
   Privacy", Foundations and Trends in Theoretical Computer Science 9(3-4),
   2014. Theorem 3.16 (basic sequential composition: mechanisms that are
   (eps_i, delta_i)-DP compose to (sum eps_i, sum delta_i)-DP).
"""

from __future__ import annotations

import json
import math
import os
import threading
import types
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from fractions import Fraction
from pathlib import Path
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
    open_regular_file,
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
    "ReleaseFileError",
    "RELEASE_FORMAT",
    "RELEASE_FORMAT_VERSION",
    "MAX_RELEASE_FILE_BYTES",
    "check_record_consistent",
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
        f"{path} must contain only str, int, float, bool, None, lists and mappings, got {type(value).__name__}"
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
        set_ = lambda name, value: object.__setattr__(self, name, value)
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
            raise TypeError("values must be an array of numbers (a ragged or non-numeric sequence was given)") from None
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"values must be numeric, got dtype {arr.dtype}")
        if arr.size == 0:  # no mechanism releases nothing: refuse forged or truncated values
            raise ValueError(f"values must hold at least one value (a release is never empty), got shape {arr.shape}")
        if arr.dtype.kind == "f":
            n_bad = int(np.count_nonzero(~np.isfinite(arr)))
            if n_bad:  # no mechanism releases NaN/inf: refuse forged or corrupted values
                raise ValueError(
                    f"values contains {n_bad} non-finite value(s) (NaN or inf); a release holds finite numbers only"
                )
        arr.flags.writeable = False
        object.__setattr__(self, "values", arr)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Release):
            return NotImplemented
        return (
            self.record == other.record
            and self.values.shape == other.values.shape
            and bool(np.array_equal(self.values, other.values, equal_nan=True))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Release(shape={self.values.shape}, dtype={self.values.dtype}, record={self.record!r})"

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
            raise ValueError(
                f"d is missing the key(s) {missing}; a Release dict needs 'values' and "
                "'record' ('shape' optional), as written by Release.to_dict"
            )
        unknown = sorted(str(key) for key in set(d) - {"values", "record", "shape"})
        if unknown:
            raise ValueError(f"d has unknown key(s) {unknown}; allowed: 'values', 'record', 'shape'")
        try:
            values = np.asarray(d["values"])
        except (TypeError, ValueError):
            raise TypeError(
                "d['values'] must be an array of numbers (a ragged or non-numeric sequence was given)"
            ) from None
        if d["values"] is None:
            raise TypeError(
                "d['values'] is None; it must be an array of numbers (nested lists, as written by Release.to_dict)"
            )
        if values.dtype.kind not in "biuf":  # checked before 'shape', which would count the values
            raise TypeError(f"d['values'] must be an array of numbers, got dtype {values.dtype}")
        if "shape" in d:
            shape = d["shape"]
            if (
                isinstance(shape, (str, bytes))
                or not isinstance(shape, (list, tuple))
                or not all(isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) for n in shape)
            ):
                raise TypeError(f"d['shape'] must be a list of ints, got {type(shape).__name__}")
            if math.prod(int(n) for n in shape) != values.size or any(int(n) < 0 for n in shape):
                raise ValueError(f"d['shape'] = {list(shape)} does not match the {values.size} value(s) given")
            values = values.reshape(tuple(int(n) for n in shape))
        return cls(values=values, record=PrivacyRecord.from_dict(d["record"]))

    # ------------------------------------------------------------ published releases
    def save(self, path: str | os.PathLike) -> Path:
        """Publish this release as a JSON file that :meth:`load` reads back.

        The file holds ``format`` (``"pystanprivacy.Release"``), ``version``
        (:data:`RELEASE_FORMAT_VERSION`), the values (nested lists; integers stay integers),
        their ``shape`` and the record (:meth:`PrivacyRecord.to_dict`). Everything in it is
        public: the privatised values and how they were made. An existing file is replaced.

        Returns
        -------
        pathlib.Path
            The path written.
        """
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise TypeError(f"path must be a non-empty str or os.PathLike, got {type(path).__name__}")
        path = Path(path)
        text = json.dumps(
            {"format": RELEASE_FORMAT, "version": RELEASE_FORMAT_VERSION, **self.to_dict()}, allow_nan=False
        )
        path.write_text(text + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Release:
        """A release published with :meth:`save`, validated before it is returned.

        Checked, in order: ``path`` names a regular file (a directory, FIFO or device is
        refused from ``fstat`` of the opened descriptor, before anything is read) of at most
        :data:`MAX_RELEASE_FILE_BYTES`; it is UTF-8 JSON (no NaN/Infinity, no repeated key)
        holding exactly ``format``, ``version``, ``values``, ``shape`` and ``record``, of
        this format and version; :meth:`from_dict` accepts it (every record field, finite
        non-empty values); and the record is consistent with its mechanism
        (:func:`check_record_consistent`: the noise scale is the one the mechanism's own
        calibration gives for the stated epsilon, delta and sensitivity, and the values have
        the type and range the mechanism outputs). A file edited to state a smaller noise,
        a larger epsilon, or values no such release can hold is refused.

        Whether the values have the shape the record states (``n`` reports, ``datasets``
        data sets) depends on the model that reads them: the models check it in ``fit``
        (:func:`pystanprivacy.models.base.check_release_matches_record`).

        Raises
        ------
        TypeError
            ``path`` is not a str or path-like.
        ReleaseFileError
            (a ``ValueError``) for every file it cannot use: the message names ``path`` and
            what is wrong, never a value of the release or the reader's message.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if not os.fspath(path):  # Path("") is the working directory
            raise ReleaseFileError("path is empty; give the JSON file written by Release.save")
        path = Path(path)
        document = _read_release_json(path)
        unknown = sorted(set(document) - set(_FILE_KEYS))
        missing = [key for key in _FILE_KEYS if key not in document]
        if unknown or missing:
            raise _refuse_file(
                path, f"it must hold exactly the keys {list(_FILE_KEYS)}; missing {missing}, unknown {unknown}"
            )
        if document["format"] != RELEASE_FORMAT:
            raise _refuse_file(path, f"its 'format' must be {RELEASE_FORMAT!r}")
        version = document["version"]
        if isinstance(version, bool) or version != RELEASE_FORMAT_VERSION:
            raise _refuse_file(
                path,
                f"its 'version' must be {RELEASE_FORMAT_VERSION} (this library reads "
                f"version {RELEASE_FORMAT_VERSION} only), got {version!r}"[:300],
            )
        try:
            release = cls.from_dict({key: document[key] for key in ("values", "shape", "record")})
            check_record_consistent(release)
        except (TypeError, ValueError, ArithmeticError) as exc:  # their messages never quote values
            raise _refuse_file(path, str(exc)) from None
        return release


# --------------------------------------------------------------------------
# Published releases: the file format and the consistency of a record
# --------------------------------------------------------------------------

#: the ``format`` a published release file states (:meth:`Release.save`)
RELEASE_FORMAT = "pystanprivacy.Release"
#: the file format's version; :meth:`Release.load` reads this version only
RELEASE_FORMAT_VERSION = 1
#: the largest release file :meth:`Release.load` reads (64 MiB)
MAX_RELEASE_FILE_BYTES = 64 * 2**20
_FILE_KEYS = ("format", "version", "values", "shape", "record")
#: relative tolerance between a record's scale and its mechanism's calibration (float64
#: round-off of a JSON round trip is exact; the calibrations are deterministic)
_SCALE_RTOL = 1e-12


class ReleaseFileError(ValueError):
    """A file that :meth:`Release.load` cannot use: not a regular file, too large, not
    UTF-8 JSON of the release format, or a release whose record does not validate or is
    inconsistent with its mechanism. The message names the path and what is wrong; it never
    quotes a value of the release, nor the message of the JSON reader (which quotes the
    file's text)."""


def _refuse_file(path: Path, what: str) -> ReleaseFileError:
    return ReleaseFileError(f"{str(path)!r} is not a release file written by Release.save: {what}")


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key is repeated")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _read_release_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``, read from a descriptor judged by ``fstat`` (a regular file
    of at most :data:`MAX_RELEASE_FILE_BYTES`), as :meth:`Posterior.load
    <pystanprivacy.sampling.posterior.Posterior.load>` reads its files (the privacy layer does
    not import the sampling layer)."""
    fd, info = open_regular_file(
        path, what="release file", reader="Release.load", writer="Release.save", error=ReleaseFileError
    )
    if info.st_size > MAX_RELEASE_FILE_BYTES:
        os.close(fd)
        raise _refuse_file(
            path, f"it holds {info.st_size} bytes, more than the {MAX_RELEASE_FILE_BYTES} a release file may hold"
        )
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(MAX_RELEASE_FILE_BYTES + 1)
    if len(raw) > MAX_RELEASE_FILE_BYTES:  # grew after fstat
        raise _refuse_file(path, f"it holds more than the {MAX_RELEASE_FILE_BYTES} bytes a release file may hold")
    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_repeats, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):  # the reader's message quotes the text
        raise _refuse_file(path, "it is not UTF-8 JSON without NaN/Infinity and repeated keys") from None
    if not isinstance(document, dict):
        raise _refuse_file(path, f"it must hold a JSON object, got {type(document).__name__}")
    return document


def check_record_consistent(release: Release) -> None:
    """Refuse a release whose record its own mechanism could not have written.

    For the additive mechanisms (``"laplace"``, ``"gaussian"``, ``"analytic_gaussian"``) the
    record must state a sensitivity in the mechanism's norm and the noise scale that the
    mechanism's calibration gives for the record's epsilon, delta and sensitivity: the
    continuous scale (``Mechanism.scale``) for a seeded or published release, the discrete
    plan's scale (same grid coordinates, same integer declaration) for a secure one.
    Values on the integer grid of a secure release must be integers. Randomised response and
    OUE records must state the mechanism's own probabilities (``p_keep``; ``p``, ``q``,
    ``d``), and their values must be outputs of the mechanism (bits). Other mechanisms
    (``"ops"``...) are checked by :class:`PrivacyRecord` alone. Every comparison uses public
    quantities; a message never quotes a value.

    Raises
    ------
    ValueError
        Naming the record field that is inconsistent and what the mechanism states.

    References
    ----------
    .. [1] Dwork & Roth (2014), Theorem 3.6 (Laplace), Theorem A.1 (Gaussian); Balle &
       Wang (2018) (analytic Gaussian); Canonne, Kamath & Steinke (2020) (discrete noise):
       a record's guarantee holds for the scale its calibration gives, not for another.
    """
    from . import mechanisms as mech

    rec = release.record
    additive = {"laplace": mech.Laplace, "gaussian": mech.Gaussian, "analytic_gaussian": mech.AnalyticGaussian}
    parts = _composed_parts(rec)
    if parts is not None:  # a composition: each part against its own calibration
        _check_parts(rec, parts, {**additive, "randomized_response": mech.RandomizedResponse})
    elif rec.mechanism == "gaussian" and rec.details.get("source") == "opendp":
        _check_opendp_gaussian(rec)  # calibrated by OpenDP's zCDP map, not the classical one
    elif rec.mechanism in additive:
        _check_additive(release, additive[rec.mechanism])
    elif rec.mechanism == "randomized_response":
        m = mech.RandomizedResponse(epsilon=rec.epsilon, seed=0)
        _check_stated(rec, {"p_keep": m.p_keep})
        _check_delta_zero(rec)
        m._check_output(release.values)
    elif rec.mechanism == "oue":
        d = rec.details.get("d")
        if isinstance(d, bool) or not isinstance(d, int) or d < 2:
            raise ValueError(f"record of mechanism 'oue' must state details['d'] (an int >= 2), got {d!r}")
        m = mech.OptimalUnaryEncoding(epsilon=rec.epsilon, d=d, seed=0)
        _check_stated(rec, {"p": m.p, "q": m.q})
        _check_delta_zero(rec)
        m._check_output(release.values)


def _check_opendp_gaussian(rec: PrivacyRecord) -> None:
    """An imported OpenDP Gaussian record (:mod:`pystanprivacy.interop.opendp`): its ρ is the
    zCDP map's ``(sensitivity / scale)^2 / 2`` and its (ε, δ) is no smaller than that ρ's
    conversion (Canonne, Kamath & Steinke 2020, Prop. 12), so a smaller noise or a larger
    stated guarantee than the measurement's is refused."""
    from .accounting import zcdp_epsilon

    rho = rec.details.get("zcdp_rho")
    if rec.sensitivity is None or rec.scale is None or rec.sensitivity_norm != "l2":
        raise ValueError("record of an OpenDP Gaussian must state scale, sensitivity and sensitivity_norm 'l2'")
    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not rho > 0:
        raise ValueError(f"record of an OpenDP Gaussian must state details['zcdp_rho'] > 0, got {rho!r}")
    want = 0.5 * (rec.sensitivity / rec.scale) ** 2
    if not math.isclose(rho, want, rel_tol=1e-9, abs_tol=0.0):
        raise ValueError(
            f"record of an OpenDP Gaussian states zcdp_rho = {rho!r}, but its sensitivity and scale give {want!r}"
        )
    if rec.delta <= 0 or rec.epsilon < zcdp_epsilon(rho, rec.delta) * (1 - 1e-12):
        raise ValueError(
            f"record of an OpenDP Gaussian states (epsilon, delta) = ({rec.epsilon!r}, {rec.delta!r}), smaller than "
            f"its rho = {rho!r} gives"
        )


def _composed_parts(rec: PrivacyRecord) -> list[dict[str, Any]] | None:
    """The parts of a record that composes several releases, each as ``{mechanism, epsilon,
    delta, sensitivity, scale | p_keep}``: ``details["per_feature"]`` (one release of the
    record's mechanism per feature, sequential composition) or ``details["features"]`` and
    ``details["label"]`` with ``details["budget_split"]`` (a local release of inputs and
    labels); ``None`` for a record of one release."""
    d = rec.details
    if "per_feature" in d:
        items = d["per_feature"]
        if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, Mapping) for i in items):
            raise ValueError("record details['per_feature'] must be a non-empty list of mappings")
        return [
            {
                "mechanism": rec.mechanism,
                "delta": 0.0,
                **{k: i.get(k) for k in ("epsilon", "sensitivity")},
                "scale": i.get("scale"),
                "name": f"per_feature[{n}]",
            }
            for n, i in enumerate(items)
        ]
    if "budget_split" in d and isinstance(d.get("features"), Mapping):
        split = d["budget_split"]
        if not isinstance(split, Mapping):
            raise ValueError("record details['budget_split'] must be a mapping")
        out = []
        for part in ("features", "label"):
            item = d.get(part)
            if not isinstance(item, Mapping):
                # a file's content is wrong, not an argument's type: ValueError
                raise ValueError(f"record details[{part!r}] must be a mapping (the part's mechanism)")  # noqa: TRY004
            key = "features" if part == "features" else "label"
            out.append(
                {
                    "mechanism": item.get("mechanism"),
                    "epsilon": split.get(f"epsilon_{key}"),
                    "delta": split.get(f"delta_{key}"),
                    "sensitivity": item.get("sensitivity"),
                    "scale": item.get("sigma"),
                    "p_keep": item.get("p_keep"),
                    "name": part,
                }
            )
        return out
    return None


def _check_parts(rec: PrivacyRecord, parts: list[dict[str, Any]], classes: Mapping[str, type]) -> None:
    """Each part's noise is at least what its mechanism's calibration needs for the part's
    (epsilon, delta, sensitivity) (a secure release's discrete noise may be larger, never
    smaller), randomised response states its own ``p_keep``, and the parts' epsilons and
    deltas add up to the record's (basic composition)."""
    for total, key in ((rec.epsilon, "epsilon"), (rec.delta, "delta")):
        values = [p[key] for p in parts]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
            raise ValueError(f"record parts must each state a numeric {key}, got {values!r}"[:300])
        if not math.isclose(math.fsum(values), total, rel_tol=1e-9, abs_tol=0.0):
            raise ValueError(f"record states {key} = {total!r}, but its parts add up to {math.fsum(values)!r}")
    for part in parts:
        cls = classes.get(part["mechanism"])
        if cls is None:
            raise ValueError(
                f"record part {part['name']} has mechanism {part['mechanism']!r}; allowed: {sorted(classes)}"
            )
        if part["mechanism"] == "randomized_response":
            m = cls(epsilon=part["epsilon"], seed=0)
            if not (isinstance(part["p_keep"], float) and math.isclose(part["p_keep"], m.p_keep, rel_tol=_SCALE_RTOL)):
                raise ValueError(
                    f"record part {part['name']} states p_keep = {part['p_keep']!r}, but randomized "
                    f"response at epsilon = {part['epsilon']!r} gives {m.p_keep!r}"
                )
            continue
        args = {"epsilon": part["epsilon"], "sensitivity": part["sensitivity"]}
        if part["mechanism"] != "laplace":
            args["delta"] = part["delta"]
        needed = cls(**args, seed=0).scale
        scale = part["scale"]
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale < needed * (1 - _SCALE_RTOL):
            raise ValueError(
                f"record part {part['name']} states noise scale {scale!r}, but {part['mechanism']!r} "
                f"at epsilon = {part['epsilon']!r}, sensitivity = {part['sensitivity']!r} needs at "
                f"least {needed!r}; the stated guarantee does not hold for the stated noise"
            )


def _check_delta_zero(rec: PrivacyRecord) -> None:
    if rec.delta != 0.0:
        raise ValueError(
            f"record of mechanism {rec.mechanism!r} states delta = {rec.delta!r}; the mechanism "
            "is pure epsilon-DP (delta = 0)"
        )


def _check_stated(rec: PrivacyRecord, expected: Mapping[str, float]) -> None:
    for key, want in expected.items():
        got = rec.details.get(key)
        if (
            isinstance(got, bool)
            or not isinstance(got, (int, float))
            or not math.isclose(got, want, rel_tol=_SCALE_RTOL, abs_tol=0.0)
        ):
            raise ValueError(
                f"record of mechanism {rec.mechanism!r} states details[{key!r}] = {got!r}, but the "
                f"mechanism at epsilon = {rec.epsilon!r} gives {want!r}"
            )


def _check_additive(release: Release, cls: type) -> None:
    rec = release.record
    name = rec.mechanism
    if rec.sensitivity is None or rec.scale is None:
        raise ValueError(
            f"record of mechanism {name!r} must state sensitivity and scale, got "
            f"sensitivity = {rec.sensitivity!r}, scale = {rec.scale!r}"
        )
    if rec.sensitivity_norm != cls.sensitivity_norm:
        raise ValueError(
            f"record of mechanism {name!r} states sensitivity_norm = {rec.sensitivity_norm!r}; "
            f"the mechanism's sensitivity is in {cls.sensitivity_norm!r}"
        )
    args = {"epsilon": rec.epsilon, "sensitivity": rec.sensitivity}
    if name == "laplace":
        _check_delta_zero(rec)
    else:
        args["delta"] = rec.delta
    m = cls(**args, seed=0)  # only its calibration is used; nothing is drawn
    expected, how = m.scale, "its calibration"
    details = rec.details
    if "grid_exponent" in details:  # a secure release: the discrete plan's scale
        changed = details.get("changed_coordinates")
        if isinstance(changed, bool) or not isinstance(changed, int) or changed < 1:
            raise ValueError(
                f"record of mechanism {name!r} states a noise grid but details['changed_coordinates'] "
                f"= {changed!r} (an int >= 1 is required)"
            )
        integer = "(integer input)" in str(details.get("noise", ""))
        plan = m._plan(np.zeros(1, dtype=np.int64 if integer else np.float64), integer=integer, changed=changed)
        expected, how = plan.scale, "its discrete noise plan"
        if plan.grid_exponent != details["grid_exponent"]:
            raise ValueError(
                f"record of mechanism {name!r} states details['grid_exponent'] = "
                f"{details['grid_exponent']!r}; {how} gives {plan.grid_exponent!r}"
            )
        if "scale_ratios" not in details:  # rescaled reports are not on the grid
            _check_on_grid(release, details, plan.grid_exponent)
    if not math.isclose(rec.scale, expected, rel_tol=_SCALE_RTOL, abs_tol=0.0):
        raise ValueError(
            f"record of mechanism {name!r} states scale = {rec.scale!r}, but {how} gives "
            f"{expected!r} for epsilon = {rec.epsilon!r}, delta = {rec.delta!r}, sensitivity = "
            f"{rec.sensitivity!r}; the stated guarantee does not hold for the stated noise"
        )


def _check_on_grid(release: Release, details: Mapping[str, Any], k: int) -> None:
    """Values of a secure release lie on its noise grid ``2^k`` (within its exact range, where
    the output is exactly the noisy grid point: integers on the integer grid); counted, never
    shown. A value the mechanism cannot output means the values are not this record's."""
    values = np.asarray(release.values, dtype=np.float64)
    exact = details.get("exact_range")
    bound = float(exact[1]) if isinstance(exact, (list, tuple)) and len(exact) == 2 else 0.0
    inside = np.abs(values) <= bound
    steps = np.ldexp(values, -k)
    n_bad = int(np.count_nonzero(inside & (steps != np.round(steps))))
    if n_bad:
        raise ValueError(
            f"values hold {n_bad} value(s) off the noise grid 2^{k} that the record states "
            f"(details['grid_exponent']); its mechanism outputs grid points only"
        )


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
        raise TypeError(
            f"record must be a PrivacyRecord, a non-empty list or tuple of them, or None, "
            f"got {type(record).__name__}{' (empty)' if isinstance(record, (list, tuple)) else ''}"
        )
    bad = [type(r).__name__ for r in records if not isinstance(r, PrivacyRecord)]
    if bad:
        raise TypeError(f"record must hold only PrivacyRecord objects, got {bad[0]}")
    for name, want, got in (
        ("epsilon", eps, sum((_exact(r.epsilon) for r in records), Fraction(0))),
        ("delta", dlt, sum((_exact(r.delta) for r in records), Fraction(0))),
    ):
        if abs(got - want) > _RECORD_TOLERANCE * max(want, got):
            raise ValueError(
                f"the record(s) state {name} = {float(got)!r} in all, but the spend charges "
                f"{name}={float(want)!r}; they must describe the same release"
            )
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
        return (
            f"PrivacyAccountant(epsilon={float(self._total[0])!r}, "
            f"delta={float(self._total[1])!r}{rule}, spent=({eps!r}, {delta!r}))"
        )

    @staticmethod
    def _request(epsilon: Any, delta: Any) -> tuple[Fraction, Fraction]:
        return _exact(check_epsilon(epsilon)), _exact(check_delta(delta))

    def _fits(self, eps: Fraction, delta: Fraction) -> bool:
        return self._spent[0] + eps <= self._total[0] and self._spent[1] + delta <= self._total[1]

    def _counted(
        self, records: tuple[PrivacyRecord, ...], eps: Fraction, dlt: Fraction
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

    def _candidate(
        self, eps: Fraction, dlt: Fraction, records: tuple[PrivacyRecord, ...]
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

    @classmethod
    def open(cls, path: str | os.PathLike, **options: Any) -> Any:
        """A budget stored in a ledger file, created when it does not exist yet.

        Shorthand for :meth:`PrivacyLedger.open <pystanprivacy.privacy.ledger.PrivacyLedger.open>`
        (same arguments: ``dataset``, ``epsilon``, ``delta``, ``composition``, ``timeout``):
        a :class:`~pystanprivacy.privacy.ledger.PrivacyLedger`, an accountant whose every
        spend is one synced database transaction, shared by every process that opens the file.
        """
        from .ledger import PrivacyLedger

        return PrivacyLedger.open(path, **options)

    def spend(self, epsilon: float, delta: float = 0.0, *, label: str | None = None, record: Any = None) -> Any:
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

        Returns
        -------
        None
            In memory; a :class:`~pystanprivacy.privacy.ledger.PrivacyLedger` returns the
            :class:`~pystanprivacy.privacy.ledger.LedgerReference` of the stored entry, which
            the mechanisms stamp on the release's record.

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
            self._apply(eps, dlt, label, float(epsilon), float(delta), composed, parts, said)
        return None

    def _apply(
        self,
        eps: Fraction,
        dlt: Fraction,
        label: str | None,
        epsilon: float,
        delta: float,
        composed: tuple[float, float],
        parts: Any,
        said: tuple[str, ...],
    ) -> None:
        """Under the lock: add a spend that :meth:`_candidate` found to fit."""
        self._spent = (self._spent[0] + eps, self._spent[1] + dlt)
        self._ledger.append((label, epsilon, delta))
        if self._tight is not None:
            self._tight.parts = parts
            self._composed = composed
        from .accounting import LedgerEntry

        self._entries.append(LedgerEntry(label, epsilon, delta, said, *composed))

    def _refusal(self, eps: Fraction, dlt: Fraction, composed: tuple[float, float]) -> str:
        if self._tight is None:
            rem_eps = float(self._total[0] - self._spent[0])
            rem_delta = float(self._total[1] - self._spent[1])
            return (
                f"requested (epsilon={float(eps)!r}, delta={float(dlt)!r}) exceeds "
                f"the remaining budget (epsilon={rem_eps!r}, delta={rem_delta!r})"
            )
        return (
            f"requested (epsilon={float(eps)!r}, delta={float(dlt)!r}) would take the composed guarantee "
            f"({self._rule} composition) to epsilon={composed[0]!r} at delta={composed[1]!r}, over the budget "
            f"(epsilon={float(self._total[0])!r}, delta={float(self._total[1])!r})"
        )

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
                return (
                    float(self._total[0] - _exact(self._composed[0])),
                    float(self._total[1] - _exact(self._composed[1])),
                )
            return (float(self._total[0] - self._spent[0]), float(self._total[1] - self._spent[1]))

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
        lines = [
            f"budget (epsilon={eps!r}, delta={delta!r}), {self._rule} composition",
            "  #  label  |  (eps, delta) stated  |  composed (eps, delta) after  |  counted as",
        ]
        for i, e in enumerate(entries, 1):
            lines.append(
                f"{i:3d}  {e.label or '-'}  |  ({e.epsilon:.6g}, {e.delta:.3g})  |  "
                f"({e.composed_epsilon:.6g}, {e.composed_delta:.3g})  |  {'; '.join(e.counted_as)}"
            )
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
