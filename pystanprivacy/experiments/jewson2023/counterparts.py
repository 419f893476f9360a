"""Two supplements to the study of Jewson, Ghalebikesabi & Holmes (2023), Appendix B, run on
their own (issue 49, item 5) without touching :mod:`.study`'s committed tasks:

* :func:`counterparts` -- Figure 6's Chaudhuri half: on the very data sets of the logistic
  part (Figure 2; the same data seeds, :func:`logistic_data_seeds`), Chaudhuri et al.'s release
  (:func:`~.baselines.chaudhuri_output_perturbation`, the paper's noise scale, lambda = 1/(9n)
  and 1/9) next to its non-private counterpart, the noise-free regularised minimiser
  theta_hat(D) (:func:`~.baselines.regularised_logistic_regression`). Both are scored as
  Figure 6 scores them, the log RMSE to the data-generating theta (simulated) and the test
  ROC-AUC (UCI), and each release's distance from its counterpart (the RMS over coefficients of
  release minus theta_hat(D)) is recorded too. Figure 6's beta-D half (beta-D vs the posterior
  mean PM) is the logistic part's own rows.
* :func:`attack_paper_rounds` -- Figure 11 at the paper's number of attack rounds: "we run
  10,000 rounds of the attack" (App. B), each round showing the attacker the output on D or on
  D' by a fair coin (Sec. 4). :func:`~.study.attack_task` with 5,000 outputs per data set is
  those 10,000 rounds with the coin's split fixed at its expectation, 5,000 and 5,000; the
  study's full run has 50,000 per data set. Its own seed stream, so it is independent of that
  run.

Every unit is a :class:`~pystanprivacy.run.runner.Task` with a SeedSequence-derived seed. Seeds
give reproducibility, not security.

References
----------
.. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), "Differentially private statistical
   inference through beta-divergence one posterior sampling", NeurIPS. Sec. 4 (the attack),
   Appendix B (Figures 6 and 11; 10,000 attack rounds).
.. [2] K. Chaudhuri, C. Monteleoni and A. D. Sarwate (2011), "Differentially private empirical
   risk minimization", JMLR 12.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int, check_random_state
from ...run.runner import Task, run_tasks, task_seeds
from ...run.study import Study
from .common import uci_files
from .baselines import CHAUDHURI_LAMBDAS, chaudhuri_output_perturbation, regularised_logistic_regression
from .common import PAPER, rmse, roc_auc
from .study import (
    ATTACK_METHODS,
    CHAUDHURI_CALIBRATION,
    _logistic_data,  # the logistic part's data: the same data sets, by construction
    attack_task,
    correct_sign_accuracy,
)

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="jewson2023/counterparts", version=1)

__all__ = [
    "CHAUDHURI_METHODS",
    "PAPER_ATTACK_ROUNDS",
    "attack_paper_rounds",
    "chaudhuri_counterpart_rows",
    "counterpart_task",
    "counterparts",
    "erm_method",
    "logistic_data_seeds",
]

#: the two Chaudhuri methods of the logistic part, by the name of their lambda rule
CHAUDHURI_METHODS = tuple(f"Chaudhuri {name}" for name in CHAUDHURI_LAMBDAS)
#: the paper's attack rounds in all (App. B: "we run 10,000 rounds of the attack")
PAPER_ATTACK_ROUNDS = 10_000


def erm_method(method: str) -> str:
    """The row name of the non-private counterpart of Chaudhuri method ``method``: its
    noise-free regularised minimiser."""
    if method not in CHAUDHURI_METHODS:
        raise ValueError(f"method must be one of {list(CHAUDHURI_METHODS)}, got {method!r}")
    return f"{method} ERM (non-private)"


def logistic_data_seeds(
    *, datasets: Sequence[str], ns: Sequence[int], repeats: int, seed: int, stream: str
) -> list[tuple[str, int, int, np.random.SeedSequence]]:
    """(data set, n, repeat, data seed) of every data set that
    :func:`~.study.logistic` draws when called with these arguments: its settings in its order
    and its data seeds ``task_seeds(seed, ., stream=f"{PAPER}/{stream}/data")``, so that
    :func:`counterpart_task` sees the logistic part's very data sets (the full run: streams
    ``logistic-sim`` for ``["simulated"]`` and ``logistic-uci`` for ``["adult", "abalone"]``)."""
    repeats = check_int(repeats, "repeats", minimum=1)
    settings = [(ds, int(n), r) for ds in datasets for n in ns for r in range(repeats)]
    seeds = task_seeds(seed, len(settings), stream=f"{PAPER}/{stream}/data")
    return [(ds, n, r, s) for (ds, n, r), s in zip(settings, seeds)]


def _scores(theta: np.ndarray, data: Any, reference: np.ndarray) -> dict[str, float]:
    """Figure 6's scores of coefficients ``theta``: RMSE to the truth (simulated data only),
    test ROC-AUC, and the correct-sign accuracy against ``reference`` (Figure 8's)."""
    return {
        "rmse": rmse(theta, reference) if data.truth is not None else np.nan,
        "auc": roc_auc(data.y_test, data.X_test @ theta),
        "csa": correct_sign_accuracy(theta, reference),
    }


def chaudhuri_counterpart_rows(
    data: Any, reference: np.ndarray, *, epsilons: Sequence[float], seed: Any = None
) -> list[dict[str, Any]]:
    """For each lambda of :data:`~.baselines.CHAUDHURI_LAMBDAS`: one row for the noise-free
    regularised minimiser theta_hat(D) (``epsilon`` inf, method :func:`erm_method`) and one
    per epsilon for Chaudhuri et al.'s release at the paper's noise scale
    (:data:`~.study.CHAUDHURI_CALIBRATION`), with Figure 6's scores of each
    (:func:`_scores`) and, for a release, ``distance``: sqrt(mean_j (release_j -
    theta_hat_j)^2), its RMS distance from its counterpart, and ``noise_scale`` 2 / (n lambda
    epsilon), the Laplace scale per coefficient (so E[distance^2] = 2 noise_scale^2).

    ``data``: a :class:`~.data.Dataset` with features in [0, 1]; ``reference``: the truth or
    the non-private reference of the correct-sign accuracy. ``seed`` draws the noise."""
    rng = check_random_state(seed)
    epsilons = [check_epsilon(e) for e in epsilons]
    rows: list[dict[str, Any]] = []
    for name, rule in CHAUDHURI_LAMBDAS.items():
        method, lam = f"Chaudhuri {name}", rule(data.n)
        t = time.perf_counter()
        erm = regularised_logistic_regression(data.X, data.y, lam=lam)
        rows.append(
            {
                "method": erm_method(method),
                "epsilon": math.inf,
                "lam": lam,
                "released": True,
                **_scores(erm, data, reference),
                "seconds": time.perf_counter() - t,
            }
        )
        for eps in epsilons:
            t = time.perf_counter()
            rel = chaudhuri_output_perturbation(
                data.X, data.y, epsilon=eps, lam=lam, calibration=CHAUDHURI_CALIBRATION, seed=rng
            )
            theta = np.asarray(rel.values, dtype=float)
            rows.append(
                {
                    "method": method,
                    "epsilon": eps,
                    "lam": lam,
                    "released": True,
                    **_scores(theta, data, reference),
                    "distance": rmse(theta, erm),
                    "noise_scale": 2.0 / (data.n * lam * eps),
                    "epsilon_guarantee": rel.record.epsilon,
                    "seconds": time.perf_counter() - t,
                }
            )
    return rows


@STUDY.task(data=uci_files)
def counterpart_task(
    *,
    dataset: str,
    n_obs: int,
    epsilons: Sequence[float],
    repeat: int,
    data_seed: Any,
    d: int = 2,
    data_path: str | Path | None = None,
    seed: Any = None,
) -> pd.DataFrame:
    """One data set of the logistic part (simulated with ``d`` coefficients, or ``n_obs`` rows
    of a UCI training split; :func:`~.study._logistic_data` with the part's ``data_seed``) and
    :func:`chaudhuri_counterpart_rows` on it."""
    data, reference = _logistic_data(dataset, n_obs, d, data_seed, data_path)
    rows = chaudhuri_counterpart_rows(data, reference, epsilons=epsilons, seed=seed)
    head = {"dataset": dataset, "n_obs": data.n, "d": data.n_features, "repeat": repeat}
    return pd.DataFrame([{**head, **row} for row in rows])


def counterparts(
    *,
    datasets: Sequence[str] = ("simulated",),
    ns: Sequence[int] = (100, 1000),
    epsilons: Sequence[float] = (0.5, 5.0),
    repeats: int = 2,
    d: int = 2,
    data_path: str | Path | None = None,
    seed: int = 0,
    stream: str = "logistic",
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figure 6's Chaudhuri half: :func:`counterpart_task` on every data set that
    :func:`~.study.logistic` with the same ``datasets``, ``ns``, ``repeats``, ``seed`` and
    ``stream`` draws (:func:`logistic_data_seeds`); the noise from the stream
    ``f"{PAPER}/counterparts-{stream}"``."""
    tasks = [
        Task(
            counterpart_task,
            dict(
                dataset=ds,
                n_obs=n,
                epsilons=[float(e) for e in epsilons],
                repeat=r,
                data_seed=s,
                d=d,
                data_path=data_path,
            ),
            label=f"counterparts {ds} n={n} repeat={r}",
        )
        for ds, n, r, s in logistic_data_seeds(datasets=datasets, ns=ns, repeats=repeats, seed=seed, stream=stream)
    ]
    return run_tasks(
        tasks,
        seed=seed,
        stream=f"{PAPER}/counterparts-{stream}",
        workers=workers,
        executor=executor,
        progress=progress,
        desc="Jewson 2023 Figure 6, Chaudhuri",
    )


def attack_paper_rounds(
    *,
    epsilons: Sequence[float] = (0.2, 1.0, 2.0, 7.0, 10.0, 20.0),
    methods: Sequence[str] = ATTACK_METHODS,
    rounds: int = PAPER_ATTACK_ROUNDS,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Figure 11's attack (:func:`~.study.attack_task`, the study's settings) with ``rounds``
    rounds in all: ``rounds / 2`` outputs from each of D and D' (the fair coin of Sec. 4 at its
    expected split; ``rounds`` must be even). Seed stream ``f"{PAPER}/attack-paper-rounds"``,
    independent of the study's ``attack`` part."""
    rounds = check_int(rounds, "rounds", minimum=2)
    if rounds % 2:
        raise ValueError(f"rounds must be even (half from D, half from D'), got {rounds}")
    unknown = sorted(set(methods) - set(ATTACK_METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; allowed: {list(ATTACK_METHODS)}")
    tasks = [
        Task(
            attack_task,
            dict(method=m, epsilon=float(e), rounds=rounds // 2),
            label=f"attack {m} eps={e} rounds={rounds}",
        )
        for m in methods
        for e in epsilons
    ]
    table = run_tasks(
        tasks,
        seed=seed,
        stream=f"{PAPER}/attack-paper-rounds",
        workers=workers,
        executor=executor,
        progress=progress,
        desc="Jewson 2023 attack, the paper's rounds",
    )
    return table.assign(rounds_in_all=rounds)
