#!/usr/bin/env python
"""Reproduce Kulkarni et al. (2022), local-DP Bayesian inference: calibration (Figures 1,
10, 11), histogram RMSE vs N (Figures 3, 9), Kosarak-like ECDF comparison (Figure 2), then
the regression experiments (Figures 4, 5) when that half is installed (same as
``pystanprivacy reproduce kulkarni2022``).

    python scripts/kulkarni2022.py --quick --out results-quick/kulkarni2022
    python scripts/kulkarni2022.py --full --workers 2 --kosarak /data/kosarak.dat
"""

from __future__ import annotations

import sys

from pystanprivacy.experiments.kulkarni2022 import study as kulkarni2022
from pystanprivacy.run.script import run_reproduce


def main(argv: list[str] | None = None) -> int:
    tables = run_reproduce(
        kulkarni2022,
        argv,
        description=__doc__.splitlines()[0],
        full_help="the paper's repeat counts",
        data_flags=("--kosarak", "--data"),
        data_help="kosarak.dat (or its folder); default $PYSTANPRIVACY_DATA, else synthetic only",
    )
    summ = tables["calibration_summary"]
    print("\ncalibration (pooled over parameters):")
    print(
        summ[summ["parameter"] == "all"]
        .pivot_table(index=["model", "epsilon"], columns="level", values="coverage")
        .to_string()
    )
    for name in ("histogram_rmse_summary", "kosarak_summary"):
        t = tables[name]
        if name == "kosarak_summary":
            t = t.groupby(["source", "epsilon"])["ecdf_l1"].mean().reset_index()
        print(f"\n{name}:\n{t.to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
