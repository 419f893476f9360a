#!/usr/bin/env python
"""Reproduce Bernstein & Sheldon (2018), Sec. 4: calibration (Figure 1a/1b: KS statistic of
posterior quantiles, empirical CDFs) and utility (Figure 1c: MMD to the non-private
posterior) of noise-aware (Stan and Gibbs), naive, OPS and non-private posteriors for the
binomial, multinomial and truncated exponential models (same as ``pystanprivacy reproduce
bernstein2018``).

    python scripts/bernstein2018.py --quick --out results/bernstein2018
    python scripts/bernstein2018.py --full --workers 2
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments import bernstein2018


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="100 trials per setting, short chains (default)")
    size.add_argument("--full", action="store_true", help="500 trials per setting, the paper's Gibbs run length")
    parser.add_argument("--out", default=str(Path("results") / bernstein2018.PAPER), help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="root seed (reproducibility, not security)")
    parser.add_argument("--workers", type=int, default=1, help="local worker processes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    start = time.perf_counter()
    tables = bernstein2018.reproduce(args.out, quick=not args.full, seed=args.seed, workers=args.workers,
                                     progress=not args.no_progress)
    print(f"done in {time.perf_counter() - start:.1f} s; results in {Path(args.out).resolve()}")
    summary = tables["calibration_summary"]
    wide = summary.pivot_table(index=["model", "epsilon", "n"], columns="method", values="ks").round(3)
    print(f"\nKS statistic of the posterior quantiles (1% critical value {summary['critical'].max():.3f}):")
    print(wide.to_string())
    mmd = tables["mmd_summary"]
    if not mmd.empty:
        print("\nmean MMD² to the non-private posterior:")
        print(mmd.pivot_table(index=["model", "epsilon", "n"], columns="method", values="mmd2_mean").to_string(
            float_format=lambda v: f"{v:.2e}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
