#!/usr/bin/env python
"""Reproduce Foulds et al. (2016): Figures 1-2, the Theorem 4-5 check and the adversarial
experiment of Supplement A (same as ``pystanprivacy reproduce foulds2016``).

    python scripts/foulds2016.py --quick --out results/foulds2016
    python scripts/foulds2016.py --full --workers 2
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments import foulds2016


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small run (default)")
    size.add_argument("--full", action="store_true", help="the paper's 1000 repeats")
    parser.add_argument("--out", default=str(Path("results") / foulds2016.PAPER), help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="root seed (reproducibility, not security)")
    parser.add_argument("--workers", type=int, default=1, help="local worker processes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    start = time.perf_counter()
    tables = foulds2016.reproduce(args.out, quick=not args.full, seed=args.seed, workers=args.workers,
                                  progress=not args.no_progress)
    print(f"done in {time.perf_counter() - start:.1f} s; results in {Path(args.out).resolve()}")
    for name in ("figure2_summary", "theorems_summary"):
        print(f"\n{name}:\n{tables[name].to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
