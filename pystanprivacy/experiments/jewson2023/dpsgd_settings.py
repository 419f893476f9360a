"""DP-SGD with the settings of the authors' public code, on the data sets of the network studies.

Jewson et al. (2023), App. B, state DP-SGD's settings as 14 + floor(epsilon) epochs, clipping
norm 1, batch size 100 and learning rate 1e-2, and the network parts (:mod:`.networks`) train
with exactly that (plain SGD, tanh units: the βD network's). The authors' public code
(github.com/sghalebikesabi/beta-bayes-ops: ``src/dpsgd_net.py``, ``configs/methods_args/
bnn_sim.yaml``) trains differently: Adam, ReLU units, learning rate 0.1, batch size 2048 (one
batch per epoch for n <= 2048) and 15 + int(epsilon) epochs. On a response that is not centred
(Wine quality, 3 to 8) the text's settings barely leave the initialisation at small n, so the
comparison with βD depends on which settings are meant.

:func:`dpsgd_settings` trains both settings' DP-SGD and non-private SGD on the *same data sets*
as :func:`.networks.neural` (same root seed, seed streams and task order, so a row pairs with
the network part's rows by data set, n and repeat), without any Stan fit: seconds per task.
Its tasks live in this module, so they never change the network parts' saved task keys.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_choice, check_epsilon, check_int, check_random_state
from ...run.runner import Task, run_tasks, task_seeds
from ...run.study import Study
from .common import uci_files
from .baselines import nn_predict, train_nn_sgd
from .common import MINAMI_DELTA, PAPER, rmse, roc_auc
from .data import Dataset, load_uci, simulate_nn, subsample

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="jewson2023/dpsgd_settings", version=1)

#: name -> keyword arguments of :func:`~.baselines.train_nn_sgd` (``epochs``: a function of epsilon)
SETTINGS: dict[str, dict[str, Any]] = {
    "paper text": {"optimizer": "sgd", "activation": "tanh", "lr": 1e-2, "batch_size": 100,
                   "epochs": lambda eps: 14 + int(math.floor(eps))},
    "authors' code": {"optimizer": "adam", "activation": "relu", "lr": 0.1, "batch_size": 2048,
                      "epochs": lambda eps: 15 + int(eps)},
}


def network_data(*, task: str, dataset: str, n_obs: int, d: int, data_seed: Any,
                 data_path: str | Path | None = None) -> Dataset:
    """The data set of one network task, built as :func:`.networks.neural_task` builds it."""
    if dataset == "simulated":
        return simulate_nn(n_obs, d, task=task, n_test=1000, seed=data_seed)
    full = load_uci(dataset, data_path, intercept=False, seed=np.random.default_rng(0))
    return subsample(full, n_obs, seed=check_random_state(data_seed))


@STUDY.task(data=uci_files)
def dpsgd_settings_task(
    *,
    task: str,
    dataset: str,
    n_obs: int,
    epsilons: Sequence[float],
    repeat: int,
    data_seed: Any,
    d: int = 2,
    data_path: str | Path | None = None,
    settings: Sequence[str] = tuple(SETTINGS),
    seed: Any = None,
) -> pd.DataFrame:
    """One data set: DP-SGD at every epsilon and non-private SGD, under each of ``settings``.
    One row per (settings, method, epsilon) with test RMSE (regression) or ROC-AUC."""
    rng = check_random_state(seed)
    data = network_data(task=task, dataset=dataset, n_obs=n_obs, d=d, data_seed=data_seed, data_path=data_path)
    rows = []
    for name in settings:
        cfg = SETTINGS[name]
        kw = {k: cfg[k] for k in ("optimizer", "activation", "lr", "batch_size")}
        for eps in [*(check_epsilon(e) for e in epsilons), None]:
            t = time.perf_counter()
            epochs = cfg["epochs"](1.0 if eps is None else eps)  # non-private: epsilon = 1's epochs
            params, _ = train_nn_sgd(data.X, data.y, task=task, epsilon=eps, delta=MINAMI_DELTA, epochs=epochs,
                                     seed=rng, **kw)
            out = nn_predict(params, data.X_test, cfg["activation"])
            row = {"task": task, "dataset": dataset, "n_obs": data.n, "d": data.n_features, "repeat": repeat,
                   "settings": name, "method": "DP-SGD" if eps is not None else "SGD (non-private)",
                   "epsilon": math.inf if eps is None else eps, "released": True, "epochs": epochs,
                   "seconds": time.perf_counter() - t}
            if task == "regression":
                row["test_rmse"] = rmse(out, data.y_test)
            else:
                row["auc"] = roc_auc(data.y_test, out)
            rows.append(row)
    return pd.DataFrame(rows)


def dpsgd_settings(
    *,
    task: str = "regression",
    datasets: Sequence[str] = ("simulated",),
    ns: Sequence[int] = (100, 500),
    epsilons: Sequence[float] = (5.0,),
    repeats: int = 1,
    d: int = 2,
    data_path: str | Path | None = None,
    settings: Sequence[str] = tuple(SETTINGS),
    seed: int = 0,
    stream: str | None = None,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """:func:`dpsgd_settings_task` on the data sets of ``neural(task=..., datasets=..., ns=...,
    repeats=..., d=..., seed=..., stream=...)`` with the same arguments: call it with the same
    grouping of ``datasets`` as the network part (the study runs the simulated data and the UCI
    sets as two calls) so that every (data set, n, repeat) gets the same data seed."""
    task = check_choice(task, "task", ("regression", "classification"))
    repeats = check_int(repeats, "repeats", minimum=1)
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise ValueError(f"unknown settings {unknown}; allowed: {list(SETTINGS)}")
    stream = f"nn-{task}" if stream is None else stream
    grid = [(ds, n, r) for ds in datasets for n in ns for r in range(repeats)]
    data_seeds = task_seeds(seed, len(grid), stream=f"{PAPER}/{stream}/data")  # as in networks.neural
    tasks = [
        Task(dpsgd_settings_task, dict(task=task, dataset=ds, n_obs=int(n), epsilons=[float(e) for e in epsilons],
                                       repeat=r, data_seed=s, d=d, data_path=data_path, settings=list(settings)),
             label=f"DP-SGD settings {task} {ds} n={n} d={d} repeat={r}")
        for (ds, n, r), s in zip(grid, data_seeds)
    ]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/{stream}/dpsgd-settings", workers=workers,
                     executor=executor, progress=progress, desc=f"Jewson 2023 DP-SGD settings ({task})")


__all__ = ["SETTINGS", "dpsgd_settings", "dpsgd_settings_task", "network_data"]
