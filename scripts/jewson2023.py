#!/usr/bin/env python
"""Reproduce Jewson, Ghalebikesabi & Holmes (2023): Figures 2, 3, 4/11, 7-8 and 9 (same as
``pystanprivacy reproduce jewson2023``).

    python scripts/jewson2023.py --quick --out results-quick/jewson2023 --data data
    python scripts/jewson2023.py --full --workers 2
"""

from __future__ import annotations

import sys

from pystanprivacy.experiments.jewson2023 import study as jewson2023
from pystanprivacy.run.script import run_reproduce


def main(argv: list[str] | None = None) -> int:
    tables = run_reproduce(
        jewson2023,
        argv,
        description=__doc__.splitlines()[0],
        full_help="the paper's grids, 10 repeats",
        data_help="folder holding the UCI files (default: $PYSTANPRIVACY_DATA, then the shipped data/)",
    )
    for name in ("logistic_summary", "attack", "nn_regression_summary", "nn_classification_summary"):
        if name in tables:
            print(f"\n{name}:\n{tables[name].to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
