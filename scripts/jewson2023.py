#!/usr/bin/env python
"""Reproduce Jewson, Ghalebikesabi & Holmes (2023): Figures 2, 3, 4/11, 7-8 and 9 (same as
``pystanprivacy reproduce jewson2023``).

    python scripts/jewson2023.py --quick --out results/jewson2023 --data ../shared/data
    python scripts/jewson2023.py --full --workers 2
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments import jewson2023


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small run (default)")
    size.add_argument("--full", action="store_true", help="the paper's grids, 10 repeats")
    parser.add_argument("--out", default=str(Path("results") / jewson2023.PAPER), help="output folder")
    parser.add_argument("--data", default=None, help="folder holding the UCI files (default: $PYSTANPRIVACY_DATA)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (reproducibility, not security)")
    parser.add_argument("--workers", type=int, default=1, help="local worker processes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    start = time.perf_counter()
    tables = jewson2023.reproduce(args.out, quick=not args.full, seed=args.seed, workers=args.workers,
                                  progress=not args.no_progress, data_path=args.data)
    print(f"done in {time.perf_counter() - start:.1f} s; results in {Path(args.out).resolve()}")
    for name in ("logistic_summary", "attack", "nn_regression_summary", "nn_classification_summary"):
        if name in tables:
            print(f"\n{name}:\n{tables[name].to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
