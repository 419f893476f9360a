#!/usr/bin/env python
"""Foulds et al. (2016) F6 (Figure 6, held-out log-likelihood) refitted from dispersed starts on a
reduced grid: the 10-state HMM, Laplace and OPS (M = 10), eps in {0.2, 1, 5}, the first 3 of the
committed study's 10 splits, on part hmm's synthetic logs (same data seeds and masks); each chain's
mode and held-out score, and Laplace - OPS in every pair of modes (REPRODUCTION.md, F6).

    python scripts/foulds2016_heldout_dispersed.py --out results/foulds2016/heldout_dispersed \\
        [--datasets iraq afghanistan] [--splits 3]

Each data set has its own seed stream, so two processes may run one data set each on the same
``--out`` (tasks are saved in ``OUT/.tasks``, resumable). The tables and figure are written from
the saved tasks of every data set run so far.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pystanprivacy.experiments.foulds2016 import occupancy
from pystanprivacy.experiments.foulds2016.heldout_dispersed import (
    EPSILONS,
    MODE_SDS,
    MULTIPLIER,
    N_STATES,
    SAMPLER,
    SPLITS,
    heldout_dispersed_study,
)
from pystanprivacy.experiments.foulds2016.heldout_dispersed_summary import summarise_heldout_dispersed
from pystanprivacy.experiments.foulds2016.hmm import FULL, NAME
from pystanprivacy.run.runner import run_context, write_results

KINDS = ("iraq", "afghanistan")


def figure(summary: pd.DataFrame, committed: pd.DataFrame, path: Path) -> None:
    """Laplace - OPS (M = 10) per entry against eps: every split's best-mode difference, the range of
    every chain of one method against the other's best mode, and the committed study's mean over its
    10 splits."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"synthetic {k}" for k in KINDS if (summary["dataset"] == f"synthetic {k}").any()]
    fig, axes = plt.subplots(1, len(labels), figsize=(5.2 * len(labels), 3.8), squeeze=False)
    for ax, label in zip(axes[0], labels):
        part = summary.loc[summary["dataset"] == label]
        for split, rows in part.groupby("split"):
            x = np.log10(rows["epsilon"].to_numpy()) + 0.04 * (split - 1)
            lo = np.minimum(rows["laplace_chains_min"], rows["ops_chains_min"])
            hi = np.maximum(rows["laplace_chains_max"], rows["ops_chains_max"])
            ax.vlines(x, lo, hi, color="0.6", lw=1.2)
            ax.plot(
                x,
                rows["best_mode_difference"],
                "o",
                color="C0",
                ms=4,
                label="best modes, one split (bar: every chain against the other's best mode)" if split == 0 else None,
            )
        ref = committed.loc[committed["dataset"] == label]
        if not ref.empty:
            ax.plot(
                np.log10(ref["epsilon"]),
                ref["difference"],
                "s--",
                color="C3",
                ms=4,
                label="committed study (2 chains, EM start), mean of 10 splits",
            )
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(np.log10(sorted(part["epsilon"].unique())))
        ax.set_xticklabels([f"{e:g}" for e in sorted(part["epsilon"].unique())])
        ax.set_xlabel("total ε")
        ax.set_ylabel("Laplace − OPS (M = 10), held-out log-lik per entry")
        ax.set_title(f"{label}, 10-state HMM")
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def committed_differences(path: Path) -> pd.DataFrame:
    """The committed F6 study's Laplace - OPS (M = 10) for the 10-state HMM, mean over splits."""
    t = pd.read_csv(path)
    t = t.loc[t["n_states"] == N_STATES]
    lap = t.loc[t["method"] == "laplace"].set_index(["dataset", "epsilon", "split"])["heldout_loglik_per_entry"]
    ops = t.loc[(t["method"] == "ops") & (t["multiplier"] == MULTIPLIER)]
    ops = ops.set_index(["dataset", "epsilon", "split"])["heldout_loglik_per_entry"]
    return (lap - ops).groupby(level=["dataset", "epsilon"]).mean().rename("difference").reset_index()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/foulds2016/heldout_dispersed"))
    parser.add_argument("--seed", type=int, default=0, help="root seed: part hmm's, 0 by default")
    parser.add_argument("--datasets", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--splits", type=int, default=SPLITS)
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--committed", type=Path, default=Path("results/foulds2016/foulds2016_hmm_heldout.csv"))
    args = parser.parse_args(argv)
    logs = occupancy._datasets(FULL, args.seed, None)  # part hmm's full-size logs (its held-out data too)
    committed = pd.read_csv(args.committed) if args.committed.exists() else None
    tables = []
    start = time.perf_counter()
    for kind in KINDS:
        label = f"synthetic {kind}"
        run = kind in args.datasets
        # a data set not asked for is read from its saved tasks only (another process may run it)
        with run_context(resume_dir=args.out / ".tasks", saved_only=not run):
            table = heldout_dispersed_study(
                logs[label][0], label=label, splits=args.splits, epsilons=args.epsilons, seed=args.seed, progress=run
            )
        if table.empty:
            continue
        if committed is not None:  # the masks are the committed study's: same entries per split
            ref = committed.loc[committed["dataset"] == label].groupby("split")["heldout_entries"].first()
            got = table.groupby("split")["heldout_entries"].first()
            if not (ref.loc[got.index] == got).all():
                raise RuntimeError(f"{label}: the held-out masks differ from the committed study's")
        tables.append(table)
    table = pd.concat(tables, ignore_index=True)
    summary = summarise_heldout_dispersed(table)
    meta = {
        "seed": args.seed,
        "datasets": sorted(table["dataset"].unique()),
        "splits": args.splits,
        "epsilons": args.epsilons,
        "n_states": N_STATES,
        "ops_multiplier": MULTIPLIER,
        "sampler": SAMPLER,
        "init": "dispersed",
        "mode_tolerance_sds": MODE_SDS,
        "masks": "the first splits of part hmm's held-out study (same stream)",
        "seconds": time.perf_counter() - start,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_results(args.out, f"{NAME}_heldout_dispersed", table, meta)
    write_results(args.out, f"{NAME}_heldout_dispersed_summary", summary, meta)
    if committed is not None:
        figure(summary, committed_differences(args.committed), args.out / f"{NAME}_heldout_dispersed.png")
    print(summary.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
