#!/usr/bin/env python
"""Jewson et al. (2023), Figure 6's Chaudhuri half and Figure 11 at the paper's 10,000 attack rounds
(REPRODUCTION.md, J6 and J11), beside a run of the study in the same folder. No new posterior for
Figure 6 (Chaudhuri's release is closed-form); the attack's 24 tasks sample small OPS posteriors.

    python scripts/jewson2023_counterparts.py --full --workers 2 --out results/jewson2023
    python scripts/jewson2023_counterparts.py --full --parts attack

``figure6``: :func:`~pystanprivacy.experiments.jewson2023.counterparts.counterparts` on the data sets
of the study's ``logistic`` part (same grid, data seeds and repeats), written as
``jewson2023_counterparts{,_summary}.{csv,json}``; ``jewson2023_figure6.png`` is drawn from that summary
and the study's ``jewson2023_logistic_summary.csv`` (its βD and PM rows), which must be in the folder.

``attack``: :func:`~pystanprivacy.experiments.jewson2023.counterparts.attack_paper_rounds` at the
study's epsilons, written as ``jewson2023_attack_paper_rounds.{csv,json}`` with the log RMSE of the
study's ``jewson2023_attack_rmse.csv`` (the rounds do not change the estimates); Figure 11 is redrawn
with both round counts (:func:`~pystanprivacy.experiments.jewson2023.figures.figure11`).

The tasks are saved in ``OUT/supplements/.tasks`` (resumable; kept apart from ``OUT/.tasks``, which
holds exactly the study's).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from pystanprivacy.experiments.jewson2023 import figures
from pystanprivacy.experiments.jewson2023.common import PAPER
from pystanprivacy.experiments.jewson2023.counterparts import (
    PAPER_ATTACK_ROUNDS,
    attack_paper_rounds,
    counterparts,
)
from pystanprivacy.experiments.jewson2023.study import FULL, QUICK, merge_attack_rmse, summarise, uci_available
from pystanprivacy.run.runner import make_executor, run_context, write_results

PARTS = ("figure6", "attack")
#: the resume folder of this script's tasks, inside OUT
TASKS = Path("supplements") / ".tasks"


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


def study_table(out: Path, name: str, part: str) -> pd.DataFrame:
    """The study's table ``name`` in ``out``, or a ValueError naming the command that writes it."""
    path = out / f"{PAPER}_{name}.csv"
    if not path.is_file():
        raise ValueError(
            f"{path} not found: run `pystanprivacy reproduce {PAPER} --parts {part} --out {out}` "
            f"(with --full for the full grid) first"
        )
    return pd.read_csv(path)


def figure6_part(out: Path, grid: dict, args: argparse.Namespace, common: dict) -> None:
    logistic_summary = study_table(out, "logistic_summary", "logistic")
    have_uci, notes = uci_available(grid, args.data, ("logistic",))
    uci = [ds for ds in grid["logistic_uci"] if ds in have_uci]
    start = time.perf_counter()
    run = dict(seed=args.seed, workers=args.workers, progress=False)
    with make_executor(args.workers) as ex:
        fits = [
            counterparts(
                datasets=["simulated"],
                ns=grid["logistic_sim_ns"],
                epsilons=grid["logistic_sim_epsilons"],
                repeats=grid["logistic_repeats"],
                stream="logistic-sim",
                executor=ex,
                **run,
            )
        ]
        if uci:
            fits.append(
                counterparts(
                    datasets=uci,
                    ns=grid["logistic_uci_ns"],
                    epsilons=grid["logistic_uci_epsilons"],
                    repeats=grid["logistic_repeats"],
                    data_path=args.data,
                    stream="logistic-uci",
                    executor=ex,
                    **run,
                )
            )
    table = pd.concat(fits, ignore_index=True)
    summary = summarise(table, ["rmse", "auc", "csa", "distance"])
    meta = {
        **common,
        **{k: grid[k] for k in grid if k.startswith("logistic") and k != "logistic_repeats"},
        "repeats": grid["logistic_repeats"],
        "calibration": "paper (2 / (n lambda epsilon) per coefficient)",
        "data": "the study's logistic part's data sets: its data seeds (streams logistic-sim, logistic-uci)",
        "noise_streams": ["jewson2023/counterparts-logistic-sim", "jewson2023/counterparts-logistic-uci"],
        "notes": notes,
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{PAPER}_counterparts", table, meta)
    write_results(out, f"{PAPER}_counterparts_summary", summary, meta)
    figures.figure6(logistic_summary, summary, out / f"{PAPER}_figure6.png")
    print(
        summary[summary["dataset"] == "simulated"]
        .pivot_table(index=["method", "epsilon"], columns="n_obs", values="distance_mean")
        .round(3)
        .to_string()
    )


def attack_part(out: Path, grid: dict, args: argparse.Namespace, common: dict) -> None:
    rmse = study_table(out, "attack_rmse", "attack")
    start = time.perf_counter()
    with make_executor(args.workers) as ex:
        att = attack_paper_rounds(
            epsilons=grid["attack_epsilons"],
            rounds=PAPER_ATTACK_ROUNDS,
            seed=args.seed,
            executor=ex,
            workers=args.workers,
            progress=False,
        )
    table = merge_attack_rmse(att, rmse)
    meta = {
        **common,
        "epsilons": grid["attack_epsilons"],
        "rounds_in_all": PAPER_ATTACK_ROUNDS,
        "rounds_per_dataset": PAPER_ATTACK_ROUNDS // 2,
        "D": "{(1, 1), (0, 0)}",
        "D_prime": "{(-1, 1), (0, 0)}",
        "coin": "the paper's fair coin per round at its expected split: half the rounds from D, half from D'",
        "seed_stream": "jewson2023/attack-paper-rounds (independent of the study's attack part)",
        "log_rmse_from": f"{PAPER}_attack_rmse.csv",
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{PAPER}_attack_paper_rounds", table, meta)
    study = study_table(out, "attack", "attack")
    figures.figure11(study, out / f"{PAPER}_figure11.png", paper_rounds=table)
    print(table.pivot_table(index="method", columns="epsilon", values="epsilon_lb").round(2).to_string())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the study's quick grid (default)")
    size.add_argument("--full", action="store_true", help="the study's full grid (the paper's)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {PARTS}")
    parser.add_argument(
        "--out", type=Path, default=None, help="the study's output folder (default: results[-quick]/jewson2023)"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed: the study's, 0 by default")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--data", type=Path, default=None, help="folder of the UCI files (as for reproduce)")
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
        if "figure6" in parts:
            figure6_part(out, grid, args, common)
        if "attack" in parts:
            attack_part(out, grid, args, common)
    return 0


if __name__ == "__main__":
    sys.exit(main())
