"""Neural-network experiments of Jewson, Ghalebikesabi & Holmes (2023) (Sec. 5, Appendix B).

* :func:`neural` -- Figure 3 (neural-network regression, test RMSE vs n) and Figure 9
  (neural-network classification, test ROC-AUC vs n): beta-D-Bayes vs DP-SGD (only with the
  optional extra ``[dpsgd]``; the rows are left out, and the sidecar says so, without it), the
  non-private standard posterior (posterior mean of the output) and non-private SGD.
* :func:`neural_features` -- the network rows of Figure 10 (Appendix B, "Sensitivity in number
  of features"): the same comparison on simulated data at a fixed n for several numbers of
  features d.

One hidden layer of 10 tanh units with N(0, 1) priors (Appendix B); features scaled to [0, 1].
Every (data set, n, d, repeat) is one :class:`~pystanprivacy.run.runner.Task` with a
SeedSequence-derived seed, so tables do not depend on the number of workers.

Where we depart from the paper: the variance lower bound ``s2`` of the Gaussian (neural-network
regression) experiments. Appendix B ("Bayesian models") bounds sigma2 below by s2 = 0.01 for
linear and neural-network regression; the networks' figures use small epsilon (the text of
Appendix B discusses epsilon = 0.2, 0.5 and 5 for Figures 9-10, and Figure 3 is the same
comparison). By Example 2 and Theorem 1 that bound gives M = (2 pi 0.01)^(-1/2) = 3.99 and
epsilon = 2 M^(beta-1)/(beta-1) >= 2 e ln M = 7.52 for every beta, so epsilon below 7.52 is not
reachable with s2 = 0.01 (the issue notes that the authors' public code calibrates beta with
the prior variance instead of the enforced bound, which does not give the stated guarantee;
we could not check that code offline). We calibrate with the bound the sampler enforces and use
``EXPERIMENT_S2`` = 1/(2 pi) = 0.159 (M = 1, beta = 1 + 2/epsilon as for the classifiers;
every epsilon reachable). The simulated responses have noise variance exp(N(0, 1)), below
0.159 with probability 3 %. The model classes keep the paper's default s2 = 0.01 and refuse an
unreachable epsilon with an error naming epsilon, s2, the smallest reachable epsilon and the s2
that would reach it (:func:`pystanprivacy.models.jewson2023.min_epsilon`,
:func:`~pystanprivacy.models.jewson2023.min_variance_bound`).
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int, check_random_state, check_sampler
from ...models.jewson2023 import NNClassifierBetaD, NNRegressionBetaD, nn_forward
from ...run.runner import Task, run_tasks, task_seeds
from ...run.study import Study
from .common import uci_files
from .baselines import dpsgd_available, train_nn_sgd
from .common import MINAMI_DELTA, PAPER, SAMPLER, rmse, roc_auc
from .data import load_uci, simulate_nn, subsample

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="jewson2023/networks", version=1)

#: method names of the neural-network experiments
NEURAL_METHODS = ("beta-D", "DP-SGD", "PM (non-private)", "SGD (non-private)")
#: the Gaussian models' variance lower bound in the experiments: M = 1 (see module doc)
EXPERIMENT_S2 = 1.0 / (2.0 * math.pi)


@STUDY.task(programs=("jewson2023/nn_classifier", "jewson2023/nn_regression"), data=uci_files)
def neural_task(
    *,
    task: str,
    dataset: str,
    n_obs: int,
    epsilons: Sequence[float],
    repeat: int,
    data_seed: Any,
    d: int = 2,
    s2: float = EXPERIMENT_S2,
    data_path: str | Path | None = None,
    methods: Sequence[str] = NEURAL_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: Any = None,
) -> pd.DataFrame:
    """One data set for the neural-network experiments (Figures 3 and 9): beta-D-Bayes at
    every epsilon, DP-SGD (if the extra is installed), the non-private standard posterior
    (posterior-mean prediction) and SGD (if installed). One row per (method, epsilon) with
    test RMSE (regression) or test ROC-AUC (classification)."""
    sampler = check_sampler(sampler, SAMPLER)
    rng = check_random_state(seed)
    if dataset == "simulated":
        data = simulate_nn(n_obs, d, task=task, n_test=1000, seed=data_seed)
    else:
        full = load_uci(dataset, data_path, intercept=False, seed=np.random.default_rng(0))
        data = subsample(full, n_obs, seed=check_random_state(data_seed))
    model = NNRegressionBetaD(s2=s2) if task == "regression" else NNClassifierBetaD()
    rows: list[dict[str, Any]] = []

    def add(method: str, eps: float, pred: np.ndarray | None, seconds: float, **extra: Any) -> None:
        row = {"task": task, "dataset": dataset, "n_obs": data.n, "d": data.n_features, "repeat": repeat,
               "method": method, "epsilon": eps, "released": pred is not None, "seconds": seconds}
        if pred is not None:
            if task == "regression":
                row["test_rmse"] = rmse(pred, data.y_test)
            else:
                row["auc"] = roc_auc(data.y_test, pred)
        row.update(extra)
        rows.append(row)

    have_torch = dpsgd_available()
    for eps in epsilons:
        eps = check_epsilon(eps)
        if "beta-D" in methods:
            t = time.perf_counter()
            out = model.try_sample_one(data.X, data.y, epsilon=eps, seed=rng, **sampler)
            pred = None if out.params is None else model.predict(out.params, data.X_test)
            add("beta-D", eps, pred, time.perf_counter() - t, beta=out.details["beta"], problems="; ".join(out.problems))
        if "DP-SGD" in methods and have_torch:
            t = time.perf_counter()
            params, _ = train_nn_sgd(data.X, data.y, task=task, epsilon=eps, delta=MINAMI_DELTA, seed=rng)
            add("DP-SGD", eps, nn_forward(data.X_test, params["W"], params["b_in"], params["w_out"], params["b_out"]),
                time.perf_counter() - t)
    if "PM (non-private)" in methods:
        t = time.perf_counter()
        post = model.fit_nonprivate(data.X, data.y, seed=rng, **sampler)
        W, b_in, w_out, b_out = (post.draws(k) for k in ("W", "b_in", "w_out", "b_out"))
        pred = nn_forward(data.X_test, W, b_in, w_out, b_out)
        if task == "classification":
            pred = np.mean(1.0 / (1.0 + np.exp(-pred)), axis=0)
        else:
            pred = pred.mean(axis=0)
        add("PM (non-private)", math.inf, pred, time.perf_counter() - t)
    if "SGD (non-private)" in methods and have_torch:
        t = time.perf_counter()
        params, _ = train_nn_sgd(data.X, data.y, task=task, epsilon=None, seed=rng)
        add("SGD (non-private)", math.inf,
            nn_forward(data.X_test, params["W"], params["b_in"], params["w_out"], params["b_out"]), time.perf_counter() - t)
    return pd.DataFrame(rows)


def neural(
    *,
    task: str = "regression",
    datasets: Sequence[str] = ("simulated",),
    ns: Sequence[int] = (100, 500),
    epsilons: Sequence[float] = (5.0,),
    repeats: int = 1,
    d: int = 2,
    s2: float = EXPERIMENT_S2,
    data_path: str | Path | None = None,
    methods: Sequence[str] = NEURAL_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    stream: str | None = None,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figure 3 (``task="regression"``) or Figure 9 (``task="classification"``): every
    (data set, n, repeat) is one :func:`neural_task`. ``stream`` names the seed streams
    (default ``nn-<task>``)."""
    if task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression' or 'classification', got {task!r}")
    repeats = check_int(repeats, "repeats", minimum=1)
    unknown = sorted(set(methods) - set(NEURAL_METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; allowed: {list(NEURAL_METHODS)}")
    stream = f"nn-{task}" if stream is None else stream
    settings = [(ds, n, r) for ds in datasets for n in ns for r in range(repeats)]
    data_seeds = task_seeds(seed, len(settings), stream=f"{PAPER}/{stream}/data")
    tasks = [
        Task(neural_task, dict(task=task, dataset=ds, n_obs=int(n), epsilons=[float(e) for e in epsilons], repeat=r,
                               data_seed=s, d=d, s2=s2, data_path=data_path, methods=list(methods), sampler=sampler),
             label=f"NN {task} {ds} n={n} d={d} repeat={r}")
        for (ds, n, r), s in zip(settings, data_seeds)
    ]
    return run_tasks(tasks, seed=seed, stream=f"{PAPER}/{stream}", workers=workers, executor=executor,
                     progress=progress, desc=f"Jewson 2023 NN {task}")


def neural_features(
    *,
    task: str = "regression",
    ds: Sequence[int] = (2, 5, 10, 20),
    n_obs: int = 1000,
    epsilons: Sequence[float] = (0.2, 0.5, 1.0, 5.0),
    repeats: int = 10,
    s2: float = EXPERIMENT_S2,
    methods: Sequence[str] = NEURAL_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figure 10, its network rows (Appendix B, "Sensitivity in number of features"): simulated
    network data with ``n_obs`` records and ``d`` features for every ``d`` in ``ds``, every
    method at every epsilon (:func:`neural`; each d draws its data from its own stream,
    ``nn-<task>-features-d<d>``). The paper's grid of d is not stated; its text reads the
    middle row as regression (test RMSE) and the bottom row as classification (ROC-AUC)."""
    ds = [check_int(d, "ds[i]", minimum=1) for d in ds]
    n_obs = check_int(n_obs, "n_obs", minimum=2)
    fits = [neural(task=task, datasets=["simulated"], ns=[n_obs], epsilons=epsilons, repeats=repeats, d=d, s2=s2,
                   methods=methods, sampler=sampler, seed=seed, stream=f"nn-{task}-features-d{d}", workers=workers,
                   executor=executor, progress=progress)
            for d in ds]
    return pd.concat(fits, ignore_index=True)


__all__ = ["EXPERIMENT_S2", "NEURAL_METHODS", "neural", "neural_features", "neural_task"]
