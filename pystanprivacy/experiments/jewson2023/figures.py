"""Figures of Jewson, Ghalebikesabi & Holmes (2023) from the tables of
:mod:`pystanprivacy.experiments.jewson2023.study` (matplotlib, Agg canvas; never touches pyplot).

Each function takes a summary table, optionally saves a PNG, and returns the Figure.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .._figures import require as _require
from .._figures import save

__all__ = ["figure2", "figure3", "figure4", "figure7", "figure9", "figure10", "figure11"]

_COLOURS = {
    "beta-D": "tab:red",
    "Chaudhuri 1/(9n)": "tab:blue",
    "Chaudhuri 1/9": "tab:cyan",
    "Minami": "tab:green",
    "PM (non-private)": "black",
    "DP-SGD": "tab:purple",
    "SGD (non-private)": "tab:gray",
}


def _grid(rows: int, cols: int) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(3.2 * cols + 0.8, 2.7 * rows + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(rows, cols, squeeze=False))
    return fig, axes


def _curves(ax, table: pd.DataFrame, y: str, err: str | None = None, x: str = "n_obs") -> None:
    for method, g in table.groupby("method", sort=False):
        g = g.sort_values(x)
        if g[y].isna().all():
            continue
        colour = _COLOURS.get(method)
        if np.isinf(g["epsilon"]).all():
            ax.plot(g[x], g[y], color=colour, ls="--", label=method)
        else:
            ax.plot(g[x], g[y], color=colour, marker="o", ms=3, label=method)
            if err is not None and err in g and g[err].notna().any():
                ax.fill_between(g[x], g[y] - g[err], g[y] + g[err], color=colour, alpha=0.15, lw=0)
    ax.set_xscale("log")


def _panels(summary: pd.DataFrame, rows: list[tuple[str, str, str, str | None]], what: str,
            x: str = "n_obs") -> Figure:
    """One row per (dataset, metric column, y label, error column), one column per epsilon,
    ``x`` (n, or d for Figure 10) on a log axis;
    the non-private (epsilon = inf) curves are repeated in every column. A panel whose data set
    has no private result at that epsilon (not in its grid) is left empty and says so."""
    finite = sorted(e for e in summary["epsilon"].unique() if np.isfinite(e))
    if not finite or not rows:
        raise ValueError(f"{what}: the table has no private results to plot")
    fig, axes = _grid(len(rows), len(finite))
    for i, (dataset, col, label, err) in enumerate(rows):
        d = summary[summary["dataset"] == dataset]
        for j, eps in enumerate(finite):
            ax = axes[i, j]
            ax.set_title(f"{dataset}, ε = {eps:g}", fontsize=9)
            if not (d["epsilon"] == eps).any():
                ax.set_axis_off()
                ax.text(0.5, 0.5, f"ε = {eps:g} is not in\nthe {dataset} grid", ha="center", va="center",
                        transform=ax.transAxes, fontsize=9, color="grey")
                continue
            _curves(ax, d[(d["epsilon"] == eps) | np.isinf(d["epsilon"])], col, err, x)
            ax.set_xlabel("n" if x == "n_obs" else x)
            if j == 0:
                ax.set_ylabel(label)
    handles, labels = [], []
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 5, 2 + len(finite)), fontsize=8)
    return fig


def figure2(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 2: log parameter RMSE (simulated data) and test ROC-AUC (UCI data) vs n, one
    column per epsilon, from :func:`~pystanprivacy.experiments.jewson2023.study.summarise` of the
    logistic table."""
    _require(summary, {"dataset", "method", "epsilon", "n_obs", "auc_mean"}, "figure2")
    rows = []
    for ds in summary["dataset"].unique():
        if ds == "simulated" and "log_rmse_mean" in summary:
            rows.append((ds, "log_rmse_mean", "log RMSE(θ)", None))
        rows.append((ds, "auc_mean", "test ROC-AUC", "auc_se"))
    fig = _panels(summary, rows, "figure2")
    if path is not None:
        save(fig, path)
    return fig


def figure7(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figures 7-8: correct-sign accuracy vs n (vs the truth on simulated data, vs
    non-private logistic regression on UCI data)."""
    _require(summary, {"dataset", "method", "epsilon", "n_obs", "csa_mean"}, "figure7")
    rows = [(ds, "csa_mean", "correct-sign accuracy", "csa_se") for ds in summary["dataset"].unique()]
    fig = _panels(summary, rows, "figure7")
    if path is not None:
        save(fig, path)
    return fig


def figure3(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 3: test log RMSE of neural-network regression vs n."""
    _require(summary, {"dataset", "method", "epsilon", "n_obs", "test_rmse_mean"}, "figure3")
    s = summary.assign(log_test_rmse=np.log(summary["test_rmse_mean"]))
    fig = _panels(s, [(ds, "log_test_rmse", "test log RMSE", None) for ds in s["dataset"].unique()], "figure3")
    if path is not None:
        save(fig, path)
    return fig


def figure9(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 9: test ROC-AUC of neural-network classification vs n."""
    _require(summary, {"dataset", "method", "epsilon", "n_obs", "auc_mean"}, "figure9")
    fig = _panels(summary, [(ds, "auc_mean", "test ROC-AUC", "auc_se") for ds in summary["dataset"].unique()], "figure9")
    if path is not None:
        save(fig, path)
    return fig


def figure10(summary: pd.DataFrame | None, path: str | os.PathLike | None = None, *,
             networks: pd.DataFrame | None = None) -> Figure:
    """Figure 10 vs the number of features d at fixed n, one column per epsilon: the logistic
    row (log parameter RMSE per coefficient, from
    :func:`~pystanprivacy.experiments.jewson2023.study.summarise` of the features table grouped
    by d) and the network rows (test log RMSE of regression, test ROC-AUC of classification,
    from the ``nn_features`` summary grouped by task and d), whichever are given."""
    parts, rows = [], []
    if summary is not None:
        _require(summary, {"dataset", "method", "epsilon", "d", "log_rmse_mean"}, "figure10")
        parts.append(summary.assign(dataset="logistic regression"))
        rows.append(("logistic regression", "log_rmse_mean", "log RMSE(θ) per coefficient", None))
    if networks is not None:
        _require(networks, {"task", "method", "epsilon", "d"}, "figure10")
        for task, label, col, ylabel, err in (("regression", "NN regression", "log_test_rmse", "test log RMSE", None),
                                              ("classification", "NN classification", "auc_mean", "test ROC-AUC",
                                               "auc_se")):
            g = networks[networks["task"] == task]
            if len(g):
                if task == "regression":
                    g = g.assign(log_test_rmse=np.log(g["test_rmse_mean"]))
                parts.append(g.assign(dataset=label))
                rows.append((label, col, ylabel, err))
    if not parts:
        raise ValueError("figure10: give the features summary, the nn_features summary or both")
    table = pd.concat(parts, ignore_index=True)
    fig = _panels(table, rows, "figure10", x="d")
    ds = sorted(int(d) for d in table["d"].unique())
    for ax in fig.axes:
        if ax.get_title() and ax.axison:
            ax.minorticks_off()
            ax.set_xticks(ds, [str(d) for d in ds])
    if path is not None:
        save(fig, path)
    return fig


def _scatter(table: pd.DataFrame, y: str, ylabel: str, title: str) -> Figure:
    fig, axes = _grid(1, 1)
    ax = axes[0, 0]
    for method, g in table.groupby("method", sort=False):
        g = g.sort_values("epsilon")
        ax.plot(g["log_rmse"], g[y], marker="o", color=_COLOURS.get(method), label=method)
        for _, r in g.iterrows():
            if np.isfinite(r["log_rmse"]):
                ax.annotate(f"{r['epsilon']:g}", (r["log_rmse"], r[y]), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
    ax.set_xlabel("log RMSE(θ), n = 1000, d = 2 (simulated)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return fig


def figure4(table: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 4: membership-inference success rate vs log RMSE; points labelled by epsilon."""
    _require(table, {"method", "epsilon", "success", "log_rmse"}, "figure4")
    fig = _scatter(table, "success", "attack success rate", "Bayes-optimal MIA on D = {(1,1),(0,0)}, D' = {(-1,1),(0,0)}")
    if path is not None:
        save(fig, path)
    return fig


def figure11(table: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 11: empirical epsilon lower bound (Clopper-Pearson, 95 %) vs log RMSE, with the
    claimed epsilon as a dotted reference per point."""
    _require(table, {"method", "epsilon", "epsilon_lb", "log_rmse"}, "figure11")
    fig = _scatter(table, "epsilon_lb", "ε lower bound (95 %)", "empirical ε lower bound (labels: claimed ε)")
    if path is not None:
        save(fig, path)
    return fig
