"""Time per fit vs the number of users n for the Kulkarni et al. (2022) regression models.

The sufficient-statistics models see only the sum of the n reports, so their cost per
gradient does not depend on n (flat). Of the perturbed-input models, the linear one sees the
reports only through their (d+1)x(d+1) scatter matrix (formed once; flat per gradient), and
the logistic one evaluates every user's marginal likelihood (vectorised), so its cost grows
linearly in n.

Run:  python benchmarks/bench_kulkarni2022_regression.py [--ss-n 1000 10000 100000]
          [--inputs-n 1000 3000 10000] [--chains 1 --warmup 300 --draws 300]

Prints one row per (model, n): release time, Stan fit time (one run, fixed seed, the models
compiled and cached beforehand), gradient evaluations (leapfrog steps) and the fit time per
gradient evaluation, which is the number to compare across n (the number of steps NUTS takes
varies with the posterior's shape).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pystanprivacy.models.kulkarni2022_regression import (
    LinearRegressionInputs,
    LinearRegressionSS,
    LogisticRegressionInputs,
    LogisticRegressionSS,
)
from pystanprivacy.models.kulkarni2022_regression import (
    simulate_regression as make_data,  # the models' own generator (their example's data)
)


def bench(model_cls, kind: str, n: int, epsilon: float, sampler: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    x, y = make_data(n, kind, rng)
    t0 = time.perf_counter()
    kw = {"R_y": 1.0} if kind == "linear" else {}
    rel = model_cls.release(x, y, epsilon=epsilon, seed=rng, **kw)
    t1 = time.perf_counter()
    post = model_cls().fit(rel, seed=seed, **sampler)
    t2 = time.perf_counter()
    grads = int(post.sample_stat("n_steps").sum())
    return {
        "model": model_cls.__name__,
        "n": n,
        "release_s": t1 - t0,
        "fit_s": t2 - t1,
        "gradients": grads,
        "ms_per_grad": 1000 * (t2 - t1) / max(grads, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ss-n", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--inputs-n", type=int, nargs="+", default=[1_000, 3_000, 10_000])
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--chains", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    sampler = {"chains": args.chains, "warmup": args.warmup, "draws": args.draws}
    for cls in (LinearRegressionSS, LogisticRegressionSS, LinearRegressionInputs, LogisticRegressionInputs):
        _ = cls().stan_model  # compile / load outside the timings
    rows = []
    for cls, kind, ns in (
        (LinearRegressionSS, "linear", args.ss_n),
        (LogisticRegressionSS, "logistic", args.ss_n),
        (LinearRegressionInputs, "linear", args.inputs_n),
        (LogisticRegressionInputs, "logistic", args.inputs_n),
    ):
        for n in ns:
            rows.append(bench(cls, kind, n, args.epsilon, sampler, args.seed))
            r = rows[-1]
            print(
                f"{r['model']:26s} n={r['n']:>7d}  release {r['release_s']:6.2f} s  fit {r['fit_s']:7.2f} s  "
                f"{r['gradients']:>7d} gradients  {r['ms_per_grad']:8.3f} ms / gradient",
                flush=True,
            )
    print(
        f"\nsampler: {sampler}, epsilon = {args.epsilon}, d = 3 (the pystan backend's fixed cost per run "
        "-- process start, data transfer -- is included in fit_s)"
    )


if __name__ == "__main__":
    main()
