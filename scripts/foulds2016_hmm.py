#!/usr/bin/env python
"""Reproduce the war-logs case study of Foulds et al. (2016), Sec. 5 and supplement E:
state assignments and per-state parameters (Figures 3-5) and held-out log-likelihood vs ε
(Figure 6), on synthetic war logs or on a real war-logs CSV file.

    python scripts/foulds2016_hmm.py --quick --out results-quick/foulds2016
    python scripts/foulds2016_hmm.py --full --data afg.csv --workers 2
"""

from __future__ import annotations

import sys

from pystanprivacy.experiments.foulds2016 import hmm as foulds2016_hmm
from pystanprivacy.run.script import run_reproduce


def main(argv: list[str] | None = None) -> int:
    tables = run_reproduce(
        foulds2016_hmm,
        argv,
        description=__doc__.splitlines()[0],
        quick_help="small run (default, ~3 minutes on 2 cores)",
        full_help="the paper's grids (an estimated 8-9 hours on 2 cores)",
        data_help="a war-logs CSV file (Afghanistan or Iraq schema); default: synthetic data",
    )
    cols = ["dataset", "method", "n_states", "epsilon", "agreement", "converged", "seconds"]
    print(f"\nstates_summary:\n{tables['states_summary'][cols].to_string(index=False)}")
    cols = ["dataset", "model", "method", "multiplier", "epsilon", "heldout_loglik_per_entry", "splits", "converged"]
    print(f"\nheldout_summary:\n{tables['heldout_summary'][cols].to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
