#!/usr/bin/env python
"""Foulds et al. (2016) F5 (Figures 3-5) and F8 (the 10-state occupancy claim) refitted with every
chain from its own start, on the synthetic logs of part ``hmm`` (same data seeds): each chain's mode,
its agreement with the true states and its substantial states (REPRODUCTION.md, F5 and F8).

    python scripts/foulds2016_dispersed.py --full --workers 1 --out results/foulds2016/dispersed

Writes ``foulds2016_hmm_dispersed_{states,occupancy}{,_summary}.csv`` with JSON sidecars; tasks are
saved in ``OUT/.tasks`` (resumable).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments.foulds2016 import occupancy
from pystanprivacy.experiments.foulds2016.dispersed import MODE_SDS, THRESHOLD, dispersed_study, summarise_dispersed
from pystanprivacy.experiments.foulds2016.hmm import FULL, NAME, QUICK, STATES_PER_DATASET
from pystanprivacy.run.runner import run_context, write_results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="part hmm's quick grid (default)")
    size.add_argument("--full", action="store_true", help="part hmm's full grid")
    parser.add_argument("--out", type=Path, default=None, help="default: results[-quick]/foulds2016/dispersed")
    parser.add_argument("--seed", type=int, default=0, help="root seed: part hmm's, 0 by default")
    parser.add_argument("--parts", nargs="+", choices=("states", "occupancy"), default=["states", "occupancy"])
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    grid = FULL if args.full else QUICK
    occ = occupancy.FULL if args.full else occupancy.QUICK
    out = args.out or Path("results" if args.full else "results-quick") / "foulds2016" / "dispersed"
    datasets = occupancy._datasets(grid, args.seed, None)  # Figures 3-5's logs, as part hmm draws them
    parts = {
        "states": ({label: STATES_PER_DATASET[label.split()[-1]] for label in datasets}, grid["states_sampler"]),
        "occupancy": ({label: occupancy.N_STATES for label in datasets}, occ["sampler"]),
    }
    for part in args.parts:
        n_states, sampler = parts[part]
        start = time.perf_counter()
        with run_context(resume_dir=out / ".tasks"):
            table = dispersed_study(
                datasets,
                n_states=n_states,
                sampler=sampler,
                stream=part,
                seed=args.seed,
                workers=args.workers,
                progress=True,
            )
        summary = summarise_dispersed(table)
        meta = {
            "seed": args.seed,
            "full": bool(args.full),
            "part": part,
            "n_states": n_states,
            "sampler": dict(sampler),
            "epsilon": 5.0,
            "ops_multiplier": 100.0,
            "init": "dispersed",
            "mode_tolerance_sds": MODE_SDS,
            "threshold": THRESHOLD,
            "seconds": time.perf_counter() - start,
        }
        write_results(out, f"{NAME}_dispersed_{part}", table, meta)
        write_results(out, f"{NAME}_dispersed_{part}_summary", summary, meta)
        print(summary.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
