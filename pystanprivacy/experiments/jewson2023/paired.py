"""Figures 3 and 9 of Jewson et al. (2023) as paired comparisons, from a run's outputs.

The paper compares βD-Bayes with DP-SGD and the non-private posterior by their mean metric
over repeats (Sec. 5.2, Figures 3 and 9). Every repeat is a new data set, and the metric moves
with the data set far more than with the method; and a βD release refused by its convergence
gate drops its data set from βD's mean only. :func:`network_comparisons` therefore compares
two methods data set by data set (:func:`~pystanprivacy.experiments.compare.paired_differences`):
test log RMSE for regression (the paper's axis), ROC-AUC for classification.

:func:`network_table` reads what a run wrote to ``OUT``: the part's table once the part has
finished, its saved tasks (``OUT/.tasks``) while it is still running, and the DP-SGD of the
authors' public code (part ``dpsgd_settings``) when that table is there, and DP-SGD tuned as
App. B describes (part ``dpsgd_tuned``, :data:`TUNED_DPSGD`) when its table is there.
:func:`features_table` does the same for the network rows of Figure 10 (``nn_features``),
which :func:`network_comparisons` then compares per d (``by="d"``). The saved tasks are found by
their exact keys (:func:`~pystanprivacy.run.runner.run_context` with ``saved_only``: the part's
own calls made again, nothing run), so parts running into the same folder never mix. Nothing is
fitted here. Used by part ``paired`` of ``reproduce jewson2023``
(:func:`.supplementary.paired_tables`), ``scripts/jewson2023_paired.py`` and REPRODUCTION.md
(J3, J9, J10).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...run.runner import run_context
from ..compare import paired_differences
from .common import PAPER
from .network_features import neural_features
from .networks import neural

#: metric, transform before differencing, whether lower is better
METRICS = {"regression": ("test_rmse", np.log, True), "classification": ("auc", None, False)}
#: appended to the method names of the authors'-code settings table's rows
AUTHORS_SUFFIX = " (authors' code)"
#: DP-SGD under the settings of the authors' code, as named in the paired tables
AUTHORS_DPSGD = "DP-SGD" + AUTHORS_SUFFIX
#: DP-SGD tuned as App. B describes (:mod:`.dpsgd_tuning`), as named in its tables and the paired ones
TUNED_DPSGD = "DP-SGD (tuned)"
#: (method, baseline) pairs compared, each when both are in the table
COMPARISONS = (("beta-D", "DP-SGD"), ("beta-D", AUTHORS_DPSGD), ("beta-D", TUNED_DPSGD), ("beta-D", "PM (non-private)"),
               ("DP-SGD", "PM (non-private)"), (AUTHORS_DPSGD, "PM (non-private)"), (TUNED_DPSGD, "PM (non-private)"))
#: the columns a comparison can follow (n, or the number of features d), by the name of the table's column
AXIS = {"n_obs": "n", "d": "d"}


def _check_task(task: str) -> str:
    if task not in METRICS:
        raise ValueError(f"task must be one of {sorted(METRICS)}, got {task!r}")
    return task


def _check_by(by: str) -> str:
    if by not in AXIS:
        raise ValueError(f"by must be one of {sorted(AXIS)}, got {by!r}")
    return by


def _sizes(quick: bool) -> Mapping[str, Any]:
    from .study import FULL, QUICK  # the study's grids (study imports networks, not this module)

    return QUICK if quick else FULL


def _figure_grid(size: Mapping[str, Any]) -> dict[str, Any]:
    from .study import nn_figure_grid

    return nn_figure_grid(size)


def saved_part(out: str | os.PathLike, task: str, *, quick: bool = False, seed: int = 0,
               data_path: str | os.PathLike | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The saved tasks of part ``nn_<task>`` in ``out/.tasks`` and the labels of those not saved
    yet: the part's calls of :func:`~.networks.neural` (as ``study.reproduce`` makes them for
    ``--full``, or ``--quick`` with ``quick``; ``seed`` and ``data_path`` as given to the run,
    ``--seed`` and ``--data``) made again under ``run_context(saved_only=True)``: nothing runs."""
    task, size = _check_task(task), _sizes(quick)
    grid = dict(task=task, ns=size["nn_ns"], epsilons=size["nn_epsilons"], repeats=size["nn_repeats"],
                sampler=size["nn_sampler"], seed=seed, progress=False)
    with run_context(resume_dir=Path(out) / ".tasks", saved_only=True) as ctx:
        fits = [neural(datasets=["simulated"], **grid)]
        uci = list(size[f"nn_{task}_uci"])
        if uci:
            fits.append(neural(datasets=uci, data_path=data_path, **grid))
    return pd.concat(fits, ignore_index=True), list(ctx.missing)


def saved_features(out: str | os.PathLike, task: str, *, quick: bool = False,
                   seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """:func:`saved_part` for the ``task`` half of part ``nn_features`` (Figure 10's network
    rows: :func:`~.network_features.neural_features` as ``study.reproduce`` calls it, its d = 2
    cell being part ``nn_<task>``'s simulated tasks at that n)."""
    task, size = _check_task(task), _sizes(quick)
    with run_context(resume_dir=Path(out) / ".tasks", saved_only=True) as ctx:
        table = neural_features(task=task, ds=size["nn_features_ds"], n_obs=size["nn_features_n"],
                                epsilons=size["nn_features_epsilons"], repeats=size["nn_features_repeats"],
                                figure=_figure_grid(size), sampler=size["nn_sampler"], seed=seed, progress=False)
    return table, list(ctx.missing)


def _finished_or_saved(path: Path, saved: Callable[[], tuple[pd.DataFrame, list[str]]], what: str,
                       rows: Callable[[pd.DataFrame], pd.DataFrame] = lambda t: t) -> tuple[pd.DataFrame, str]:
    if path.is_file():
        return rows(pd.read_csv(path)), "table"
    table, _ = saved()
    if table.empty:
        raise FileNotFoundError(f"out {str(path.parent)!r} has neither {path.name} nor saved tasks of {what}")
    return table, "saved tasks"


def _with_tuned(table: pd.DataFrame, path: Path, task: str) -> pd.DataFrame:
    """``table`` and the ``task`` rows of the tuned DP-SGD table ``path`` (:mod:`.dpsgd_tuning`:
    methods ``DP-SGD (tuned)`` and ``SGD (tuned, non-private)``), when that file is there."""
    if not path.is_file():
        return table
    tuned = pd.read_csv(path)
    return pd.concat([table, tuned[tuned["task"] == task]], ignore_index=True)


def network_table(out: str | os.PathLike, task: str, *, authors_dpsgd: bool = True, quick: bool = False,
                  seed: int = 0, data_path: str | os.PathLike | None = None,
                  tuned_dpsgd: bool = True) -> tuple[pd.DataFrame, str]:
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
    quick, seed, data_path:
        The run's ``--quick``, ``--seed`` and ``--data``, to find its saved tasks while the part
        runs (:func:`saved_part`); not used once its table is written.
    tuned_dpsgd:
        Add the rows of ``jewson2023_nn_<task>_dpsgd_tuned.csv`` (DP-SGD tuned as App. B
        describes, :data:`TUNED_DPSGD`, and its non-private SGD) when that file is in ``out``.

    Raises
    ------
    FileNotFoundError
        When ``out`` has neither the part's table nor a saved task of it.
    """
    task = _check_task(task)
    folder = Path(out)
    table, source = _finished_or_saved(folder / f"{PAPER}_nn_{task}.csv",
                                       lambda: saved_part(folder, task, quick=quick, seed=seed, data_path=data_path),
                                       f"nn_{task}")
    extra = folder / f"{PAPER}_nn_{task}_dpsgd_settings.csv"
    if authors_dpsgd and extra.is_file():
        alt = pd.read_csv(extra)
        alt = alt[alt["settings"] == "authors' code"].assign(method=lambda t: t["method"] + AUTHORS_SUFFIX)
        table = pd.concat([table, alt.drop(columns="settings")], ignore_index=True)
    if tuned_dpsgd:
        table = _with_tuned(table, folder / f"{PAPER}_nn_{task}_dpsgd_tuned.csv", task)
    return table.reset_index(drop=True), source


def features_table(out: str | os.PathLike, task: str, *, quick: bool = False, seed: int = 0,
                   tuned_dpsgd: bool = True) -> tuple[pd.DataFrame, str]:
    """The rows of the ``task`` half of part ``nn_features`` (Figure 10's network rows) in
    ``out``: from ``jewson2023_nn_features.csv`` once the part has finished, else its saved
    tasks (:func:`saved_features`); and where they came from. ``FileNotFoundError`` when
    there are neither. With ``tuned_dpsgd``, the ``task`` rows of
    ``jewson2023_nn_features_dpsgd_tuned.csv`` are added when that file is there."""
    task = _check_task(task)
    folder = Path(out)
    table, source = _finished_or_saved(folder / f"{PAPER}_nn_features.csv",
                                       lambda: saved_features(folder, task, quick=quick, seed=seed),
                                       f"nn_features ({task})", rows=lambda t: t[t["task"] == task])
    if tuned_dpsgd:
        table = _with_tuned(table, folder / f"{PAPER}_nn_features_dpsgd_tuned.csv", task)
    return table.reset_index(drop=True), source


def network_comparisons(table: pd.DataFrame, task: str, *, by: str = "n_obs") -> pd.DataFrame:
    """Every pair of :data:`COMPARISONS` whose two methods are in ``table``, per data set, n
    (or ``by="d"``: number of features, for :func:`features_table`) and epsilon: the mean over
    paired repeats of method minus baseline (log test RMSE, or ROC-AUC), its standard error, how
    often the method did better and the refused releases.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``baseline`` and those of
        :func:`~pystanprivacy.experiments.compare.paired_differences` (groups ``dataset``,
        ``by``, ``epsilon``; a non-private baseline is matched on data set and ``by`` only).
    """
    task, by = _check_task(task), _check_by(by)
    metric, transform, lower = METRICS[task]
    present = set(table["method"].unique()) if "method" in table else set()
    frames = []
    for method, baseline in COMPARISONS:
        if method not in present or baseline not in present:
            continue
        private_baseline = not np.isinf(table.loc[table["method"] == baseline, "epsilon"].astype(float)).all()
        diff = paired_differences(table, metric, method=method, baseline=baseline,
                                  groups=["dataset", by, "epsilon"], pairs=["repeat"],
                                  baseline_groups=None if private_baseline else ["dataset", by],
                                  transform=transform, lower_is_better=lower)
        frames.append(diff.assign(method=method, baseline=baseline))
    if not frames:
        raise ValueError(f"table has none of the compared pairs {COMPARISONS}; methods: {sorted(present)}")
    result = pd.concat(frames, ignore_index=True)
    return result[["method", "baseline"] + [c for c in result.columns if c not in ("method", "baseline")]]


def markdown_grid(paired: pd.DataFrame, *, dataset: str, method: str, baseline: str,
                  ns: list[int] | None = None, counts: bool = True, by: str = "n_obs") -> str:
    """One comparison of :func:`network_comparisons` as the markdown table of REPRODUCTION.md
    (J3, J9; J10 with ``by="d"``): a row per epsilon, a column per n (or d); each cell the mean
    paired difference ± its standard error and, with ``counts``, in how many of the pairs the
    method did better. A cell with no pair (every release refused) reads ``no pair``; a value of
    ``ns`` that the table does not hold yet reads ``pending``. Minus signs are typeset (U+2212)."""
    by = _check_by(by)
    rows = paired[(paired["dataset"] == dataset) & (paired["method"] == method) & (paired["baseline"] == baseline)]
    if rows.empty:
        raise ValueError(f"paired has no rows for {method!r} against {baseline!r} on dataset {dataset!r}")
    ns = sorted(int(n) for n in rows[by].unique()) if ns is None else [int(n) for n in ns]

    def cell(r: pd.Series | None) -> str:
        if r is None:
            return "pending"
        if r["pairs"] == 0:
            return "no pair"
        text = f"{r['mean_diff']:+.2f}" + ("" if np.isnan(r["se"]) else f" ± {r['se']:.2f}")
        return text.replace("-", "\u2212") + (f" ({int(r['better'])} of {int(r['pairs'])})" if counts else "")

    lines = ["| ε | " + " | ".join(f"{AXIS[by]} = {n}" for n in ns) + " |", "|---" * (len(ns) + 1) + "|"]
    for eps, group in rows.groupby("epsilon"):
        by_n = {int(r[by]): r for _, r in group.iterrows()}
        lines.append(f"| {eps:g} | " + " | ".join(cell(by_n.get(n)) for n in ns) + " |")
    return "\n".join(lines)


__all__ = ["AUTHORS_DPSGD", "AUTHORS_SUFFIX", "AXIS", "COMPARISONS", "METRICS", "TUNED_DPSGD", "features_table",
           "markdown_grid", "network_comparisons", "network_table", "saved_features", "saved_part"]
