#!/usr/bin/env python
"""Reproduce Kulkarni et al. (2022), local-DP Bayesian inference: calibration (Figures 1,
10, 11), histogram RMSE vs N (Figures 3, 9), Kosarak-like ECDF comparison (Figure 2), then
the regression experiments (Figures 4, 5) when that half is installed (same as
``pystanprivacy reproduce kulkarni2022``).

    python scripts/kulkarni2022.py --quick --out results/kulkarni2022
    python scripts/kulkarni2022.py --full --workers 2 --kosarak /data/kosarak.dat
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments import kulkarni2022


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small run (default)")
    size.add_argument("--full", action="store_true", help="the paper's repeat counts")
    parser.add_argument("--out", default=str(Path("results") / kulkarni2022.PAPER), help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="root seed (reproducibility, not security)")
    parser.add_argument("--workers", type=int, default=1, help="local worker processes")
    parser.add_argument("--kosarak", "--data", dest="kosarak", default=None,
                        help="kosarak.dat (or its folder); default $PYSTANPRIVACY_DATA, else synthetic only")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    start = time.perf_counter()
    tables = kulkarni2022.reproduce(args.out, quick=not args.full, seed=args.seed, workers=args.workers,
                                    progress=not args.no_progress, data_path=args.kosarak)
    print(f"done in {time.perf_counter() - start:.1f} s; results in {Path(args.out).resolve()}")
    summ = tables["calibration_summary"]
    print("\ncalibration (pooled over parameters):")
    print(summ[summ["parameter"] == "all"].pivot_table(index=["model", "epsilon"], columns="level",
                                                       values="coverage").to_string())
    for name in ("histogram_rmse_summary", "kosarak_summary"):
        t = tables[name]
        if name == "kosarak_summary":
            t = t.groupby(["source", "epsilon"])["ecdf_l1"].mean().reset_index()
        print(f"\n{name}:\n{t.to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
