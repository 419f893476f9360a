#!/usr/bin/env python
"""Jewson et al. (2023), the simulated logistic experiments on the design Sec. 5 states (d features,
no intercept; REPRODUCTION.md J2, J7, J10), beside a run of the study in the same folder.

    python scripts/jewson2023_paper_design.py --full --workers 1 --out results/jewson2023
    python scripts/jewson2023_paper_design.py --full --parts figure2

``figure2``: :func:`~pystanprivacy.experiments.jewson2023.paper_design.logistic_paper` on the study's
simulated grid (``logistic_sim_ns``, ``logistic_sim_epsilons``, ``logistic_repeats``; d = 2), written
as ``jewson2023_logistic_paper_design{,_summary}.{csv,json}`` and drawn with the study's UCI panels
(``jewson2023_logistic_summary.csv``, when in the folder: J2's verdict rests on both) in
``jewson2023_paper_design_figure2.png``.

``features``: :func:`~pystanprivacy.experiments.jewson2023.paper_design.features_paper` on the study's
Figure 10 grid (``features_ds``, ``features_n``, ``features_epsilons``, ``features_repeats``), written
as ``jewson2023_features_paper_design{,_summary}.{csv,json}`` and drawn with the study's
``jewson2023_features.csv`` in ``jewson2023_paper_design_figure10.png``.

The tasks are saved in ``OUT/paper_design/.tasks`` (resumable; kept apart from ``OUT/.tasks``, which
holds exactly the study's).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pystanprivacy.experiments.jewson2023.common import PAPER
from pystanprivacy.experiments.jewson2023.paper_design import (
    FEATURES_STREAM,
    LOGISTIC_STREAM,
    features_paper,
    logistic_paper,
)
from pystanprivacy.experiments.jewson2023.paper_design_figures import (
    design_figure2,
    design_figure10,
    summarise_design,
)
from pystanprivacy.experiments.jewson2023.study import FULL, QUICK
from pystanprivacy.run.runner import make_executor, run_context, write_results

PARTS = ("figure2", "features")
#: the resume folder of this script's tasks, inside OUT
TASKS = Path("paper_design") / ".tasks"
DESIGN = (
    "Sec. 5 as stated: d features N(0, I), clipped to [-4, 4] and mapped onto [0, 1]; d coefficients N(0, 3^2); "
    "labels Bernoulli(inv_logit(x' theta)) of the scaled features; no constant column, fitted without an intercept "
    "(pystanprivacy.experiments.jewson2023.data.simulate_logistic_paper)"
)


def git_commit() -> str | None:
    """The checkout's commit (``+dirty`` with uncommitted changes to tracked files), or ``None``."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def class_balance(table: pd.DataFrame, by: str) -> dict[str, dict[str, float]]:
    """Per value of ``by``: over the data sets (one per (``by``, repeat)), the quartiles of the
    training share of y = 1 and how many test sets hold one class only (``auc`` NaN there)."""
    out = {}
    for key, g in table.drop_duplicates([by, "repeat"]).groupby(by):
        q = np.quantile(g["y1_share"], [0.0, 0.25, 0.5, 0.75, 1.0])
        one_class = int(((g["y1_share_test"] == 0) | (g["y1_share_test"] == 1)).sum())
        out[str(key)] = {
            "data_sets": len(g),
            "y1_share_min_q25_median_q75_max": [round(float(v), 4) for v in q],
            "one_class_test_sets": one_class,
        }
    return out


def study_rows(out: Path, name: str, by: tuple[str, ...]) -> pd.DataFrame | None:
    """:func:`summarise_design` of the study's simulated rows of ``jewson2023_<name>.csv`` in
    ``out``, or ``None`` when the study has not written it there."""
    path = out / f"{PAPER}_{name}.csv"
    if not path.is_file():
        return None
    table = pd.read_csv(path)
    return summarise_design(table[table["dataset"] == "simulated"], by)


def figure2_part(out: Path, grid: dict, args: argparse.Namespace, common: dict) -> None:
    start = time.perf_counter()
    with make_executor(args.workers) as ex:
        table = logistic_paper(
            ns=grid["logistic_sim_ns"],
            epsilons=grid["logistic_sim_epsilons"],
            repeats=grid["logistic_repeats"],
            d=2,
            sampler=grid["sampler"],
            seed=args.seed,
            workers=args.workers,
            executor=ex,
            progress=False,
        )
    by = ("dataset", "method", "epsilon", "n_obs")
    summary = summarise_design(table, by)
    meta = {
        **common,
        "design": DESIGN,
        "d": 2,
        "ns": grid["logistic_sim_ns"],
        "epsilons": grid["logistic_sim_epsilons"],
        "repeats": grid["logistic_repeats"],
        "sampler": dict(grid["sampler"]),
        "seed_stream": f"{PAPER}/{LOGISTIC_STREAM} (data: its /data child)",
        "class_balance_by_n": class_balance(table, "n_obs"),
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{PAPER}_logistic_paper_design", table, meta)
    write_results(out, f"{PAPER}_logistic_paper_design_summary", summary, meta)
    uci = out / f"{PAPER}_logistic_summary.csv"  # J2's UCI half, the study's
    design_figure2(
        summary, None, out / f"{PAPER}_paper_design_figure2.png", uci=pd.read_csv(uci) if uci.is_file() else None
    )
    print(
        summary.pivot_table(index=["method", "epsilon"], columns="n_obs", values="log_rmse_mean").round(2).to_string()
    )


def features_part(out: Path, grid: dict, args: argparse.Namespace, common: dict) -> None:
    start = time.perf_counter()
    with make_executor(args.workers) as ex:
        table = features_paper(
            ds=grid["features_ds"],
            n_obs=grid["features_n"],
            epsilons=grid["features_epsilons"],
            repeats=grid["features_repeats"],
            sampler=grid["sampler"],
            seed=args.seed,
            workers=args.workers,
            executor=ex,
            progress=False,
        )
    by = ("dataset", "method", "epsilon", "d")
    summary = summarise_design(table, by)
    meta = {
        **common,
        "design": DESIGN,
        **{k: grid[k] for k in grid if k.startswith("features")},
        "sampler": dict(grid["sampler"]),
        "seed_streams": [f"{PAPER}/{FEATURES_STREAM.format(d=d)}" for d in grid["features_ds"]],
        "class_balance_by_d": class_balance(table, "d"),
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{PAPER}_features_paper_design", table, meta)
    write_results(out, f"{PAPER}_features_paper_design_summary", summary, meta)
    design_figure10(summary, study_rows(out, "features", by), out / f"{PAPER}_paper_design_figure10.png")
    print(summary.pivot_table(index=["method", "epsilon"], columns="d", values="log_rmse_mean").round(2).to_string())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the study's quick grid (default)")
    size.add_argument("--full", action="store_true", help="the study's full grid (the paper's)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {PARTS}")
    parser.add_argument(
        "--out", type=Path, default=None, help="the study's output folder (default: results[-quick]/jewson2023)"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed (0 by default)")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    if not parts or set(parts) - set(PARTS):
        parser.error(f"--parts must be a comma-separated subset of {PARTS}, got {args.parts!r}")
    grid = FULL if args.full else QUICK
    out = args.out if args.out is not None else Path("results" if args.full else "results-quick") / PAPER
    common = {
        "seed": args.seed,
        "full": bool(args.full),
        "workers": args.workers,
        "git_commit": git_commit(),
        "resume_dir": str(out / TASKS),
    }
    with run_context(resume_dir=out / TASKS):
        if "figure2" in parts:
            figure2_part(out, grid, args, common)
        if "features" in parts:
            features_part(out, grid, args, common)
    return 0


if __name__ == "__main__":
    sys.exit(main())
