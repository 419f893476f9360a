"""Modes of the Bernstein & Sheldon (2018) truncated-exponential posterior, and which sampler
finds them (issue 49, item 4; REPRODUCTION.md B1a).

The noise-aware posterior of the exponential rate θ given the Laplace release y of the
truncated sum ŝ = Σ x_i 1[a ≤ x_i ≤ b] (prior Gamma(8, 2); ŝ | θ ~ N(m, V) by the random-sum
CLT, Prop. 1 and Lemma 1; y | ŝ ~ Laplace(ŝ, scale)) is computed on a fine θ grid by numerical
integration, independently of the Stan program and of the library's numpy twin
(:meth:`~pystanprivacy.models.bernstein2018.ExponentialGamma.log_posterior`): m = n E[x 1[a ≤ x ≤ b]]
and V = n Var(x 1[a ≤ x ≤ b]) in closed form per record, and the normal-Laplace convolution by
adaptive quadrature (``scipy.integrate.quad``) at every grid point. E[ŝ | θ] rises and then
falls in θ, so a release can be explained by a small and by a large rate: the grid gives the
modes, the mass on each side of the density minimum between them, the mean and the sd.

Against that grid, per data set: the library's Stan fit (``ExponentialGamma.fit``: 4 chains
started at the global mode, 500 + 500 per chain as the study), the library's numpy Gibbs
sampler (``gibbs_posterior``: 4 chains x (2000 + 5000), the paper's chain length; and, where the
grid has a second mode, the same update with all 4 chains started in it, 5000 iterations
without burn-in) and, with
``--authors DIR``, the authors' own Gibbs code (``Unbounded_Suff_Stats``: 4 calls of
``calculate_Gibbs_posterior``, 500 + 1000 each as their code fixes it, started from a prior
draw). For each: mean, sd, the share of draws on the minor mode's side of the split (pooled and
per chain), split R-hat and bulk ESS, and the KS and Wasserstein-1 distances of the draws to the
grid CDF.

Problems:

* ``driver``: the authors' driver (``Unbounded_Suff_Stats/driver.py``): n = 1000, ε = 0.1,
  θ ~ Gamma(8, 2), x ~ Exp(θ), truncation bounds at the 2.5 % and 97.5 % quantiles of Exp(θ)
  (their code uses the true θ), noise Laplace((b − a)/ε) (their sensitivity b − a), as their
  ``generate_noisy_sufficient_statistics`` draws it from ``np.random.seed(seed)``; the library
  models it as ``ExponentialGamma(bounds=(a, b))`` with a release at ε' = ε b/(b − a), which has
  the same Laplace scale (b − a)/ε.
* ``figure1a``: the exponential column of Figure 1a as the study runs it
  (``pystanprivacy.experiments.bernstein2018.study``): default bounds (prior predictive 95 %),
  n in {10, 100, 1000, 10000}, ε in {0.01, 0.1}, data by ``study.simulate``. Per setting
  ``--pool`` data sets are drawn; the first ``--datasets`` of them are studied, plus up to
  ``--datasets`` of the rest whose library grid (``ExponentialGamma.start_values``) puts more
  than 1 % of the mass in a second mode. The pool's share of such data sets is reported.

The committed per-trial calibration results (``results/bernstein2018/.tasks``) are read too: per
exponential setting, the trials whose posterior has more than 1 % in a second mode
(``other_mode_mass``), and the KS statistic of the Stan and Gibbs posterior quantiles with and
without them (in the JSON sidecar and printed).

Run (about 15-25 min on the 2-core development machine; the Stan model is cached)::

    nice -n 10 python benchmarks/bernstein_exponential_modes.py [--driver-seeds 0,1,2,3]
        [--datasets 3] [--pool 200] [--authors DIR] [--out results/bernstein2018]

Writes ``exponential_modes.csv`` (one row per data set and method: ``grid``, ``Stan``,
``library Gibbs``, ``library Gibbs from minor mode``, ``authors' Gibbs``), ``exponential_modes.json`` (command, seeds, settings,
the committed-trials table) and ``exponential_modes.png`` (driver problem: grid density and each
sampler's histogram).

References
----------
.. [1] G. Bernstein and D. Sheldon (2018), "Differentially Private Bayesian Inference for
   Exponential Families", NeurIPS. Sec. 3.3 (Prop. 1, Lemma 1, Algorithms 2-3), Sec. 4.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import integrate, stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PRIOR = (8.0, 2.0)  # Gamma(shape, rate), the paper's experiments and the authors' code
STAN = {"chains": 4, "warmup": 500, "draws": 500}  # the study's per-chain sizes, 4 chains
GIBBS = {"chains": 4, "burnin": 2000, "iterations": 5000}  # the paper's chain length per chain
AUTHORS_CHAINS = 4
DRIVER = {"n": 1000, "epsilon": 0.1}
FIGURE1A = {"ns": (10, 100, 1000, 10000), "epsilons": (0.01, 0.1)}
#: a local maximum is a separate mode when its log density is this far above the deepest
#: valley between it and the global mode (a shoulder otherwise)
MODE_RISE = 1.0
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


# ------------------------------------------------------------------------- the exact grid
def truncated_record_moments(theta, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """E[t] and Var[t] of one record's contribution t = x 1[a ≤ x ≤ b], x ~ Exp(θ):
    E[t] = e^(−θa)(a + 1/θ) − e^(−θb)(b + 1/θ), E[t²] = e^(−θa)(a² + 2a/θ + 2/θ²) −
    e^(−θb)(b² + 2b/θ + 2/θ²) (integration by parts). The random-sum CLT of Prop. 1 is the plain
    CLT of this statistic: m = n E[t], V = n Var[t]."""
    theta = np.asarray(theta, dtype=float)
    ea, eb = np.exp(-theta * a), np.exp(-theta * b)
    m1 = ea * (a + 1 / theta) - eb * (b + 1 / theta)
    m2 = ea * (a * a + 2 * a / theta + 2 / theta**2) - eb * (b * b + 2 * b / theta + 2 / theta**2)
    return m1, m2 - m1 * m1


def log_normal_laplace_quad(y: float, m: float, v: float, scale: float) -> float:
    """log ∫ N(s; m, v) Laplace(y; s, scale) ds by adaptive quadrature: the integrand is
    divided by its maximum (at s0, found in closed form for the concave log integrand) and
    integrated over s0 ± 40 sd with the kink at s = y (and y ± 3, 30 scales) as break points."""
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
    # break points at the kink and a few noise scales either side, so that a Laplace much
    # narrower than the normal is resolved
    points = [p for p in (y + k * scale for k in (-30, -3, 0, 3, 30)) if lo < p < hi] or None
    val, _ = integrate.quad(
        lambda s: math.exp(log_f(s) - top), lo, hi, points=points, limit=400, epsabs=0.0, epsrel=1e-10
    )
    return top + math.log(val) - 0.5 * math.log(2 * math.pi * v) - math.log(2 * scale)


def grid_log_posterior(theta, *, y: float, n: int, bounds, scale: float, prior=PRIOR) -> np.ndarray:
    """Unnormalised log p(θ | y) at every θ of ``theta``: Gamma prior + the quadrature
    likelihood of the RS-CLT normal convolved with the Laplace noise."""
    theta = np.asarray(theta, dtype=float)
    m1, var1 = truncated_record_moments(theta, *bounds)
    loglik = np.array([log_normal_laplace_quad(y, n * mu, n * v, scale) for mu, v in zip(m1, var1)])
    return stats.gamma.logpdf(theta, prior[0], scale=1 / prior[1]) + loglik


def grid_posterior(*, y: float, n: int, bounds, scale: float, size: int = 2001, prior=PRIOR):
    """The posterior density of θ on a fine grid: a log-spaced pass over the prior's
    [1e-12, 1 − 1e-12] quantiles finds where the posterior lives (density above 1e-14 of its
    maximum), a second, linear grid of ``size`` points covers that range. Returns
    ``(theta, density, cdf)`` (trapezoid-normalised)."""
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
    dens, cdf = dens / cdf[-1], cdf / cdf[-1]
    return theta, dens, cdf


def density_modes(theta, dens, *, rise: float = MODE_RISE) -> dict:
    """Modes of a gridded density and the mass on each side of the split.

    The global maximum is the major mode. Another local maximum counts as a mode when its log
    density rises at least ``rise`` above the deepest valley between it and the major mode;
    the most massive such mode is the minor mode, and the split is the density minimum between
    the two. Returns ``modes`` (count), ``mode_major``, ``mode_minor``, ``split`` (NaN when
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


def ks_w1(draws, theta, cdf) -> tuple[float, float]:
    """Kolmogorov-Smirnov (sup |F_draws − F|) and Wasserstein-1 (∫ |F_draws − F| dθ) distances
    of ``draws`` to the gridded CDF (linear between grid points)."""
    x = np.sort(np.asarray(draws, dtype=float).reshape(-1))
    k = x.size
    f = np.interp(x, theta, cdf, left=0.0, right=1.0)
    i = np.arange(1, k + 1)
    ks = float(max(np.max(i / k - f), np.max(f - (i - 1) / k)))
    emp = np.searchsorted(x, theta, side="right") / k
    w1 = float(integrate.trapezoid(np.abs(emp - cdf), theta))
    w1 += float(np.sum(np.clip(theta[0] - x, 0, None)) + np.sum(np.clip(x - theta[-1], 0, None))) / k
    return ks, w1


# --------------------------------------------------------------------------- data sets
def authors_driver_data(seed: int, *, n: int = DRIVER["n"], epsilon: float = DRIVER["epsilon"]) -> dict:
    """The authors' ``generate_noisy_sufficient_statistics`` for their driver (same calls, in
    the same order, on ``RandomState(seed)``, which equals their global ``np.random`` after
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


def _pool_selection(model, release, datasets: int) -> tuple[np.ndarray, float]:
    """Indices to study (the first ``datasets`` and up to ``datasets`` later ones with more than
    1 % of the library grid's mass in a second mode) and the pool's share of such data sets."""
    _, other = model.start_values(release, chains=1, seed=0)
    bimodal = np.flatnonzero(other > 0.01)
    extra = [int(i) for i in bimodal if i >= datasets][:datasets]
    return np.array(list(range(datasets)) + extra), float(np.mean(other > 0.01))


# ---------------------------------------------------------------------------- samplers
def _sampler_row(draws: np.ndarray, grid: dict, summary: dict, rhat: float, ess: float, seconds: float) -> dict:
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


def stan_draws(model, release, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The library's Stan fit (default init: every chain at the global mode of its data set):
    draws (chains, draws, R), R-hat (R,), bulk ESS (R,), seconds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the fit's own second-mode warning
        t = time.perf_counter()
        post = model.fit(release, seed=seed, **STAN)
        seconds = time.perf_counter() - t
    draws = np.asarray(post.draws("theta", combine_chains=False))
    return draws, np.asarray(post.rhat()["theta"]), np.asarray(post.ess_bulk()["theta"]), seconds


def gibbs_draws(model, release, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The library's numpy Gibbs sampler, 4 chains x (2000 + 5000)."""
    from pystanprivacy.experiments.bernstein2018.baselines import gibbs_posterior

    t = time.perf_counter()
    post = gibbs_posterior(model, release, seed=seed, **GIBBS)
    seconds = time.perf_counter() - t
    draws = np.asarray(post.draws("theta", combine_chains=False))  # (chains, iterations, R)
    return draws, np.asarray(post.rhat()["theta"]), np.asarray(post.ess_bulk()["theta"]), seconds


def gibbs_from(model, release, r: int, theta0: np.ndarray, seed: int) -> np.ndarray:
    """The library's Gibbs update (``baselines._gibbs_exponential``) for data set ``r`` with the
    chains started at ``theta0`` (chains, 1) and no burn-in: draws (chains, iterations). Where
    the chains go from a start in the minor mode tells a mixing failure (they stay a while)
    from a different stationary distribution (they leave and do not come back)."""
    from pystanprivacy.experiments.bernstein2018.baselines import _gibbs_exponential

    values, n, scale, _ = model.check_release(release)
    rng = np.random.default_rng(seed)
    chains = theta0.shape[0]
    out = _gibbs_exponential(
        values[r : r + 1, 0], n, scale, model.bounds, model.prior_shape, model.prior_rate,
        GIBBS["iterations"], 0, chains, 1, rng, theta0,
    )  # fmt: skip
    return out[:, :, 0]


@contextlib.contextmanager
def _authors_modules(folder: str):
    """Import the authors' ``Unbounded_Suff_Stats`` modules from ``folder`` (their ``driver``
    must not run its plot; ``parameter_autograd`` reads ``driver.conjugate_pair``)."""
    names = ("driver", "util", "Gibbs", "distributions", "parameter_autograd")
    saved = {k: sys.modules.pop(k) for k in names if k in sys.modules}
    sys.path.insert(0, folder)
    try:
        yield {k: importlib.import_module(k) for k in ("Gibbs", "util", "driver")}
    finally:
        sys.path.remove(folder)
        for k in names:
            sys.modules.pop(k, None)
        sys.modules.update(saved)


def authors_draws(folder: str, seed: int, data: dict, *, n: int, epsilon: float) -> tuple[np.ndarray, float]:
    """The authors' Gibbs sampler on their own driver data: ``np.random.seed(seed)``, their
    data generation (checked equal to :func:`authors_driver_data`), then 4 calls of
    ``calculate_Gibbs_posterior`` (each a chain of 500 + 1000 from a prior draw). Returns draws
    (chains, 1000) and seconds."""
    with _authors_modules(folder) as mod, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = mod["driver"].conjugate_pair
        np.random.seed(seed)
        theta = pair.draw_model_parameters(pair.prior_parameters)
        _, _, noisy_inside, bounds = mod["util"].generate_noisy_sufficient_statistics(float(n), epsilon, pair, theta)
        same = math.isclose(float(theta[0, 0]), data["theta"], rel_tol=1e-12) and math.isclose(
            float(noisy_inside[0, 0]), data["y"], rel_tol=1e-9
        )
        if not same:
            raise RuntimeError(f"the authors' data for seed {seed} differ from authors_driver_data's")
        t = time.perf_counter()
        chains = [
            mod["Gibbs"].calculate_Gibbs_posterior(noisy_inside, pair, float(n), epsilon, bounds)[0]
            for _ in range(AUTHORS_CHAINS)
        ]
        return np.array(chains), time.perf_counter() - t


def _diagnostics(draws: np.ndarray) -> tuple[float, float]:
    """Split R-hat and bulk ESS of draws (chains, iterations) (the library's own functions)."""
    from pystanprivacy.models.base import posterior_from_draws

    post = posterior_from_draws({"theta": draws[:, :, None]}, model="authors", backend="numpy", seed=None)
    return float(np.asarray(post.rhat()["theta"])[0]), float(np.asarray(post.ess_bulk()["theta"])[0])


# --------------------------------------------------------------------------- problems
def _study(problem, model, release, ys, meta, seed, authors=None, gridsize=2001) -> tuple[list[dict], dict]:
    """Grid, Stan and library Gibbs (and authors' Gibbs) rows for the R data sets of ``release``."""
    n, scale = int(release.record.n), float(model.check_release(release)[2])
    rows, figures = [], {}
    stan, s_rhat, s_ess, s_sec = stan_draws(model, release, seed)
    gibbs, g_rhat, g_ess, g_sec = gibbs_draws(model, release, seed + 1)
    twin = model.log_posterior  # the library's numpy twin of the Stan model, for a cross-check
    for r, y in enumerate(ys):
        t = time.perf_counter()
        theta, dens, cdf = grid_posterior(y=float(y), n=n, bounds=model.bounds, scale=scale, size=gridsize)
        grid_sec = time.perf_counter() - t
        grid = {"theta": theta, "dens": dens, "cdf": cdf}
        summary = density_modes(theta, dens)
        lib = twin(theta, model.published(np.array([y]), n=n, epsilon=float(release.record.epsilon)))[0]
        ok = dens > 1e-8 * dens.max()
        lib_dens = np.exp(lib - lib.max())
        lib_dens /= integrate.trapezoid(lib_dens, theta)
        twin_diff = float(np.max(np.abs(np.log(lib_dens[ok]) - np.log(dens[ok]))))
        base = {
            "problem": problem,
            "seed": seed,
            "n": n,
            "epsilon": meta["epsilon"],
            "lower": model.bounds[0],
            "upper": model.bounds[1],
            "scale": scale,
            **meta["per"][r],
        }
        rows.append(
            {
                **base,
                "method": "grid",
                "draws": theta.size,
                "seconds": grid_sec,
                "twin_max_dlogp": twin_diff,
                **{k: summary[k] for k in ("modes", "mode_major", "mode_minor", "split", "minor_mass", "mean", "sd")},
            }
        )
        samples = {"Stan": stan[:, :, r], "library Gibbs": gibbs[:, :, r]}
        rows.append(
            {
                **base,
                "method": "Stan",
                **_sampler_row(stan[:, :, r], grid, summary, float(s_rhat[r]), float(s_ess[r]), s_sec / len(ys)),
            }
        )
        rows.append(
            {
                **base,
                "method": "library Gibbs",
                **_sampler_row(gibbs[:, :, r], grid, summary, float(g_rhat[r]), float(g_ess[r]), g_sec / len(ys)),
            }
        )
        if authors is not None:
            a_draws, a_sec = authors
            rhat, ess = _diagnostics(a_draws)
            rows.append({**base, "method": "authors' Gibbs", **_sampler_row(a_draws, grid, summary, rhat, ess, a_sec)})
            samples["authors' Gibbs"] = a_draws
        printed = len(samples) + 1
        if summary["minor_side"]:
            # mixing or target? the same Gibbs sampler with every chain started in the minor mode
            t = time.perf_counter()
            start = np.full((GIBBS["chains"], 1), summary["mode_minor"])
            minor = gibbs_from(model, release, r, start, seed + 2 + r)
            rhat, ess = _diagnostics(minor)
            rows.append(
                {
                    **base,
                    "method": "library Gibbs from minor mode",
                    **_sampler_row(minor, grid, summary, rhat, ess, time.perf_counter() - t),
                }
            )
            printed += 1
        figures[r] = {"grid": grid, "summary": summary, "samples": samples, "base": base}
        print(_line(rows[-printed:]), flush=True)
    return rows, figures


def _line(rows: list[dict]) -> str:
    g = rows[0]
    head = (
        f"{g['problem']} seed={g['seed']} n={g['n']} eps={g['epsilon']} theta={g['theta_true']:.3f}: grid "
        f"modes={g['modes']} ({g['mode_major']:.3f}, {g['mode_minor']:.3f}) minor={g['minor_mass']:.3f} "
        f"mean={g['mean']:.3f} sd={g['sd']:.3f} twin={g['twin_max_dlogp']:.1e}"
    )
    tail = "; ".join(
        f"{r['method']}: minor={r.get('minor_mass', 0):.3f} mean={r['mean']:.3f} ks={r['ks']:.3f} "
        f"rhat={r['rhat']:.3f} ess={r['ess_bulk']:.0f}"
        for r in rows[1:]
    )
    return f"{head}\n    {tail}"


def driver_rows(seeds, authors_dir=None) -> tuple[list[dict], dict]:
    from pystanprivacy.models.bernstein2018 import ExponentialGamma

    rows, figs = [], {}
    n, eps = DRIVER["n"], DRIVER["epsilon"]
    for seed in seeds:
        data = authors_driver_data(seed, n=n, epsilon=eps)
        a, b = data["bounds"]
        model = ExponentialGamma(bounds=(a, b), prior_shape=PRIOR[0], prior_rate=PRIOR[1])
        release = model.published(np.array([data["y"]]), n=n, epsilon=eps * b / (b - a))  # scale (b − a)/ε
        authors = authors_draws(authors_dir, seed, data, n=n, epsilon=eps) if authors_dir else None
        meta = {"epsilon": eps, "per": [{"dataset": 0, "theta_true": data["theta"]}]}
        r, f = _study("driver", model, release, [data["y"]], meta, seed, authors)
        rows += r
        figs[seed] = f[0]
    return rows, figs


def fixed_bounds_calibration(trials: int, seed: int, driver_seed: int) -> dict:
    """Calibration (Cook et al.; the paper's Sec. 4 check) at the driver's n, ε and noise scale
    with the bounds of driver ``driver_seed`` held fixed (public): θ_i ~ Gamma(8, 2), n records,
    y_i = ŝ_i + Laplace((b − a)/ε). The posterior quantile of θ_i under the grid (exact CDF),
    the Stan fit and the library Gibbs sampler (randomised ranks), and the KS statistic of each
    against Uniform(0, 1). (The driver itself sets the bounds from the true θ, which makes a
    calibration check of it degenerate: b = 3.689/θ.)"""
    from pystanprivacy.models.bernstein2018 import ExponentialGamma
    from pystanprivacy.sampling.evaluate import ks_critical_value, posterior_quantile

    n, eps = DRIVER["n"], DRIVER["epsilon"]
    a, b = authors_driver_data(driver_seed, n=n, epsilon=eps)["bounds"]
    scale = (b - a) / eps
    rng = np.random.default_rng([seed, 99])
    theta = rng.gamma(PRIOR[0], 1 / PRIOR[1], size=trials)
    x = rng.exponential(1 / theta[:, None], size=(trials, n))
    y = np.where((x >= a) & (x <= b), x, 0.0).sum(axis=1) + rng.laplace(scale=scale, size=trials)
    model = ExponentialGamma(bounds=(a, b), prior_shape=PRIOR[0], prior_rate=PRIOR[1])
    release = model.published(y[:, None], n=n, epsilon=eps * b / (b - a))
    stan, s_rhat, _, s_sec = stan_draws(model, release, seed + 7)
    gibbs, _, _, g_sec = gibbs_draws(model, release, seed + 8)
    u_grid, minor = np.empty(trials), np.empty(trials)
    for i in range(trials):
        th, dens, cdf = grid_posterior(y=float(y[i]), n=n, bounds=(a, b), scale=scale)
        u_grid[i] = np.interp(theta[i], th, cdf, left=0.0, right=1.0)
        minor[i] = density_modes(th, dens)["minor_mass"]
    u = {
        "grid": u_grid,
        "Stan": posterior_quantile(stan.reshape(-1, trials).T, theta, seed=rng),
        "library Gibbs": posterior_quantile(gibbs.reshape(-1, trials).T, theta, seed=rng),
    }
    out = {
        "driver_seed": driver_seed,
        "bounds": [a, b],
        "scale": scale,
        "n": n,
        "epsilon": eps,
        "trials": trials,
        "seed": seed,
        "ks_critical_1pct": ks_critical_value(trials, 0.01),
        "share_minor_above_1pct": float(np.mean(minor > 0.01)),
        "mean_minor_mass": float(minor.mean()),
        "stan_rhat_above_1_01": float(np.mean(s_rhat > 1.01)),
        "stan_seconds": s_sec,
        "gibbs_seconds": g_sec,
    }
    bim = minor > 0.01
    for name, values in u.items():
        res = stats.kstest(values, "uniform")
        out[name] = {
            "ks": float(res.statistic),
            "pvalue": float(res.pvalue),
            "ks_bimodal_trials": float(stats.kstest(values[bim], "uniform").statistic) if bim.sum() > 1 else None,
            "tails_bimodal_trials": float(np.mean((values[bim] < 0.05) | (values[bim] > 0.95))) if bim.any() else None,
        }
    print("calibration at fixed driver bounds:", json.dumps(out), flush=True)
    return out


def figure1a_rows(datasets: int, pool: int, seed: int) -> tuple[list[dict], list[dict]]:
    from pystanprivacy.experiments.bernstein2018.study import make_model, simulate

    rows, pools = [], []
    for k, (n, eps) in enumerate((n, e) for n in FIGURE1A["ns"] for e in FIGURE1A["epsilons"]):
        rng = np.random.default_rng([seed, k])
        model = make_model("exponential")
        data = simulate("exponential", n, pool, rng)
        release = model.release_statistics(data["stats"], n=n, epsilon=eps, seed=rng)
        chosen, share = _pool_selection(model, release, datasets)
        pools.append(
            {"n": n, "epsilon": eps, "pool": pool, "share_other_mode_above_1pct": share, "studied": chosen.tolist()}
        )
        ys = np.asarray(release.values)[chosen, 0]
        sub = model.published(ys[:, None], n=n, epsilon=eps)
        meta = {"epsilon": eps, "per": [{"dataset": int(i), "theta_true": float(data["theta"][i])} for i in chosen]}
        rows += _study("figure1a", model, sub, ys, meta, seed * 100 + k)[0]
    return rows, pools


def committed_trials(results: Path) -> list[dict]:
    """Per exponential setting of the committed calibration run: trials with more than 1 % of
    the posterior in a second mode (the Stan rows' ``other_mode_mass``), and the KS statistic
    of the Stan and Gibbs quantiles over all trials and over the others."""
    from pystanprivacy.run.runner import saved_results

    tasks = results / ".tasks"
    if not tasks.is_dir():
        return []
    table = saved_results(tasks, label_prefix="exponential")
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
            rest = u.drop(bimodal)
            row[f"ks_{tag}_unimodal"] = float(stats.kstest(rest, "uniform").statistic)
            if bimodal.size:
                row[f"u_{tag}_bimodal_tails"] = float(np.mean((u[bimodal] < 0.05) | (u[bimodal] > 0.95)))
        out.append(row)
    return out


# ------------------------------------------------------------------------------ output
def figure(figs: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(figs)
    cols = min(k, 2)
    nrows = math.ceil(k / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 3.6 * nrows), squeeze=False)
    colours = {"Stan": "C0", "library Gibbs": "C1", "authors' Gibbs": "C3"}
    for ax, (seed, f) in zip(axes.flat, figs.items()):
        g, s = f["grid"], f["summary"]
        lo = min(g["theta"][0], *(d.min() for d in f["samples"].values()))
        hi = max(g["theta"][-1], *(d.max() for d in f["samples"].values()))
        bins = np.linspace(lo, hi, 80)
        for name, d in f["samples"].items():
            share = np.mean(d < s["split"]) if s["minor_side"] < 0 else np.mean(d > s["split"])
            label = f"{name} ({share:.0%} minor)" if s["minor_side"] else name
            ax.hist(d.reshape(-1), bins=bins, density=True, histtype="step", lw=1.4, color=colours[name], label=label)
        label = f"grid ({s['minor_mass']:.0%} minor)" if s["minor_side"] else "grid"
        ax.plot(g["theta"], g["dens"], "k-", lw=1.8, label=label)
        if s["minor_side"]:
            ax.axvline(s["split"], color="grey", ls=":", lw=1)
        ax.axvline(f["base"]["theta_true"], color="grey", ls="--", lw=1)
        ax.set_title(
            f"driver seed {seed}: n = 1000, ε = 0.1, [a, b] = [{f['base']['lower']:.3g}, {f['base']['upper']:.3g}]",
            fontsize=9,
        )
        ax.set_xlabel("θ (dashed: true; dotted: split)")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[k:]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--driver-seeds", default="0,1,2,3", help="comma-separated seeds of the driver problem")
    parser.add_argument(
        "--datasets",
        type=int,
        default=3,
        help="first data sets per Figure 1a setting (and at most this many more with a second mode)",
    )
    parser.add_argument("--pool", type=int, default=200, help="data sets drawn per Figure 1a setting")
    parser.add_argument("--seed", type=int, default=0, help="seed of the Figure 1a data and the samplers")
    parser.add_argument("--authors", help="folder of the authors' Unbounded_Suff_Stats code (needs autograd)")
    parser.add_argument(
        "--calibration-trials",
        type=int,
        default=200,
        help="trials of the calibration check at the first driver seed's bounds (0: skip)",
    )
    parser.add_argument("--skip-figure1a", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "results" / "bernstein2018"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.driver_seeds.split(",") if s]
    start = time.time()
    import pandas as pd

    rows, figs = driver_rows(seeds, args.authors)
    calibration = None
    if args.calibration_trials:
        calibration = fixed_bounds_calibration(args.calibration_trials, args.seed, seeds[0])
    pools = []
    if not args.skip_figure1a:
        more, pools = figure1a_rows(args.datasets, args.pool, args.seed)
        rows += more
    table = pd.DataFrame(rows, columns=COLUMNS)
    table.to_csv(out / "exponential_modes.csv", index=False, float_format="%.6g")
    committed = committed_trials(ROOT / "results" / "bernstein2018")
    for row in committed:
        print(row)
    figure(figs, out / "exponential_modes.png")
    side = {
        "command": " ".join(["python", "benchmarks/bernstein_exponential_modes.py", *(argv or sys.argv[1:])]),
        "driver": {
            **DRIVER,
            "seeds": seeds,
            "prior": PRIOR,
            "bounds": "Exp(theta_true) 2.5% and 97.5% quantiles",
            "scale": "(b - a)/epsilon (library release at epsilon * b/(b - a))",
        },
        "figure1a": {
            **FIGURE1A,
            "datasets": args.datasets,
            "pool": args.pool,
            "seed": args.seed,
            "data_seeds": "np.random.default_rng([seed, k]), k = setting index",
            "pools": pools,
        },
        "stan": STAN,
        "gibbs": GIBBS,
        "authors": {"folder": args.authors, "chains": AUTHORS_CHAINS, "per_chain": "500 + 1000 (their code)"}
        if args.authors
        else None,
        "mode_rise": MODE_RISE,
        "committed_trials": committed,
        "calibration_fixed_bounds": calibration,
        "seconds": round(time.time() - start, 1),
        "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()},
    }
    (out / "exponential_modes.json").write_text(json.dumps(side, indent=1) + "\n")
    print(f"wrote {out / 'exponential_modes.csv'} ({len(table)} rows) in {side['seconds']:.0f} s")


if __name__ == "__main__":
    main()
