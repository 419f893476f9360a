"""Jewson, Ghalebikesabi & Holmes (2023): the simulated logistic experiments on the design that
Sec. 5 states (issue 49, item 5), run beside the study's committed parts without touching them.

Sec. 5: "we generate d-dimensional features from a multivariate normal distribution with the
identity matrix as covariance matrix, sample the model parameters from a normal distribution
with mean 0 and standard deviation 3 (i.e. a d dimensional vector for the logistic regression),
and simulate the label according to the assumed likelihood model"; the features are then
scaled to [0, 1]. :func:`~.data.simulate_logistic_paper` draws exactly that: d features, d
coefficients, no constant column, no intercept, nothing centred. The study's part ``logistic``
(:mod:`.study`) uses :func:`~.data.simulate_logistic` instead, a constant column plus d - 1
features with the intercept centring the predictor, under which Figure 2's simulated ROC-AUC at
d = 2 is the same for every method with the slope's sign right.

* :func:`logistic_paper` -- Figure 2's simulated half (log parameter RMSE, test ROC-AUC and,
  for Figure 7, the correct-sign accuracy vs n) on the paper's design;
* :func:`features_paper` -- Figure 10's logistic row (vs d at fixed n) on it.

Everything but the data is the study's own code: :func:`paper_design_task` calls
:func:`.study.logistic_task` (the same methods -- beta-D, Chaudhuri et al. with lambda = 1/(9n)
and 1/9 at the paper's noise scale, Minami et al., the non-private posterior mean PM -- the same
sampler, metrics and rows) with the one data set it is given in place of the one that
``logistic_task`` would draw through ``study._logistic_data``: that name is bound to this data
set for the duration of the call only (under a lock, restored afterwards; a call that does not
go through it raises), so that no part of ``logistic_task`` is copied here. The RMSE and the
correct-sign accuracy are against the d coefficients the labels were drawn with.

Seed streams of their own (``jewson2023/paper-design-logistic-sim``,
``jewson2023/paper-design-features-d<d>`` and their ``/data`` children), so the tables do not
depend on the study's runs. Every unit is a :class:`~pystanprivacy.run.runner.Task`; seeds give
reproducibility, not security. This module holds task functions: its source is part of their
saved keys, so it is not edited once its tasks are committed (helpers live in
:mod:`.paper_design_figures`).

References
----------
.. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), "Differentially private statistical
   inference through beta-divergence one posterior sampling", NeurIPS. Sec. 5 ("Data sets",
   "Logistic regression", Figure 2), Appendix B (d = 2; Figures 7 and 10).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_int
from ...run.runner import Task, run_tasks, task_seeds
from ...run.study import Study
from . import study
from .common import PAPER
from .data import Dataset, simulate_logistic_paper

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="jewson2023/paper_design", version=1)

__all__ = [
    "DESIGN",
    "FEATURES_STREAM",
    "LOGISTIC_STREAM",
    "features_paper",
    "logistic_paper",
    "paper_design_task",
]

#: the ``design`` column of this module's rows
DESIGN = "paper"
#: the seed stream of Figure 2's simulated half on the paper's design
LOGISTIC_STREAM = "paper-design-logistic-sim"
#: the seed stream of Figure 10's logistic row at d on the paper's design (``.format(d=d)``)
FEATURES_STREAM = "paper-design-features-d{d}"

_SWAP = threading.Lock()  # one substitution of study._logistic_data at a time in a process


def _fit_on(data: Dataset, **kwargs: Any) -> pd.DataFrame:
    """:func:`.study.logistic_task` (``dataset="simulated"``) on ``data``: its draw of the data,
    ``study._logistic_data``, returns ``data`` and its truth for this call, and must be called
    exactly once (else ``RuntimeError``: ``logistic_task`` no longer draws its data there)."""
    calls = []

    def given(dataset: str, n_obs: int, d: int, data_seed: Any, data_path: Any) -> tuple[Dataset, np.ndarray]:
        if dataset != "simulated" or n_obs != data.n or d != data.n_features:
            raise RuntimeError(f"logistic_task asked for ({dataset!r}, n={n_obs}, d={d}), not the data set given")
        calls.append(dataset)
        return data, data.truth["theta"]

    with _SWAP:
        drawn = study._logistic_data
        study._logistic_data = given
        try:
            table = study.logistic_task(dataset="simulated", n_obs=data.n, d=data.n_features, **kwargs)
        finally:
            study._logistic_data = drawn
    if len(calls) != 1:
        raise RuntimeError(
            f"study.logistic_task drew its data {len(calls)} times through study._logistic_data (expected once): "
            "paper_design must follow how it now draws its data"
        )
    return table


@STUDY.task(programs=("jewson2023/logistic",))
def paper_design_task(
    *,
    n_obs: int,
    epsilons: Sequence[float],
    repeat: int,
    data_seed: Any,
    d: int = 2,
    methods: Sequence[str] = study.LOGISTIC_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: Any = None,
) -> pd.DataFrame:
    """One data set of the paper's design (:func:`~.data.simulate_logistic_paper`: ``n_obs``
    training and 1,000 test records, ``d`` features and coefficients, from ``data_seed``) and
    every method at every epsilon on it: the rows of :func:`.study.logistic_task` (``seed``
    draws the releases), with ``design`` (:data:`DESIGN`) and the share of y = 1 in the
    training and test labels (``y1_share``, ``y1_share_test``: simulated data; a one-class
    test set has a NaN ``auc``)."""
    data = simulate_logistic_paper(n_obs, d, n_test=1000, seed=data_seed)
    table = _fit_on(
        data, epsilons=epsilons, repeat=repeat, data_seed=data_seed, methods=methods, sampler=sampler, seed=seed
    )
    return table.assign(design=DESIGN, y1_share=float(data.y.mean()), y1_share_test=float(data.y_test.mean()))


def _run(
    settings: Sequence[tuple[int, int, int]],
    *,
    epsilons: Sequence[float],
    methods: Sequence[str],
    sampler: Mapping[str, int] | None,
    seed: int,
    stream: str,
    workers: int,
    executor: Any,
    progress: bool,
) -> pd.DataFrame:
    """:func:`paper_design_task` for every (n, d, repeat) of ``settings``, data seeds from
    ``f"{PAPER}/{stream}/data"`` and release seeds from ``f"{PAPER}/{stream}"``."""
    unknown = sorted(set(methods) - set(study.LOGISTIC_METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; allowed: {list(study.LOGISTIC_METHODS)}")
    data_seeds = task_seeds(seed, len(settings), stream=f"{PAPER}/{stream}/data")
    tasks = [
        Task(
            paper_design_task,
            dict(
                n_obs=int(n),
                epsilons=[float(e) for e in epsilons],
                repeat=int(r),
                data_seed=s,
                d=int(d),
                methods=list(methods),
                sampler=sampler,
            ),
            label=f"paper design n={n} d={d} repeat={r}",
        )
        for (n, d, r), s in zip(settings, data_seeds)
    ]
    return run_tasks(
        tasks,
        seed=seed,
        stream=f"{PAPER}/{stream}",
        workers=workers,
        executor=executor,
        progress=progress,
        desc="Jewson 2023 logistic, the paper's design",
    )


def logistic_paper(
    *,
    ns: Sequence[int] = (100, 1000),
    epsilons: Sequence[float] = (0.5, 5.0),
    repeats: int = 2,
    d: int = 2,
    methods: Sequence[str] = study.LOGISTIC_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figure 2's simulated half (and Figure 7's simulated CSA) on the paper's design: one task
    per (n, repeat), every method at every epsilon on the same data set (stream
    :data:`LOGISTIC_STREAM`). The full grid is the study's ``FULL["logistic_sim_ns"]``,
    ``FULL["logistic_sim_epsilons"]``, ``FULL["logistic_repeats"]`` with d = 2 (App. B)."""
    repeats = check_int(repeats, "repeats", minimum=1)
    d = check_int(d, "d", minimum=1)
    ns = [check_int(n, "ns[i]", minimum=1) for n in ns]
    settings = [(n, d, r) for n in ns for r in range(repeats)]
    return _run(
        settings,
        epsilons=epsilons,
        methods=methods,
        sampler=sampler,
        seed=seed,
        stream=LOGISTIC_STREAM,
        workers=workers,
        executor=executor,
        progress=progress,
    )


def features_paper(
    *,
    ds: Sequence[int] = (2, 5, 10, 20),
    n_obs: int = 1000,
    epsilons: Sequence[float] = (0.2, 0.5, 1.0, 5.0),
    repeats: int = 10,
    methods: Sequence[str] = study.LOGISTIC_METHODS,
    sampler: Mapping[str, int] | None = None,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figure 10's logistic row on the paper's design: ``n_obs`` records with d features and d
    coefficients for every d in ``ds``, every method at every epsilon, each d from its own
    stream (:data:`FEATURES_STREAM`). ``rmse`` is the root mean square over the d coefficients,
    the paper's RMSE "divided by the number of dimensions", as in :func:`.study.features`."""
    repeats = check_int(repeats, "repeats", minimum=1)
    n_obs = check_int(n_obs, "n_obs", minimum=1)
    ds = [check_int(d, "ds[i]", minimum=1) for d in ds]
    fits = [
        _run(
            [(n_obs, d, r) for r in range(repeats)],
            epsilons=epsilons,
            methods=methods,
            sampler=sampler,
            seed=seed,
            stream=FEATURES_STREAM.format(d=d),
            workers=workers,
            executor=executor,
            progress=progress,
        )
        for d in ds
    ]
    return pd.concat(fits, ignore_index=True)
