"""Figures of Bernstein & Sheldon (2018), Figure 1, from the tables of
:mod:`pystanprivacy.experiments.bernstein2018.study`. Agg canvas only (never pyplot).

* :func:`figure1a` -- KS statistic of the posterior quantiles vs n, one panel per (ε, model);
* :func:`figure1b` -- empirical CDFs of the posterior quantiles at one (n, ε);
* :func:`figure1c` -- mean MMD² to the non-private posterior vs n.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...sampling.evaluate import ecdf
from .._figures import new_grid, require, save
from .study import GIBBS, METHODS, MMD_METHODS, MODELS, NAIVE, NONPRIVATE, OPS, STAN

__all__ = ["figure1a", "figure1b", "figure1c"]

#: style of each method's line
_STYLE = {
    STAN: dict(color="tab:blue", marker="o"),
    GIBBS: dict(color="tab:cyan", marker="s", ls="--"),
    NAIVE: dict(color="tab:red", marker="^"),
    OPS: dict(color="tab:orange", marker="v"),
    NONPRIVATE: dict(color="black", marker="x", ls=":"),
}
_DPI = 130
_PANEL = dict(panel_width=4.0, panel_height=3.2)


def _legend(fig: Figure, axes: np.ndarray) -> None:
    """One legend for the figure with every method that appears in any panel."""
    seen: dict[str, Any] = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="outside right upper", fontsize=8)


def _panels(frame: pd.DataFrame) -> tuple[Figure, np.ndarray, Iterator[tuple[Any, float, str, pd.DataFrame]]]:
    """A figure with one panel per (ε, model) of ``frame`` and an iterator over
    ``(axes, ε, model, rows of frame)``, panel by panel."""
    eps = sorted(frame["epsilon"].unique())
    models = [m for m in MODELS if m in set(frame["model"])]
    fig, axes = new_grid(len(eps), max(1, len(models)), **_PANEL)

    def each() -> Iterator[tuple[Any, float, str, pd.DataFrame]]:
        for i, e in enumerate(eps):
            for j, model in enumerate(models):
                yield axes[i][j], e, model, frame[(frame["epsilon"] == e) & (frame["model"] == model)]

    return fig, axes, each()


def _series(rows: pd.DataFrame, methods: tuple[str, ...]) -> Iterator[tuple[str, pd.DataFrame]]:
    """``(method, its rows sorted by n)`` for each of ``methods`` present in ``rows``."""
    for method in methods:
        h = rows[rows["method"] == method].sort_values("n")
        if not h.empty:
            yield method, h


def _finish(fig: Figure, axes: np.ndarray, path: str | os.PathLike | None) -> Figure:
    _legend(fig, axes)
    if path is not None:
        save(fig, path, dpi=_DPI)
    return fig


def figure1a(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 1a: KS statistic vs n, one panel per (ε, model), one line per method; the
    dotted grey line is the 1% critical value. ``summary``: ``summarise_calibration``'s table."""
    require(summary, {"model", "n", "epsilon", "method", "ks", "critical"}, "Figure 1a")
    fig, axes, panels = _panels(summary)
    for ax, e, model, g in panels:
        for method, h in _series(g, METHODS):
            ax.plot(h["n"], h["ks"], label=method, **_STYLE[method])
        if not g.empty:
            ax.plot(
                sorted(g["n"].unique()),
                [g["critical"].max()] * g["n"].nunique(),
                color="grey",
                ls=":",
                lw=1,
                label="1% critical value",
            )
        ax.set(xscale="log", ylim=(0, 1), title=f"{model}, ε = {e:g}", xlabel="n", ylabel="KS statistic")
    return _finish(fig, axes, path)


def figure1b(
    table: pd.DataFrame, path: str | os.PathLike | None = None, *, n: int = 1000, epsilon: float = 0.01
) -> Figure:
    """Figure 1b: empirical CDFs of the posterior quantiles U at (n, ε), one panel per model;
    a calibrated method follows the diagonal. ``table``: the calibration table."""
    require(table, {"model", "n", "epsilon", "method", "u"}, "Figure 1b")
    sel = table[(table["n"] == n) & np.isclose(table["epsilon"], epsilon)]
    models = [m for m in MODELS if m in set(sel["model"])]
    fig, axes = new_grid(1, max(1, len(models)), **_PANEL)
    grid = np.linspace(0, 1, 201)
    for j, model in enumerate(models):
        ax = axes[0][j]
        for method in METHODS:
            u = sel[(sel["model"] == model) & (sel["method"] == method)]["u"].dropna()
            if len(u):
                ax.plot(
                    grid,
                    ecdf(u.to_numpy(), grid),
                    label=method,
                    **{k: v for k, v in _STYLE[method].items() if k != "marker"},
                )
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        ax.set_title(f"{model}, n = {n}, ε = {epsilon:g}")
        ax.set_xlabel("posterior quantile U")
        ax.set_ylabel("empirical CDF")
    return _finish(fig, axes, path)


def figure1c(mmd: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Figure 1c: mean MMD² to the non-private posterior vs n (log-log; non-positive means,
    possible for an unbiased estimator when two posteriors coincide, are not drawn).
    ``mmd``: ``summarise_mmd``'s table."""
    require(mmd, {"model", "n", "epsilon", "method", "mmd2_mean", "mmd2_se"}, "Figure 1c")
    fig, axes, panels = _panels(mmd)
    for ax, e, model, g in panels:
        for method, h in _series(g, MMD_METHODS):
            ax.errorbar(h["n"], h["mmd2_mean"], yerr=h["mmd2_se"], label=method, capsize=2, **_STYLE[method])
        ax.set_xscale("log")
        ax.set_yscale("log", nonpositive="mask")  # means of unbiased estimates; <= 0 not drawn
        ax.set(title=f"{model}, ε = {e:g}", xlabel="n", ylabel="MMD² to non-private")
    return _finish(fig, axes, path)
