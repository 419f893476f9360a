"""The command line shared by the per-paper scripts in ``scripts/``.

Each ``scripts/<paper>.py`` is a thin wrapper: it calls :func:`run_reproduce` with its module
and help texts, then prints the summary tables it cares about. The options are those of
``pystanprivacy reproduce`` (``--quick|--full --out --seed --workers --scheduler
--fresh|--no-resume --no-progress``, and ``--data`` when the script has a help text for it,
by default the ``DATA_HELP`` its paper declares: the paper protocol of
:mod:`pystanprivacy.experiments`): Dask and resuming from ``OUT/.tasks`` work the same way.
This module only calls the ``reproduce`` it is given; it imports no paper.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .options import (
    add_scale_options,
    check_full_extras,
    check_scale_options,
    default_out,
    resume_context,
    scale_executor,
)

__all__ = ["DECLARED", "run_reproduce"]


class _Declared:
    """The default of :func:`run_reproduce`'s ``data_help``: the ``DATA_HELP`` the module declares."""

    def __repr__(self) -> str:
        return "DECLARED"


#: default of :func:`run_reproduce`'s ``data_help``: the ``DATA_HELP`` the module declares
DECLARED = _Declared()


def run_reproduce(
    module: ModuleType,
    argv: Sequence[str] | None,
    *,
    description: str,
    quick_help: str = "small run (default)",
    full_help: str = "the paper's full grids and repeat counts",
    data_flags: Sequence[str] = ("--data",),
    data_help: str | None | _Declared = DECLARED,
) -> dict[str, Any]:
    """Parse ``argv``, run ``module.reproduce`` and return its tables.

    ``module`` has ``PAPER`` and ``reproduce(out_dir, *, quick, seed, workers, progress,
    data_path=None)``: a paper's package or one of its study modules. ``data_help`` adds the
    data option (``data_flags``), passed on as ``data_path``; it must name an existing file or
    folder. By default (:data:`DECLARED`) it is the ``DATA_HELP`` that ``module`` declares
    (``None``, no option, when it declares none); ``None`` leaves the option out. Bad options
    end as argparse usage errors (exit code 2).
    """
    if data_help is DECLARED:
        data_help = getattr(module, "DATA_HELP", None)
    if not (data_help is None or isinstance(data_help, str)):
        raise TypeError(f"data_help must be a string, None or DECLARED, got {data_help!r}")
    parser = argparse.ArgumentParser(description=description)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help=quick_help)
    size.add_argument("--full", action="store_true", help=full_help)
    parser.add_argument(
        "--out",
        default=None,
        help="output folder (default: ./results/PAPER with --full, ./results-quick/PAPER with --quick)",
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed (reproducibility, not security)")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local worker processes (default 1), or the size of the --scheduler local cluster",
    )
    add_scale_options(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    if data_help is not None:
        parser.add_argument(*data_flags, dest="data", metavar="PATH", default=None, help=data_help)
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = str(default_out(args.full, module.PAPER))
    check_scale_options(args, parser)
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    check_full_extras(args, parser, [module])
    extra: dict[str, Any] = {}
    if data_help is not None and args.data is not None:
        if not Path(args.data).exists():
            parser.error(f"{data_flags[0]} {args.data!r}: no such file or folder")
        extra["data_path"] = args.data
    start = time.perf_counter()
    try:
        with scale_executor(args) as (executor, workers, _), resume_context(args, Path(args.out), executor):
            tables = module.reproduce(
                args.out, quick=not args.full, seed=args.seed, workers=workers, progress=not args.no_progress, **extra
            )
    except FileNotFoundError as exc:  # a data file the run needs: the loader's message says which and where
        parser.error(str(exc))
    print(f"done in {time.perf_counter() - start:.1f} s; results in {Path(args.out).resolve()}")
    return tables
