"""Shared argument validation for :mod:`pystanprivacy`.

Two kinds of argument are validated here, and they are treated differently:

* **Public parameters** (``epsilon``, ``delta``, ``sensitivity``, bounds,
  seeds, ...). These are not private, so error messages show their value,
  e.g. ``"epsilon must be a finite number > 0, got -1.0"``.
* **Data arrays** (the values a mechanism privatises). These may be private,
  so error messages name the argument and describe the problem
  (``"x contains NaN"``, ``"x contains 3 values outside the declared bounds
  [0, 1]"``) but **never** print the values themselves. Exceptions raised
  while converting data are re-raised ``from None`` so that no value leaks
  through an exception chain either.

Wrong *types* raise :class:`TypeError`; wrong *values* raise
:class:`ValueError`.

Randomness
----------
:func:`check_random_state` turns a ``seed`` argument into a
:class:`numpy.random.Generator`. Seeds give **reproducibility, not
security**: anyone who knows the seed can regenerate (and subtract) the
noise, and NumPy's bit generators are not cryptographically secure. For a
real release leave ``seed=None``: the mechanisms then use exact discrete
noise with cryptographic randomness (:mod:`pystanprivacy.privacy.noise`) instead of
this generator.
"""

from __future__ import annotations

import math
import numbers
import os
import stat
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "SeedLike",
    "check_random_state",
    "check_real",
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_int",
    "check_bounds",
    "check_choice",
    "check_label",
    "check_array",
    "check_radius",
    "check_sampler",
    "declares_integer",
]

SeedLike = int | np.integer | np.random.Generator | np.random.SeedSequence | None

_MAX_REPR = 60

#: the largest finite float64
_FLOAT_MAX = float(np.finfo(np.float64).max)
#: the smallest positive normal float64 (2**-1022); below it precision is lost
_FLOAT_TINY = float(np.finfo(np.float64).tiny)


def _show(value: Any) -> str:
    """Short ``repr`` of a *public* parameter value for error messages."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001  # pragma: no cover - a pathological __repr__ may raise anything
        text = f"<{type(value).__name__}>"
    if len(text) > _MAX_REPR:
        text = text[: _MAX_REPR - 3] + "..."
    return text


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def check_random_state(seed: SeedLike = None) -> np.random.Generator:
    """Turn ``seed`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    seed : int, numpy.random.Generator, numpy.random.SeedSequence or None
        ``None`` draws fresh entropy from the operating system; a
        non-negative int or a ``SeedSequence`` seeds a new PCG64 generator;
        a ``Generator`` is returned as is (it is shared, not copied).

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        For bools, floats, strings, the legacy ``RandomState`` and other
        types.
    ValueError
        For negative integers.

    Notes
    -----
    Seeds give reproducibility, not security: noise generated from a known
    seed can be regenerated and removed. Use ``seed=None`` for releases.

    References
    ----------
    .. [1] NumPy Enhancement Proposal 19, "Random number generator policy",
       https://numpy.org/neps/nep-0019-rng-policy.html
    """
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if _is_bool(seed) or not isinstance(seed, (int, np.integer)):
        raise TypeError(
            "seed must be None, a non-negative int, a numpy.random.Generator "
            f"or a numpy.random.SeedSequence, got {type(seed).__name__} {_show(seed)}"
        )
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {_show(seed)}")
    return np.random.default_rng(int(seed))


def check_real(value: Any, name: str) -> float:
    """Check that ``value`` is a real scalar (not bool/str/complex/array).

    Returns the value as a Python ``float`` (NaN and inf pass; callers that
    need finiteness check it themselves).
    """
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number (int or float), got {type(value).__name__} {_show(value)}")
    return float(value)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Validate a privacy parameter epsilon: a finite real number > 0.

    Raises
    ------
    TypeError
        If ``epsilon`` is not a real number (bool, str, None, complex, list).
    ValueError
        If it is NaN, infinite or <= 0.
    """
    eps = check_real(epsilon, name)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {_show(epsilon)}")
    return eps


def check_delta(delta: Any, name: str = "delta", *, positive: bool = False) -> float:
    """Validate a privacy parameter delta in [0, 1) (or (0, 1) if ``positive``)."""
    d = check_real(delta, name)
    if positive:
        if not (0.0 < d < 1.0):
            raise ValueError(f"{name} must be a finite number in (0, 1), got {_show(delta)}")
    elif not (0.0 <= d < 1.0):
        raise ValueError(f"{name} must be a finite number in [0, 1), got {_show(delta)}")
    return d


def check_positive(value: Any, name: str) -> float:
    """Validate a finite real number > 0 (sensitivity, radius, total, ...)."""
    v = check_real(value, name)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {_show(value)}")
    return v


def check_radius(value: Any, name: str) -> float:
    """Validate a clipping radius: a finite real number >= 2**-1022 (the smallest normal float64).

    A subnormal radius cannot be met by scaling a row in floating point (its coordinates lose
    their precision), so it is refused from its public value, before any data is seen.
    """
    v = check_real(value, name)
    if not (math.isfinite(v) and v >= _FLOAT_TINY):
        raise ValueError(
            f"{name} must be a finite number >= {_FLOAT_TINY!r} (the smallest normal float64; a clipping "
            f"radius below it cannot be met in floating point), got {_show(value)}"
        )
    return v


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """Validate an integer (not bool) with an optional lower bound."""
    if _is_bool(value) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {_show(value)}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {_show(value)}")
    return v


def check_sampler(
    sampler: Any, default: Mapping[str, int], *, min_chains: int = 2, optional: Sequence[str] = ()
) -> dict[str, int]:
    """``default`` sampler settings (chains, warmup, draws) updated by ``sampler``, validated.

    ``sampler`` is ``None`` (use ``default``) or a mapping with a subset of ``default``'s keys
    and of ``optional`` (integer settings without a default, e.g. ``max_treedepth``: kept only
    when given); unknown keys are a ``ValueError``, non-integers a ``TypeError``. ``min_chains``
    is 2 where split R-hat must be computable. Keys other than chains, warmup and draws must
    be ints >= 1.
    """
    out = dict(default)
    allowed = [*default, *(k for k in optional if k not in default)]
    if sampler is not None:
        if not isinstance(sampler, Mapping):
            raise TypeError(f"sampler must be a mapping with keys {allowed}, got {type(sampler).__name__}")
        unknown = sorted(set(sampler) - set(allowed))
        if unknown:
            raise ValueError(f"sampler has unknown keys {unknown}; allowed: {allowed}")
        out.update(sampler)
    check_int(out["chains"], "sampler['chains']", minimum=min_chains)
    check_int(out["warmup"], "sampler['warmup']", minimum=0)
    check_int(out["draws"], "sampler['draws']", minimum=1)
    for key in out.keys() - {"chains", "warmup", "draws"}:
        check_int(out[key], f"sampler[{key!r}]", minimum=1)
    return {k: int(v) for k, v in out.items()}


def check_bounds(bounds: Any, name: str = "bounds") -> tuple[float, float]:
    """Validate a pair ``(lower, upper)`` of finite reals with lower < upper."""
    if (
        isinstance(bounds, (str, bytes))
        or not isinstance(bounds, (Sequence, np.ndarray))
        or (isinstance(bounds, np.ndarray) and bounds.ndim != 1)
    ):
        raise TypeError(
            f"{name} must be a pair (lower, upper) of finite numbers, got {type(bounds).__name__} {_show(bounds)}"
        )
    if len(bounds) != 2:
        raise ValueError(f"{name} must be a pair (lower, upper) of finite numbers, got {_show(bounds)}")
    lower = check_real(bounds[0], f"{name}[0]")
    upper = check_real(bounds[1], f"{name}[1]")
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"{name} must be finite with lower < upper, got {_show(tuple(bounds))}")
    return lower, upper


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Validate that ``value`` is one of the strings in ``choices``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {list(choices)}, got {type(value).__name__} {_show(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {_show(value)}")
    return value


def check_label(label: Any, name: str = "label") -> str | None:
    """Validate an optional text label."""
    if label is not None and not isinstance(label, str):
        raise TypeError(f"{name} must be a str or None, got {type(label).__name__} {_show(label)}")
    return label


_KIND_NAMES = {"b": "bool", "i": "int", "u": "unsigned int", "f": "float"}

#: the leaves of a Python sequence that are real numbers (Python bool is an int, as in NumPy)
_REAL_LEAVES = (int, float, np.integer, np.floating, np.bool_)


def declares_integer(value: Any) -> bool:
    """Whether ``value`` declares integer data: a NumPy array or NumPy scalar of integer dtype.

    Python scalars, lists and tuples declare no dtype: NumPy would infer one from the values
    (``[1, 2**63 - 1]`` is int64, ``[1, 2**63]`` float64, ``[1, 2**64]`` object), so a type
    read from them would depend on the data. They are real data (float64) instead.
    """
    dtype = getattr(value, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind in "iu"


def _saturated_float(v: Any) -> float:
    """``float(v)`` for a real leaf; a Python int beyond the float64 range is the largest
    float64 of its sign (``float`` would raise ``OverflowError``, a refusal by value)."""
    try:
        return float(v)
    except OverflowError:
        return _FLOAT_MAX if v > 0 else -_FLOAT_MAX


def _real_sequence(x: Any, arr: np.ndarray) -> np.ndarray | None:
    """The float64 array of a Python sequence (or scalar) that NumPy stored as dtype object,
    when every leaf is a real number (Python ints beyond int64/uint64 do that); else None."""
    if isinstance(x, np.ndarray) or arr.dtype != object:
        return None
    flat = arr.reshape(-1)
    if not all(isinstance(v, _REAL_LEAVES) for v in flat):
        return None
    return np.fromiter((_saturated_float(v) for v in flat), dtype=np.float64, count=flat.size).reshape(arr.shape)


def _as_numeric_array(x: Any, name: str, kinds: str) -> np.ndarray:
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be an array of numbers, got {type(x).__name__}")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError):
        # The original message may quote data: do not chain it.
        raise TypeError(f"{name} must be an array of numbers (a ragged or non-numeric sequence was given)") from None
    real = _real_sequence(x, arr)
    if real is not None and "f" in kinds:
        arr = real
    if arr.dtype.kind not in kinds:
        allowed = ", ".join(_KIND_NAMES.get(k, k) for k in kinds)
        raise TypeError(f"{name} must have a numeric dtype ({allowed}), got dtype {arr.dtype}")
    return arr


def _check_shape(
    arr: np.ndarray, name: str, ndim: int | Sequence[int] | None, shape: Sequence[int | None] | None
) -> None:
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = allowed[0] if len(allowed) == 1 else " or ".join(map(str, allowed))
            raise ValueError(f"{name} must have {want} dimension(s), got ndim={arr.ndim}")
    if shape is not None:
        shape = tuple(shape)
        ok = arr.ndim == len(shape) and all(want is None or want == got for want, got in zip(shape, arr.shape))
        if not ok:
            spec = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {spec}, got shape {arr.shape}")


def _check_values(
    arr: np.ndarray, name: str, *, allow_nan: bool, allow_inf: bool, bounds: tuple[float, float] | None, integer: bool
) -> None:
    if arr.dtype.kind == "f":
        n_nan = int(np.count_nonzero(np.isnan(arr)))
        if n_nan and not allow_nan:
            raise ValueError(f"{name} contains NaN ({n_nan} value(s)); NaN is not allowed")
        n_inf = int(np.count_nonzero(np.isinf(arr)))
        if n_inf and not allow_inf:
            raise ValueError(f"{name} contains {n_inf} infinite value(s); only finite values are allowed")
        if integer:
            finite = arr[np.isfinite(arr)]
            n_frac = int(np.count_nonzero(finite != np.round(finite)))
            if n_frac:
                raise ValueError(f"{name} contains {n_frac} non-integer value(s); integers are required")
            n_big = int(np.count_nonzero(np.abs(finite) >= 2.0**62))
            if n_big:
                raise ValueError(f"{name} contains {n_big} value(s) too large to represent as int64")
    if integer and arr.dtype.kind == "u" and arr.dtype.itemsize >= 8:
        n_big = int(np.count_nonzero(arr > np.iinfo(np.int64).max))
        if n_big:
            raise ValueError(f"{name} contains {n_big} value(s) too large to represent as int64")
    if bounds is not None:
        lower, upper = bounds
        with np.errstate(invalid="ignore"):
            n_out = int(np.count_nonzero((arr < lower) | (arr > upper)))
        if n_out:
            raise ValueError(f"{name} contains {n_out} value(s) outside the declared bounds [{lower:g}, {upper:g}]")


def check_array(
    x: Any,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    kinds: str = "biuf",
    allow_nan: bool = False,
    allow_inf: bool = False,
    bounds: tuple[float, float] | None = None,
    integer: bool = False,
) -> np.ndarray:
    """Validate a (possibly private) data array without revealing its values.

    Parameters
    ----------
    x : array_like
        The data. Scalars are accepted (0-d arrays).
    name : str
        Argument name used in error messages.
    ndim : int or sequence of int, optional
        Allowed number(s) of dimensions.
    shape : sequence of (int or None), optional
        Required shape; ``None`` entries match any length.
    kinds : str, default "biuf"
        Allowed NumPy dtype kinds (``b`` bool, ``i`` int, ``u`` unsigned,
        ``f`` float). Complex, object and string arrays are never allowed.
    allow_nan, allow_inf : bool, default False
        Whether NaN / infinite values are accepted.
    bounds : (float, float), optional
        Declared closed interval the values must lie in.
    integer : bool, default False
        Require integral values; the result then has dtype int64.

    Returns
    -------
    numpy.ndarray
        A new float64 array (int64 if ``integer``); never a view of ``x``.

    Notes
    -----
    The outcome never depends on the magnitude of a Python number: a sequence whose leaves
    are real numbers is accepted whatever their size (NumPy stores Python ints beyond uint64
    as dtype object; they are converted here as ``float`` does, a Python int beyond the
    float64 range becoming the largest float64 of its sign), so two inputs that differ in
    one value are both accepted or both refused for a type (e.g. a string).

    Raises
    ------
    TypeError
        Wrong container or dtype.
    ValueError
        Wrong shape, NaN/inf, values outside ``bounds`` or non-integers. The
        message gives counts, never the values.
    """
    kinds = "".join(k for k in kinds if k in "biuf")
    arr = _as_numeric_array(x, name, kinds)
    _check_shape(arr, name, ndim, shape)
    if bounds is not None:
        bounds = check_bounds(bounds, "bounds")
    _check_values(arr, name, allow_nan=allow_nan, allow_inf=allow_inf, bounds=bounds, integer=integer)
    if integer:
        return arr.astype(np.int64, copy=True)
    return arr.astype(np.float64, copy=True)


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular_file(
    path: Any, *, what: str, reader: str, writer: str, error: type[Exception]
) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``path`` and its ``fstat``, refused unless it is a regular file.

    Opened with ``O_NONBLOCK`` (opening a FIFO for reading then returns at once instead of
    waiting for a writer) and ``O_NOCTTY``, and judged by ``fstat`` of that descriptor, so the
    file checked is the file read (no race between a check by name and the open); the
    descriptor is blocking again when returned, and the caller closes it. Refusals raise
    ``error`` naming ``what`` (e.g. ``"posterior file"``), the path, what it is, and that
    ``reader`` reads only a regular file written by ``writer``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise error(f"cannot open {what} {str(path)!r}: {exc.strerror or type(exc).__name__}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"{what} {str(path)!r} is {_file_kind(info.st_mode)}; {reader} reads only a regular file "
                f"written by {writer}"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info
