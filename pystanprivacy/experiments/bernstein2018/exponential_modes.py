"""The modes of Bernstein & Sheldon's (2018) truncated-exponential posterior, and which sampler
finds them (REPRODUCTION.md B1a): part ``exponential_modes`` of ``pystanprivacy reproduce
bernstein2018``.

The noise-aware posterior of the exponential rate θ given the Laplace release y of the truncated
sum ŝ = Σ x_i 1[a ≤ x_i ≤ b] (prior Gamma(8, 2); ŝ | θ ~ N(m, V) by the random-sum CLT, Prop. 1
and Lemma 1; y | ŝ ~ Laplace(ŝ, scale)) is computed on a fine θ grid by numerical integration,
independently of the Stan program and of the library's numpy twin
(:meth:`~pystanprivacy.models.bernstein2018.ExponentialGamma.log_posterior`): m = n E[x 1[a ≤ x ≤ b]]
and V = n Var(x 1[a ≤ x ≤ b]) in closed form per record (:func:`truncated_record_moments`), the
normal-Laplace convolution by adaptive quadrature (:func:`log_normal_laplace_quad`) at every grid
point. E[ŝ | θ] rises and then falls in θ, so one release can be explained by a small and by a
large rate: the grid gives the modes, the mass on each side of the density minimum between them,
the mean and the sd (:func:`density_modes`).

Against that grid, per data set: the library's Stan fit (``ExponentialGamma.fit``, 4 chains),
the library's numpy Gibbs sampler (:func:`~pystanprivacy.experiments.bernstein2018.baselines.gibbs_posterior`,
4 chains of the paper's 2000 + 5000 iterations) and, where the grid has a second mode, the same
Gibbs update with all 4 chains started in that mode (5000 iterations, no burn-in: a chain that
leaves the mode and does not come back tells a different stationary distribution from slow
mixing). For each: mean, sd, the share of draws on the minor mode's side of the split (pooled
and per chain), split R-hat and bulk ESS, and the KS and Wasserstein-1 distances of the draws to
the grid CDF (:func:`ks_w1`).

Problems:

* ``driver`` (:func:`driver_task`): the authors' driver (their ``Unbounded_Suff_Stats/driver.py``):
  n = 1000, ε = 0.1, θ ~ Gamma(8, 2), x ~ Exp(θ), truncation bounds at the 2.5 % and 97.5 %
  quantiles of Exp(θ) (their code uses the true θ), noise Laplace((b − a)/ε) (their sensitivity
  b − a), drawn as their ``generate_noisy_sufficient_statistics`` draws it after
  ``np.random.seed(seed)`` (:func:`authors_driver_data`); the library models it as
  ``ExponentialGamma(bounds=(a, b))`` with a release at ε' = ε b/(b − a), which has the same Laplace
  scale (b − a)/ε.
* the calibration check at a driver problem's bounds held fixed (:func:`calibration_task`: the
  paper's Sec. 4 check, Cook et al.): θ_i ~ Gamma(8, 2), n records, y_i = ŝ_i + Laplace((b − a)/ε);
  the posterior quantile of θ_i under the grid (its exact CDF), the Stan fit and the library's
  Gibbs sampler (randomised ranks); the KS statistic of each against Uniform(0, 1). (The driver
  itself sets the bounds from the true θ, which makes a calibration check of it degenerate.)
* ``figure1a`` (:func:`figure1a_task`): the exponential column of Figure 1a as the calibration
  study runs it (:mod:`.study`): default bounds, n ∈ {10, 100, 1000, 10⁴}, ε ∈ {0.01, 0.1}, data by
  :func:`.study.simulate`. Per setting ``pool`` data sets are drawn; the first ``datasets`` of
  them are studied, plus up to ``datasets`` of the rest whose library grid
  (``ExponentialGamma.start_values``) puts more than 1 % of the mass in a second mode.

The part also reads the calibration study's own saved trials (part ``calibration``, the run's
task folder ``OUT/.tasks``): per exponential setting, the trials whose posterior has more than
1 % in a second mode (``other_mode_mass``) and the KS statistic of the Stan and Gibbs quantiles
with and without them (:func:`calibration_trials_by_mode`).

The authors' own Gibbs code (``Unbounded_Suff_Stats``, MIT, needs autograd) is not shipped with
the library, so it is not run here: the table has no ``authors' Gibbs`` rows and its sidecar says
so (``authors``).

:func:`reproduce_exponential_modes` writes ``bernstein2018_exponential_modes.csv`` (one row per data set and
method: ``grid``, ``Stan``, ``library Gibbs``, ``library Gibbs from minor mode``), its JSON sidecar
(the settings; ``extra``: the calibration check ``calibration_fixed_bounds``, the Figure 1a pools,
the calibration study's trials by mode) and ``bernstein2018_exponential_modes.png`` (the driver problems: grid
density and each sampler's histogram); its tasks are saved in ``OUT/exponential_modes/.tasks``.
Seeds: the driver problems' are the authors' seeds (0-3); the rest derive from the run's seed as
written at each task (reproducibility, not security).

References
----------
.. [1] G. Bernstein and D. Sheldon (2018), "Differentially Private Bayesian Inference for
   Exponential Families", NeurIPS. Sec. 3.3 (Prop. 1, Lemma 1, Algorithms 2-3), Sec. 4.
.. [2] S. R. Cook, A. Gelman and D. B. Rubin (2006), "Validation of Software for Bayesian Models
   Using Posterior Quantiles", JCGS 15(3).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import integrate, stats

from ...models.base import posterior_from_draws
from ...models.bernstein2018 import ExponentialGamma
from ...run.runner import Task, current_context, part_folder, run_tasks, saved_results, write_results
from ...run.study import Study
from ...sampling.evaluate import ks_critical_value, posterior_quantile
from .baselines import _gibbs_exponential, gibbs_posterior
from .study import PAPER, make_model, simulate

#: the study of this module's tasks: its name and version key their saved results (pystanprivacy.run.study)
STUDY = Study(name="bernstein2018/exponential_modes", version=1)
#: the folder (inside OUT) of the part's saved tasks
FOLDER = "exponential_modes"
#: the name of its table, sidecar and figure (``OUT/<NAME>.{csv,json,png}``)
NAME = f"{PAPER}_exponential_modes"
#: Gamma(shape, rate) prior of θ: the paper's experiments and the authors' code
PRIOR = (8.0, 2.0)
#: the authors' driver problem
DRIVER = {"n": 1000, "epsilon": 0.1}
#: a local maximum is a separate mode when its log density is this far above the deepest valley
#: between it and the global mode (a shoulder otherwise)
MODE_RISE = 1.0
#: grid points of the figure's density curve (every ``k``-th point of the grid)
CURVE_POINTS = 401
#: bins of the figure's histograms
BINS = 80

#: the sizes of the two modes: driver seeds (the authors' ``np.random.seed``), the calibration
#: check's trials, Figure 1a's data sets per setting and pool, the samplers' lengths (Stan: 4
#: chains of the calibration study's full length; Gibbs: the paper's chain length) and grid points
FULL: dict[str, Any] = {
    "driver_seeds": (0, 1, 2, 3),
    "calibration_trials": 200,
    "ns": (10, 100, 1000, 10000),
    "epsilons": (0.01, 0.1),
    "datasets": 3,
    "pool": 200,
    "stan": {"chains": 4, "warmup": 500, "draws": 500},
    "gibbs": {"chains": 4, "burnin": 2000, "iterations": 5000},
    "gridsize": 2001,
}
QUICK: dict[str, Any] = {
    "driver_seeds": (0, 1),
    "calibration_trials": 50,
    "ns": (100, 10000),
    "epsilons": (0.1,),
    "datasets": 1,
    "pool": 50,
    "stan": {"chains": 4, "warmup": 200, "draws": 200},
    "gibbs": {"chains": 4, "burnin": 500, "iterations": 1000},
    "gridsize": 801,
}

COLUMNS = [
    "problem",
    "seed",
    "dataset",
    "n",
    "epsilon",
    "lower",
    "upper",
    "scale",
    "theta_true",
    "method",
    "draws",
    "modes",
    "mode_major",
    "mode_minor",
    "split",
    "minor_mass",
    "minor_share_chain_min",
    "minor_share_chain_max",
    "mean",
    "sd",
    "rhat",
    "ess_bulk",
    "ks",
    "w1",
    "seconds",
    "twin_max_dlogp",
]
#: the integer columns of the table (``modes``: the grid rows' only)
_INTEGERS = {"seed": int, "dataset": int, "n": int, "draws": int, "modes": "Int64"}
#: the Stan program every task with a Stan fit runs
PROGRAMS = ("bernstein2018/exponential_gamma",)


# ------------------------------------------------------------------------------ the exact grid
def truncated_record_moments(theta: Any, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """E[t] and Var[t] of one record's contribution t = x 1[a ≤ x ≤ b], x ~ Exp(θ).

    E[t] = e^(−θa)(a + 1/θ) − e^(−θb)(b + 1/θ) and E[t²] = e^(−θa)(a² + 2a/θ + 2/θ²) −
    e^(−θb)(b² + 2b/θ + 2/θ²) (integration by parts). The random-sum CLT of Prop. 1 [1]_ is the
    plain CLT of this statistic: m = n E[t], V = n Var[t].
    """
    theta = np.asarray(theta, dtype=float)
    ea, eb = np.exp(-theta * a), np.exp(-theta * b)
    m1 = ea * (a + 1 / theta) - eb * (b + 1 / theta)
    m2 = ea * (a * a + 2 * a / theta + 2 / theta**2) - eb * (b * b + 2 * b / theta + 2 / theta**2)
    return m1, m2 - m1 * m1


def log_normal_laplace_quad(y: float, m: float, v: float, scale: float) -> float:
    """log ∫ N(s; m, v) Laplace(y; s, scale) ds by adaptive quadrature (``scipy.integrate.quad``).

    The integrand is divided by its maximum (at s0, in closed form for the concave log integrand)
    and integrated over s0 ± 40 sd with the kink at s = y (and y ± 3, 30 scales) as break points,
    so that a Laplace much narrower than the normal is resolved.
    """
    sd = math.sqrt(v)
    if m - v / scale > y:
        s0 = m - v / scale
    elif m + v / scale < y:
        s0 = m + v / scale
    else:
        s0 = y

    def log_f(s: float) -> float:
        return -0.5 * (s - m) ** 2 / v - abs(y - s) / scale

    top = log_f(s0)
    lo, hi = s0 - 40 * sd, s0 + 40 * sd
    points = [p for p in (y + k * scale for k in (-30, -3, 0, 3, 30)) if lo < p < hi] or None
    val, _ = integrate.quad(
        lambda s: math.exp(log_f(s) - top), lo, hi, points=points, limit=400, epsabs=0.0, epsrel=1e-10
    )
    return top + math.log(val) - 0.5 * math.log(2 * math.pi * v) - math.log(2 * scale)


def grid_log_posterior(
    theta: Any, *, y: float, n: int, bounds: tuple[float, float], scale: float, prior: tuple[float, float] = PRIOR
) -> np.ndarray:
    """Unnormalised log p(θ | y) at every θ of ``theta``: the Gamma prior plus the quadrature
    likelihood of the RS-CLT normal convolved with the Laplace noise."""
    theta = np.asarray(theta, dtype=float)
    m1, var1 = truncated_record_moments(theta, *bounds)
    loglik = np.array([log_normal_laplace_quad(y, n * mu, n * v, scale) for mu, v in zip(m1, var1)])
    return stats.gamma.logpdf(theta, prior[0], scale=1 / prior[1]) + loglik


def grid_posterior(
    *,
    y: float,
    n: int,
    bounds: tuple[float, float],
    scale: float,
    size: int = 2001,
    prior: tuple[float, float] = PRIOR,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The posterior density of θ on a fine grid.

    A log-spaced pass over the prior's [1e-12, 1 − 1e-12] quantiles finds where the posterior
    lives (density above 1e-14 of its maximum); a linear grid of ``size`` points covers that
    range. Returns ``(theta, density, cdf)``, normalised by the trapezoid rule.
    """
    lo = stats.gamma.ppf(1e-12, prior[0], scale=1 / prior[1])
    hi = stats.gamma.isf(1e-12, prior[0], scale=1 / prior[1])
    coarse = np.exp(np.linspace(math.log(lo), math.log(hi), 801))
    lp = grid_log_posterior(coarse, y=y, n=n, bounds=bounds, scale=scale, prior=prior)
    keep = np.flatnonzero(lp > lp.max() - math.log(1e14))
    left, right = coarse[max(keep[0] - 1, 0)], coarse[min(keep[-1] + 1, coarse.size - 1)]
    theta = np.linspace(left, right, size)
    lp = grid_log_posterior(theta, y=y, n=n, bounds=bounds, scale=scale, prior=prior)
    dens = np.exp(lp - lp.max())
    cdf = integrate.cumulative_trapezoid(dens, theta, initial=0.0)
    return theta, dens / cdf[-1], cdf / cdf[-1]


def density_modes(theta: Any, dens: Any, *, rise: float = MODE_RISE) -> dict[str, Any]:
    """Modes of a gridded density and the mass on each side of the split.

    The global maximum is the major mode. Another local maximum counts as a mode when its log
    density rises at least ``rise`` above the deepest valley between it and the major mode; the
    most massive such mode is the minor mode, and the split is the density minimum between the
    two. Returns ``modes`` (count), ``mode_major``, ``mode_minor``, ``split`` (NaN when
    unimodal), ``minor_mass`` (mass on the minor mode's side of the split, 0 when unimodal),
    ``minor_side`` (−1 below, +1 above, 0), ``mean`` and ``sd``.
    """
    theta, dens = np.asarray(theta, dtype=float), np.asarray(dens, dtype=float)
    with np.errstate(divide="ignore"):
        logd = np.log(dens)
    top = int(np.argmax(dens))
    inner = logd[1:-1]
    peaks = np.flatnonzero((inner > logd[:-2]) & (inner >= logd[2:])) + 1
    cdf = integrate.cumulative_trapezoid(dens, theta, initial=0.0)
    total = cdf[-1]
    found = []
    for j in peaks:
        if j == top:
            continue
        span = slice(min(j, top), max(j, top) + 1)
        valley = span.start + int(np.argmin(logd[span]))
        if logd[j] - logd[valley] >= rise:
            side = -1 if j < top else 1
            mass = cdf[valley] / total if side < 0 else 1.0 - cdf[valley] / total
            found.append((mass, j, valley, side))
    mean = float(integrate.trapezoid(theta * dens, theta) / total)
    sd = float(math.sqrt(max(integrate.trapezoid((theta - mean) ** 2 * dens, theta) / total, 0.0)))
    out = {
        "modes": 1 + len(found),
        "mode_major": float(theta[top]),
        "mode_minor": math.nan,
        "split": math.nan,
        "minor_mass": 0.0,
        "minor_side": 0,
        "mean": mean,
        "sd": sd,
    }
    if found:
        mass, j, valley, side = max(found)
        out.update(mode_minor=float(theta[j]), split=float(theta[valley]), minor_mass=float(mass), minor_side=side)
    return out


def ks_w1(draws: Any, theta: Any, cdf: Any) -> tuple[float, float]:
    """Kolmogorov-Smirnov (sup |F_draws − F|) and Wasserstein-1 (∫ |F_draws − F| dθ) distances of
    ``draws`` to the gridded CDF ``cdf`` at ``theta`` (linear between grid points)."""
    x = np.sort(np.asarray(draws, dtype=float).reshape(-1))
    k = x.size
    f = np.interp(x, theta, cdf, left=0.0, right=1.0)
    i = np.arange(1, k + 1)
    ks = float(max(np.max(i / k - f), np.max(f - (i - 1) / k)))
    emp = np.searchsorted(x, theta, side="right") / k
    w1 = float(integrate.trapezoid(np.abs(emp - cdf), theta))
    w1 += float(np.sum(np.clip(theta[0] - x, 0, None)) + np.sum(np.clip(x - theta[-1], 0, None))) / k
    return ks, w1


# ---------------------------------------------------------------------------------- data sets
def authors_driver_data(seed: int, *, n: int = DRIVER["n"], epsilon: float = DRIVER["epsilon"]) -> dict[str, Any]:
    """The authors' ``generate_noisy_sufficient_statistics`` for their driver: the same calls, in
    the same order, on ``RandomState(seed)`` (their global ``np.random`` after
    ``np.random.seed(seed)``): θ from the prior, n records, bounds at Exp(θ)'s 2.5 % and 97.5 %
    quantiles, the inside sum (a < x < b) plus Laplace((b − a)/ε) noise."""
    rs = np.random.RandomState(seed)
    theta = float(stats.gamma.rvs(PRIOR[0], scale=1.0 / PRIOR[1], size=1, random_state=rs)[0])
    x = stats.expon.rvs(scale=1.0 / theta, size=int(n), random_state=rs)
    a, b = float(stats.expon.ppf(0.025, scale=1 / theta)), float(stats.expon.ppf(0.975, scale=1 / theta))
    scale = (b - a) / epsilon
    s_hat = float(x[(a < x) & (x < b)].sum())
    y = s_hat + float(rs.laplace(scale=scale, size=(1, 1))[0, 0])
    return {"theta": theta, "bounds": (a, b), "scale": scale, "y": y, "s_hat": s_hat, "full_sum": float(x.sum())}


def _driver_model(seed: int) -> tuple[ExponentialGamma, Any, dict[str, Any]]:
    """The library's model and release of driver problem ``seed`` (scale (b − a)/ε)."""
    data = authors_driver_data(seed)
    a, b = data["bounds"]
    model = ExponentialGamma(bounds=(a, b), prior_shape=PRIOR[0], prior_rate=PRIOR[1])
    release = model.published(np.array([data["y"]]), n=DRIVER["n"], epsilon=DRIVER["epsilon"] * b / (b - a))
    return model, release, data


# ------------------------------------------------------------------------------------ samplers
def _diagnostics(draws: np.ndarray) -> tuple[float, float]:
    """Split R-hat and bulk ESS of draws (chains, iterations), by the library's own functions."""
    post = posterior_from_draws({"theta": draws[:, :, None]}, model="draws", backend="numpy", seed=None)
    return float(np.asarray(post.rhat()["theta"])[0]), float(np.asarray(post.ess_bulk()["theta"])[0])


def _stan_draws(model: ExponentialGamma, release: Any, seed: int, stan: Mapping[str, int]) -> tuple:
    """The library's Stan fit (default init: every chain at the global mode of its data set):
    draws (chains, draws, R), R-hat (R,), bulk ESS (R,), seconds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the fit's own second-mode warning
        t = time.perf_counter()
        post = model.fit(release, seed=seed, **dict(stan))
        seconds = time.perf_counter() - t
    draws = np.asarray(post.draws("theta", combine_chains=False))
    return draws, np.asarray(post.rhat()["theta"]), np.asarray(post.ess_bulk()["theta"]), seconds


def _gibbs_draws(model: ExponentialGamma, release: Any, seed: int, gibbs: Mapping[str, int]) -> tuple:
    """The library's numpy Gibbs sampler: draws (chains, iterations, R), R-hat, bulk ESS, seconds."""
    t = time.perf_counter()
    post = gibbs_posterior(model, release, seed=seed, **dict(gibbs))
    seconds = time.perf_counter() - t
    draws = np.asarray(post.draws("theta", combine_chains=False))
    return draws, np.asarray(post.rhat()["theta"]), np.asarray(post.ess_bulk()["theta"]), seconds


def _gibbs_from(
    model: ExponentialGamma, release: Any, r: int, theta0: np.ndarray, seed: int, iterations: int
) -> np.ndarray:
    """The library's Gibbs update for data set ``r`` with the chains started at ``theta0``
    (chains, 1) and no burn-in: draws (chains, iterations)."""
    values, n, scale, _ = model.check_release(release)
    rng = np.random.default_rng(seed)
    out = _gibbs_exponential(
        values[r : r + 1, 0], n, scale, model.bounds, model.prior_shape, model.prior_rate,
        iterations, 0, theta0.shape[0], 1, rng, theta0,
    )  # fmt: skip
    return out[:, :, 0]


def _sampler_row(
    draws: np.ndarray,
    grid: Mapping[str, np.ndarray],
    summary: Mapping[str, Any],
    rhat: float,
    ess: float,
    seconds: float,
) -> dict[str, Any]:
    """Summaries of ``draws`` (chains, iterations) against the grid."""
    flat = draws.reshape(-1)
    row = {
        "draws": flat.size,
        "mean": float(flat.mean()),
        "sd": float(flat.std(ddof=1)),
        "rhat": rhat,
        "ess_bulk": ess,
        "seconds": seconds,
    }
    row["ks"], row["w1"] = ks_w1(flat, grid["theta"], grid["cdf"])
    side, split = summary["minor_side"], summary["split"]
    if side:
        by_chain = np.mean(draws < split, axis=1) if side < 0 else np.mean(draws > split, axis=1)
        pooled = float(np.mean(flat < split) if side < 0 else np.mean(flat > split))
        row.update(
            minor_mass=pooled, minor_share_chain_min=float(by_chain.min()), minor_share_chain_max=float(by_chain.max())
        )
    return row


def _curves(seed: int, grid: Mapping[str, np.ndarray], summary: Mapping[str, Any], samples: Mapping[str, np.ndarray]):
    """The figure's panel of one data set: the grid density (``CURVE_POINTS`` of its points) and
    each sampler's density histogram on ``BINS`` bins over the range of the grid and every draw,
    with the sampler's share of draws on the minor mode's side (NaN when unimodal)."""
    step = max(1, (grid["theta"].size - 1) // (CURVE_POINTS - 1))
    rows = [
        {"kind": "curve", "seed": seed, "method": "grid", "x": x, "density": d, "minor_share": summary["minor_mass"]}
        for x, d in zip(grid["theta"][::step], grid["dens"][::step])
    ]
    lo = min(grid["theta"][0], *(d.min() for d in samples.values()))
    hi = max(grid["theta"][-1], *(d.max() for d in samples.values()))
    edges = np.linspace(lo, hi, BINS)
    side, split = summary["minor_side"], summary["split"]
    for name, d in samples.items():
        share = (np.mean(d < split) if side < 0 else np.mean(d > split)) if side else math.nan
        density, _ = np.histogram(d.reshape(-1), bins=edges, density=True)
        rows += [
            {"kind": "curve", "seed": seed, "method": name, "x": x, "density": float(h), "minor_share": share}
            for x, h in zip(edges[:-1], density)
        ]
        rows.append(
            {"kind": "curve", "seed": seed, "method": name, "x": edges[-1], "density": 0.0, "minor_share": share}
        )
    return rows


def _study(
    problem: str,
    model: ExponentialGamma,
    release: Any,
    per: Sequence[Mapping[str, Any]],
    seed: int,
    *,
    epsilon: float,
    stan: Mapping[str, int],
    gibbs: Mapping[str, int],
    gridsize: int,
    curves: bool = False,
) -> list[dict[str, Any]]:
    """Grid, Stan, library Gibbs (and Gibbs from the minor mode) rows for the R data sets of
    ``release`` (``per``: each one's ``dataset`` and ``theta_true``); Stan runs with ``seed``,
    Gibbs with ``seed + 1``, the minor-mode Gibbs of data set r with ``seed + 2 + r``. With
    ``curves``, the figure's rows (:func:`_curves`) follow."""
    values, n, scale, _ = model.check_release(release)
    ys = values[:, 0]
    rows, figure = [], []
    stan_d, s_rhat, s_ess, s_sec = _stan_draws(model, release, seed, stan)
    gibbs_d, g_rhat, g_ess, g_sec = _gibbs_draws(model, release, seed + 1, gibbs)
    for r, y in enumerate(ys):
        t = time.perf_counter()
        theta, dens, cdf = grid_posterior(y=float(y), n=n, bounds=model.bounds, scale=scale, size=gridsize)
        grid_sec = time.perf_counter() - t
        grid = {"theta": theta, "dens": dens, "cdf": cdf}
        summary = density_modes(theta, dens)
        # the library's numpy twin of the Stan model, against the grid (an independent cross-check)
        twin_release = model.published(np.array([y]), n=n, epsilon=float(release.record.epsilon))
        lib = model.log_posterior(theta, twin_release)[0]
        ok = dens > 1e-8 * dens.max()
        lib_dens = np.exp(lib - lib.max())
        lib_dens /= integrate.trapezoid(lib_dens, theta)
        twin_diff = float(np.max(np.abs(np.log(lib_dens[ok]) - np.log(dens[ok]))))
        base = {
            "problem": problem,
            "seed": seed,
            "n": n,
            "epsilon": epsilon,
            "lower": model.bounds[0],
            "upper": model.bounds[1],
            "scale": scale,
            **per[r],
        }
        keys = ("modes", "mode_major", "mode_minor", "split", "minor_mass", "mean", "sd")
        rows.append(
            {
                **base,
                "method": "grid",
                "draws": theta.size,
                "seconds": grid_sec,
                "twin_max_dlogp": twin_diff,
                **{k: summary[k] for k in keys},
            }
        )
        for name, d, rh, es, sec in (
            ("Stan", stan_d[:, :, r], s_rhat[r], s_ess[r], s_sec),
            ("library Gibbs", gibbs_d[:, :, r], g_rhat[r], g_ess[r], g_sec),
        ):
            rows.append({**base, "method": name, **_sampler_row(d, grid, summary, float(rh), float(es), sec / len(ys))})
        if summary["minor_side"]:
            t = time.perf_counter()
            start = np.full((int(gibbs["chains"]), 1), summary["mode_minor"])
            minor = _gibbs_from(model, release, r, start, seed + 2 + r, int(gibbs["iterations"]))
            rhat, ess = _diagnostics(minor)
            seconds = time.perf_counter() - t
            rows.append(
                {
                    **base,
                    "method": "library Gibbs from minor mode",
                    **_sampler_row(minor, grid, summary, rhat, ess, seconds),
                }
            )
        if curves:
            figure += _curves(seed, grid, summary, {"Stan": stan_d[:, :, r], "library Gibbs": gibbs_d[:, :, r]})
    table = pd.DataFrame(rows, columns=COLUMNS)
    table.insert(0, "kind", "row")
    return pd.concat([table, pd.DataFrame(figure)], ignore_index=True) if figure else table


# --------------------------------------------------------------------------------------- tasks
@STUDY.task(programs=PROGRAMS)
def driver_task(
    *, driver_seed: int, stan: Mapping[str, int], gibbs: Mapping[str, int], gridsize: int, seed: Any = None
) -> pd.DataFrame:
    """The authors' driver problem ``driver_seed`` (:func:`authors_driver_data`): the grid, Stan
    (seed ``driver_seed``), the library's Gibbs (``driver_seed + 1``) and, with a second mode,
    Gibbs from that mode (``driver_seed + 2``). Rows of kind ``row`` (the table's :data:`COLUMNS`)
    then ``curve`` (the figure's panel). ``seed`` (this task's own) is not used: the authors'."""
    del seed
    model, release, data = _driver_model(driver_seed)
    per = [{"dataset": 0, "theta_true": data["theta"]}]
    return _study(
        "driver", model, release, per, driver_seed, epsilon=DRIVER["epsilon"], stan=stan, gibbs=gibbs,
        gridsize=gridsize, curves=True,
    )  # fmt: skip


@STUDY.task(programs=PROGRAMS)
def calibration_task(
    *,
    trials: int,
    driver_seed: int,
    calibration_seed: int,
    stan: Mapping[str, int],
    gibbs: Mapping[str, int],
    gridsize: int,
    seed: Any = None,
) -> pd.DataFrame:
    """Calibration at the driver's n, ε and noise scale with the bounds of driver problem
    ``driver_seed`` held fixed (public): θ_i ~ Gamma(8, 2) and the data from
    ``default_rng([calibration_seed, 99])``, Stan with seed ``calibration_seed + 7``, Gibbs with
    ``calibration_seed + 8``. One row per trial: θ_i, y_i, its posterior quantile under the grid
    (exact CDF), Stan and Gibbs (randomised ranks), the grid's minor-mode mass and Stan's R-hat.
    ``seed`` (this task's own) is not used."""
    del seed
    n, eps = DRIVER["n"], DRIVER["epsilon"]
    a, b = authors_driver_data(driver_seed)["bounds"]
    scale = (b - a) / eps
    rng = np.random.default_rng([calibration_seed, 99])
    theta = rng.gamma(PRIOR[0], 1 / PRIOR[1], size=trials)
    x = rng.exponential(1 / theta[:, None], size=(trials, n))
    y = np.where((x >= a) & (x <= b), x, 0.0).sum(axis=1) + rng.laplace(scale=scale, size=trials)
    model = ExponentialGamma(bounds=(a, b), prior_shape=PRIOR[0], prior_rate=PRIOR[1])
    release = model.published(y[:, None], n=n, epsilon=eps * b / (b - a))
    stan_d, s_rhat, _, s_sec = _stan_draws(model, release, calibration_seed + 7, stan)
    gibbs_d, _, _, g_sec = _gibbs_draws(model, release, calibration_seed + 8, gibbs)
    u_grid, minor = np.empty(trials), np.empty(trials)
    for i in range(trials):
        th, dens, cdf = grid_posterior(y=float(y[i]), n=n, bounds=(a, b), scale=scale, size=gridsize)
        u_grid[i] = np.interp(theta[i], th, cdf, left=0.0, right=1.0)
        minor[i] = density_modes(th, dens)["minor_mass"]
    u_stan = posterior_quantile(stan_d.reshape(-1, trials).T, theta, seed=rng)
    u_gibbs = posterior_quantile(gibbs_d.reshape(-1, trials).T, theta, seed=rng)
    return pd.DataFrame(
        {
            "trial": np.arange(trials),
            "theta": theta,
            "y": y,
            "u_grid": u_grid,
            "u_stan": u_stan,
            "u_gibbs": u_gibbs,
            "minor_mass": minor,
            "stan_rhat": s_rhat,
            "stan_seconds": s_sec,
            "gibbs_seconds": g_sec,
        }
    )


@STUDY.task(programs=PROGRAMS)
def figure1a_task(
    *,
    setting: int,
    n: int,
    epsilon: float,
    datasets: int,
    pool: int,
    data_seed: int,
    stan: Mapping[str, int],
    gibbs: Mapping[str, int],
    gridsize: int,
    seed: Any = None,
) -> pd.DataFrame:
    """Figure 1a's exponential setting number ``setting`` (n, ε): ``pool`` data sets by
    :func:`.study.simulate` from ``default_rng([data_seed, setting])`` and released at ε; the first
    ``datasets`` studied, plus up to ``datasets`` later ones whose library grid puts more than 1 %
    in a second mode; Stan with seed ``100 data_seed + setting``. The table's rows, with the
    pool's share of such data sets (``pool_share``). ``seed`` (this task's own) is not used."""
    del seed
    rng = np.random.default_rng([data_seed, setting])
    model = make_model("exponential")
    data = simulate("exponential", n, pool, rng)
    release = model.release_statistics(data["stats"], n=n, epsilon=epsilon, seed=rng)
    _, other = model.start_values(release, chains=1, seed=0)
    bimodal = np.flatnonzero(other > 0.01)
    chosen = np.array(list(range(datasets)) + [int(i) for i in bimodal if i >= datasets][:datasets])
    sub = model.published(np.asarray(release.values)[chosen, 0][:, None], n=n, epsilon=epsilon)
    per = [{"dataset": int(i), "theta_true": float(data["theta"][i])} for i in chosen]
    table = _study(
        "figure1a", model, sub, per, data_seed * 100 + setting, epsilon=epsilon, stan=stan, gibbs=gibbs,
        gridsize=gridsize,
    )  # fmt: skip
    table["pool_share"] = float(np.mean(other > 0.01))
    return table


# ----------------------------------------------------------------------------------- summaries
def summarise_calibration(per_trial: pd.DataFrame, *, driver_seed: int, seed: int) -> dict[str, Any]:
    """The calibration check's statistics (:func:`calibration_task`'s rows): per method (``grid``,
    ``Stan``, ``library Gibbs``) the KS statistic of the quantiles against Uniform(0, 1) and its
    p-value, and over the trials with more than 1 % in a second mode the KS statistic and the share
    of quantiles in the outer 10 %; the 1 % critical value, the share of such trials, Stan's share
    of R-hat > 1.01."""
    a, b = authors_driver_data(driver_seed)["bounds"]
    trials = len(per_trial)
    minor = per_trial["minor_mass"].to_numpy(dtype=float)
    out: dict[str, Any] = {
        "driver_seed": driver_seed,
        "bounds": [a, b],
        "scale": (b - a) / DRIVER["epsilon"],
        "n": DRIVER["n"],
        "epsilon": DRIVER["epsilon"],
        "trials": trials,
        "seed": seed,
        "ks_critical_1pct": ks_critical_value(trials, 0.01),
        "share_minor_above_1pct": float(np.mean(minor > 0.01)),
        "mean_minor_mass": float(minor.mean()),
        "stan_rhat_above_1_01": float(np.mean(per_trial["stan_rhat"] > 1.01)),
        "stan_seconds": float(per_trial["stan_seconds"].iloc[0]),
        "gibbs_seconds": float(per_trial["gibbs_seconds"].iloc[0]),
    }
    bim = minor > 0.01
    for name, column in (("grid", "u_grid"), ("Stan", "u_stan"), ("library Gibbs", "u_gibbs")):
        values = per_trial[column].to_numpy(dtype=float)
        res = stats.kstest(values, "uniform")
        out[name] = {
            "ks": float(res.statistic),
            "pvalue": float(res.pvalue),
            "ks_bimodal_trials": float(stats.kstest(values[bim], "uniform").statistic) if bim.sum() > 1 else None,
            "tails_bimodal_trials": float(np.mean((values[bim] < 0.05) | (values[bim] > 0.95))) if bim.any() else None,
        }
    return out


def calibration_trials_by_mode(tasks: str | os.PathLike) -> list[dict[str, Any]]:
    """Per exponential setting of the calibration study's saved trials in ``tasks`` (part
    ``calibration``'s task folder): the trials with more than 1 % of the posterior in a second mode
    (the Stan rows' ``other_mode_mass``), and the KS statistic of the Stan and Gibbs quantiles over
    all trials and over the others. Empty when the folder holds none."""
    tasks = Path(tasks)
    if not tasks.is_dir():
        return []
    table = saved_results(tasks, label_prefix="exponential")
    if table.empty:
        return []
    out = []
    for (n, eps), df in table.groupby(["n", "epsilon"], sort=True):
        stan = df[df.method == "noise-aware (Stan)"].set_index("trial")
        bimodal = stan.index[stan.other_mode_mass > 0.01]
        row = {
            "n": int(n),
            "epsilon": float(eps),
            "trials": int(stan.shape[0]),
            "bimodal": int(bimodal.size),
            "max_other_mass": float(stan.other_mode_mass.max()),
        }
        for method, tag in (("noise-aware (Stan)", "stan"), ("noise-aware (Gibbs)", "gibbs")):
            u = df[df.method == method].set_index("trial").u
            row[f"ks_{tag}_all"] = float(stats.kstest(u, "uniform").statistic)
            row[f"ks_{tag}_unimodal"] = float(stats.kstest(u.drop(bimodal), "uniform").statistic)
            if bimodal.size:
                row[f"u_{tag}_bimodal_tails"] = float(np.mean((u[bimodal] < 0.05) | (u[bimodal] > 0.95)))
        out.append(row)
    return out


def figure(table: pd.DataFrame, curves: pd.DataFrame, path: str | os.PathLike) -> None:
    """One panel per driver problem: the grid density, each sampler's histogram (with its share
    of draws in the minor mode), the true θ (dashed) and the split (dotted)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grids = table[(table["problem"] == "driver") & (table["method"] == "grid")].set_index("seed")
    k = len(grids)
    cols = min(k, 2)
    nrows = math.ceil(k / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 3.6 * nrows), squeeze=False)
    colours = {"Stan": "C0", "library Gibbs": "C1"}
    for ax, (seed, g) in zip(axes.flat, grids.iterrows()):
        mine = curves[curves["seed"] == seed]
        bimodal = g["minor_mass"] > 0
        for name, colour in colours.items():
            c = mine[mine["method"] == name]
            label = f"{name} ({c['minor_share'].iloc[0]:.0%} minor)" if bimodal else name
            ax.step(c["x"], c["density"], where="post", lw=1.4, color=colour, label=label)
        c = mine[mine["method"] == "grid"]
        ax.plot(c["x"], c["density"], "k-", lw=1.8, label=f"grid ({g['minor_mass']:.0%} minor)" if bimodal else "grid")
        if bimodal:
            ax.axvline(g["split"], color="grey", ls=":", lw=1)
        ax.axvline(g["theta_true"], color="grey", ls="--", lw=1)
        ax.set_title(
            f"driver seed {seed}: n = {int(g['n'])}, ε = {g['epsilon']:g}, [a, b] = [{g['lower']:.3g}, {g['upper']:.3g}]",
            fontsize=9,
        )
        ax.set_xlabel("θ (dashed: true; dotted: split)")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[k:]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------------------------- the part
def reproduce_exponential_modes(
    out: str | os.PathLike,
    *,
    quick: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    size: Mapping[str, Any] | None = None,
) -> dict[str, pd.DataFrame]:
    """Part ``exponential_modes`` of ``pystanprivacy reproduce bernstein2018`` (REPRODUCTION.md
    B1a): the driver problems, the calibration check at the first driver problem's bounds and
    Figure 1a's exponential settings (:data:`FULL` or :data:`QUICK`, or ``size``, a mapping with
    the same keys), one task each, saved in ``out/exponential_modes/.tasks``. ``seed`` seeds the
    calibration check and Figure 1a's data (the driver problems keep the authors' seeds).

    Writes ``out/bernstein2018_exponential_modes.{csv,json,png}`` (see the module's docstring) and returns
    ``{"exponential_modes": table}``; ``{}`` when a read-back of saved tasks
    (``run_context(saved_only=True)``) finds only some of them.
    """
    cfg = dict(size if size is not None else (QUICK if quick else FULL))
    missing = sorted(set(FULL) - set(cfg))
    if missing:
        raise ValueError(f"size: missing the keys {missing} (it has the keys of FULL: {sorted(FULL)})")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    samplers = {"stan": dict(cfg["stan"]), "gibbs": dict(cfg["gibbs"]), "gridsize": int(cfg["gridsize"])}
    seeds = [int(s) for s in cfg["driver_seeds"]]
    settings = [(int(n), float(e)) for n in cfg["ns"] for e in cfg["epsilons"]]
    calibration_tasks: str | None = None
    outer = current_context().resume_dir  # the calibration study's saved trials (part ``calibration``)
    start = time.perf_counter()
    run = dict(seed=seed, workers=workers, progress=progress)
    # the sidecar is written inside the part's folder: it counts the part's own tasks (run, read back)
    with part_folder(FOLDER):
        driver = run_tasks(
            [Task(driver_task, {"driver_seed": s, **samplers}, label=f"driver seed={s}") for s in seeds],
            stream=f"{PAPER}/{FOLDER}/driver",
            desc="B1a driver problems",
            **run,
        )
        calibration = pd.DataFrame()
        if cfg["calibration_trials"]:
            calibration = run_tasks(
                [
                    Task(
                        calibration_task,
                        {
                            "trials": int(cfg["calibration_trials"]),
                            "driver_seed": seeds[0],
                            "calibration_seed": seed,
                            **samplers,
                        },
                        label=f"calibration at driver seed={seeds[0]}'s bounds",
                    )
                ],
                stream=f"{PAPER}/{FOLDER}/calibration",
                desc="B1a calibration at fixed bounds",
                **run,
            )
        fig1a = run_tasks(
            [
                Task(
                    figure1a_task,
                    {
                        "setting": k,
                        "n": n,
                        "epsilon": e,
                        "datasets": int(cfg["datasets"]),
                        "pool": int(cfg["pool"]),
                        "data_seed": seed,
                        **samplers,
                    },
                    label=f"figure1a n={n} epsilon={e}",
                )
                for k, (n, e) in enumerate(settings)
            ],
            stream=f"{PAPER}/{FOLDER}/figure1a",
            desc="B1a Figure 1a settings",
            **run,
        )
        want = (len(seeds), int(bool(cfg["calibration_trials"])), len(settings))
        got = (
            driver["seed"].nunique() if len(driver) else 0,
            int(not calibration.empty),
            fig1a[["n", "epsilon"]].drop_duplicates().shape[0] if len(fig1a) else 0,
        )
        if got != want:  # a read-back of saved tasks that found only some of them
            return {}
        rows = driver[driver["kind"] == "row"]
        table = pd.concat([rows[COLUMNS], fig1a[COLUMNS]], ignore_index=True).astype(_INTEGERS)
        pools = [
            {
                "n": int(n),
                "epsilon": float(e),
                "pool": int(cfg["pool"]),
                "share_other_mode_above_1pct": float(g["pool_share"].iloc[0]),
                "studied": [int(d) for d in dict.fromkeys(g["dataset"])],
            }
            for (n, e), g in fig1a.groupby(["n", "epsilon"], sort=False)
        ]
        if outer is not None:
            calibration_tasks = str(outer)
        extra = {
            "calibration_fixed_bounds": (
                summarise_calibration(calibration, driver_seed=seeds[0], seed=seed) if not calibration.empty else None
            ),
            "figure1a_pools": pools,
            "calibration_trials_by_mode": calibration_trials_by_mode(outer) if outer is not None else [],
            "calibration_tasks": calibration_tasks,
            "authors": "not run: the authors' Gibbs code (Unbounded_Suff_Stats) is not shipped with the library",
        }
        meta = {
            **{k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()},
            "seed": seed,
            "quick": quick,
            "driver": {
                **DRIVER,
                "prior": list(PRIOR),
                "bounds": "Exp(theta_true) 2.5% and 97.5% quantiles",
                "scale": "(b - a)/epsilon (library release at epsilon * b/(b - a))",
            },
            "figure1a_data_seeds": "np.random.default_rng([seed, k]), k = setting index",
            "mode_rise": MODE_RISE,
            "seconds": round(time.perf_counter() - start, 1),
        }
        write_results(out, NAME, table, meta, extra=extra)
        figure(table, driver[driver["kind"] == "curve"], out / f"{NAME}.png")
    return {FOLDER: table}


__all__ = [
    "STUDY",
    "FULL",
    "QUICK",
    "COLUMNS",
    "truncated_record_moments",
    "log_normal_laplace_quad",
    "grid_log_posterior",
    "grid_posterior",
    "density_modes",
    "ks_w1",
    "authors_driver_data",
    "driver_task",
    "calibration_task",
    "figure1a_task",
    "summarise_calibration",
    "calibration_trials_by_mode",
    "figure",
    "reproduce_exponential_modes",
]
