"""Experiments of Jewson, Ghalebikesabi & Holmes (2023), "Differentially private statistical
inference through beta-divergence one posterior sampling", NeurIPS (Sec. 5, Appendix B).

* :func:`logistic` -- Figure 2 (log parameter RMSE on simulated data, test ROC-AUC on
  UCI data, vs n) and Figures 7-8 (correct-sign accuracy) for beta-D-Bayes, Chaudhuri et al.
  output perturbation (lambda = 1/(9n) and 1/9), Minami et al. (delta = 1e-5) and the
  non-private posterior mean (PM, the standard posterior w = 1); with ``d`` varied at
  n = 1000, the logistic row of Figure 10 (:func:`features`).
* :func:`~.networks.neural` -- Figures 3 and 9 (neural networks vs n), in :mod:`.networks`, and
  :func:`~.network_features.neural_features` -- Figure 10's network rows (vs d), whose d = 2
  cell at full scale is Figures 3/9's simulated n = 1000 tasks, shared (:mod:`.network_features`).
* :func:`attack` -- Figures 4 and 11: the Bayes-optimal membership-inference attack of
  Remark 1 / Appendix A.5 on the worst-case neighbours D = {(1, 1), (0, 0)} and
  D' = {(-1, 1), (0, 0)} (feature, label; one coefficient, no intercept). Each OPS posterior
  is sampled ONCE at length (one Stan run per data set and method/epsilon, never one per
  round); the attack rounds use independent positions of those draws. Reported: the attack
  success rate and the empirical epsilon lower bound from the false-positive/negative counts
  with Clopper-Pearson bounds (:func:`pystanprivacy.privacy.audit.epsilon_lower_bound`), next to the
  log parameter RMSE of the method at n = 1000, d = 2 on simulated data.
* :func:`reproduce` -- all of them, written as CSV + JSON sidecars + PNG figures.

Every independent fit is a :class:`~pystanprivacy.run.runner.Task` with a SeedSequence-derived
seed, so tables do not depend on the number of workers. Seeds give reproducibility, not
security.

Choices where the paper is silent (stated in the sidecars too): d = 2 (intercept + one
feature) for the simulated logistic data, intercept centred (:func:`pystanprivacy.experiments.jewson2023.data.simulate_logistic`);
tanh hidden units; refused (non-converged) releases are kept as rows with ``released`` False
and no metric.

Chaudhuri et al.'s rows use the paper's noise scale 2 / (n lambda epsilon) per coordinate
(:data:`CHAUDHURI_CALIBRATION`), so that they are the paper's baseline. With p coefficients
that noise is (p epsilon, 0)-DP, not (epsilon, 0)-DP: Theorem 4 (Appendix A.4.1) bounds the L1
sensitivity by 2 / (n lambda), a step that holds for p = 1 only
(:func:`~pystanprivacy.experiments.jewson2023.baselines.chaudhuri_sensitivity`). The rows carry
``epsilon_guarantee``, the epsilon the release really has (p = 2 on simulated data, 7 on Adult,
10 on Abalone).

The neural-network tasks (Figures 3, 9 and the network rows of Figure 10) live in
:mod:`.networks`, with the variance bound they use (``EXPERIMENT_S2``, where we depart from
the paper); what both studies share is in :mod:`.common`.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..._validation import check_epsilon, check_int, check_random_state, check_sampler
from ...privacy.audit import epsilon_lower_bound
from .baselines import (
    CHAUDHURI_LAMBDAS,
    MinamiGibbsLogistic,
    chaudhuri_output_perturbation,
    chaudhuri_sensitivity,
    dpsgd_available,
    logistic_regression,
    minami_lipschitz,
    minami_weight,
    regularised_logistic_regression,
)
from .common import MINAMI_DELTA, PAPER, SAMPLER, rmse, roc_auc
from .data import load_uci, simulate_logistic, subsample
from .network_features import neural_features, shares_figure_cell
from .networks import EXPERIMENT_S2, NEURAL_METHODS, neural, neural_task
from ...models.jewson2023 import (
    ATTACK_D,
    ATTACK_D_PRIME,
    OPS_THRESHOLDS,
    LogisticRegressionBetaD,
    betad_loss_bernoulli,
    gibbs_loss_bernoulli,
)
from ...run.runner import Task, make_executor, run_tasks, task_seeds, write_results
from ...run.study import Study
from .common import uci_files

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="jewson2023/logistic", version=1)

#: method names of the logistic-regression experiments
LOGISTIC_METHODS = ("beta-D", "Chaudhuri 1/(9n)", "Chaudhuri 1/9", "Minami", "PM (non-private)")
#: methods of the membership-inference attack
ATTACK_METHODS = ("beta-D", "Chaudhuri 1/(9n)", "Chaudhuri 1/9", "Minami")

#: the noise of the Chaudhuri rows: the paper's (Theorem 4), whose guarantee is p epsilon
CHAUDHURI_CALIBRATION = "paper"

QUICK: dict[str, Any] = {
    "sampler": {"chains": 4, "warmup": 1000, "draws": 100},
    "nn_sampler": {"chains": 2, "warmup": 500, "draws": 200},
    "logistic_sim_ns": (100, 1000),
    "logistic_sim_epsilons": (0.5, 5.0),
    "logistic_uci": ("adult",),
    "logistic_uci_ns": (100, 1000),
    "logistic_uci_epsilons": (0.5, 5.0),
    "logistic_repeats": 1,
    "attack_epsilons": (0.2, 1.0, 2.0, 7.0, 10.0, 20.0),
    "attack_rmse_repeats": 1,
    "attack_rounds": 5_000,
    "nn_ns": (50, 100),
    "nn_epsilons": (5.0,),
    "nn_regression_uci": (),
    "nn_classification_uci": (),
    "nn_repeats": 1,
    "features_ds": (2, 5),
    "features_n": 200,
    "features_epsilons": (5.0,),
    "features_repeats": 1,
    "nn_features_ds": (2, 5),
    "nn_features_n": 100,
    "nn_features_epsilons": (5.0,),
    "nn_features_repeats": 1,
}
FULL: dict[str, Any] = {
    "sampler": dict(SAMPLER),
    "nn_sampler": dict(SAMPLER),
    "logistic_sim_ns": (50, 100, 200, 500, 1000),
    "logistic_sim_epsilons": (0.2, 0.3, 0.5, 1.0, 2.0, 5.0),
    "logistic_uci": ("adult", "abalone"),
    "logistic_uci_ns": (10, 20, 50, 100, 200, 500, 1000),
    "logistic_uci_epsilons": (0.2, 0.5, 1.0, 5.0),
    "logistic_repeats": 10,
    "attack_epsilons": (0.2, 1.0, 2.0, 7.0, 10.0, 20.0),
    "attack_rmse_repeats": 10,
    "attack_rounds": 50_000,
    "nn_ns": (100, 200, 500, 1000),
    # epsilon = 0.2 too: the paper's Figure 9 claim is made "for epsilon > 0.2"
    "nn_epsilons": (0.2, 0.5, 1.0, 5.0),
    "nn_regression_uci": ("wine",),
    "nn_classification_uci": ("abalone",),
    "nn_repeats": 10,
    # Figure 10, logistic row (App. B: n = 1000; the paper does not list its d or epsilon values)
    "features_ds": (2, 5, 10, 20),
    "features_n": 1000,
    "features_epsilons": (0.2, 0.5, 1.0, 5.0),
    "features_repeats": 10,
    # Figure 10, network rows: the same d, n and epsilon grid as its logistic row
    "nn_features_ds": (2, 5, 10, 20),
    "nn_features_n": 1000,
    "nn_features_epsilons": (0.2, 0.5, 1.0, 5.0),
    "nn_features_repeats": 10,
}


def nn_figure_grid(size: Mapping[str, Any]) -> dict[str, Any]:
    """Figures 3 and 9's simulated grid in ``size`` (:data:`QUICK` or :data:`FULL`), whose cell at
    Figure 10's d and n part ``nn_features`` shares (:mod:`.network_features`)."""
    return dict(ns=size["nn_ns"], epsilons=size["nn_epsilons"], repeats=size["nn_repeats"])


# ----------------------------------------------------------------------------- metrics
def correct_sign_accuracy(theta: np.ndarray, reference: np.ndarray) -> float:
    """Share of coefficients whose sign agrees with the reference (Figures 7-8)."""
    return float(np.mean(np.sign(theta) == np.sign(reference)))


# ----------------------------------------------------------------------------- logistic
def _logistic_data(dataset: str, n_obs: int, d: int, data_seed: Any, data_path: Any) -> tuple[Any, np.ndarray]:
    """Training/test data and the reference coefficients (truth, or sklearn-default LR on
    the whole training split for UCI data)."""
    if dataset == "simulated":
        data = simulate_logistic(n_obs, d, n_test=1000, seed=data_seed)
        return data, data.truth["theta"]
    full = load_uci(dataset, data_path, seed=np.random.default_rng(0))  # one fixed 10 % test split per data set
    reference = logistic_regression(full.X, full.y)
    return subsample(full, n_obs, seed=check_random_state(data_seed)), reference


@STUDY.task(programs=("jewson2023/logistic",), data=uci_files)
def logistic_task(
    *,
    dataset: str,
    n_obs: int,
    epsilons: Sequence[float],
    repeat: int,
    data_seed: Any,
    d: int = 2,
    data_path: str | Path | None = None,
    methods: Sequence[str] = LOGISTIC_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: Any = None,
) -> pd.DataFrame:
    """One data set (simulated with ``d`` coefficients, or a subsample of ``n_obs`` rows of a
    UCI training split) and every method at every epsilon: one row per (method, epsilon) with
    the released coefficients' RMSE to the truth (simulated), test ROC-AUC, correct-sign
    accuracy (vs the truth, or vs non-private sklearn-default logistic regression on the
    whole training split for UCI data), ``released`` and the failed checks of refused draws."""
    sampler = check_sampler(sampler, SAMPLER)
    rng = check_random_state(seed)
    data, reference = _logistic_data(dataset, n_obs, d, data_seed, data_path)
    X, y = data.X, data.y
    rows: list[dict[str, Any]] = []

    def add(method: str, eps: float, theta: np.ndarray | None, seconds: float, **extra: Any) -> None:
        row = {"dataset": dataset, "n_obs": data.n, "d": data.n_features, "repeat": repeat, "method": method,
               "epsilon": eps, "released": theta is not None, "seconds": seconds}
        if theta is not None:
            row["rmse"] = rmse(theta, reference) if data.truth is not None else np.nan
            row["auc"] = roc_auc(data.y_test, data.X_test @ theta)
            row["csa"] = correct_sign_accuracy(theta, reference)
        row.update(extra)
        rows.append(row)

    betad = LogisticRegressionBetaD()
    minami = MinamiGibbsLogistic(delta=MINAMI_DELTA)
    for eps in epsilons:
        eps = check_epsilon(eps)
        if "beta-D" in methods:
            t = time.perf_counter()
            out = betad.try_sample_one(X, y, epsilon=eps, seed=rng, **sampler)
            add("beta-D", eps, None if out.params is None else out.params["theta"], time.perf_counter() - t,
                beta=out.details["beta"], problems="; ".join(out.problems))
        for name, rule in CHAUDHURI_LAMBDAS.items():
            method = f"Chaudhuri {name}"
            if method in methods:
                t = time.perf_counter()
                lam = rule(data.n)
                rel = chaudhuri_output_perturbation(X, y, epsilon=eps, lam=lam, calibration=CHAUDHURI_CALIBRATION,
                                                    seed=rng)
                add(method, eps, np.asarray(rel.values), time.perf_counter() - t, lam=lam,
                    epsilon_guarantee=rel.record.epsilon)
        if "Minami" in methods:
            t = time.perf_counter()
            out = minami.try_sample_one(X, y, epsilon=eps, seed=rng, **sampler)
            add("Minami", eps, None if out.params is None else out.params["theta"], time.perf_counter() - t,
                w=minami.weight(eps, data.n_features), problems="; ".join(out.problems))
    if "PM (non-private)" in methods:
        t = time.perf_counter()
        post = betad.fit_nonprivate(X, y, seed=rng, **sampler)
        add("PM (non-private)", math.inf, post.draws("theta").mean(axis=0), time.perf_counter() - t, w=1.0,
            problems="; ".join(post.check(OPS_THRESHOLDS, variables=["theta"])))
    return pd.DataFrame(rows)


def logistic(
    *,
    datasets: Sequence[str] = ("simulated",),
    ns: Sequence[int] = (100, 1000),
    epsilons: Sequence[float] = (0.5, 5.0),
    repeats: int = 2,
    d: int = 2,
    data_path: str | Path | None = None,
    methods: Sequence[str] = LOGISTIC_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    stream: str = "logistic",
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figures 2, 7 and 8: every (data set, n, repeat) is one task fitting every method at
    every epsilon on the same data."""
    repeats = check_int(repeats, "repeats", minimum=1)
    unknown = sorted(set(methods) - set(LOGISTIC_METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; allowed: {list(LOGISTIC_METHODS)}")
    settings = [(ds, n, r) for ds in datasets for n in ns for r in range(repeats)]
    data_seeds = task_seeds(seed, len(settings), stream=f"{PAPER}/{stream}/data")
    tasks = [
        Task(logistic_task, dict(dataset=ds, n_obs=int(n), epsilons=[float(e) for e in epsilons], repeat=r,
                                 data_seed=s, d=d, data_path=data_path, methods=list(methods), sampler=sampler),
             label=f"logistic {ds} n={n} repeat={r}")
        for (ds, n, r), s in zip(settings, data_seeds)
    ]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/{stream}", workers=workers, executor=executor,
                     progress=progress, desc="Jewson 2023 logistic")


def features(
    *,
    ds: Sequence[int] = (2, 5, 10, 20),
    n_obs: int = 1000,
    epsilons: Sequence[float] = (0.2, 0.5, 1.0, 5.0),
    repeats: int = 10,
    methods: Sequence[str] = LOGISTIC_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figure 10, logistic row (Appendix B, "Sensitivity in number of features"): simulated
    logistic data with ``n_obs`` records and ``d`` coefficients (the intercept included) for
    every ``d`` in ``ds``, every method at every epsilon (:func:`logistic`; each d draws its
    data from its own stream, ``features-d<d>``). ``rmse`` is the root mean square over the
    d coefficients, the paper's RMSE "divided by the number of dimensions"."""
    ds = [check_int(d, "ds[i]", minimum=2) for d in ds]
    n_obs = check_int(n_obs, "n_obs", minimum=2)
    fits = [logistic(datasets=["simulated"], ns=[n_obs], epsilons=epsilons, repeats=repeats, d=d, methods=methods,
                     sampler=sampler, seed=seed, stream=f"features-d{d}", workers=workers, executor=executor,
                     progress=progress)
            for d in ds]
    return pd.concat(fits, ignore_index=True)


def summarise(table: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("dataset", "method", "epsilon", "n_obs")) -> pd.DataFrame:
    """Mean and standard error of ``metrics`` over repeats (released draws only), with the
    number of runs and of refused releases."""
    rows = []
    for key, g in table.groupby(list(by), dropna=False, sort=True):
        row = dict(zip(by, key))
        ok = g[g["released"].astype(bool)]
        row.update(runs=len(g), refused=int((~g["released"].astype(bool)).sum()))
        for m in metrics:
            if m not in g:
                continue
            v = ok[m].dropna()
            row[f"{m}_mean"] = float(v.mean()) if len(v) else np.nan
            row[f"{m}_se"] = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else np.nan
            if m == "rmse":
                lv = np.log(v[v > 0])
                row["log_rmse_mean"] = float(lv.mean()) if len(lv) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- attack
def _log_normaliser(loss_fn: Any, X: np.ndarray, y: np.ndarray, prior_sd: float, grid: np.ndarray) -> float:
    """log ∫ N(theta; 0, prior_sd^2) exp(-sum_i loss_i(theta)) dtheta for a 1-d theta, by the
    trapezoid rule on a fine grid in log space."""
    logp = stats.norm.logpdf(grid, 0.0, prior_sd) - loss_fn(y[:, None], X[:, :1] * grid[None, :]).sum(axis=0)
    m = logp.max()
    return float(m + np.log(np.trapezoid(np.exp(logp - m), grid)))


def log_normaliser_ratio(loss_fn: Any, prior_sd: float = 3.0) -> float:
    """log Z(D) - log Z(D') of an OPS posterior on the attack's neighbours, by quadrature
    (1-d theta)."""
    (X, y), (Xp, yp) = ATTACK_D, ATTACK_D_PRIME
    grid = np.linspace(-60.0, 60.0, 240_001)
    return _log_normaliser(loss_fn, X, y, prior_sd, grid) - _log_normaliser(loss_fn, Xp, yp, prior_sd, grid)


def ops_log_ratio(theta: np.ndarray, loss_fn: Any, log_z_ratio: float) -> np.ndarray:
    """log p(theta | D') - log p(theta | D) of an OPS posterior on the attack's neighbours
    (Remark 1 / A.5): the loss difference at theta, l(D) - l(D'), plus
    ``log_z_ratio`` = log Z(D) - log Z(D') (:func:`log_normaliser_ratio`)."""
    (X, y), (Xp, yp) = ATTACK_D, ATTACK_D_PRIME
    theta = np.asarray(theta, dtype=float).ravel()
    loss_d = loss_fn(y[:, None], X[:, :1] * theta[None, :]).sum(axis=0)
    loss_dp = loss_fn(yp[:, None], Xp[:, :1] * theta[None, :]).sum(axis=0)
    return loss_d - loss_dp + log_z_ratio


def normaliser_ratio_mc(draws_d: np.ndarray, loss_fn: Any) -> float:
    """Remark 1's Monte-Carlo estimate of log(Z(D') / Z(D)) = log E_{pi(.|D)}[exp(l(D_l) - l(D'_l))]
    from draws of the posterior given D (what an attacker without quadrature would use)."""
    (X, y), (Xp, yp) = ATTACK_D, ATTACK_D_PRIME
    t = np.asarray(draws_d, dtype=float).ravel()
    diff = loss_fn(y[:, None], X[:, :1] * t[None, :]).sum(axis=0) - loss_fn(yp[:, None], Xp[:, :1] * t[None, :]).sum(axis=0)
    m = diff.max()
    return float(m + np.log(np.mean(np.exp(diff - m))))


@STUDY.task(programs=("jewson2023/logistic",))
def attack_task(
    *,
    method: str,
    epsilon: float,
    rounds: int,
    beta: float | None = None,
    prior_sd: float = 3.0,
    warmup: int = 1000,
    chains: int = 4,
    thin: int = 5,
    alpha: float = 0.05,
    seed: Any = None,
) -> pd.DataFrame:
    """The Bayes-optimal membership-inference attack of Remark 1 on the worst-case data sets
    for one method at claimed privacy ``epsilon``.

    The mechanism's outputs on D and on D' are sampled once each at length: ``rounds``
    draws (``chains`` chains of ``rounds / chains`` kept draws, every ``thin``-th iteration, after
    ``warmup``) from each OPS posterior
    (beta-D-Bayes with beta = 1 + 2/epsilon, or the given ``beta`` to audit a deliberately
    mis-calibrated one; Minami's Gibbs posterior), or ``rounds`` exact noise draws for
    Chaudhuri et al. The attacker says "D'" when p(theta | D') > p(theta | D) (Remark 1; the OPS
    normalisers by quadrature). :func:`~pystanprivacy.privacy.audit.epsilon_lower_bound` turns the
    false-positive and false-negative counts into an epsilon lower bound valid with probability
    1 - ``alpha`` (Clopper-Pearson, Bonferroni; delta = 1e-5 for Minami). The binomial counts
    treat the kept MCMC draws as independent: thinning makes them nearly so, and their bulk ESS
    is reported (``ess_d``, ``ess_d_prime``; close to ``rounds`` means the assumption holds).
    """
    if method not in ATTACK_METHODS:
        raise ValueError(f"method must be one of {list(ATTACK_METHODS)}, got {method!r}")
    epsilon = check_epsilon(epsilon)
    rounds = check_int(rounds, "rounds", minimum=chains)
    rng = check_random_state(seed)
    (X, y), (Xp, yp) = ATTACK_D, ATTACK_D_PRIME
    delta = 0.0
    row: dict[str, Any] = {"method": method, "epsilon": epsilon, "rounds": rounds, "thin": thin}
    t0 = time.perf_counter()
    if method.startswith("Chaudhuri"):
        lam = CHAUDHURI_LAMBDAS[method.split(" ", 1)[1]](X.shape[0])
        th_d = regularised_logistic_regression(X, y, lam=lam)[0]
        th_dp = regularised_logistic_regression(Xp, yp, lam=lam)[0]
        # one coefficient (p = 1): the paper's noise scale is the epsilon-DP one
        scale = chaudhuri_sensitivity(X.shape[0], lam, X.shape[1]) / epsilon
        pool_d = th_d + rng.laplace(0.0, scale, rounds)
        pool_dp = th_dp + rng.laplace(0.0, scale, rounds)

        def says_d_prime(t: np.ndarray) -> np.ndarray:
            return np.abs(t - th_dp) < np.abs(t - th_d)

        row.update(lam=lam, ess_d=float(rounds), ess_d_prime=float(rounds), rhat_max=1.0)
    else:
        model = LogisticRegressionBetaD(prior_sd=prior_sd)
        per_chain = int(math.ceil(rounds / chains))
        if method == "beta-D":
            b = model.beta(epsilon) if beta is None else float(beta)
            fit_kw: dict[str, Any] = {"beta": b}
            bb = b

            def loss_fn(yy: np.ndarray, eta: np.ndarray) -> np.ndarray:
                return betad_loss_bernoulli(yy, eta, bb)

            row.update(beta=b, epsilon_of_beta=model.epsilon(b))
        else:
            w = minami_weight(epsilon, lipschitz=minami_lipschitz(1), m_pi=1.0 / prior_sd ** 2, delta=MINAMI_DELTA)
            fit_kw = {"w": w}
            delta = MINAMI_DELTA

            def loss_fn(yy: np.ndarray, eta: np.ndarray) -> np.ndarray:
                return gibbs_loss_bernoulli(yy, eta, w)

            row.update(w=w)
        pools, ess, rhat = [], [], []
        for Xs, ys in ((X, y), (Xp, yp)):
            post = model.generalised_posterior(Xs, ys, seed=rng, chains=chains, warmup=warmup,
                                               draws=per_chain * thin, thin=thin, **fit_kw)
            pools.append(rng.permutation(post.draws("theta")[:, 0])[:rounds])
            ess.append(float(post.ess_bulk()["theta"][0]))
            rhat.append(float(post.rhat()["theta"][0]))
        pool_d, pool_dp = pools
        log_z_ratio = log_normaliser_ratio(loss_fn, prior_sd)

        def says_d_prime(t: np.ndarray) -> np.ndarray:
            return ops_log_ratio(t, loss_fn, log_z_ratio) > 0.0

        row.update(ess_d=ess[0], ess_d_prime=ess[1], rhat_max=max(rhat), log_z_ratio_quadrature=log_z_ratio,
                   log_z_ratio_mc=-normaliser_ratio_mc(pool_d, loss_fn))

    def events(t: np.ndarray) -> np.ndarray:
        e = says_d_prime(np.asarray(t).ravel()).astype(np.int64)
        return np.column_stack([e, 1 - e])

    audit = epsilon_lower_bound(lambda n: pool_d[:n], lambda n: pool_dp[:n], n_draws=rounds, events=events,
                                delta=delta, alpha=alpha)
    fp = float(np.mean(says_d_prime(pool_d)))      # says D' when the output came from D
    fn = float(np.mean(~says_d_prime(pool_dp)))    # says D when it came from D'
    row.update(
        false_positive=fp,
        false_negative=fn,
        success=0.5 * (1.0 - fp) + 0.5 * (1.0 - fn),
        epsilon_lb=audit.epsilon_lb,
        audit_event=audit.event,
        delta=delta,
        alpha=alpha,
        seconds=time.perf_counter() - t0,
    )
    return pd.DataFrame([row])


def attack(
    *,
    epsilons: Sequence[float] = (0.2, 1.0, 2.0, 7.0, 10.0, 20.0),
    methods: Sequence[str] = ATTACK_METHODS,
    rounds: int = 10_000,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figures 4 and 11: :func:`attack_task` for every method and epsilon."""
    tasks = [Task(attack_task, dict(method=m, epsilon=float(e), rounds=int(rounds)), label=f"attack {m} eps={e}")
             for m in methods for e in epsilons]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/attack", workers=workers, executor=executor,
                     progress=progress, desc="Jewson 2023 attack")


# ----------------------------------------------------------------------------- reproduce
#: the UCI file of each data set (in the ``data_path`` folder or ``$PYSTANPRIVACY_DATA``)
UCI_FILES: dict[str, str] = {"adult": "adult.data", "abalone": "abalone.data", "wine": "winequality-red.csv"}


#: the parts of :func:`reproduce` (``pystanprivacy reproduce jewson2023 --parts ...``)
#: the paper's figures first, then the studies that REPRODUCTION.md's verdicts also rest on (:mod:`.supplementary`)
PARTS = ("logistic", "attack", "nn_regression", "nn_classification", "features", "nn_features",
         "dpsgd_settings", "dpsgd_tuned", "paired", "banknote", "counterparts", "paper_design")
#: the UCI data sets of each part, by the keys of ``QUICK``/``FULL`` that list them
_PART_UCI = {"logistic": ("logistic_uci",), "nn_regression": ("nn_regression_uci",),
             "nn_classification": ("nn_classification_uci",), "counterparts": ("logistic_uci",),
             "dpsgd_settings": ("nn_regression_uci", "nn_classification_uci"),
             "dpsgd_tuned": ("nn_regression_uci", "nn_classification_uci")}


def _check_parts(parts: Sequence[str]) -> tuple[str, ...]:
    parts = tuple(parts)
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise ValueError(f"parts must be a non-empty subset of {PARTS}, got {parts!r}")
    return parts


def uci_available(size: Mapping[str, Any], data_path: str | Path | None = None,
                  parts: Sequence[str] = PARTS) -> tuple[set[str], list[str]]:
    """The UCI data sets that the ``parts`` of a run configuration (``QUICK`` or ``FULL``) use
    and whose files are found, and notes on those skipped.

    With ``data_path`` (a folder) every needed file must be there: a missing one raises the
    loader's ``FileNotFoundError`` naming the file and the folder. Without it the files are
    looked up in ``$PYSTANPRIVACY_DATA`` and missing data sets are skipped with a note.
    """
    from ...datasets.uci import find_data_file

    needed = sorted({ds for part in _check_parts(parts) for key in _PART_UCI.get(part, ()) for ds in size[key]})
    if data_path is not None:
        folder = Path(data_path)
        if not folder.is_dir():
            raise ValueError(f"data_path must be a folder holding the UCI files {sorted(UCI_FILES.values())}, "
                             f"got {str(data_path)!r} (not a folder)")
        for ds in needed:
            find_data_file(UCI_FILES[ds], folder)
        return set(needed), []
    have: set[str] = set()
    notes: list[str] = []
    for ds in needed:
        try:
            find_data_file(UCI_FILES[ds])
            have.add(ds)
        except FileNotFoundError as exc:
            notes.append(f"UCI {ds} panels skipped: {exc}")
    return have, notes


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
    """Run every experiment and write ``<out_dir>/jewson2023_<name>.csv`` (+ JSON sidecars)
    and the figures ``jewson2023_figure{2,3,4,7,9,10,11}.png``. ``parts`` selects a subset of
    :data:`PARTS`: ``logistic`` (Figures 2, 7), ``attack`` (Figures 4, 11), ``nn_regression``
    (Figure 3), ``nn_classification`` (Figure 9), ``features`` (Figure 10, its logistic row),
    ``nn_features`` (Figure 10, its two network rows); each draws from its own seed streams, so
    its tables do not depend on which other parts run. Then the studies the verdicts also rest on
    (:mod:`.supplementary`): ``dpsgd_settings`` (DP-SGD with the authors' code's settings),
    ``dpsgd_tuned`` (DP-SGD tuned as App. B describes), ``paired`` (the network rows compared
    data set by data set), ``banknote`` (Figure 9 on banknote, in ``out_dir/banknote``),
    ``counterparts`` (Figure 6's Chaudhuri half, Figure 11 at 10,000 rounds) and
    ``paper_design`` (the logistic experiments on Sec. 5's stated design); ``paired`` and
    ``counterparts`` read the tables of the paper's parts from ``out_dir``. Figure 10 holds the
    rows of whichever of
    ``features`` and ``nn_features`` have run into ``out_dir`` (the other's summary is read
    back from there).

    ``quick=True``: a few n and epsilon, one repeat, 4 chains x (1000 + 100) per logistic fit
    (2 x (500 + 200) for the networks: the gate asks for ESS >= 25 per chain on all 20
    reference outputs, which 2 x 100 draws often miss; the released draw is still one uniform
    draw), 5,000 attack rounds per data set (the paper's 10,000
    rounds in all). ``quick=False``: the paper's grids with 10 repeats, 4 chains x (1000 + 100)
    and 50,000 attack rounds per data set.

    ``data_path`` is a folder holding the UCI files the run needs (:data:`UCI_FILES`;
    ``--quick`` uses only adult.data, ``--full`` also abalone.data and winequality-red.csv).
    A given folder without one of them raises the loader's ``FileNotFoundError`` (naming the
    file and the folder) before anything runs. Without ``data_path`` the files are looked up
    in ``$PYSTANPRIVACY_DATA`` (:func:`pystanprivacy.datasets.uci.find_data_file`) and the panels of a
    data set not found there are skipped (the sidecars say so).
    """
    from . import figures as plots

    size = QUICK if quick else FULL
    parts = _check_parts(parts)
    have_uci, notes = uci_available(size, data_path, parts)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = dict(seed=seed, quick=quick, workers=workers, sampler=dict(size["sampler"]), nn_sampler=dict(size["nn_sampler"]))
    tables: dict[str, pd.DataFrame] = {}
    if not dpsgd_available():
        notes.append("DP-SGD and SGD rows left out: the optional extra [dpsgd] (torch, opacus) is not installed")
    with make_executor(workers) as ex:
        run = dict(seed=seed, workers=workers, executor=ex, progress=progress)

        if "logistic" in parts:
            t = time.perf_counter()
            datasets = ["simulated"]
            fits = [logistic(datasets=datasets, ns=size["logistic_sim_ns"], epsilons=size["logistic_sim_epsilons"],
                              repeats=size["logistic_repeats"], sampler=size["sampler"], stream="logistic-sim", **run)]
            uci = [ds for ds in size["logistic_uci"] if ds in have_uci]
            if uci:
                fits.append(logistic(datasets=uci, ns=size["logistic_uci_ns"],
                                      epsilons=size["logistic_uci_epsilons"], repeats=size["logistic_repeats"],
                                      data_path=data_path, sampler=size["sampler"], stream="logistic-uci", **run))
            tables["logistic"] = pd.concat(fits, ignore_index=True)
            tables["logistic_summary"] = summarise(tables["logistic"], ["rmse", "auc", "csa"])
            meta = {**common, **{k: size[k] for k in size if k.startswith("logistic")}, "notes": notes,
                    "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_logistic", tables["logistic"], meta)
            write_results(out, f"{PAPER}_logistic_summary", tables["logistic_summary"], meta)
            plots.figure2(tables["logistic_summary"], out / f"{PAPER}_figure2.png")
            plots.figure7(tables["logistic_summary"], out / f"{PAPER}_figure7.png")

        if "attack" in parts:
            t = time.perf_counter()
            rm = logistic(datasets=["simulated"], ns=[1000], epsilons=size["attack_epsilons"],
                          repeats=size["attack_rmse_repeats"], methods=[m for m in LOGISTIC_METHODS if m != "PM (non-private)"],
                          sampler=size["sampler"], stream="attack-rmse", **run)
            att = attack(epsilons=size["attack_epsilons"], rounds=size["attack_rounds"], **run)
            tables["attack"] = merge_attack_rmse(att, rm)
            tables["attack_rmse"] = rm
            meta = {**common, "epsilons": size["attack_epsilons"], "rounds": size["attack_rounds"],
                    "rmse_repeats": size["attack_rmse_repeats"], "D": "{(1, 1), (0, 0)}", "D_prime": "{(-1, 1), (0, 0)}",
                    "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_attack", tables["attack"], meta)
            write_results(out, f"{PAPER}_attack_rmse", rm, meta)
            plots.figure4(tables["attack"], out / f"{PAPER}_figure4.png")
            plots.figure11(tables["attack"], out / f"{PAPER}_figure11.png")

        if "features" in parts:
            t = time.perf_counter()
            tables["features"] = features(ds=size["features_ds"], n_obs=size["features_n"],
                                          epsilons=size["features_epsilons"], repeats=size["features_repeats"],
                                          sampler=size["sampler"], **run)
            tables["features_summary"] = summarise(tables["features"], ["rmse", "auc", "csa"],
                                                   by=("dataset", "method", "epsilon", "d"))
            meta = {**common, **{k: size[k] for k in size if k.startswith("features")},
                    "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_features", tables["features"], meta)
            write_results(out, f"{PAPER}_features_summary", tables["features_summary"], meta)
            _figure10(out, tables)

        if "nn_features" in parts:
            t = time.perf_counter()
            tables["nn_features"] = pd.concat(
                [neural_features(task=task, ds=size["nn_features_ds"], n_obs=size["nn_features_n"],
                                 epsilons=size["nn_features_epsilons"], repeats=size["nn_features_repeats"],
                                 figure=nn_figure_grid(size), sampler=size["nn_sampler"], **run)
                 for task in ("regression", "classification")], ignore_index=True)
            tables["nn_features_summary"] = summarise(tables["nn_features"], ["test_rmse", "auc"],
                                                      by=("task", "dataset", "method", "epsilon", "d"))
            shared = [d for d in size["nn_features_ds"]
                      if shares_figure_cell(d=d, n_obs=size["nn_features_n"], epsilons=size["nn_features_epsilons"],
                                            repeats=size["nn_features_repeats"], figure=nn_figure_grid(size))]
            meta = {**common, **{k: size[k] for k in size if k.startswith("nn_features")}, "s2": EXPERIMENT_S2,
                    "notes": notes + [f"d = {d}: the data sets and releases of Figures 3 and 9 at simulated "
                                      f"n = {size['nn_features_n']} (the same tasks, shared)" for d in shared],
                    "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_nn_features", tables["nn_features"], meta)
            write_results(out, f"{PAPER}_nn_features_summary", tables["nn_features_summary"], meta)
            _figure10(out, tables)

        for task, fig, uci_key, metric in (("regression", "figure3", "nn_regression_uci", "test_rmse"),
                                           ("classification", "figure9", "nn_classification_uci", "auc")):
            if f"nn_{task}" not in parts:
                continue
            t = time.perf_counter()
            fits = [neural(task=task, datasets=["simulated"], ns=size["nn_ns"], epsilons=size["nn_epsilons"],
                            repeats=size["nn_repeats"], sampler=size["nn_sampler"], **run)]
            uci = [ds for ds in size[uci_key] if ds in have_uci]
            if uci:
                fits.append(neural(task=task, datasets=uci, ns=size["nn_ns"], epsilons=size["nn_epsilons"],
                                    repeats=size["nn_repeats"], data_path=data_path, sampler=size["nn_sampler"], **run))
            name = f"nn_{task}"
            tables[name] = pd.concat(fits, ignore_index=True)
            tables[f"{name}_summary"] = summarise(tables[name], [metric])
            meta = {**common, "ns": size["nn_ns"], "epsilons": size["nn_epsilons"], "repeats": size["nn_repeats"],
                    "s2": EXPERIMENT_S2, "notes": notes, "seconds": time.perf_counter() - t}
            write_results(out, f"{PAPER}_{name}", tables[name], meta)
            write_results(out, f"{PAPER}_{name}_summary", tables[f"{name}_summary"], meta)
            getattr(plots, fig)(tables[f"{name}_summary"], out / f"{PAPER}_{fig}.png")
    from .supplementary import SUPPLEMENTARY_PARTS

    for part, run_part in SUPPLEMENTARY_PARTS.items():  # after the parts whose tables they read
        if part in parts:
            tables.update(run_part(out, quick=quick, seed=seed, workers=workers, progress=progress,
                                   data_path=data_path))
    return tables


def _figure10(out: Path, tables: Mapping[str, pd.DataFrame]) -> None:
    """Figure 10 from the summaries of this run's ``features``/``nn_features`` parts, the one
    that did not run read back from ``out`` if an earlier run wrote it there."""
    from . import figures as plots

    rows = {}
    for name in ("features_summary", "nn_features_summary"):
        path = out / f"{PAPER}_{name}.csv"
        rows[name] = tables[name] if name in tables else (pd.read_csv(path) if path.is_file() else None)
    plots.figure10(rows["features_summary"], out / f"{PAPER}_figure10.png", networks=rows["nn_features_summary"])


def merge_attack_rmse(attack_table: pd.DataFrame, rmse_table: pd.DataFrame) -> pd.DataFrame:
    """The attack rows with the mean log RMSE of the same method and epsilon (n = 1000,
    simulated) for Figures 4 and 11."""
    ok = rmse_table[rmse_table["released"].astype(bool)]
    lr = ok.groupby(["method", "epsilon"])["rmse"].apply(lambda v: float(np.mean(np.log(v)))).rename("log_rmse")
    return attack_table.merge(lr.reset_index(), on=["method", "epsilon"], how="left")


__all__ = [
    "ATTACK_D",
    "ATTACK_D_PRIME",
    "ATTACK_METHODS",
    "CHAUDHURI_CALIBRATION",
    "EXPERIMENT_S2",
    "FULL",
    "LOGISTIC_METHODS",
    "NEURAL_METHODS",
    "PAPER",
    "PARTS",
    "QUICK",
    "SAMPLER",
    "UCI_FILES",
    "attack",
    "attack_task",
    "correct_sign_accuracy",
    "features",
    "logistic",
    "logistic_task",
    "merge_attack_rmse",
    "neural",
    "neural_features",
    "neural_task",
    "log_normaliser_ratio",
    "normaliser_ratio_mc",
    "ops_log_ratio",
    "reproduce",
    "rmse",
    "roc_auc",
    "summarise",
    "uci_available",
]
