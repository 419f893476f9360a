#!/usr/bin/env python
"""Reproduce the war-logs case study of Foulds et al. (2016), Sec. 5 and supplement E:
state assignments and per-state parameters (Figures 3-5) and held-out log-likelihood vs ε
(Figure 6), on synthetic war logs or on a real war-logs CSV file.

    python scripts/foulds2016_hmm.py --quick --out results/foulds2016
    python scripts/foulds2016_hmm.py --full --data afg.csv --workers 2
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments import foulds2016_hmm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small run (default, ~3 minutes on 2 cores)")
    size.add_argument("--full", action="store_true", help="the paper's grids (an estimated 8-9 hours on 2 cores)")
    parser.add_argument("--data", metavar="PATH", default=None,
                        help="a war-logs CSV file (Afghanistan or Iraq schema); default: synthetic data")
    parser.add_argument("--out", default=str(Path("results") / foulds2016_hmm.PAPER), help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="root seed (reproducibility, not security)")
    parser.add_argument("--workers", type=int, default=1, help="local worker processes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    if args.data is not None and not Path(args.data).is_file():
        parser.error(f"--data must be an existing war-logs CSV file, got {args.data!r}")
    start = time.perf_counter()
    tables = foulds2016_hmm.reproduce(args.out, quick=not args.full, seed=args.seed, workers=args.workers,
                                      progress=not args.no_progress, data_path=args.data)
    print(f"done in {time.perf_counter() - start:.1f} s; results in {Path(args.out).resolve()}")
    cols = ["dataset", "method", "n_states", "epsilon", "agreement", "converged", "seconds"]
    print(f"\nstates_summary:\n{tables['states_summary'][cols].to_string(index=False)}")
    cols = ["dataset", "model", "method", "multiplier", "epsilon", "heldout_loglik_per_entry", "splits", "converged"]
    print(f"\nheldout_summary:\n{tables['heldout_summary'][cols].to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
