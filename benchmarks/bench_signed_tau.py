"""The two tau coordinates of ``kulkarni2022/logistic_regression_inputs`` (data flag ``signed_tau``,
same posterior: ``tests/models/test_kulkarni2022_signed_tau.py``) on the fits that dominate
Kulkarni et al.'s Figure 5: the Adult data (``data/``), a random subsample of ``--n`` users,
``d = 5``, one release per epsilon (c = 0.5, R = 1), 4 chains x (1000 + 1000) as in the
regression study's full scale. For each epsilon both flags are fitted on the same release with the
same seed, in alternating order.

Per fit: the noise ratio sigma_x^2 sqrt(2 / n) / R^2 that ``parameterisation="auto"`` compares with
``SIGNED_TAU_MIN_NOISE``, wall time of the Stan run, mean leapfrog steps per iteration,
milliseconds per gradient (fixed cost included), min bulk ESS over theta and Sigma, seconds per
1000 ESS, divergences and the 1-minute load average.

Run::

    python benchmarks/bench_signed_tau.py [--n 10000] [--epsilons 0.25,1,8]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # bench_models

SAMPLER = {"chains": 4, "warmup": 1000, "draws": 1000}


def measure(adult, epsilon: float, *, n: int, seed: int = 0) -> list[dict]:
    """Both flags on one release of ``n`` users of ``adult`` (``regression_data("adult", d=5)``)
    at ``epsilon``: one row per fit."""
    from bench_models import run_costs

    from pystanprivacy.models.kulkarni2022_regression import LogisticRegressionInputs

    rng = np.random.default_rng(seed)
    idx = rng.choice(adult.x_train.shape[0], n, replace=False)
    model = LogisticRegressionInputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded release's "reproducible, not secure" warning
        data = model.data(model.release(adult.x_train[idx], adult.y_train[idx], epsilon=epsilon, c=0.5, seed=rng))
    ratio = data["sigma_x"] ** 2 * math.sqrt(2.0 / n)
    flags = (1, 0) if round(epsilon * 100) % 2 else (0, 1)
    rows = []
    for flag in flags:
        post = model.stan_model.sample({**data, "signed_tau": flag}, seed=seed + 1, **SAMPLER)
        ess = post.ess_bulk()
        c = run_costs(post, SAMPLER, min(float(np.nanmin(ess[p])) for p in ("theta", "Sigma")))
        rows.append(
            {
                "epsilon": epsilon,
                "sigma_x": data["sigma_x"],
                "noise_ratio": ratio,
                "auto": data["signed_tau"],
                "signed_tau": flag,
                "fit_s": c["fit_s"],
                "leapfrog/iter": c["leapfrog_per_iter"],
                "ms/grad": c["ms_per_grad"],
                "min_ess": c["min_ess_bulk"],
                "s/1k_ess": c["s_per_1k_ess"],
                "div": c["divergences"],
                "load1": os.getloadavg()[0],
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--epsilons", default="0.25,1,8")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import pandas as pd

    from pystanprivacy.experiments.kulkarni2022.data import regression_data

    adult = regression_data("adult", d=5, seed=0)  # read and preprocessed once for every epsilon
    rows = [r for e in args.epsilons.split(",") for r in measure(adult, float(e), n=args.n, seed=args.seed)]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pd.DataFrame(rows).round(3).to_string(index=False), flush=True)


if __name__ == "__main__":
    main()
