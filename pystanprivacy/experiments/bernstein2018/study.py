"""Experiments of Bernstein & Sheldon (2018), "Differentially Private Bayesian Inference for
Exponential Families", NeurIPS, Sec. 4: calibration and utility of private posteriors.

* :func:`calibration_task` -- one setting (model, n, ε): M trials with θ_i from the prior,
  data from p(x | θ_i), the Laplace release of the sufficient statistics, and the posterior
  of every method; returns one row per (method, trial) with the posterior quantile U_i of
  θ_i (Cook et al. 2006), the unbiased MMD² to the non-private posterior, the posterior
  mean/sd and the MCMC diagnostics of the trial.
* :func:`calibration` -- every setting, on the runner's executor.
* :func:`summarise_calibration` -- Figure 1a: KS statistic of U against Uniform(0, 1) per
  (model, n, ε, method), with the critical value at 1%.
* :func:`summarise_mmd` -- Figure 1c: mean MMD² to the non-private posterior.
* the figures 1a, 1b (empirical CDFs of U at n = 1000, ε = 0.01) and 1c are in
  :mod:`pystanprivacy.experiments.bernstein2018.figures`.
* :func:`reproduce` -- everything, written as CSV + JSON sidecars + PNG figures.

Methods: ``noise-aware (Stan)`` (:mod:`pystanprivacy.models.bernstein2018`, CLT models),
``noise-aware (Gibbs)`` (the paper's Algorithms 1-3), ``naive`` (conjugate update on the
noisy statistics), ``OPS`` (binomial only: 100 draws at ε/100 from the truncated,
tempered posterior, a0 = 0.1) and ``non-private``. For the exponential model ``naive`` is
the paper's "cheating" variant (noisy *untruncated* sum, same noise magnitude; not private);
``naive (truncated)`` -- the private release used as if it were the full sum -- is in the
table too but not in the figures. U of the naive and non-private posteriors is their exact
CDF at θ_i; U of the sampled posteriors is the randomised rank of θ_i among the draws.

Models and priors are those of the paper's experiments (its public code): Beta(10, 10),
Dirichlet(5, 5, 5) (U and the figures use the first category, the MMD the whole vector) and
Gamma(8, 2) for the exponential rate, with truncation bounds from the prior predictive's
central 95% (the paper keeps "the middle 95% of individuals"; here chosen without the true
θ or the data). Every Stan and Gibbs run is batched: the M trials of a setting are M
independent components of one product target.

Seeds give reproducibility, not security.
"""
from __future__ import annotations

import importlib
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int
from .baselines import (
    gibbs_posterior,
    naive_posterior,
    naive_untruncated_posterior,
    ops_binomial,
)
from ...sampling.evaluate import (
    calibration_summary,
    ks_critical_value,
    mmd2_unbiased,
    posterior_quantile,
)
from ...models.bernstein2018 import BinomialBeta, ExponentialGamma, MultinomialDirichlet
from ...run.runner import Task, make_executor, run_tasks, write_results
from ...run.study import Study

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="bernstein2018/calibration", version=1)

PAPER = "bernstein2018"
MODELS = ("binomial", "multinomial", "exponential")
STAN = "noise-aware (Stan)"
GIBBS = "noise-aware (Gibbs)"
NAIVE = "naive"
NAIVE_TRUNCATED = "naive (truncated)"
OPS = "OPS"
NONPRIVATE = "non-private"
#: methods drawn in the figures, in legend order
METHODS = (STAN, GIBBS, NAIVE, OPS, NONPRIVATE)
#: methods whose MMD² to the non-private posterior is computed (Figure 1c omits OPS)
MMD_METHODS = (STAN, GIBBS, NAIVE)

#: sizes of the two modes of :func:`reproduce`. NUTS: 2 chains (split R-hat needs them);
#: pystan moves every draw of every component through JSON, so the cost is ~ M × chains ×
#: (warm-up + draws) × the gradient cost, and the multinomial model (5 parameters per trial)
#: dominates. Gibbs: the paper's 2000 burn-in + 5000 iterations in the full mode.
QUICK: dict[str, Any] = {
    "ns": (10, 100, 1000, 10000),
    "epsilons": (0.01, 0.1),
    "trials": 100,
    "stan": {"chains": 2, "warmup": 200, "draws": 200},
    "gibbs": {"chains": 2, "burnin": 500, "iterations": 1000},
    "mmd_draws": 200,
}
FULL: dict[str, Any] = {
    "ns": (10, 100, 1000, 10000),
    "epsilons": (0.01, 0.1),
    "trials": 500,
    "stan": {"chains": 2, "warmup": 500, "draws": 500},
    "gibbs": {"chains": 2, "burnin": 2000, "iterations": 5000},
    "mmd_draws": 500,
}

_COLUMNS = ["paper", "model", "n", "epsilon", "method", "trial", "theta", "u", "mmd2", "post_mean", "post_sd",
            "rhat", "ess_bulk", "other_mode_mass", "run_seconds", "divergences"]


def make_model(model: str) -> BinomialBeta | MultinomialDirichlet | ExponentialGamma:
    """The model object of the paper's experiment ``model`` (default priors and bounds)."""
    if model == "binomial":
        return BinomialBeta(prior_alpha=10.0, prior_beta=10.0)
    if model == "multinomial":
        return MultinomialDirichlet(prior_alpha=(5.0, 5.0, 5.0))
    if model == "exponential":
        return ExponentialGamma(prior_shape=8.0, prior_rate=2.0)
    raise ValueError(f"model must be one of {list(MODELS)}, got {model!r}")


def simulate(model: str, n: int, trials: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """θ_i from the prior and the exact statistics of n records per trial.

    Returns ``theta`` (M,) or (M, K), ``stats`` (what is released: counts (M,), (M, K), or
    the truncated sums (M,)) and, for the exponential, ``full_sum`` (M,).
    """
    m = make_model(model)
    if model == "binomial":
        theta = rng.beta(m.prior_alpha, m.prior_beta, size=trials)
        return {"theta": theta, "stats": rng.binomial(n, theta).astype(float)}
    if model == "multinomial":
        theta = rng.dirichlet(m.prior_alpha, size=trials)
        return {"theta": theta, "stats": rng.multinomial(n, theta).astype(float)}
    theta = rng.gamma(m.prior_shape, 1.0 / m.prior_rate, size=trials)
    a, b = m.bounds
    s_hat = np.empty(trials)
    full = np.empty(trials)
    rows = max(1, 2_000_000 // n)  # records generated in chunks of ~2e6 values
    for i in range(0, trials, rows):
        x = rng.exponential(1.0 / theta[i:i + rows, None], size=(min(rows, trials - i), n))
        full[i:i + rows] = x.sum(axis=1)
        s_hat[i:i + rows] = np.where((x >= a) & (x <= b), x, 0.0).sum(axis=1)
    return {"theta": theta, "stats": s_hat, "full_sum": full}


def _thin(draws: np.ndarray, size: int) -> np.ndarray:
    """``size`` evenly spaced draws along axis 0 (all of them if there are fewer)."""
    if draws.shape[0] <= size:
        return draws
    return draws[np.linspace(0, draws.shape[0] - 1, size).round().astype(int)]


def _sampled_rows(draws: np.ndarray, theta: np.ndarray, reference: np.ndarray | None, post: Any, mmd_draws: int,
                  multinomial: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """U, MMD², mean, sd and diagnostics of a batched MCMC posterior with draws (L, M[, K])."""
    scalar = draws[..., 0] if multinomial else draws
    truth = theta[:, 0] if multinomial else theta
    out = {
        "u": posterior_quantile(scalar.T, truth, seed=rng),
        "post_mean": scalar.mean(axis=0),
        "post_sd": scalar.std(axis=0, ddof=1),
    }
    rhat = post.rhat()["theta"]
    ess = post.ess_bulk()["theta"]
    out["rhat"] = rhat[:, 0] if multinomial else rhat
    out["ess_bulk"] = ess[:, 0] if multinomial else ess
    if reference is not None:
        sub = _thin(draws, mmd_draws)
        out["mmd2"] = np.array([mmd2_unbiased(sub[:, i], reference[i]) for i in range(truth.shape[0])])
    return out


@STUDY.task(programs=("bernstein2018/binomial_beta", "bernstein2018/exponential_gamma", "bernstein2018/multinomial_dirichlet"))
def calibration_task(
    *,
    model: str,
    n: int,
    epsilon: float,
    trials: int,
    stan: Mapping[str, int],
    gibbs: Mapping[str, int],
    mmd_draws: int = 200,
    methods: Sequence[str] = (STAN, GIBBS, NAIVE, OPS, NONPRIVATE),
    mmd: bool | None = None,
    ops_samples: int = 100,
    a0: float = 0.1,
    seed: Any = None,
) -> pd.DataFrame:
    """One setting of Figure 1: ``trials`` calibration trials of ``model`` with ``n`` records
    at privacy ``epsilon``, every method in ``methods`` (OPS only for the binomial).

    ``stan``: ``chains``, ``warmup``, ``draws`` of the batched NUTS run; ``gibbs``:
    ``chains``, ``burnin``, ``iterations`` of the batched Gibbs run. ``mmd`` (default: binomial
    and multinomial, as in Figure 1c) computes MMD² to the non-private posterior from
    ``mmd_draws`` draws of each. ``seed``: an int, Generator or SeedSequence (the runner's).

    Returns a long table, one row per (method, trial), columns ``paper, model, n, epsilon,
    method, trial, theta, u, mmd2, post_mean, post_sd, rhat, ess_bulk, other_mode_mass,
    run_seconds, divergences`` (θ, U, mean and sd of the first category for the multinomial;
    ``other_mode_mass``: for the exponential Stan fit, the grid posterior mass on the other
    side of θ* from where the chains started, see
    :meth:`~pystanprivacy.models.bernstein2018.ExponentialGamma.start_values`).
    """
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    trials = check_int(trials, "trials", minimum=2)
    mmd_draws = check_int(mmd_draws, "mmd_draws", minimum=2)
    unknown = sorted(set(methods) - {STAN, GIBBS, NAIVE, NAIVE_TRUNCATED, OPS, NONPRIVATE})
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {[STAN, GIBBS, NAIVE, NAIVE_TRUNCATED, OPS, NONPRIVATE]}")
    rng = np.random.default_rng(seed)
    m = make_model(model)
    multinomial = model == "multinomial"
    mmd = model in ("binomial", "multinomial") if mmd is None else bool(mmd)
    data = simulate(model, n, trials, rng)
    theta = data["theta"]
    truth = theta[:, 0] if multinomial else theta
    release = m.release_statistics(data["stats"], n=n, epsilon=epsilon, seed=rng)
    nonpriv_stats = data["full_sum"] if model == "exponential" else data["stats"]
    nonpriv = m.fit_nonprivate(statistics=nonpriv_stats, n=n)
    reference = nonpriv.sample(mmd_draws, seed=rng) if mmd else None
    frames = []

    def add(method: str, values: Mapping[str, np.ndarray], seconds: float = np.nan, divergences: int = 0) -> None:
        frame = pd.DataFrame({"paper": PAPER, "model": model, "n": n, "epsilon": epsilon, "method": method,
                              "trial": np.arange(trials), "theta": truth})
        for col in ("u", "mmd2", "post_mean", "post_sd", "rhat", "ess_bulk", "other_mode_mass"):
            frame[col] = values.get(col, np.full(trials, np.nan))
        frame["run_seconds"] = seconds
        frame["divergences"] = divergences
        frames.append(frame)

    def closed_form(post: Any) -> dict[str, np.ndarray]:
        mean = post.mean()
        values = {"u": post.cdf(truth), "post_mean": mean[:, 0] if multinomial else mean,
                  "post_sd": post.marginal(0).std()}
        if mmd:
            draws = post.sample(mmd_draws, seed=rng)
            values["mmd2"] = np.array([mmd2_unbiased(draws[i], reference[i]) for i in range(trials)])
        return values

    if STAN in methods:
        t = time.perf_counter()
        extra = {}
        if model == "exponential":  # start in the global mode; record the other branch's mass
            theta0, other = m.start_values(release, chains=dict(stan).get("chains", 4), seed=rng)
            extra = {"init": [{"theta": row} for row in theta0]}
        post = m.fit(release, seed=rng, **dict(stan), **extra)
        seconds = time.perf_counter() - t
        draws = post.draws("theta")
        values = _sampled_rows(draws, theta, reference, post, mmd_draws, multinomial, rng)
        if model == "exponential":
            values["other_mode_mass"] = other
        add(STAN, values, seconds, post.num_divergences)
    if GIBBS in methods:
        t = time.perf_counter()
        g = dict(gibbs)
        post = gibbs_posterior(m, release, iterations=g["iterations"], burnin=g["burnin"], chains=g["chains"],
                               seed=rng)
        seconds = time.perf_counter() - t
        add(GIBBS, _sampled_rows(post.draws("theta"), theta, reference, post, mmd_draws, multinomial, rng), seconds)
    if NAIVE in methods:
        if model == "exponential":
            naive = naive_untruncated_posterior(m, data["full_sum"], n=n, epsilon=epsilon, seed=rng)
        else:
            naive = naive_posterior(m, release)
        add(NAIVE, closed_form(naive))
    if NAIVE_TRUNCATED in methods and model == "exponential":
        add(NAIVE_TRUNCATED, closed_form(naive_posterior(m, release)))
    if OPS in methods and model == "binomial":
        ops = ops_binomial(m, data["stats"], n=n, epsilon=epsilon, a0=a0, samples=ops_samples, seed=rng)
        draws = ops.params["theta"]  # (trials, samples)
        add(OPS, {"u": posterior_quantile(draws, truth, seed=rng), "post_mean": draws.mean(axis=1),
                  "post_sd": draws.std(axis=1, ddof=1)})
    if NONPRIVATE in methods:
        values = closed_form(nonpriv)
        values.pop("mmd2", None)
        add(NONPRIVATE, values)
    return pd.DataFrame(pd.concat(frames, ignore_index=True), columns=_COLUMNS)


def calibration(
    *,
    models: Sequence[str] = MODELS,
    ns: Sequence[int] = QUICK["ns"],
    epsilons: Sequence[float] = QUICK["epsilons"],
    trials: int = QUICK["trials"],
    stan: Mapping[str, int] = QUICK["stan"],
    gibbs: Mapping[str, int] = QUICK["gibbs"],
    mmd_draws: int = QUICK["mmd_draws"],
    methods: Sequence[str] = (STAN, GIBBS, NAIVE, NAIVE_TRUNCATED, OPS, NONPRIVATE),
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Every setting (model × n × ε) as one task on the runner (seeds spawned from ``seed``,
    stream ``"bernstein2018/calibration"``); the tables concatenated."""
    for model in models:
        make_model(model)  # unknown names fail before any work
    settings = [(model, int(n), float(eps)) for model in models for n in ns for eps in epsilons]
    tasks = [
        Task(calibration_task, dict(model=model, n=n, epsilon=eps, trials=trials, stan=dict(stan), gibbs=dict(gibbs),
                                    mmd_draws=mmd_draws, methods=tuple(methods)),
             label=f"{model} n={n} epsilon={eps}")
        for model, n, eps in settings
    ]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/calibration", workers=workers, executor=executor,
                     progress=progress, desc="bernstein2018 calibration")


def summarise_calibration(table: pd.DataFrame, alpha: float = 0.01) -> pd.DataFrame:
    """Figure 1a: KS statistic of U against Uniform(0, 1), its p-value and the critical value
    at ``alpha`` per (model, n, ε, method), with the share of trials whose MCMC R-hat
    exceeded 1.01 (sampled methods), their median bulk ESS and, for the exponential Stan fit,
    the share of trials with more than 1% of the posterior mass on the other side of θ*."""
    by = ["model", "n", "epsilon", "method"]
    out = calibration_summary(table, by, alpha=alpha)
    diag = table.groupby(by, sort=True).agg(
        rhat_above_1_01=("rhat", lambda r: float(np.mean(r > 1.01)) if r.notna().any() else np.nan),
        median_ess_bulk=("ess_bulk", "median"),
        other_mode_above_1pct=("other_mode_mass",
                               lambda m: float(np.mean(m > 0.01)) if m.notna().any() else np.nan),
    ).reset_index()
    return out.merge(diag, on=by, how="left")


def summarise_mmd(table: pd.DataFrame) -> pd.DataFrame:
    """Figure 1c: mean MMD² to the non-private posterior (and its standard error) per
    (model, n, ε, method), for the rows that have one."""
    rows = table.dropna(subset=["mmd2"])
    return rows.groupby(["model", "n", "epsilon", "method"], sort=True).agg(
        mmd2_mean=("mmd2", "mean"),
        mmd2_se=("mmd2", lambda x: float(np.std(x, ddof=1) / np.sqrt(len(x))) if len(x) > 1 else np.nan),
        trials=("mmd2", "size"),
    ).reset_index()


# ---------------------------------------------------------------------------- reproduce
#: the parts of :func:`reproduce` (``pystanprivacy reproduce bernstein2018 --parts ...``): the paper's
#: calibration and utility study (Figure 1), then the study that REPRODUCTION.md's B1a also rests on
PARTS = ("calibration", "exponential_modes")
#: (part, module, function) of those studies, in the order :func:`reproduce` runs them
_SUPPLEMENTARY_PARTS = (("exponential_modes", ".exponential_modes", "reproduce_exponential_modes"),)


def reproduce(
    out_dir: str | Path,
    *,
    quick: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    data_path: str | Path | None = None,
    parts: Sequence[str] = PARTS,
) -> dict[str, pd.DataFrame]:
    """Run the calibration and utility study of Sec. 4 and write
    ``<out_dir>/bernstein2018_{calibration,calibration_summary,mmd_summary}.csv`` (each with a
    JSON sidecar: arguments, seed, versions, Stan backend) and the figures
    ``bernstein2018_figure1{a,b,c}.png``.

    ``quick=True``: 100 trials per setting, n ∈ {10, 100, 1000, 10000}, ε ∈ {0.01, 0.1},
    short chains. ``quick=False``: 500 trials per setting (KS critical value 0.073 at 1%)
    and the paper's Gibbs run length (2000 burn-in + 5000 iterations).

    ``parts`` selects a subset of :data:`PARTS`: ``calibration`` (the above) and
    ``exponential_modes`` (REPRODUCTION.md B1a: the exponential posterior's modes on a θ grid
    against Stan and Gibbs, :mod:`.exponential_modes`; it reads part ``calibration``'s saved trials
    and keeps its own tasks in ``out_dir/exponential_modes/.tasks``).

    Returns the tables by name (``calibration``, ``calibration_summary``, ``mmd_summary``,
    ``exponential_modes``). The study simulates its data: ``data_path`` (the paper protocol's)
    must be None.
    """
    if data_path is not None:
        raise ValueError(f"data_path: {PAPER} simulates its data and reads no file, got {str(data_path)!r}")
    parts = tuple(parts)
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise ValueError(f"parts must be a non-empty subset of {PARTS}, got {parts!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, pd.DataFrame] = {}
    if "calibration" in parts:
        tables.update(_reproduce_calibration(out, quick=quick, seed=seed, workers=workers, progress=progress))
    for part, module, function in _SUPPLEMENTARY_PARTS:  # after the part whose saved trials they read
        if part in parts:
            run_part = getattr(importlib.import_module(module, __package__), function)
            tables.update(run_part(out, quick=quick, seed=seed, workers=workers, progress=progress))
    return tables


def _reproduce_calibration(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool
) -> dict[str, pd.DataFrame]:
    """Part ``calibration`` of :func:`reproduce`: Figure 1's study, tables and figures."""
    size = QUICK if quick else FULL
    args = dict(models=list(MODELS), ns=list(size["ns"]), epsilons=list(size["epsilons"]), trials=size["trials"],
                stan=dict(size["stan"]), gibbs=dict(size["gibbs"]), mmd_draws=size["mmd_draws"])
    t = time.perf_counter()
    with make_executor(workers) as ex:
        table = calibration(**args, seed=seed, workers=workers, executor=ex, progress=progress)
    seconds = time.perf_counter() - t
    tables = {
        "calibration": table,
        "calibration_summary": summarise_calibration(table),
        "mmd_summary": summarise_mmd(table),
    }
    meta = {**args, "seed": seed, "quick": quick, "workers": workers, "stream": f"{PAPER}/calibration",
            "seconds": seconds, "ks_critical_1pct": ks_critical_value(size["trials"], 0.01)}
    for name, frame in tables.items():
        write_results(out, f"{PAPER}_{name}", frame, meta)
    from . import figures  # matplotlib only when figures are drawn

    figures.figure1a(tables["calibration_summary"], out / f"{PAPER}_figure1a.png")
    ns, epsilons = list(size["ns"]), list(size["epsilons"])
    n_b = 1000 if 1000 in ns else ns[len(ns) // 2]  # the paper's panel: n = 1000, ε = 0.01
    eps_b = 0.01 if 0.01 in epsilons else min(epsilons)
    figures.figure1b(table, out / f"{PAPER}_figure1b.png", n=n_b, epsilon=eps_b)
    figures.figure1c(tables["mmd_summary"], out / f"{PAPER}_figure1c.png")
    return tables


__all__ = [
    "PAPER",
    "PARTS",
    "MODELS",
    "METHODS",
    "MMD_METHODS",
    "STAN",
    "GIBBS",
    "NAIVE",
    "NAIVE_TRUNCATED",
    "OPS",
    "NONPRIVATE",
    "QUICK",
    "FULL",
    "make_model",
    "simulate",
    "calibration_task",
    "calibration",
    "summarise_calibration",
    "summarise_mmd",
    "reproduce",
]

#: names moved to :mod:`.figures` in 0.2 -> their new names (removed in 0.3)
_MOVED_FIGURES = {"plot_figure1a": "figure1a", "plot_figure1b": "figure1b", "plot_figure1c": "figure1c"}


def __getattr__(name: str) -> Any:
    if name in _MOVED_FIGURES:
        from . import figures

        new = _MOVED_FIGURES[name]
        warnings.warn(f"{__name__}.{name} is deprecated and will be removed in 0.3; use "
                      f"pystanprivacy.experiments.bernstein2018.figures.{new}", DeprecationWarning, stacklevel=2)
        return getattr(figures, new)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
