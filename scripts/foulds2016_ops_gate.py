#!/usr/bin/env python
"""The OPS HMM's convergence gate on non-mixing chains (issue 49, item 1): the 10-state OPS HMM on
the realistic synthetic war logs whose chains settle in different modes (``non_mixing_war_logs``),
from the EM start and from dispersed starts, at several ε; how often the gate refuses, and how many
modes the chains found when it releases.

    python scripts/foulds2016_ops_gate.py --out results/foulds2016/ops_gate [--repeats 3] [--workers 1]

Writes ``foulds2016_hmm_ops_gate{,_summary}.csv`` with JSON sidecars; tasks are saved in
``OUT/.tasks`` (resumable; tasks run repeat by repeat, so a partial run covers every ε and start).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pystanprivacy.experiments.foulds2016.hmm import NAME
from pystanprivacy.experiments.foulds2016.ops_gate import MODE_SDS, SAMPLER, ops_gate_study, summarise_ops_gate
from pystanprivacy.experiments.foulds2016.warlogs import NON_MIXING_STATES, non_mixing_war_logs, preprocess_war_logs
from pystanprivacy.run.runner import run_context, write_results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/foulds2016/ops_gate"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 5.0, 10.0])
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    counts = preprocess_war_logs(non_mixing_war_logs().records)
    start = time.perf_counter()
    with run_context(resume_dir=args.out / ".tasks"):
        table = ops_gate_study(
            counts, epsilons=args.epsilons, repeats=args.repeats, seed=args.seed, workers=args.workers, progress=True
        )
    summary = summarise_ops_gate(table)
    meta = {
        "seed": args.seed,
        "repeats": args.repeats,
        "epsilons": args.epsilons,
        "n_states": NON_MIXING_STATES,
        "multiplier": 10.0,
        "sampler": SAMPLER,
        "mode_tolerance_sds": MODE_SDS,
        "data": "non_mixing_war_logs() (seed 1), preprocessed",
        "seconds": time.perf_counter() - start,
    }
    write_results(args.out, f"{NAME}_ops_gate", table, meta)
    write_results(args.out, f"{NAME}_ops_gate_summary", summary, meta)
    print(summary.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
