"""Time of one private release of each Jewson et al. (2023) model at n = 1000, with the
paper's sampler settings (4 chains x (1000 warm-up + 100 draws); the convergence checks
included), plus the baselines, on simulated data (d = 2).

Run:  python benchmarks/bench_jewson2023.py [--n 1000] [--repeats 1] [--chains 4]

Models are compiled (or loaded from the cache) before timing. Prints one row per model:
wall seconds of ``try_sample_one`` (Stan + checks + draw choice: everything ``sample_one``
does except charging an accountant, and it returns a refusal instead of raising), the Stan
run alone,
whether the draw was released, mean tree depth and the 1-minute load average at the start
(the machine may be shared: compare rows of one run only).
"""

from __future__ import annotations

import argparse
import os
import time


def make_cases(n: int) -> list[tuple]:
    """``(label, model, X, y, epsilon)`` of the four beta-D models on simulated data (d = 2),
    ``n`` records each: the models' own examples (``Model.example(n)``)."""
    from pystanprivacy.models import jewson2023 as J

    out = []
    for label, cls in (
        ("beta-D logistic", J.LogisticRegressionBetaD),
        ("beta-D linear regression (s2=0.01)", J.LinearRegressionBetaD),
        ("beta-D NN classifier", J.NNClassifierBetaD),
        ("beta-D NN regression (s2=1/(2 pi))", J.NNRegressionBetaD),
    ):
        ex = cls.example(n)
        out.append((label, ex.model, ex.data["X"], ex.data["y"], ex.kwargs["epsilon"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--chains", type=int, default=4)
    args = ap.parse_args()

    from pystanprivacy.experiments.jewson2023.baselines import (
        MinamiGibbsLogistic,
        chaudhuri_output_perturbation,
    )
    from pystanprivacy.sampling.stan import StanModel

    for name in ("logistic", "linear_regression", "nn_classifier", "nn_regression"):
        StanModel.get(f"jewson2023/{name}")
    n = args.n
    cases = make_cases(n)
    logit = cases[0]
    sampler = dict(chains=args.chains, warmup=1000, draws=100)
    print(f"n = {n}, sampler {sampler}, cpu count {os.cpu_count()}")
    print(f"{'release':40s} {'eps':>5s} {'wall_s':>8s} {'stan_s':>8s} {'released':>8s} {'treedepth':>9s} {'load1':>6s}")
    for label, model, X, y, eps in cases:
        for r in range(args.repeats):
            load = os.getloadavg()[0]
            t = time.perf_counter()
            out = model.try_sample_one(X, y, epsilon=eps, seed=r, keep_posterior=True, **sampler)
            wall = time.perf_counter() - t
            post = out.posterior
            print(
                f"{label:40s} {eps:5.1f} {wall:8.1f} {post.elapsed:8.1f} {out.released!s:>8s} "
                f"{post.sample_stat('tree_depth').mean():9.2f} {load:6.2f}"
            )
    minami = MinamiGibbsLogistic()
    load = os.getloadavg()[0]
    t = time.perf_counter()
    out = minami.try_sample_one(logit[2], logit[3], epsilon=1.0, seed=0, **sampler)
    print(
        f"{'Minami Gibbs logistic':40s} {1.0:5.1f} {time.perf_counter() - t:8.1f} {'':>8s} {out.released!s:>8s} {'':>9s} {load:6.2f}"
    )
    t = time.perf_counter()
    chaudhuri_output_perturbation(logit[2], logit[3], epsilon=1.0, lam=1 / 9, seed=0)
    print(f"{'Chaudhuri output perturbation':40s} {1.0:5.1f} {time.perf_counter() - t:8.3f}")


if __name__ == "__main__":
    main()
