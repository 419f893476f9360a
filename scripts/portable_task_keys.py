#!/usr/bin/env python
"""Record the portable task keys and sketches of a paper's saved full-scale tasks in
``results/PAPER/.tasks/portable-keys.index`` (:func:`pystanprivacy.run.runner.portable_task_key`,
:func:`~pystanprivacy.run.runner.task_sketch`), so that a resume (and
``tests/run/test_committed_results.py``) finds them on a CPU whose BLAS rounds the tasks' data
arrays differently. Runs nothing: it reads the paper's full study back
from the saved tasks (``run_context(saved_only=True)``) and writes only that file.

    python scripts/portable_task_keys.py foulds2016 bernstein2018 kulkarni2022 jewson2023
    python scripts/portable_task_keys.py kulkarni2022 --pair-by-label

A resume records these keys itself for the tasks it finds by their exact keys; this script is
for results saved before portable keys existed. ``--pair-by-label`` also pairs a task found by
neither key with the one saved file carrying its label: only for a folder whose tasks' code is
known to be unchanged (``git log`` of the task modules) on a machine whose BLAS gives other
exact keys (Kulkarni et al.'s PCA features, 2026-12-03: saved on an AVX-512 machine, read on an
AMD EPYC one whose OpenBLAS uses its Haswell kernels).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path

from pystanprivacy.run.runner import add_portable_keys, run_context

RESULTS = Path(__file__).resolve().parents[1] / "results"
PAPERS = ("foulds2016", "bernstein2018", "kulkarni2022", "jewson2023")


def record(paper: str, *, pair_by_label: bool = False, results: Path = RESULTS) -> dict[str, int]:
    """Read ``paper``'s full study back from ``results/PAPER/.tasks`` and add its tasks'
    portable keys there; the counts of what was read, paired and added."""
    tasks = results / paper / ".tasks"
    if not tasks.is_dir():
        raise FileNotFoundError(f"no saved tasks for paper={paper!r}: {tasks} is not a folder")
    study = importlib.import_module(f"pystanprivacy.experiments.{paper}")
    with (
        tempfile.TemporaryDirectory() as out,
        run_context(resume_dir=tasks, saved_only=True, pair_by_label=pair_by_label) as ctx,
    ):
        try:
            study.reproduce(Path(out), quick=False, progress=False)
        except Exception as exc:  # noqa: BLE001 - a table of missing tasks can fail to build; the pairs stand
            print(f"{paper}: the study stopped building its tables ({type(exc).__name__}: {exc})", file=sys.stderr)
    added = add_portable_keys(tasks, ctx.portable_pairs)
    return {
        "files_read": len(ctx.found),
        "paired_by_label": len(ctx.paired_by_label),
        "missing": len(ctx.missing),
        "portable_keys": len(ctx.portable_pairs),
        "added": added,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("papers", nargs="+", choices=PAPERS)
    parser.add_argument(
        "--pair-by-label",
        action="store_true",
        help="pair tasks found by neither key with the saved file of their label",
    )
    args = parser.parse_args(argv)
    for paper in args.papers:
        print(paper, record(paper, pair_by_label=args.pair_by_label))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
