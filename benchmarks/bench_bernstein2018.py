"""Performance of the Bernstein & Sheldon (2018) noise-aware posteriors.

1. Cost vs population size: a noise-aware Stan fit of the CLT models (binomial,
   multinomial, truncated exponential) at n = 1e2 and n = 1e6, same ε and sampler
   settings. The likelihoods marginalise the statistics in closed form, so the work per
   gradient does not depend on n; the ratio of wall times should stay near 1 (target ≤ 1.5).
   The leapfrog steps per iteration are reported too (the geometry may change with n).
2. Stan vs the paper's Gibbs sampler: effective samples per second (minimum bulk ESS over
   the components of θ / wall time) on the same binomial and multinomial releases, for one
   data set and for a batch of 100 (the calibration use).

Run (compiled models are cached; the first run compiles them):

    python benchmarks/bench_bernstein2018.py [--repeats 3] [--json out.json]

Timings include pystan's JSON transfer of the draws; they exclude compilation. The machine
is shared, so compare the columns of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from pystanprivacy.experiments.bernstein2018.baselines import gibbs_posterior
from pystanprivacy.models.bernstein2018 import BinomialBeta, ExponentialGamma, MultinomialDirichlet, simulate_statistics

STAN = {"chains": 4, "warmup": 1000, "draws": 1000}
GIBBS = {"chains": 4, "burnin": 2000, "iterations": 5000}  # the paper's run length per chain


def _release(kind: str, n: int, epsilon: float, datasets: int, seed: int):
    """The model and a release of ``datasets`` simulated data sets of ``n`` records (the
    models' own generator, :func:`~pystanprivacy.models.bernstein2018.simulate_statistics`)."""
    model = {"binomial": BinomialBeta, "multinomial": MultinomialDirichlet, "exponential": ExponentialGamma}[kind]()
    s, _ = simulate_statistics(kind, n, datasets, seed)
    return model, model.release_statistics(s, n=n, epsilon=epsilon, seed=seed + 1)


def _stan_fit(model, release, seed: int, stan: dict | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _ = model.stan_model  # load (compile) outside the timing
        t = time.perf_counter()
        post = model.fit(release, seed=seed, **(STAN if stan is None else stan))
        return post, time.perf_counter() - t


def _min_ess(post) -> float:
    return float(np.min(post.ess_bulk()["theta"]))


def cost_vs_n(repeats: int) -> list[dict]:
    rows = []
    for kind in ("binomial", "multinomial", "exponential"):
        for n in (100, 1_000_000):
            model, rel = _release(kind, n, 0.1, 1, seed=1)
            times, steps = [], []
            for rep in range(repeats):
                post, seconds = _stan_fit(model, rel, seed=10 + rep)
                times.append(seconds)
                steps.append(float(post.sample_stat("n_steps").mean()))
            rows.append(
                {
                    "model": kind,
                    "n": n,
                    "epsilon": 0.1,
                    "median_s": float(np.median(times)),
                    "leapfrog_per_iter": float(np.mean(steps)),
                    "divergences": post.num_divergences,
                }
            )
    return rows


def ess_per_second(
    repeats: int,
    *,
    datasets: tuple[int, ...] = (1, 100),
    n: int = 1000,
    epsilon: float = 0.1,
    stan: dict | None = None,
    gibbs: dict | None = None,
    kinds: tuple[str, ...] = ("binomial", "multinomial"),
) -> list[dict]:
    """Stan and the Gibbs sampler on the same binomial and multinomial (``kinds``) releases (``n``
    records, ``epsilon``; one release of each size in ``datasets``), ``repeats`` times each;
    one row per (model, data sets, method, repeat) with its wall time ``seconds``, minimum
    bulk ESS of θ and ``ess_per_s`` = min ESS / seconds (``stan``/``gibbs``: the run lengths,
    default ``STAN`` / ``GIBBS``)."""
    stan = STAN if stan is None else stan
    gibbs = GIBBS if gibbs is None else gibbs
    rows = []
    for kind in kinds:
        for d in datasets:
            model, rel = _release(kind, n, epsilon, d, seed=2)
            for rep in range(repeats):
                post, seconds = _stan_fit(model, rel, seed=20 + rep, stan=stan)
                rows.append(
                    {
                        "model": kind,
                        "datasets": d,
                        "method": "Stan (NUTS)",
                        "rep": rep,
                        "seconds": seconds,
                        "min_ess_bulk": _min_ess(post),
                    }
                )
                t = time.perf_counter()
                post = gibbs_posterior(model, rel, seed=30 + rep, **gibbs)
                seconds = time.perf_counter() - t
                rows.append(
                    {
                        "model": kind,
                        "datasets": d,
                        "method": "Gibbs (Alg. 1)",
                        "rep": rep,
                        "seconds": seconds,
                        "min_ess_bulk": _min_ess(post),
                    }
                )
    for r in rows:
        r["ess_per_s"] = r["min_ess_bulk"] / r["seconds"]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()

    cost = cost_vs_n(args.repeats)
    print(
        f"Stan fit cost vs n (ε = 0.1, one data set, {STAN['chains']} chains x "
        f"({STAN['warmup']} + {STAN['draws']}) iterations, median of {args.repeats}):"
    )
    print(f"{'model':12s} {'n':>9s} {'seconds':>8s} {'leapfrog/iter':>13s} {'ratio 1e6/1e2':>13s}")
    for i, r in enumerate(cost):
        ratio = f"{r['median_s'] / cost[i - 1]['median_s']:.2f}" if r["n"] == 1_000_000 else ""
        print(f"{r['model']:12s} {r['n']:9d} {r['median_s']:8.2f} {r['leapfrog_per_iter']:13.1f} {ratio:>13s}")

    ess = ess_per_second(args.repeats)
    print(
        f"\nESS/s, n = 1000, ε = 0.1 (Stan: {STAN['chains']} x ({STAN['warmup']} + {STAN['draws']}); "
        f"Gibbs: {GIBBS['chains']} x ({GIBBS['burnin']} + {GIBBS['iterations']})), median of {args.repeats}:"
    )
    print(f"{'model':12s} {'datasets':>8s} {'method':16s} {'seconds':>8s} {'min ESS':>8s} {'ESS/s':>8s}")
    for kind in ("binomial", "multinomial"):
        for datasets in (1, 100):
            for method in ("Stan (NUTS)", "Gibbs (Alg. 1)"):
                sel = [r for r in ess if r["model"] == kind and r["datasets"] == datasets and r["method"] == method]
                med = lambda k, sel=sel: float(np.median([r[k] for r in sel]))
                print(
                    f"{kind:12s} {datasets:8d} {method:16s} {med('seconds'):8.2f} {med('min_ess_bulk'):8.0f} "
                    f"{med('ess_per_s'):8.0f}"
                )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cost_vs_n": cost, "ess_per_second": ess, "stan": STAN, "gibbs": GIBBS}, fh, indent=2)


if __name__ == "__main__":
    main()
