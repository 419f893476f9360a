"""Exact speed-ups (issue 15): each rewritten Stan program against the former program it replaces,
kept in ``tests/stan/`` (where a test checks that the two give the same posterior), on the same
data, seeds and sampler settings, alternating the two so that both see the same machine load.

Pairs:

* ``kulkarni2022/linear_regression_inputs``: the likelihood through the (d + 1) x (d + 1) scatter
  matrix (O(d^3) per gradient) vs the per-user sum (O(n d^2));
* ``kulkarni2022/logistic_regression_inputs``: the features' term through the d x d scatter matrix
  vs a triangular solve per user (the labels' term is per user in both);
* ``jewson2023/nn_classifier``: the beta-D Bernoulli loss with the labels split by position and
  the hidden biases inside one matrix product vs the former loss (both labels' terms weighted by
  y and 1 - y) and output (X W plus the biases); simulated data (d = 2), the beta-D loss at
  ``epsilon``.

For each fit: wall time of the Stan run (``Posterior.elapsed``), mean leapfrog steps per iteration,
milliseconds per gradient (the run's fixed cost included), min bulk ESS over the parameters, seconds
per 1000 ESS, divergences, and the 1-minute load average.

Run::

    python benchmarks/bench_exact_speedups.py [--n 10000] [--repeats 2] [--models linear,logistic,nn_classifier]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_models

#: pair -> (module of pystanprivacy.models, model class, former program in tests/stan)
PAIRS = {
    "linear": (
        "kulkarni2022_regression",
        "LinearRegressionInputs",
        "kulkarni2022_linear_regression_inputs_per_user.stan",
    ),
    "logistic": (
        "kulkarni2022_regression",
        "LogisticRegressionInputs",
        "kulkarni2022_logistic_regression_inputs_per_user.stan",
    ),
    "nn_classifier": ("jewson2023", "NNClassifierBetaD", "jewson2023_nn_classifier_former.stan"),
}
SAMPLER = {"chains": 2, "warmup": 500, "draws": 500, "adapt_delta": 0.95}  # adapt_delta: the models' fit default
PARAMETERS = ("theta", "sigma", "tau", "L_Omega", "f_ref")


def _row(label: str, post, sampler: dict) -> dict:
    """One printed row: :func:`bench_models.run_costs` (the same measures as the per-model table)."""
    from bench_models import run_costs

    ess = post.ess_bulk()
    c = run_costs(post, sampler, min(float(np.nanmin(ess[p])) for p in PARAMETERS if p in ess and ess[p].size))
    return {
        "program": label,
        "fit_s": c["fit_s"],
        "leapfrog/iter": c["leapfrog_per_iter"],
        "ms/grad": c["ms_per_grad"],
        "min_ess": c["min_ess_bulk"],
        "s/1k_ess": c["s_per_1k_ess"],
        "div": c["divergences"],
        "load1": os.getloadavg()[0],
    }


def measure(
    key: str, *, n: int, repeats: int = 2, epsilon: float = 4.0, sampler: dict | None = None, seed: int = 0
) -> tuple[str, list[dict]]:
    """Fit the current and the former program of pair ``key`` ``repeats`` times each on one release
    of ``n`` simulated users (records); the header line and one row per fit (alternating the order)."""
    import importlib

    from pystanprivacy.sampling.stan import StanModel, model_info

    if key not in PAIRS:
        raise ValueError(f"key must be one of {sorted(PAIRS)}, got {key!r}")
    sampler = dict(SAMPLER if sampler is None else sampler)
    module, cls_name, former = PAIRS[key]
    example = getattr(importlib.import_module(f"pystanprivacy.models.{module}"), cls_name).example(n, seed=seed)
    model = example.model
    if module == "jewson2023":  # OPS on the raw data: the beta-D loss at the epsilon's beta
        data = model.stan_data(example.data["X"], example.data["y"], beta=model.beta(epsilon))
    else:
        release = type(model).release(**example.data, **{**example.kwargs, "epsilon": epsilon}, seed=seed + 1)
        data = model.data(release)
    programs = {"current": model.stan_model, "former": StanModel.get(str(ROOT / "tests" / "stan" / former))}
    # inputs the current program added since (logistic: signed_tau, 0 at the default epsilon = 4)
    declared = model_info(programs["former"].name)["inputs"]
    inputs = {"current": data, "former": {k: v for k, v in data.items() if k in declared}}
    header = (
        f"{model.model_name}: n = {n}, d = {data.get('d', data.get('P'))}, epsilon = {epsilon}, {sampler['chains']} chains x "
        f"({sampler['warmup']} + {sampler['draws']}), adapt_delta {sampler.get('adapt_delta', 0.8)}"
    )
    rows = []
    for r in range(repeats):
        for label in ("former", "current") if r % 2 == 0 else ("current", "former"):
            rows.append(_row(label, programs[label].sample(inputs[label], seed=100 + r, **sampler), sampler))
    return header, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="users (default 10000, Figure 5's subsample)")
    parser.add_argument("--repeats", type=int, default=2, help="fits of each program (different seeds)")
    parser.add_argument("--models", default="linear,logistic", help="comma-separated: linear, logistic, nn_classifier")
    parser.add_argument("--epsilon", type=float, default=4.0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    for key in args.models.split(","):
        header, rows = measure(key.strip(), n=args.n, repeats=args.repeats, epsilon=args.epsilon)
        print(f"\n{header}")
        print(
            f"{'program':8s} {'fit_s':>8s} {'leap/it':>8s} {'ms/grad':>8s} {'min_ess':>8s} {'s/1kESS':>8s} "
            f"{'div':>4s} {'load':>5s}"
        )
        for row in rows:
            print(
                f"{row['program']:8s} {row['fit_s']:8.2f} {row['leapfrog/iter']:8.1f} {row['ms/grad']:8.4f} "
                f"{row['min_ess']:8.0f} {row['s/1k_ess']:8.1f} {row['div']:4d} {row['load1']:5.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
