"""LDP-SGD tuned on a validation split of the training users (issue 49, item 2; REPRODUCTION.md K4, K5).

The committed regression part (:mod:`.regression`) runs LDP-SGD (:func:`.ldp_sgd.ldp_sgd`) at fixed
settings: step size ``0.1 / sqrt(t)``, group constant 10, ``||theta|| <= 10``, iterate averaging.
Kulkarni et al. (2022, Sec. 4.2) describe no tuning and give no grid: **the tuning here is ours**.

Protocol of one unit (figure, epsilon, repeat; :func:`figure4_tuned`, :func:`figure5_tuned`):

1. the train/test split and the features are exactly the regression part's
   (:func:`regression_inputs`: the same :func:`.data.regression_data` call as
   :func:`.regression.reproduce`, the same 10K subsample of Figure 5 as :func:`.regression.figure5`);
2. the users that take part (Figure 4: all training rows; Figure 5: the 10K subsample the committed
   LDP-SGD used, and separately all training rows, as the paper's SS model uses all records) are
   split 80/20 into *tuning-fit* and *validation* users, from the unit's own seed stream; the test
   rows are never passed to the tuner;
3. :func:`tune_ldp_sgd`: for every candidate of the public grid (:data:`GRID`, written here, not
   derived from data) LDP-SGD runs :data:`RUNS_PER_CANDIDATE` times on the tuning-fit users and is
   scored on the validation users (RMSE for Wine, linear; ROC-AUC for Adult, logistic), averaged
   over the runs; the winner has the best mean score (ties: the first in grid order);
4. LDP-SGD with the winning settings runs once on **all** the users of step 2 and is scored on
   the test rows; the untuned (committed) settings run once beside it on the same users, from
   their own stream, as a paired reference.

Privacy cost of tuning (local DP; the paper reports no tuning and no such cost). Each LDP-SGD run
contacts every user once, at ``(epsilon, delta)``. A tuning run makes every tuning-fit user report
again: ``K`` protocol settings x ``m`` runs cost ``K m (epsilon, delta)`` per such user by basic
composition (Dwork & Roth 2014, Thm 3.16; no amplification, no shuffling), plus the reported run's
``(epsilon, delta)``. With the grid here ``K = 6 x 5 = 30`` (learning rate x group constant; the
estimate, iterate average or last iterate, is post-processing of the same run and costs nothing)
and ``m = 3``: **91 epsilon and 91 delta** per tuning-fit user (:func:`tuning_cost`), e.g. 22.75
at a reported epsilon of 0.25 and 728 at epsilon 8. Validation users pay ``(epsilon, delta)`` for
the reported run, and **their data are read in the clear** to score the candidates: that choice is
not part of any charged mechanism, so the tuned protocol is not LDP for them (under LDP they would
have to report their scores privately, at a cost not modelled here). The tuned LDP-SGD is therefore
a *favourable* baseline: it gets a choice of settings no LDP protocol at the reported epsilon gets.
Users not contacted by a run (``n mod G``) pay nothing for it; the numbers above are upper bounds.

Reproducibility only, not security: the noise is seeded float64 NumPy noise (see :mod:`.ldp_sgd`).

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela, "Locally Differentially Private Bayesian
   Inference", arXiv:2110.14426 (2022), Sec. 4.2, 4.6, Figures 4-5.
.. [2] N. Wang et al., "Collecting and analyzing multidimensional data with local differential
   privacy", ICDE 2019.
.. [3] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy" (2014), Thm 3.16.
"""
from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import (
    SeedLike,
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_random_state,
)
from ...models.kulkarni2022_regression import DEFAULT_DELTA
from ...privacy.records import PrivacyAccountant
from ...run.runner import Task, run_tasks
from ...run.study import Study
from .data import RegressionData
from .ldp_sgd import ldp_sgd, ldp_sgd_runs
from .regression import rmse, roc_auc

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="kulkarni2022/ldp_sgd_tuning", version=1)

__all__ = [
    "GRID",
    "RUNS_PER_CANDIDATE",
    "VALIDATION_FRACTION",
    "UNTUNED",
    "STREAM",
    "Tuning",
    "tuning_cost",
    "tune_ldp_sgd",
    "regression_inputs",
    "figure4_tuned",
    "figure5_tuned",
]

#: the public grid (ours: the paper gives none); theta_bound stays at the committed 10
GRID: dict[str, tuple[Any, ...]] = {
    "learning_rate": (0.01, 0.03, 0.1, 0.3, 1.0, 3.0),
    "group_constant": (0.3, 1.0, 3.0, 10.0, 30.0),
    "estimate": ("average", "last"),
}
THETA_BOUND = 10.0
#: protocol runs per candidate (LDP-SGD's noise is large; their mean validation score is used)
RUNS_PER_CANDIDATE = 3
#: share of the participating users held out to score the candidates
VALIDATION_FRACTION = 0.2
#: the committed regression part's settings (ldp_sgd's defaults)
UNTUNED: dict[str, Any] = {"learning_rate": 0.1, "group_constant": 10.0, "estimate": "average"}
#: the runner's seed streams of the two figures
STREAM = "kulkarni2022/ldp_sgd_tuning"
_ESTIMATES = ("average", "last")
_LOSS = {"linear": "squared", "logistic": "logistic"}


@dataclasses.dataclass(frozen=True)
class Tuning:
    """What :func:`tune_ldp_sgd` found: ``candidates`` (one row per learning rate x group
    constant x estimate: ``score_mean``, ``score_sd`` over the runs, ``group_size``, ``steps``),
    ``best`` (the winner's row as a dict), the ``metric`` (``"rmse"``: lower is better;
    ``"auc"``: higher), the user counts and the privacy ``cost`` (:func:`tuning_cost`) with the
    accountant's own total of the tuning runs (``accounted_tuning_epsilon``, ``accounted_tuning_delta``)."""

    candidates: pd.DataFrame
    best: dict[str, Any]
    metric: str
    n_fit: int
    n_validation: int
    cost: dict[str, float]


def _check_grid(grid: Mapping[str, Sequence[Any]]) -> dict[str, tuple[Any, ...]]:
    if not isinstance(grid, Mapping) or set(grid) != set(GRID):
        raise ValueError(f"grid must map exactly {sorted(GRID)} to their levels, got {grid!r}")
    out: dict[str, tuple[Any, ...]] = {}
    for name in ("learning_rate", "group_constant"):
        levels = tuple(check_positive(v, f"grid[{name!r}][i]") for v in grid[name])
        if not levels or len(set(levels)) != len(levels):
            raise ValueError(f"grid[{name!r}] must hold distinct positive values, got {list(grid[name])}")
        out[name] = levels
    est = tuple(check_choice(v, "grid['estimate'][i]", _ESTIMATES) for v in grid["estimate"])
    if not est or len(set(est)) != len(est):
        raise ValueError(f"grid['estimate'] must hold distinct values of {_ESTIMATES}, got {list(grid['estimate'])}")
    out["estimate"] = est
    return out


def tuning_cost(*, epsilon: float, delta: float, grid: Mapping[str, Sequence[Any]] = GRID,
                runs: int = RUNS_PER_CANDIDATE) -> dict[str, float]:
    """Per-user (epsilon, delta) of tuning on ``grid`` with ``runs`` runs per candidate and then
    reporting one run, by basic composition: ``protocol_runs = |learning rates| x |group
    constants| x runs`` tuning runs (the estimate is post-processing: free); a tuning-fit user
    pays ``(protocol_runs + 1) (epsilon, delta)``, a validation user ``(epsilon, delta)`` for
    the reported run (and their data are read in the clear to score the candidates: not
    private, see the module docstring).

    References
    ----------
    C. Dwork and A. Roth (2014), Theorem 3.16 (basic composition).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    grid = _check_grid(grid)
    runs = check_int(runs, "runs", minimum=1)
    k = len(grid["learning_rate"]) * len(grid["group_constant"]) * runs
    return {"protocol_settings": len(grid["learning_rate"]) * len(grid["group_constant"]), "runs_per_setting": runs,
            "tuning_runs": k, "epsilon_fit_user": (k + 1) * epsilon, "delta_fit_user": (k + 1) * delta,
            "epsilon_validation_user": epsilon, "delta_validation_user": delta,
            "validation_data_read_in_clear": True}


def _score(metric: str, x: np.ndarray, y: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    pred = thetas @ x.T                                    # (runs, n)
    if metric == "rmse":
        return np.array([rmse(p, y) for p in pred])
    return np.array([roc_auc(p, y) for p in pred])


def tune_ldp_sgd(x: Any, y: Any, *, task: str, epsilon: float, delta: float = DEFAULT_DELTA,
                 grid: Mapping[str, Sequence[Any]] = GRID, runs: int = RUNS_PER_CANDIDATE,
                 validation_fraction: float = VALIDATION_FRACTION, theta_bound: float = THETA_BOUND,
                 seed: SeedLike = None) -> Tuning:
    """Grid search of LDP-SGD's settings on a validation split of the users ``(x, y)``.

    The users are split ``1 - validation_fraction`` / ``validation_fraction`` (tuning-fit /
    validation) at random; every learning rate x group constant runs ``runs`` times on the
    tuning-fit users (:func:`.ldp_sgd.ldp_sgd_runs`, each run its own order and noise) and both
    estimates of each run (the iterate average, the last iterate) are scored on the validation
    users: RMSE (``task='linear'``, lower is better) or ROC-AUC (``task='logistic'``, higher is
    better), averaged over the runs. Only ``x`` and ``y`` are seen: pass the training users, never
    test rows.

    Parameters
    ----------
    x : array (n, d); y : array (n,) (real targets, or 0/1 labels)
    task : {"linear", "logistic"}
    epsilon, delta : per-user privacy parameters of one run
    grid : mapping with keys ``learning_rate``, ``group_constant``, ``estimate`` (public)
    runs : protocol runs per learning rate x group constant
    validation_fraction : float in (0, 1)
    theta_bound : the projection radius of every run
    seed : reproducibility only, not security

    Returns
    -------
    Tuning
        ``candidates`` in grid order and the winner ``best`` (best mean score; ties: the first in
        grid order; a NaN score, e.g. an AUC on one class, never wins).

    References
    ----------
    T. Kulkarni et al. (2022), Sec. 4.2 (the protocol; the tuning is ours).
    """
    task = check_choice(task, "task", tuple(_LOSS))
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    grid = _check_grid(grid)
    runs = check_int(runs, "runs", minimum=1)
    bound = check_positive(theta_bound, "theta_bound")
    frac = float(check_positive(validation_fraction, "validation_fraction"))
    if not frac < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    x = check_array(x, "x", ndim=2, kinds="biuf")
    n = x.shape[0]
    y = check_array(y, "y", shape=(n,), kinds="biuf")
    n_val = round(frac * n)
    if n_val < 2 or n - n_val < 2:
        raise ValueError(f"x must hold enough users for a {frac:g} validation split (got {n})")
    rng = check_random_state(seed)
    perm = rng.permutation(n)
    val, fit = perm[:n_val], perm[n_val:]
    metric = "rmse" if task == "linear" else "auc"
    cost = tuning_cost(epsilon=epsilon, delta=delta, grid=grid, runs=runs)
    # charged by every tuning run; its budget (the declared cost, up to float rounding) refuses any
    # run beyond those counted
    k = cost["tuning_runs"]
    accountant = PrivacyAccountant(k * epsilon * (1 + 1e-9), min(k * delta * (1 + 1e-9), 0.5))
    lrs = np.repeat(np.asarray(grid["learning_rate"], dtype=float), runs)
    rows = []
    for gc in grid["group_constant"]:
        res = ldp_sgd_runs(x[fit], y[fit], loss=_LOSS[task], epsilon=epsilon, delta=delta, learning_rates=lrs,
                           group_constant=gc, theta_bound=bound, accountant=accountant, seed=rng)
        scores = {"average": _score(metric, x[val], y[val], res.theta),
                  "last": _score(metric, x[val], y[val], res.theta_last)}
        for i, lr in enumerate(grid["learning_rate"]):
            for est in grid["estimate"]:
                s = scores[est][i * runs:(i + 1) * runs]
                rows.append({"learning_rate": lr, "group_constant": gc, "estimate": est,
                             "score_mean": float(np.mean(s)), "score_sd": float(np.std(s, ddof=1)) if runs > 1 else 0.0,
                             "group_size": res.group_size, "steps": res.steps})
    order = {(lr, gc, est): k for k, (lr, gc, est) in enumerate(
        itertools.product(grid["learning_rate"], grid["group_constant"], grid["estimate"]))}
    table = pd.DataFrame(rows)
    table["grid_index"] = [order[(r.learning_rate, r.group_constant, r.estimate)] for r in table.itertuples()]
    table = table.sort_values("grid_index").reset_index(drop=True)
    key = table["score_mean"] if metric == "auc" else -table["score_mean"]
    if key.isna().all():
        raise RuntimeError("no candidate has a finite validation score")
    best = table.loc[int(key.fillna(-np.inf).to_numpy().argmax())].to_dict()
    spent = accountant.spent
    cost = {**cost, "accounted_tuning_epsilon": float(spent[0]), "accounted_tuning_delta": float(spent[1])}
    return Tuning(candidates=table, best=best, metric=metric, n_fit=int(fit.size), n_validation=int(n_val), cost=cost)


def _run_settings(x: np.ndarray, y: np.ndarray, *, task: str, epsilon: float, delta: float,
                  settings: Mapping[str, Any], rng: np.random.Generator) -> tuple[np.ndarray, int, int]:
    res = ldp_sgd(x, y, loss=_LOSS[task], epsilon=epsilon, delta=delta, learning_rate=settings["learning_rate"],
                  group_constant=settings["group_constant"], theta_bound=THETA_BOUND, seed=rng)
    theta = res.theta if settings["estimate"] == "average" else res.theta_last
    return theta, res.group_size, res.steps


def _unit_rows(*, task: str, users: str, x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
               epsilon: float, delta: float, grid: Mapping[str, Sequence[Any]], runs: int,
               seed: np.random.SeedSequence) -> list[dict[str, Any]]:
    """Tune on ``(x, y)``, run the winner and the untuned settings on all of ``(x, y)``, score both on
    the test rows; one row each, plus one ``candidate`` row per grid point (validation scores)."""
    s_tune, s_final, s_untuned = seed.spawn(3)
    metric = "rmse" if task == "linear" else "auc"
    t = time.perf_counter()
    tuning = tune_ldp_sgd(x, y, task=task, epsilon=epsilon, delta=delta, grid=grid, runs=runs,
                          seed=np.random.default_rng(s_tune))
    best = {k: tuning.best[k] for k in ("learning_rate", "group_constant", "estimate")}
    score = rmse if task == "linear" else roc_auc
    theta, g, steps = _run_settings(x, y, task=task, epsilon=epsilon, delta=delta, settings=best,
                                    rng=np.random.default_rng(s_final))
    seconds = time.perf_counter() - t
    theta_u, g_u, steps_u = _run_settings(x, y, task=task, epsilon=epsilon, delta=delta, settings=UNTUNED,
                                          rng=np.random.default_rng(s_untuned))
    base = {"users": users, "n_users": x.shape[0], "n_fit": tuning.n_fit, "n_validation": tuning.n_validation}
    cost = {f"cost_{k}": v for k, v in tuning.cost.items() if k != "validation_data_read_in_clear"}
    rows = [
        {**base, "method": "ldp-sgd-tuned", metric: score(x_test @ theta, y_test), **best,
         "validation_score": tuning.best["score_mean"], "group_size": g, "steps": steps, "seconds": seconds, **cost},
        {**base, "method": "ldp-sgd-untuned", metric: score(x_test @ theta_u, y_test), **UNTUNED,
         "group_size": g_u, "steps": steps_u},
    ]
    for c in tuning.candidates.itertuples():
        rows.append({**base, "method": "candidate", "learning_rate": c.learning_rate, "group_constant": c.group_constant,
                     "estimate": c.estimate, "validation_score": c.score_mean, "validation_sd": c.score_sd,
                     "group_size": c.group_size, "steps": c.steps})
    return rows


@STUDY.task()
def _fig4_tuned_task(*, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
                     epsilon: float, delta: float, repeat: int, grid: Mapping[str, Sequence[Any]], runs: int,
                     seed: np.random.SeedSequence) -> pd.DataFrame:
    rows = _unit_rows(task="linear", users="all training", x=x_train, y=y_train, x_test=x_test, y_test=y_test,
                      epsilon=epsilon, delta=delta, grid=grid, runs=runs, seed=seed)
    return pd.DataFrame([{"epsilon": epsilon, "delta": delta, "repeat": repeat, **r} for r in rows])


@STUDY.task()
def _fig5_tuned_task(*, x_train: np.ndarray, y_train: np.ndarray, x_sub: np.ndarray, y_sub: np.ndarray,
                     x_test: np.ndarray, y_test: np.ndarray, epsilon: float, delta: float, repeat: int,
                     grid: Mapping[str, Sequence[Any]], runs: int, seed: np.random.SeedSequence) -> pd.DataFrame:
    # one independent stream per set of users: neither result depends on the other
    s_sub, s_all = seed.spawn(2)
    rows = _unit_rows(task="logistic", users="10K subsample", x=x_sub, y=y_sub, x_test=x_test, y_test=y_test,
                      epsilon=epsilon, delta=delta, grid=grid, runs=runs, seed=s_sub)
    rows += _unit_rows(task="logistic", users="all training", x=x_train, y=y_train, x_test=x_test, y_test=y_test,
                       epsilon=epsilon, delta=delta, grid=grid, runs=runs, seed=s_all)
    return pd.DataFrame([{"epsilon": epsilon, "delta": delta, "repeat": repeat, **r} for r in rows])


def regression_inputs(data: RegressionData, *, figure: str, seed: int = 0, subsample: int = 10_000) -> dict[str, Any]:
    """The arrays :func:`.regression.figure4` / :func:`.regression.figure5` pass to every task for
    ``data`` (built as :func:`.regression.reproduce` builds it: ``regression_data(..., seed=seed)``):
    the training and test rows, and for Figure 5 the random ``subsample`` of the training rows drawn
    once from ``seed`` (``SeedSequence([seed, 5])``, as :func:`.regression.figure5` draws it)."""
    figure = check_choice(figure, "figure", ("figure4", "figure5"))
    want = "linear" if figure == "figure4" else "logistic"
    if data.task != want:
        raise ValueError(f"{figure} needs {want}-regression data, got task {data.task!r}")
    seed = check_int(seed, "seed", minimum=0)
    out = dict(x_train=data.x_train, y_train=data.y_train, x_test=data.x_test, y_test=data.y_test)
    if figure == "figure5":
        subsample = check_int(subsample, "subsample", minimum=10)
        pick = np.random.default_rng(np.random.SeedSequence([seed, 5])).permutation(data.x_train.shape[0])[:subsample]
        out.update(x_sub=data.x_train[pick], y_sub=data.y_train[pick])
    return out


def _tasks(figure: str, data: RegressionData, *, epsilons: Sequence[float], repeats: int, delta: float, seed: int,
           subsample: int, grid: Mapping[str, Sequence[Any]], runs: int) -> list[Task]:
    eps = [check_epsilon(e, "epsilons[i]") for e in epsilons]
    if not eps:
        raise ValueError("epsilons must hold at least one value")
    repeats = check_int(repeats, "repeats", minimum=1)
    delta = check_delta(delta, positive=True)
    grid = {k: list(v) for k, v in _check_grid(grid).items()}
    runs = check_int(runs, "runs", minimum=1)
    arrays = regression_inputs(data, figure=figure, seed=seed, subsample=subsample)
    fn = _fig4_tuned_task if figure == "figure4" else _fig5_tuned_task
    return [Task(fn, dict(**arrays, epsilon=e, delta=delta, repeat=r, grid=grid, runs=runs),
                 label=f"{figure} tuned LDP-SGD eps={e} repeat={r}") for e in eps for r in range(repeats)]


def _columns(table: pd.DataFrame, data: RegressionData) -> pd.DataFrame:
    table["data"] = data.name
    table["synthetic"] = data.synthetic
    table["d"] = data.d
    table["n_train"] = data.x_train.shape[0]
    return table


def figure4_tuned(data: RegressionData, *, epsilons: Sequence[float], repeats: int, delta: float = DEFAULT_DELTA,
                  grid: Mapping[str, Sequence[Any]] = GRID, runs: int = RUNS_PER_CANDIDATE, seed: int = 0,
                  workers: int = 1, executor: Any = None, progress: bool | None = None,
                  resume_dir: Any = None) -> pd.DataFrame:
    """Figure 4 (Wine, linear) with LDP-SGD tuned per (epsilon, repeat) on the training users;
    one row per method (``ldp-sgd-tuned``, ``ldp-sgd-untuned``, ``candidate``) x epsilon x repeat.
    ``seed`` is the regression part's (its split); the units draw from the stream
    ``<STREAM>/figure4``."""
    tasks = _tasks("figure4", data, epsilons=epsilons, repeats=repeats, delta=delta, seed=seed, subsample=10_000,
                   grid=grid, runs=runs)
    table = run_tasks(tasks, seed=seed, stream=f"{STREAM}/figure4", workers=workers, executor=executor,
                      progress=progress, desc="Figure 4 tuned LDP-SGD", resume_dir=resume_dir)
    return _columns(table, data)


def figure5_tuned(data: RegressionData, *, epsilons: Sequence[float], repeats: int, subsample: int = 10_000,
                  delta: float = DEFAULT_DELTA, grid: Mapping[str, Sequence[Any]] = GRID,
                  runs: int = RUNS_PER_CANDIDATE, seed: int = 0, workers: int = 1, executor: Any = None,
                  progress: bool | None = None, resume_dir: Any = None) -> pd.DataFrame:
    """Figure 5 (Adult, logistic) with LDP-SGD tuned per (epsilon, repeat): on the committed 10K
    subsample (``users = "10K subsample"``) and on all training rows (``"all training"``), each
    tuned on its own users. The units draw from the stream ``<STREAM>/figure5``."""
    tasks = _tasks("figure5", data, epsilons=epsilons, repeats=repeats, delta=delta, seed=seed, subsample=subsample,
                   grid=grid, runs=runs)
    table = run_tasks(tasks, seed=seed, stream=f"{STREAM}/figure5", workers=workers, executor=executor,
                      progress=progress, desc="Figure 5 tuned LDP-SGD", resume_dir=resume_dir)
    table = _columns(table, data)
    table["subsample"] = min(subsample, data.x_train.shape[0])
    return table
