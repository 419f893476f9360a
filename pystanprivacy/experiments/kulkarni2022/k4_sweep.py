"""Kulkarni et al. (2022), Figure 4 (REPRODUCTION.md, K4): why does the sufficient-statistics (SS)
model stay at the zero predictor's test RMSE on Wine? A one-factor-at-a-time sweep over what the
paper leaves open, at epsilon in {0.5, 2, 8}, around the committed setting (PCA to d = 4, equal
noise sds sigma_1 = sigma_2 = sigma_3 (Corollary 3.1), delta = 1e-5, theta ~ N(0, 5 I)):

* the PCA dimension d: 2, 6 and 12 (all 11 physico-chemical features plus the colour);
* the noise-sd ratios of Lemma 3.1: ``"opt"``, the ratios ``sigma_2 / sigma_1``, ``sigma_3 / sigma_1``
  that minimise the total noise variance of a report, ``m2 sigma_1^2 + d sigma_2^2 + sigma_3^2``
  (``m2 = d (d + 1) / 2``), for the declared R and R_y -- a public, data-free criterion of ours:
  the paper uses equal sds (its Corollary 3.1) and states no optimum;
* delta: 1e-3 (the paper states none);
* the prior sd of theta: 0.5 and 5 (the committed sqrt(5) reads the paper's N(0, 5 I) as a
  covariance);
* and one pre-declared combination of the levels expected to favour small epsilon (d = 2, "opt",
  delta = 1e-3, prior sd 0.5).

R = 1 and R_y = 2 are the paper's (Sec. 4.3, 4.1) and stay fixed. Every repeat r uses the
train/test split of seed r (the same for every setting, so settings are compared split by split)
and fresh noise; the privacy path is the library's (``LinearRegressionSS.release`` and ``.fit``).
For reference each cell also holds LDP-SGD as the committed K4 run makes it
(:func:`~pystanprivacy.experiments.kulkarni2022.ldp_sgd.ldp_sgd`, with the cell's d and delta),
the zero predictor and the non-private least-squares fit on the same features. Diagnostics of the
SS posterior per fit: the mean ratio of posterior to prior sd of theta (1: the posterior is the
prior), the correlation of its test predictions with least squares', and the signal-to-noise
ratio of the noisy sums ``sum_i y_i x_i`` (largest ``|sum_i y_i x_ij| / (sigma_2 sqrt(n))``).

Part ``k4_sweep`` of ``pystanprivacy reproduce kulkarni2022`` (:func:`reproduce_k4_sweep`) runs it
with the committed arguments (:data:`RUN`: 10 repeats, 2 chains x (500 + 500), d = 12 on 3 repeats
with 2 x (300 + 300)), writes ``k4_sweep.csv`` (one row per setting x epsilon x repeat x method),
``k4_sweep.json`` (the arguments, seeds, wall time and the summary) and ``k4_sweep.png``; its tasks
are saved in ``OUT/k4_sweep/.tasks``. Seeds give reproducibility, not security.

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela, "Locally Differentially Private Bayesian
   Inference", arXiv:2110.14426 (2022), Sec. 3.1.1, Lemma 3.1, Corollary 3.1, Sec. 4.1-4.6.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from ..._validation import check_epsilon, check_int, check_positive, check_sampler
from ...models.kulkarni2022_regression import LinearRegressionSS, linreg_sensitivity, linreg_statistics
from ...run.runner import Task, part_folder, run_tasks, write_results
from ...run.study import Study
from .data import load_wine_regression
from .ldp_sgd import ldp_sgd

#: the sweep's study: its name and version key its saved results (pystanprivacy.run.study)
STUDY = Study(name="kulkarni2022/k4_sweep", version=1)

NAME = "k4_sweep"
STREAM = "kulkarni2022/k4_sweep"
EPSILONS = (0.5, 2.0, 8.0)
#: the paper's bounds (Sec. 4.3: "we fix R = 1"; Sec. 4.1: "We set R_y = 2")
R = 1.0
R_Y = 2.0
#: the committed K4 setting (experiments/kulkarni2022/regression.py, reproduce)
BASE: dict[str, Any] = {"d": 4, "ratios": "equal", "delta": 1e-5, "prior_theta_sd": math.sqrt(5.0)}
#: the other levels of each factor, varied one at a time around BASE
ALTERNATIVES: dict[str, tuple[Any, ...]] = {
    "d": (2, 6, 12),
    "ratios": ("opt",),
    "delta": (1e-3,),
    "prior_theta_sd": (0.5, 5.0),
}
#: declared before the run: the levels expected to favour small epsilon, all at once
COMBINED: dict[str, dict[str, Any]] = {"favourable": {"d": 2, "ratios": "opt", "delta": 1e-3, "prior_theta_sd": 0.5}}
RATIO_CHOICES = ("equal", "opt")
SAMPLER = {"chains": 4, "warmup": 500, "draws": 500}
METHODS = ("ss", "ldp-sgd", "ols", "zero")


# ------------------------------------------------------------------------------- the grid
def _label(factor: str, level: Any) -> str:
    return f"{factor}={level:g}" if isinstance(level, float) else f"{factor}={level}"


def one_factor_grid(
    base: Mapping[str, Any],
    alternatives: Mapping[str, Sequence[Any]],
    combined: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The settings of a one-factor-at-a-time sweep: ``base`` first (``setting`` and ``factor``
    ``"base"``), then, per factor, ``base`` with that factor alone set to each alternative level
    (``setting`` ``"<factor>=<level>"``), then each named full setting of ``combined`` (``factor``
    ``"combined"``; every key of ``base`` must be given).

    Parameters
    ----------
    base : mapping of factor names to their base levels
    alternatives : mapping of factor names (keys of ``base``) to the other levels to try
    combined : mapping of names to complete settings, optional

    Returns
    -------
    list of dict
        One dict per setting: ``setting``, ``factor`` and every factor's level.
    """
    if not isinstance(base, Mapping) or not base:
        raise TypeError(f"base must be a non-empty mapping of factor names to levels, got {base!r}")
    rows = [{"setting": "base", "factor": "base", **base}]
    for factor, levels in alternatives.items():
        if factor not in base:
            raise ValueError(f"alternatives names factor {factor!r}, not one of base's {sorted(base)}")
        for level in levels:
            if level == base[factor]:
                raise ValueError(f"alternatives[{factor!r}] repeats the base level {level!r}")
            rows.append({"setting": _label(factor, level), "factor": factor, **base, factor: level})
    for name, setting in (combined or {}).items():
        if set(setting) != set(base):
            raise ValueError(f"combined[{name!r}] must set exactly the factors {sorted(base)}, got {sorted(setting)}")
        rows.append({"setting": name, "factor": "combined", **setting})
    names = [r["setting"] for r in rows]
    if len(set(names)) != len(names):
        raise ValueError(f"setting names must be distinct, got {names}")
    return rows


def optimal_ratios(d: int, *, R: float = R, R_y: float = R_Y) -> tuple[float, float]:
    """``(sigma_2 / sigma_1, sigma_3 / sigma_1)`` that minimise the total noise variance of one
    report, ``sigma_1^2 (m2 + d r_2^2 + r_3^2)``, ``m2 = d (d + 1) / 2``, where ``sigma_1`` is
    proportional to the Lemma 3.1 sensitivity of the rescaled statistic
    (:func:`~pystanprivacy.models.kulkarni2022_regression.linreg_sensitivity`) -- a public,
    data-free criterion (the paper's Corollary 3.1 takes equal sds). Searched over
    ``log r`` in ``[log 1e-3, log 1e3]``, the ratios the release accepts.

    References
    ----------
    Kulkarni et al. (2022), Lemma 3.1 and its proof (supplement Sec. 9.1, Eq. 13-17).
    """
    d = check_int(d, "d", minimum=1)
    R = check_positive(R, "R")
    R_y = check_positive(R_y, "R_y")
    m2 = d * (d + 1) // 2

    def total(log_r: np.ndarray) -> float:
        r2, r3 = np.exp(log_r)
        return linreg_sensitivity(R, R_y, r2, r3) ** 2 * (m2 + d * r2**2 + r3**2)

    bound = math.log(1e3)
    res = minimize(total, np.zeros(2), method="L-BFGS-B", bounds=[(-bound, bound)] * 2)
    if not res.success:
        raise RuntimeError(f"the ratio search did not converge: {res.message}")
    r2, r3 = np.exp(res.x)
    return float(r2), float(r3)


def ratio_values(ratios: str, d: int) -> tuple[float, float]:
    """``(ratio_xy, ratio_yy)`` of a ratio choice: ``"equal"`` (1, 1) or ``"opt"``
    (:func:`optimal_ratios` for d and the paper's R, R_y)."""
    if ratios not in RATIO_CHOICES:
        raise ValueError(f"ratios must be one of {RATIO_CHOICES}, got {ratios!r}")
    return (1.0, 1.0) if ratios == "equal" else optimal_ratios(d)


# ------------------------------------------------------------------------------ the task
def rmse(pred: np.ndarray, target: np.ndarray) -> float:
    """Root mean squared error of predictions ``pred`` against ``target``."""
    return float(np.sqrt(np.mean((np.asarray(pred, dtype=float) - np.asarray(target, dtype=float)) ** 2)))


def _text(theta: np.ndarray) -> str:
    """A coefficient vector as one CSV cell: space-separated, full precision."""
    return " ".join(f"{v:.17g}" for v in np.asarray(theta, dtype=float))


def parse_theta(text: str) -> np.ndarray:
    """The coefficient vector of a ``theta`` cell of the table."""
    return np.array([float(v) for v in str(text).split()])


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    if np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


@STUDY.task(
    programs=("kulkarni2022/linear_regression_ss",),
    data=("winequality-red.csv", "winequality-white.csv"),
    data_path="data_dir",
)
def sweep_task(
    *,
    setting: str,
    factor: str,
    d: int,
    ratios: str,
    delta: float,
    prior_theta_sd: float,
    epsilon: float,
    split: int,
    sampler: Mapping[str, int],
    data_dir: str | None,
    seed: np.random.SeedSequence,
) -> pd.DataFrame:
    """One cell of the sweep: Wine with PCA to ``d`` on the train/test split of seed ``split``;
    the SS model's release and fit (posterior mean of theta), LDP-SGD, least squares and the
    zero predictor, each with its test RMSE against the centred, unclipped test targets and its
    coefficients (``theta``, :func:`parse_theta`). One row per method."""
    data = load_wine_regression(data_dir, d=d, R=R, R_y=R_Y, seed=split)
    x, y, xt, yt = data.x_train, data.y_train, data.x_test, data.y_test
    n = x.shape[0]
    rng_ss, rng_sgd = (np.random.default_rng(s) for s in seed.spawn(2))
    r2, r3 = ratio_values(ratios, d)
    base = {
        "setting": setting,
        "factor": factor,
        "d": d,
        "ratios": ratios,
        "ratio_xy": r2,
        "ratio_yy": r3,
        "delta": delta,
        "prior_theta_sd": prior_theta_sd,
        "epsilon": epsilon,
        "split": split,
        "n_train": n,
    }
    ols = np.linalg.lstsq(x, y, rcond=None)[0]

    t = time.perf_counter()
    rel = LinearRegressionSS.release(
        x, y, epsilon=epsilon, delta=delta, R=R, R_y=R_Y, ratio_xy=r2, ratio_yy=r3, seed=rng_ss
    )
    post = LinearRegressionSS(prior_theta_sd=prior_theta_sd).fit(rel, seed=rng_ss, **sampler)
    draws = post.draws("theta")
    theta = draws.mean(axis=0)
    det = rel.record.details
    m2 = d * (d + 1) // 2
    sums_yx = linreg_statistics(x, y)[:, m2 : m2 + d].sum(axis=0)  # evaluation only, never released
    rows = [
        {
            **base,
            "method": "ss",
            "rmse": rmse(xt @ theta, yt),
            "theta": _text(theta),
            "seconds": time.perf_counter() - t,
            "max_rhat": float(np.nanmax(post.rhat()["theta"])),
            "divergences": int(post.num_divergences),
            "post_sd_over_prior": float(np.mean(draws.std(axis=0)) / prior_theta_sd),
            "corr_with_ols": _corr(xt @ theta, xt @ ols),
            "theta_norm": float(np.linalg.norm(theta)),
            "sigma_1": float(det["sigma_t2"]),
            "sigma_2": float(det["sigma_xy"]),
            "snr_yx": float(np.max(np.abs(sums_yx)) / (det["sigma_xy"] * math.sqrt(n))),
        }
    ]
    t = time.perf_counter()
    sgd = ldp_sgd(x, y, loss="squared", epsilon=epsilon, delta=delta, seed=rng_sgd)
    rows.append(
        {
            **base,
            "method": "ldp-sgd",
            "rmse": rmse(xt @ sgd.theta, yt),
            "theta": _text(sgd.theta),
            "seconds": time.perf_counter() - t,
            "corr_with_ols": _corr(xt @ sgd.theta, xt @ ols),
            "theta_norm": float(np.linalg.norm(sgd.theta)),
        }
    )
    rows.append(
        {
            **base,
            "method": "ols",
            "rmse": rmse(xt @ ols, yt),
            "theta": _text(ols),
            "theta_norm": float(np.linalg.norm(ols)),
        }
    )
    rows.append(
        {**base, "method": "zero", "rmse": rmse(np.zeros(yt.shape), yt), "theta": _text(np.zeros(d)), "theta_norm": 0.0}
    )
    return pd.DataFrame(rows)


def build_tasks(
    settings: Sequence[Mapping[str, Any]],
    *,
    epsilons: Sequence[float],
    repeats: int,
    sampler: Mapping[str, int],
    data_dir: str | None = None,
    repeats_by: Mapping[str, int] | None = None,
    sampler_by: Mapping[str, Mapping[str, int]] | None = None,
) -> list[Task]:
    """One :class:`~pystanprivacy.run.runner.Task` per setting x epsilon x repeat (repeat r: the
    split of seed r), in that order; ``repeats_by`` and ``sampler_by`` give some settings (by
    name) another number of repeats or other sampler settings (e.g. the slow d = 12)."""
    repeats = check_int(repeats, "repeats", minimum=1)
    repeats_by = dict(repeats_by or {})
    sampler_by = {k: check_sampler(v, sampler, min_chains=1) for k, v in (sampler_by or {}).items()}
    unknown = sorted((set(repeats_by) | set(sampler_by)) - {s["setting"] for s in settings})
    if unknown:
        raise ValueError(f"repeats_by or sampler_by name settings {unknown} that are not in settings")
    counts = {k: check_int(v, f"repeats_by[{k!r}]", minimum=1) for k, v in repeats_by.items()}
    eps = [check_epsilon(e, "epsilons[i]") for e in epsilons]
    return [
        Task(
            sweep_task,
            {
                **{k: s[k] for k in ("setting", "factor", "d", "ratios", "delta", "prior_theta_sd")},
                "epsilon": e,
                "split": r,
                "sampler": dict(sampler_by.get(s["setting"], sampler)),
                "data_dir": data_dir,
            },
            label=f"k4 sweep {s['setting']} eps={e} split={r}",
        )
        for s in settings
        for e in eps
        for r in range(counts.get(s["setting"], repeats))
    ]


# ------------------------------------------------------------------------------ summary
def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Per setting, epsilon and method: mean, sd and standard error of the test RMSE over the
    repeats, and the mean difference to the same split's LDP-SGD and zero predictor with its
    standard error (paired by split)."""
    keys = ["setting", "factor", "epsilon"]
    wide = table.pivot_table(index=[*keys, "split"], columns="method", values="rmse")
    out = []
    for (setting, factor, epsilon, method), g in table.groupby([*keys, "method"], sort=False):
        row = {
            "setting": setting,
            "factor": factor,
            "epsilon": epsilon,
            "method": method,
            "rmse_mean": g["rmse"].mean(),
            "rmse_sd": g["rmse"].std(),
            "rmse_se": g["rmse"].std() / math.sqrt(len(g)),
            "repeats": len(g),
        }
        w = wide.loc[(setting, factor, epsilon)]
        for ref in ("ldp-sgd", "zero"):
            diff = (w[method] - w[ref]).dropna()
            row[f"minus_{ref}"] = diff.mean()
            row[f"minus_{ref}_se"] = diff.std() / math.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        out.append(row)
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------- figure
def plot(table: pd.DataFrame, settings: Sequence[Mapping[str, Any]], path: str | Path) -> None:
    """Test RMSE (mean +- SE over the repeats) vs epsilon, one panel per factor: the SS model at
    each level (solid), LDP-SGD where the factor changes it (dashed, same colour), the zero
    predictor (dotted black) and least squares at the base d (dash-dotted grey)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summarise(table)
    base_levels = settings[0]
    factors = [f for f in dict.fromkeys(s["factor"] for s in settings) if f != "base"] or ["base"]
    fig, axes = plt.subplots(1, len(factors), figsize=(3.4 * len(factors), 3.6), sharey=True, squeeze=False)
    zero = table.loc[table["method"] == "zero", "rmse"].mean()
    ols = table.loc[(table["method"] == "ols") & (table["setting"] == "base"), "rmse"].mean()
    for ax, factor in zip(axes[0], factors):
        shown = [settings[0], *(s for s in settings if s["factor"] == factor and s is not settings[0])]
        for k, s in enumerate(shown):
            colour = f"C{k}"
            level = "committed" if s["setting"] == "base" else s["setting"]
            changes_sgd = s["setting"] == "base" or any(s[f] != base_levels[f] for f in ("d", "delta"))
            for method, style in (("ss", "-"), ("ldp-sgd", "--")):
                if method == "ldp-sgd" and not changes_sgd:
                    continue
                g = summary[(summary["setting"] == s["setting"]) & (summary["method"] == method)].sort_values("epsilon")
                shift = 1.0 + 0.04 * (k - (len(shown) - 1) / 2)
                ax.errorbar(
                    g["epsilon"] * shift,
                    g["rmse_mean"],
                    yerr=g["rmse_se"],
                    color=colour,
                    ls=style,
                    marker="o" if method == "ss" else "s",
                    ms=3.5,
                    capsize=2,
                    label=f"SS {level}" if method == "ss" else f"LDP-SGD {level}",
                )
        ax.axhline(zero, color="black", ls=":", lw=1.2, label="predict 0")
        ax.axhline(ols, color="grey", ls="-.", lw=1.0, label="least squares, d = 4")
        ax.set_xscale("log")
        ax.set_xticks(sorted(table["epsilon"].unique()), [f"{e:g}" for e in sorted(table["epsilon"].unique())])
        ax.minorticks_off()
        ax.set_xlabel("epsilon")
        ax.set_title(factor)
        ax.legend(fontsize=6.5, loc="upper right")
    axes[0][0].set_ylabel("test RMSE (mean +- SE)")
    fig.suptitle("Kulkarni et al. Figure 4 (Wine): the SS model one factor at a time", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


# ------------------------------------------------------------------------------ the part
#: the committed full run's arguments (results/kulkarni2022/k4_sweep.json) and a small quick one
RUN: dict[str, dict[str, Any]] = {
    "full": {
        "settings": None,
        "epsilons": EPSILONS,
        "repeats": 10,
        "sampler": {"chains": 2, "warmup": 500, "draws": 500},
        "repeats_by": {"d=12": 3},
        "sampler_by": {"d=12": {"chains": 2, "warmup": 300, "draws": 300}},
    },
    "quick": {
        "settings": ("base", "ratios=opt"),
        "epsilons": (2.0,),
        "repeats": 2,
        "sampler": {"chains": 2, "warmup": 200, "draws": 200},
        "repeats_by": {},
        "sampler_by": {},
    },
}
#: the folder (inside OUT) of the part's saved tasks
FOLDER = "k4_sweep"


def reproduce_k4_sweep(
    out: str | Path, *, quick: bool = True, seed: int = 0, workers: int = 1, progress: bool = True
) -> dict[str, pd.DataFrame]:
    """Part ``k4_sweep`` of ``pystanprivacy reproduce kulkarni2022`` (REPRODUCTION.md, K4): the
    sweep with the arguments of :data:`RUN` on the shipped Wine data, tasks in
    ``out/k4_sweep/.tasks``; writes ``k4_sweep.{csv,json,png}`` into ``out``."""
    run = RUN["quick" if quick else "full"]
    settings = one_factor_grid(BASE, ALTERNATIVES, COMBINED)
    if run["settings"] is not None:
        settings = [s for s in settings if s["setting"] in run["settings"]]
    sampler = check_sampler(run["sampler"], SAMPLER)
    tasks = build_tasks(
        settings,
        epsilons=run["epsilons"],
        repeats=run["repeats"],
        sampler=sampler,
        repeats_by=run["repeats_by"],
        sampler_by=run["sampler_by"],
    )
    start = time.perf_counter()
    with part_folder(FOLDER):
        table = run_tasks(tasks, seed=seed, stream=STREAM, workers=workers, desc="K4 sweep", progress=progress)
    seconds = time.perf_counter() - start
    summary = summarise(table)
    out = Path(out)
    meta = {
        "settings": settings,
        "epsilons": list(run["epsilons"]),
        "repeats": run["repeats"],
        "repeats_by": dict(run["repeats_by"]),
        "sampler_by": {k: dict(v) for k, v in run["sampler_by"].items()},
        "splits": f"train/test split of seed r for repeat r = 0..{run['repeats'] - 1}",
        "sampler": sampler,
        "seed": seed,
        "stream": STREAM,
        "R": R,
        "R_y": R_Y,
        "opt_ratios": {str(d): optimal_ratios(d) for d in sorted({s["d"] for s in settings})},
        "workers": workers,
        "seconds": seconds,
    }
    write_results(out, NAME, table, meta, extra={"summary": summary.to_dict(orient="records")})
    plot(table, settings, out / f"{NAME}.png")
    return {NAME: table, f"{NAME}_summary": summary}


__all__ = [
    "ALTERNATIVES",
    "BASE",
    "COMBINED",
    "EPSILONS",
    "RUN",
    "SAMPLER",
    "STUDY",
    "build_tasks",
    "one_factor_grid",
    "optimal_ratios",
    "parse_theta",
    "plot",
    "ratio_values",
    "reproduce_k4_sweep",
    "rmse",
    "summarise",
    "sweep_task",
]
