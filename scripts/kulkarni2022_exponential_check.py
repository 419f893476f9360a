#!/usr/bin/env python
"""Check the full-scale exponential calibration (Kulkarni et al. 2022, supplement Figure 11)
without Stan, two ways (REPRODUCTION.md, K11):

1. regenerate every run's reports from its task seed (the runner's seeds, the study's draws)
   and compute the posterior quantile of the true theta by quadrature: the likelihood of a report
   is integrated numerically over the latent x (Gauss-Legendre, split at the report), not taken
   from the closed form in ``ldp.stanfunctions``; compare with the quantiles Stan gave;
2. test that the release's reports follow the likelihood the model uses (a KS test of 200 000
   reports per (epsilon, theta) against the CDF integrated the same way), and that
   ``sample_prior`` draws the model's prior.

If Stan's quantiles match the quadrature's, and reports and prior match the model, the
posterior quantiles of the truth are exactly U(0, 1) (simulation-based calibration), so a KS
p-value of either set is what chance gives.

    python scripts/kulkarni2022_exponential_check.py --table results/kulkarni2022/kulkarni2022_calibration.csv
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from scipy import stats

from pystanprivacy._validation import check_random_state
from pystanprivacy.experiments.kulkarni2022.study import FULL, PAPER
from pystanprivacy.models.kulkarni2022 import ExponentialLDP
from pystanprivacy.run.runner import task_seeds

NODES, WEIGHTS = np.polynomial.legendre.leggauss(48)


def _pieces(z: np.ndarray, b: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Gauss-Legendre nodes and weights on [0, clip(z)] and [clip(z), b], per report."""
    l = np.clip(z, 0.0, b)
    out = []
    for lo, hi in ((np.zeros_like(l), l), (l, np.full_like(l, b))):
        half = (hi - lo) / 2
        out.append((lo[:, None] + half[:, None] * (NODES + 1), half[:, None] * WEIGHTS))
    return out


def log_posterior(z: np.ndarray, theta: np.ndarray, b: float, beta: float, shape: float, rate: float) -> np.ndarray:
    """log p(theta | z) + const on a grid: p(z | theta) = int_0^b theta e^{-theta x} Lap(z - x; beta) dx
    + e^{-theta b} Lap(z - b; beta), the integral by quadrature."""
    pieces = [(x, np.log(np.maximum(w, 1e-300)) - np.abs(z[:, None] - x) / beta) for x, w in _pieces(z, b)]
    out = np.empty(len(theta))
    for j, th in enumerate(theta):
        terms = np.concatenate(
            [lk + np.log(th) - th * x for x, lk in pieces] + [(-th * b - np.abs(z - b) / beta)[:, None]], axis=1
        )
        top = terms.max(axis=1, keepdims=True)
        out[j] = np.sum(top[:, 0] + np.log(np.exp(terms - top).sum(axis=1)))
    return out + stats.gamma.logpdf(theta, shape, scale=1.0 / rate)


def quadrature_quantile(z: np.ndarray, truth: float, b: float, beta: float, shape: float, rate: float) -> float:
    """Posterior CDF at ``truth``: a coarse grid over the prior's range, then a fine one where the mass is."""
    lo, hi = stats.gamma.ppf([1e-6, 1 - 1e-6], shape, scale=1.0 / rate)
    grid = np.linspace(np.log(lo), np.log(hi), 300)
    lp = log_posterior(z, np.exp(grid), b, beta, shape, rate) + grid  # density of log theta
    mass = grid[lp - lp.max() > np.log(1e-12)]
    u = np.linspace(mass.min() - 0.05, mass.max() + 0.05, 400)
    lp = log_posterior(z, np.exp(u), b, beta, shape, rate) + u
    p = np.exp(lp - lp.max())
    cdf = np.concatenate([[0.0], np.cumsum((p[1:] + p[:-1]) / 2 * np.diff(u))])
    return float(np.interp(np.log(truth), u, cdf / cdf[-1]))


def report_cdf(z: np.ndarray, theta: float, b: float, beta: float) -> np.ndarray:
    """CDF of a report min(x, b) + Laplace(beta), x ~ Exponential(theta), by the same quadrature."""
    lap = stats.laplace(scale=beta).cdf
    total = np.exp(-theta * b) * lap(z - b)
    for x, w in _pieces(z, b):
        total = total + (w * theta * np.exp(-theta * x) * lap(z[:, None] - x)).sum(axis=1)
    return total


def quantiles(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Regenerate the study's runs (same seeds, same draws as ``calibration_task``) and put the
    quadrature quantile of the truth beside Stan's."""
    grid = FULL["exponential"]
    eps, repeats, batch, n_users = grid["epsilons"], grid["repeats"], grid["batch"], grid["n_users"]
    sizes = [min(batch, repeats - i) for i in range(0, repeats, batch)]
    seeds = task_seeds(seed, len(eps) * len(sizes), f"{PAPER}/calibration/exponential")
    table = table[table.model == "exponential"]
    rows = []
    for i, task_seed in enumerate(seeds):
        e, k = eps[i // len(sizes)], i % len(sizes)
        rng = check_random_state(task_seed)
        model = ExponentialLDP()
        theta = model.sample_prior(sizes[k], seed=rng)
        x = rng.exponential(1.0 / theta[:, None], size=(sizes[k], n_users))
        data = model.data(model.release(x, epsilon=e, seed=rng))
        z = np.asarray(data["z"]).reshape(sizes[k], -1)
        for r in range(sizes[k]):
            stan = table[(table.epsilon == e) & (table.repeat == sum(sizes[:k]) + r)].iloc[0]
            if not np.isclose(stan.truth, theta[r]):
                raise RuntimeError(f"run {r} of batch {k} at epsilon {e}: regenerated truth differs from the table's")
            rows.append(
                {
                    "epsilon": e,
                    "truth": theta[r],
                    "q_stan": stan["quantile"],
                    "q_quadrature": quadrature_quantile(
                        z[r], theta[r], data["b"], data["beta"], data["theta_prior_shape"], data["theta_prior_rate"]
                    ),
                }
            )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="kulkarni2022_calibration.csv of the full run")
    parser.add_argument("--seed", type=int, default=0, help="the run's root seed (default 0)")
    args = parser.parse_args(argv)
    q = quantiles(pd.read_csv(args.table), args.seed)
    diff = (q.q_quadrature - q.q_stan).abs()
    print(f"{len(q)} runs; |quadrature - Stan| quantile: mean {diff.mean():.4f}, max {diff.max():.4f}")
    for e, g in q.groupby("epsilon"):
        print(
            f"epsilon {e:g}: KS p quadrature {stats.kstest(g.q_quadrature, 'uniform').pvalue:.3f}, "
            f"Stan {stats.kstest(g.q_stan, 'uniform').pvalue:.3f}"
        )
    print(
        f"pooled: KS p quadrature {stats.kstest(q.q_quadrature, 'uniform').pvalue:.3f}, "
        f"Stan {stats.kstest(q.q_stan, 'uniform').pvalue:.3f}"
    )
    rng = np.random.default_rng(11)
    model = ExponentialLDP()
    prior = stats.gamma(model.theta_prior_shape, scale=1.0 / model.theta_prior_rate)
    print(
        f"sample_prior vs the model's prior: KS p {stats.kstest(model.sample_prior(200_000, seed=rng), prior.cdf).pvalue:.3f}"
    )
    for e in (1.0, 10.0):
        for theta in (0.3, 1.0, 3.0):
            data = model.data(model.release(rng.exponential(1.0 / theta, size=(1, 200_000)), epsilon=e, seed=rng))
            u = report_cdf(np.sort(np.asarray(data["z"])), theta, data["b"], data["beta"])
            ks = stats.kstest(u, "uniform")
            print(f"reports vs likelihood, epsilon {e:g}, theta {theta:g}: KS D {ks.statistic:.4f}, p {ks.pvalue:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
