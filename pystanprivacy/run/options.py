"""Command-line options shared by ``pystanprivacy reproduce`` and the per-paper scripts:
``--scheduler``, ``--parallel-chains``, ``--fresh`` / ``--no-resume``, and the executor and
resume folder they choose."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "RESUME_DIR",
    "FULL_ROOT",
    "QUICK_ROOT",
    "default_out",
    "add_scale_options",
    "check_scale_options",
    "check_full_extras",
    "missing_full_extras",
    "scale_executor",
    "resume_context",
]

#: folder (inside a reproduction's output folder) of its per-task result files
RESUME_DIR = ".tasks"
#: default output roots: a --full run writes beside the committed full-scale results, a --quick run
#: never does (it would overwrite them and mix its saved tasks with theirs)
FULL_ROOT, QUICK_ROOT = "results", "results-quick"


def default_out(full: bool, paper: str | None = None) -> Path:
    """``results/PAPER`` for a full run, ``results-quick/PAPER`` for a quick one (the root
    alone when ``paper`` is None, as for ``reproduce all``)."""
    root = Path(FULL_ROOT if full else QUICK_ROOT)
    return root if paper is None else root / paper


def add_scale_options(parser: argparse.ArgumentParser) -> None:
    """``--scheduler``, ``--parallel-chains``, ``--without-extras``, ``--fresh`` and ``--no-resume``
    (shared with ``scripts/<paper>.py``)."""
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help=(
            "run the tasks on Dask (needs pystanprivacy[scale]): 'local' starts a local cluster of --workers "
            "single-threaded worker processes (default: one per CPU); an address such as tcp://host:8786 "
            "uses a running cluster (its workers started with DASK_DISTRIBUTED__WORKER__DAEMON=False "
            "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False)"
        ),
    )
    parser.add_argument(
        "--parallel-chains",
        metavar="N",
        type=int,
        default=None,
        help=(
            "run at most N chains of a fit at once in each worker (default: one process runs its chains on every "
            "CPU; a pool or Dask worker gets its share of its host's CPUs, at least 1; or "
            "$PYSTANPRIVACY_PARALLEL_CHAINS); the draws do not depend on it"
        ),
    )
    parser.add_argument(
        "--without-extras",
        action="store_true",
        help=(
            "with --full: run parts whose comparison needs a missing optional extra (e.g. "
            "jewson2023's DP-SGD rows need [dpsgd]) without those rows; their saved task results "
            "then lack them on every resumed run (--fresh to redo)"
        ),
    )
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "--fresh",
        action="store_true",
        help=f"delete the saved task results (OUT/{RESUME_DIR}) first and run every task again",
    )
    resume.add_argument(
        "--no-resume",
        action="store_true",
        help=f"neither read nor write saved task results (default: resume from OUT/{RESUME_DIR})",
    )


def check_scale_options(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Usage errors for ``--workers`` / ``--scheduler``; sets ``args.workers`` to an int
    (``None`` for a running cluster, whose size is known only once connected)."""
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    if args.parallel_chains is not None:
        if args.parallel_chains < 1:
            parser.error(f"--parallel-chains must be >= 1, got {args.parallel_chains}")
        from ..sampling.backends.base import PARALLEL_CHAINS_ENV, set_parallel_chains

        # this process, and the pool and local Dask workers it starts (they inherit the variable)
        os.environ[PARALLEL_CHAINS_ENV] = str(args.parallel_chains)
        set_parallel_chains(args.parallel_chains)
    if args.scheduler is None:
        args.workers = 1 if args.workers is None else args.workers
    elif args.scheduler == "local":
        args.workers = args.workers if args.workers is not None else (os.cpu_count() or 1)
    else:
        if args.workers is not None:
            parser.error(
                f"--workers is for a local pool or --scheduler local; the cluster at {args.scheduler} "
                "has the workers it was started with"
            )
        if "://" not in args.scheduler:
            parser.error(f"--scheduler must be 'local' or an address such as tcp://host:8786, got {args.scheduler!r}")


def missing_full_extras(module: Any, parts: Sequence[str] | None = None) -> list[str]:
    """One line per selected part (``parts``; ``None``: all) of paper ``module`` whose
    full-scale comparison needs an optional extra that is not installed (the paper's
    ``FULL_EXTRAS``: part -> ``(extra, is_installed)``, see :mod:`pystanprivacy.experiments`);
    an empty list when nothing is missing or the paper declares none."""
    needs: Mapping[str, tuple[str, Callable[[], bool]]] = getattr(module, "FULL_EXTRAS", None) or {}
    lines = []
    for part, (extra, is_installed) in needs.items():
        if (parts is None or part in parts) and not is_installed():
            lines.append(
                f"part {part!r} of {getattr(module, 'PAPER', module)} needs the optional extra "
                f"[{extra}] (pip install 'pystanprivacy[{extra}]')"
            )
    return lines


def check_full_extras(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    modules: Sequence[Any],
    parts: Sequence[str] | None = None,
) -> None:
    """A usage error, before anything runs, when ``--full`` selects a part of one of the papers
    ``modules`` whose comparison needs a missing optional extra
    (:func:`missing_full_extras`), unless ``--without-extras``."""
    if not args.full or args.without_extras:
        return
    missing = [line for m in modules for line in missing_full_extras(m, parts)]
    if missing:
        parser.error(
            "--full: " + "; ".join(missing) + ". Without it those rows are left out, and the saved task "
            "results would keep them out on every resumed run. Install the extra, or pass --without-extras "
            "(or --parts without those parts)"
        )


@contextlib.contextmanager
def scale_executor(args: argparse.Namespace) -> Iterator[tuple[Any, int, str]]:
    """``(client or None, workers, description)``: a Dask client for ``--scheduler`` (closed
    on exit, its local cluster stopped), else ``None`` and the local pool size."""
    if args.scheduler is None:
        yield None, args.workers, f"{args.workers} worker(s)"
        return
    from . import cluster

    try:
        cluster.import_distributed()
    except ImportError as exc:
        raise SystemExit(f"pystanprivacy: error: {exc}") from None
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(
                cluster.connect(
                    args.scheduler,
                    workers=args.workers if args.scheduler == "local" else None,
                    parallel_chains=args.parallel_chains,
                )
            )
        except (OSError, RuntimeError) as exc:  # unreachable scheduler, workers that cannot run Stan
            raise SystemExit(f"pystanprivacy: error: {exc}") from None
        n = cluster.total_threads(client)
        where = "a local Dask cluster" if args.scheduler == "local" else f"the Dask cluster at {args.scheduler}"
        yield client, n, f"{where}, {n} worker thread(s)"


@contextlib.contextmanager
def resume_context(args: argparse.Namespace, out: Path, executor: Any) -> Iterator[Path | None]:
    """:func:`pystanprivacy.run.runner.run_context` with ``executor`` and the resume folder
    ``out/.tasks`` (emptied first with ``--fresh``, with the part folders' ``out/*/.tasks`` of
    :func:`pystanprivacy.run.runner.part_folder`; none with ``--no-resume``)."""
    from .runner import run_context

    resume: Path | None = None if args.no_resume else out / RESUME_DIR
    if resume is not None and args.fresh:
        for folder in (resume, *sorted(out.glob(f"*/{RESUME_DIR}"))):
            if folder.is_dir():
                shutil.rmtree(folder)
    if resume is not None and resume.is_dir():
        saved = sum(1 for p in resume.glob("*.json"))
        if saved:
            print(
                f"resuming: {saved} saved task result(s) in {resume} are used, not run again "
                "(--fresh to run everything again)",
                flush=True,
            )
    with run_context(executor=executor, resume_dir=resume):
        yield resume
