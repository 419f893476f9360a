"""What a task's result depends on, declared beside its function: the study it belongs to and its
version, the Stan programs it runs and the shipped data files it reads.

Every function that :class:`pystanprivacy.run.runner.Task` accepts carries a declaration::

    STUDY = Study(name="bernstein2018/calibration", version=1)

    @STUDY.task(programs=("bernstein2018/binomial_beta", "bernstein2018/exponential_gamma"))
    def calibration_task(*, model, n, epsilon, trials, seed): ...

A task's key (:func:`pystanprivacy.run.runner.task_key`) is made of the study's name and version,
the digest of every declared program (:func:`pystanprivacy.sampling.stan.program_digest`: the
flattened program, includes resolved, without comments) and of every declared data file
(:func:`data_file_digest`), the task's arguments and its seeds -- never the source text of the
module, so that a docstring, a comment or a refactoring that keeps the results keeps the keys.

- **A change of meaning bumps ``version``**: whatever changes a task's table for the same
  arguments and seed in Python (a new statistic, another draw order, a fixed bug) must come with
  ``version + 1``, which gives every task of the study a new key (so a resume runs them again).
- **A changed program changes the key by itself**: ``programs`` names every Stan program the task
  may run (a registry name such as ``'kulkarni2022/gaussian'``, or the path of a ``.stan`` file);
  ``programs`` may also be a function of the task's keyword arguments returning those names, for a
  task function that picks its model from its arguments.
- **A changed data file changes the key by itself**: ``data`` names the files the task reads
  through :func:`pystanprivacy.datasets.uci.find_data_file` (e.g. ``'abalone.data'``), or is a
  function of the keyword arguments. Data passed *in* the arguments are in the key through their
  content already (:mod:`pystanprivacy._fingerprint`).

The declaration is checked where the task runs: the runner records every program that runs
(:func:`pystanprivacy.sampling.stan.recording_programs`, with the digest of the program text that
was compiled) and every data file found (:func:`pystanprivacy.datasets.uci.recording_data_files`)
while the task runs, and a task that ran an undeclared program, a program whose text is not the
one its key names (a worker that compiled it before the file changed), or read an undeclared data
file fails instead of being saved (:class:`UndeclaredInput`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "Study",
    "TaskDeclaration",
    "UndeclaredInput",
    "declaration",
    "data_file_digest",
]

#: the attribute of a task function that holds its :class:`TaskDeclaration`
ATTRIBUTE = "__pystanprivacy_task__"

Names = tuple[str, ...] | Callable[[Mapping[str, Any]], Iterable[str]]


class UndeclaredInput(RuntimeError):
    """A task ran a Stan program or read a data file that its declaration does not name (or a
    program whose text is not the one its key was made with): its result is not saved."""


def _check_names(value: Any, what: str) -> Names:
    if callable(value):
        return value
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a tuple of names or a function of the task's arguments, got {value!r}")
    names = tuple(value)
    if not all(isinstance(v, str) and v for v in names):
        raise TypeError(f"{what} must hold non-empty strings, got {names!r}")
    return names


@dataclasses.dataclass(frozen=True)
class Study:
    """A study: ``name`` (e.g. ``'kulkarni2022/calibration'``) and ``version``, an int >= 1 bumped
    whenever the study's tasks compute something else for the same arguments and seeds."""

    name: str
    version: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"Study name must be a non-empty string, got {self.name!r}")
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise ValueError(f"Study version must be an int >= 1, got {self.version!r}")

    def task(
        self, *, programs: Names = (), data: Names = (), data_path: str = "data_path"
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare the decorated function a task of this study that may run ``programs`` and read
        ``data`` (see the module's docstring), found where the task's keyword argument
        ``data_path`` points (a file or folder, as for ``find_data_file``; absent or ``None``: the
        default places); the function itself is returned unchanged."""
        if not isinstance(data_path, str) or not data_path:
            raise TypeError(f"data_path must name a keyword argument, got {data_path!r}")
        decl = TaskDeclaration(self, _check_names(programs, "programs"), _check_names(data, "data"), data_path)

        def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
            if not callable(fn):
                raise TypeError(f"Study.task decorates a function, got {fn!r}")
            setattr(fn, ATTRIBUTE, decl)
            return fn

        return mark


@dataclasses.dataclass(frozen=True)
class TaskDeclaration:
    """What :meth:`Study.task` attached to a task function."""

    study: Study
    programs: Names = ()
    data: Names = ()
    data_path: str = "data_path"

    def program_names(self, kwargs: Mapping[str, Any]) -> tuple[str, ...]:
        """The programs the task with these arguments may run, sorted."""
        names = self.programs(kwargs) if callable(self.programs) else self.programs
        return tuple(sorted(set(_check_names(tuple(names), "programs"))))

    def data_names(self, kwargs: Mapping[str, Any]) -> tuple[str, ...]:
        """The data files the task with these arguments may read, sorted."""
        names = self.data(kwargs) if callable(self.data) else self.data
        return tuple(sorted(set(_check_names(tuple(names), "data"))))

    def inputs(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The key fields of this declaration for a task with these arguments: the study's name
        and version and the digests of its programs and data files as they are now."""
        from ..sampling.stan import program_digest

        return {
            "study": self.study.name,
            "version": self.study.version,
            "programs": {p: program_digest(p) for p in self.program_names(kwargs)},
            "data": {f: data_file_digest(f, kwargs.get(self.data_path)) for f in self.data_names(kwargs)},
        }


def declaration(fn: Callable[..., Any]) -> TaskDeclaration:
    """The :class:`TaskDeclaration` of task function ``fn``; ``TypeError`` when it has none."""
    decl = getattr(fn, ATTRIBUTE, None)
    if not isinstance(decl, TaskDeclaration):
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
        raise TypeError(
            f"task function {name} declares no study: decorate it with @STUDY.task(programs=..., data=...) "
            "where STUDY = pystanprivacy.run.study.Study(name=..., version=...) (a task is keyed by its "
            "study's version, programs and data, never by its module's source)"
        )
    return decl


@functools.cache
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:24]


def data_file_digest(filename: str, path: str | os.PathLike | None = None) -> str:
    """SHA-256 (24 hex digits) of the bytes of data file ``filename`` where
    :func:`pystanprivacy.datasets.uci.find_data_file` finds it now (in ``path``; without it
    ``$PYSTANPRIVACY_DATA``, then the shipped ``data/``); ``FileNotFoundError`` as there."""
    from ..datasets.uci import find_data_file

    return path_digest(find_data_file(filename, path))


def path_digest(path: str | os.PathLike) -> str:
    """SHA-256 (24 hex digits) of the bytes of the file at ``path`` (read once per version)."""
    st = Path(path).stat()
    return _file_digest(str(Path(path).resolve()), st.st_mtime_ns, st.st_size)


def check_inputs(
    fn: Callable[..., Any],
    keyed: Mapping[str, Any],
    programs: Mapping[str, str],
    files: Mapping[str, str | os.PathLike],
) -> None:
    """Raise :class:`UndeclaredInput` unless the ``programs`` (``{name: digest}``) that ran and
    the data ``files`` (``{name: path}``) that were read while task function ``fn`` ran are among
    the ``keyed`` inputs (:meth:`TaskDeclaration.inputs`) of its key, with the same digests."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    for prog, digest in sorted(programs.items()):
        if prog not in keyed["programs"]:
            raise UndeclaredInput(
                f"task {name} ran the Stan program {prog!r}, which its study declaration does not name "
                f"(declared: {sorted(keyed['programs'])}); add it to @STUDY.task(programs=...)"
            )
        if keyed["programs"][prog] != digest:
            raise UndeclaredInput(
                f"task {name} ran a version of the Stan program {prog!r} (digest {digest}) other than the "
                f"one its key names ({keyed['programs'][prog]}): the program changed after this process "
                "compiled it; run the task again in a fresh process"
            )
    for file, path in sorted(files.items()):
        if file not in keyed["data"]:
            raise UndeclaredInput(
                f"task {name} read the data file {file!r}, which its study declaration does not name "
                f"(declared: {sorted(keyed['data'])}); add it to @STUDY.task(data=...)"
            )
        if keyed["data"][file] != path_digest(path):
            raise UndeclaredInput(
                f"task {name} read a version of the data file {file!r} other than the one its key names"
            )
