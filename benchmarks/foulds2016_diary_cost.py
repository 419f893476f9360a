#!/usr/bin/env python
"""Cost of Foulds et al.'s war-log tasks on the shipped Afghan War Diary against the synthetic
Afghanistan logs the committed study ran on: one task of each kind, the study's own task
functions and ``FULL`` sampler settings, the diary then the synthetic logs, wall seconds and the
CPU seconds of this process and its children (the sampler's processes, read from /proc).

    nice -n 10 python benchmarks/foulds2016_diary_cost.py heldout_laplace_k10 states_laplace_k3 heldout_ops_k10 heldout_ops_k1

Prints one JSON line per (task kind, data). The ratio diary / synthetic of the CPU seconds,
applied to the task seconds of the committed study (``seconds`` in
``results/foulds2016/foulds2016_hmm_heldout.csv`` etc.), estimates the rerun on the diary
(benchmarks/README.md, "Foulds on the Afghan War Diary"). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from pystanprivacy.experiments.foulds2016 import hmm
from pystanprivacy.experiments.foulds2016.logs import study_logs

KINDS = ("states_laplace_k3", "heldout_laplace_k10", "heldout_ops_k10", "heldout_ops_k1")
_TICK = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    out = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            for child in fh.read().split():
                out += _tree(int(child))
    except OSError:
        pass
    return out


def tree_cpu_seconds() -> float:
    """User + system CPU seconds of this process, its live descendants and the children it has
    waited for."""
    total = 0.0
    for i, pid in enumerate(_tree(os.getpid())):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / _TICK
        if i == 0:
            total += (int(fields[13]) + int(fields[14])) / _TICK
    return total


def run_task(kind: str, counts, label: str, mask: np.ndarray):
    if kind == "states_laplace_k3":  # F5: Supp. Fig. 5's fit
        return hmm.state_task(counts=counts, truth=None, dataset=label, method="laplace", n_states=3, epsilon=5.0,
                              multiplier=None, sampler=hmm.FULL["states_sampler"], seed=0)  # fmt: skip
    k, method = {"heldout_laplace_k10": (10, "laplace"), "heldout_ops_k10": (10, "ops"), "heldout_ops_k1": (1, "ops")}[
        kind
    ]
    return hmm.heldout_task(counts=counts, dataset=label, split=0, heldout=mask, n_states=k, method=method, epsilon=5.0,
                            multiplier=10.0 if method == "ops" else None, sampler=hmm.FULL["heldout_sampler"], seed=0)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", choices=KINDS, default=list(KINDS))
    args = parser.parse_args(argv)
    real = study_logs(hmm.FULL, 0, real=True)["afghanistan"][0]
    # the committed study's synthetic Afghanistan logs (the same seed stream; Iraq not generated)
    synthetic = study_logs({**hmm.FULL, "datasets": {"afghanistan": {}}}, 0, real=False)["synthetic afghanistan"][0]
    mask = hmm.heldout_masks(5, 72, fraction=0.1, n_splits=1, seed=np.random.default_rng(0))[0]
    for kind in args.kinds:
        for label, counts in (("diary", real), ("synthetic", synthetic)):
            wall, cpu = time.perf_counter(), tree_cpu_seconds()
            out = run_task(kind, counts, label, mask)
            row = {
                "task": kind,
                "data": label,
                "feature_values": int(counts.counts.shape[2]),
                "wall_s": round(time.perf_counter() - wall, 1),
                "cpu_s": round(tree_cpu_seconds() - cpu, 1),
                "converged": bool(out["converged"].iloc[0]),
                "load_1min": round(os.getloadavg()[0], 1),
            }
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
