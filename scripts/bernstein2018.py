#!/usr/bin/env python
"""Reproduce Bernstein & Sheldon (2018), Sec. 4: calibration (Figure 1a/1b: KS statistic of
posterior quantiles, empirical CDFs) and utility (Figure 1c: MMD to the non-private
posterior) of noise-aware (Stan and Gibbs), naive, OPS and non-private posteriors for the
binomial, multinomial and truncated exponential models (same as ``pystanprivacy reproduce
bernstein2018``).

    python scripts/bernstein2018.py --quick --out results-quick/bernstein2018
    python scripts/bernstein2018.py --full --workers 2
"""

from __future__ import annotations

import sys

from pystanprivacy.experiments.bernstein2018 import study as bernstein2018
from pystanprivacy.run.script import run_reproduce


def main(argv: list[str] | None = None) -> int:
    tables = run_reproduce(
        bernstein2018,
        argv,
        description=__doc__.splitlines()[0],
        quick_help="100 trials per setting, short chains (default)",
        full_help="500 trials per setting, the paper's Gibbs run length",
    )
    summary = tables["calibration_summary"]
    wide = summary.pivot_table(index=["model", "epsilon", "n"], columns="method", values="ks").round(3)
    print(f"\nKS statistic of the posterior quantiles (1% critical value {summary['critical'].max():.3f}):")
    print(wide.to_string())
    mmd = tables["mmd_summary"]
    if not mmd.empty:
        print("\nmean MMD² to the non-private posterior:")
        print(
            mmd.pivot_table(index=["model", "epsilon", "n"], columns="method", values="mmd2_mean").to_string(
                float_format=lambda v: f"{v:.2e}"
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
