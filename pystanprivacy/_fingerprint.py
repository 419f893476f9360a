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


def fingerprint(value: Any) -> Any:
    """A JSON-able description of ``value`` that changes whenever the value does: arrays and
    tables by their full contents (their ``repr`` elides the middle of large ones)."""
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


__all__ = ["Unstable", "fingerprint"]
