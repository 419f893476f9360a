#!/usr/bin/env python
"""Jewson et al. (2023), Figures 3 and 9 compared data set by data set: βD-Bayes minus DP-SGD
(the paper text's settings and, when its table is there, the authors' code's) and minus the
non-private posterior, per data set, n and epsilon (REPRODUCTION.md, J3 and J9). Reads what
``pystanprivacy reproduce jewson2023 --parts nn_<task>`` wrote to OUT: its table, or its saved
tasks while it is still running. Fits nothing: seconds.

    python scripts/jewson2023_paired.py --task regression --out results/jewson2023
    python scripts/jewson2023_paired.py --task classification --out results/jewson2023 --write

Prints the table; ``--write`` also writes ``jewson2023_nn_<task>_paired.csv`` and its sidecar to OUT;
``--markdown`` prints instead REPRODUCTION.md's grids (βD minus each baseline, per data set: a row per
epsilon, a column per n of the full run, ``pending`` where that n's data sets are not all saved yet).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from pystanprivacy.experiments.jewson2023.common import PAPER
from pystanprivacy.experiments.jewson2023.paired import (AUTHORS_SUFFIX, METRICS, markdown_grid, network_comparisons,
                                                         network_table)
from pystanprivacy.experiments.jewson2023.study import FULL
from pystanprivacy.run.runner import write_results


def print_markdown(paired: pd.DataFrame, counts: pd.Series, what: str, source: str) -> None:
    """REPRODUCTION.md's grids of beta-D against each baseline, per data set, over the full run's n;
    only (dataset, n) with all the full run's data sets are filled (no half-finished column)."""
    for (dataset, n), c in counts[counts < FULL["nn_repeats"]].items():
        print(f"{dataset} n = {n}: {c} of {FULL['nn_repeats']} data sets saved, shown as pending\n")
    done = pd.MultiIndex.from_frame(paired[["dataset", "n_obs"]]).isin(counts[counts >= FULL["nn_repeats"]].index)
    paired = paired[done]
    for (dataset, baseline), _ in paired[paired["method"] == "beta-D"].groupby(["dataset", "baseline"], sort=False):
        print(f"beta-D minus {baseline}, {dataset}, {what} ({source}):\n")
        print(markdown_grid(paired, dataset=dataset, method="beta-D", baseline=baseline, ns=list(FULL["nn_ns"])))
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(METRICS), default="regression")
    parser.add_argument("--out", type=Path, default=Path("results") / PAPER, help="the run's output folder")
    parser.add_argument("--write", action="store_true", help="write the paired table and its sidecar to OUT")
    parser.add_argument("--markdown", action="store_true", help="print REPRODUCTION.md's grids of beta-D's comparisons")
    args = parser.parse_args(argv)
    try:
        table, source = network_table(args.out, args.task)
    except (FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    paired = network_comparisons(table, args.task)
    counts = (table[~table["method"].str.endswith(AUTHORS_SUFFIX)].drop_duplicates(["dataset", "n_obs", "repeat"])
              .groupby(["dataset", "n_obs"]).size())
    metric = METRICS[args.task][0]
    what = "log " + metric if args.task == "regression" else metric
    if args.markdown:
        print_markdown(paired, counts, what, f"nn_{args.task} from its {source}")
    else:
        print(f"nn_{args.task} from its {source}: data sets per (dataset, n_obs):")
        print(counts.to_string())
        with pd.option_context("display.width", 200, "display.max_rows", None):
            print(f"\nmethod minus baseline, {what}, mean over paired repeats (se; better = pairs where the method won):")
            print(paired.round(3).to_string(index=False))
    if args.write:
        meta = {"task": args.task, "metric": what, "source": source,
                "data_sets": {f"{ds} n={n}": int(c) for (ds, n), c in counts.items()}}
        csv, _ = write_results(args.out, f"{PAPER}_nn_{args.task}_paired", paired, meta)
        print(f"\nwrote {csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
