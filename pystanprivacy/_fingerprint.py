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

    ``portable=True`` describes floating-point arrays and table columns by their dtype, shape
    and non-finite entries only, not by their values (which :func:`portable_fingerprint`
    sketches); other values are described exactly as without it."""
    if portable:
        return _portable(value, [])
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
        return [
            "dataclass",
            type(value).__qualname__,
            fingerprint({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}),
        ]
    if isinstance(value, os.PathLike):
        return ["path", os.fspath(value)]
    text = repr(value)
    if " at 0x" in text:
        raise Unstable(text)
    return ["repr", type(value).__qualname__, text]


def _is_float_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def _float_part(value: np.ndarray, arrays: list[np.ndarray]) -> list[Any]:
    """The exact part of a float array's portable description (dtype, shape, and where its
    NaNs and infinities are); its finite values (float64, flat, complex as real/imaginary pairs,
    0 where not finite) are appended to ``arrays`` for :func:`portable_fingerprint`'s sketch."""
    x = np.asarray(value)
    x = np.stack([x.real, x.imag], axis=-1) if x.dtype.kind == "c" else x
    flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
    bad = ~np.isfinite(flat)
    where = np.flatnonzero(bad)
    kind = np.where(np.isnan(flat[where]), 0, np.sign(flat[where])).astype(np.int8)  # NaN payloads ignored
    arrays.append(np.where(bad, 0.0, flat))
    nonfinite = hashlib.sha256(where.astype(np.int64).tobytes() + kind.tobytes()).hexdigest()
    return ["ndarray~", str(value.dtype), list(value.shape), nonfinite]


def _portable(value: Any, arrays: list[np.ndarray]) -> Any:
    if _is_float_array(value):
        return _float_part(value, arrays)
    if isinstance(value, (pd.DataFrame, pd.Series)) and has_float_data(value):
        frame = value.to_frame() if isinstance(value, pd.Series) else value
        parts = [
            _float_part(frame.iloc[:, j].to_numpy(), arrays) if t.kind == "f" else fingerprint(frame.iloc[:, j])
            for j, t in enumerate(frame.dtypes)
        ]
        exact = fingerprint(value)
        return ["pandas~", exact[1], exact[2], fingerprint(frame.index.to_frame(index=False)), parts]
    if isinstance(value, Mapping):
        return ["mapping", sorted(([repr(k), _portable(v, arrays)] for k, v in value.items()), key=lambda kv: kv[0])]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_portable(v, arrays) for v in value]]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            "dataclass",
            type(value).__qualname__,
            _portable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, arrays),
        ]
    return fingerprint(value)


#: projections in the sketch of a float array (after its Euclidean norm)
SKETCH_SIZE = 8
#: two sketches match when every entry differs by at most this fraction of the larger norm
SKETCH_RTOL = 1e-9
_CHUNK = 1 << 16

#: one sketch of a portable description: (norm, SKETCH_SIZE projections) per float array, in order
Sketch = tuple[tuple[float, ...], ...]


#: sketches of recent arrays by the digest of their bytes (the tasks of a study share their arrays)
_SKETCHES: dict[str, tuple[float, ...]] = {}


def _sketch(values: np.ndarray) -> tuple[float, ...]:
    digest = hashlib.sha256(values).hexdigest()
    hit = _SKETCHES.get(digest)
    if hit is None:
        top = float(np.max(np.abs(values))) if values.size else 0.0
        x = values / top if top > 0 else values  # scaled: no overflow for values near float64's maximum
        proj = np.zeros(SKETCH_SIZE)
        for c, start in enumerate(range(0, x.size, _CHUNK)):  # fixed Gaussian weights, chunk by chunk
            w = np.random.default_rng(np.random.SeedSequence([0x5EED, c])).standard_normal((SKETCH_SIZE, _CHUNK))
            part = x[start : start + _CHUNK]
            proj += w[:, : part.size] @ part
        scale = top if top > 0 else 1.0
        hit = (float(np.sqrt(np.sum(x * x)) * scale), *(float(v * scale) for v in proj))
        if len(_SKETCHES) >= 256:
            _SKETCHES.pop(next(iter(_SKETCHES)))
        _SKETCHES[digest] = hit
    return hit


def portable_fingerprint(value: Any) -> tuple[Any, Sketch]:
    """``(fingerprint(value, portable=True), sketch)``: the description of ``value`` with every
    floating-point array and table column described by its dtype, shape and non-finite entries
    only, and a sketch of the values left out: per array, its Euclidean norm and
    ``SKETCH_SIZE`` projections on fixed Gaussian weights.

    Arrays computed through BLAS/LAPACK (a PCA, a solve) differ in their last bits between CPUs
    (OpenBLAS picks its kernels by CPU), ~1e-14 of the array's norm, more than 1e-10 relative
    for values near zero, so that no rounding of the values gives one description on every CPU.
    Two sketches are compared with a tolerance instead (:func:`sketches_match`): arrays whose
    difference is below ``SKETCH_RTOL`` (1e-9) of their norm match; a change of one value by
    more than ~1e-9 of the norm, a swap of two values, a sign flip does not (almost surely: the
    weights are Gaussian)."""
    arrays: list[np.ndarray] = []
    description = _portable(value, arrays)
    return description, tuple(_sketch(a) for a in arrays)


def sketches_match(a: Sketch, b: Sketch, rtol: float = SKETCH_RTOL) -> bool:
    """Whether two sketches of :func:`portable_fingerprint` describe arrays that differ by less
    than ``rtol`` of their norm (entry by entry; a sketch of no arrays matches only another)."""
    if len(a) != len(b):
        return False
    for u, v in zip(a, b):
        if len(u) != len(v):
            return False
        tol = rtol * max(abs(u[0]), abs(v[0]))
        if any(not abs(p - q) <= tol for p, q in zip(u, v)):
            return False
    return True


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


__all__ = [
    "Unstable",
    "fingerprint",
    "has_float_data",
    "portable_fingerprint",
    "sketches_match",
    "Sketch",
    "SKETCH_SIZE",
    "SKETCH_RTOL",
]
