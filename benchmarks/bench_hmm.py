#!/usr/bin/env python
"""Benchmark of the naive-Bayes HMM (Foulds et al. 2016, supplement E): fit time of the
10-state model on 6 regions x 72 months as the number of log entries grows.

The emission log-likelihood of every cell and state is one matrix product of the
(T*R) x J count matrix with the J x K log-emission matrix, so the cost of one gradient
does not depend on the number of log entries; the number of leapfrog steps NUTS takes
can (the posterior narrows as the counts grow). Both are reported:

    python benchmarks/bench_hmm.py                       # entries/cell 10, 100, 1000
    python benchmarks/bench_hmm.py --entries 10 1000 --chains 2 --warmup 300 --draws 300

Per fit: wall time, CPU time of this process and its children (the chains run in
httpstan's worker processes; CPU time is less sensitive than wall time to other load on a
shared machine; Linux /proc only, else NaN), post-warm-up leapfrog steps per chain, mean
tree depth, and the preprocessing time. The Stan model must be compiled (the first run
compiles it, ~1-5 min, not counted).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from pystanprivacy.experiments.foulds2016.warlogs import preprocess_war_logs, synthetic_war_logs
from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMM
from pystanprivacy.sampling.stan import StanModel

REGIONS = ("RC EAST", "RC SOUTH", "RC WEST", "RC NORTH", "RC CAPITAL", "RC SOUTHWEST")


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and all its live descendants (Linux)."""
    own = sum(os.times()[:2])
    if not os.path.isdir("/proc"):
        return float("nan")
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(entry)] = int(fields[1])
            cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    me, total = os.getpid(), own
    for pid, seconds in cpu.items():
        p, hops = parent.get(pid), 0
        while p is not None and p != me and hops < 64:
            p, hops = parent.get(p), hops + 1
        if p == me:
            total += seconds
    return total


def make_counts(entries: int, seed: int):
    """Preprocessed synthetic Afghanistan logs (6 regions x 72 months), ``entries`` median
    log entries per cell; also used by ``bench_models.py``."""
    syn = synthetic_war_logs("afghanistan", seed=seed, median_records=entries, main_regions=REGIONS)
    return preprocess_war_logs(syn.records, dataset="afghanistan")


def run(entries: int, *, n_states: int, chains: int, warmup: int, draws: int, seed: int, private: bool) -> dict:
    t0 = time.perf_counter()
    counts = make_counts(entries, seed)
    prep = time.perf_counter() - t0
    model = NaiveBayesHMM(n_states)
    c1 = cpu_seconds()
    t1 = time.perf_counter()
    if private:
        post = model.fit(
            model.release(counts, epsilon=5.0, seed=seed), chains=chains, warmup=warmup, draws=draws, seed=seed
        )
    else:
        post = model.fit_nonprivate(counts, chains=chains, warmup=warmup, draws=draws, seed=seed)
    wall = time.perf_counter() - t1
    cpu = cpu_seconds() - c1
    steps = post.sample_stat("n_steps").sum(axis=1)  # post-warm-up leapfrog steps per chain
    return {
        "entries_per_cell_median": entries,
        "log_entries": counts.n_records,
        "cells": counts.counts.shape[0] * counts.counts.shape[1],
        "J": counts.counts.shape[2],
        "K": n_states,
        "preprocess_s": prep,
        "fit_wall_s": wall,
        "fit_cpu_s": cpu,
        "leapfrog_per_chain": int(steps.mean()),
        "mean_tree_depth": float(post.sample_stat("tree_depth").mean()),
        "divergences": post.num_divergences,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[10, 100, 1000], help="median entries per cell")
    parser.add_argument("--states", type=int, default=10)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--laplace", action="store_true", help="fit Laplace-privatised counts (eps = 5)")
    args = parser.parse_args(argv)
    t = time.perf_counter()
    StanModel.get("foulds2016/nb_hmm")
    print(f"model ready in {time.perf_counter() - t:.1f} s", flush=True)
    cols = None
    for n in args.entries:
        row = run(
            n,
            n_states=args.states,
            chains=args.chains,
            warmup=args.warmup,
            draws=args.draws,
            seed=args.seed,
            private=args.laplace,
        )
        if cols is None:
            cols = list(row)
            print("  ".join(cols), flush=True)
        print("  ".join(f"{row[c]:.3g}" if isinstance(row[c], float) else str(row[c]) for c in cols), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
