"""Performance of the local-DP models of Kulkarni et al. (2022), distribution half.

Time per fit (one data set, NUTS ``--chains`` x (``--warmup`` + ``--draws``)) at N = 1e3,
1e4, 1e5 users for the Gaussian (clip [-5, 5] + Laplace) and the OUE histogram (d = 6)
models, and for the exponential model. The OUE likelihood is a function of the distinct
reports only (at most 2^d - 2 informative ones), so its Stan time must stay flat in N; the
Gaussian and exponential likelihoods are vectorised over the reports strictly inside the
clipping interval (reports outside it enter only through their count and sum), so their
cost per gradient grows linearly with those reports.

Columns: ``fit_s`` (wall time of the Stan run, incl. pystan's JSON transfer), ``prep_s``
(client-side release + aggregation in Python), ``leapfrog`` (mean leapfrog steps per
post-warm-up iteration) and ``ms_per_grad`` (fit_s / (chains x (warmup + draws) x leapfrog);
an estimate that charges the fixed per-run overhead to the gradients).

Run (compiled models are cached; the first run compiles them):

    python benchmarks/bench_kulkarni2022.py [--ns 1000 10000 100000] [--epsilon 1.0] [--json out.json]

The machine is shared, so compare the rows of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from pystanprivacy.models.kulkarni2022 import ExponentialLDP, GaussianLDP, HistogramOUE


def make_release(model_name: str, n: int, epsilon: float, rng: np.random.Generator):
    """The model and a release of ``n`` simulated users (``gaussian``, ``exponential`` or
    ``histogram``, d = 6): the data of the model's own ``example`` drawn from ``rng``."""
    cls = {"gaussian": GaussianLDP, "exponential": ExponentialLDP, "histogram": HistogramOUE}[model_name]
    example = cls.example(n, seed=rng)
    kwargs = {**example.kwargs, "epsilon": epsilon}
    return example.model, cls.release(**example.data, **kwargs, seed=rng)


def one(model_name: str, n: int, epsilon: float, sampler: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    model, release = make_release(model_name, n, epsilon, rng)
    data = model.data(release)
    prep = time.perf_counter() - t0
    _ = model.stan_model  # compile/load outside the timing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t1 = time.perf_counter()
        post = model.stan_model.sample(data, seed=seed, **sampler)
        fit = time.perf_counter() - t1
    leap = float(post.sample_stat("n_steps").mean())
    grads = sampler["chains"] * (sampler["warmup"] + sampler["draws"]) * leap
    rows = data.get("M", [None])[0] if model_name == "histogram" else None
    return {
        "model": model_name,
        "N": n,
        "epsilon": epsilon,
        "prep_s": round(prep, 3),
        "fit_s": round(fit, 2),
        "leapfrog": round(leap, 2),
        "ms_per_grad": round(1000 * fit / grads, 4),
        "stan_rows": rows,
        "divergences": post.num_divergences,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--models", nargs="+", default=["gaussian", "histogram", "exponential"])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    sampler = {"chains": args.chains, "warmup": args.warmup, "draws": args.draws}
    rows = []
    print(f"{'model':12s} {'N':>7s} {'prep_s':>7s} {'fit_s':>7s} {'leapfrog':>8s} {'ms/grad':>8s} {'rows':>5s}")
    for m in args.models:
        for n in args.ns:
            r = one(m, n, args.epsilon, sampler, seed=n)
            rows.append(r)
            print(
                f"{r['model']:12s} {r['N']:7d} {r['prep_s']:7.3f} {r['fit_s']:7.2f} {r['leapfrog']:8.2f} "
                f"{r['ms_per_grad']:8.4f} {r['stan_rows'] or ''!s:>5s}",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"sampler": sampler, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
