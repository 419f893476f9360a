#!/usr/bin/env python
"""DP-SGD of Jewson et al. (2023) tuned as their App. B describes, on the data sets of the
network parts: Figures 3/9 (``--part figures``: parts ``nn_regression`` / ``nn_classification``,
simulated data and the UCI set) or Figure 10's network rows (``--part features``: part
``nn_features``). Same seeds as those parts, so each row pairs with theirs by data set, n (or d)
and repeat (REPRODUCTION.md, J3, J9, J10). No Stan fit.

    python scripts/jewson2023_dpsgd_tuned.py --task regression --part figures --full --replicates 2 \\
        --workers 1 --out results/jewson2023
    python scripts/jewson2023_dpsgd_tuned.py --task regression classification --part features --full ...
    python scripts/jewson2023_dpsgd_tuned.py --task classification --part figures --full \
        --uci abalone banknote --out results/jewson2023/banknote   # banknote, paired with its network tasks

Writes ``jewson2023_nn_<task>_dpsgd_tuned.csv`` (``--part figures``) or
``jewson2023_nn_features_dpsgd_tuned.csv`` (``--part features``, every task asked) with their JSON
sidecars (per tuning unit: the chosen settings, every candidate's mean validation score, R and
the privacy cost of the tuning), and every candidate run's validation score in
``..._dpsgd_tuning.csv``. Tasks are saved in ``OUT/.tasks`` like the study's (resumable).
Needs the extra ``[dpsgd]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import pandas as pd

from pystanprivacy.experiments.jewson2023.baselines import DPSGD_EXTRA_MESSAGE, dpsgd_available
from pystanprivacy.experiments.jewson2023.common import PAPER
from pystanprivacy.experiments.jewson2023.dpsgd_tuning import (
    PAPER_GRID,
    PAPER_SLOPES,
    VALIDATION_FRACTION,
    dpsgd_tuned,
    dpsgd_tuned_features,
    tuning_privacy_cost,
)
from pystanprivacy.experiments.jewson2023.study import FULL, QUICK, nn_figure_grid, uci_available
from pystanprivacy.run.runner import run_context, write_results

UNIT = ["task", "dataset", "n_obs", "d"]
SETTING = ["stage", "epochs_at_one", "batch_size", "lr", "clip_norm", "slope", "epsilon", "epochs"]


def tuning_summary(tuning: pd.DataFrame, epsilons: list[float]) -> list[dict]:
    """Per tuning unit: the chosen settings, R, the privacy cost and every candidate's mean
    validation score over the R replicates (NaN where a run diverged)."""
    units = []
    for key, g in tuning.groupby(UNIT, sort=False):
        scores = g.groupby(SETTING, dropna=False, sort=False).agg(score=("score", "mean"), chosen=("chosen", "all"))
        scores = scores.reset_index()
        win1 = scores[(scores["stage"] == 1) & scores["chosen"]].iloc[0]
        win2 = scores[(scores["stage"] == 2) & scores["chosen"]]
        unit = dict(zip(UNIT, key))
        unit.update(
            chosen={
                "epochs_at_one": int(win1["epochs_at_one"]),
                "batch_size": int(win1["batch_size"]),
                "lr": float(win1["lr"]),
                "clip_norm": float(win1["clip_norm"]),
                "slope": float(g["chosen_slope"].iloc[0]),
                "stage1_validation_score": float(win1["score"]),
                "stage2_validation_score": float(win2["score"].mean()) if len(win2) else None,
            },
            replicates=int(g["replicates"].iloc[0]),
            unit_seconds=float(g["unit_seconds"].iloc[0]),
            privacy_cost=tuning_privacy_cost(
                epsilons=epsilons, replicates=int(g["replicates"].iloc[0]), private=key[1] != "simulated"
            ),
            candidates=[
                {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in c.items()}  # NaN: null
                for c in scores.drop(columns="chosen").to_dict(orient="records")
            ],
        )
        units.append(unit)
    return units


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", nargs="+", choices=("regression", "classification"), default=["regression"])
    parser.add_argument("--part", choices=("figures", "features"), default="figures")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the study's quick grid (default)")
    size.add_argument("--full", action="store_true", help="the study's full grid (the paper's)")
    parser.add_argument("--replicates", type=int, default=1, help="R, tuning data sets per tuning unit")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: results[-quick]/jewson2023)")
    parser.add_argument("--seed", type=int, default=0, help="root seed: the network part's, 0 by default")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--data", type=Path, default=None, help="folder of the UCI files (as for reproduce)")
    parser.add_argument(
        "--uci",
        nargs="+",
        choices=("wine", "abalone", "banknote"),
        default=None,
        help="--part figures: run only the UCI call, with these data sets in this order (banknote beside "
        "Abalone as scripts/jewson2023_banknote.py runs it: --uci abalone banknote)",
    )
    args = parser.parse_args(argv)
    if not dpsgd_available():
        parser.error(DPSGD_EXTRA_MESSAGE)
    import torch

    torch.set_num_threads(1)  # one core: the run is sized for it (and shares the machine)
    if args.replicates < 1:
        parser.error(f"--replicates must be >= 1, got {args.replicates}")
    if args.uci is not None and args.part != "figures":
        parser.error(f"--uci applies to --part figures only, got --part {args.part}")
    grid = FULL if args.full else QUICK
    out = args.out if args.out is not None else Path("results" if args.full else "results-quick") / PAPER
    common = {
        "seed": args.seed,
        "full": bool(args.full),
        "replicates": args.replicates,
        "grid": {k: list(v) for k, v in PAPER_GRID.items()},
        "slopes": list(PAPER_SLOPES),
        "epoch_rule": "max(1, round(E1 + s (floor(eps) - 1))), halves rounded up; E1 = 15, s = 1 is 14 + floor(eps)",
        "validation_fraction": VALIDATION_FRACTION,
        "network": "one hidden layer of 10 tanh units, plain SGD (the paper text's); non-private SGD: the tuned "
        "batch size and learning rate, the epochs of eps = 1, no clipping",
    }
    tables = []
    with run_context(resume_dir=out / ".tasks"):
        for task in args.task:
            start = time.perf_counter()
            if args.part == "figures":
                part = f"nn_{task}"
                if args.uci is not None:  # only the UCI call, with the data sets asked (their order sets the seeds)
                    groups, notes = [list(args.uci)], []
                else:
                    have_uci, notes = uci_available(grid, args.data, (part,))
                    uci = [ds for ds in grid[f"{part}_uci"] if ds in have_uci]
                    groups = [["simulated"]] + ([uci] if uci else [])  # the study's two calls, hence its data seeds
                runs = [
                    dpsgd_tuned(
                        task=task,
                        datasets=ds,
                        ns=grid["nn_ns"],
                        epsilons=grid["nn_epsilons"],
                        repeats=grid["nn_repeats"],
                        replicates=args.replicates,
                        data_path=args.data,
                        seed=args.seed,
                        workers=args.workers,
                        progress=False,
                    )
                    for ds in groups
                ]
                epsilons = list(grid["nn_epsilons"])
                extra = {"ns": grid["nn_ns"], "repeats": grid["nn_repeats"], "datasets": groups, "notes": notes}
            else:
                part = "nn_features"
                runs = [
                    dpsgd_tuned_features(
                        task=task,
                        ds=grid["nn_features_ds"],
                        n_obs=grid["nn_features_n"],
                        epsilons=grid["nn_features_epsilons"],
                        repeats=grid["nn_features_repeats"],
                        replicates=args.replicates,
                        figure=nn_figure_grid(grid),
                        seed=args.seed,
                        workers=args.workers,
                        progress=False,
                    )
                ]
                epsilons = list(grid["nn_features_epsilons"])
                extra = {
                    "ds": grid["nn_features_ds"],
                    "n_obs": grid["nn_features_n"],
                    "repeats": grid["nn_features_repeats"],
                }
            rows = pd.concat([r for r, _ in runs], ignore_index=True)
            tuning = pd.concat([t for _, t in runs], ignore_index=True)
            meta = {
                **common,
                "task": task,
                "epsilons": epsilons,
                **extra,
                "tuning": tuning_summary(tuning, epsilons),
                "seconds": time.perf_counter() - start,
            }
            tables.append((part, task, rows, tuning, meta))
            if args.part == "figures":
                write_results(out, f"{PAPER}_{part}_dpsgd_tuned", rows, meta)
                write_results(
                    out, f"{PAPER}_{part}_dpsgd_tuning", tuning, {k: v for k, v in meta.items() if k != "tuning"}
                )
        if args.part == "features":
            rows = pd.concat([t[2] for t in tables], ignore_index=True)
            tuning = pd.concat([t[3] for t in tables], ignore_index=True)
            meta = {
                **common,
                "tasks": [t[1] for t in tables],
                "epsilons": tables[0][4]["epsilons"],
                **{k: tables[0][4][k] for k in ("ds", "n_obs", "repeats")},
                "tuning": [u for t in tables for u in t[4]["tuning"]],
                "seconds": {t[1]: t[4]["seconds"] for t in tables},
            }
            write_results(out, f"{PAPER}_nn_features_dpsgd_tuned", rows, meta)
            write_results(
                out, f"{PAPER}_nn_features_dpsgd_tuning", tuning, {k: v for k, v in meta.items() if k != "tuning"}
            )
    for part, task, rows, _, meta in tables:
        metric = "test_rmse" if task == "regression" else "auc"
        by = "n_obs" if args.part == "figures" else "d"
        print(task, {(u["dataset"], u["n_obs"], u["d"]): u["chosen"] for u in meta["tuning"]})
        print(rows.groupby(["dataset", "method", "epsilon", by])[metric].mean().unstack().round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
