"""Regression experiments of Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally Differentially
Private Bayesian Inference", Sec. 4.6:

* :func:`figure4` -- Figure 4: linear regression on Wine quality, test RMSE vs epsilon for the
  sufficient-statistics model (:class:`~pystanprivacy.models.kulkarni2022_regression.LinearRegressionSS`),
  LDP-SGD and the non-private Bayesian fit (optionally also the perturbed-inputs model).
* :func:`figure5` -- Figure 5: logistic regression on Adult, test AUC vs epsilon for the
  sufficient-statistics model (all training records), the perturbed-inputs model and LDP-SGD
  (both on a random 10K subsample, as in the paper) and the non-private fit.
* :func:`reproduce` -- both, written as CSV + JSON sidecars + PNG figures.

Predictions use the posterior mean of theta (RMSE: ``x' theta`` against the unclipped, centred
test targets; AUC: the ranking of ``x' theta``). The data come from
:mod:`pystanprivacy.experiments.kulkarni2022.data` (``data_dir`` or ``$PYSTANPRIVACY_DATA``); without the
files a clearly labelled synthetic stand-in is used and a notice is printed. Every
(epsilon, repeat) is an independent runner Task with its own SeedSequence, so results do not
depend on the number of workers. Seeds give reproducibility, not security.
"""
from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from ..._validation import check_epsilon, check_int, check_sampler
from . import chebyshev
from .ldp_sgd import ldp_sgd
from .data import RegressionData, regression_data
from ...models.kulkarni2022_regression import (
    DEFAULT_DELTA,
    LinearRegressionInputs,
    LinearRegressionSS,
    LogisticRegressionInputs,
    LogisticRegressionSS,
    NonPrivateLinearRegression,
    NonPrivateLogisticRegression,
)
from ...run.runner import Task, make_executor, run_tasks, write_results
from ...run.study import Study

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="kulkarni2022/regression", version=1)

PAPER = "kulkarni2022"
PREFIX = "kulkarni2022_regression"
FIG4_METHODS = ("ss", "ldp-sgd", "non-private")
FIG5_METHODS = ("ss", "inputs", "ldp-sgd", "non-private")
_ALL_FIG4 = ("ss", "inputs", "ldp-sgd", "non-private")

#: sizes of the two modes of :func:`reproduce`
QUICK: dict[str, Any] = {
    "fig4_epsilons": (1.0, 4.0, 16.0),
    "fig5_epsilons": (0.5, 2.0, 8.0),
    "repeats": 2,
    "fig5_inputs_epsilons": (2.0,),
    "subsample": 1000,
    "sampler": {"chains": 2, "warmup": 250, "draws": 250},
}
FULL: dict[str, Any] = {
    "fig4_epsilons": (0.5, 1.0, 2.0, 4.0, 8.0, 16.0),
    "fig5_epsilons": (0.25, 0.5, 0.8, 1.0, 2.0, 4.0, 8.0),
    "repeats": 30,
    "fig5_inputs_epsilons": None,          # all of fig5_epsilons
    "subsample": 10_000,
    "sampler": {"chains": 4, "warmup": 1000, "draws": 1000},
}


def _check_epsilons(epsilons: Sequence[float]) -> list[float]:
    eps = [check_epsilon(e, "epsilons[i]") for e in epsilons]
    if not eps:
        raise ValueError("epsilons must hold at least one value")
    return eps


def _check_figure_args(figure: str, data: RegressionData, task: str, epsilons: Sequence[float], repeats: int,
                       methods: Sequence[str], allowed: Sequence[str],
                       sampler: Mapping[str, int] | None) -> tuple[list[float], int, dict[str, int]]:
    if data.task != task:
        raise ValueError(f"{figure} needs {task}-regression data, got task {data.task!r}")
    eps = _check_epsilons(epsilons)
    repeats = check_int(repeats, "repeats", minimum=1)
    bad = sorted(set(methods) - set(allowed))
    if bad:
        raise ValueError(f"methods {bad} unknown; allowed: {list(allowed)}")
    return eps, repeats, check_sampler(sampler, QUICK["sampler"], min_chains=1)


# ------------------------------------------------------------------------------ metrics
def rmse(pred: np.ndarray, target: np.ndarray) -> float:
    """Root mean squared error."""
    return float(np.sqrt(np.mean((np.asarray(pred) - np.asarray(target)) ** 2)))


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (:func:`sklearn.metrics.roc_auc_score`: ties count one half);
    NaN when ``labels`` hold one class only (where scikit-learn raises)."""
    labels = np.asarray(labels).astype(bool)
    if labels.all() or not labels.any():
        return float("nan")
    return float(roc_auc_score(labels, scores))


def _diag(post) -> dict[str, Any]:
    rhat = post.rhat().get("theta")
    return {"max_rhat": float(np.nanmax(rhat)) if rhat is not None else float("nan"),
            "divergences": int(post.num_divergences), "fit_seconds": float(post.elapsed)}


# ------------------------------------------------------------------------------- tasks
def _bayes_fit(cls: Any, x: np.ndarray, y: np.ndarray, release_kwargs: Mapping[str, Any], rng: np.random.Generator,
               sampler: Mapping[str, int]) -> tuple[np.ndarray, dict[str, Any]]:
    """Release ``(x, y)`` with ``cls.release`` and fit ``cls()``: the posterior mean of theta and
    the diagnostics + wall time of release and fit."""
    t = time.perf_counter()
    post = cls().fit(cls.release(x, y, **release_kwargs, seed=rng), seed=rng, **sampler)
    theta = post.draws("theta").mean(axis=0)
    return theta, {**_diag(post), "seconds": time.perf_counter() - t}


@STUDY.task(programs=("kulkarni2022/linear_regression_inputs", "kulkarni2022/linear_regression_ss"))
def _fig4_task(*, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, R: float,
               R_y: float, epsilon: float, delta: float, repeat: int, methods: Sequence[str],
               sampler: Mapping[str, int], seed: np.random.SeedSequence) -> pd.DataFrame:
    # one independent stream per method: a method's result does not depend on which others run
    rngs = dict(zip(("ss", "inputs", "ldp-sgd"), (np.random.default_rng(s) for s in seed.spawn(3))))
    rows = []
    base = {"epsilon": epsilon, "delta": delta, "repeat": repeat}
    for method, cls in (("ss", LinearRegressionSS), ("inputs", LinearRegressionInputs)):
        if method in methods:
            theta, info = _bayes_fit(cls, x_train, y_train, dict(epsilon=epsilon, delta=delta, R=R, R_y=R_y),
                                     rngs[method], sampler)
            rows.append({**base, "method": method, "rmse": rmse(x_test @ theta, y_test), **info})
    if "ldp-sgd" in methods:
        t = time.perf_counter()
        res = ldp_sgd(x_train, y_train, loss="squared", epsilon=epsilon, delta=delta, seed=rngs["ldp-sgd"])
        rows.append({**base, "method": "ldp-sgd", "rmse": rmse(x_test @ res.theta, y_test), "max_rhat": np.nan,
                     "divergences": 0, "fit_seconds": np.nan, "seconds": time.perf_counter() - t,
                     "group_size": res.group_size})
    return pd.DataFrame(rows)


@STUDY.task(programs=("kulkarni2022/logistic_regression_inputs", "kulkarni2022/logistic_regression_ss"))
def _fig5_task(*, x_train: np.ndarray, y_train: np.ndarray, x_sub: np.ndarray, y_sub: np.ndarray,
               x_test: np.ndarray, y_test: np.ndarray, R: float, epsilon: float, delta: float, c: float,
               repeat: int, methods: Sequence[str], sampler: Mapping[str, int],
               seed: np.random.SeedSequence) -> pd.DataFrame:
    # one independent stream per method: a method's result does not depend on which others run
    rngs = dict(zip(("ss", "inputs", "ldp-sgd"), (np.random.default_rng(s) for s in seed.spawn(3))))
    rows = []
    base = {"epsilon": epsilon, "delta": delta, "repeat": repeat}
    # the SS model on every training record; the inputs model on the subsample, with the split c
    for method, cls, x, y, extra in (("ss", LogisticRegressionSS, x_train, y_train, {}),
                                     ("inputs", LogisticRegressionInputs, x_sub, y_sub, {"c": c})):
        if method in methods:
            theta, info = _bayes_fit(cls, x, y, dict(epsilon=epsilon, delta=delta, R=R, **extra), rngs[method],
                                     sampler)
            rows.append({**base, "method": method, "n_users": x.shape[0], "auc": roc_auc(x_test @ theta, y_test),
                         **info})
    if "ldp-sgd" in methods:
        t = time.perf_counter()
        res = ldp_sgd(x_sub, y_sub, loss="logistic", epsilon=epsilon, delta=delta, seed=rngs["ldp-sgd"])
        rows.append({**base, "method": "ldp-sgd", "n_users": x_sub.shape[0], "auc": roc_auc(x_test @ res.theta, y_test),
                     "max_rhat": np.nan, "divergences": 0, "fit_seconds": np.nan,
                     "seconds": time.perf_counter() - t, "group_size": res.group_size})
    return pd.DataFrame(rows)


@STUDY.task(programs=("kulkarni2022/linear_regression_nonprivate", "kulkarni2022/logistic_regression_nonprivate"))
def _nonprivate_task(*, task: str, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
                     y_test: np.ndarray, sampler: Mapping[str, int], seed: np.random.SeedSequence) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = time.perf_counter()
    model = NonPrivateLinearRegression() if task == "linear" else NonPrivateLogisticRegression()
    post = model.fit_nonprivate(x_train, y_train, seed=rng, **sampler)
    theta = post.draws("theta").mean(axis=0)
    metric = {"rmse": rmse(x_test @ theta, y_test)} if task == "linear" else {"auc": roc_auc(x_test @ theta, y_test)}
    return pd.DataFrame([{"epsilon": np.inf, "delta": 0.0, "repeat": 0, "method": "non-private",
                          "n_users": x_train.shape[0], **metric, **_diag(post), "seconds": time.perf_counter() - t}])


def _data_columns(table: pd.DataFrame, data: RegressionData) -> pd.DataFrame:
    table["data"] = data.name
    table["synthetic"] = data.synthetic
    table["d"] = data.d
    table["n_train"] = data.x_train.shape[0]
    return table


# -------------------------------------------------------------------------- experiments
def figure4(data: RegressionData, *, epsilons: Sequence[float], repeats: int, methods: Sequence[str] = FIG4_METHODS,
            delta: float = DEFAULT_DELTA, sampler: Mapping[str, int] | None = None, seed: int = 0, workers: int = 1,
            executor: Any = None, progress: bool | None = None) -> pd.DataFrame:
    """Figure 4: test RMSE vs epsilon for linear regression (one row per method x epsilon x
    repeat; the non-private fit once, with epsilon = inf)."""
    eps, repeats, sampler = _check_figure_args("figure4", data, "linear", epsilons, repeats, methods, _ALL_FIG4,
                                               sampler)
    arrays = dict(x_train=data.x_train, y_train=data.y_train, x_test=data.x_test, y_test=data.y_test)
    private = [m for m in methods if m != "non-private"]
    tasks = [Task(_fig4_task, dict(**arrays, R=data.R, R_y=data.R_y, epsilon=e, delta=delta, repeat=r,
                                   methods=private, sampler=sampler), label=f"figure4 eps={e} repeat={r}")
             for e in eps for r in range(repeats)] if private else []
    if "non-private" in methods:
        tasks.append(Task(_nonprivate_task, dict(task="linear", **arrays, sampler=sampler), label="figure4 non-private"))
    table = run_tasks(tasks, seed=seed, stream=f"{PREFIX}/figure4", workers=workers, executor=executor,
                      progress=progress, desc="Figure 4 (Wine)")
    return _data_columns(table, data)


def figure5(data: RegressionData, *, epsilons: Sequence[float], repeats: int, subsample: int = 10_000,
            inputs_epsilons: Sequence[float] | None = None, methods: Sequence[str] = FIG5_METHODS, c: float = 0.5,
            delta: float = DEFAULT_DELTA, sampler: Mapping[str, int] | None = None, seed: int = 0, workers: int = 1,
            executor: Any = None, progress: bool | None = None) -> pd.DataFrame:
    """Figure 5: test AUC vs epsilon for logistic regression. The SS model uses every training
    record; the perturbed-inputs model and LDP-SGD a random ``subsample`` (Sec. 4.6), drawn
    once from ``seed``. ``inputs_epsilons`` restricts the (slow) inputs model to some epsilons."""
    eps, repeats, sampler = _check_figure_args("figure5", data, "logistic", epsilons, repeats, methods, FIG5_METHODS,
                                               sampler)
    subsample = check_int(subsample, "subsample", minimum=10)
    inputs_eps = set(eps if inputs_epsilons is None else _check_epsilons(inputs_epsilons))
    pick = np.random.default_rng(np.random.SeedSequence([seed, 5])).permutation(data.x_train.shape[0])[:subsample]
    arrays = dict(x_train=data.x_train, y_train=data.y_train, x_test=data.x_test, y_test=data.y_test)
    private = [m for m in methods if m != "non-private"]
    tasks = []
    for e in eps:
        ms = [m for m in private if m != "inputs" or e in inputs_eps]
        if not ms:
            continue
        for r in range(repeats):
            tasks.append(Task(_fig5_task, dict(**arrays, x_sub=data.x_train[pick], y_sub=data.y_train[pick], R=data.R,
                                               epsilon=e, delta=delta, c=c, repeat=r, methods=ms, sampler=sampler),
                              label=f"figure5 eps={e} repeat={r}"))
    if "non-private" in methods:
        tasks.append(Task(_nonprivate_task, dict(task="logistic", **arrays, sampler=sampler), label="figure5 non-private"))
    table = run_tasks(tasks, seed=seed, stream=f"{PREFIX}/figure5", workers=workers, executor=executor,
                      progress=progress, desc="Figure 5 (Adult)")
    table = _data_columns(table, data)
    table["subsample"] = min(subsample, data.x_train.shape[0])
    return table


def summarise(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean and standard deviation of ``metric`` over repeats, per method and epsilon."""
    g = table.groupby(["method", "epsilon"], sort=True)[metric]
    out = g.agg(["mean", "std", "count"]).reset_index()
    return out.rename(columns={"mean": f"{metric}_mean", "std": f"{metric}_sd", "count": "repeats"})


def estimate_full_seconds(table4: pd.DataFrame, table5: pd.DataFrame, workers: int = 1) -> float:
    """Wall time of ``reproduce(quick=False)`` extrapolated from measured per-fit times:
    per method, the mean ``seconds`` of a quick run times the number of full-mode fits, scaled
    by the sampler's iterations (4 x 2000 vs quick's) and, for the inputs model, by the
    subsample size (its cost is linear in n)."""
    it_full = FULL["sampler"]["chains"] * (FULL["sampler"]["warmup"] + FULL["sampler"]["draws"])
    it_quick = QUICK["sampler"]["chains"] * (QUICK["sampler"]["warmup"] + QUICK["sampler"]["draws"])
    total = 0.0
    for table, n_eps, inputs in ((table4, len(FULL["fig4_epsilons"]), False), (table5, len(FULL["fig5_epsilons"]), True)):
        for method, g in table.groupby("method"):
            per = float(g["seconds"].mean())
            if method != "ldp-sgd":
                per *= it_full / it_quick
            if method == "inputs":
                per *= FULL["subsample"] / QUICK["subsample"]
            count = 1 if method == "non-private" else n_eps * FULL["repeats"]
            total += per * count
    return total / max(1, workers)


def reproduce(out_dir: str | Path, *, quick: bool = True, seed: int = 0, workers: int = 1, progress: bool = True,
              data_dir: str | os.PathLike | None = None) -> dict[str, pd.DataFrame]:
    """Figures 4 and 5 of the paper: ``<out_dir>/kulkarni2022_regression_figure{4,5}.csv`` (+
    ``_summary``), JSON sidecars and PNGs; and supplement Figure 6 (the Chebyshev approximation of
    Eq. 44, :mod:`~pystanprivacy.experiments.kulkarni2022.chebyshev`):
    ``kulkarni2022_chebyshev{,_summary,_grid}.csv`` and ``kulkarni2022_chebyshev.png``, the same
    in both modes.

    ``quick=True``: 3 epsilons x 2 repeats on Wine; 3 epsilons x 2 repeats on Adult with the
    inputs model at one epsilon and LDP-SGD on a 1,000-record subsample; 2 chains x 500
    iterations (about 2.5 minutes on 2 shared cores with the models compiled).
    ``quick=False``: the paper's 30 repeats, 6-7 epsilons, 10K subsample, 4 chains x 2000
    iterations. ``data_dir`` (or ``$PYSTANPRIVACY_DATA``) holds ``winequality-red.csv`` and ``winequality-white.csv``,
    ``adult.data`` and ``adult.test``; without them synthetic stand-ins are used (a notice
    is printed and the tables say ``synthetic=True``).
    """
    from . import figures  # matplotlib only when figures are drawn

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    size = QUICK if quick else FULL
    common = dict(seed=seed, quick=quick, workers=workers, data_dir=None if data_dir is None else str(data_dir))
    tables: dict[str, pd.DataFrame] = {}
    wine = regression_data("wine", data_dir, d=4, seed=seed, R_y=2.0)
    adult = regression_data("adult", data_dir, d=5, seed=seed)
    with make_executor(workers) as ex:
        run = dict(seed=seed, workers=workers, executor=ex, progress=progress)
        t = time.perf_counter()
        f4_args = dict(epsilons=list(size["fig4_epsilons"]), repeats=size["repeats"], methods=list(FIG4_METHODS),
                       delta=DEFAULT_DELTA, sampler=dict(size["sampler"]))
        tables["figure4"] = figure4(wine, **f4_args, **run)
        tables["figure4_summary"] = summarise(tables["figure4"], "rmse")
        meta = {**f4_args, **common, "data": wine.name, "synthetic": wine.synthetic, "preprocessing": wine.info,
                "stream": f"{PREFIX}/figure4", "seconds": time.perf_counter() - t}
        write_results(out, f"{PREFIX}_figure4", tables["figure4"], meta)
        write_results(out, f"{PREFIX}_figure4_summary", tables["figure4_summary"], meta)
        figures.regression(tables["figure4_summary"], "rmse",
                           f"Linear regression, {wine.name} (n = {wine.x_train.shape[0]}, d = {wine.d})",
                           out / f"{PREFIX}_figure4.png")

        t = time.perf_counter()
        f5_args = dict(epsilons=list(size["fig5_epsilons"]), repeats=size["repeats"], subsample=size["subsample"],
                       inputs_epsilons=size["fig5_inputs_epsilons"], methods=list(FIG5_METHODS), c=0.5,
                       delta=DEFAULT_DELTA, sampler=dict(size["sampler"]))
        tables["figure5"] = figure5(adult, **f5_args, **run)
        tables["figure5_summary"] = summarise(tables["figure5"], "auc")
        meta = {**f5_args, **common, "data": adult.name, "synthetic": adult.synthetic, "preprocessing": adult.info,
                "stream": f"{PREFIX}/figure5", "seconds": time.perf_counter() - t}
        if quick:
            meta["estimated_full_seconds"] = estimate_full_seconds(tables["figure4"], tables["figure5"], workers)
        write_results(out, f"{PREFIX}_figure5", tables["figure5"], meta)
        write_results(out, f"{PREFIX}_figure5_summary", tables["figure5_summary"], meta)
        figures.regression(tables["figure5_summary"], "auc",
                           f"Logistic regression, {adult.name} (n = {adult.x_train.shape[0]}, d = {adult.d})",
                           out / f"{PREFIX}_figure5.png")

    # supplement Figure 6: the Chebyshev approximation of Eq. 44 (numpy, well under a second)
    t = time.perf_counter()
    cheb_args = dict(dims=list(chebyshev.DIMS), radii=list(chebyshev.RADII), runs=50, samples=1000)
    tables["chebyshev"] = chebyshev.chebyshev_quality(**cheb_args, seed=seed)
    tables["chebyshev_summary"] = chebyshev.summarise_chebyshev(tables["chebyshev"])
    tables["chebyshev_grid"] = chebyshev.chebyshev_error_grid(radii=chebyshev.RADII)
    meta = {**cheb_args, **common, "stream": chebyshev.STREAM,
            "grid": {"means": list(chebyshev.MEANS), "sds": list(chebyshev.SDS)}, "seconds": time.perf_counter() - t}
    for name in ("chebyshev", "chebyshev_summary", "chebyshev_grid"):
        write_results(out, f"{PAPER}_{name}", tables[name], meta)
    figures.chebyshev(tables["chebyshev_summary"], tables["chebyshev_grid"], out / f"{PAPER}_chebyshev.png")
    return tables


__all__ = ["PAPER", "PREFIX", "QUICK", "FULL", "FIG4_METHODS", "FIG5_METHODS", "rmse", "roc_auc", "figure4",
           "figure5", "summarise", "estimate_full_seconds", "reproduce"]


def __getattr__(name: str) -> Any:
    if name == "plot_summary":  # moved to .figures in 0.2
        from . import figures

        warnings.warn(f"{__name__}.plot_summary is deprecated and will be removed in 0.3; use "
                      "pystanprivacy.experiments.kulkarni2022.figures.regression", DeprecationWarning, stacklevel=2)
        return figures.regression
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
