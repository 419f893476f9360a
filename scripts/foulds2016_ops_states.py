#!/usr/bin/env python
"""Foulds et al. (2016) Figure 7 (supplement Figures 4 and 6): the OPS HMM's state assignments
from a chain's last 100 draws against its last draw, on the logs of Figures 3-5 as part ``hmm``
makes them (``--full``: the shipped Afghan War Diary and synthetic Iraq logs; ``--quick``:
synthetic logs, the same data seeds), repeated over sampler seeds (REPRODUCTION.md, F7). On the
diary, which has no true states, the last draw is compared with the last 100 by its
month-to-month state switches and its agreement with them.

    python scripts/foulds2016_ops_states.py --full --workers 1 --out results/foulds2016

Writes ``foulds2016_hmm_ops_states.csv`` and ``..._summary.csv`` with their JSON sidecars and
``foulds2016_figure7.png`` (Afghanistan) and ``foulds2016_figure7_iraq.png``; tasks are saved in
``OUT/.tasks`` (resumable).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments.foulds2016 import hmm_figures, occupancy
from pystanprivacy.experiments.foulds2016.hmm import FULL, NAME, QUICK
from pystanprivacy.experiments.foulds2016.logs import provenance
from pystanprivacy.experiments.foulds2016.ops_states import LAST, ops_states_study, summarise_ops_states
from pystanprivacy.run.runner import run_context, write_results

#: sampler repeats per data set
REPEATS = {"quick": 2, "full": 10}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="part hmm's quick grid (default)")
    size.add_argument("--full", action="store_true", help="part hmm's full grid (the paper's sampler length)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: results[-quick]/foulds2016)")
    parser.add_argument("--seed", type=int, default=0, help="root seed: part hmm's, 0 by default")
    parser.add_argument("--repeats", type=int, default=None, help="sampler runs per data set (quick 2, full 10)")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    grid = FULL if args.full else QUICK
    out = args.out if args.out is not None else Path("results" if args.full else "results-quick") / "foulds2016"
    repeats = args.repeats if args.repeats is not None else REPEATS["full" if args.full else "quick"]
    datasets = occupancy._datasets(grid, args.seed, None, real=args.full)  # Figures 3-5's logs, as part hmm makes them
    start = time.perf_counter()
    with run_context(resume_dir=out / ".tasks"):
        table = ops_states_study(
            datasets,
            repeats=repeats,
            sampler=grid["states_sampler"],
            seed=args.seed,
            workers=args.workers,
            progress=False,
        )
    summary = summarise_ops_states(table)
    meta = {
        "seed": args.seed,
        "full": bool(args.full),
        "repeats": repeats,
        "last": LAST,
        "epsilon": 5.0,
        "multiplier": 100.0,
        "sampler": dict(grid["states_sampler"]),
        "datasets": list(datasets),
        "data": provenance(list(datasets), seed=args.seed),
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{NAME}_ops_states", table, meta)
    write_results(out, f"{NAME}_ops_states_summary", summary, meta)
    for label in datasets:
        slug = "" if "afghanistan" in label else "_" + label.split()[-1]
        hmm_figures.ops_last_samples(table, label, out / f"foulds2016_figure7{slug}.png")
    print(summary.round(4).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
