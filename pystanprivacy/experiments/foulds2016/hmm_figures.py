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

from .._figures import INTERVAL_NOTE, beside, incomplete_legend, mark_incomplete, paired_panel, save
from .._figures import require as _require

__all__ = [
    "heldout",
    "heldout_dispersed",
    "heldout_dispersed_reference",
    "heldout_pairs",
    "occupancy",
    "ops_last_samples",
    "state_assignments",
    "state_parameters",
]

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


def _state_grid(ax, part: pd.DataFrame, regions: list, months: list, cmap, norm):
    """One region x month panel of states (1-based) on ``ax``; returns the image."""
    grid = part.pivot(index="region", columns="month", values="state").reindex(index=regions, columns=months)
    im = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", interpolation="nearest", cmap=cmap, norm=norm)
    ax.set_yticks(range(len(regions)), regions, fontsize=7)
    step = max(1, len(months) // 12)
    ax.set_xticks(range(0, len(months), step), months[::step], fontsize=7, rotation=45, ha="right")
    return im


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
        im = _state_grid(ax, part, regions, months, cmap, norm)
        if method == "truth":
            ax.set_title("true states (synthetic data)", fontsize=9)
        else:
            row = part.iloc[0]
            extra = (
                f"; agreement with truth {row['agreement']:.2f}"
                if "agreement" in part and pd.notna(row["agreement"])
                else ""
            )
            ax.set_title(_method_title(row) + extra, fontsize=9)
    fig.colorbar(im, ax=list(axes), ticks=range(1, k_max + 1), label="state", shrink=0.8)
    fig.suptitle(f"State assignments, {dataset} (most frequent state per region/month)", fontsize=10)
    if path is not None:
        save(fig, path)
    return fig


def state_parameters(
    params: pd.DataFrame, dataset: str, path: str | os.PathLike | None = None, *, method: str = "laplace", top: int = 8
) -> Figure:
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
        axes[i, 2].barh(
            [f.replace("_casualty", "").replace("_", "/") for f in cas["feature"]],
            cas["probability"],
            color=f"C{(int(k) - 1) % 10}",
        )
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


#: colours of the held-out figure: Laplace, and OPS by its multiplier's rank
_HELDOUT_LAPLACE = "tab:blue"
_HELDOUT_OPS = ("tab:red", "tab:orange", "tab:purple")
_UNCONVERGED = "hollow: not every split's fit passed the convergence checks"


def heldout_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """Laplace minus OPS (each multiplier M) held-out log-likelihood per entry, paired by split:
    per data set, model, M and ε, the mean over the splits that both methods have, its standard
    error and in how many splits Laplace was ahead
    (:func:`~pystanprivacy.experiments.compare.paired_differences`), the statistic of
    REPRODUCTION.md's F6 table.

    Parameters
    ----------
    table:
        The per-split rows of :func:`~pystanprivacy.experiments.foulds2016.hmm.heldout_study`
        (``dataset``, ``model``, ``method``, ``multiplier``, ``epsilon``, ``split``,
        ``heldout_loglik_per_entry``).
    """
    from ..compare import paired_differences

    _require(
        table,
        {"dataset", "model", "method", "multiplier", "epsilon", "split", "heldout_loglik_per_entry"},
        "heldout_pairs",
    )
    frames = []
    laplace = table.loc[table["method"] == "laplace"]
    for mult in sorted(table.loc[table["method"] == "ops", "multiplier"].dropna().unique()):
        ops = table.loc[(table["method"] == "ops") & (table["multiplier"] == mult)]
        if laplace.empty or ops.empty:
            continue
        diff = paired_differences(
            pd.concat([laplace, ops], ignore_index=True),
            "heldout_loglik_per_entry",
            method="laplace",
            baseline="ops",
            groups=["dataset", "model", "epsilon"],
            pairs=["split"],
            lower_is_better=False,
        )
        frames.append(diff.assign(multiplier=float(mult)))
    if not frames:
        raise ValueError("heldout_pairs needs Laplace and OPS rows")
    return pd.concat(frames, ignore_index=True)


def _heldout_means(ax, part: pd.DataFrame, eps: list[float], inf_x: float) -> bool:
    """Mean held-out log-likelihood per entry vs ε for Laplace and each OPS M, the non-private
    level as a line and a point at ``inf_x``; every point whose splits did not all pass the
    convergence checks hollow, whatever its method. Returns whether any point is hollow."""
    hollow = False
    curves = [("laplace", np.nan, _HELDOUT_LAPLACE, "Laplace", "-")]
    mults = sorted(part.loc[part["method"] == "ops", "multiplier"].dropna().unique())
    curves += [("ops", m, _HELDOUT_OPS[j % 3], f"OPS, M = {m:g}", "--") for j, m in enumerate(mults)]
    for method, mult, colour, label, ls in curves:
        g = part.loc[part["method"] == method]
        if method == "ops":
            g = g.loc[g["multiplier"] == mult]
        g = g.sort_values("epsilon")
        if g.empty:
            continue
        ax.plot(g["epsilon"], g["heldout_loglik_per_entry"], color=colour, ls=ls, marker="o", ms=5, label=label)
        hollow |= (
            mark_incomplete(
                ax,
                g["epsilon"],
                g["heldout_loglik_per_entry"],
                g["converged"],
                g["splits"],
                colour=colour,
                annotate=False,
            )
            > 0
        )
    nonpriv = part.loc[part["method"] == "non-private"]
    if len(nonpriv):
        level = float(nonpriv["heldout_loglik_per_entry"].iloc[0])
        ax.axhline(level, color="black", lw=1, label="non-private")
        ax.plot([inf_x], [level], color="black", marker="o", ms=5, ls="none")
        hollow |= (
            mark_incomplete(
                ax,
                [inf_x],
                [level],
                nonpriv["converged"].iloc[:1],
                nonpriv["splits"].iloc[:1],
                colour="black",
                annotate=False,
            )
            > 0
        )
    return hollow


def heldout(
    summary: pd.DataFrame, path: str | os.PathLike | None = None, *, splits: pd.DataFrame | None = None
) -> Figure:
    """Held-out log-likelihood per log entry vs total ε (Figure 6; supplement Fig. 2), one
    column per data set × model.

    Top row: the mean over splits for Laplace, OPS per M, and the non-private fit (a line, and
    a point at "∞"); a point is hollow when not every split's fit passed the convergence checks,
    for every method alike. Bottom row, when the per-split rows are at hand: Laplace minus OPS
    (each M) paired by split (:func:`heldout_pairs`), the mean with its 95 % t-interval over the
    splits, and a line at 0 (above 0: Laplace ahead).

    Parameters
    ----------
    summary:
        :func:`~pystanprivacy.experiments.foulds2016.hmm.summarise_heldout`'s table.
    path:
        Where to save the PNG; also where the per-split rows are looked for when ``splits`` is
        not given (``foulds2016_hmm_heldout.csv`` beside it, which the study writes first).
    splits:
        The per-split rows of :func:`~pystanprivacy.experiments.foulds2016.hmm.heldout_study`.

    References
    ----------
    .. [1] J. Foulds, J. Geumlek, M. Welling and K. Chaudhuri, "On the theory and practice of
       privacy-preserving Bayesian data analysis", UAI 2016, Figure 6.
    """
    _require(
        summary,
        {"dataset", "model", "method", "multiplier", "epsilon", "heldout_loglik_per_entry", "splits", "converged"},
        "heldout",
    )
    panels = list(dict.fromkeys(zip(summary["dataset"], summary["model"])))
    if not panels:
        raise ValueError("heldout needs at least one row")
    if splits is None:
        splits = beside(path, "foulds2016_hmm_heldout.csv")
    pairs = (
        heldout_pairs(splits)
        if splits is not None and (splits["method"] == "ops").any() and (splits["method"] == "laplace").any()
        else None
    )
    rows = 1 if pairs is None else 2
    fig = _figure(4.2 * len(panels), 3.8 * rows + 0.6)
    axes = fig.subplots(rows, len(panels), squeeze=False)
    any_hollow = one_pair = False
    for j, (dataset, model) in enumerate(panels):
        ax = axes[0, j]
        part = summary.loc[(summary["dataset"] == dataset) & (summary["model"] == model)]
        eps = sorted(e for e in part["epsilon"].unique() if np.isfinite(e))
        inf_x = (eps[-1] if eps else 1.0) * 2.5
        any_hollow |= _heldout_means(ax, part, eps, inf_x)
        ax.set_xscale("log")
        ax.minorticks_off()
        has_inf = (part["method"] == "non-private").any()
        ax.set_xticks(eps + ([inf_x] if has_inf else []), [f"{e:g}" for e in eps] + (["∞"] if has_inf else []))
        ax.set_xlabel("total ε")
        ax.set_title(f"{dataset}: {model}", fontsize=9)
        ax.tick_params(labelsize=8)
        if pairs is None:
            continue
        ax = axes[1, j]
        p = pairs.loc[(pairs["dataset"] == dataset) & (pairs["model"] == model)]
        for k, (mult, g) in enumerate(p.groupby("multiplier")):
            paired_panel(
                ax,
                g,
                "epsilon",
                colour=_HELDOUT_OPS[k % 3],
                offset=1.0 + 0.06 * (k - 0.5),
                label=f"Laplace − OPS (M = {mult:g}) ± {INTERVAL_NOTE}",
            )
            one_pair |= bool((g["pairs"] == 1).any())
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(eps, [f"{e:g}" for e in eps])
        ax.set_xlabel("total ε")
        ax.set_title(f"{dataset}: {model}, paired by split", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0, 0].set_ylabel("held-out log-likelihood per log entry", fontsize=8)
    if pairs is not None:
        axes[1, 0].set_ylabel("Laplace − OPS, per log entry\n(> 0: Laplace ahead)", fontsize=8)
    if any_hollow:
        incomplete_legend(axes[0, 0], _UNCONVERGED)
    if one_pair:
        incomplete_legend(axes[-1, 0], "hollow without a bar: one split (no interval)")
    handles, labels = [], []
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 3), fontsize=7)
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


def ops_last_samples(table: pd.DataFrame, dataset: str, path: str | os.PathLike | None = None) -> Figure:
    """Figure 7 (supplement Figures 4, 6): the OPS HMM's states from a chain's last 100 draws
    and from its last draw, beside the truth (repeat 0, chain 1), and below them the statistic
    the verdict rests on: every (repeat, chain)'s agreement with the truth, last 100 against
    last one, for every data set of ``table`` (:func:`~.ops_states.ops_states_study`).

    Real logs have no true states: then there is no truth panel, and the bottom panel shows
    every chain's month-to-month state switches, last 100 against last one (the paper's
    "noisy"), for every data set."""
    _require(table, {"part", "dataset", "estimate", "chain", "repeat", "agreement"}, "ops_last_samples")
    cells = table.loc[(table["part"] == "cell") & (table["dataset"] == dataset) & (table["chain"] == 1)]
    if cells.empty:
        raise ValueError(f"no state cells for dataset {dataset!r}; datasets: {sorted(table['dataset'].unique())}")
    has_truth = bool(cells["true_state"].notna().any())
    panels = [(name, cells.loc[cells["estimate"] == name]) for name in ("last 100", "last one")]
    if has_truth:
        panels.append(("truth", panels[0][1].assign(state=panels[0][1]["true_state"])))
    regions = list(dict.fromkeys(cells["region"]))
    months = list(dict.fromkeys(cells["month"]))
    k_max = int(cells["n_states"].iloc[0])
    cmap = ListedColormap([f"C{i % 10}" for i in range(k_max)])
    norm = BoundaryNorm(np.arange(0.5, k_max + 1.5), k_max)
    fig = _figure(max(6.4, 0.09 * len(months) + 2.5), 3.2 + (0.28 * len(regions) + 0.5) * len(panels))
    axes = fig.subplots(
        len(panels) + 1,
        1,
        squeeze=False,
        height_ratios=[1] * len(panels) + [max(1.0, 2.6 / (0.28 * len(regions) + 0.5))],
    )[:, 0]
    titles = {
        "last 100": "estimate from the last 100 draws (chain 1)",
        "last one": "estimate from the last draw (chain 1)",
        "truth": "true states (synthetic data)",
    }
    scores = table.loc[table["part"] == "score"]
    for ax, (name, part) in zip(axes, panels):
        im = _state_grid(ax, part, regions, months, cmap, norm)
        if name == "truth":
            extra = ""
        elif has_truth:
            extra = f"; agreement with truth {part['agreement'].iloc[0]:.3f}"
        else:  # real logs: how noisy the grid is
            grid = part.pivot(index="region", columns="month", values="state").loc[regions, months].to_numpy()
            extra = f"; {int(np.count_nonzero(grid[:, 1:] != grid[:, :-1]))} month-to-month state switches"
        ax.set_title(titles[name] + extra, fontsize=9)
    fig.colorbar(im, ax=list(axes[: len(panels)]), ticks=range(1, k_max + 1), label="state", shrink=0.8)
    ax = axes[-1]
    metric = "agreement" if has_truth else "switches"
    for i, (name, part) in enumerate(scores.groupby("dataset", sort=False)):
        pair = part.loc[part["estimate"].isin(["last 100", "last one"])].pivot_table(
            index=["repeat", "chain"], columns="estimate", values=metric
        )
        if pair.empty:  # a data set without true states on the truth panel's axes
            continue
        ax.scatter(
            pair["last one"], pair["last 100"], s=14, color=f"C{i}", alpha=0.7, label=f"{name} ({len(pair)} chains)"
        )
    if has_truth:
        low = float(scores["agreement"].min())
        ax.plot([low, 1], [low, 1], color="0.5", lw=0.8, ls="--", label="equal")
        ax.set_xlabel("agreement with truth: last draw", fontsize=8)
        ax.set_ylabel("agreement: last 100 draws", fontsize=8)
        ax.set_title("every repeat and chain: above the line, the 100-draw estimate is closer to the truth", fontsize=9)
    else:
        high = float(scores["switches"].max())
        ax.plot([0, high], [0, high], color="0.5", lw=0.8, ls="--", label="equal")
        ax.set_xlabel("month-to-month state switches: last draw", fontsize=8)
        ax.set_ylabel("switches: last 100 draws", fontsize=8)
        ax.set_title("every repeat and chain: below the line, the last draw is the noisier", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(
        f"OPS HMM state assignments, {dataset} (ε = {cells['epsilon'].iloc[0]:g}, M = {cells['multiplier'].iloc[0]:g})",
        fontsize=10,
    )
    if path is not None:
        save(fig, path)
    return fig


def heldout_dispersed_reference(heldout: pd.DataFrame, *, n_states: int, multiplier: float) -> pd.DataFrame:
    """Part ``hmm``'s held-out study (its ``foulds2016_hmm_heldout`` table) as the dispersed
    refit's reference: Laplace − OPS (M = ``multiplier``) for the ``n_states``-state HMM, mean
    over its splits, per data set and epsilon (columns ``dataset``, ``epsilon``,
    ``difference``)."""
    _require(
        heldout,
        {"dataset", "method", "epsilon", "split", "n_states", "multiplier", "heldout_loglik_per_entry"},
        "heldout_dispersed_reference",
    )
    t = heldout.loc[heldout["n_states"] == n_states]
    keys = ["dataset", "epsilon", "split"]
    lap = t.loc[t["method"] == "laplace"].set_index(keys)["heldout_loglik_per_entry"]
    ops = t.loc[(t["method"] == "ops") & (t["multiplier"] == multiplier)].set_index(keys)["heldout_loglik_per_entry"]
    return (lap - ops).groupby(level=["dataset", "epsilon"]).mean().rename("difference").reset_index()


def heldout_dispersed(
    summary: pd.DataFrame, reference: pd.DataFrame | None = None, path: str | os.PathLike | None = None
) -> Figure:
    """F6 refitted from dispersed starts: Laplace − OPS (M = 10) held-out log-likelihood per
    entry against the total epsilon (log axis, every epsilon of either series labelled), one
    panel per data set: each split's best-mode difference (points, splits side by side), the
    range of every chain of one method against the other's best mode (bars), and part ``hmm``'s
    mean over its splits (``reference``: :func:`heldout_dispersed_reference`) where it ran on
    the same data set.

    Parameters
    ----------
    summary:
        :func:`~pystanprivacy.experiments.foulds2016.heldout_dispersed_summary.summarise_heldout_dispersed`.
    reference:
        Part ``hmm``'s Laplace − OPS per data set and epsilon, or ``None``.
    path:
        Where to save the PNG.
    """
    _require(
        summary,
        {
            "dataset",
            "split",
            "epsilon",
            "best_mode_difference",
            "laplace_chains_min",
            "laplace_chains_max",
            "ops_chains_min",
            "ops_chains_max",
        },
        "heldout_dispersed",
    )
    labels = list(dict.fromkeys(summary["dataset"]))
    fig = _figure(4.6 * len(labels), 3.9)
    axes = np.atleast_1d(fig.subplots(1, len(labels), squeeze=False)[0])
    for ax, label in zip(axes, labels):
        part = summary.loc[summary["dataset"] == label]
        splits = sorted(part["split"].unique())
        for k, split in enumerate(splits):
            rows = part[part["split"] == split].sort_values("epsilon")
            x = rows["epsilon"].to_numpy(dtype=float) * 10 ** (0.025 * (k - (len(splits) - 1) / 2))
            lo = np.minimum(rows["laplace_chains_min"], rows["ops_chains_min"])
            hi = np.maximum(rows["laplace_chains_max"], rows["ops_chains_max"])
            ax.vlines(x, lo, hi, color="0.6", lw=1.2)
            ax.plot(
                x,
                rows["best_mode_difference"],
                "o",
                color="C0",
                ms=4,
                label="best modes, one split each (bar: every chain vs the other's best mode)" if k == 0 else None,
            )
        eps = set(part["epsilon"])
        ref = reference.loc[reference["dataset"] == label].sort_values("epsilon") if reference is not None else None
        if ref is not None and not ref.empty:
            ax.plot(
                ref["epsilon"],
                ref["difference"],
                "s--",
                color="C3",
                ms=4,
                label="part hmm (2 chains, EM start), mean over its splits",
            )
            eps |= set(ref["epsilon"])
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.minorticks_off()
        ticks = sorted(float(e) for e in eps)
        ax.set_xticks(ticks, [f"{e:g}" for e in ticks], fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        ax.set_xlabel("total ε", fontsize=9)
        ax.set_ylabel("Laplace − OPS (M = 10),\nheld-out log-lik per entry", fontsize=9)
        ax.set_title(f"{label}, 10-state HMM", fontsize=9)
    handles, names = [], []
    for ax in axes:
        for h, name in zip(*ax.get_legend_handles_labels()):
            if name not in names:
                handles.append(h)
                names.append(name)
    fig.legend(handles, names, loc="outside lower center", ncols=len(names), fontsize=8)
    if path is not None:
        save(fig, path)
    return fig
