"""R-hat, bulk ESS and tail ESS of every element of a batched fit: ArviZ's element-by-element
loop vs ``pystanprivacy.sampling.diagnostics`` (the same arithmetic, vectorised), on draws shaped
like Foulds et al. (2016) Figure 2's runs (2 chains x 500 draws x 1000 data sets). Both
results are compared, so the speed-up is for the same numbers.

Run:  python benchmarks/bench_diagnostics.py [--chains 2] [--draws 500] [--elements 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np


def measure(chains: int = 2, draws: int = 500, elements: int = 1000, seed: int = 0) -> dict:
    """Seconds for the three statistics with ArviZ and with the vectorised functions, and the
    largest relative difference between the two."""
    from pystanprivacy.sampling import diagnostics as md

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import arviz as az

        rng = np.random.default_rng(seed)
        x = rng.standard_normal((chains, draws, elements)).cumsum(axis=1) * 0.1 + rng.standard_normal(
            (chains, draws, elements)
        )
        ds = az.convert_to_dataset({"x": x})
        t = time.perf_counter()
        ref = [
            az.rhat(ds, method="rank")["x"].values,
            az.ess(ds, method="bulk")["x"].values,
            az.ess(ds, method="tail")["x"].values,
        ]
        arviz_s = time.perf_counter() - t
    t = time.perf_counter()
    got = [md.split_rhat(x), md.ess_bulk(x), md.ess_tail(x)]
    vector_s = time.perf_counter() - t
    diff = max(float(np.max(np.abs(g - r) / np.abs(r))) for g, r in zip(got, ref))
    return {
        "chains": chains,
        "draws": draws,
        "elements": elements,
        "arviz_s": arviz_s,
        "vectorised_s": vector_s,
        "speedup": arviz_s / vector_s,
        "max_rel_diff": diff,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--elements", type=int, default=1000)
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.chains, args.draws, args.elements), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
