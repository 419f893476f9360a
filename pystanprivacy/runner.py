"""Run many independent tasks (e.g. Stan fits) on a :class:`concurrent.futures.Executor`
and write their result tables to files.

A *task* is a module-level function plus keyword arguments (so that it pickles and can run
in another process or on another machine). Every task is called as
``fn(**kwargs, seed=child)`` where ``child`` is its own :class:`numpy.random.SeedSequence`
and must return a :class:`pandas.DataFrame` in long format (one row per method × setting
× repeat). :func:`run_tasks` concatenates the tables in task order.

Seeds
-----
One root seed per run: the per-task seeds are ``SeedSequence([seed, stream]).spawn(n)``
(``stream`` a stable number derived from a name, so that the experiments of one run
draw independent streams from one root seed). Task ``i`` always gets child ``i``, so the
table does not depend on the executor or on the number of workers. Seeds give
reproducibility, not security: results computed from a known seed (including any privacy
noise) can be regenerated. Do not use seeded runs for real releases.

Executors
---------
``workers=1`` runs every task in this process (no pool). ``workers>1`` makes a local
:class:`~concurrent.futures.ProcessPoolExecutor` (``spawn`` start method: httpstan keeps
state, threads and a forked pool of its own, which must not be inherited through a fork).
Any object with ``submit(fn, *args, **kwargs)`` returning futures with ``result()`` can
be passed as ``executor`` -- a ``dask.distributed.Client`` has that interface, so a cluster
can be plugged in later without changing the experiments. As with any ``spawn`` pool, a
script that uses ``workers > 1`` must guard its entry point with
``if __name__ == "__main__":`` (the console script and ``python -m pystanprivacy`` do). Task ``i``'s result depends only
on ``(fn, kwargs, seed, i)``; :func:`task_key` names it, which is what a later
resume-from-files will use to skip tasks whose result is already on disk.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import multiprocessing
import os
import platform
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "Task",
    "root_sequence",
    "task_seeds",
    "task_key",
    "make_executor",
    "run_tasks",
    "package_versions",
    "stan_backend_info",
    "write_results",
    "to_jsonable",
]

SeedArg = int | np.integer | np.random.SeedSequence


@dataclasses.dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(**kwargs, seed=SeedSequence)`` returning a DataFrame.

    ``fn`` must be a module-level function (picklable); ``kwargs`` must be picklable and
    must not contain ``seed`` (the runner supplies it). ``label`` is shown in errors.
    """

    fn: Callable[..., pd.DataFrame]
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise TypeError(f"Task.fn must be callable, got {self.fn!r}")
        if getattr(self.fn, "__qualname__", "").count("<locals>") or getattr(self.fn, "__name__", "") == "<lambda>":
            raise TypeError(
                f"Task.fn must be a module-level function so that it can be pickled, got {self.fn!r}"
            )
        if not isinstance(self.kwargs, Mapping):
            raise TypeError(f"Task.kwargs must be a mapping, got {type(self.kwargs).__name__}")
        if "seed" in self.kwargs:
            raise ValueError("Task.kwargs must not contain 'seed': the runner gives every task its own seed")


def _stream_id(stream: str | None) -> int:
    return 0 if stream is None else zlib.crc32(stream.encode("utf-8"))


def root_sequence(seed: SeedArg, stream: str | None = None) -> np.random.SeedSequence:
    """The root :class:`~numpy.random.SeedSequence` of a run.

    ``seed`` is a non-negative int (or a ready SeedSequence, returned unchanged when no
    ``stream`` is given). ``stream`` (e.g. ``"foulds2016/fig2"``) makes independent streams
    for the experiments of one run from one root seed.
    """
    if isinstance(seed, np.random.SeedSequence):
        if stream is None:
            return seed
        return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, _stream_id(stream)))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative int or a numpy.random.SeedSequence, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return np.random.SeedSequence([int(seed), _stream_id(stream)])


def task_seeds(seed: SeedArg, n: int, stream: str | None = None) -> list[np.random.SeedSequence]:
    """``root_sequence(seed, stream).spawn(n)``: one independent seed per task, the same
    whatever the executor or the number of workers."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    root = root_sequence(seed, stream)
    # spawn() on a copy: spawning mutates the parent's counter, and the same (seed, stream)
    # must give the same children however often it is asked
    fresh = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key, pool_size=root.pool_size)
    return fresh.spawn(int(n))


def task_key(task: Task, index: int, seed: SeedArg, stream: str | None = None) -> str:
    """A stable name of task ``index`` of a run (function, arguments, seed, stream): what
    a resume-from-files can look up. Arguments are hashed through their ``repr``."""
    text = json.dumps(
        {
            "fn": f"{task.fn.__module__}.{task.fn.__qualname__}",
            "kwargs": {k: repr(v) for k, v in sorted(task.kwargs.items())},
            "seed": repr(seed),
            "stream": stream,
            "index": index,
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _call(fn: Callable[..., pd.DataFrame], kwargs: Mapping[str, Any], seed: np.random.SeedSequence) -> pd.DataFrame:
    out = fn(**kwargs, seed=seed)
    if not isinstance(out, pd.DataFrame):
        raise TypeError(
            f"task {fn.__module__}.{fn.__qualname__} must return a pandas DataFrame, got {type(out).__name__}"
        )
    return out


def _check_workers(workers: Any) -> int:
    if isinstance(workers, (bool, np.bool_)) or not isinstance(workers, (int, np.integer)):
        raise TypeError(f"workers must be an int >= 1, got {workers!r}")
    if workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    return int(workers)


def _reap_children() -> None:
    """Stop the worker's own child processes before it exits.

    A pool worker that made a process pool of its own (httpstan runs every chain in a
    ``fork`` ProcessPoolExecutor kept in a module global) would otherwise hang at exit:
    multiprocessing joins the worker's live children *before* the interpreter's shutdown
    hooks that would have told that inner pool to stop. Registered with priority >= 0 so it
    runs before that join. The inner pools are idle by then (the worker has finished its
    tasks), so terminating what remains loses nothing."""
    stub = sys.modules.get("httpstan.services_stub")
    inner = getattr(stub, "executor", None)
    if inner is not None:
        with contextlib.suppress(Exception):
            inner.shutdown(wait=True, cancel_futures=True)
    for child in multiprocessing.active_children():
        child.terminate()
        child.join(timeout=5)


def _init_worker() -> None:
    from multiprocessing import util

    util.Finalize(None, _reap_children, exitpriority=100)


@contextlib.contextmanager
def make_executor(workers: int = 1) -> Iterator[cf.Executor | None]:
    """``None`` (run in this process) for ``workers=1``, else a local process pool with
    ``workers`` processes (``spawn`` start method), shut down on exit. Share one pool
    across several :func:`run_tasks` calls to pay the worker start-up (imports, loading the
    compiled Stan models) once."""
    workers = _check_workers(workers)
    if workers == 1:
        yield None
        return
    pool = cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker
    )
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)


def _progress_enabled(progress: bool | None) -> bool:
    if progress is False:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _as_completed(futures: Sequence[Any]) -> Iterable[Any]:
    """Futures as they complete (concurrent.futures), else in submission order (other
    executors, e.g. Dask, whose futures ``concurrent.futures.as_completed`` cannot wait on)."""
    if all(isinstance(f, cf.Future) for f in futures):
        return cf.as_completed(futures)
    return iter(futures)


def run_tasks(
    tasks: Sequence[Task],
    *,
    seed: SeedArg,
    stream: str | None = None,
    workers: int = 1,
    executor: Any | None = None,
    progress: bool | None = None,
    desc: str | None = None,
) -> pd.DataFrame:
    """Run ``tasks`` and concatenate their tables in task order.

    Parameters
    ----------
    tasks:
        :class:`Task` objects; task ``i`` is called with ``seed=task_seeds(seed, n, stream)[i]``.
    seed, stream:
        Root seed of the run and an optional stream name (see :func:`root_sequence`).
    workers:
        Number of local worker processes when no ``executor`` is given; ``1`` runs in this
        process without a pool.
    executor:
        A :class:`concurrent.futures.Executor` (or anything with ``submit`` returning
        futures with ``result()``, such as a ``dask.distributed.Client``); it is not shut
        down here. Overrides ``workers``.
    progress:
        Show a tqdm progress bar on stderr. ``None`` (default) or ``True`` show it only when
        stderr is a terminal (and only once the run has lasted 2 s); ``False`` never.
    desc:
        Label of the progress bar.

    Returns
    -------
    pandas.DataFrame
        The tables of all tasks, concatenated in task order with a fresh index.

    Raises
    ------
    RuntimeError
        When a task fails; the message names the task and the original exception is chained.
    """
    tasks = list(tasks)
    for t in tasks:
        if not isinstance(t, Task):
            raise TypeError(f"tasks must be Task objects, got {type(t).__name__}")
    workers = _check_workers(workers)
    seeds = task_seeds(seed, len(tasks), stream)
    results: list[pd.DataFrame | None] = [None] * len(tasks)

    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), desc=desc, disable=not _progress_enabled(progress), delay=2.0, leave=False)

    def fail(i: int, exc: BaseException) -> RuntimeError:
        name = tasks[i].label or f"{tasks[i].fn.__qualname__}({dict(tasks[i].kwargs)})"
        return RuntimeError(f"task {i} ({name}) failed: {type(exc).__name__}: {exc}")

    try:
        if executor is None and workers == 1:
            for i, (t, s) in enumerate(zip(tasks, seeds)):
                try:
                    results[i] = _call(t.fn, t.kwargs, s)
                except Exception as exc:
                    raise fail(i, exc) from exc
                bar.update()
        else:
            with contextlib.ExitStack() as stack:
                ex = executor if executor is not None else stack.enter_context(make_executor(workers))
                futures = [ex.submit(_call, t.fn, dict(t.kwargs), s) for t, s in zip(tasks, seeds)]
                index = {id(f): i for i, f in enumerate(futures)}
                try:
                    for fut in _as_completed(futures):
                        i = index[id(fut)]
                        try:
                            results[i] = fut.result()
                        except Exception as exc:
                            raise fail(i, exc) from exc
                        bar.update()
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
    finally:
        bar.close()
    frames = [r for r in results if r is not None]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- files
def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def package_versions() -> dict[str, str | None]:
    """Versions of Python and of the packages a result depends on (``None``: not installed)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("pystanprivacy", "numpy", "pandas", "scipy", "arviz", "matplotlib", "pystan", "httpstan", "cmdstanpy"):
        out[dist] = _version(dist)
    return out


def stan_backend_info(backend: str | None = None) -> dict[str, Any]:
    """The Stan backend a fit would use now (``backend`` or ``$PYSTANPRIVACY_BACKEND``):
    its name, version tag and the Stan compiler version; ``error`` when none can be used."""
    info: dict[str, Any] = {"requested": backend or os.environ.get("PYSTANPRIVACY_BACKEND", "auto")}
    try:
        from .backends import select_backend

        b = select_backend(backend)
        info.update(name=b.name, version_tag=b.version_tag())
    except Exception as exc:  # noqa: BLE001 - reported, not raised: the table is still written
        info["error"] = f"{type(exc).__name__}: {exc}"
        return info
    try:
        import subprocess

        from .stan import stanc_executable

        proc = subprocess.run([str(stanc_executable()), "--version"], capture_output=True, text=True, timeout=30)
        info["stanc"] = proc.stdout.strip() or None
    except Exception:  # noqa: BLE001 - optional detail
        info["stanc"] = None
    return info


def to_jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays, paths, SeedSequences, tuples and sets turned into
    JSON types; non-finite floats become strings (``"nan"``, ``"inf"``)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, np.random.SeedSequence):
        return {"entropy": to_jsonable(value.entropy), "spawn_key": list(value.spawn_key)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    return repr(value)


def write_results(
    out_dir: str | os.PathLike,
    name: str,
    table: pd.DataFrame,
    args: Mapping[str, Any],
    *,
    seed: Any = None,
    backend: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``<out_dir>/<name>.csv`` and the JSON sidecar ``<out_dir>/<name>.json``.

    The sidecar records every argument (``args``), the seed (``seed``, default
    ``args["seed"]``), the versions of Python and the packages (:func:`package_versions`),
    the Stan backend (:func:`stan_backend_info`), the table's shape and columns, the time
    and the command line, plus anything in ``extra``.

    Returns
    -------
    (csv_path, json_path)
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"name must be a plain file name without extension, got {name!r}")
    if not isinstance(args, Mapping):
        raise TypeError(f"args must be a mapping of argument names to values, got {type(args).__name__}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / f"{name}.csv"
    json_path = out / f"{name}.json"
    table.to_csv(csv_path, index=False)
    sidecar = {
        "name": name,
        "csv": csv_path.name,
        "args": to_jsonable(dict(args)),
        "seed": to_jsonable(args.get("seed") if seed is None else seed),
        "versions": package_versions(),
        "stan_backend": stan_backend_info(backend),
        "rows": int(len(table)),
        "columns": [str(c) for c in table.columns],
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": sys.argv,
        "platform": platform.platform(),
    }
    if extra:
        sidecar["extra"] = to_jsonable(dict(extra))
    json_path.write_text(json.dumps(sidecar, indent=2, sort_keys=False) + "\n")
    return csv_path, json_path
