"""The small interface every Stan backend implements.

A backend knows how to turn a flattened Stan program into something runnable (cached on
disk, compiled at most once, guarded by a file lock) and how to run NUTS or fixed_param on it
with a data dictionary, writing every intermediate file into a directory the caller owns.
The result is a :class:`RawFit`: plain numpy arrays, so nothing backend-specific leaks out.
"""

from __future__ import annotations

import abc
import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: Stan's sampler diagnostics, in CmdStan's names, in the order Stan writes them.
SAMPLER_COLUMNS = (
    "lp__",
    "accept_stat__",
    "stepsize__",
    "treedepth__",
    "n_leapfrog__",
    "divergent__",
    "energy__",
)


#: Environment variable: how many chains of a fit may run at once (see :func:`parallel_chains`).
PARALLEL_CHAINS_ENV = "PYSTANPRIVACY_PARALLEL_CHAINS"
_PARALLEL_CHAINS: dict[str, int | None] = {"cap": None}


def set_parallel_chains(n: int | None) -> None:
    """Run at most ``n`` chains of a fit at once in this process; ``None`` restores the
    default, ``$PYSTANPRIVACY_PARALLEL_CHAINS`` if set, else one chain per CPU.

    A worker of a process pool or of a Dask cluster is one task slot, normally one core: a
    fit that ran its chains on every CPU in each of several workers would oversubscribe the
    cores of a shared node. The runner sets this in its workers (see
    :func:`pystanprivacy.run.runner.make_executor` and :mod:`pystanprivacy.run.cluster`). The draws
    do not depend on it: each chain has its own seed.
    """
    _PARALLEL_CHAINS["cap"] = check_chain_cap(n)


def check_chain_cap(n: object, name: str = "parallel chains") -> int | None:
    """``n`` if it is an int >= 1 or ``None``; else ``ValueError`` naming ``name``."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"{name} must be an int >= 1 or None (the default), got {n!r}")
    return n


def chain_process_cap() -> int:
    """How many chains of a fit may run at once in this process (see
    :func:`set_parallel_chains`)."""
    cap = _PARALLEL_CHAINS["cap"]
    if cap is not None:
        return cap
    raw = os.environ.get(PARALLEL_CHAINS_ENV, "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ValueError(f"{PARALLEL_CHAINS_ENV} must be an int >= 1, got {raw!r}")
        return int(raw)
    return os.cpu_count() or 1


def parallel_chains(chains: int) -> int:
    """How many of a fit's ``chains`` run at once in this process."""
    return max(1, min(int(chains), chain_process_cap()))


@dataclasses.dataclass(frozen=True)
class SamplerSettings:
    """Settings of one run of ``stan::services::sample``; names follow CmdStan."""

    chains: int = 4
    warmup: int = 1000
    draws: int = 1000
    seed: int = 0
    adapt_delta: float = 0.8
    max_treedepth: int = 10
    thin: int = 1
    init: Sequence[Mapping[str, Any]] | None = None
    fixed_param: bool = False


@dataclasses.dataclass
class RawFit:
    """Draws of one run, independent of the backend that made them.

    Attributes
    ----------
    variables:
        ``name -> array(chains, draws, *dims)`` for every parameter, transformed parameter
        and generated quantity, in the order the program declares them.
    sampler:
        ``column -> array(chains, draws)`` for the columns of :data:`SAMPLER_COLUMNS` the
        backend reported (fixed_param runs report only ``lp__`` or nothing).
    """

    variables: dict[str, np.ndarray]
    sampler: dict[str, np.ndarray]


class Backend(abc.ABC):
    """A way to compile and run Stan programs."""

    #: short name used in ``PYSTANPRIVACY_BACKEND`` and in cache keys
    name: str = ""

    @classmethod
    @abc.abstractmethod
    def availability(cls) -> str | None:
        """``None`` when the backend can be used here, else a sentence saying why not."""

    @abc.abstractmethod
    def version_tag(self) -> str:
        """Versions that change compiled output (part of the cache key)."""

    @abc.abstractmethod
    def compile(self, program: str, key: str, cache_dir: Path) -> Any:
        """Compile ``program`` (or find it compiled in ``cache_dir``); return a handle.

        Called with an exclusive file lock held for ``key``, so two processes never compile
        the same model at once.
        """

    @abc.abstractmethod
    def is_compiled(self, program: str, key: str, cache_dir: Path) -> bool:
        """Whether a compiled artefact for ``program`` is already in ``cache_dir``."""

    @abc.abstractmethod
    def run(
        self,
        handle: Any,
        data: Mapping[str, Any],
        settings: SamplerSettings,
        workdir: Path,
    ) -> RawFit:
        """Run the sampler; every file it writes must go under ``workdir``."""

    def log_density(
        self,
        handle: Any,
        data: Mapping[str, Any],
        params: Sequence[Any],
        workdir: Path,
        *,
        unconstrained: bool = False,
    ) -> list[tuple[float, np.ndarray]]:
        """``(log density, gradient)`` at each of ``params`` (constrained values, one mapping
        per point; with ``unconstrained``, one list of unconstrained values per point): the
        model's log density on the unconstrained scale with the Jacobian of the constraining
        transform, and its gradient with respect to the unconstrained parameters. Every file it
        writes must go under ``workdir``. The default raises ``NotImplementedError``."""
        raise NotImplementedError(f"the {self.name or type(self).__name__} backend cannot evaluate log densities")

    def stop_chains(self) -> None:
        """Stop every chain process of the running fit at once (called from a signal handler
        when the fit is being terminated); the default does nothing."""

    def preflight(self) -> None:
        """Raise where this environment cannot run a fit of this backend, for a reason known
        before the fit starts (a setting, never the data): called before a fit starts and
        before an OPS attempt is charged (:func:`pystanprivacy.sampling.backends.preflight`),
        so that no budget is spent on a fit that cannot run. The default checks nothing."""


def reshape_column_major(flat: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """Turn ``(chains, draws, prod(dims))`` columns in Stan's column-major order into
    ``(chains, draws, *dims)``."""
    chains, draws = flat.shape[:2]
    if not dims:
        return flat.reshape(chains, draws)
    return flat.reshape(chains, draws, *reversed(tuple(dims))).transpose(0, 1, *range(len(dims) + 1, 1, -1))
