"""Foulds, Geumlek, Welling & Chaudhuri (2016), Sec. 5, a claim made in the text only: "when
given 10 states, the privacy-preserving model only assigned substantial numbers of data
points to these 2-3 states, while a non-private HMM happily fit a 10-state model to the data"
(the Laplace noise acting as a regulariser).

* :func:`occupancy_study` -- the 10-state naive-Bayes HMM on the logs of Figures 3-5 (the
  same synthetic logs, from the same seed stream, or the same real file), non-private, Laplace
  at each total ε and OPS (M = 100): one :func:`~.hmm.state_task` each, so the most frequent
  state of every region/month is found exactly as for Figures 3-5.
* :func:`occupancy_table` -- per fit and state: the cells and the log entries (the paper's
  "data points") whose most frequent state it is, and their shares; :func:`summarise_occupancy`
  counts per fit the states that hold any entry, those holding a *substantial* share
  (``>= threshold``, default 5 % of the entries; the paper gives no number) and the effective
  number of states exp(entropy of the entry shares).
* :func:`reproduce` -- both, written as ``foulds2016_hmm_occupancy{,_summary}.csv`` with
  sidecars and ``foulds2016_hmm_occupancy.png``.

Seeds give reproducibility, not security.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int, check_real, check_sampler
from ...run.runner import Task, make_executor, root_sequence, run_tasks, write_results
from . import hmm
from .logs import provenance
from .warlogs import WarLogCounts, load_war_logs

NAME = f"{hmm.NAME}_occupancy"

QUICK: dict[str, Any] = {
    "epsilons": (5.0,),
    "sampler": {"chains": 2, "warmup": 150, "draws": 100, "max_treedepth": 6},
}
FULL: dict[str, Any] = {
    "epsilons": (5.0,),  # the paper's setting of Figures 3-5 (total epsilon 5)
    "sampler": {"chains": 4, "warmup": 500, "draws": 500},
}
#: the number of states the paper gives the model for this claim
N_STATES = 10
#: the OPS multiplier of Figures 3-5 (a0 = 1/(M K_d))
OPS_MULTIPLIER = 100.0
#: share of the log entries above which a state counts as holding "substantial numbers"
THRESHOLD = 0.05


def occupancy_study(
    datasets: Mapping[str, tuple[WarLogCounts, np.ndarray | None]],
    *,
    n_states: int = N_STATES,
    epsilons: Sequence[float] = FULL["epsilons"],
    methods: Sequence[str] = hmm.METHODS,
    ops_multiplier: float = OPS_MULTIPLIER,
    sampler: Mapping[str, int] = FULL["sampler"],
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One :func:`~.hmm.state_task` with ``n_states`` states per data set and method (Laplace
    and OPS at every total ε, the non-private fit once). Returns its cell rows."""
    n_states = check_int(n_states, "n_states", minimum=2)
    epsilons = [check_epsilon(e, "epsilons[i]") for e in epsilons]
    sampler = check_sampler(sampler, FULL["sampler"], optional=("max_treedepth",))
    tasks = []
    for label, (counts, truth) in datasets.items():
        for m in methods:
            hmm._check_method(m, ops_multiplier)
            for eps in ([np.inf] if m == "non-private" else epsilons):
                tasks.append(Task(hmm.state_task, dict(counts=counts, truth=truth, dataset=label, method=m,
                                                       n_states=n_states, epsilon=eps,
                                                       multiplier=ops_multiplier if m == "ops" else None,
                                                       sampler=sampler),
                                  label=f"occupancy {label} {m} eps={eps}"))
    table = run_tasks(tasks, seed=seed, stream=NAME, workers=workers, executor=executor, progress=progress,
                      desc="Foulds 2016 HMM state occupancy")
    return table.loc[table["part"] == "cell"].reset_index(drop=True)


_FIT = ["dataset", "method", "epsilon", "multiplier", "n_states"]


def occupancy_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Per fit (data set, method, ε, M) and state ranked by its share of the entries: the
    cells and log entries whose most frequent state it is, and their shares of the fit's
    cells and entries. Every state of the model appears (empty ones with zeros)."""
    rows = []
    for key, g in cells.groupby(_FIT, dropna=False, sort=False):
        k = int(key[-1])
        state = g["state"].to_numpy(dtype=int) - 1
        n_cells = np.bincount(state, minlength=k)
        n_entries = np.bincount(state, weights=g["n_entries"].to_numpy(dtype=float), minlength=k)
        order = np.lexsort((-n_cells, -n_entries))
        for rank, s in enumerate(order, start=1):
            rows.append({**dict(zip(_FIT, key)), "rank": rank, "state": int(s) + 1, "cells": int(n_cells[s]),
                         "entries": int(n_entries[s]), "cell_share": n_cells[s] / n_cells.sum(),
                         "entry_share": n_entries[s] / n_entries.sum(),
                         "converged_invariant": bool(g["converged_invariant"].iloc[0]),
                         "seconds": float(g["seconds"].iloc[0])})
    return pd.DataFrame(rows)


def summarise_occupancy(table: pd.DataFrame, threshold: float = THRESHOLD) -> pd.DataFrame:
    """Per fit: ``states_used`` (states holding any entry), ``states_substantial`` (holding at
    least ``threshold`` of the entries), ``effective_states`` = exp(-sum_k s_k log s_k) of the
    entry shares s_k, the largest share, and whether the chains agreed on the label-invariant
    quantities (``converged_invariant``: log-likelihood and sorted occupancy)."""
    threshold = check_real(threshold, "threshold")
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must be in (0, 1), got {threshold!r}")
    rows = []
    for key, g in table.groupby(_FIT, dropna=False, sort=False):
        share = g["entry_share"].to_numpy(dtype=float)
        used = share[share > 0]
        rows.append({**dict(zip(_FIT, key)), "states_used": int(used.size),
                     "states_substantial": int(np.count_nonzero(share >= threshold)),
                     "effective_states": float(np.exp(-np.sum(used * np.log(used)))),
                     "largest_share": float(share.max()), "threshold": threshold,
                     "converged_invariant": bool(g["converged_invariant"].iloc[0]),
                     "seconds": float(g["seconds"].iloc[0])})
    return pd.DataFrame(rows)


def _datasets(size: Mapping[str, Any], seed: int, data_path: str | Path | None, *,
              real: bool = False) -> dict[str, tuple[WarLogCounts, np.ndarray | None]]:
    """The logs of Figures 3-5: a real file, or those that :func:`.hmm.reproduce` uses for its
    states study: with ``real=True`` the shipped Afghan War Diary and synthetic Iraq logs
    (:func:`.logs.study_logs`), otherwise the synthetic logs of both (same seed streams)."""
    if data_path is not None:
        counts = load_war_logs(data_path)
        return {counts.dataset: (counts, None)}
    if real:
        from .logs import study_logs

        return study_logs(size, seed, real=True)
    out = {}
    for kind, kwargs in size["datasets"].items():
        rng = np.random.default_rng(root_sequence(seed, f"{hmm.NAME}/data/{kind}"))
        out[f"synthetic {kind}"] = hmm.synthetic_dataset(kind, seed=rng, **kwargs)
    return out


def reproduce(
    out_dir: str | Path,
    *,
    quick: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    data_path: str | Path | None = None,
) -> dict[str, pd.DataFrame]:
    """Write ``foulds2016_hmm_occupancy.csv`` (per fit and state), its ``_summary`` (per fit)
    and ``foulds2016_hmm_occupancy.png``. ``quick=True``: ε = 5 and short chains
    (2 x (150 + 100)) on the quick logs of :data:`.hmm.QUICK`; ``quick=False``: ε = 5,
    4 chains x (500 + 500), on the full-size logs: the shipped Afghan War Diary and synthetic
    Iraq logs (:mod:`.logs`). Returns the tables ``occupancy`` and
    ``occupancy_summary``."""
    from . import hmm_figures as plots

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    size = QUICK if quick else FULL
    data = _datasets(hmm.QUICK if quick else hmm.FULL, seed, data_path, real=not quick)
    args = dict(n_states=N_STATES, epsilons=list(size["epsilons"]), methods=list(hmm.METHODS),
                ops_multiplier=OPS_MULTIPLIER, sampler=dict(size["sampler"]))
    t = time.perf_counter()
    with make_executor(workers) as ex:
        cells = occupancy_study(data, **args, seed=seed, workers=workers, executor=ex, progress=progress)
    tables = {"occupancy": occupancy_table(cells)}
    tables["occupancy_summary"] = summarise_occupancy(tables["occupancy"])
    meta = {**args, "seed": seed, "quick": quick, "workers": workers, "threshold": THRESHOLD, "stream": NAME,
            "data_path": None if data_path is None else str(data_path), "seconds": time.perf_counter() - t,
            "data": provenance(list(data), data_path=data_path, seed=seed)}
    for name, table in tables.items():
        write_results(out, f"{hmm.PAPER}_hmm_{name}", table, meta)
    plots.occupancy(tables["occupancy"], out / f"{NAME}.png", threshold=THRESHOLD)
    return tables


__all__ = ["FULL", "N_STATES", "NAME", "OPS_MULTIPLIER", "QUICK", "THRESHOLD", "occupancy_study",
           "occupancy_table", "reproduce", "summarise_occupancy"]
