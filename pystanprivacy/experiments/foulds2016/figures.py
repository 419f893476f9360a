"""The papers' figures from the experiments' result tables (matplotlib).

Figures are built with matplotlib's object-oriented API on an Agg canvas, so they never
touch (or need) a display and never change the user's pyplot backend. Each function takes
the tidy table an experiment returned and, optionally, a path to save a PNG; it returns
the :class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .._figures import beside, incomplete_legend, mark_incomplete, save, separate_labels
from .._figures import new_figure as _new
from .._figures import require as _require

__all__ = ["adversarial", "figure1", "figure2", "figure2_pairs", "save", "theorems"]

_COLOURS = {"non-private": "black", "laplace": "tab:blue", "ops": "tab:red"}
_LABELS = {"non-private": "non-private posterior", "laplace": "Laplace mechanism", "ops": "OPS (exponential mechanism)"}


def figure1(table: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Foulds et al. (2016) Figure 1: the densities of the non-private posterior, the OPS
    target and the Laplace-mechanism posteriors (solid: estimated from the Stan draws;
    dashed: closed form), from :func:`pystanprivacy.experiments.foulds2016.beta_bernoulli.figure1`."""
    _require(table, {"curve", "replicate", "p", "density_stan", "density_exact"}, "figure1")
    fig, ax = _new()
    lap = table[table["curve"] == "laplace"]
    for i, (_, g) in enumerate(lap.groupby("replicate")):
        ax.plot(
            g["p"],
            g["density_stan"],
            color=_COLOURS["laplace"],
            lw=0.7,
            alpha=0.45,
            label="Laplace mechanism (each noise draw)" if i == 0 else None,
        )
    for curve, style in (("non-private", "-"), ("ops", "-")):
        g = table[table["curve"] == curve]
        if g.empty:
            continue
        label = _LABELS[curve]
        if curve == "ops" and "temperature" in g:
            label += f", T = {g['temperature'].iloc[0]:.2f}"
        ax.plot(g["p"], g["density_stan"], style, color=_COLOURS[curve], lw=2, label=label + " (Stan)")
        ax.plot(
            g["p"],
            g["density_exact"],
            "--",
            color="gold" if curve == "non-private" else "salmon",
            lw=1.2,
            label=f"{_LABELS[curve]} (closed form)",
        )
    if "p_true" in table:
        ax.axvline(table["p_true"].iloc[0], color="grey", ls=":", lw=1, label="true p")
    title = "Privacy-preserving approximate posteriors"
    if {"n_obs", "epsilon"} <= set(table.columns):
        eps = table.loc[table["curve"] != "non-private", "epsilon"]
        title += f" (N = {int(table['n_obs'].iloc[0])}, ε = {eps.iloc[0]:g})" if len(eps) else ""
    ax.set(xlabel="p", ylabel="density", title=title, xlim=(0, 1))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper right")
    if path is not None:
        save(fig, path)
    return fig


def figure2_pairs(repeats: pd.DataFrame) -> pd.DataFrame:
    """OPS minus Laplace L1 error per N, paired by data set (both methods see the same R data
    sets at each N), as F2's verdict counts a refusal: a refused OPS draw scores the expected
    error of a draw from the OPS model's prior (:func:`~.claims.ops_refusal_score`), never
    dropped. The columns of :func:`~pystanprivacy.experiments.compare.paired_differences`
    (``n_obs``, ``pairs``, ``mean_diff``, ``se``, ...) with ``refused_method`` (OPS draws refused)
    and ``published`` (released), from the per-repeat rows of
    :func:`pystanprivacy.experiments.foulds2016.beta_bernoulli.figure2`."""
    from ..compare import paired_differences
    from .claims import ops_refusal_score

    _require(repeats, {"method", "n_obs", "repeat", "abs_error", "released", "p_true", "a0"}, "figure2_pairs")
    rows = repeats[repeats["method"].isin(["ops", "laplace"])]
    released = rows["released"].astype(bool)
    refused_rows = rows[~released]  # OPS draws only: Laplace is never refused (and has no a0)
    refusal = pd.Series(
        [ops_refusal_score(p=p, a0=a0)[0] for p, a0 in zip(refused_rows["p_true"], refused_rows["a0"])],
        index=refused_rows.index,
        dtype=float,
    )
    rows = rows.assign(score=rows["abs_error"].where(released, refusal), refused=~released, released=True)
    cells = paired_differences(rows, "score", method="ops", baseline="laplace", groups=["n_obs"], pairs=["repeat"])
    refused = rows[rows["method"] == "ops"].groupby("n_obs")["refused"].sum()
    cells = cells.drop(columns=["refused_method"]).merge(refused.rename("refused_method").reset_index(), on="n_obs")
    return cells.assign(published=cells["pairs"] - cells["refused_method"])


def figure2(
    summary: pd.DataFrame, path: str | os.PathLike | None = None, *, repeats: pd.DataFrame | None = None
) -> Figure:
    """Foulds et al. (2016) Figure 2: mean L1 error of one private posterior draw vs N
    (log-log axes, ±2 standard errors; a point resting on fewer released draws than attempted,
    ``n_released < n_released + n_refused``, hollow), from
    :func:`pystanprivacy.experiments.foulds2016.beta_bernoulli.summarise_figure2`; below it,
    where the per-repeat rows are at hand (``repeats``, or ``foulds2016_figure2.csv`` beside
    ``path``), OPS minus Laplace paired by data set at each N with ±2 standard errors, a refused
    OPS draw scored as F2's verdict scores it (:func:`figure2_pairs`): the statistic of the claim
    that OPS beats Laplace near N = 10. The OPS draws released / attempted at each N are written
    under the lower panel's ticks."""
    _require(summary, {"method", "n_obs", "mean_abs_error", "se_abs_error"}, "figure2")
    repeats = repeats if repeats is not None else beside(path, "foulds2016_figure2.csv")
    if repeats is not None and not {"ops", "laplace"} <= set(repeats["method"]):
        repeats = None  # a run without both mechanisms: nothing to pair
    if repeats is None:
        fig, ax = _new()
        low = None
    else:
        fig = Figure(figsize=(6.4, 6.6), layout="constrained")
        FigureCanvasAgg(fig)
        ax, low = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    marked = 0
    for method, g in summary.groupby("method", sort=False):
        g = g.sort_values("n_obs")
        label = _LABELS.get(method, method)
        if "n_refused" in g and g["n_refused"].sum():
            label += f" ({int(g['n_refused'].sum())} draws refused)"
        ax.errorbar(
            g["n_obs"],
            g["mean_abs_error"],
            yerr=2 * g["se_abs_error"].fillna(0),
            marker="o",
            ms=3,
            capsize=2,
            color=_COLOURS.get(method),
            label=label,
        )
        if {"n_released", "n_refused"} <= set(g.columns):
            marked += mark_incomplete(
                ax,
                g["n_obs"],
                g["mean_abs_error"],
                g["n_released"],
                g["n_released"] + g["n_refused"],
                colour=_COLOURS.get(method, "grey"),
                annotate=low is None,  # with the lower panel the counts go under its ticks
            )
    if marked:
        where = " (counts below)" if low is not None else " (the rest refused)"
        incomplete_legend(ax, f"hollow: fewer draws released than attempted{where}")
    ax.set(xscale="log", yscale="log", ylabel="mean L1 error |p̂ − p|", title="L1 error of one private posterior draw")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7 if low is not None else 8, loc="lower left" if low is not None else "best")
    if low is None:
        ax.set_xlabel("number of observations N")
        separate_labels(fig)
    else:
        pairs = figure2_pairs(repeats).sort_values("n_obs")
        n = pairs["n_obs"].to_numpy(dtype=float)
        low.axhline(0.0, color="black", lw=0.8)
        low.errorbar(n, pairs["mean_diff"], yerr=2 * pairs["se"], color="tab:purple", marker="o", ms=4, capsize=3)
        low.set_title(
            "OPS − Laplace, paired by data set (± 2 SE); a refused OPS draw scores\n"
            "the expected error of a draw from its prior, as the verdict counts it",
            fontsize=8,
        )
        low.set_xscale("log")
        low.minorticks_off()
        low.set_xticks(
            n,
            [f"{x:g}\n{int(k)}/{int(k + r)}" for x, k, r in zip(n, pairs["published"], pairs["refused_method"])],
            fontsize=8,
        )
        low.set(
            xlabel="number of observations N  (OPS draws released / attempted)",
            ylabel="OPS − Laplace L1 error\n(> 0: Laplace better)",
        )
        low.grid(True, axis="y", alpha=0.3)
    if path is not None:
        save(fig, path)
    return fig


def theorems(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Theorems 4-5 check: N·E[(draw − p0)²] per method (±2 Monte-Carlo standard errors)
    against the asymptotic values 2·p0(1 − p0) and (1 + T)·p0(1 − p0), from
    :func:`pystanprivacy.experiments.foulds2016.beta_bernoulli.summarise_theorems`."""
    _require(summary, {"method", "estimate", "mc_se", "theory"}, "theorems")
    fig, ax = _new()
    x = np.arange(len(summary))
    colours = [_COLOURS.get(m, "grey") for m in summary["method"]]
    ax.bar(
        x,
        summary["estimate"],
        yerr=2 * summary["mc_se"],
        color=colours,
        alpha=0.7,
        capsize=4,
        label="N·mean((draw − p0)²) ± 2 MC s.e.",
    )
    for xi, th in zip(x, summary["theory"]):
        ax.hlines(th, xi - 0.4, xi + 0.4, color="black", lw=2)
    ax.plot([], [], color="black", lw=2, label="asymptotic theory")
    ax.set_xticks(x, [_LABELS.get(m, m) for m in summary["method"]], fontsize=8)
    title = "Theorems 4-5: asymptotic variance of one draw"
    if "n_obs" in summary:
        title += f" (N = {int(summary['n_obs'].iloc[0])})"
    ax.set(ylabel="N · E[(draw − p0)²]", title=title)
    ax.legend(fontsize=8)
    if path is not None:
        save(fig, path)
    return fig


def adversarial(table: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Supplement A: the data-set-specific ε of posterior sampling as an adversary adds
    data points, with the worst case 2Δ, from
    :func:`pystanprivacy.experiments.foulds2016.beta_bernoulli.adversarial`."""
    _require(table, {"n_obs", "local_epsilon", "worst_case_epsilon"}, "adversarial")
    fig, ax = _new()
    ax.plot(
        table["n_obs"], table["local_epsilon"], color="tab:red", lw=1.5, label="data-set-specific ε (greedy adversary)"
    )
    ax.axhline(
        table["worst_case_epsilon"].iloc[0],
        color="black",
        ls="--",
        lw=1,
        label=f"worst case 2Δ = {table['worst_case_epsilon'].iloc[0]:.3f}",
    )
    ax.set(
        xscale="log",
        xlabel="number of observations N",
        ylabel="ε",
        title="Adversarial data: local ε of posterior sampling",
    )
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    if path is not None:
        save(fig, path)
    return fig
