"""Paired comparison of two methods over the repeats of a study.

The papers compare methods by their mean metric over repeats (e.g. Jewson et al., Figure 3:
test log RMSE of βD-Bayes and DP-SGD vs n). When every repeat draws a new data set, the
metric moves with the data set far more than with the method, and when one method's releases
are sometimes refused (a one-posterior-sampling draw that fails its convergence gate publishes
nothing), its mean is over other data sets than the baseline's. Comparing the two on the
repeats where both released, one difference per data set, removes both effects: this module
gives that difference's mean, its standard error and how often the method did better.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["paired_differences"]


def _columns(value: Sequence[str] | str, name: str) -> list[str]:
    cols = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(c, str) for c in cols):
        raise TypeError(f"{name} must be column names (str), got {value!r}")
    return cols


def paired_differences(
    table: pd.DataFrame,
    metric: str,
    *,
    method: str,
    baseline: str,
    groups: Sequence[str],
    pairs: Sequence[str],
    baseline_groups: Sequence[str] | None = None,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
    lower_is_better: bool = True,
) -> pd.DataFrame:
    """Per group, the mean over paired repeats of ``transform(metric)`` of ``method`` minus
    that of ``baseline``.

    Parameters
    ----------
    table:
        Long table with a ``method`` column, the ``metric``, the ``groups`` and ``pairs``
        columns and, optionally, ``released`` (rows with ``released`` false are refused
        releases: counted, never paired).
    metric:
        The column compared, e.g. ``"test_rmse"``.
    method, baseline:
        The two values of ``table["method"]`` compared (difference: method - baseline).
    groups:
        Columns of ``method``'s rows that make one comparison each, e.g.
        ``["dataset", "n_obs", "epsilon"]``.
    pairs:
        Columns that identify one data set within a group, e.g. ``["repeat"]``.
    baseline_groups:
        The columns of ``groups`` that the baseline's rows must share (default: all of them).
        Leave ``epsilon`` out to compare against a non-private baseline, whose rows have
        ``epsilon = inf``. The baseline must have one row per (``baseline_groups``, ``pairs``).
    transform:
        Applied to the metric before differencing, e.g. :func:`numpy.log` (the papers' log
        RMSE). Default: none.
    lower_is_better:
        Whether a lower metric is better (RMSE) or a higher one (ROC-AUC); decides ``better``.

    Returns
    -------
    pandas.DataFrame
        One row per group of ``method``: the ``groups`` columns, ``pairs`` (number of paired
        data sets), ``mean_diff`` and ``se`` (standard error of the mean difference; NaN with
        fewer than 2 pairs), ``better`` (pairs where ``method`` did better than ``baseline``),
        ``refused_method`` and ``refused_baseline`` (refused releases in the group, which no
        pair contains).

    Raises
    ------
    ValueError
        When a column is missing, ``method`` or ``baseline`` has no rows, or the baseline has
        more than one row for a pair.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    groups = _columns(groups, "groups")
    pairs = _columns(pairs, "pairs")
    bgroups = groups if baseline_groups is None else _columns(baseline_groups, "baseline_groups")
    if not set(bgroups) <= set(groups):
        raise ValueError(f"baseline_groups must be a subset of groups {groups}, got {bgroups}")
    missing = sorted({"method", metric, *groups, *pairs} - set(table.columns))
    if missing:
        raise ValueError(f"table lacks the columns {missing}; it has {list(table.columns)}")
    for name, value in (("method", method), ("baseline", baseline)):
        if not (table["method"] == value).any():
            raise ValueError(f"{name} {value!r} has no rows; methods in the table: {sorted(table['method'].unique())}")
    if not isinstance(lower_is_better, (bool, np.bool_)):
        raise TypeError(f"lower_is_better must be a bool, got {lower_is_better!r}")

    released = table["released"].astype(bool) if "released" in table else pd.Series(True, index=table.index)
    value = table[metric].to_numpy(dtype=float)
    value = value if transform is None else np.asarray(transform(value), dtype=float)
    frame = table.assign(_value=value, _released=released.to_numpy())
    own = frame[frame["method"] == method]
    base = frame[frame["method"] == baseline]
    if base.duplicated(bgroups + pairs).any():
        raise ValueError(f"baseline {baseline!r} has more than one row for some {bgroups + pairs}: "
                         "add the column that tells them apart to baseline_groups")
    base_ok = base[base["_released"]][bgroups + pairs + ["_value"]]

    rows = []
    for key, g in own.groupby(groups, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(groups, key))
        ok = g[g["_released"]][groups + pairs + ["_value"]]
        matched = ok.merge(base_ok, on=bgroups + pairs, suffixes=("", "_base"))
        diff = (matched["_value"] - matched["_value_base"]).to_numpy()
        diff = diff[np.isfinite(diff)]
        in_group = np.ones(len(base), dtype=bool)
        for col in bgroups:
            in_group &= (base[col] == row[col]).to_numpy()
        row.update(
            pairs=int(diff.size),
            mean_diff=float(diff.mean()) if diff.size else np.nan,
            se=float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else np.nan,
            better=int((diff < 0).sum() if lower_is_better else (diff > 0).sum()),
            refused_method=int((~g["_released"]).sum()),
            refused_baseline=int((~base["_released"].to_numpy()[in_group]).sum()),
        )
        rows.append(row)
    return pd.DataFrame(rows)
