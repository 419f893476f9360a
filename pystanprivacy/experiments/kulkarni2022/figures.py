"""Figures of Kulkarni et al. (2022), distribution-estimation half (Figures 1-3, 9-11), from
the summary tables of :mod:`pystanprivacy.experiments.kulkarni2022.study`. Agg canvas only."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .._figures import require as _require
from .._figures import save

__all__ = ["calibration", "histogram_rmse", "kosarak"]

_MODEL_TITLES = {"gaussian": "Gaussian (μ, σ) (Fig. 1)", "exponential": "Exponential θ (Fig. 11)",
                 "histogram": "Histogram, d = 6 (Fig. 10)"}


def _fig(ncols: int, width: float = 4.2, height: float = 3.6) -> tuple[Figure, list]:
    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


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
            line, = ax.plot(gl["epsilon"], gl["coverage"], marker="o", label=f"{int(level * 100)} %")
            ax.axhline(level, color=line.get_color(), ls="--", lw=0.8)
            ax.fill_between(gl["epsilon"], level - 2 * gl["se"], level + 2 * gl["se"], color=line.get_color(),
                            alpha=0.12)
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
    fig = Figure(figsize=(4.2 * len(eps), 6.4), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(2, len(eps), squeeze=False))
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


def kosarak(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 2: mean absolute ECDF difference (private vs non-private posterior) per
    dimension vs ε, one panel per data source."""
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
        ax.set_title(f"Histogram d = 10 ({src})")
        ax.legend(fontsize=6, ncol=2)
    if path is not None:
        save(fig, path)
    return fig
