"""Summaries and figures of the simulated logistic experiments of Jewson et al. (2023) on the
paper's design (:mod:`.paper_design`) beside the study's design (:mod:`.study`, parts
``logistic`` and ``features``), with error bars. No task function lives here.

* :func:`summarise_design` -- :func:`.study.summarise` plus the standard error of the log RMSE;
* :func:`design_figure2` -- Figure 2's simulated half (log RMSE and test ROC-AUC vs n);
* :func:`design_figure10` -- Figure 10's logistic row (log RMSE per coefficient and test
  ROC-AUC vs d);

each with one row of panels per (design, metric), one panel per epsilon, mean ± one standard
error over the repeats (released draws only; a hollow point labelled k/m rests on k of m).

References
----------
.. [1] J. Jewson, S. Ghalebikesabi and C. Holmes (2023), "Differentially private statistical
   inference through beta-divergence one posterior sampling", NeurIPS. Figure 2 (Sec. 5),
   Figures 7 and 10 (Appendix B).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .._figures import require, save
from .figures import _panels
from .study import summarise

__all__ = ["DESIGN_LABELS", "design_figure10", "design_figure2", "summarise_design"]

#: the label of each design in the figures
DESIGN_LABELS = {
    "paper": "paper's design",
    "study": "study's design",
}
_METRICS = ("rmse", "auc", "csa")


def summarise_design(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """:func:`.study.summarise` of ``table`` over ``by`` (``rmse``, ``auc``, ``csa``), plus
    ``log_rmse_se``: the standard error (ddof 1) of log RMSE over the released rows of each
    group (NaN with fewer than two)."""
    require(table, {*by, "released", "rmse"}, "summarise_design")
    out = summarise(table, list(_METRICS), by=tuple(by))
    ok = table[table["released"].astype(bool) & (table["rmse"] > 0)]
    se = ok.assign(log_rmse=np.log(ok["rmse"])).groupby(list(by), dropna=False)["log_rmse"].sem(ddof=1)
    return out.merge(se.rename("log_rmse_se").reset_index(), on=list(by), how="left")


def _design_rows(
    summaries: dict[str, pd.DataFrame], uci: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, list[tuple[str, str, str, str]]]:
    """The summaries stacked with ``dataset`` set to each design's label, and the rows of panels:
    log RMSE, then test ROC-AUC, for each design in the order given; then one row of test
    ROC-AUC per UCI data set of ``uci`` (the study's logistic summary; its simulated rows are
    left out)."""
    parts, rows = [], []
    for design, summary in summaries.items():
        if summary is None:
            continue
        if design not in DESIGN_LABELS:
            raise ValueError(f"design must be one of {sorted(DESIGN_LABELS)}, got {design!r}")
        label = DESIGN_LABELS[design]
        parts.append(summary.assign(dataset=label))
        rows.append((label, "log_rmse_mean", "log RMSE(θ)", "log_rmse_se"))
        rows.append((label, "auc_mean", "test ROC-AUC", "auc_se"))
    if not parts:
        raise ValueError("give at least one summary (paper or study)")
    if uci is not None:
        require(uci, {"dataset", "method", "epsilon", "n_obs", "auc_mean", "auc_se"}, "the UCI summary")
        real = uci[uci["dataset"] != "simulated"]
        parts.append(real)
        rows.extend((ds, "auc_mean", "test ROC-AUC", "auc_se") for ds in real["dataset"].unique())
    return pd.concat(parts, ignore_index=True), rows


def design_figure2(
    paper: pd.DataFrame,
    study: pd.DataFrame | None = None,
    path: str | os.PathLike | None = None,
    *,
    uci: pd.DataFrame | None = None,
) -> Figure:
    """Figure 2 vs n on the paper's simulated design (``paper``), when given the study's
    simulated design (``study``): :func:`summarise_design` tables by ``("dataset", "method",
    "epsilon", "n_obs")`` of the simulated rows; and, when given, the UCI half (``uci``: the
    study's logistic summary, test ROC-AUC per data set), the rows J2's verdict is judged on.
    Saved as PNG at ``path`` when given; panels narrow enough for six epsilons in about
    2000 pixels."""
    cols = {"method", "epsilon", "n_obs", "log_rmse_mean", "log_rmse_se", "auc_mean", "auc_se"}
    for name, s in (("paper", paper), ("study", study)):
        if s is not None:
            require(s, cols, f"design_figure2 ({name})")
    table, rows = _design_rows({"paper": paper, "study": study}, uci)
    fig = _panels(table, rows, "design_figure2", panel_width=2.1)
    if path is not None:
        save(fig, path)
    return fig


def design_figure10(
    paper: pd.DataFrame, study: pd.DataFrame | None = None, path: str | os.PathLike | None = None
) -> Figure:
    """Figure 10's logistic row vs d (n fixed) on the paper's design and, when given, the
    study's: :func:`summarise_design` tables by ``("dataset", "method", "epsilon", "d")``. The
    RMSE is the root mean square over the d coefficients (the paper's "divided by the number of
    dimensions")."""
    cols = {"method", "epsilon", "d", "log_rmse_mean", "log_rmse_se", "auc_mean", "auc_se"}
    for name, s in (("paper", paper), ("study", study)):
        if s is not None:
            require(s, cols, f"design_figure10 ({name})")
    table, rows = _design_rows({"paper": paper, "study": study})
    fig = _panels(table, rows, "design_figure10", x="d")
    ds = sorted(int(d) for d in table["d"].unique())
    for ax in fig.axes:
        if ax.get_title() and ax.axison:
            ax.minorticks_off()
            ax.set_xticks(ds, [str(d) for d in ds])
    if path is not None:
        save(fig, path)
    return fig
