"""DP-SGD tuned as Jewson et al. (2023), Appendix B, describe, on the data sets of the network studies.

App. B: "We tuned the learning rate and the batch size on validation data sets ... The rule for
the number of epochs was found by tuning the number of epochs for eps = 1 within {5, 10, 15, 20}
and trying different parameters for the slope of the linear increase in eps ({0.5, 1, 2}) ...
batch size within {50, 100, 200}, learning rate within {1e-3, 1e-2, 1e-1, 1}, clipping norm
within {0.8, 1, 1.2}", and "use the same parameters on SGD". The network parts
(:mod:`.networks`) train DP-SGD at the settings the text reports (14 + floor(eps) epochs, batch
100, learning rate 1e-2, clipping norm 1), where it barely leaves its initialisation on our data.
This module runs the tuning itself.

The protocol (:func:`tune_dpsgd`), on an 80/20 train/validation split:

* Stage 1, at eps = 1: every (epochs, batch size, learning rate, clipping norm) of
  :data:`PAPER_GRID` (4 x 3 x 4 x 3 = 144 DP-SGD trainings); the winner has the best validation
  score (RMSE for regression, lower is better; ROC-AUC for classification, higher is better).
* Stage 2: with stage 1's batch size, learning rate and clipping norm and its epochs E1, every
  slope s of :data:`PAPER_SLOPES` in epochs(eps) = max(1, round(E1 + s (floor(eps) - 1)))
  (:func:`epoch_rule`; E1 = 15, s = 1 is the paper's 14 + floor(eps)), scored by the mean
  validation score over the study's other epsilons (those other than 1).
* Every candidate of one replicate trains from the same seed (common random numbers), and each
  score is the mean over R tuning replicates (independent tuning data sets): the variance of the
  selection is that of the data, not of the initialisation.

Where the tuning data come from -- this decides what the tuning costs in privacy. Tuning runs
ONCE per (task, data set, n, d), not per repeat, on data sets of its own (:func:`tuning_data`),
drawn from the seed stream ``jewson2023/dpsgd-tuning/<task>/<data set>/n<n>[/d<d>]/data``, never
from the network parts' data streams:

* simulated data: an independent draw of the public generator (:func:`.data.simulate_nn`: a new
  network and new records). The generator is public, so the tuning costs no privacy.
* UCI data: a random subsample of n rows of the same file's training split (:func:`.data.subsample`).
  This IS the private data: the rows overlap those of the evaluated data sets, and the DP-SGD
  epsilon reported for a release does not cover the tuning.

The privacy cost of tuning on private data (:func:`tuning_privacy_cost`). As run, the grid search
has no DP guarantee: its validation scores are exact and the chosen settings are a function of
them. Bounds for what a private search would cost: the K = 144 + 3 (#eps - 1) candidate DP-SGD
runs of one replicate composed give the sum of their epsilons by basic composition (and R
replicates on overlapping subsamples up to R times that); a random-stopping search of Liu &
Talwar (2019) (or Papernot & Steinke, 2022) over eps-DP candidates with a privatised validation
score costs about 3 eps per search stage instead.

:func:`dpsgd_tuned` trains, for every (data set, n, repeat) of the network part, DP-SGD with the
tuned settings at every epsilon ("DP-SGD (tuned)") and non-private SGD with the same batch size,
learning rate and the epochs of eps = 1 ("SGD (tuned, non-private)"; no clipping), on the SAME
data sets as :func:`.networks.neural` (same root seed, seed streams and task order), without any
Stan fit, so each row pairs with the network part's rows by data set, n and repeat.
:func:`dpsgd_tuned_features` does the same for Figure 10's network rows
(:func:`.network_features.neural_features`, whose d = 2 cell is Figures 3/9's n = 1000 cell).
Tuning and evaluation tasks both go through :func:`~pystanprivacy.run.runner.run_tasks`
(resumable, saved in ``OUT/.tasks``); a tuning unit has its own stream, so the unit shared by
Figures 9 and 10 is tuned once.

References
----------
.. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), "Differentially private statistical
   inference through beta-divergence one posterior sampling", NeurIPS, Appendix B.
.. [2] M. Abadi et al. (2016), "Deep learning with differential privacy", CCS.
.. [3] J. Liu and K. Talwar (2019), "Private selection from private candidates", STOC.
.. [4] N. Papernot and T. Steinke (2022), "Hyperparameter tuning with Renyi differential
   privacy", ICLR.
"""
from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_choice, check_delta, check_epsilon, check_int
from ...run.runner import Task, run_tasks, selected_tasks, task_seeds
from ...run.study import Study
from .common import uci_files
from .baselines import nn_predict, train_nn_sgd
from .common import MINAMI_DELTA, PAPER, rmse, roc_auc
from .data import train_test_split
from .dpsgd_settings import network_data

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="jewson2023/dpsgd_tuning", version=1)

#: the grid of stage 1 (App. B), at epsilon = 1
PAPER_GRID: dict[str, tuple[float, ...]] = {
    "epochs": (5, 10, 15, 20),
    "batch_size": (50, 100, 200),
    "lr": (1e-3, 1e-2, 1e-1, 1.0),
    "clip_norm": (0.8, 1.0, 1.2),
}
#: the slopes of stage 2 (App. B): epochs(eps) = E1 + s (floor(eps) - 1)
PAPER_SLOPES: tuple[float, ...] = (0.5, 1.0, 2.0)
#: the epsilon of stage 1
TUNING_EPSILON = 1.0
#: share of a tuning data set held out for validation
VALIDATION_FRACTION = 0.2
#: method names of the rows of :func:`dpsgd_tuned`
TUNED_METHODS = ("DP-SGD (tuned)", "SGD (tuned, non-private)")
#: the network of the paper text (plain SGD, tanh units), the one :mod:`.networks` trains
NETWORK = {"optimizer": "sgd", "activation": "tanh"}
TASKS = ("regression", "classification")


def epoch_rule(epsilon: float, *, epochs_at_one: int, slope: float) -> int:
    """max(1, round(E1 + s (floor(epsilon) - 1))) epochs, rounding halves up: the linear rule
    of App. B with E1 = ``epochs_at_one`` and s = ``slope`` (E1 = 15, s = 1 gives the paper's
    14 + floor(epsilon))."""
    epsilon = check_epsilon(epsilon)
    e1 = check_int(epochs_at_one, "epochs_at_one", minimum=1)
    if not isinstance(slope, (int, float)) or isinstance(slope, bool) or not math.isfinite(slope) or slope < 0:
        raise ValueError(f"slope must be a finite number >= 0, got {slope!r}")
    return max(1, int(math.floor(e1 + slope * (math.floor(epsilon) - 1) + 0.5)))


def _fresh(ss: np.random.SeedSequence) -> np.random.SeedSequence:
    """A copy of ``ss`` with no child spawned yet: spawning from it gives the same children
    however often it is asked (``spawn`` advances the parent's counter)."""
    return np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size)


def _check_task(task: Any) -> str:
    if task not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)}, got {task!r}")
    return task


def _check_grid(grid: Mapping[str, Sequence[float]], slopes: Sequence[float]) -> tuple[dict[str, tuple], tuple]:
    if not isinstance(grid, Mapping) or set(grid) != set(PAPER_GRID):
        raise ValueError(f"grid must map exactly {sorted(PAPER_GRID)} to non-empty sequences, got {grid!r}")
    out = {}
    for key in PAPER_GRID:
        values = tuple(grid[key])
        if not values:
            raise ValueError(f"grid[{key!r}] is empty; every grid axis needs at least one value")
        out[key] = values
    slopes = tuple(slopes)
    if not slopes:
        raise ValueError("slopes is empty; stage 2 needs at least one slope")
    return out, slopes


def _score(task: str, params: Mapping[str, Any], X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(validation score, loss to minimise): RMSE and RMSE, or ROC-AUC and -AUC. A network whose
    output is not finite (a diverged run) scores NaN and loss +inf."""
    out = nn_predict(params, X, NETWORK["activation"])
    if not np.all(np.isfinite(out)):
        return math.nan, math.inf
    if task == "regression":
        value = rmse(out, y)
        return value, value
    value = roc_auc(y, out)
    return value, -value


def _mean_loss(losses: Sequence[float]) -> float:
    """Mean loss of one candidate: +inf if any run diverged; NaN scores (one class in a
    validation split) are left out; +inf if nothing is left."""
    arr = np.asarray(losses, dtype=float)
    if np.any(np.isinf(arr)):
        return math.inf
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if arr.size else math.inf


def tune_dpsgd(
    *,
    task: str,
    splits: Sequence[tuple[Any, Any, Any, Any]],
    epsilons: Sequence[float],
    delta: float = MINAMI_DELTA,
    grid: Mapping[str, Sequence[float]] = PAPER_GRID,
    slopes: Sequence[float] = PAPER_SLOPES,
    seed: Any = 0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The two-stage tuning of App. B on validation data.

    Parameters
    ----------
    task : {"regression", "classification"}
    splits : sequence of (X_train, y_train, X_val, y_val)
        One per tuning replicate (R = ``len(splits)`` >= 1); every score is the mean over them.
    epsilons : sequence of float
        The study's epsilons; stage 2 scores each slope at those other than 1 (none: the slope
        is the paper's, 1, and stage 2 trains nothing).
    delta : float
        DP-SGD's delta (the paper's 1e-5).
    grid, slopes
        Stage 1's grid (keys ``epochs``, ``batch_size``, ``lr``, ``clip_norm``) and stage 2's
        slopes; default the paper's (:data:`PAPER_GRID`, :data:`PAPER_SLOPES`).
    seed : int or numpy.random.SeedSequence
        Replicate r trains every candidate from ``numpy.random.SeedSequence(seed).spawn(R)[r]``
        (a SeedSequence is spawned as it is).

    Returns
    -------
    candidates : pandas.DataFrame
        One row per (stage, candidate, epsilon, replicate): the settings, ``epsilon``,
        ``replicate``, ``epochs`` trained, ``score`` (validation RMSE or ROC-AUC) and ``chosen``
        (the rows of the winner of each stage).
    chosen : dict
        ``batch_size``, ``lr``, ``clip_norm``, ``epochs_at_one`` (E1), ``slope`` and the
        winners' mean validation scores ``stage1_score`` and ``stage2_score``.

    Raises
    ------
    ValueError
        For an unknown ``task``, no ``splits``, an empty grid axis or no slopes.

    References
    ----------
    .. [1] Jewson, Ghalebikesabi and Holmes (2023), NeurIPS, Appendix B.
    """
    task = _check_task(task)
    grid, slopes = _check_grid(grid, slopes)
    splits = list(splits)
    if not splits:
        raise ValueError("splits is empty: R, the number of tuning replicates, must be >= 1")
    epsilons = [check_epsilon(e) for e in epsilons]
    delta = check_delta(delta, positive=True)
    train_seeds = _fresh(seed if isinstance(seed, np.random.SeedSequence)
                         else np.random.SeedSequence(check_int(seed, "seed", minimum=0))).spawn(len(splits))
    rows: list[dict[str, Any]] = []

    def run(stage: int, cand: dict[str, Any], eps: float, epochs: int) -> float:
        losses = []
        for r, ((Xtr, ytr, Xva, yva), ss) in enumerate(zip(splits, train_seeds)):
            params, _ = train_nn_sgd(Xtr, ytr, task=task, epsilon=eps, delta=delta, epochs=epochs,
                                     batch_size=int(cand["batch_size"]), lr=float(cand["lr"]),
                                     clip_norm=float(cand["clip_norm"]), seed=ss, **NETWORK)
            score, loss = _score(task, params, np.asarray(Xva, float), np.asarray(yva))
            losses.append(loss)
            rows.append({"stage": stage, **cand, "epsilon": eps, "epochs": epochs, "replicate": r, "score": score,
                         "chosen": False})
        return _mean_loss(losses)

    stage1 = []
    for e1, bs, lr, clip in itertools.product(grid["epochs"], grid["batch_size"], grid["lr"], grid["clip_norm"]):
        cand = {"epochs_at_one": int(e1), "batch_size": int(bs), "lr": float(lr), "clip_norm": float(clip),
                "slope": math.nan}
        stage1.append((run(1, cand, TUNING_EPSILON, int(e1)), cand))
    best1 = min(range(len(stage1)), key=lambda i: stage1[i][0])  # first of the best, in grid order
    loss1, win = stage1[best1]
    others = [e for e in epsilons if e != TUNING_EPSILON]
    stage2 = []
    for s in slopes if others else ():
        cand = {**win, "slope": float(s)}
        losses = [run(2, cand, eps, epoch_rule(eps, epochs_at_one=win["epochs_at_one"], slope=s)) for eps in others]
        stage2.append((float(np.mean(losses)), cand))
    table = pd.DataFrame(rows)
    is_win1 = (table["stage"] == 1)
    for key in ("epochs_at_one", "batch_size", "lr", "clip_norm"):
        is_win1 &= table[key] == win[key]
    table.loc[is_win1, "chosen"] = True
    if stage2:
        best2 = min(range(len(stage2)), key=lambda i: stage2[i][0])
        loss2, slope = stage2[best2][0], stage2[best2][1]["slope"]
        table.loc[(table["stage"] == 2) & (table["slope"] == slope), "chosen"] = True
    else:
        loss2, slope = math.nan, 1.0
    sign = 1.0 if task == "regression" else -1.0
    chosen = {key: win[key] for key in ("batch_size", "lr", "clip_norm", "epochs_at_one")}
    chosen.update(slope=float(slope), stage1_score=sign * loss1, stage2_score=sign * loss2,
                  score="validation RMSE" if task == "regression" else "validation ROC-AUC", replicates=len(splits))
    return table, chosen


# ----------------------------------------------------------------------------- tuning data and units
def tuning_stream(*, task: str, dataset: str, n_obs: int, d: int) -> str:
    """The seed stream of one tuning unit (its data: ``<stream>/data``); no d for UCI data."""
    tail = f"/d{int(d)}" if dataset == "simulated" else ""
    return f"{PAPER}/dpsgd-tuning/{_check_task(task)}/{dataset}/n{int(n_obs)}{tail}"


def tuning_data_seeds(*, task: str, dataset: str, n_obs: int, d: int, replicates: int,
                      seed: int = 0) -> list[np.random.SeedSequence]:
    """The data seeds of a unit's ``replicates`` tuning data sets, from the root ``seed`` and
    the unit's own stream (:func:`tuning_stream`), never the network parts' data streams."""
    replicates = check_int(replicates, "replicates", minimum=1)
    return task_seeds(seed, replicates, stream=tuning_stream(task=task, dataset=dataset, n_obs=n_obs, d=d) + "/data")


def tuning_data(*, task: str, dataset: str, n_obs: int, d: int, data_seed: Any,
                data_path: str | Path | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One tuning data set split 80/20: (X_train, y_train, X_val, y_val). Simulated: a fresh
    draw of the public generator with ``n_obs`` records; UCI: ``n_obs`` rows subsampled from the
    file's training split (private data). Drawn as :func:`.dpsgd_settings.network_data` draws
    the evaluated data sets, from ``data_seed``; the split from a child of it."""
    task = _check_task(task)
    ss = data_seed if isinstance(data_seed, np.random.SeedSequence) else np.random.SeedSequence(data_seed)
    draw, split = _fresh(ss).spawn(2)
    data = network_data(task=task, dataset=dataset, n_obs=n_obs, d=d, data_seed=draw, data_path=data_path)
    tr, va = train_test_split(data.n, VALIDATION_FRACTION, seed=split)
    return data.X[tr], data.y[tr], data.X[va], data.y[va]


@STUDY.task(data=uci_files)
def dpsgd_tuning_task(
    *,
    task: str,
    dataset: str,
    n_obs: int,
    d: int,
    epsilons: Sequence[float],
    data_seeds: Sequence[Any],
    data_path: str | Path | None = None,
    seed: Any = None,
) -> pd.DataFrame:
    """One tuning unit: :func:`tune_dpsgd` on ``len(data_seeds)`` tuning data sets
    (:func:`tuning_data`). One row per candidate run with the unit's columns; the chosen
    settings are the rows with ``chosen`` (:func:`chosen_settings` reads them back)."""
    t = time.perf_counter()
    splits = [tuning_data(task=task, dataset=dataset, n_obs=n_obs, d=d, data_seed=s, data_path=data_path)
              for s in data_seeds]
    table, chosen = tune_dpsgd(task=task, splits=splits, epsilons=epsilons, seed=seed)
    table.insert(0, "task", task)
    table.insert(1, "dataset", dataset)
    table.insert(2, "n_obs", int(n_obs))
    table.insert(3, "d", int(splits[0][0].shape[1]))
    table["replicates"] = len(splits)
    table["chosen_slope"] = chosen["slope"]
    table["unit_seconds"] = time.perf_counter() - t
    return table


def chosen_settings(tuning: pd.DataFrame) -> dict[str, Any]:
    """The settings a unit's :func:`dpsgd_tuning_task` table chose: ``batch_size``, ``lr``,
    ``clip_norm``, ``epochs_at_one`` and ``slope``."""
    win = tuning[(tuning["stage"] == 1) & tuning["chosen"].astype(bool)]
    if win.empty:
        raise ValueError("tuning holds no chosen stage-1 candidate")
    first = win.iloc[0]
    return {"batch_size": int(first["batch_size"]), "lr": float(first["lr"]), "clip_norm": float(first["clip_norm"]),
            "epochs_at_one": int(first["epochs_at_one"]), "slope": float(first["chosen_slope"])}


def tune_units(
    *,
    task: str,
    units: Sequence[tuple[str, int, int]],
    epsilons: Sequence[float],
    replicates: int,
    data_path: str | Path | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Tune every (data set, n, d) of ``units``, each one task of its own stream
    (:func:`tuning_stream`), so the same unit reads back its saved result wherever it is asked."""
    task = _check_task(task)
    replicates = check_int(replicates, "replicates", minimum=1)
    frames = []
    for dataset, n, d in units:
        stream = tuning_stream(task=task, dataset=dataset, n_obs=n, d=d)
        seeds = tuning_data_seeds(task=task, dataset=dataset, n_obs=n, d=d, replicates=replicates, seed=seed)
        job = Task(dpsgd_tuning_task, dict(task=task, dataset=dataset, n_obs=int(n), d=int(d),
                                           epsilons=[float(e) for e in epsilons], data_seeds=seeds, data_path=data_path),
                   label=f"DP-SGD tuning {task} {dataset} n={n} d={d} R={replicates}")
        frames.append(run_tasks([job], seed=seed, stream=stream, workers=workers, executor=executor,
                                progress=progress, desc=f"Jewson 2023 DP-SGD tuning ({task})"))
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- evaluation
@STUDY.task(data=uci_files)
def dpsgd_tuned_task(
    *,
    task: str,
    dataset: str,
    n_obs: int,
    epsilons: Sequence[float],
    repeat: int,
    data_seed: Any,
    tuned: Mapping[str, Any],
    d: int = 2,
    data_path: str | Path | None = None,
    seed: Any = None,
) -> pd.DataFrame:
    """One data set of a network part (:func:`.dpsgd_settings.network_data`): DP-SGD with the
    ``tuned`` settings (:func:`chosen_settings`) at every epsilon, epochs by :func:`epoch_rule`,
    and non-private SGD with the same batch size and learning rate and the epochs of eps = 1.
    One row per (method, epsilon) with test RMSE or ROC-AUC (NaN, ``diverged`` True, when the
    network's output is not finite) and the settings used."""
    from ..._validation import check_random_state

    rng = check_random_state(seed)
    data = network_data(task=task, dataset=dataset, n_obs=n_obs, d=d, data_seed=data_seed, data_path=data_path)
    rows = []
    for eps in [*(check_epsilon(e) for e in epsilons), None]:
        t = time.perf_counter()
        epochs = epoch_rule(TUNING_EPSILON if eps is None else eps, epochs_at_one=tuned["epochs_at_one"],
                            slope=tuned["slope"])
        params, _ = train_nn_sgd(data.X, data.y, task=task, epsilon=eps, delta=MINAMI_DELTA, epochs=epochs,
                                 batch_size=int(tuned["batch_size"]), lr=float(tuned["lr"]),
                                 clip_norm=float(tuned["clip_norm"]), seed=rng, **NETWORK)
        out = nn_predict(params, data.X_test, NETWORK["activation"])
        finite = bool(np.all(np.isfinite(out)))
        row = {"task": task, "dataset": dataset, "n_obs": data.n, "d": data.n_features, "repeat": repeat,
               "method": TUNED_METHODS[0] if eps is not None else TUNED_METHODS[1],
               "epsilon": math.inf if eps is None else eps, "released": True, "diverged": not finite,
               "epochs": epochs, "batch_size": int(tuned["batch_size"]), "lr": float(tuned["lr"]),
               "clip_norm": float(tuned["clip_norm"]) if eps is not None else math.nan,
               "slope": float(tuned["slope"]), "seconds": time.perf_counter() - t}
        if task == "regression":
            row["test_rmse"] = rmse(out, data.y_test) if finite else math.nan
        else:
            row["auc"] = roc_auc(data.y_test, out) if finite else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _evaluate(*, task: str, datasets: Sequence[str], ns: Sequence[int], epsilons: Sequence[float], repeats: int,
              d: int, tuned: Mapping[tuple[str, int], Mapping[str, Any] | None], data_path: str | Path | None,
              seed: int, stream: str, workers: int, executor: Any, progress: bool) -> pd.DataFrame:
    grid = [(ds, n, r) for ds in datasets for n in ns for r in range(repeats)]
    data_seeds = task_seeds(seed, len(grid), stream=f"{PAPER}/{stream}/data")  # as in networks.neural
    tasks = [
        Task(dpsgd_tuned_task, dict(task=task, dataset=ds, n_obs=int(n), epsilons=[float(e) for e in epsilons],
                                    repeat=r, data_seed=s, tuned=tuned.get((ds, int(n))), d=d, data_path=data_path),
             label=f"DP-SGD tuned {task} {ds} n={n} d={d} repeat={r}")
        for (ds, n, r), s in zip(grid, data_seeds)
    ]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/{stream}/dpsgd-tuned", workers=workers, executor=executor,
                     progress=progress, desc=f"Jewson 2023 DP-SGD tuned ({task})")


def dpsgd_tuned(
    *,
    task: str = "regression",
    datasets: Sequence[str] = ("simulated",),
    ns: Sequence[int] = (100, 500),
    epsilons: Sequence[float] = (0.2, 0.5, 1.0, 5.0),
    repeats: int = 1,
    d: int = 2,
    replicates: int = 1,
    data_path: str | Path | None = None,
    seed: int = 0,
    stream: str | None = None,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tune once per (data set, n) (:func:`tune_units`, ``replicates`` tuning data sets each),
    then :func:`dpsgd_tuned_task` on the data sets of ``neural(task=..., datasets=..., ns=...,
    repeats=..., d=..., seed=..., stream=...)`` (call it with the network part's grouping of
    ``datasets``, as :func:`.dpsgd_settings.dpsgd_settings`). Returns (rows, tuning table)."""
    task = _check_task(task)
    repeats = check_int(repeats, "repeats", minimum=1)
    stream = f"nn-{task}" if stream is None else stream
    tuning = tune_units(task=task, units=[(ds, int(n), d) for ds in datasets for n in ns], epsilons=epsilons,
                        replicates=replicates, data_path=data_path, seed=seed, workers=workers, executor=executor,
                        progress=progress)
    tuned = {(ds, int(n)): chosen_settings(g) for (ds, n), g in tuning.groupby(["dataset", "n_obs"])}
    rows = _evaluate(task=task, datasets=datasets, ns=ns, epsilons=epsilons, repeats=repeats, d=d, tuned=tuned,
                     data_path=data_path, seed=seed, stream=stream, workers=workers, executor=executor,
                     progress=progress)
    return rows, tuning


def dpsgd_tuned_features(
    *,
    task: str = "regression",
    ds: Sequence[int] = (2, 5, 10, 20),
    n_obs: int = 1000,
    epsilons: Sequence[float] = (0.2, 0.5, 1.0, 5.0),
    repeats: int = 10,
    replicates: int = 1,
    figure: Mapping[str, Any] | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 10's network rows with tuned DP-SGD, on the data sets of
    :func:`.network_features.neural_features` with the same ``figure``: its d = 2 cell shared
    with Figures 3/9 (:func:`.network_features.shares_figure_cell`) is :func:`dpsgd_tuned`'s
    own tasks at ``n_obs`` (read back when saved), every other d its own stream
    ``nn-<task>-features-d<d>``. Returns (rows, tuning table)."""
    from .network_features import FIGURE_D, shares_figure_cell

    task = _check_task(task)
    n_obs = check_int(n_obs, "n_obs", minimum=2)
    repeats = check_int(repeats, "repeats", minimum=1)
    options = dict(replicates=replicates, seed=seed, workers=workers, executor=executor, progress=progress)
    rows, tunings = [], []
    for d in (check_int(v, "ds[i]", minimum=1) for v in ds):
        if shares_figure_cell(d=d, n_obs=n_obs, epsilons=epsilons, repeats=repeats, figure=figure):
            tuning = tune_units(task=task, units=[("simulated", n_obs, FIGURE_D)], epsilons=epsilons,
                                replicates=replicates, seed=seed, workers=workers, executor=executor, progress=progress)
            tuned = {("simulated", n_obs): chosen_settings(tuning)}

            def keep(t: Task) -> bool:
                return t.kwargs["n_obs"] == n_obs and t.kwargs["repeat"] < repeats

            with selected_tasks(keep):
                rows.append(_evaluate(task=task, datasets=["simulated"], ns=list(figure["ns"]), epsilons=epsilons,
                                      repeats=int(figure["repeats"]), d=FIGURE_D, tuned=tuned, data_path=None,
                                      seed=seed, stream=f"nn-{task}", workers=workers, executor=executor,
                                      progress=progress))
        else:
            part, tuning = dpsgd_tuned(task=task, datasets=["simulated"], ns=[n_obs], epsilons=epsilons,
                                       repeats=repeats, d=d, stream=f"nn-{task}-features-d{d}", **options)
            rows.append(part)
        tunings.append(tuning)
    return pd.concat(rows, ignore_index=True), pd.concat(tunings, ignore_index=True)


# ----------------------------------------------------------------------------- privacy cost
def tuning_privacy_cost(*, epsilons: Sequence[float], replicates: int, private: bool,
                        grid: Mapping[str, Sequence[float]] = PAPER_GRID,
                        slopes: Sequence[float] = PAPER_SLOPES, delta: float = MINAMI_DELTA) -> dict[str, Any]:
    """What one tuning unit costs in privacy, as a statement and as numbers.

    ``private`` False (simulated data, the public generator): nothing. ``private`` True (UCI
    data): as run, no DP guarantee (exact validation scores). Bounds for a private search: K =
    |grid| + |slopes| (#eps - 1) candidate runs per replicate; basic composition gives the sum of
    their epsilons (stage 1: |grid| x 1; stage 2: |slopes| x the sum of the other epsilons) and
    K delta, times R for R replicates on overlapping subsamples; a random-stopping search
    (Liu & Talwar 2019, Thm 3.4; Papernot & Steinke 2022) over eps-DP candidates with a
    privatised score costs about 3 eps per stage: 3 x 1 for stage 1 and 3 x max(other eps) for
    stage 2. These add to the epsilon of the evaluated release.

    References
    ----------
    .. [1] J. Liu and K. Talwar (2019), "Private selection from private candidates", STOC.
    .. [2] N. Papernot and T. Steinke (2022), "Hyperparameter tuning with Renyi differential
       privacy", ICLR.
    """
    replicates = check_int(replicates, "replicates", minimum=1)
    grid, slopes = _check_grid(grid, slopes)
    others = [check_epsilon(e) for e in epsilons if check_epsilon(e) != TUNING_EPSILON]
    n_grid = math.prod(len(v) for v in grid.values())
    k = n_grid + (len(slopes) * len(others))
    if not private:
        return {"private_data": False, "candidates_per_replicate": k, "replicates": replicates,
                "statement": "simulated data: tuned on independent draws of the public generator; no privacy cost"}
    basic = n_grid * TUNING_EPSILON + len(slopes) * sum(others)
    return {
        "private_data": True,
        "candidates_per_replicate": k,
        "replicates": replicates,
        "as_run": "no DP guarantee: the grid search uses exact validation scores on a subsample of the private data; "
                  "the reported DP-SGD epsilon does not cover it",
        "basic_composition_epsilon_per_replicate": basic,
        "basic_composition_epsilon": basic * replicates,
        "basic_composition_delta": k * replicates * delta,
        "random_stopping_epsilon": 3.0 * TUNING_EPSILON + (3.0 * max(others) if others else 0.0),
        "random_stopping_is": "about 3 eps per stage (Liu & Talwar 2019, Papernot & Steinke 2022) with a privatised "
                              "validation score and a random number of candidates, which this search does not have",
        "statement": "tuning on private UCI rows: not covered by the stated epsilon; bounds for a private search above",
    }


__all__ = ["NETWORK", "PAPER_GRID", "PAPER_SLOPES", "TUNED_METHODS", "TUNING_EPSILON", "VALIDATION_FRACTION",
           "chosen_settings", "dpsgd_tuned", "dpsgd_tuned_features", "dpsgd_tuned_task", "dpsgd_tuning_task",
           "epoch_rule", "tune_dpsgd", "tune_units", "tuning_data", "tuning_data_seeds", "tuning_privacy_cost",
           "tuning_stream"]
