"""Experiments of Kulkarni, Jälkö, Kaski & Honkela (2022), "Locally differentially private
Bayesian inference" -- the distribution-estimation half (the regression half is in
:mod:`pystanprivacy.experiments.kulkarni2022.regression`, which :func:`reproduce` calls at
its end when it is installed).

* :func:`calibration` -- Figures 1, 10, 11: fraction of runs whose central 50/70/90/95 %
  posterior intervals contain the data-generating parameter, drawn from the prior, vs ε,
  for the Gaussian (μ, σ) model (5000 users, clip [−5, 5]), the exponential model (1000
  users, clip 5) and the OUE histogram (1000 users, d = 6).
* :func:`histogram_rmse` -- Figures 3 and 9: RMSE of the posterior mean and of the
  least-squares-projected OUE point estimate vs N for θ = [0.7, 0.2, 0.1], and the
  fraction of unusable (zero mass on a category) or misordered solutions.
* :func:`kosarak_ecdf` -- Figure 2: mean absolute difference between the empirical CDFs of
  the private and non-private posteriors of each of d = 10 histogram probabilities, on
  the real Kosarak click-stream data: by default the shipped prefix (its first 36,683
  transactions, ``data/kosarak_prefix.dat.gz``), or a whole file given as ``data_path``.

Every Stan run is batched: one run holds many independent data sets as independent
components of a product target (each component an exact draw from its own posterior).
Seeds give reproducibility, not security.
"""
from __future__ import annotations

import hashlib
import importlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int, check_random_state
from ..._validation import check_sampler as _check_sampler_settings
from .oue import oue_projected_estimate, solution_quality
from .kosarak import KOSARAK_TRANSACTIONS, find_kosarak, histogram_records, load_kosarak
from ...models.kulkarni2022 import ExponentialLDP, GaussianLDP, HistogramOUE
from ...run.runner import Task, make_executor, run_tasks, task_seeds, write_results
from ...run.study import Study

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="kulkarni2022/distributions", version=1)

PAPER = "kulkarni2022"
LEVELS = (0.5, 0.7, 0.9, 0.95)
CALIBRATION_MODELS = ("gaussian", "exponential", "histogram")

#: NUTS settings of every batched run (the paper: 4 chains, half of each as warm-up)
SAMPLER: dict[str, int] = {"chains": 4, "warmup": 500, "draws": 500}
QUICK_SAMPLER: dict[str, int] = {"chains": 2, "warmup": 300, "draws": 300}

QUICK: dict[str, Any] = {
    "sampler": QUICK_SAMPLER,
    "gaussian": {"epsilons": (0.5, 2.0), "n_users": 1000, "repeats": 8, "batch": 1},
    "exponential": {"epsilons": (0.5, 2.0), "n_users": 1000, "repeats": 10, "batch": 10},
    "histogram": {"epsilons": (0.5, 2.0), "n_users": 1000, "repeats": 10, "batch": 10, "d": 6},
    "rmse": {"ns": (100, 1000, 10000), "epsilons": (0.5,), "repeats": 20},
    "kosarak": {"epsilons": (0.5, 2.0), "repeats": 3, "top": 100, "n_records": 11_000},
}
FULL: dict[str, Any] = {
    "sampler": SAMPLER,
    "gaussian": {"epsilons": (0.1, 0.3, 1.0, 3.0, 10.0), "n_users": 5000, "repeats": 500, "batch": 1},
    "exponential": {"epsilons": (0.1, 0.3, 1.0, 3.0, 10.0), "n_users": 1000, "repeats": 80, "batch": 10},
    "histogram": {"epsilons": (0.1, 0.3, 1.0, 3.0, 10.0), "n_users": 1000, "repeats": 100, "batch": 10, "d": 6},
    "rmse": {"ns": (100, 300, 1000, 3000, 10000, 30000), "epsilons": (0.5, 0.1, 1.0, 2.0), "repeats": 50},
    # the paper draws its 10 items from the top-10K of the whole file (990,002 transactions), for 11K
    # records; on the shipped prefix (36,683) the top-10K's items have ~29 clicks each, so the 10 items
    # are drawn from the top 100 (~1,200 clicks each: ~12K expected); the sidecar's "records" says how
    # many the draw gave
    "kosarak": {"epsilons": (0.1, 0.5, 1.0, 2.0, 4.0, 8.0), "repeats": 50, "top": 100, "n_records": 11_000},
}


def check_sampler(sampler: Mapping[str, Any] | None, default: Mapping[str, int] = SAMPLER) -> dict[str, int]:
    """``default`` (chains, warmup, draws) updated by ``sampler``, validated; unknown keys are
    a ``ValueError`` (:func:`pystanprivacy._validation.check_sampler`, one chain allowed)."""
    return _check_sampler_settings(sampler, default, min_chains=1)


def _coverage(draws: np.ndarray, truth: np.ndarray) -> dict[str, np.ndarray]:
    """Central-interval coverage flags and the posterior quantile of the truth.

    draws (S, K), truth (K,) → per column: ``quantile`` = fraction of draws below the
    truth, ``covered_<L>`` whether the truth lies in the central L interval.
    """
    out: dict[str, np.ndarray] = {"quantile": (draws < truth).mean(axis=0)}
    for level in LEVELS:
        lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
        out[f"covered_{int(round(level * 100))}"] = (lo <= truth) & (truth <= hi)
    return out


# ====================================================================== calibration
@STUDY.task(programs=("kulkarni2022/exponential", "kulkarni2022/gaussian", "kulkarni2022/histogram_oue"))
def calibration_task(*, model: str, epsilon: float, n_users: int, repeats: int, sampler: Mapping[str, int],
                     d: int = 6, seed: Any = None) -> pd.DataFrame:
    """``repeats`` calibration runs of ``model`` at ``epsilon`` in ONE batched Stan run.

    Each run draws its parameter from the prior, simulates ``n_users`` users, perturbs
    every user's record locally and fits the noise-aware model. One row per run ×
    parameter (``mu``/``sigma``, ``theta`` or ``theta[k]``) with the truth, posterior mean
    and sd, the posterior quantile of the truth and ``covered_50/70/90/95``.
    """
    rng = check_random_state(seed)
    start = time.perf_counter()
    if model == "gaussian":
        m = GaussianLDP()
        mu, sigma = m.sample_prior(repeats, seed=rng)
        x = rng.normal(mu[:, None], sigma[:, None], size=(repeats, n_users))
        post = m.fit(m.release(x, epsilon=epsilon, seed=rng), seed=rng, **sampler)
        names = ["mu", "sigma"]
        truth = np.column_stack([mu, sigma])
        draws = np.stack([post.draws("mu"), post.draws("sigma")], axis=-1)          # (S, R, 2)
    elif model == "exponential":
        m = ExponentialLDP()
        theta = m.sample_prior(repeats, seed=rng)
        x = rng.exponential(1.0 / theta[:, None], size=(repeats, n_users))
        post = m.fit(m.release(x, epsilon=epsilon, seed=rng), seed=rng, **sampler)
        names = ["theta"]
        truth = theta[:, None]
        draws = post.draws("theta")[..., None]
    elif model == "histogram":
        m = HistogramOUE()
        theta = rng.dirichlet(np.ones(d), size=repeats)
        u = rng.random((repeats, n_users, 1))
        x = (u > np.cumsum(theta, axis=1)[:, None, :]).sum(axis=2)               # categorical draws
        x = np.minimum(x, d - 1)
        post = m.fit(m.release(x, epsilon=epsilon, d=d, seed=rng), seed=rng, **sampler)
        names = [f"theta[{k}]" for k in range(d)]
        truth = theta
        draws = post.draws("theta")                                                 # (S, R, d)
    else:
        raise ValueError(f"model must be one of {list(CALIBRATION_MODELS)}, got {model!r}")
    seconds = time.perf_counter() - start
    rows = []
    for j, name in enumerate(names):
        cov = _coverage(draws[:, :, j], truth[:, j])
        rows.append(pd.DataFrame({
            "model": model, "epsilon": epsilon, "n_users": n_users, "repeat": np.arange(repeats),
            "parameter": name, "truth": truth[:, j], "post_mean": draws[:, :, j].mean(axis=0),
            "post_sd": draws[:, :, j].std(axis=0), **cov,
            "divergences": post.num_divergences, "stan_seconds": seconds, "batch_size": repeats,
        }))
    return pd.concat(rows, ignore_index=True)


def calibration(*, model: str, epsilons: Sequence[float], n_users: int, repeats: int, batch: int = 10,
                d: int = 6, sampler: Mapping[str, int] | None = None, seed: int = 0, workers: int = 1,
                executor: Any = None, progress: bool | None = None) -> pd.DataFrame:
    """Calibration runs of ``model`` (Figures 1, 10, 11): ``repeats`` runs per ε, in Stan
    runs of ``batch`` data sets each. See :func:`calibration_task` for the columns."""
    if model not in CALIBRATION_MODELS:
        raise ValueError(f"model must be one of {list(CALIBRATION_MODELS)}, got {model!r}")
    epsilons = [check_epsilon(e, "epsilons[i]") for e in epsilons]
    n_users = check_int(n_users, "n_users", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=1)
    batch = check_int(batch, "batch", minimum=1)
    smp = check_sampler(sampler)
    sizes = [min(batch, repeats - i) for i in range(0, repeats, batch)]
    tasks = [Task(calibration_task, dict(model=model, epsilon=e, n_users=n_users, repeats=s, sampler=smp, d=d),
                  label=f"calibration {model} eps={e} batch {b}")
             for e in epsilons for b, s in enumerate(sizes)]
    table = run_tasks(tasks, seed=seed, stream=f"{PAPER}/calibration/{model}", workers=workers, executor=executor,
                      progress=progress, desc=f"Kulkarni 2022 calibration ({model})")
    if table.empty:  # a saved-only read-back that found none of these tasks (all stale): no rows to number
        return table
    # renumber repeats within each epsilon across batches
    table["repeat"] = table.groupby(["epsilon", "parameter"]).cumcount()
    return table


def summarise_calibration(table: pd.DataFrame) -> pd.DataFrame:
    """Coverage (fraction of runs × parameters whose central interval holds the truth)
    per model × ε × level (and per parameter), with its binomial standard error."""
    rows = []
    for (model, eps, param), g in table.groupby(["model", "epsilon", "parameter"]):
        for level in LEVELS:
            col = f"covered_{int(round(level * 100))}"
            rows.append({"model": model, "epsilon": eps, "parameter": param, "level": level,
                         "coverage": g[col].mean(), "se": np.sqrt(level * (1 - level) / len(g)), "runs": len(g)})
    out = pd.DataFrame(rows)
    pooled = (table.assign(_k=1).groupby(["model", "epsilon"]))
    for (model, eps), g in pooled:
        for level in LEVELS:
            col = f"covered_{int(round(level * 100))}"
            out.loc[len(out)] = {"model": model, "epsilon": eps, "parameter": "all", "level": level,
                                 "coverage": g[col].mean(), "se": np.sqrt(level * (1 - level) / len(g)),
                                 "runs": len(g)}
    return out


# ====================================================================== histogram RMSE
THETA_RMSE = (0.7, 0.2, 0.1)


@STUDY.task(programs=("kulkarni2022/histogram_oue",))
def histogram_rmse_task(*, n_users: int, epsilon: float, repeats: int, sampler: Mapping[str, int],
                        theta: Sequence[float] = THETA_RMSE, seed: Any = None) -> pd.DataFrame:
    """``repeats`` data sets of ``n_users`` draws from ``theta``; OUE reports; the posterior
    mean (one batched Stan run) and the projected point estimate, with their RMSE and
    solution-quality flags. One row per method × repeat."""
    rng = check_random_state(seed)
    th = np.asarray(theta, dtype=float)
    d = th.size
    x = rng.choice(d, size=(repeats, n_users), p=th)
    model = HistogramOUE()
    release = model.release(x, epsilon=epsilon, d=d, seed=rng)
    start = time.perf_counter()
    post = model.fit(release, seed=rng, **sampler)
    seconds = time.perf_counter() - start
    bayes = post.draws("theta").mean(axis=0)                                         # (R, d)
    point = oue_projected_estimate(release.values, epsilon)                           # (R, d)
    rows = []
    for method, est in (("posterior mean", bayes), ("projected OUE estimate", point)):
        q = solution_quality(est, th)
        rows.append(pd.DataFrame({
            "method": method, "n_users": n_users, "epsilon": epsilon, "repeat": np.arange(repeats),
            "rmse": np.sqrt(((est - th) ** 2).mean(axis=1)),
            **{f"est_{k}": est[:, k] for k in range(d)},
            "unusable": q["unusable"], "misordered": q["misordered"], "bad": q["bad"],
            "stan_seconds": seconds if method == "posterior mean" else 0.0,
        }))
    return pd.concat(rows, ignore_index=True)


def histogram_rmse(*, ns: Sequence[int], epsilons: Sequence[float] = (0.5,), repeats: int = 50,
                   theta: Sequence[float] = THETA_RMSE, sampler: Mapping[str, int] | None = None, seed: int = 0,
                   workers: int = 1, executor: Any = None, progress: bool | None = None) -> pd.DataFrame:
    """Figures 3 and 9: one batched Stan run of ``repeats`` data sets per (N, ε)."""
    smp = check_sampler(sampler)
    tasks = [Task(histogram_rmse_task, dict(n_users=check_int(n, "ns[i]", minimum=1), epsilon=check_epsilon(e),
                                            repeats=check_int(repeats, "repeats", minimum=1), sampler=smp,
                                            theta=tuple(theta)),
                  label=f"histogram RMSE N={n} eps={e}")
             for e in epsilons for n in ns]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/histogram_rmse", workers=workers, executor=executor,
                     progress=progress, desc="Kulkarni 2022 histogram RMSE")


def summarise_histogram_rmse(table: pd.DataFrame) -> pd.DataFrame:
    """Mean RMSE (and sd) and the fractions unusable / misordered / either per method × ε × N."""
    g = table.groupby(["method", "epsilon", "n_users"])
    return g.agg(rmse=("rmse", "mean"), rmse_sd=("rmse", "std"), unusable=("unusable", "mean"),
                 misordered=("misordered", "mean"), bad=("bad", "mean"), repeats=("rmse", "size")).reset_index()


# ====================================================================== Kosarak ECDF
def ecdf_l1(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference between the empirical CDFs of samples ``a`` and ``b``,
    evaluated at every point of the pooled sample."""
    pts = np.sort(np.concatenate([a, b]))
    fa = np.searchsorted(np.sort(a), pts, side="right") / a.size
    fb = np.searchsorted(np.sort(b), pts, side="right") / b.size
    return float(np.abs(fa - fb).mean())


def _kosarak_data(kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The data file a :func:`kosarak_task` declares: its ``data_file`` (none when not given)."""
    return (kwargs["data_file"],) if kwargs.get("data_file") else ()


@STUDY.task(programs=("kulkarni2022/histogram_oue",), data=_kosarak_data)
def kosarak_task(*, categories: np.ndarray, d: int, epsilon: float, repeats: int, sampler: Mapping[str, int],
                 source: str, data_file: str | None = None, data_path: str | None = None,
                 seed: Any = None) -> pd.DataFrame:
    """``repeats`` fresh OUE releases of the same records; each private posterior (one
    batched Stan run) against the exact non-private Dirichlet posterior: one row per
    repeat × dimension with the mean absolute ECDF difference.

    ``categories`` are the records (their content keys the task); ``data_file`` names the file
    they were drawn from (found in ``data_path``, or ``$PYSTANPRIVACY_DATA`` / the shipped
    ``data/`` when ``None``): its digest is part of the task's key too
    (:mod:`pystanprivacy.run.study`). Neither is read here."""
    rng = check_random_state(seed)
    model = HistogramOUE()
    x = np.broadcast_to(categories, (repeats, categories.size))
    release = model.release(x, epsilon=epsilon, d=d, seed=rng)
    start = time.perf_counter()
    post = model.fit(release, seed=rng, **sampler)
    seconds = time.perf_counter() - start
    priv = post.draws("theta")                                                       # (S, R, d)
    nonpriv = model.fit_nonprivate(categories, d=d, draws=priv.shape[0], seed=rng).draws("theta")  # (S, d)
    rows = [{"source": source, "epsilon": epsilon, "repeat": r, "dimension": k,
             "ecdf_l1": ecdf_l1(priv[:, r, k], nonpriv[:, k]),
             "private_mean": float(priv[:, r, k].mean()), "nonprivate_mean": float(nonpriv[:, k].mean()),
             "n_records": categories.size, "stan_seconds": seconds}
            for r in range(repeats) for k in range(d)]
    return pd.DataFrame(rows)


def kosarak_ecdf(*, categories: np.ndarray, d: int, epsilons: Sequence[float], repeats: int, batch: int = 10,
                 source: str = "synthetic", data_file: str | None = None, data_path: str | None = None,
                 sampler: Mapping[str, int] | None = None, seed: int = 0, workers: int = 1, executor: Any = None,
                 progress: bool | None = None) -> pd.DataFrame:
    """Figure 2: ``repeats`` fresh releases per ε, in batched Stan runs of ``batch``
    (``data_file``, ``data_path``: the file the records came from, see :func:`kosarak_task`)."""
    smp = check_sampler(sampler)
    cats = np.asarray(categories, dtype=np.int64)
    repeats = check_int(repeats, "repeats", minimum=1)
    sizes = [min(check_int(batch, "batch", minimum=1), repeats - i) for i in range(0, repeats, batch)]
    tasks = [Task(kosarak_task, dict(categories=cats, d=d, epsilon=check_epsilon(e), repeats=s, sampler=smp,
                                     source=source, data_file=data_file, data_path=data_path),
                  label=f"kosarak {source} eps={e} batch {b}") for e in epsilons for b, s in enumerate(sizes)]
    table = run_tasks(tasks, seed=seed, stream=f"{PAPER}/kosarak/{source}", workers=workers, executor=executor,
                      progress=progress, desc=f"Kulkarni 2022 Kosarak ({source})")
    table["repeat"] = table.groupby(["epsilon", "dimension"]).cumcount()
    return table


def summarise_kosarak(table: pd.DataFrame) -> pd.DataFrame:
    """Mean (over repeats) absolute ECDF difference per source × ε × dimension."""
    return (table.groupby(["source", "epsilon", "dimension"])
            .agg(ecdf_l1=("ecdf_l1", "mean"), ecdf_l1_sd=("ecdf_l1", "std"), repeats=("ecdf_l1", "size"))
            .reset_index())


def kosarak_provenance(file: Path, sessions: Sequence[np.ndarray]) -> dict[str, Any]:
    """The sidecar fields of the Figure 2 study's data: ``data`` ("real"), ``kosarak_file`` (its
    name), ``kosarak_sha256`` (of the file's bytes, compressed ones for a ``.gz``),
    ``transactions`` (sessions read), ``prefix`` (fewer than the whole file's
    :data:`~.kosarak.KOSARAK_TRANSACTIONS`) and ``data_note``, one line saying so."""
    digest = hashlib.sha256()
    with open(file, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    n = len(sessions)
    prefix = n < KOSARAK_TRANSACTIONS
    note = (f"real Kosarak, a prefix: its first {n:,} of {KOSARAK_TRANSACTIONS:,} transactions" if prefix
            else f"real Kosarak, {n:,} transactions")
    return {"data": "real", "kosarak_file": file.name, "kosarak_sha256": digest.hexdigest(), "transactions": n,
            "prefix": prefix, "data_note": note}


# ====================================================================== reproduce
REGRESSION_MODULE = "pystanprivacy.experiments.kulkarni2022.regression"


def run_regression_half(out_dir: str | Path, **kwargs: Any) -> dict[str, pd.DataFrame]:
    """Call ``reproduce(out_dir, **kwargs)`` of :data:`REGRESSION_MODULE` if that module
    exists; return its tables (``{}`` when the module is not installed). Only a missing
    module *itself* is skipped: an import error inside it propagates."""
    try:
        regression = importlib.import_module(REGRESSION_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != REGRESSION_MODULE:
            raise
        return {}
    result = regression.reproduce(out_dir, **kwargs)
    return dict(result) if isinstance(result, Mapping) else {}


#: the parts of :func:`reproduce` (``pystanprivacy reproduce kulkarni2022 --parts ...``): the paper's figures,
#: then the studies that REPRODUCTION.md's verdicts also rest on
PARTS = ("calibration", "histogram_rmse", "kosarak", "regression", "exponential_check", "k4_sweep", "ldp_sgd_tuned")
#: (part, module, function) of those studies, in the order :func:`reproduce` runs them
_SUPPLEMENTARY_PARTS = (
    ("exponential_check", ".exponential_check", "reproduce_exponential_check"),
    ("k4_sweep", ".k4_sweep", "reproduce_k4_sweep"),
    ("ldp_sgd_tuned", ".ldp_sgd_tuned", "reproduce_ldp_sgd_tuned"),
)


def reproduce(out_dir: str | Path, *, quick: bool = True, seed: int = 0, workers: int = 1, progress: bool = True,
              data_path: str | Path | None = None, parts: Sequence[str] = PARTS) -> dict[str, pd.DataFrame]:
    """Run every experiment of the paper; write ``<out_dir>/kulkarni2022_<name>.csv`` with
    JSON sidecars and the figures ``kulkarni2022_{calibration,histogram_rmse,kosarak}.png``;
    then, if :mod:`pystanprivacy.experiments.kulkarni2022.regression` exists, its
    ``reproduce`` (Figures 4-5), so that one command reproduces the whole paper.

    ``quick=True``: 2 ε values, 20 runs each, 1000 users (a few minutes once the models
    are compiled). ``quick=False``: the paper's sizes (500 runs of 5000 users for the
    Gaussian calibration, 80 for the exponential, 100 for the histogram, 50 for the
    histogram RMSE and Kosarak comparisons).

    The Figure 2 study (part ``kosarak``) runs on the real Kosarak click-stream data: by default
    the shipped prefix ``data/kosarak_prefix.dat.gz`` (its first 36,683 of 990,002 transactions;
    ``$PYSTANPRIVACY_DATA`` is searched for that file first), or ``data_path``
    (``pystanprivacy reproduce kulkarni2022 --data PATH``): a Kosarak file (one click-stream
    session per line, space-separated integer item ids, plain or gzip-compressed; or a folder
    holding ``kosarak.dat``). Its sidecar names the file, its sha256 and how many transactions
    it holds (a prefix when fewer than the whole file's). A missing file is a
    ``FileNotFoundError`` raised before any experiment runs. Wine quality and Adult (Figures
    4-5) come from the shipped ``data/`` (or ``$PYSTANPRIVACY_DATA``).

    ``parts`` selects a subset of :data:`PARTS`: ``calibration`` (Figures 1, 10, 11),
    ``histogram_rmse`` (Figure 3), ``kosarak`` (Figure 2), ``regression`` (Figures 4-5). Every
    part draws from its own seed stream, so a part's tables do not depend on which others run.
    Then the studies the verdicts also rest on: ``exponential_check`` (K11: the exponential
    calibration checked by quadrature, :mod:`.exponential_check`, from part ``calibration``'s
    table), ``k4_sweep`` (K4: the SS model one factor at a time, :mod:`.k4_sweep`) and
    ``ldp_sgd_tuned`` (K4, K5: LDP-SGD tuned on validation users, :mod:`.ldp_sgd_tuned`, beside
    part ``regression``'s tables); the last two keep their tasks in ``out_dir/k4_sweep/.tasks``
    and ``out_dir/ldp_sgd_tuned/.tasks``.
    """
    from . import figures as kplots

    parts = tuple(parts)
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise ValueError(f"parts must be a non-empty subset of {PARTS}, got {parts!r}")
    if data_path is not None and "kosarak" not in parts:
        raise ValueError("data_path is a Kosarak file for the Figure 2 study; it needs 'kosarak' in parts")
    # resolve the Kosarak file first: a wrong --data or a missing prefix fails before minutes of sampling
    real = find_kosarak(data_path) if "kosarak" in parts else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    size = QUICK if quick else FULL
    sampler = dict(size["sampler"])
    common = dict(seed=seed, quick=quick, workers=workers)
    tables: dict[str, pd.DataFrame] = {}
    with make_executor(workers) as ex:
        run = dict(seed=seed, workers=workers, executor=ex, progress=progress)

        if "calibration" in parts:
            t = time.perf_counter()
            fits = []
            for model in CALIBRATION_MODELS:
                cfg = dict(size[model])
                fits.append(calibration(model=model, epsilons=cfg.pop("epsilons"), sampler=sampler, **cfg, **run))
            tables["calibration"] = pd.concat(fits, ignore_index=True)
            tables["calibration_summary"] = summarise_calibration(tables["calibration"])
            meta = {**{m: size[m] for m in CALIBRATION_MODELS}, "sampler": sampler, **common,
                    "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_calibration", tables["calibration"], meta)
            write_results(out, f"{PAPER}_calibration_summary", tables["calibration_summary"], meta)
            kplots.calibration(tables["calibration_summary"], out / f"{PAPER}_calibration.png")

        if "histogram_rmse" in parts:
            t = time.perf_counter()
            cfg = dict(size["rmse"])
            tables["histogram_rmse"] = histogram_rmse(ns=cfg["ns"], epsilons=cfg["epsilons"], repeats=cfg["repeats"],
                                                      sampler=sampler, **run)
            tables["histogram_rmse_summary"] = summarise_histogram_rmse(tables["histogram_rmse"])
            meta = {**cfg, "theta": THETA_RMSE, "sampler": sampler, **common, "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_histogram_rmse", tables["histogram_rmse"], meta)
            write_results(out, f"{PAPER}_histogram_rmse_summary", tables["histogram_rmse_summary"], meta)
            kplots.histogram_rmse(tables["histogram_rmse_summary"], out / f"{PAPER}_histogram_rmse.png")

        if "kosarak" in parts:
            t = time.perf_counter()
            cfg = dict(size["kosarak"])
            data_rng = check_random_state(task_seeds(seed, 1, stream=f"{PAPER}/kosarak/data")[0])
            sessions = load_kosarak(real)
            cats, items = histogram_records(sessions, d=10, n_records=cfg["n_records"], top=cfg["top"], seed=data_rng)
            # the shipped prefix is keyed by its digest where the default search finds it; a given
            # file by its digest at the given path
            tables["kosarak"] = kosarak_ecdf(
                categories=cats, d=10, epsilons=cfg["epsilons"], repeats=cfg["repeats"], source="kosarak",
                data_file=real.name, data_path=None if data_path is None else str(real), sampler=sampler, **run)
            tables["kosarak_summary"] = summarise_kosarak(tables["kosarak"])
            meta = {**cfg, "sources": ["kosarak"], **kosarak_provenance(real, sessions), "items": items.tolist(),
                    "records": int(cats.size), "sampler": sampler, **common, "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_kosarak", tables["kosarak"], meta)
            write_results(out, f"{PAPER}_kosarak_summary", tables["kosarak_summary"], meta)
            kplots.kosarak(tables["kosarak_summary"], out / f"{PAPER}_kosarak.png",
                           titles={"kosarak": meta["data_note"]})

    if "regression" in parts:
        result = run_regression_half(out, quick=quick, seed=seed, workers=workers, progress=progress)
        tables.update({f"regression_{k}" if k in tables else k: v for k, v in result.items()})
    for part, module, function in _SUPPLEMENTARY_PARTS:  # after the parts whose tables they read
        if part in parts:
            run_part = getattr(importlib.import_module(module, __package__), function)
            tables.update(run_part(out, quick=quick, seed=seed, workers=workers, progress=progress))
    return tables


__all__ = [
    "PAPER", "PARTS", "LEVELS", "SAMPLER", "QUICK", "FULL", "THETA_RMSE", "check_sampler",
    "calibration", "calibration_task", "summarise_calibration",
    "histogram_rmse", "histogram_rmse_task", "summarise_histogram_rmse",
    "kosarak_ecdf", "kosarak_task", "kosarak_provenance", "summarise_kosarak", "ecdf_l1", "reproduce", "run_regression_half",
]
