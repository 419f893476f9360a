#!/usr/bin/env python
"""DP-SGD of Jewson et al. (2023) under the paper's stated settings and under the settings of
the authors' public code, on the data sets of the network part ``nn_regression`` or
``nn_classification`` (Figures 3, 9): same seeds, so each row pairs with that part's rows by
data set, n and repeat (REPRODUCTION.md, J3). No Stan fit: seconds per task.

    python scripts/jewson2023_dpsgd_settings.py --task regression --full --workers 1 --out results/jewson2023
    python scripts/jewson2023_dpsgd_settings.py --task regression --full --settings "authors' code"

Writes ``jewson2023_nn_<task>_dpsgd_settings.csv`` and its JSON sidecar; its tasks are saved in
``OUT/.tasks`` like the study's (resumable). Needs the extra ``[dpsgd]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from pystanprivacy.experiments.jewson2023.baselines import DPSGD_EXTRA_MESSAGE, dpsgd_available
from pystanprivacy.experiments.jewson2023.common import PAPER
from pystanprivacy.experiments.jewson2023.dpsgd_settings import SETTINGS, dpsgd_settings
from pystanprivacy.experiments.jewson2023.study import FULL, QUICK, uci_available
from pystanprivacy.run.runner import run_context, write_results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=("regression", "classification"), default="regression")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the study's quick grid (default)")
    size.add_argument("--full", action="store_true", help="the study's full grid (the paper's)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: results[-quick]/jewson2023)")
    parser.add_argument("--seed", type=int, default=0, help="root seed: the network part's, 0 by default")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--data", type=Path, default=None, help="folder of the UCI files (as for reproduce)")
    parser.add_argument(
        "--settings",
        nargs="+",
        choices=list(SETTINGS),
        default=list(SETTINGS),
        help="which settings to train (default: all); the network parts' own DP-SGD rows are "
        "the paper text's settings with other initialisation seeds",
    )
    args = parser.parse_args(argv)
    if not dpsgd_available():
        parser.error(DPSGD_EXTRA_MESSAGE)
    grid = FULL if args.full else QUICK
    out = args.out if args.out is not None else Path("results" if args.full else "results-quick") / PAPER
    part = f"nn_{args.task}"
    have_uci, notes = uci_available(grid, args.data, (part,))
    uci = [ds for ds in grid[f"{part}_uci"] if ds in have_uci]
    groups = [["simulated"]] + ([uci] if uci else [])  # the study's two calls, hence its data seeds
    start = time.perf_counter()
    with run_context(resume_dir=out / ".tasks"):
        table = pd.concat(
            [
                dpsgd_settings(
                    task=args.task,
                    datasets=ds,
                    ns=grid["nn_ns"],
                    epsilons=grid["nn_epsilons"],
                    repeats=grid["nn_repeats"],
                    data_path=args.data,
                    settings=args.settings,
                    seed=args.seed,
                    workers=args.workers,
                    progress=False,
                )
                for ds in groups
            ],
            ignore_index=True,
        )
        meta = {
            "seed": args.seed,
            "task": args.task,
            "full": bool(args.full),
            "ns": grid["nn_ns"],
            "epsilons": grid["nn_epsilons"],
            "repeats": grid["nn_repeats"],
            "datasets": groups,
            "settings": {
                k: {
                    **{n: v for n, v in cfg.items() if n != "epochs"},
                    "epochs": {"paper text": "14 + floor(epsilon)", "authors' code": "15 + int(epsilon)"}[k],
                }
                for k, cfg in SETTINGS.items()
                if k in args.settings
            },
            "notes": notes,
            "seconds": time.perf_counter() - start,
        }
        write_results(out, f"{PAPER}_{part}_dpsgd_settings", table, meta)
    metric = "test_rmse" if args.task == "regression" else "auc"
    print(
        table.groupby(["dataset", "settings", "method", "epsilon", "n_obs"])[metric]
        .median()
        .unstack()
        .round(3)
        .to_string()
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
