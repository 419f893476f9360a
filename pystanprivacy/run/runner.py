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
is plugged in without changing the experiments (:mod:`pystanprivacy.run.cluster` makes one). As with any ``spawn`` pool, a
script that uses ``workers > 1`` must guard its entry point with
``if __name__ == "__main__":`` (the console script and ``python -m pystanprivacy`` do).

Run context and resuming
------------------------
:func:`run_context` sets, for everything run inside it, the executor that
:func:`make_executor` hands out and :func:`run_tasks` uses when none is passed, and a
*resume directory*: every finished task's table is written there atomically (one JSON file
per task, named by :func:`task_key`) as soon as it arrives, and a later run with the same
directory loads those tables instead of running the tasks again. So a reproduction killed
half-way is finished by running the same command again, with the same final table. This is how
``pystanprivacy reproduce`` runs every paper (resume directory ``<out>/.tasks``) without
any change to the experiments.

Task keys
---------
A key holds what determines the task's result, and nothing else:

- its study's name and explicit version (a change of meaning bumps the version) and the task
  function's name, from the declaration every task function carries
  (``@STUDY.task(programs=..., data=...)``, :mod:`pystanprivacy.run.study`; a :class:`Task` of a
  function without one is a ``TypeError``);
- the digest of every Stan program the task may run, flattened with its includes and without
  comments (:func:`pystanprivacy.sampling.stan.program_digest`), and of every shipped data file it
  reads (:func:`pystanprivacy.run.study.data_file_digest`);
- its arguments by content (:mod:`pystanprivacy._fingerprint`), the root seed, the stream and its
  index.

Not its module's source text: a docstring or a refactoring keeps every saved result, and a
changed Stan program, data file or study version gives new keys, so a resume runs those tasks
again instead of keeping results of an older program.

The programs and data files are *declared*, not discovered, because the key must be known before
the task runs (to find its saved result). The declaration is *enforced* where the task runs: the
runner records every program that runs inside the task, with the digest of the text that was
compiled (:func:`pystanprivacy.sampling.stan.recording_programs`; a long-lived worker keeps a
program it compiled before the file changed), and every data file found
(:func:`pystanprivacy.datasets.uci.recording_data_files`), and a task that ran an undeclared
program, another version of a declared one, or read an undeclared data file fails
(:class:`pystanprivacy.run.study.UndeclaredInput`) instead of being saved -- also without a resume
directory, so the test suite's runs of every study check their declarations. Declaring a program
a task does not run only costs reruns when that program changes. The backend and the Stan compiler
version are not in the key (the same program samples the same posterior on both backends); they
are in every table's sidecar (:func:`write_results`). Each task file records the inputs its key
was made with (``"inputs"``).

A task whose arguments hold floating-point arrays (data computed through BLAS/LAPACK: a
PCA, a solve) gets a different exact key on a CPU whose BLAS kernels round differently. Its
:func:`portable_task_key` (those arrays described by dtype and shape only) and its
:func:`task_sketch` (their norms and projections) are recorded with the saved result in
``<resume dir>/portable-keys.index``, and a task whose exact key is not saved is looked up
there: the file of an entry with its portable key whose sketch matches its own within
``SKETCH_RTOL`` (1e-9 of each array's norm). So a resume on another machine finds the tasks,
and a real change of the data runs them again.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import contextvars
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import multiprocessing
import os
import platform
import socket
import sys
import tempfile
import time
import uuid
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._fingerprint import Sketch, sketches_match
from .._fingerprint import Unstable as _Unstable
from .._fingerprint import fingerprint as _fingerprint
from .._fingerprint import has_float_data as _has_float_data
from .._fingerprint import portable_fingerprint as _portable_fingerprint
from .study import TaskDeclaration, check_inputs, declaration

__all__ = [
    "Task",
    "root_sequence",
    "task_seeds",
    "task_key",
    "portable_task_key",
    "task_sketch",
    "run_context",
    "part_folder",
    "selected_tasks",
    "current_context",
    "RunContext",
    "make_executor",
    "run_tasks",
    "saved_results",
    "read_portable_keys",
    "add_portable_keys",
    "package_versions",
    "stan_backend_info",
    "write_results",
    "to_jsonable",
]

SeedArg = int | np.integer | np.random.SeedSequence


@dataclasses.dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(**kwargs, seed=SeedSequence)`` returning a DataFrame.

    ``fn`` must be a module-level function (picklable) that declares its study, programs and
    data files (:meth:`pystanprivacy.run.study.Study.task`; ``TypeError`` otherwise); ``kwargs``
    must be picklable and must not contain ``seed`` (the runner supplies it). ``label`` is shown
    in errors.
    """

    fn: Callable[..., pd.DataFrame]
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise TypeError(f"Task.fn must be callable, got {self.fn!r}")
        if getattr(self.fn, "__qualname__", "").count("<locals>") or getattr(self.fn, "__name__", "") == "<lambda>":
            raise TypeError(f"Task.fn must be a module-level function so that it can be pickled, got {self.fn!r}")
        if not isinstance(self.kwargs, Mapping):
            raise TypeError(f"Task.kwargs must be a mapping, got {type(self.kwargs).__name__}")
        if not isinstance(self.label, str):
            raise TypeError(f"Task.label must be a str, got {type(self.label).__name__}")
        if "seed" in self.kwargs:
            raise ValueError("Task.kwargs must not contain 'seed': the runner gives every task its own seed")
        declaration(self.fn)  # TypeError: a task is keyed by its declaration, never by its source

    @property
    def declaration(self) -> TaskDeclaration:
        """The study declaration of ``fn`` (:func:`pystanprivacy.run.study.declaration`)."""
        return declaration(self.fn)

    def inputs(self) -> dict[str, Any]:
        """What this task's key holds besides its arguments and seeds: its study's name and
        version and the digests of the Stan programs and data files it declares, as they are now
        (:meth:`pystanprivacy.run.study.TaskDeclaration.inputs`)."""
        return self.declaration.inputs(self.kwargs)


def _stream_id(stream: str | None) -> int:
    if stream is not None and not isinstance(stream, str):
        raise TypeError(f"stream must be a str or None, got {type(stream).__name__}")
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


#: the version of the key scheme (fields of :func:`_key_text`); 3: study, programs and data
KEY_SCHEME = 3


def _key_text(
    task: Task,
    index: int,
    seed: SeedArg,
    stream: str | None,
    portable: bool,
    inputs: Mapping[str, Any] | None = None,
) -> tuple[str, Sketch]:
    """The text hashed into a task's key: its study declaration's ``inputs`` (study, version,
    program and data digests; default :meth:`Task.inputs`), its function's name within the study,
    its arguments by content, the root seed, the stream and its index."""
    try:
        kwargs, sketch = _portable_fingerprint(dict(task.kwargs)) if portable else (_fingerprint(dict(task.kwargs)), ())
        root = _fingerprint(seed)
    except _Unstable as exc:
        raise ValueError(f"task {index} has an argument without a stable description: {exc}") from None
    inputs = task.inputs() if inputs is None else inputs
    fields = {
        "scheme": KEY_SCHEME,
        "study": inputs["study"],
        "version": inputs["version"],
        "programs": dict(inputs["programs"]),
        "data": dict(inputs["data"]),
        "fn": task.fn.__qualname__,
        "kwargs": kwargs,
        "seed": root,
        "stream": stream,
        "index": int(index),
    }
    if portable:
        fields["portable"] = 2
    return json.dumps(fields, sort_keys=True), sketch


def _portable_parts(
    task: Task, index: int, seed: SeedArg, stream: str | None, inputs: Mapping[str, Any] | None = None
) -> tuple[str, Sketch] | None:
    if not _has_float_data(dict(task.kwargs)):
        return None
    text, sketch = _key_text(task, index, seed, stream, True, inputs)
    return "p" + hashlib.sha256(text.encode()).hexdigest()[:23], sketch


def portable_task_key(
    task: Task, index: int, seed: SeedArg, stream: str | None = None, *, inputs: Mapping[str, Any] | None = None
) -> str | None:
    """:func:`task_key` with the floating-point arrays and table columns of the arguments
    described by their dtype, shape and non-finite entries only (``fingerprint(...,
    portable=True)``), so that the last-bit differences of BLAS/LAPACK results between CPUs
    do not change it; their values are compared through :func:`task_sketch`. ``None`` when the
    arguments hold no floating-point array (the exact key is portable then). ``ValueError`` as
    for :func:`task_key`."""
    parts = _portable_parts(task, index, seed, stream, inputs)
    return None if parts is None else parts[0]


def task_sketch(task: Task) -> Sketch:
    """The sketch of the floating-point arrays and table columns of ``task``'s arguments
    (:func:`pystanprivacy._fingerprint.portable_fingerprint`): what a task found by its
    :func:`portable_task_key` must match (:func:`sketches_match`) to be read from a saved file."""
    return _portable_fingerprint(dict(task.kwargs))[1]


def task_key(
    task: Task, index: int, seed: SeedArg, stream: str | None = None, *, inputs: Mapping[str, Any] | None = None
) -> str:
    """A stable name of task ``index`` of a run: a digest of what determines its result -- its
    study's name and version, the digests of the Stan programs and data files it declares
    (:mod:`pystanprivacy.run.study`; ``inputs``, default :meth:`Task.inputs`, as they are now),
    its function's name, its arguments (by content: arrays and tables through all their values),
    the root seed, the stream and its index. Not its module's source: a docstring or a
    refactoring keeps the key. The name of its file in a resume directory.

    ``ValueError`` when an argument has no stable description (its ``repr`` holds a memory
    address); such a task is never resumed."""
    return hashlib.sha256(_key_text(task, index, seed, stream, False, inputs)[0].encode()).hexdigest()[:24]


def _call(
    fn: Callable[..., pd.DataFrame],
    kwargs: Mapping[str, Any],
    seed: np.random.SeedSequence,
    checkpoints: str | None = None,
) -> tuple[pd.DataFrame, float, tuple[int, float], dict[str, str], dict[str, str]]:
    """Run one task where it is scheduled: its table, its wall seconds there (not counting the
    time it waited in the executor's queue), the (number, first-run seconds) of the Stan fits
    it read back from ``checkpoints``, the folder of its fit checkpoints
    (:mod:`pystanprivacy.sampling.checkpoints`; ``None``: none), and the ``{name: digest}`` of
    the Stan programs it ran and the ``{name: path}`` of the data files it read (checked against
    its declaration by the caller: :func:`pystanprivacy.run.study.check_inputs`)."""
    from ..datasets.uci import recording_data_files
    from ..sampling.checkpoints import fit_checkpoints
    from ..sampling.stan import recording_programs

    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        store = None if checkpoints is None else stack.enter_context(fit_checkpoints(checkpoints))
        programs = stack.enter_context(recording_programs())
        files = stack.enter_context(recording_data_files())
        out = fn(**kwargs, seed=seed)
    if not isinstance(out, pd.DataFrame):
        raise TypeError(
            f"task {fn.__module__}.{fn.__qualname__} must return a pandas DataFrame, got {type(out).__name__}"
        )
    replayed = (0, 0.0) if store is None else (store.replayed, store.replayed_seconds)
    return out, time.perf_counter() - start, replayed, dict(programs), {k: str(v) for k, v in files.items()}


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


def worker_chain_cap(cpus: int, slots: int) -> int:
    """Chains a fit may run at once in one of ``slots`` task slots sharing ``cpus`` CPUs:
    the slot's share of the CPUs, at least 1."""
    return max(1, int(cpus) // max(1, int(slots)))


def _init_worker(chain_cap: int | None = None, override_env: bool = False) -> None:
    """Set up a pool or Dask worker: run at most ``chain_cap`` chains of a fit at once
    (unless ``$PYSTANPRIVACY_PARALLEL_CHAINS`` is set there and ``override_env`` is false:
    the variable is the user's choice) and stop the worker's children at exit."""
    from multiprocessing import util

    from ..sampling.backends.base import PARALLEL_CHAINS_ENV, set_parallel_chains

    if chain_cap is not None and (override_env or not os.environ.get(PARALLEL_CHAINS_ENV, "").strip()):
        set_parallel_chains(chain_cap)
    util.Finalize(None, _reap_children, exitpriority=100)


def _init_pool_worker(chain_cap: int | None, parent: int) -> None:
    """Set up a worker of :func:`make_executor`'s pool (:func:`_init_worker`), and send it
    SIGTERM once ``parent`` (the process that made the pool) is gone, so that a killed run
    does not leave workers fitting on: a fit under way then removes its private directory and
    stops its chains (see :mod:`pystanprivacy.sampling.stan`). Not for Dask workers: their life is the
    cluster's business."""
    import signal

    from ..sampling.backends.workdirs import watch_parent

    def end() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # the fit's cleanup ends the process well before
        os._exit(1)

    _init_worker(chain_cap)
    watch_parent(parent, end)


@dataclasses.dataclass(frozen=True)
class RunContext:
    """What :func:`run_context` set: the executor every run uses (``None``: each decides
    from its ``workers``) and the resume directory (``None``: no task files); and, with a resume
    directory, how many tasks the runs inside have computed (``"run"``) and read back from saved
    results (``"read"``) so far, with their task seconds (``"run_seconds"``, ``"read_seconds"``;
    ``"read_untimed"`` counts saved results written before task files recorded their seconds),
    which :func:`write_results` puts in every sidecar. With ``saved_only``, no task runs: every
    :func:`run_tasks` inside returns its saved tasks' tables only, and the labels of its tasks
    not saved yet are appended to ``missing``. ``found`` collects the keys (file names, without
    ``.json``) of the saved results read from the resume directory, so a folder's files that no
    current task finds (written under keys that changed) can be named. ``portable_pairs``
    collects, under ``saved_only``, the ``{portable key: (exact key, sketch)}`` of the tasks read
    (for :func:`add_portable_keys`); with ``pair_by_label``, a task found neither by its exact
    nor by its portable key is paired with the one saved file that carries its label, and its
    label is added to ``paired_by_label``; ``found_by_portable_key`` lists the labels of the
    tasks read through their portable key (their exact key not saved: another CPU's BLAS)."""

    executor: Any | None = None
    resume_dir: Path | None = None
    task_counts: dict[str, float] = dataclasses.field(
        default_factory=lambda: {"run": 0, "read": 0, "run_seconds": 0.0, "read_seconds": 0.0, "read_untimed": 0},
        compare=False,
    )
    saved_only: bool = False
    missing: list[str] = dataclasses.field(default_factory=list, compare=False)
    found: set[str] = dataclasses.field(default_factory=set, compare=False)
    pair_by_label: bool = False
    portable_pairs: dict[str, tuple[str, Sketch]] = dataclasses.field(default_factory=dict, compare=False)
    paired_by_label: list[str] = dataclasses.field(default_factory=list, compare=False)
    found_by_portable_key: list[str] = dataclasses.field(default_factory=list, compare=False)
    _labels: dict[str, dict[str, str | None]] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    #: the contexts that :func:`part_folder` opened inside this one, by folder name
    part_folders: dict[str, RunContext] = dataclasses.field(default_factory=dict, compare=False, repr=False)


_CONTEXT: contextvars.ContextVar[RunContext] = contextvars.ContextVar("pystanprivacy_run_context", default=RunContext())  # noqa: B039 - never mutated: its lists and counts fill only under a resume_dir, saved_only or pair_by_label, which it lacks


def current_context() -> RunContext:
    """The :class:`RunContext` in force (set by :func:`run_context`)."""
    return _CONTEXT.get()


@contextlib.contextmanager
def run_context(
    *,
    executor: Any | None = None,
    resume_dir: str | os.PathLike | None = None,
    saved_only: bool = False,
    pair_by_label: bool = False,
) -> Iterator[RunContext]:
    """Run everything inside on ``executor`` and/or resume from ``resume_dir``.

    Inside, :func:`make_executor` yields ``executor`` (whatever ``workers`` it is asked
    for; it is not shut down there) and :func:`run_tasks` uses it and ``resume_dir`` when
    not given its own. So ``paper.reproduce(out, workers=...)`` runs on a Dask cluster, or
    resumes, without any change to the experiment::

        with cluster.connect("local", workers=2) as client, run_context(executor=client,
                                                                          resume_dir=out / ".tasks"):
            foulds2016.reproduce(out, workers=2)

    ``executor`` needs ``submit(fn, *args, **kwargs)`` returning futures with ``result()``
    and ``cancel()`` (a :class:`concurrent.futures.Executor` or a
    ``dask.distributed.Client``). ``resume_dir`` is created when needed.

    ``saved_only=True`` (with ``resume_dir``) runs nothing: each :func:`run_tasks` inside returns
    the tables of those of its tasks that are saved in ``resume_dir`` (found by their exact
    keys, so the same function called as the study calls it reads exactly that study's tasks),
    and adds the labels of the others to the context's ``missing``. It writes and deletes nothing
    there, so it can read a folder that a running study is writing::

        with run_context(resume_dir="results/jewson2023/.tasks", saved_only=True) as ctx:
            so_far = neural(task="classification", ...)   # the arguments the study used
        print(len(ctx.missing), "tasks to go")

    ``pair_by_label=True`` (with ``saved_only``) reads a task found by neither key from the
    one saved file that carries its label: a one-off migration of results saved before
    portable keys, on a machine whose BLAS gives other exact keys
    (``scripts/portable_task_keys.py``); only where the code is known to be unchanged.
    """
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"executor must have a submit() method (an Executor or a dask Client), got {type(executor).__name__}"
        )
    if resume_dir is not None and not isinstance(resume_dir, (str, os.PathLike)):
        raise TypeError(f"resume_dir must be a path or None, got {type(resume_dir).__name__}")
    if not isinstance(saved_only, bool):
        raise TypeError(f"saved_only must be a bool, got {type(saved_only).__name__}")
    if saved_only and resume_dir is None:
        raise ValueError("saved_only=True needs a resume_dir to read the saved tasks from, got resume_dir=None")
    if not isinstance(pair_by_label, bool):
        raise TypeError(f"pair_by_label must be a bool, got {type(pair_by_label).__name__}")
    if pair_by_label and not saved_only:
        raise ValueError("pair_by_label=True needs saved_only=True, got saved_only=False")
    ctx = RunContext(
        executor=executor,
        resume_dir=None if resume_dir is None else Path(resume_dir),
        saved_only=saved_only,
        pair_by_label=pair_by_label,
    )
    token = _CONTEXT.set(ctx)
    try:
        yield ctx
    finally:
        _CONTEXT.reset(token)


@contextlib.contextmanager
def part_folder(name: str) -> Iterator[RunContext]:
    """Inside, the tasks of a study part that keeps its saved results apart are saved in and
    resumed from ``<name>/.tasks`` beside the resume folder in force (``OUT/.tasks`` becomes
    ``OUT/<name>/.tasks``), on the same executor and with the same ``saved_only`` and
    ``pair_by_label``; without a resume folder, none. With a resume folder the context opened is
    also recorded in the enclosing one's ``part_folders[name]`` (so a read-back under
    ``saved_only`` can tell which files of that folder it found and which tasks it missed).

    Used by ``reproduce``'s parts whose tasks are committed in a folder of their own (e.g.
    ``results/jewson2023/paper_design/.tasks``): their keys do not depend on the folder."""
    if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(f"name must be a plain folder name, got {name!r}")
    outer = current_context()
    resume = None if outer.resume_dir is None else outer.resume_dir.parent / name / outer.resume_dir.name
    with run_context(
        executor=outer.executor,
        resume_dir=resume,
        saved_only=outer.saved_only and resume is not None,
        pair_by_label=outer.pair_by_label and resume is not None,
    ) as ctx:
        if resume is not None:  # (the default context, without a resume folder, is never written to)
            outer.part_folders[name] = ctx
        yield ctx


#: the task filter of :func:`selected_tasks` in force (``None``: every task)
_SELECT: contextvars.ContextVar[Callable[[Task], bool] | None] = contextvars.ContextVar(
    "pystanprivacy_selected_tasks", default=None
)


@contextlib.contextmanager
def selected_tasks(keep: Callable[[Task], bool]) -> Iterator[None]:
    """Inside, every :func:`run_tasks` runs (or reads back) only the tasks ``t`` of its list with
    ``keep(t)`` true and returns their tables; the others are neither run, read nor counted
    missing. Each kept task keeps the index, seed and key it has in the whole list, so it is the
    very task of the whole run: its saved result is found, and a result saved here is found by
    the whole run. Used where one study's cell is another's (Jewson et al.'s Figure 10 at d = 2
    is Figures 3 and 9 at n = 1000: :mod:`pystanprivacy.experiments.jewson2023.network_features`)::

        with selected_tasks(lambda t: t.kwargs["n_obs"] == 1000):
            rows = neural(task="regression", ns=(100, 200, 500, 1000), ...)  # only n = 1000 runs

    Nested calls keep the tasks that every filter keeps."""
    if not callable(keep):
        raise TypeError(f"keep must be a callable taking a Task and returning a bool, got {type(keep).__name__}")
    outer = _SELECT.get()
    token = _SELECT.set(keep if outer is None else (lambda t: bool(outer(t)) and bool(keep(t))))
    try:
        yield
    finally:
        _SELECT.reset(token)


@contextlib.contextmanager
def make_executor(workers: int = 1) -> Iterator[cf.Executor | None]:
    """``None`` (run in this process) for ``workers=1``, else a local process pool with
    ``workers`` processes (``spawn`` start method), shut down on exit. Share one pool
    across several :func:`run_tasks` calls to pay the worker start-up (imports, loading the
    compiled Stan models) once. Inside :func:`run_context` with an executor, that executor
    (left running)."""
    workers = _check_workers(workers)
    shared = _CONTEXT.get().executor
    if shared is not None:
        yield shared
        return
    if workers == 1:
        yield None
        return
    # Each pool process is one task slot: a fit there runs at most its share of the CPUs'
    # chains at once, so the pool does not run workers x CPUs chain processes.
    pool = cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_pool_worker,
        initargs=(worker_chain_cap(os.cpu_count() or 1, workers), os.getpid()),
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


def _is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor, "gather")


def _hostname() -> str:
    return socket.gethostname()


def _dask_on_this_host(client: Any) -> bool:
    """Whether every worker of the Dask cluster behind ``client`` runs on this machine (a
    ``--scheduler local`` cluster, or workers started here), so that it sees the resume folder
    and may keep fit checkpoints there; ``False`` when any worker is elsewhere or cannot say."""
    try:
        hosts = set(client.run(_hostname).values())
    except Exception:  # noqa: BLE001 -- a cluster that cannot answer gets no checkpoints
        return False
    return hosts == {_hostname()}


def _as_completed(futures: Sequence[Any], *, dask: bool) -> Iterable[Any]:
    """Futures as they complete: ``distributed.as_completed`` for the futures of a Dask
    client, ``concurrent.futures.as_completed`` for concurrent.futures ones; in submission
    order for other executors."""
    if dask:
        from distributed import as_completed

        return as_completed(futures)
    if all(isinstance(f, cf.Future) for f in futures):
        return cf.as_completed(futures)
    return iter(futures)


# ------------------------------------------------------------------ task result files
_RESULT_FORMAT = "pystanprivacy-task-result/1"


class _NotStorable(Exception):
    """A table that the task-file format would not give back exactly."""


def _encode_table(
    frame: pd.DataFrame,
    key: str,
    label: str,
    seconds: float | None = None,
    replayed: tuple[int, float] = (0, 0.0),
    inputs: Mapping[str, Any] | None = None,
) -> str:
    """JSON text of ``frame``: column names, dtypes and values (floats through their exact
    ``repr``, NaN/Infinity as JSON extensions), the task's wall ``seconds`` where known, and the
    ``inputs`` its key was made with (study, version, program and data digests), for the reader.
    Not executable, unlike pickle, so a shared results folder cannot run code in the reader."""
    columns = list(frame.columns)
    if not all(isinstance(c, str) for c in columns) or len(set(columns)) != len(columns):
        raise _NotStorable("column names must be distinct strings")
    data = []
    for name in columns:
        col = frame[name]
        if col.dtype.kind in "fiub" and isinstance(col.dtype, np.dtype):
            data.append(col.to_numpy().tolist())
        else:
            values = col.astype(object).to_numpy()
            missing = col.isna().to_numpy()
            data.append([None if m else v for v, m in zip(values.tolist(), missing)])
    payload = {
        "format": _RESULT_FORMAT,
        "key": key,
        "label": label,
        "rows": len(frame),
        "columns": columns,
        "dtypes": [str(frame[c].dtype) for c in columns],
        "data": data,
    }
    if inputs is not None:
        payload["inputs"] = {k: inputs[k] for k in ("study", "version", "programs", "data")}
    if seconds is not None:
        payload["seconds"] = float(seconds)
    if replayed[0]:  # fits read back from checkpoints: ``seconds`` lacks the time they took
        payload["replayed_fits"], payload["replayed_fit_seconds"] = int(replayed[0]), float(replayed[1])
    try:
        return json.dumps(payload)
    except (TypeError, ValueError) as exc:
        raise _NotStorable(str(exc)) from None


def _decode_table(text: str, key: str) -> tuple[pd.DataFrame, float | None]:
    """The table of a task file and its task seconds (``None`` in files written before they
    were recorded)."""
    return _decode_payload(json.loads(text), key)


def _decode_payload(payload: Any, key: str) -> tuple[pd.DataFrame, float | None]:
    if not isinstance(payload, dict) or payload.get("format") != _RESULT_FORMAT or payload.get("key") != key:
        raise ValueError("not a task result file of this task")
    columns, dtypes, data = payload["columns"], payload["dtypes"], payload["data"]
    if not (len(columns) == len(dtypes) == len(data)) or any(len(d) != payload["rows"] for d in data):
        raise ValueError("inconsistent task result file")
    seconds = payload.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))):
        raise ValueError("task seconds are not a number")
    cols = {c: pd.Series(d, dtype=t) for c, t, d in zip(columns, dtypes, data)}
    return pd.DataFrame(cols, columns=columns, index=pd.RangeIndex(payload["rows"])), seconds


#: suffix of a task's folder of Stan fit checkpoints in the resume folder (``<key>.fits``)
CHECKPOINT_SUFFIX = ".fits"


def _result_path(resume_dir: Path, key: str) -> Path:
    return resume_dir / f"{key}.json"


def _save_result(
    resume_dir: Path,
    key: str,
    frame: pd.DataFrame,
    label: str,
    seconds: float | None = None,
    replayed: tuple[int, float] = (0, 0.0),
    inputs: Mapping[str, Any] | None = None,
) -> bool:
    """Write ``frame`` (and the task's wall ``seconds``, the number and first-run seconds of
    the fits it ``replayed`` from checkpoints, and the ``inputs`` of its key) atomically as
    ``<resume_dir>/<key>.json``
    (temp file in the same folder, fsync, ``os.replace``). ``False`` (nothing written, a warning)
    when the format would not give the table back exactly: that task is then simply run again by
    a resumed run."""
    frame = frame.reset_index(drop=True)
    try:
        text = _encode_table(frame, key, label, seconds, replayed, inputs)
        pd.testing.assert_frame_equal(_decode_table(text, key)[0], frame, check_exact=True)
    except (_NotStorable, AssertionError, ValueError, TypeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        warnings.warn(
            f"the table of task {label!r} cannot be saved exactly for resuming ({reason[:200]}); "
            "a resumed run will run it again",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    resume_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=resume_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, _result_path(resume_dir, key))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(resume_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return True


#: the file of a resume directory mapping portable task keys to saved result files
PORTABLE_KEYS = "portable-keys.index"  # JSON; not *.json, which names result files
_PORTABLE_FORMAT = "pystanprivacy-portable-keys/2"
#: {portable key: [(exact key of a saved file, sketch of the task's float arrays), ...]}
PortableIndex = dict[str, list[tuple[str, Sketch]]]


def read_portable_keys(resume_dir: str | os.PathLike) -> PortableIndex:
    """The ``{portable key: [(exact key, sketch), ...]}`` index of ``resume_dir`` (empty when it
    has none). An index of the first format (24-bit rounded keys, which another CPU's BLAS can
    miss) is ignored with a warning: ``scripts/portable_task_keys.py`` records it again."""
    path = Path(resume_dir) / PORTABLE_KEYS
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    if isinstance(payload, dict) and payload.get("format") == "pystanprivacy-portable-keys/1":
        warnings.warn(
            f"ignoring {path}: written by an older version (format 1, keys that other CPUs can miss); "
            "scripts/portable_task_keys.py records its tasks again",
            RuntimeWarning,
            stacklevel=2,
        )
        return {}
    try:
        if payload.get("format") != _PORTABLE_FORMAT:
            raise ValueError
        sketches = {k: tuple(float(x) for x in v) for k, v in payload["sketches"].items()}
        return {
            p: [(str(f), tuple(sketches[i] for i in ids)) for f, ids in entries]
            for p, entries in payload["keys"].items()
        }
    except (AttributeError, KeyError, TypeError, ValueError):
        raise ValueError(f"{path} is not a portable-keys file (format {_PORTABLE_FORMAT!r})") from None


def _portable_file(index: PortableIndex, key: str | None, sketch: Sketch, resume_dir: Path) -> str | None:
    """The saved file of the first entry of ``index[key]`` whose sketch matches ``sketch``."""
    for file, saved in index.get(key or "", []):
        if sketches_match(saved, sketch) and _result_path(resume_dir, file).exists():
            return file
    return None


def add_portable_keys(resume_dir: str | os.PathLike, pairs: Mapping[str, tuple[str, Sketch]]) -> int:
    """Add ``{portable key: (exact key, sketch)}`` entries to ``resume_dir``'s index (under a
    lock, written atomically, sorted so that it diffs well); returns how many were new. An
    entry whose sketch matches one already there with a file that exists is not added (that
    file is kept); one whose matching entries' files are gone replaces them."""
    import fcntl

    if not pairs:
        return 0
    folder = Path(resume_dir)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{PORTABLE_KEYS}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        index = read_portable_keys(folder)
        added = 0
        for p, (file, sketch) in pairs.items():
            entries = index.setdefault(p, [])
            same = [e for e in entries if sketches_match(e[1], sketch)]
            if any(f == file or _result_path(folder, f).exists() for f, _ in same):
                continue
            entries[:] = [e for e in entries if e not in same] + [(file, tuple(map(tuple, sketch)))]
            added += 1
        if not added:
            return 0
        ids: dict[tuple[float, ...], str] = {}
        for entries in index.values():
            for _, sketch in entries:
                for v in sketch:
                    ids.setdefault(v, hashlib.sha256(json.dumps(v).encode()).hexdigest()[:16])
        payload = {
            "format": _PORTABLE_FORMAT,
            "keys": {
                p: sorted([f, [ids[v] for v in sk]] for f, sk in entries)
                for p, entries in sorted(index.items())
                if entries
            },
            "sketches": dict(sorted((i, list(v)) for v, i in ids.items())),
        }
        fd, tmp = tempfile.mkstemp(prefix=f".{PORTABLE_KEYS}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(payload, indent=0) + "\n")
            os.replace(tmp, folder / PORTABLE_KEYS)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return added


def _label_index(resume_dir: Path) -> dict[str, str | None]:
    """``{label: key}`` of the result files of ``resume_dir``; ``None`` for a label that more
    than one file carries."""
    out: dict[str, str | None] = {}
    for path in resume_dir.glob("*.json"):
        with contextlib.suppress(ValueError, OSError):
            label = json.loads(path.read_text(encoding="utf-8")).get("label")
            if isinstance(label, str):
                out[label] = None if label in out else path.stem
    return out


def _load_result(resume_dir: Path, key: str, remove_damaged: bool = True) -> tuple[pd.DataFrame, float | None] | None:
    """The saved table of task ``key`` and its task seconds (``None`` if the file predates them),
    or ``None`` when there is no saved result; a damaged file is removed (and the task run again)
    unless ``remove_damaged`` is false."""
    path = _result_path(resume_dir, key)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return _decode_table(text, key)
    except (ValueError, KeyError, TypeError) as exc:
        warnings.warn(
            f"ignoring damaged task result file {path} ({type(exc).__name__})"
            + ("; the task runs again" if remove_damaged else ""),
            RuntimeWarning,
            stacklevel=3,
        )
        if remove_damaged:
            with contextlib.suppress(OSError):
                path.unlink()
        return None


def saved_results(resume_dir: str | os.PathLike, label_prefix: str = "") -> pd.DataFrame:
    """Every task table saved in ``resume_dir`` (``OUT/.tasks``) whose task label starts with
    ``label_prefix``, concatenated, with the columns ``task_label`` and ``task_seconds`` (the
    task's wall seconds; NaN in files written before they were recorded) added in front.

    For a look at a study that is still running or was interrupted: the finished tasks'
    rows, without running anything. The order is by label, then file name (not the study's
    task order), and damaged or temporary files are skipped, never deleted. An empty table
    when nothing matches.
    """
    folder = Path(resume_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"resume_dir must be a folder of saved task results, got {str(folder)!r}")
    if not isinstance(label_prefix, str):
        raise TypeError(f"label_prefix must be a str, got {type(label_prefix).__name__}")
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
            label = payload.get("label", "")
            if not isinstance(label, str) or not label.startswith(label_prefix):
                continue
            frame, seconds = _decode_payload(payload, path.stem)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        frame.insert(0, "task_seconds", np.nan if seconds is None else float(seconds))
        frame.insert(0, "task_label", label)
        found.append((label, frame))
    if not found:
        return pd.DataFrame()
    found.sort(key=lambda item: item[0])
    return pd.concat([f for _, f in found], ignore_index=True)


def _clean_leftovers(resume_dir: Path, keys: Iterable[str]) -> int:
    """Remove the temp files that an interrupted run left for these tasks."""
    removed = 0
    for key in keys:
        for tmp in resume_dir.glob(f".{key}.*.tmp"):
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed += 1
    return removed


def run_tasks(
    tasks: Sequence[Task],
    *,
    seed: SeedArg,
    stream: str | None = None,
    workers: int = 1,
    executor: Any | None = None,
    progress: bool | None = None,
    desc: str | None = None,
    resume_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Run ``tasks`` and concatenate their tables in task order.

    Parameters
    ----------
    tasks:
        :class:`Task` objects; task ``i`` is called with ``seed=task_seeds(seed, n, stream)[i]``.
    seed, stream:
        Root seed of the run and an optional stream name (see :func:`root_sequence`).
    workers:
        Number of local worker processes when no ``executor`` is given (nor set by
        :func:`run_context`); ``1`` runs in this process without a pool.
    executor:
        A :class:`concurrent.futures.Executor` (or anything with ``submit`` returning
        futures with ``result()``, such as a ``dask.distributed.Client``); it is not shut
        down here. Overrides ``workers``. Default: the one of :func:`run_context`, if any.
    progress:
        Show a tqdm progress bar on stderr. ``None`` (default) or ``True`` show it only when
        stderr is a terminal (and only once the run has lasted 2 s); ``False`` never.
    desc:
        Label of the progress bar.
    resume_dir:
        Folder of task result files (default: the one of :func:`run_context`, if any).
        Tasks whose file is there are not run again: their table is read from it. Every
        task that finishes is written there at once (atomically), so an interrupted run
        loses only the tasks in flight, and of those only the Stan fits in flight when the
        tasks run on this machine (no ``executor``, a :class:`concurrent.futures.Executor`
        such as :func:`make_executor`'s pool, or a Dask client whose workers all run on this
        host, such as ``cluster.connect("local")``'s): each task's fits are checkpointed in
        ``<resume_dir>/<key>.fits/`` until its table is saved (:mod:`pystanprivacy.sampling.checkpoints`).

    Returns
    -------
    pandas.DataFrame
        The tables of all tasks (inside :func:`selected_tasks`: of the tasks it keeps), concatenated
        in task order with a fresh index.

    Raises
    ------
    RuntimeError
        When a task fails; the message names the task and the original exception is chained.
        The tasks not yet started are cancelled (also on ``KeyboardInterrupt``).
    """
    tasks = list(tasks)
    for t in tasks:
        if not isinstance(t, Task):
            raise TypeError(f"tasks must be Task objects, got {type(t).__name__}")
    workers = _check_workers(workers)
    ctx = _CONTEXT.get()
    if executor is None:
        executor = ctx.executor
    if resume_dir is None:
        resume_dir = ctx.resume_dir
    resume = None if resume_dir is None else Path(resume_dir)
    seeds = task_seeds(seed, len(tasks), stream)
    # selected_tasks: the others are left out here, every kept task with its whole-list index and seed
    select = _SELECT.get()
    chosen = [i for i, t in enumerate(tasks) if select is None or select(t)]
    results: list[pd.DataFrame | None] = [None] * len(tasks)
    read_seconds: list[float | None] = [None] * len(tasks)
    keys: list[str | None] = [None] * len(tasks)
    portable: list[tuple[str, Sketch] | None] = [None] * len(tasks)
    # what each kept task's key holds besides its arguments: study, version, program and data
    # digests (the same for a run's tasks of one function with the same declared inputs)
    memo: dict[tuple, dict[str, Any]] = {}  # one flattening per program and run, not per task
    inputs: dict[int, dict[str, Any]] = {i: _inputs(tasks[i], memo) for i in chosen}
    if resume is not None:
        for i in chosen:
            try:
                keys[i] = task_key(tasks[i], i, seed, stream, inputs=inputs[i])
                portable[i] = _portable_parts(tasks[i], i, seed, stream, inputs[i])
            except ValueError as exc:
                warnings.warn(f"{exc}; it will not be saved for resuming", RuntimeWarning, stacklevel=2)
        if resume.is_dir():
            if not ctx.saved_only:  # a reader leaves the temp files of a run writing there alone
                _clean_leftovers(resume, (k for k in keys if k is not None))
            mapped = read_portable_keys(resume) if any(p is not None for p in portable) else {}
            record: dict[str, tuple[str, Sketch]] = {}
            for i, k in enumerate(keys):
                if k is None:
                    continue
                # the exact key; else the file of its portable key and sketch (saved on another CPU)
                exact = _result_path(resume, k).exists()
                file_key = k
                if not exact and portable[i] is not None:
                    file_key = _portable_file(mapped, *portable[i], resume) or k
                    if file_key != k and resume == ctx.resume_dir:
                        ctx.found_by_portable_key.append(tasks[i].label)
                if file_key == k and not exact and ctx.pair_by_label:
                    if str(resume) not in ctx._labels:
                        ctx._labels[str(resume)] = _label_index(resume)
                    file_key = ctx._labels[str(resume)].get(tasks[i].label) or k
                    if file_key != k:
                        ctx.paired_by_label.append(tasks[i].label)
                saved = _load_result(resume, file_key, remove_damaged=not ctx.saved_only)
                if saved is not None:
                    results[i], read_seconds[i] = saved
                    if resume == ctx.resume_dir:
                        ctx.found.add(file_key)
                    if portable[i] is not None and not any(
                        f == file_key and sketches_match(sk, portable[i][1]) for f, sk in mapped.get(portable[i][0], [])
                    ):
                        record[portable[i][0]] = (file_key, portable[i][1])
            if record and ctx.saved_only:  # a reader writes nothing; it hands the pairs on
                ctx.portable_pairs.update(record)
            elif record:
                add_portable_keys(resume, record)
    todo = [i for i in chosen if results[i] is None]

    def name(i: int) -> str:
        # argument names only: the values may be private data
        return tasks[i].label or f"{tasks[i].fn.__qualname__}({', '.join(map(str, tasks[i].kwargs))})"

    if ctx.saved_only:  # run_context(saved_only=True, which requires resume_dir): nothing runs
        ctx.missing.extend(name(i) for i in todo)
        return _concat(results)
    loaded = len(chosen) - len(todo)
    # the counts of the command's run context, for the sidecars (only for its own resume folder)
    counts = ctx.task_counts if resume is not None and resume == ctx.resume_dir else None
    if counts is not None:
        counts["read"] += loaded
        counts["read_seconds"] += sum(s for s in read_seconds if s is not None)
        counts["read_untimed"] += sum(1 for i, r in enumerate(results) if r is not None and read_seconds[i] is None)
    if loaded and progress is not False:
        print(f"{desc or 'run'}: {loaded} of {len(chosen)} task(s) read from {resume}", file=sys.stderr, flush=True)

    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(chosen), initial=loaded, desc=desc, disable=not _progress_enabled(progress), delay=2.0, leave=False
    )

    def fail(i: int, exc: BaseException) -> RuntimeError:
        return RuntimeError(f"task {i} ({name(i)}) failed: {type(exc).__name__}: {exc}")

    # each resumable task run on this machine (in this process, a concurrent.futures pool such as
    # make_executor's, or a Dask cluster whose workers all run here) checkpoints its Stan fits
    # (sampling.checkpoints) in OUT/.tasks/<key>.fits/ until its result is saved; not on other
    # executors, whose workers may not see this folder
    local = (
        resume is not None
        and bool(todo)
        and (
            executor is None
            or isinstance(executor, cf.Executor)
            or (_is_dask_client(executor) and _dask_on_this_host(executor))
        )
    )
    ckpt: list[str | None] = [
        str(resume.resolve() / f"{k}{CHECKPOINT_SUFFIX}") if local and k is not None else None for k in keys
    ]

    def done(i: int, outcome: tuple[pd.DataFrame, float, tuple[int, float], dict[str, str], dict[str, str]]) -> None:
        frame, seconds, replayed, programs, files = outcome
        # a task that ran an undeclared program (or another version of one) or read an undeclared
        # data file is an error, never a saved result (pystanprivacy.run.study)
        check_inputs(tasks[i].fn, inputs[i], programs, files)
        results[i] = frame
        if resume is not None and keys[i] is not None:
            _save_result(resume, keys[i], frame, name(i), seconds, replayed, inputs[i])
            if portable[i] is not None:
                add_portable_keys(resume, {portable[i][0]: (keys[i], portable[i][1])})
        if ckpt[i] is not None:
            from ..sampling.checkpoints import FitCheckpoints

            FitCheckpoints(ckpt[i]).remove()
        if counts is not None:
            counts["run"] += 1
            counts["run_seconds"] += seconds
        bar.update()

    try:
        if executor is None and workers == 1:
            for i in todo:
                try:
                    outcome = _call(tasks[i].fn, tasks[i].kwargs, seeds[i], ckpt[i])
                    done(i, outcome)
                except Exception as exc:
                    raise fail(i, exc) from exc
        elif todo:
            with contextlib.ExitStack() as stack:
                ex = executor if executor is not None else stack.enter_context(make_executor(workers))
                dask = _is_dask_client(ex)
                ident: Callable[[Any], Any] = (lambda f: f.key) if dask else id
                run_id = uuid.uuid4().hex[:8]
                futures = []
                index: dict[Any, int] = {}
                try:
                    for i in todo:
                        t = tasks[i]
                        if dask:  # a readable, unique key per task on the dashboard (never reused)
                            fut = ex.submit(
                                _call,
                                t.fn,
                                dict(t.kwargs),
                                seeds[i],
                                ckpt[i],
                                pure=False,
                                key=f"{t.fn.__qualname__}-{i}-{run_id}",
                            )
                        else:
                            fut = ex.submit(_call, t.fn, dict(t.kwargs), seeds[i], ckpt[i])
                        futures.append(fut)
                        index[ident(fut)] = i
                    for fut in _as_completed(futures, dask=dask):
                        i = index[ident(fut)]
                        try:
                            outcome = fut.result()
                            done(i, outcome)
                        except Exception as exc:
                            raise fail(i, exc) from exc
                except BaseException:
                    if dask:
                        with contextlib.suppress(Exception):
                            ex.cancel(futures)
                    for f in futures:
                        with contextlib.suppress(Exception):
                            f.cancel()
                    raise
    finally:
        bar.close()
    return _concat(results)


def _inputs(task: Task, memo: dict[tuple, dict[str, Any]]) -> dict[str, Any]:
    """:meth:`Task.inputs`, computed once for the tasks of ``memo`` that declare the same study,
    programs, data files and data folder."""
    decl = task.declaration
    path = task.kwargs.get(decl.data_path)
    ident = (
        decl.study,
        decl.program_names(task.kwargs),
        decl.data_names(task.kwargs),
        None if path is None else str(path),
    )
    if ident not in memo:
        memo[ident] = decl.inputs(task.kwargs)
    return memo[ident]


def _concat(results: Sequence[pd.DataFrame | None]) -> pd.DataFrame:
    """The tables of the tasks that have one, in task order, with a fresh index (empty if none)."""
    frames = [r for r in results if r is not None]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


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
        from ..sampling.backends import select_backend

        b = select_backend(backend)
        info.update(name=b.name, version_tag=b.version_tag())
    except Exception as exc:  # noqa: BLE001 - reported, not raised: the table is still written
        info["error"] = f"{type(exc).__name__}: {exc}"
        return info
    try:
        import subprocess

        from ..sampling.stan import stanc_executable

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
    and the command line, plus anything in ``extra``. Inside a :func:`run_context` with a
    resume directory it also records ``tasks``: how many tasks this command has run and how
    many it read back from saved results so far, and the task seconds of each (summed over
    tasks, as measured where each ran), so that a reader can tell whether the ``seconds`` of a
    resumed run measure computation or only the rebuild, and what the whole study's tasks cost
    over all the runs that made it.

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
        "rows": len(table),
        "columns": [str(c) for c in table.columns],
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "command": sys.argv,
        "platform": platform.platform(),
    }
    ctx = _CONTEXT.get()
    if ctx.resume_dir is not None:
        counts = {k: (round(v, 1) if k.endswith("_seconds") else int(v)) for k, v in ctx.task_counts.items()}
        sidecar["tasks"] = {
            **counts,
            "resume_dir": str(ctx.resume_dir),
            "meaning": "tasks this command ran and read from saved results before this file was "
            "written, with their task seconds summed over tasks (read_untimed: saved "
            "results from before task files recorded their seconds)",
        }
    if extra:
        sidecar["extra"] = to_jsonable(dict(extra))
    json_path.write_text(json.dumps(sidecar, indent=2, sort_keys=False) + "\n")
    return csv_path, json_path
