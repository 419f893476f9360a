"""Figures of the war-logs HMM case study (Foulds et al. 2016, Figs. 3-6 and supplement
Figs. 2-6) from the tables of :mod:`pystanprivacy.experiments.foulds2016.hmm`.

Same conventions as :mod:`pystanprivacy.experiments.foulds2016.figures`: matplotlib's object-oriented API on an Agg
canvas (no display, the user's pyplot backend untouched); every function takes a tidy
table, optionally a PNG path, and returns the :class:`~matplotlib.figure.Figure`.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure

from .._figures import require as _require
from .._figures import save

__all__ = ["state_assignments", "state_parameters", "heldout", "occupancy"]

_METHOD_LABELS = {"non-private": "non-private", "laplace": "Laplace mechanism", "ops": "OPS (one draw)"}
_CASUALTY_FEATURES = ("friendly_host_casualty", "civilian_casualty", "enemy_casualty")


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _method_title(row: pd.Series) -> str:
    label = _METHOD_LABELS.get(row["method"], str(row["method"]))
    if row["method"] == "laplace":
        label += f", ε = {row['epsilon']:g}"
    elif row["method"] == "ops":
        label += f", ε = {row['epsilon']:g}, M = {row['multiplier']:g}"
        if not row.get("converged", True):
            label += " (checks failed)"
    return label


def state_assignments(states: pd.DataFrame, dataset: str, path: str | os.PathLike | None = None) -> Figure:
    """Most frequent state of every region (rows) and month (columns), one panel per
    method, plus the true states when the table has them (Figures 3, 5; supplement 4, 6)."""
    _require(states, {"dataset", "method", "region", "month", "state"}, "state_assignments")
    table = states.loc[states["dataset"] == dataset]
    if table.empty:
        raise ValueError(f"no rows for dataset {dataset!r}; datasets: {sorted(states['dataset'].unique())}")
    methods = [m for m in ("laplace", "ops", "non-private") if m in set(table["method"])]
    methods += sorted(set(table["method"]) - set(methods))
    panels = [(m, table.loc[table["method"] == m]) for m in methods]
    if "true_state" in table and table["true_state"].notna().all():
        first = panels[0][1]
        panels.append(("truth", first.assign(state=first["true_state"])))
    regions = list(dict.fromkeys(table["region"]))
    months = list(dict.fromkeys(table["month"]))
    k_max = int(np.nanmax([p["state"].max() for _, p in panels]))
    cmap = ListedColormap([f"C{i % 10}" for i in range(k_max)])
    norm = BoundaryNorm(np.arange(0.5, k_max + 1.5), k_max)
    fig = _figure(max(6.4, 0.09 * len(months) + 2.5), 1.0 + (0.28 * len(regions) + 0.5) * len(panels))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (method, part) in zip(axes, panels):
        grid = part.pivot(index="region", columns="month", values="state").reindex(index=regions, columns=months)
        im = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", interpolation="nearest", cmap=cmap, norm=norm)
        ax.set_yticks(range(len(regions)), regions, fontsize=7)
        step = max(1, len(months) // 12)
        ax.set_xticks(range(0, len(months), step), months[::step], fontsize=7, rotation=45, ha="right")
        if method == "truth":
            ax.set_title("true states (synthetic data)", fontsize=9)
        else:
            row = part.iloc[0]
            extra = f"; agreement with truth {row['agreement']:.2f}" if "agreement" in part and pd.notna(row["agreement"]) else ""
            ax.set_title(_method_title(row) + extra, fontsize=9)
    fig.colorbar(im, ax=list(axes), ticks=range(1, k_max + 1), label="state", shrink=0.8)
    fig.suptitle(f"State assignments, {dataset} (most frequent state per region/month)", fontsize=10)
    if path is not None:
        save(fig, path)
    return fig


def state_parameters(params: pd.DataFrame, dataset: str, path: str | os.PathLike | None = None, *,
                     method: str = "laplace", top: int = 8) -> Figure:
    """Per-state emission distributions (Figures 4-5): type, the ``top`` most likely
    categories, and P(casualties) for the three casualty indicators; one row per state."""
    _require(params, {"dataset", "method", "state", "feature", "value", "probability"}, "state_parameters")
    table = params.loc[(params["dataset"] == dataset) & (params["method"] == method)]
    if table.empty:
        raise ValueError(f"no parameter rows for dataset {dataset!r} and method {method!r}")
    states = sorted(table["state"].unique())
    fig = _figure(11.0, 2.3 * len(states) + 0.6)
    axes = fig.subplots(len(states), 3, squeeze=False)
    for i, k in enumerate(states):
        sk = table.loc[table["state"] == k]
        t = sk.loc[sk["feature"] == "type"].sort_values("probability")
        axes[i, 0].barh(t["value"], t["probability"], color=f"C{(int(k) - 1) % 10}")
        c = sk.loc[sk["feature"] == "category"].nlargest(top, "probability").sort_values("probability")
        axes[i, 1].barh(c["value"], c["probability"], color=f"C{(int(k) - 1) % 10}")
        cas = sk.loc[sk["feature"].isin(_CASUALTY_FEATURES) & (sk["value"] == "yes")]
        axes[i, 2].barh([f.replace("_casualty", "").replace("_", "/") for f in cas["feature"]], cas["probability"],
                        color=f"C{(int(k) - 1) % 10}")
        axes[i, 2].set_xlim(0, 1)
        axes[i, 0].set_ylabel(f"state {int(k)}")
        for ax in axes[i]:
            ax.tick_params(labelsize=7)
    axes[0, 0].set_title("type", fontsize=9)
    axes[0, 1].set_title(f"category (top {top})", fontsize=9)
    axes[0, 2].set_title("P(casualties)", fontsize=9)
    row = table.iloc[0]
    fig.suptitle(f"Emission distributions per state, {dataset}: {_method_title(row)}", fontsize=10)
    if path is not None:
        save(fig, path)
    return fig


def heldout(summary: pd.DataFrame, path: str | os.PathLike | None = None) -> Figure:
    """Held-out log-likelihood per log entry vs total ε (Figure 6; supplement Fig. 2): one
    panel per data set × model; Laplace, OPS per M, and the non-private level. OPS points
    whose draws did not all pass the convergence checks are drawn hollow."""
    _require(summary, {"dataset", "model", "method", "multiplier", "epsilon", "heldout_loglik_per_entry",
                       "splits", "converged"}, "heldout")
    panels = list(dict.fromkeys(zip(summary["dataset"], summary["model"])))
    if not panels:
        raise ValueError("heldout needs at least one row")
    fig = _figure(4.2 * len(panels), 3.8)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    any_hollow = False
    for ax, (dataset, model) in zip(axes, panels):
        part = summary.loc[(summary["dataset"] == dataset) & (summary["model"] == model)]
        lap = part.loc[part["method"] == "laplace"].sort_values("epsilon")
        if len(lap):
            ax.errorbar(lap["epsilon"], lap["heldout_loglik_per_entry"], yerr=lap.get("heldout_loglik_per_entry_sd"),
                        color="tab:blue", marker="o", label="Laplace", capsize=2)
        ops = part.loc[part["method"] == "ops"]
        for j, (mult, g) in enumerate(ops.groupby("multiplier")):
            g = g.sort_values("epsilon")
            colour = ("tab:red", "tab:orange", "tab:purple")[j % 3]
            ax.plot(g["epsilon"], g["heldout_loglik_per_entry"], color=colour, ls="--", label=f"OPS, M = {mult:g}")
            ok = g["converged"] >= g["splits"]
            ax.scatter(g.loc[ok, "epsilon"], g.loc[ok, "heldout_loglik_per_entry"], color=colour, zorder=3)
            ax.scatter(g.loc[~ok, "epsilon"], g.loc[~ok, "heldout_loglik_per_entry"], facecolors="white",
                       edgecolors=colour, zorder=3)
            any_hollow |= bool((~ok).any())
        nonpriv = part.loc[part["method"] == "non-private", "heldout_loglik_per_entry"]
        if len(nonpriv):
            ax.axhline(float(nonpriv.iloc[0]), color="black", lw=1, label="non-private")
        ax.set_xscale("log")
        eps = sorted(e for e in part["epsilon"].unique() if np.isfinite(e))
        ax.minorticks_off()
        ax.set_xticks(eps, [f"{e:g}" for e in eps])
        ax.set_xlabel("total ε")
        ax.set_title(f"{dataset}: {model}", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0].set_ylabel("held-out log-likelihood per log entry")
    if any_hollow:
        axes[-1].scatter([], [], facecolors="white", edgecolors="grey", label="OPS draw: convergence checks failed")
    axes[-1].legend(fontsize=7, loc="lower right")
    if path is not None:
        save(fig, path)
    return fig


def occupancy(table: pd.DataFrame, path: str | os.PathLike | None = None, *, threshold: float = 0.05) -> Figure:
    """The Sec. 5 state-occupancy claim: per data set (panel) and fit (bar group), the share
    of the log entries held by each state, ranked from the largest; a dotted line at the
    "substantial" ``threshold``. From :func:`~pystanprivacy.experiments.foulds2016.occupancy.occupancy_table`."""
    _require(table, {"dataset", "method", "epsilon", "multiplier", "n_states", "rank", "entry_share"}, "occupancy")
    datasets = list(dict.fromkeys(table["dataset"]))
    if not datasets:
        raise ValueError("occupancy needs at least one row")
    fig = _figure(5.0 * len(datasets), 3.6)
    axes = fig.subplots(1, len(datasets), squeeze=False)[0]
    for ax, dataset in zip(axes, datasets):
        part = table.loc[table["dataset"] == dataset]
        fits = part.groupby(["method", "epsilon", "multiplier"], dropna=False, sort=False)
        width = 0.8 / fits.ngroups
        for j, ((method, eps, mult), g) in enumerate(fits):
            g = g.sort_values("rank")
            label = _method_title(pd.Series({"method": method, "epsilon": eps, "multiplier": mult}))
            ax.bar(g["rank"] + (j - (fits.ngroups - 1) / 2) * width, g["entry_share"], width=width, label=label)
        ax.axhline(threshold, color="grey", ls=":", lw=1)
        ax.set_xticks(sorted(part["rank"].unique()))
        ax.set_xlabel("state, ranked by its share")
        ax.set_title(f"{dataset}: {int(part['n_states'].iloc[0])}-state HMM", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0].set_ylabel("share of log entries (most frequent state)")
    axes[-1].legend(fontsize=7, loc="upper right")
    if path is not None:
        save(fig, path)
    return fig
