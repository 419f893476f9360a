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

Part ``exponential_check`` of ``pystanprivacy reproduce kulkarni2022`` (:func:`reproduce_exponential_check`,
after part ``calibration``, whose table it reads from the same folder) writes
``kulkarni2022_exponential_check.csv`` (per run: the truth, Stan's and the quadrature's quantile) and
``kulkarni2022_exponential_check_summary.csv`` (the KS tests), with JSON sidecars. No Stan fit.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..._validation import check_random_state
from ...models.kulkarni2022 import ExponentialLDP
from ...run.runner import Task, part_folder, run_tasks, task_seeds, write_results
from ...run.study import Study
from .study import FULL, PAPER, QUICK

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


#: the study of this module's tasks: its name and version key their saved results (pystanprivacy.run.study)
STUDY = Study(name="kulkarni2022/exponential_check", version=1)
#: the folder (inside OUT) of the part's saved tasks
FOLDER = "exponential_check"
#: the runner's seed stream of the calibration's exponential tasks (whose draws are regenerated here)
CALIBRATION_STREAM = f"{PAPER}/calibration/exponential"


@STUDY.task()
def quadrature_task(
    *, epsilon: float, index: int, batches: int, root_seed: int, size: int, first_repeat: int, n_users: int, seed=None
) -> pd.DataFrame:
    """One batch of the calibration's exponential runs regenerated from its task seed (the
    ``index``-th of ``batches`` seeds of the calibration's stream under ``root_seed``, the same
    draws as ``calibration_task``): per run, the truth and the quadrature quantile of the truth
    (:func:`quadrature_quantile`). ``seed`` (this task's own) is not used: nothing here is random."""
    del seed
    rng = check_random_state(task_seeds(root_seed, batches, CALIBRATION_STREAM)[index])
    model = ExponentialLDP()
    theta = model.sample_prior(size, seed=rng)
    x = rng.exponential(1.0 / theta[:, None], size=(size, n_users))
    data = model.data(model.release(x, epsilon=epsilon, seed=rng))
    z = np.asarray(data["z"]).reshape(size, -1)
    return pd.DataFrame(
        {
            "epsilon": epsilon,
            "repeat": first_repeat + np.arange(size),
            "truth": theta,
            "q_quadrature": [
                quadrature_quantile(
                    z[r], theta[r], data["b"], data["beta"], data["theta_prior_shape"], data["theta_prior_rate"]
                )
                for r in range(size)
            ],
        }
    )


def quantiles(
    table: pd.DataFrame,
    seed: int,
    grid: Mapping[str, Any] = FULL["exponential"],
    *,
    workers: int = 1,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Regenerate the calibration's exponential runs (``table``: its table; ``seed``: its root
    seed; ``grid``: ``FULL["exponential"]`` or ``QUICK["exponential"]``), one
    :func:`quadrature_task` per batch, and put the quadrature quantile of the truth beside
    Stan's (``RuntimeError`` where a regenerated truth is not the table's). Only the saved tasks'
    rows under ``run_context(saved_only=True)``."""
    eps, repeats, batch, n_users = grid["epsilons"], grid["repeats"], grid["batch"], grid["n_users"]
    sizes = [min(batch, repeats - i) for i in range(0, repeats, batch)]
    tasks = [
        Task(
            quadrature_task,
            {
                "epsilon": eps[i // len(sizes)],
                "index": i,
                "batches": len(eps) * len(sizes),
                "root_seed": seed,
                "size": sizes[i % len(sizes)],
                "first_repeat": sum(sizes[: i % len(sizes)]),
                "n_users": n_users,
            },
            label=f"exponential check eps={eps[i // len(sizes)]} batch={i % len(sizes)}",
        )
        for i in range(len(eps) * len(sizes))
    ]
    quad = run_tasks(
        tasks,
        seed=seed,
        stream=f"{PAPER}/exponential_check",
        workers=workers,
        progress=progress,
        desc="K11 exponential check",
    )
    if quad.empty:
        return quad
    stan = table[table.model == "exponential"].set_index(["epsilon", "repeat"])
    got = quad.join(
        stan[["truth", "quantile"]].rename(columns={"truth": "truth_stan", "quantile": "q_stan"}),
        on=["epsilon", "repeat"],
    )
    bad = got[~np.isclose(got["truth"], got["truth_stan"])]
    if len(bad):
        raise RuntimeError(
            f"regenerated truths differ from the table's at (epsilon, repeat) {bad[['epsilon', 'repeat']].values[:3].tolist()}"
        )
    return got[["epsilon", "repeat", "truth", "q_stan", "q_quadrature"]].reset_index(drop=True)


@STUDY.task()
def model_checks_task(*, reports: int, check_seed: int, seed=None) -> pd.DataFrame:
    """:func:`model_checks` as a task (``seed``, this task's own, is not used: ``check_seed`` is)."""
    del seed
    return model_checks(reports=reports, seed=check_seed)


#: the KS checks of the reports against the model's likelihood: epsilons, thetas, reports per check
REPORT_CHECKS = {"epsilons": (1.0, 10.0), "thetas": (0.3, 1.0, 3.0), "reports": 200_000}
#: the seed of the reports and prior draws of those checks (reproducibility, not security)
CHECK_SEED = 11


def model_checks(*, reports: int = REPORT_CHECKS["reports"], seed: int = CHECK_SEED) -> pd.DataFrame:
    """KS tests that ``sample_prior`` draws the model's prior and that the release's reports follow
    the likelihood the model uses (:func:`report_cdf`), one row per check."""
    rng = np.random.default_rng(seed)
    model = ExponentialLDP()
    prior = stats.gamma(model.theta_prior_shape, scale=1.0 / model.theta_prior_rate)
    ks = stats.kstest(model.sample_prior(reports, seed=rng), prior.cdf)
    rows = [
        {
            "check": "sample_prior vs the model's prior",
            "epsilon": np.nan,
            "theta": np.nan,
            "ks_d": ks.statistic,
            "ks_p": ks.pvalue,
        }
    ]
    for e in REPORT_CHECKS["epsilons"]:
        for theta in REPORT_CHECKS["thetas"]:
            data = model.data(model.release(rng.exponential(1.0 / theta, size=(1, reports)), epsilon=e, seed=rng))
            u = report_cdf(np.sort(np.asarray(data["z"])), theta, data["b"], data["beta"])
            ks = stats.kstest(u, "uniform")
            rows.append(
                {
                    "check": "reports vs likelihood",
                    "epsilon": e,
                    "theta": theta,
                    "ks_d": ks.statistic,
                    "ks_p": ks.pvalue,
                }
            )
    return pd.DataFrame(rows)


def summarise_quantiles(q: pd.DataFrame) -> pd.DataFrame:
    """Per epsilon and pooled: runs, mean and largest |quadrature - Stan| quantile, and the KS
    p-values of both sets of quantiles against U(0, 1)."""
    rows = []
    for eps, g in [*q.groupby("epsilon"), (np.nan, q)]:
        diff = (g.q_quadrature - g.q_stan).abs()
        rows.append(
            {
                "epsilon": eps,
                "runs": len(g),
                "abs_diff_mean": diff.mean(),
                "abs_diff_max": diff.max(),
                "ks_p_quadrature": stats.kstest(g.q_quadrature, "uniform").pvalue,
                "ks_p_stan": stats.kstest(g.q_stan, "uniform").pvalue,
            }
        )
    return pd.DataFrame(rows)


def reproduce_exponential_check(
    out: str | Path, *, quick: bool = True, seed: int = 0, workers: int = 1, progress: bool = True
) -> dict[str, pd.DataFrame]:
    """Part ``exponential_check`` of ``pystanprivacy reproduce kulkarni2022`` (REPRODUCTION.md,
    K11): the two checks of this module (tasks: resumable) on part ``calibration``'s table in ``out`` (its runs
    regenerated from ``seed``, the part's). Writes ``kulkarni2022_exponential_check`` (per run)
    and ``..._summary`` (per epsilon and pooled, then the model checks) into ``out``; its tasks
    (one per calibration batch, and the model checks) in ``out/exponential_check/.tasks``."""
    out = Path(out)
    path = out / f"{PAPER}_calibration.csv"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: part 'calibration' of {PAPER} writes it (run it into the same --out first)"
        )
    grid = (QUICK if quick else FULL)["exponential"]
    start = time.perf_counter()
    with part_folder(FOLDER):
        q = quantiles(pd.read_csv(path), seed, grid, workers=workers, progress=progress)
        checks = run_tasks(
            [
                Task(
                    model_checks_task,
                    {"reports": REPORT_CHECKS["reports"], "check_seed": CHECK_SEED},
                    label="model checks",
                )
            ],
            seed=seed,
            stream=f"{PAPER}/exponential_check/model",
            progress=False,
        )
    if q.empty or checks.empty:  # not saved yet (a read-back under saved_only)
        return {}
    summary = pd.concat([summarise_quantiles(q), checks], ignore_index=True)
    meta = {
        "seed": seed,
        "quick": quick,
        "exponential": dict(grid),
        "nodes": len(NODES),
        "report_checks": {k: list(v) if isinstance(v, tuple) else v for k, v in REPORT_CHECKS.items()},
        "check_seed": CHECK_SEED,
        "calibration_table": path.name,
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{PAPER}_exponential_check", q, meta)
    write_results(out, f"{PAPER}_exponential_check_summary", summary, meta)
    return {"exponential_check": q, "exponential_check_summary": summary}


__all__ = [
    "STUDY",
    "log_posterior",
    "model_checks_task",
    "quadrature_task",
    "model_checks",
    "quadrature_quantile",
    "quantiles",
    "report_cdf",
    "reproduce_exponential_check",
    "summarise_quantiles",
]
