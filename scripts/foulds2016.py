#!/usr/bin/env python
"""Reproduce Foulds et al. (2016): Figures 1-2, the Theorem 4-5 check and the adversarial
experiment of Supplement A (same as ``pystanprivacy reproduce foulds2016``).

    python scripts/foulds2016.py --quick --out results-quick/foulds2016
    python scripts/foulds2016.py --full --workers 2
"""

from __future__ import annotations

import sys

from pystanprivacy.experiments.foulds2016 import beta_bernoulli as foulds2016
from pystanprivacy.run.script import run_reproduce


def main(argv: list[str] | None = None) -> int:
    tables = run_reproduce(foulds2016, argv, description=__doc__.splitlines()[0], full_help="the paper's 1000 repeats")
    for name in ("figure2_summary", "theorems_summary"):
        print(f"\n{name}:\n{tables[name].to_string(index=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
