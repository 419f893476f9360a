"""Stable descriptions of values, by content: what the runner's task keys
(:func:`pystanprivacy.run.runner.task_key`) and the Stan fit checkpoints
(:mod:`pystanprivacy.sampling.checkpoints`) are digests of. A shared bottom layer: it imports no
part of the package. Changing what :func:`fingerprint` returns changes every saved task's key.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


class Unstable(Exception):
    """An argument without a stable fingerprint (its ``repr`` shows a memory address)."""


def fingerprint(value: Any, *, portable: bool = False) -> Any:
    """A JSON-able description of ``value`` that changes whenever the value does: arrays and
    tables by their full contents (their ``repr`` elides the middle of large ones).

    ``portable=True`` describes floating-point arrays and table columns by their values with
    every significand rounded to 24 bits (float32's precision, float64's range), not by their
    exact bytes: arrays computed through BLAS/LAPACK (a PCA, a solve) differ in their last bits
    between CPUs (OpenBLAS picks its kernels by CPU), ~1e-15 relative. Values that differ by
    more than one part in 2**24 always get different descriptions; values that differ in their
    last bits get the same one unless one lies within that distance of a rounding boundary
    (~1e-8 of them). Other values are described exactly as without it."""
    if portable:
        return _portable(value)
    if value is None or isinstance(value, (bool, str, int)):
        return [type(value).__name__, value]
    if isinstance(value, float):
        return ["float", value.hex()]
    if isinstance(value, np.generic):
        return ["np." + type(value).__name__, repr(value.item())]
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            return ["ndarray-object", list(value.shape), [fingerprint(v) for v in value.ravel().tolist()]]
        data = np.ascontiguousarray(value)
        return ["ndarray", str(value.dtype), list(value.shape), hashlib.sha256(data.tobytes()).hexdigest()]
    if isinstance(value, (pd.DataFrame, pd.Series)):
        hashed = pd.util.hash_pandas_object(value, index=True).to_numpy()
        cols = [str(c) for c in value.columns] if isinstance(value, pd.DataFrame) else [str(value.name)]
        dtypes = [str(d) for d in (value.dtypes if isinstance(value, pd.DataFrame) else [value.dtype])]
        return ["pandas", cols, dtypes, hashlib.sha256(hashed.tobytes()).hexdigest()]
    if isinstance(value, np.random.SeedSequence):
        return ["SeedSequence", repr(value.entropy), list(value.spawn_key), value.pool_size]
    if isinstance(value, Mapping):
        return ["mapping", sorted(([repr(k), fingerprint(v)] for k, v in value.items()), key=lambda kv: kv[0])]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [fingerprint(v) for v in value]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(json.dumps(fingerprint(v)) for v in value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ["dataclass", type(value).__qualname__,
                fingerprint({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})]
    if isinstance(value, os.PathLike):
        return ["path", os.fspath(value)]
    text = repr(value)
    if " at 0x" in text:
        raise Unstable(text)
    return ["repr", type(value).__qualname__, text]


def _is_float_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def _round24(value: np.ndarray) -> np.ndarray:
    """``value`` (float or complex) with every significand rounded to 24 bits, the exponent kept
    (unlike a float32 cast, nothing overflows); NaN and infinities unchanged."""
    x = np.asarray(value)
    x = np.stack([x.real, x.imag], axis=-1) if x.dtype.kind == "c" else x
    x = np.ascontiguousarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        m, e = np.frexp(x)
        out = np.ldexp(np.round(m * 2.0**24) / 2.0**24, e)
    return np.where(np.isfinite(x), out, x)


def _portable(value: Any) -> Any:
    if _is_float_array(value):
        return ["ndarray~24bit", str(value.dtype), list(value.shape), hashlib.sha256(_round24(value).tobytes()).hexdigest()]
    if isinstance(value, (pd.DataFrame, pd.Series)) and has_float_data(value):
        exact = fingerprint(value)
        if isinstance(value, pd.Series):
            rounded = value.copy()
            rounded[:] = _round24(value.to_numpy())
        else:
            rounded = value.copy()
            for j, t in enumerate(value.dtypes):
                if t.kind == "f":
                    rounded.isetitem(j, _round24(value.iloc[:, j].to_numpy()))
        return ["pandas~24bit", exact[1], exact[2], fingerprint(rounded)[3]]
    if isinstance(value, Mapping):
        return ["mapping", sorted(([repr(k), _portable(v)] for k, v in value.items()), key=lambda kv: kv[0])]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_portable(v) for v in value]]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ["dataclass", type(value).__qualname__,
                _portable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})]
    return fingerprint(value)


def has_float_data(value: Any) -> bool:
    """Whether ``value`` holds a floating-point array or table column (where
    ``fingerprint(value, portable=True)`` and ``fingerprint(value)`` differ in kind)."""
    if _is_float_array(value):
        return True
    if isinstance(value, pd.DataFrame):
        return any(t.kind == "f" for t in value.dtypes)
    if isinstance(value, pd.Series):
        return value.dtype.kind == "f"
    if isinstance(value, Mapping):
        return any(has_float_data(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_float_data(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(has_float_data(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


__all__ = ["Unstable", "fingerprint", "has_float_data"]
