"""Figures of Kulkarni et al. (2022): the distribution-estimation half (Figures 1-3, 9-11)
from the summary tables of :mod:`pystanprivacy.experiments.kulkarni2022.study`, and the
regressions (Figures 4-5) from those of :mod:`pystanprivacy.experiments.kulkarni2022.regression`.
Agg canvas only (never pyplot)."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...models.kulkarni2022_regression import DEFAULT_DELTA
from .._figures import new_figure, new_grid, save
from .._figures import require as _require

__all__ = ["calibration", "chebyshev", "histogram_rmse", "kosarak", "regression"]

_MODEL_TITLES = {
    "gaussian": "Gaussian (μ, σ) (Fig. 1)",
    "exponential": "Exponential θ (Fig. 11)",
    "histogram": "Histogram, d = 6 (Fig. 10)",
}


def _fig(ncols: int) -> tuple[Figure, list]:
    fig, axes = new_grid(1, ncols, panel_width=4.2, panel_height=3.6)
    return fig, list(axes[0])


def calibration(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Coverage of the central 50/70/90/95 % intervals vs ε, one panel per model (pooled
    over parameters), nominal levels dashed, ±2 binomial standard errors shaded."""
    _require(summary, {"model", "epsilon", "parameter", "level", "coverage", "se"}, "calibration plot")
    pooled = summary[summary["parameter"] == "all"]
    models = [m for m in _MODEL_TITLES if m in set(pooled["model"])]
    fig, axes = _fig(max(len(models), 1))
    for ax, model in zip(axes, models):
        g = pooled[pooled["model"] == model]
        for level, gl in g.groupby("level"):
            gl = gl.sort_values("epsilon")
            (line,) = ax.plot(gl["epsilon"], gl["coverage"], marker="o", label=f"{int(level * 100)} %")
            ax.axhline(level, color=line.get_color(), ls="--", lw=0.8)
            ax.fill_between(
                gl["epsilon"], level - 2 * gl["se"], level + 2 * gl["se"], color=line.get_color(), alpha=0.12
            )
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("ε (per user)")
        ax.set_ylabel("fraction of intervals holding the truth")
        ax.set_title(_MODEL_TITLES[model])
        ax.legend(title="central interval", fontsize=8)
    if path is not None:
        save(fig, path)
    return fig


def histogram_rmse(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figures 3/9: mean RMSE vs N (top row) and fraction unusable/misordered (bottom)."""
    _require(summary, {"method", "epsilon", "n_users", "rmse", "bad"}, "histogram RMSE plot")
    eps = sorted(set(summary["epsilon"]))
    fig, axes = new_grid(2, len(eps), panel_width=4.2, panel_height=3.2)
    for j, e in enumerate(eps):
        g = summary[summary["epsilon"] == e]
        for method, gm in g.groupby("method"):
            gm = gm.sort_values("n_users")
            axes[0, j].plot(gm["n_users"], gm["rmse"], marker="o", label=method)
            axes[1, j].plot(gm["n_users"], gm["bad"], marker="o", label=method)
        for ax in axes[:, j]:
            ax.set_xscale("log")
            ax.set_xlabel("number of users N")
        axes[0, j].set_yscale("log")
        axes[0, j].set_ylabel("mean RMSE")
        axes[0, j].set_title(f"θ = [0.7, 0.2, 0.1], ε = {e:g}")
        axes[1, j].set_ylabel("fraction unusable or misordered")
        axes[1, j].set_ylim(-0.02, 1.02)
        axes[0, j].legend(fontsize=8)
    if path is not None:
        save(fig, path)
    return fig


def kosarak(
    summary: pd.DataFrame, path: str | os.PathLike | None = None, *, titles: Mapping[str, str] | None = None
) -> Figure:
    """Figure 2: mean absolute ECDF difference (private vs non-private posterior) per
    dimension vs ε, one panel per data source (``titles``: a line under a source's panel
    title, e.g. which part of the file it is)."""
    _require(summary, {"source", "epsilon", "dimension", "ecdf_l1"}, "Kosarak plot")
    sources = sorted(set(summary["source"]))
    fig, axes = _fig(len(sources))
    for ax, src in zip(axes, sources):
        g = summary[summary["source"] == src]
        for dim, gd in g.groupby("dimension"):
            gd = gd.sort_values("epsilon")
            ax.plot(gd["epsilon"], gd["ecdf_l1"], marker="o", lw=1, label=f"θ[{dim}]")
        ax.set_xscale("log")
        ax.set_xlabel("ε (per user)")
        ax.set_ylabel("mean |ECDF private − ECDF non-private|")
        note = (titles or {}).get(src)
        note = "\n".join(textwrap.wrap(note, 44)) if note else None
        ax.set_title(f"Histogram d = 10 ({src})" + (f"\n{note}" if note else ""), fontsize=9 if note else None)
        ax.legend(fontsize=6, ncol=2)
    if path is not None:
        save(fig, path)
    return fig


#: colour and label of each regression method
_REGRESSION_STYLE = {
    "ss": ("tab:blue", "sufficient statistics (Bayesian)"),
    "inputs": ("tab:green", "perturbed inputs (Bayesian)"),
    "ldp-sgd": ("tab:red", "LDP-SGD"),
    "non-private": ("black", "non-private (Bayesian)"),
}


def regression(
    summary: pd.DataFrame,
    metric: str,
    title: str,
    path: str | os.PathLike | None = None,
    *,
    references: Mapping[str, float] | None = None,
) -> Figure:
    """Figures 4/5: errorbar plot of ``<metric>_mean`` ± sd vs ε per method (slightly shifted,
    as in the paper); the non-private value as a dashed line, and each of ``references``
    (label: value, e.g. ``{"predicting 0": 0.873}``, the zero predictor K4's reading rests on)
    as a dotted line. ``summary``: the table of
    :func:`pystanprivacy.experiments.kulkarni2022.regression.summarise`.

    References
    ----------
    .. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela, "Locally differentially private
       Bayesian inference" (2022), Figures 4 and 5.
    """
    _require(summary, {"method", "epsilon", f"{metric}_mean", f"{metric}_sd"}, "regression plot")
    for label, value in (references or {}).items():
        if (
            not isinstance(label, str)
            or isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not np.isfinite(value)
        ):
            raise ValueError(f"references must map str labels to finite numbers, got {label!r}: {value!r}")
    fig, ax = new_figure()
    for k, (label, value) in enumerate((references or {}).items()):
        ax.axhline(float(value), color=("tab:gray", "tab:olive", "tab:pink")[k % 3], ls=":", lw=1.5, label=label)
    for k, (method, g) in enumerate(summary.groupby("method", sort=False)):
        colour, label = _REGRESSION_STYLE.get(method, ("grey", method))
        if method == "non-private":
            ax.axhline(g[f"{metric}_mean"].iloc[0], color=colour, ls="--", lw=1.2, label=label)
            continue
        g = g.sort_values("epsilon")
        shift = 1.0 + 0.03 * (k - 1)  # errorbars slightly shifted, as in the paper
        ax.errorbar(
            g["epsilon"] * shift,
            g[f"{metric}_mean"],
            yerr=g[f"{metric}_sd"].fillna(0),
            marker="o",
            ms=4,
            capsize=3,
            color=colour,
            label=label,
        )
    ax.set(xscale="log", xlabel=f"ε per user (δ = {DEFAULT_DELTA:g})", ylabel=metric.upper(), title=title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    if path is not None:
        save(fig, path)
    return fig


def chebyshev(summary: pd.DataFrame, grid: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Supplement Figure 6: left, the mean absolute error of the degree-2 Chebyshev approximation
    of E[sigmoid(x' theta)] vs d under the paper's protocol (± 1 sd over runs), one line per
    interval; right, the error for t = x' theta ~ N(m, s^2) vs m, one line per s (model's interval)."""
    _require(summary, {"radius", "d", "abs_diff_mean", "abs_diff_sd"}, "Chebyshev plot")
    _require(grid, {"radius", "mean", "sd", "abs_diff"}, "Chebyshev plot")
    fig, (left, right) = _fig(2)
    for radius, g in summary.groupby("radius"):
        g = g.sort_values("d")
        (line,) = left.plot(g["d"], g["abs_diff_mean"], marker="o", label=f"interval [-{radius:g}, {radius:g}]")
        left.fill_between(
            g["d"],
            (g["abs_diff_mean"] - g["abs_diff_sd"]).clip(lower=0),
            g["abs_diff_mean"] + g["abs_diff_sd"],
            color=line.get_color(),
            alpha=0.15,
        )
    left.set(
        xlabel="dimension d",
        ylabel="mean |E sigmoid - approximation|",
        title="Supp. Fig. 6 protocol: x ~ N(0, Σ), ||x|| <= 1",
    )
    left.legend(fontsize=8)
    radius = max(grid["radius"])
    for sd, g in grid[grid["radius"] == radius].groupby("sd"):
        g = g.sort_values("mean")
        right.plot(g["mean"], g["abs_diff"], label=f"s = {sd:g}")
    right.set(
        xlabel="m (mean of x' theta)",
        ylabel="|E sigmoid(t) - approximation|",
        title=f"t ~ N(m, s²), interval [-{radius:g}, {radius:g}]",
    )
    right.legend(fontsize=8)
    if path is not None:
        save(fig, path)
    return fig
