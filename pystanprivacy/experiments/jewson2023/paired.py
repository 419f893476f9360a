"""Figures 3 and 9 of Jewson et al. (2023) as paired comparisons, from a run's outputs.

The paper compares βD-Bayes with DP-SGD and the non-private posterior by their mean metric
over repeats (Sec. 5.2, Figures 3 and 9). Every repeat is a new data set, and the metric moves
with the data set far more than with the method; and a βD release refused by its convergence
gate drops its data set from βD's mean only. :func:`network_comparisons` therefore compares
two methods data set by data set (:func:`~pystanprivacy.experiments.compare.paired_differences`):
test log RMSE for regression (the paper's axis), ROC-AUC for classification.

:func:`network_table` reads what a run wrote to ``OUT``: the part's table once the part has
finished, its saved tasks (``OUT/.tasks``) while it is still running, and the DP-SGD of the
authors' public code (``scripts/jewson2023_dpsgd_settings.py``) when that table is there.
Nothing is fitted here. Used by ``scripts/jewson2023_paired.py`` and REPRODUCTION.md (J3, J9).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ...run.runner import saved_results
from ..compare import paired_differences
from .common import PAPER

#: metric, transform before differencing, whether lower is better
METRICS = {"regression": ("test_rmse", np.log, True), "classification": ("auc", None, False)}
#: appended to the method names of the authors'-code settings table's rows
AUTHORS_SUFFIX = " (authors' code)"
#: DP-SGD under the settings of the authors' code, as named in the paired tables
AUTHORS_DPSGD = "DP-SGD" + AUTHORS_SUFFIX
#: (method, baseline) pairs compared, each when both are in the table
COMPARISONS = (("beta-D", "DP-SGD"), ("beta-D", AUTHORS_DPSGD), ("beta-D", "PM (non-private)"),
               ("DP-SGD", "PM (non-private)"), (AUTHORS_DPSGD, "PM (non-private)"))
#: columns that identify one data set of a network part
_KEYS = ["dataset", "n_obs", "repeat"]


def _check_task(task: str) -> str:
    if task not in METRICS:
        raise ValueError(f"task must be one of {sorted(METRICS)}, got {task!r}")
    return task


def network_table(out: str | os.PathLike, task: str, *, authors_dpsgd: bool = True) -> tuple[pd.DataFrame, str]:
    """The rows of the network part ``nn_<task>`` that a run wrote to ``out`` and where they
    came from (``"table"`` or ``"saved tasks"``).

    Parameters
    ----------
    out:
        The run's output folder, e.g. ``results/jewson2023``.
    task:
        ``"regression"`` (Figure 3) or ``"classification"`` (Figure 9).
    authors_dpsgd:
        Add the rows of ``jewson2023_nn_<task>_dpsgd_settings.csv`` trained with the authors'
        code's settings, as method :data:`AUTHORS_DPSGD`, when that file is in ``out``.

    Raises
    ------
    FileNotFoundError
        When ``out`` has neither the part's table nor a saved task of it.
    ValueError
        When the saved tasks hold two rows for one (data set, n, repeat, method, epsilon):
        ``nn_features`` tasks at d = 2 carry the same labels as this part's n = 1000 simulated
        tasks, so once that part has run, read this part's finished table instead.
    """
    task = _check_task(task)
    folder = Path(out)
    path = folder / f"{PAPER}_nn_{task}.csv"
    if path.is_file():
        table, source = pd.read_csv(path), "table"
    else:
        tasks = folder / ".tasks"
        table = saved_results(tasks, f"NN {task} ") if tasks.is_dir() else pd.DataFrame()
        if table.empty:
            raise FileNotFoundError(f"out {str(folder)!r} has neither {path.name} nor saved tasks of nn_{task}")
        # nn_features' tasks at d = 5, 10, 20 share the label prefix; the part's simulated data have d = 2
        table = table[(table["dataset"] != "simulated") | (table["d"] == 2)]
        source = "saved tasks"
        dup = table.duplicated(_KEYS + ["method", "epsilon"])
        if dup.any():
            first = table[dup].iloc[0]
            raise ValueError(f"the saved tasks in {str(tasks)!r} hold more than one row for {first['method']} at "
                             f"{first['dataset']} n={first['n_obs']} repeat={first['repeat']}: nn_features has run "
                             f"into the same folder; read the finished table {path.name} instead")
    extra = folder / f"{PAPER}_nn_{task}_dpsgd_settings.csv"
    if authors_dpsgd and extra.is_file():
        alt = pd.read_csv(extra)
        alt = alt[alt["settings"] == "authors' code"].assign(method=lambda t: t["method"] + AUTHORS_SUFFIX)
        table = pd.concat([table, alt.drop(columns="settings")], ignore_index=True)
    return table.reset_index(drop=True), source


def network_comparisons(table: pd.DataFrame, task: str) -> pd.DataFrame:
    """Every pair of :data:`COMPARISONS` whose two methods are in ``table``, per data set, n
    and epsilon: the mean over paired repeats of method minus baseline (log test RMSE, or
    ROC-AUC), its standard error, how often the method did better and the refused releases.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``baseline`` and those of
        :func:`~pystanprivacy.experiments.compare.paired_differences` (groups ``dataset``,
        ``n_obs``, ``epsilon``; a non-private baseline is matched on data set and n only).
    """
    task = _check_task(task)
    metric, transform, lower = METRICS[task]
    present = set(table["method"].unique()) if "method" in table else set()
    frames = []
    for method, baseline in COMPARISONS:
        if method not in present or baseline not in present:
            continue
        private_baseline = not np.isinf(table.loc[table["method"] == baseline, "epsilon"].astype(float)).all()
        diff = paired_differences(table, metric, method=method, baseline=baseline,
                                  groups=["dataset", "n_obs", "epsilon"], pairs=["repeat"],
                                  baseline_groups=None if private_baseline else ["dataset", "n_obs"],
                                  transform=transform, lower_is_better=lower)
        frames.append(diff.assign(method=method, baseline=baseline))
    if not frames:
        raise ValueError(f"table has none of the compared pairs {COMPARISONS}; methods: {sorted(present)}")
    result = pd.concat(frames, ignore_index=True)
    return result[["method", "baseline"] + [c for c in result.columns if c not in ("method", "baseline")]]


def markdown_grid(paired: pd.DataFrame, *, dataset: str, method: str, baseline: str,
                  ns: list[int] | None = None, counts: bool = True) -> str:
    """One comparison of :func:`network_comparisons` as the markdown table of REPRODUCTION.md
    (J3, J9): a row per epsilon, a column per n; each cell the mean paired difference ± its
    standard error and, with ``counts``, in how many of the pairs the method did better. A cell
    with no pair (every release refused) reads ``no pair``; an ``n`` of ``ns`` that the table
    does not hold yet reads ``pending``. Minus signs are typeset (U+2212)."""
    rows = paired[(paired["dataset"] == dataset) & (paired["method"] == method) & (paired["baseline"] == baseline)]
    if rows.empty:
        raise ValueError(f"paired has no rows for {method!r} against {baseline!r} on dataset {dataset!r}")
    ns = sorted(int(n) for n in rows["n_obs"].unique()) if ns is None else [int(n) for n in ns]

    def cell(r: pd.Series | None) -> str:
        if r is None:
            return "pending"
        if r["pairs"] == 0:
            return "no pair"
        text = f"{r['mean_diff']:+.2f}" + ("" if np.isnan(r["se"]) else f" ± {r['se']:.2f}")
        return text.replace("-", "\u2212") + (f" ({int(r['better'])} of {int(r['pairs'])})" if counts else "")

    lines = ["| ε | " + " | ".join(f"n = {n}" for n in ns) + " |", "|---" * (len(ns) + 1) + "|"]
    for eps, group in rows.groupby("epsilon"):
        by_n = {int(r["n_obs"]): r for _, r in group.iterrows()}
        lines.append(f"| {eps:g} | " + " | ".join(cell(by_n.get(n)) for n in ns) + " |")
    return "\n".join(lines)


__all__ = ["AUTHORS_DPSGD", "AUTHORS_SUFFIX", "COMPARISONS", "METRICS", "markdown_grid", "network_comparisons",
           "network_table"]
