"""Checkpoints of the Stan fits of one running task, so that a task interrupted mid-way (a
session that ends, Ctrl-C, a killed worker) resumes after its last finished fit instead of from
its start.

The runner (:func:`pystanprivacy.run.runner.run_tasks` with a resume folder) opens
:func:`fit_checkpoints` around each task it runs, in ``OUT/.tasks/<task key>.fits/``. Inside,
every :meth:`StanModel.sample <pystanprivacy.sampling.stan.StanModel.sample>` looks up its fit by
a digest of the compiled program (and backend), the data and the sampler settings (seed
included): a fit finished before the interruption is read back instead of sampled again;
otherwise it is sampled and stored if it took at least :data:`MIN_SECONDS` (a quicker one is
simply sampled again). A seeded fit is a deterministic function of exactly these,
so the replayed draws are those the fit would give again, bit for bit, and the task's table is
the one an uninterrupted run gives (the Python code around the fits runs again and consumes the
same random numbers). Fits without a seed get a fresh one, so they never match a stored fit.

Only the wall-clock seconds differ: a replayed fit takes no time, so a task that replayed fits
reports them (:attr:`FitCheckpoints.replayed`, :attr:`FitCheckpoints.replayed_seconds`, the
seconds the fits took when they ran), and the runner records them in the task's result file.

Privacy: a checkpoint holds every draw of a fit, which for a one-posterior-sampling model is far
more than the one draw it releases. The folder is private (0700, files 0600), holds only the
fits of a task in flight, and the runner removes it as soon as the task's result is saved.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._fingerprint import Unstable, fingerprint
from .backends.base import RawFit, SamplerSettings

_FORMAT = "pystanprivacy-fit-checkpoint/1"
#: fits quicker than this many seconds are not stored: sampling them again on resume gives the
#: same draws and costs less than writing every small fit of a study to disk
MIN_SECONDS = 5.0


class FitCheckpoints:
    """The fit checkpoints of one task, in ``directory`` (see the module docstring).

    Attributes
    ----------
    directory : pathlib.Path
    min_seconds : float
        Fits that took less are not stored (default :data:`MIN_SECONDS`).
    replayed : int
        Fits read back instead of sampled, in this task attempt.
    replayed_seconds : float
        The seconds those fits took when they were sampled.
    """

    def __init__(self, directory: str | os.PathLike, min_seconds: float | None = None) -> None:
        self.directory = Path(directory)
        self.min_seconds = MIN_SECONDS if min_seconds is None else float(min_seconds)
        self.replayed = 0
        self.replayed_seconds = 0.0

    @staticmethod
    def key(model_key: str, data: Mapping[str, Any], settings: SamplerSettings) -> str | None:
        """Digest of a fit: the compiled program and backend (``StanModel.key``), the data and
        the settings, arrays by their full contents; ``None`` (not checkpointed) when a value
        has no stable description."""
        try:
            text = json.dumps(
                {"model": model_key, "data": fingerprint(dict(data)), "settings": fingerprint(settings)}, sort_keys=True
            )
        except Unstable:
            return None
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.npz"

    def load(self, key: str) -> tuple[RawFit, float] | None:
        """The stored fit ``key`` and the seconds it took, or ``None`` (none stored, or a damaged
        file, which is removed)."""
        path = self._path(key)
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["format"]) != _FORMAT:
                    raise ValueError("not a fit checkpoint")
                names, stats = [str(n) for n in z["variables"]], [str(n) for n in z["sampler"]]
                raw = RawFit(
                    variables={n: z[f"v{i}"] for i, n in enumerate(names)},
                    sampler={n: z[f"s{i}"] for i, n in enumerate(stats)},
                )
                elapsed = float(z["elapsed"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        self.replayed += 1
        self.replayed_seconds += elapsed
        return raw, elapsed

    def save(self, key: str, raw: RawFit, elapsed: float) -> bool:
        """Store fit ``key`` atomically (a temporary file in the folder, then a rename) if it took
        at least :attr:`min_seconds`; whether it was stored."""
        if elapsed < self.min_seconds:
            return False
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {
            "format": np.array(_FORMAT),
            "elapsed": np.array(float(elapsed)),
            "variables": np.array(list(raw.variables), dtype=str),
            "sampler": np.array(list(raw.sampler), dtype=str),
        }
        arrays.update({f"v{i}": np.asarray(v) for i, v in enumerate(raw.variables.values())})
        arrays.update({f"s{i}": np.asarray(v) for i, v in enumerate(raw.sampler.values())})
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self.directory)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, self._path(key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return True

    def remove(self) -> None:
        """Delete the folder and every fit in it."""
        shutil.rmtree(self.directory, ignore_errors=True)


_ACTIVE: contextvars.ContextVar[FitCheckpoints | None] = contextvars.ContextVar(
    "pystanprivacy_fit_checkpoints", default=None
)


@contextlib.contextmanager
def fit_checkpoints(directory: str | os.PathLike) -> Iterator[FitCheckpoints]:
    """Checkpoint every Stan fit made inside (in this thread) in ``directory``; the folder is
    kept when the block ends (the runner removes it once the task's result is saved)."""
    store = FitCheckpoints(directory)
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)


def active_checkpoints() -> FitCheckpoints | None:
    """The :class:`FitCheckpoints` of the enclosing :func:`fit_checkpoints`, if any."""
    return _ACTIVE.get()


__all__ = ["MIN_SECONDS", "FitCheckpoints", "active_checkpoints", "fit_checkpoints"]
