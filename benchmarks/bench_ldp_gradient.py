"""The Kulkarni Gaussian calibration fits at epsilon = 10 (or ``--epsilon``; issue 15): the model
with log Phi through ``logPhi`` (exact derivative; ``stan/functions/log_phi.stanfunctions``) against the former
program (Stan's ``std_normal_lcdf``, derivative off by 2e-3 at x = -74;
``tests/stan/kulkarni2022_gaussian_former.stan``), on the data sets of the full study's runs
(rebuilt from the study's own seeds: ``--full --parts calibration``, seed 0).

1. The gradient of the log density at the point where a former chain stalled (run 19, mu = 1.375,
   sigma = 73.9), from both programs, against central finite differences.
2. Fits of the given runs with the study's sampler and Stan seed (4 chains x (500 + 500)): wall
   time, leapfrog steps per iteration, transitions at the maximum tree depth, divergences, and the
   posterior means. The former program is fitted only with ``--former``: on run 19 it does not end
   in 15 min (one chain sits at step size 1e-6).

Run::

    python benchmarks/bench_ldp_gradient.py [--runs 19,43,44] [--former] [--epsilon 10]
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
FORMER = ROOT / "tests" / "stan" / "kulkarni2022_gaussian_former.stan"
EPSILON = 10.0
STALL_POINT = {"mu": [1.375], "sigma": [73.9]}


def run_data(run: int, epsilon: float = EPSILON):
    """(data, Stan seed generator, truth) of Gaussian calibration run ``run`` at ``epsilon``,
    drawn exactly as ``calibration_task`` draws it in the full study."""
    from pystanprivacy._validation import check_random_state
    from pystanprivacy.experiments.kulkarni2022 import study
    from pystanprivacy.models.kulkarni2022 import GaussianLDP
    from pystanprivacy.run.runner import task_seeds

    cfg = study.FULL["gaussian"]
    n_tasks = len(cfg["epsilons"]) * cfg["repeats"]  # batch 1: one task per run
    if epsilon not in cfg["epsilons"]:
        raise SystemExit(f"--epsilon must be one of the study's {cfg['epsilons']}, got {epsilon}")
    index = list(cfg["epsilons"]).index(epsilon) * cfg["repeats"] + run
    rng = check_random_state(task_seeds(0, n_tasks, f"{study.PAPER}/calibration/gaussian")[index])
    m = GaussianLDP()
    mu, sigma = m.sample_prior(1, seed=rng)
    x = rng.normal(mu[:, None], sigma[:, None], size=(1, cfg["n_users"]))
    data = m.data(m.release(x, epsilon=epsilon, seed=rng))
    return data, rng, (float(mu[0]), float(sigma[0]))


def gradient_rows(data) -> list[str]:
    from pystanprivacy.models.kulkarni2022 import GaussianLDP
    from pystanprivacy.sampling.stan import StanModel

    step = 1e-5
    rows = []
    for label, model in (("current", GaussianLDP().stan_model), ("former", StanModel.get(str(FORMER)))):
        mu, sigma = STALL_POINT["mu"][0], STALL_POINT["sigma"][0]
        pts = [
            STALL_POINT,
            {"mu": [mu + step], "sigma": [sigma]},
            {"mu": [mu - step], "sigma": [sigma]},
            {"mu": [mu], "sigma": [sigma * np.exp(step)]},
            {"mu": [mu], "sigma": [sigma * np.exp(-step)]},
        ]
        lp, grad = model.log_density(data, pts)
        fd = [(lp[1] - lp[2]) / (2 * step), (lp[3] - lp[4]) / (2 * step)]
        rows.append(
            f"{label:8s} lp {lp[0]:.6f}  grad (mu, log sigma) {grad[0][0]:10.4f} {grad[0][1]:10.4f}  "
            f"finite differences {fd[0]:10.4f} {fd[1]:10.4f}"
        )
    return rows


def fit_row(label: str, model, data, rng_state, sampler: dict) -> str:
    import copy

    rng = copy.deepcopy(rng_state)  # the task's generator at the fit: the same Stan seed for both programs
    post = model.sample(data, seed=rng, **sampler)
    depth = post.sample_stat("tree_depth")
    leap = float(post.sample_stat("n_steps").mean())
    return (
        f"{label:8s} {post.elapsed:8.1f} {leap:8.1f} {int((depth >= 10).sum()):6d} {post.num_divergences:4d} "
        f"{float(post.draws('mu').mean()):8.4f} {float(post.draws('sigma').mean()):8.4f} {os.getloadavg()[0]:5.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="19,43,44", help="calibration runs (0-499)")
    parser.add_argument("--epsilon", type=float, default=EPSILON, help="the study's epsilon of the runs (default 10)")
    parser.add_argument("--former", action="store_true", help="also fit the former program (run 19: > 15 min)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from pystanprivacy.experiments.kulkarni2022 import study
    from pystanprivacy.models.kulkarni2022 import GaussianLDP
    from pystanprivacy.sampling.stan import StanModel

    sampler = study.check_sampler(study.FULL["sampler"])
    runs = [int(r) for r in args.runs.split(",")]
    data, _, _ = run_data(19)
    print(f"gradient at the stall point of run 19 (mu = {STALL_POINT['mu'][0]}, sigma = {STALL_POINT['sigma'][0]}):")
    for row in gradient_rows(data):
        print(row, flush=True)
    print(f"\nfits, {sampler['chains']} chains x ({sampler['warmup']} + {sampler['draws']}), the study's Stan seed")
    print(
        f"{'program':8s} {'fit_s':>8s} {'leap/it':>8s} {'maxdep':>6s} {'div':>4s} {'mu':>8s} {'sigma':>8s} {'load':>5s}"
    )
    programs = [("current", GaussianLDP().stan_model)] + (
        [("former", StanModel.get(str(FORMER)))] if args.former else []
    )
    for run in runs:
        data, rng, (mu, sigma) = run_data(run, args.epsilon)
        print(f"run {run} (epsilon {args.epsilon:g}): truth mu = {mu:.4f}, sigma = {sigma:.4f}", flush=True)
        for label, model in programs:
            print(fit_row(label, model, data, rng, sampler), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
