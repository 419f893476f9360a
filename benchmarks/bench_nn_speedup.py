"""The network releases in symmetry-free coordinates (issue 67, item 1):
:class:`~pystanprivacy.models.jewson2023.NNRegressionFastBetaD` (``stan/jewson2023/nn_regression_fast.stan``)
against :class:`~pystanprivacy.models.jewson2023.NNRegressionBetaD` (``nn_regression.stan``, the
program the Jewson study runs), and with ``--task classification`` ``NNClassifierFastBetaD`` against
``NNClassifierBetaD``, side by side on the same data, seeds and sampler settings, alternating the
two so that both see the same machine load. Each pair has the same posterior of every output
(``tests/models/test_jewson2023_fast.py``).

Each row is one gated release as the study makes it (``try_sample_one`` with the study's sampler,
4 chains x (1000 + 100), s2 = 1/(2 pi), 10 hidden units): its wall time, the mean leapfrog steps
per iteration, milliseconds per gradient (the run's fixed cost included), the minimum bulk ESS
over the gate's variables (f_ref at the 20 reference inputs, and sigma2 for regression), that ESS per second,
whether the gate passed, divergences, and the 1-minute load average. ``--nonprivate`` adds the
study's non-private fit (w = 1, the same sampler), its costliest.

``--refusals N`` instead counts the gate's refusals in N releases of each program on subsamples
of a UCI data set (default Wine, n = 200, epsilon = 1: where the study refused most).

Run::

    python benchmarks/bench_nn_speedup.py [--n 100,1000] [--epsilon 1] [--repeats 1] [--nonprivate] [--task classification]
        [--dataset wine] [--chains 1]
    python benchmarks/bench_nn_speedup.py --refusals 10 [--dataset wine] [--n 200] [--epsilon 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_models


def _models(task: str = "regression") -> dict:
    from pystanprivacy.experiments.jewson2023.networks import EXPERIMENT_S2
    from pystanprivacy.models import jewson2023 as J

    if task == "classification":
        return {"standard": J.NNClassifierBetaD(), "fast": J.NNClassifierFastBetaD()}
    return {"standard": J.NNRegressionBetaD(s2=EXPERIMENT_S2), "fast": J.NNRegressionFastBetaD(s2=EXPERIMENT_S2)}


def _row(label: str, kind: str, post, seconds: float, passed: bool | None, sampler: dict) -> dict:
    from bench_models import run_costs

    ess = post.ess_bulk()
    min_ess = min(float(np.nanmin(ess[name])) for name in ("f_ref", "sigma2") if name in ess)
    c = run_costs(post, sampler, min_ess)
    return {
        "program": label,
        "fit": kind,
        "seconds": seconds,
        "leapfrog/iter": c["leapfrog_per_iter"],
        "ms/grad": c["ms_per_grad"],
        "min_ess": min_ess,
        "ess/s": min_ess / post.elapsed,
        "gate": "-" if passed is None else ("pass" if passed else "REFUSED"),
        "div": c["divergences"],
        "load1": os.getloadavg()[0],
    }


def measure(
    *,
    n: int,
    epsilon: float,
    repeats: int = 1,
    nonprivate: bool = False,
    seed: int = 0,
    task: str = "regression",
    programs: tuple[str, ...] = ("standard", "fast"),
    data_set: str = "simulated",
    chains: int | None = None,
) -> list[dict]:
    """Releases (and non-private fits) of ``programs`` on ``simulate_nn(n, d=2)`` (or, with
    ``data_set``, a random subsample of n rows of that UCI data set, as the study draws them),
    ``repeats`` times each, the order alternated; one row per fit. ``chains`` overrides the study's
    4 chains (the same warm-up and draws per chain)."""
    from pystanprivacy.experiments.jewson2023.common import SAMPLER
    from pystanprivacy.experiments.jewson2023.data import load_uci, simulate_nn, subsample

    if data_set == "simulated":
        data = simulate_nn(n, 2, task=task, n_test=10, seed=seed)
    else:
        full = load_uci(data_set, None, intercept=False, seed=np.random.default_rng(0))
        data = subsample(full, n, seed=np.random.default_rng(1000 + seed))
    sampler = dict(SAMPLER, **({} if chains is None else {"chains": chains}))
    models = _models(task)
    rows = []
    for r in range(repeats):
        for label in programs if r % 2 == 0 else programs[::-1]:
            model = models[label]
            t = time.perf_counter()
            out = model.try_sample_one(
                data.X, data.y, epsilon=epsilon, seed=np.random.default_rng(100 + r), keep_posterior=True, **sampler
            )
            rows.append(
                _row(label, "release", out.posterior, time.perf_counter() - t, out.release is not None, sampler)
            )
            if nonprivate:
                t = time.perf_counter()
                post = model.fit_nonprivate(data.X, data.y, seed=np.random.default_rng(200 + r), **sampler)
                rows.append(_row(label, "w = 1", post, time.perf_counter() - t, None, sampler))
    return rows


def refusals(*, dataset: str, n: int, epsilon: float, releases: int) -> dict[str, list[bool]]:
    """Whether the gate refused each of ``releases`` releases per program, each on its own random
    subsample of ``dataset`` (the study's loader and subsampling), the programs alternated."""
    from pystanprivacy.experiments.jewson2023.common import SAMPLER
    from pystanprivacy.experiments.jewson2023.data import load_uci, subsample

    full = load_uci(dataset, None, intercept=False, seed=np.random.default_rng(0))
    models = _models()
    refused: dict[str, list[bool]] = {label: [] for label in models}
    for r in range(releases):
        data = subsample(full, n, seed=np.random.default_rng(1000 + r))
        for label in ("standard", "fast") if r % 2 == 0 else ("fast", "standard"):
            t = time.perf_counter()
            out = models[label].try_sample_one(
                data.X, data.y, epsilon=epsilon, seed=np.random.default_rng(2000 + r), **SAMPLER
            )
            refused[label].append(out.release is None)
            print(
                f"release {r} {label:8s} {'REFUSED' if out.release is None else 'released':8s} "
                f"{time.perf_counter() - t:7.1f} s  load {os.getloadavg()[0]:.2f}  {'; '.join(out.problems)}",
                flush=True,
            )
    return refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default=None, help="comma-separated sizes (default 100,1000; with --refusals 200)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=1, help="releases of each program per size")
    parser.add_argument("--nonprivate", action="store_true", help="also the study's non-private fit (w = 1)")
    parser.add_argument("--refusals", type=int, default=0, help="count the gate's refusals in this many releases")
    parser.add_argument(
        "--dataset", default=None, help="UCI data set (default: wine with --refusals, simulate_nn(n, d = 2) without)"
    )
    parser.add_argument("--chains", type=int, default=None, help="chains per fit, at least 2 (default the study's 4)")
    parser.add_argument("--task", default="regression", choices=("regression", "classification"))
    parser.add_argument("--programs", default="standard,fast", help="which programs (default both, alternated)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.refusals:
        n, dataset = int(args.n or 200), args.dataset or "wine"
        got = refusals(dataset=dataset, n=n, epsilon=args.epsilon, releases=args.refusals)
        for label, flags in got.items():
            print(f"{dataset} n = {n}, epsilon = {args.epsilon}: {label} refused {sum(flags)} of {len(flags)}")
        return 0
    for n in (int(v) for v in (args.n or "100,1000").split(",")):
        where = f"{args.dataset} subsample" if args.dataset else "simulate_nn(d = 2)"
        print(f"\n{args.task}: {where}, n = {n}, epsilon = {args.epsilon}, {args.chains or 4} chain(s) x (1000 + 100)")
        print(
            f"{'program':9s} {'fit':8s} {'seconds':>8s} {'leap/it':>8s} {'ms/grad':>8s} {'min_ess':>8s} "
            f"{'ESS/s':>8s} {'gate':>8s} {'div':>4s} {'load':>5s}"
        )
        rows = measure(
            n=n,
            epsilon=args.epsilon,
            repeats=args.repeats,
            nonprivate=args.nonprivate,
            task=args.task,
            programs=tuple(args.programs.split(",")),
            data_set=args.dataset or "simulated",
            chains=args.chains,
        )
        for row in rows:
            print(
                f"{row['program']:9s} {row['fit']:8s} {row['seconds']:8.1f} {row['leapfrog/iter']:8.1f} "
                f"{row['ms/grad']:8.4f} {row['min_ess']:8.0f} {row['ess/s']:8.2f} {row['gate']:>8s} "
                f"{row['div']:4d} {row['load1']:5.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
