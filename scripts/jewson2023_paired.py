#!/usr/bin/env python
"""Jewson et al. (2023), Figures 3, 9 and 10's network rows compared data set by data set:
βD-Bayes minus DP-SGD (the paper text's settings and, when its table is there, the authors'
code's) and minus the non-private posterior, per data set, n (or, with ``--features``, number of
features d) and epsilon (REPRODUCTION.md, J3, J9 and J10). Reads what ``pystanprivacy reproduce
jewson2023 --parts nn_<task>`` (or ``nn_features``) wrote to OUT: its table, or, while it is still
running, its saved tasks (found by their exact keys: give ``--quick``, ``--seed`` and ``--data`` as
the run had them). Fits nothing: seconds.

    python scripts/jewson2023_paired.py --task regression --out results/jewson2023
    python scripts/jewson2023_paired.py --task classification --out results/jewson2023 --write
    python scripts/jewson2023_paired.py --task regression --features --markdown

Prints the table; ``--write`` also writes ``jewson2023_nn_<task>_paired.csv`` (with ``--features``:
``jewson2023_nn_features_<task>_paired.csv``) and its sidecar to OUT, as part ``paired`` of
``pystanprivacy reproduce jewson2023`` does for every task; ``--markdown`` prints instead
REPRODUCTION.md's grids (βD minus each baseline, per data set: a row per epsilon, a column per n or
d of the run's grid, ``pending`` where that column's data sets are not all saved yet).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from pystanprivacy.experiments.jewson2023.common import PAPER
from pystanprivacy.experiments.jewson2023.paired import (
    AUTHORS_SUFFIX,
    AXIS,
    METRICS,
    features_table,
    markdown_grid,
    network_comparisons,
    network_table,
)
from pystanprivacy.experiments.jewson2023.study import FULL, QUICK
from pystanprivacy.run.runner import write_results


def print_markdown(
    paired: pd.DataFrame, counts: pd.Series, what: str, source: str, *, by: str, columns: list[int], repeats: int
) -> None:
    """REPRODUCTION.md's grids of beta-D against each baseline, per data set, over the run's n (or
    d); only (dataset, n) with all the run's data sets are filled (no half-finished column)."""
    for (dataset, n), c in counts[counts < repeats].items():
        print(f"{dataset} {AXIS[by]} = {n}: {c} of {repeats} data sets saved, shown as pending\n")
    done = pd.MultiIndex.from_frame(paired[["dataset", by]]).isin(counts[counts >= repeats].index)
    paired = paired[done]
    for (dataset, baseline), _ in paired[paired["method"] == "beta-D"].groupby(["dataset", "baseline"], sort=False):
        print(f"beta-D minus {baseline}, {dataset}, {what} ({source}):\n")
        print(markdown_grid(paired, dataset=dataset, method="beta-D", baseline=baseline, ns=columns, by=by))
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(METRICS), default="regression")
    parser.add_argument(
        "--features",
        action="store_true",
        help="Figure 10's network rows (part nn_features): compare per number of features d",
    )
    parser.add_argument("--out", type=Path, default=Path("results") / PAPER, help="the run's output folder")
    parser.add_argument("--quick", action="store_true", help="the run was --quick (its grid, to find its saved tasks)")
    parser.add_argument("--seed", type=int, default=0, help="the run's --seed (default 0)")
    parser.add_argument("--data", default=None, help="the run's --data, if it had one")
    parser.add_argument("--write", action="store_true", help="write the paired table and its sidecar to OUT")
    parser.add_argument("--markdown", action="store_true", help="print REPRODUCTION.md's grids of beta-D's comparisons")
    args = parser.parse_args(argv)
    size = QUICK if args.quick else FULL
    if args.features:
        part, by, columns, repeats = "nn_features", "d", list(size["nn_features_ds"]), size["nn_features_repeats"]
        if args.data is not None:
            parser.error("--data is not used with --features: nn_features runs on simulated data only")
    else:
        part, by, columns, repeats = f"nn_{args.task}", "n_obs", list(size["nn_ns"]), size["nn_repeats"]
    try:
        if args.features:
            table, source = features_table(args.out, args.task, quick=args.quick, seed=args.seed)
        else:
            table, source = network_table(args.out, args.task, quick=args.quick, seed=args.seed, data_path=args.data)
    except (FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    paired = network_comparisons(table, args.task, by=by)
    counts = (
        table[~table["method"].str.endswith(AUTHORS_SUFFIX)]
        .drop_duplicates(["dataset", by, "repeat"])
        .groupby(["dataset", by])
        .size()
    )
    metric = METRICS[args.task][0]
    what = "log " + metric if args.task == "regression" else metric
    name = f"{part} ({args.task})" if args.features else part
    if args.markdown:
        print_markdown(paired, counts, what, f"{name} from its {source}", by=by, columns=columns, repeats=repeats)
    else:
        print(f"{name} from its {source}: data sets per (dataset, {by}):")
        print(counts.to_string())
        with pd.option_context("display.width", 200, "display.max_rows", None):
            print(
                f"\nmethod minus baseline, {what}, mean over paired repeats (se; better = pairs where the method won):"
            )
            print(paired.round(3).to_string(index=False))
    if args.write:
        meta = {
            "task": args.task,
            "part": part,
            "metric": what,
            "source": source,
            "data_sets": {f"{ds} {AXIS[by]}={n}": int(c) for (ds, n), c in counts.items()},
        }
        stem = f"{PAPER}_nn_features_{args.task}_paired" if args.features else f"{PAPER}_nn_{args.task}_paired"
        csv, _ = write_results(args.out, stem, paired, meta)
        print(f"\nwrote {csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
