#!/usr/bin/env python
"""Convergence of the Foulds et al. (2016) HMM fits on logs as hard as the real
Afghanistan war logs (issue 15, section 2).

Data: ``synthetic_war_logs("afghanistan")`` with its default ``profile="realistic"``
(~76k records, 5 regions x 72 months, skewed regions, bursts, empty cells, emissions that
depend on the region and drift), 3 states, as in the state study (Figures 3-5). Fits: the
non-private baseline, Laplace at total epsilon = 5 and OPS (M = 100, epsilon = 5; the full
tempered run is kept for the diagnostics, ``allow_unconverged=True``).

Two starts are compared:

* ``before``: the former start (each chain its own k-means clustering, the corpus-wide
  most frequent value as the reference of the eta coordinates) at the former quick
  sampler settings (2 chains x 200 warm-up + 100 draws, max tree depth 6);
* ``after``: every chain from the best of 8 EM (Baum-Welch) runs on the counts the fit
  sees (the release for Laplace), a reference value common in every state, at the
  study's current quick settings (``QUICK["states_sampler"]``).

Per fit: wall time; max split R-hat and min bulk ESS of the label-invariant quantities
(log_lik and the sorted state occupancy) and of the label-aligned theta and A; whether
``convergence_problems`` passes (invariant / aligned).

    python benchmarks/bench_hmm_convergence.py                  # data seed 1
    python benchmarks/bench_hmm_convergence.py --data-seeds 0 1 2 3 --starts after
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from pystanprivacy.experiments.foulds2016.hmm import QUICK
from pystanprivacy.experiments.foulds2016.warlogs import preprocess_war_logs, synthetic_war_logs
from pystanprivacy.models.foulds2016_hmm import (
    NaiveBayesHMM,
    NaiveBayesHMMOPS,
    align_states,
    convergence_problems,
    label_invariant_draws,
)

BEFORE = {"init": "kmeans", "sampler": {"chains": 2, "warmup": 200, "draws": 100, "max_treedepth": 6}}
AFTER = {"init": "em", "sampler": dict(QUICK["states_sampler"])}


def fit(method: str, counts, start: dict, seed: int):
    kw = dict(start["sampler"], seed=seed, init=start["init"])
    t0 = time.perf_counter()
    if method == "non-private":
        post = NaiveBayesHMM(3).fit_nonprivate(counts, **kw)
    elif method == "laplace":
        post = NaiveBayesHMM(3).fit(NaiveBayesHMM.release(counts, epsilon=5.0, seed=seed + 1000), **kw)
    else:
        res = NaiveBayesHMMOPS(3, multiplier=100.0).sample(
            counts, epsilon=5.0, allow_unconverged=True, keep_posterior=True, **kw
        )
        post = res.posterior
    return post, time.perf_counter() - t0


def summary(post) -> dict:
    al = align_states(post)
    c, n = post.num_chains, post.num_draws
    inv = label_invariant_draws(al)
    view = post.with_draws(
        {
            **{k: v.reshape(c, n, *v.shape[1:]) for k, v in inv.items()},
            "theta": al.theta.reshape(c, n, *al.theta.shape[1:]),
            "A": al.A.reshape(c, n, *al.A.shape[1:]),
        }
    )
    rhat, ess = view.rhat(), view.ess_bulk()

    def worst(names):
        varies = [np.ptp(view.draws(k), axis=0) > 0 for k in names]
        r = max(float(np.nanmax(np.where(v, rhat[k], 1.0))) for k, v in zip(names, varies))
        e = min(float(np.nanmin(np.where(v, ess[k], np.inf))) for k, v in zip(names, varies))
        return r, e

    r_inv, e_inv = worst(["log_lik", "occupancy"])
    r_al, e_al = worst(["theta", "A"])
    return dict(
        rhat_inv=r_inv,
        ess_inv=e_inv,
        rhat_aligned=r_al,
        ess_aligned=e_al,
        ok_inv=not convergence_problems(post, al, quantities="invariant"),
        ok_aligned=not convergence_problems(post, al),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--starts", nargs="+", default=["before", "after"], choices=["before", "after"])
    ap.add_argument(
        "--methods", nargs="+", default=["non-private", "laplace", "ops"], choices=["non-private", "laplace", "ops"]
    )
    ap.add_argument("--seed", type=int, default=0, help="sampler seed")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message=".*reproducible.*")
    print(
        "| data seed | start | method | wall s | R-hat inv | bulk ESS inv | R-hat aligned | bulk ESS aligned "
        "| checks inv / aligned |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for ds in args.data_seeds:
        counts = preprocess_war_logs(synthetic_war_logs("afghanistan", seed=ds).records)
        for name in args.starts:
            start = BEFORE if name == "before" else AFTER
            for method in args.methods:
                post, secs = fit(method, counts, start, args.seed)
                s = summary(post)
                print(
                    f"| {ds} | {name} | {method} | {secs:.1f} | {s['rhat_inv']:.3f} | {s['ess_inv']:.0f} | "
                    f"{s['rhat_aligned']:.3f} | {s['ess_aligned']:.0f} | "
                    f"{'pass' if s['ok_inv'] else 'FAIL'} / {'pass' if s['ok_aligned'] else 'FAIL'} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
