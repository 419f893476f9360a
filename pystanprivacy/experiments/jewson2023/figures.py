"""Figures of Jewson, Ghalebikesabi & Holmes (2023) from the tables of
:mod:`pystanprivacy.experiments.jewson2023.study` (matplotlib, Agg canvas; never touches pyplot).

Each function takes a summary table, optionally saves a PNG, and returns the Figure. Marks,
alike in every figure: a private point whose mean rests on fewer released draws than
attempted (the rest refused by the convergence gate) is hollow and labelled k/m. Figures 3, 9
and 10's network rows, whose verdicts are paired, add rows of βD minus DP-SGD paired by data
set (:func:`~pystanprivacy.experiments.jewson2023.paired.network_comparisons`, the pairs of the
``*_paired.csv`` tables) with 95 % t-intervals; their per-repeat rows are given, or read from
the part's table beside the PNG (the study writes it there first).
"""

from __future__ import annotations

import os

import matplotlib
import matplotlib.lines
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .._figures import (
    INTERVAL_NOTE,
    beside,
    incomplete_legend,
    limit_to_reliable,
    mark_incomplete,
    paired_panel,
    save,
    separate_labels,
    t_halfwidth,
)
from .._figures import require as _require
from .common import PAPER
from .paired import AUTHORS_DPSGD, METRICS, TUNED_DPSGD, network_comparisons, network_table

__all__ = ["figure2", "figure3", "figure4", "figure6", "figure7", "figure9", "figure10", "figure11"]

_COLOURS = {
    "beta-D": "tab:red",
    "Chaudhuri 1/(9n)": "tab:blue",
    "Chaudhuri 1/9": "tab:cyan",
    "Minami": "tab:green",
    "PM (non-private)": "black",
    "DP-SGD": "tab:purple",
    "SGD (non-private)": "tab:gray",
    "Chaudhuri 1/(9n) ERM (non-private)": "tab:blue",
    "Chaudhuri 1/9 ERM (non-private)": "tab:cyan",
    TUNED_DPSGD: "tab:olive",
}

#: how a method is named in the figures where its table name says too little: the tuned DP-SGD's
#: settings were chosen on exact validation scores of private rows, a search the stated epsilon
#: does not cover (SECURITY.md)
_DISPLAY = {TUNED_DPSGD: "DP-SGD (tuned non-privately)"}
#: a paired cell with fewer pairs than this is hollow, without interval, and does not set the axis
FEW_PAIRS = 5


#: the three DP-SGDs the paired rows compare βD with, and their colours
_PAIRED_BASELINES = {
    "DP-SGD": ("tab:purple", "βD − DP-SGD (App. B text's settings)"),
    AUTHORS_DPSGD: ("tab:brown", "βD − DP-SGD (authors' code's settings)"),
    TUNED_DPSGD: ("tab:olive", "βD − DP-SGD (tuned non-privately, as App. B describes; refused βD scored*)"),
}
_PAIRED_YLABEL = {
    "regression": "βD − DP-SGD, test log RMSE\n(< 0: βD better)",
    "classification": "βD − DP-SGD, test ROC-AUC\n(> 0: βD better)",
}
_INCOMPLETE = "hollow: k/m of the attempted releases published (the rest refused by the convergence gate)"
_FEW_PAIRS = f"hollow, no bar: < {FEW_PAIRS} βD releases published, not used for the axis range (▲▼: beyond it)"
#: the x label of a paired panel, whose tick labels carry βD's published / attempted releases
_PAIRS_AXIS = "{x}  (βD published / attempted)"


def _curves(ax, table: pd.DataFrame, y: str, err: str | None = None, x: str = "n_obs") -> int:
    """One curve per method (non-private dashed); a private point resting on fewer released
    draws than attempted (``runs - refused < runs``) hollow and labelled k/m. Returns how many
    points were so marked."""
    marked = 0
    for method, g in table.groupby("method", sort=False):
        g = g.sort_values(x)
        if g[y].isna().all():
            continue
        colour = _COLOURS.get(method)
        if np.isinf(g["epsilon"]).all():
            ax.plot(g[x], g[y], color=colour, ls="--", label=_DISPLAY.get(method, method))
            continue
        ax.plot(g[x], g[y], color=colour, marker="o", ms=3, label=_DISPLAY.get(method, method))
        if err is not None and err in g and g[err].notna().any():
            ax.fill_between(g[x], g[y] - g[err], g[y] + g[err], color=colour, alpha=0.15, lw=0)
        if {"runs", "refused"} <= set(g.columns):
            marked += mark_incomplete(ax, g[x], g[y], g["runs"] - g["refused"], g["runs"], colour=colour or "grey")
    ax.set_xscale("log")
    return marked


def _paired(ax, rows: pd.DataFrame, x: str) -> bool:
    """The paired rows of :func:`~.paired.network_comparisons` for βD against each DP-SGD on
    ``ax`` (each with its 95 % t-interval): a cell with fewer than :data:`FEW_PAIRS` pairs
    hollow and kept from setting the axis (:func:`~.._figures.limit_to_reliable`), and under
    each x tick βD's published / attempted releases (refused releases are never paired).
    Returns whether a cell rested on fewer than :data:`FEW_PAIRS` pairs."""
    baselines = [b for b in _PAIRED_BASELINES if b in set(rows["baseline"])]
    marks = []
    for k, baseline in enumerate(baselines):
        colour, label = _PAIRED_BASELINES[baseline]
        r = rows[rows["baseline"] == baseline]
        marks.append(
            paired_panel(
                ax,
                r,
                x,
                colour=colour,
                label=f"{label} ± {INTERVAL_NOTE}",
                offset=1.0 + 0.04 * (k - (len(baselines) - 1) / 2),
                few=FEW_PAIRS,
                support="published",
            )
        )
    limit_to_reliable(ax, marks)
    if "note" in rows and rows["note"].notna().any():  # the footnote of the scored comparison
        ax.plot([], [], color="none", label=rows["note"].dropna().iloc[0])
    ax.set_xscale("log")
    ax.minorticks_off()
    cells = rows.groupby(x)[["published", "refused_method"]].max() if "refused_method" in rows else None
    if cells is not None:
        ticks = cells.index.to_numpy(dtype=float)
        ax.set_xticks(
            ticks,
            [f"{t:g}\n{int(p)}/{int(p + r)}" for t, p, r in zip(ticks, cells["published"], cells["refused_method"])],
            fontsize=8,
        )
    return bool((rows["published"] < FEW_PAIRS).any())


def _panels(
    summary: pd.DataFrame,
    rows: list[tuple[str, str, str, str | None]],
    what: str,
    x: str = "n_obs",
    paired: list[tuple[str, pd.DataFrame, str]] = (),
    panel_width: float = 3.2,
) -> Figure:
    """One row per (dataset, metric column, y label, error column) and one panel per epsilon
    that the data set has private results at, ``x`` (n, or d for Figure 10) on a log axis; the
    non-private (epsilon = inf) curves are repeated in every panel. Then one row per
    (dataset, paired table, y label) of ``paired``: βD minus each DP-SGD, paired by data set
    (:func:`_paired`). Rows are subfigures, so a data set with fewer epsilons has fewer (wider)
    panels, never an empty one. Each panel is ``panel_width`` inches wide."""
    layout = []
    for dataset, col, label, err in rows:
        d = summary[summary["dataset"] == dataset]
        eps = sorted(e for e in d["epsilon"].unique() if np.isfinite(e))
        if eps:
            layout.append(("means", dataset, d, eps, (col, label, err)))
    for dataset, table, label in paired:
        eps = sorted(e for e in table["epsilon"].unique() if np.isfinite(e))
        if eps:
            layout.append(("paired", dataset, table, eps, label))
    if not layout:
        raise ValueError(f"{what}: the table has no private results to plot")
    ncols = max(len(eps) for _, _, _, eps, _ in layout)
    fig = Figure(figsize=(panel_width * ncols + 0.8, 2.7 * len(layout) + 0.7), layout="constrained")
    FigureCanvasAgg(fig)
    subs = np.atleast_1d(fig.subfigures(len(layout), 1))
    marked = one_pair = False
    for sub, (kind, dataset, d, eps, spec) in zip(subs, layout):
        axes = sub.subplots(1, len(eps), squeeze=False)[0]
        for j, (ax, e) in enumerate(zip(axes, eps)):
            if kind == "means":
                col, label, err = spec
                marked |= bool(_curves(ax, d[(d["epsilon"] == e) | np.isinf(d["epsilon"])], col, err, x))
                ax.set_title(f"{dataset}, ε = {e:g}", fontsize=9)
            else:
                label = spec
                one_pair |= _paired(ax, d[d["epsilon"] == e], x)
                ax.set_title(f"{dataset}, ε = {e:g}: paired by data set", fontsize=9)
            name = "n" if x == "n_obs" else x
            ax.set_xlabel(
                name if kind == "means" else _PAIRS_AXIS.format(x=name), fontsize=8 if kind == "paired" else 9
            )
            if j == 0:
                ax.set_ylabel(label, fontsize=9 if kind == "means" else 8)
    if marked:
        incomplete_legend(fig.axes[0], _INCOMPLETE)
    if one_pair:
        incomplete_legend(fig.axes[0], _FEW_PAIRS)
    handles, labels = [], []
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    wide = max(map(len, labels), default=0) > 60
    fig.legend(
        handles, labels, loc="outside lower center", ncols=min(len(labels), 2 if ncols <= 2 or wide else 3), fontsize=8
    )
    separate_labels(fig)
    return fig


#: the footnote of the scored comparison (the verdicts' rule, :func:`~.claims.scored`)
_SCORED_NOTE = {
    "regression": "* regression, as the verdict counts it: a refused βD release scores βD's largest test RMSE on the data set",
    "classification": "* classification, as the verdict counts it: a refused βD release scores AUC 0.5",
}


_UNSCORED_NOTE = "* not here: βD released nothing in some cell, so its refusals are left out of the pairs"


def _scored_vs_tuned(repeats: pd.DataFrame, task: str, by: str) -> pd.DataFrame:
    """βD minus the tuned DP-SGD paired by data set as J3, J9 and J10's verdicts count it: a
    refused βD release is not dropped but scored by :func:`~.claims.scored` (AUC 0.5; test RMSE:
    βD's largest on the same data set). Columns of :func:`~pystanprivacy.experiments.compare.
    paired_differences` plus ``published`` (βD's released pairs) and ``refused_method``."""
    from ..compare import paired_differences
    from .claims import scored

    metric, transform, lower = METRICS[task]
    rows = scored(repeats[repeats["method"].isin(["beta-D", TUNED_DPSGD])], metric)
    cells = paired_differences(
        rows.assign(released=True),
        "score",
        method="beta-D",
        baseline=TUNED_DPSGD,
        groups=["dataset", by, "epsilon"],
        pairs=["repeat"],
        transform=transform,
        lower_is_better=lower,
    )
    refused = rows[rows["method"] == "beta-D"].groupby(["dataset", by, "epsilon"])["refused"].sum()
    cells = cells.drop(columns=["refused_method", "refused_baseline"]).merge(
        refused.rename("refused_method").reset_index(), on=["dataset", by, "epsilon"], how="left"
    )
    return cells.assign(
        published=cells["pairs"] - cells["refused_method"],
        method="beta-D",
        baseline=TUNED_DPSGD,
        note=_SCORED_NOTE[task],
    )


def _network_pairs(task: str, repeats: pd.DataFrame | None, by: str = "n_obs") -> list[tuple[str, pd.DataFrame, str]]:
    """βD against each DP-SGD, paired by data set, one entry per data set: against the untuned
    settings the released pairs (:func:`~.paired.network_comparisons`, those of the committed
    ``*_paired.csv`` tables), against the tuned DP-SGD the verdicts' pairs, refused βD releases
    scored (:func:`_scored_vs_tuned`)."""
    if repeats is None or "beta-D" not in set(repeats["method"]) or not set(_PAIRED_BASELINES) & set(repeats["method"]):
        return []  # no DP-SGD rows (run without [dpsgd]): means only
    pairs = network_comparisons(repeats, task, by=by)
    pairs = pairs[(pairs["method"] == "beta-D") & pairs["baseline"].isin(list(_PAIRED_BASELINES))]
    pairs = pairs.assign(published=pairs["pairs"])
    if TUNED_DPSGD in set(repeats["method"]):
        try:
            tuned = _scored_vs_tuned(repeats, task, by)
        except ValueError:  # a refused RMSE release with no released βD RMSE in its cell to score it by
            tuned = pairs[pairs["baseline"] == TUNED_DPSGD].assign(note=_UNSCORED_NOTE)
        pairs = pd.concat([pairs[pairs["baseline"] != TUNED_DPSGD], tuned], ignore_index=True)
    return [(ds, g, _PAIRED_YLABEL[task]) for ds, g in pairs.groupby("dataset", sort=False)]


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


#: Figure 6's rows: (row title, method, what is drawn)
_FIGURE6_ROWS = (
    ("βD − PM", "beta-D", "gap"),
    ("Chaudhuri 1/9", "Chaudhuri 1/9", "distance"),
    ("Chaudhuri 1/(9n)", "Chaudhuri 1/(9n)", "distance"),
)
#: the order of Figure 6's data sets (simulated first, as in the paper); others after them
_FIGURE6_ORDER = {"simulated": 0, "adult": 1, "abalone": 2}


def _figure6_gap(per_repeat: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """βD minus PM on ``dataset`` per (n, epsilon), paired by repeat (the same data set), as
    J6's verdict counts it: log parameter RMSE on simulated data, test ROC-AUC on UCI data, a
    refused βD release scored by :func:`~.claims.scored` (RMSE: βD's largest on the same data
    set; AUC 0.5). Columns of :func:`~pystanprivacy.experiments.compare.paired_differences`
    plus ``published`` and ``refused_method`` (βD's released and refused releases). Where a
    refused RMSE release has no released βD RMSE in its cell to be scored by, refusals are left
    out of the pairs instead (``published`` then equals ``pairs``)."""
    from ..compare import paired_differences
    from .claims import scored

    simulated = dataset == "simulated"
    metric = "rmse" if simulated else "auc"
    rows = per_repeat[(per_repeat["dataset"] == dataset) & per_repeat["method"].isin(["beta-D", "PM (non-private)"])]
    try:
        rows = scored(rows, metric).assign(released=True)
    except ValueError:
        released = rows["released"].astype(bool)
        rows = rows.assign(score=rows[metric], refused=~released, released=released)
    cells = paired_differences(
        rows,
        "score",
        method="beta-D",
        baseline="PM (non-private)",
        groups=["dataset", "n_obs", "epsilon"],
        pairs=["repeat"],
        baseline_groups=["dataset", "n_obs"],
        transform=np.log if simulated else None,
        lower_is_better=simulated,
    )
    refused = rows[rows["method"] == "beta-D"].groupby(["n_obs", "epsilon"])["refused"].sum()
    cells = cells.drop(columns=["refused_method", "refused_baseline"]).merge(
        refused.rename("refused_method").reset_index(), on=["n_obs", "epsilon"], how="left"
    )
    return cells.assign(published=cells["pairs"] - np.where(rows["released"].all(), cells["refused_method"], 0))


def _figure6_distance(per_repeat: pd.DataFrame, method: str, dataset: str) -> pd.DataFrame:
    """The log RMS distance of ``method``'s release from its noise-free ERM on ``dataset`` per
    (n, epsilon): mean and standard error over the repeats (``mean_diff``, ``se``, ``pairs``,
    the columns :func:`~.._figures.paired_panel` draws)."""
    rows = per_repeat[(per_repeat["method"] == method) & (per_repeat["dataset"] == dataset)]
    rows = rows[rows["distance"].notna()].assign(log_distance=lambda t: np.log(t["distance"].astype(float)))
    g = rows.groupby(["n_obs", "epsilon"])["log_distance"]
    out = pd.DataFrame({"mean_diff": g.mean(), "se": g.sem(ddof=1), "pairs": g.size()}).reset_index()
    return out.assign(published=out["pairs"])


def figure6(
    summary: pd.DataFrame,
    counterparts: pd.DataFrame,
    path: str | os.PathLike | None = None,
    *,
    repeats: pd.DataFrame | None = None,
    counterpart_repeats: pd.DataFrame | None = None,
) -> Figure:
    """Figure 6's claim in the statistics J6's verdict judges it by, vs n, one curve per epsilon
    with its 95 % t-interval, one column per data set (simulated, Adult, Abalone): top, βD-Bayes
    minus the posterior mean PM paired by data set (log parameter RMSE on simulated data, test
    ROC-AUC on UCI data; a refused βD release scored as the verdict scores it, a cell with fewer
    than :data:`FEW_PAIRS` published βD releases hollow), which the paper says approaches 0;
    below, the log RMS distance of Chaudhuri et al.'s release from its noise-free regularised
    minimiser (ERM), lambda = 1/9 (said to fall with n) and lambda = 1/(9n) (said not to), on a
    shared axis per data set.

    Parameters
    ----------
    summary:
        :func:`~pystanprivacy.experiments.jewson2023.study.summarise` of the logistic table
        (used for the data sets and epsilons).
    counterparts:
        ``summarise(table, ["rmse", "auc", "csa", "distance"])`` of
        :func:`~pystanprivacy.experiments.jewson2023.counterparts.counterparts`' table.
    path:
        Where to save the PNG; also where the per-repeat tables are looked for when not given
        (``jewson2023_logistic.csv``, ``jewson2023_counterparts.csv``).
    repeats, counterpart_repeats:
        The per-repeat logistic and counterparts tables (required: given, or beside ``path``).

    References
    ----------
    .. [1] J. Jewson, S. Ghalebikesabi and C. Holmes, NeurIPS 2023, Figure 6 (App. B).
    """
    _require(summary, {"dataset", "method", "epsilon", "n_obs"}, "figure6")
    _require(counterparts, {"dataset", "method", "epsilon", "n_obs"}, "figure6")
    repeats = repeats if repeats is not None else beside(path, f"{PAPER}_logistic.csv")
    counterpart_repeats = (
        counterpart_repeats if counterpart_repeats is not None else beside(path, f"{PAPER}_counterparts.csv")
    )
    if repeats is None or counterpart_repeats is None:
        raise ValueError(
            "figure6 needs the per-repeat logistic and counterparts tables: repeats=, counterpart_repeats=, or "
            f"{PAPER}_logistic.csv and {PAPER}_counterparts.csv beside path"
        )
    _require(repeats, {"dataset", "method", "epsilon", "n_obs", "repeat", "released", "rmse", "auc"}, "figure6")
    _require(counterpart_repeats, {"dataset", "method", "epsilon", "n_obs", "repeat", "distance"}, "figure6")
    datasets = sorted(set(summary["dataset"]), key=lambda d: (_FIGURE6_ORDER.get(d, len(_FIGURE6_ORDER)), d))
    fig = Figure(figsize=(3.3 * len(datasets) + 0.4, 2.4 * len(_FIGURE6_ROWS) + 0.8), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(_FIGURE6_ROWS), len(datasets), squeeze=False)
    epsilons = sorted(e for e in set(summary["epsilon"]) if np.isfinite(e))
    cmap = matplotlib.colormaps["viridis"]
    colour = {e: cmap(k / max(len(epsilons) - 1, 1) * 0.9) for k, e in enumerate(epsilons)}
    for i, (title, method, kind) in enumerate(_FIGURE6_ROWS):
        for j, ds in enumerate(datasets):
            ax = axes[i, j]
            if kind == "gap":
                marks = [
                    paired_panel(
                        ax, g, "n_obs", colour=colour[e], label=f"ε = {e:g}", few=FEW_PAIRS, support="published"
                    )
                    for e, g in _figure6_gap(repeats, ds).groupby("epsilon")
                ]
                limit_to_reliable(ax, marks)
                what = "log RMSE(θ)" if ds == "simulated" else "test ROC-AUC"
                ax.set_title(f"{title}: {ds}, {what}", fontsize=8)
            else:
                for e, g in _figure6_distance(counterpart_repeats, method, ds).groupby("epsilon"):
                    g = g.sort_values("n_obs")
                    ax.errorbar(
                        g["n_obs"],
                        g["mean_diff"],
                        yerr=t_halfwidth(g["se"], g["pairs"]),
                        color=colour[e],
                        marker="o",
                        ms=4,
                        capsize=2,
                        lw=1,
                    )
                ax.set_title(f"{title}: {ds}, log distance from its ERM", fontsize=8)
            ax.set_xscale("log")
            ax.set_xlabel("n", fontsize=8)
            ax.tick_params(labelsize=8)
        axes[i, 0].set_ylabel(
            "βD − PM, paired\n(→ 0: βD approaches PM)"
            if kind == "gap"
            else f"{title}:\nlog RMS distance of release from ERM",
            fontsize=8,
        )
    for j in range(len(datasets)):  # the two λ on one scale per data set
        lo = min(axes[i, j].get_ylim()[0] for i in (1, 2))
        hi = max(axes[i, j].get_ylim()[1] for i in (1, 2))
        for i in (1, 2):
            axes[i, j].set_ylim(lo, hi)
    handles = [matplotlib.lines.Line2D([], [], color=colour[e], marker="o", ms=4, label=f"ε = {e:g}") for e in epsilons]
    notes = (
        f"Mean ± {INTERVAL_NOTE}. Top row paired by data set (same repeat), a refused βD release scored as the "
        f"verdict scores it\n(RMSE: βD's largest on the data set; AUC 0.5); hollow: < {FEW_PAIRS} βD releases "
        "published. Lower rows: mean over the repeats of the log distance."
    )
    fig.suptitle(notes, fontsize=8, wrap=True)
    fig.legend(handles=handles, loc="outside lower center", ncols=len(epsilons), fontsize=8)
    separate_labels(fig)
    if path is not None:
        save(fig, path)
    return fig


def _network_repeats(task: str, repeats: pd.DataFrame | None, path: str | os.PathLike | None) -> pd.DataFrame | None:
    """The per-repeat rows of part ``nn_<task>`` (with the authors'-code DP-SGD rows when
    present): ``repeats`` if given, else those of the run folder of ``path``
    (:func:`~.paired.network_table`) when its table is there."""
    if repeats is not None or path is None:
        return repeats
    if beside(path, f"{PAPER}_nn_{task}.csv") is None:
        return None
    return network_table(os.path.dirname(os.fspath(path)) or ".", task)[0]


def figure3(
    summary: pd.DataFrame, path: str | os.PathLike | None = None, *, repeats: pd.DataFrame | None = None
) -> Figure:
    """Figure 3: test log RMSE of neural-network regression vs n (top rows: the log of the mean
    test RMSE per method, as the paper plots it), and, where the per-repeat rows are at hand,
    βD minus each DP-SGD paired by data set with 95 % t-intervals (bottom rows; the verdict's
    statistic).

    Parameters
    ----------
    summary:
        :func:`~pystanprivacy.experiments.jewson2023.study.summarise` of the ``nn_regression``
        table.
    path:
        Where to save the PNG; also where the per-repeat rows are looked for when ``repeats``
        is not given (``jewson2023_nn_regression.csv`` and the authors'-code settings table
        beside it, :func:`~.paired.network_table`).
    repeats:
        The per-repeat rows (``method``, ``dataset``, ``n_obs``, ``epsilon``, ``repeat``,
        ``released``, ``test_rmse``), e.g. :func:`~.paired.network_table`'s.

    References
    ----------
    .. [1] J. Jewson, S. Ghalebikesabi and C. Holmes, "Differentially private statistical
       inference through β-divergence one posterior sampling", NeurIPS 2023, Figure 3.
    """
    _require(summary, {"dataset", "method", "epsilon", "n_obs", "test_rmse_mean"}, "figure3")
    s = summary.assign(log_test_rmse=np.log(summary["test_rmse_mean"]))
    pairs = _network_pairs("regression", _network_repeats("regression", repeats, path))
    fig = _panels(
        s, [(ds, "log_test_rmse", "test log RMSE", None) for ds in s["dataset"].unique()], "figure3", paired=pairs
    )
    if path is not None:
        save(fig, path)
    return fig


def figure9(
    summary: pd.DataFrame, path: str | os.PathLike | None = None, *, repeats: pd.DataFrame | None = None
) -> Figure:
    """Figure 9: test ROC-AUC of neural-network classification vs n (mean ± standard error),
    and βD minus each DP-SGD paired by data set with 95 % t-intervals where the per-repeat rows
    are at hand (``repeats``, or ``jewson2023_nn_classification.csv`` beside ``path``); as
    :func:`figure3`.

    References
    ----------
    .. [1] J. Jewson, S. Ghalebikesabi and C. Holmes, NeurIPS 2023, Figure 9 (App. B).
    """
    _require(summary, {"dataset", "method", "epsilon", "n_obs", "auc_mean"}, "figure9")
    pairs = _network_pairs("classification", _network_repeats("classification", repeats, path))
    fig = _panels(
        summary,
        [(ds, "auc_mean", "test ROC-AUC", "auc_se") for ds in summary["dataset"].unique()],
        "figure9",
        paired=pairs,
    )
    if path is not None:
        save(fig, path)
    return fig


def _with_tuned_means(parts: list[pd.DataFrame], rows: list, repeats: pd.DataFrame) -> tuple[list, list]:
    """Figure 10's network mean rows with the tuned DP-SGD's means (from its per-repeat rows in
    ``repeats``) added to each task that lacks them, so the mean panels show the baseline the
    network rows' verdict is paired against."""
    from .study import summarise

    out = []
    for part in parts:
        label = part["dataset"].iloc[0] if len(part) else None
        task = {"NN regression": "regression", "NN classification": "classification"}.get(label)
        tuned = repeats[(repeats["method"] == TUNED_DPSGD) & (repeats["task"] == task)] if task else None
        if tuned is not None and len(tuned) and TUNED_DPSGD not in set(part["method"]):
            means = summarise(tuned, ["test_rmse", "auc"], by=("task", "dataset", "method", "epsilon", "d"))
            if task == "regression":
                means = means.assign(log_test_rmse=np.log(means["test_rmse_mean"]))
            part = pd.concat([part, means.assign(dataset=label)], ignore_index=True)
        out.append(part)
    return out, rows


def figure10(
    summary: pd.DataFrame | None,
    path: str | os.PathLike | None = None,
    *,
    networks: pd.DataFrame | None = None,
    network_repeats: pd.DataFrame | None = None,
) -> Figure:
    """Figure 10 vs the number of features d at fixed n, one column per epsilon: the logistic
    row (log parameter RMSE per coefficient, from
    :func:`~pystanprivacy.experiments.jewson2023.study.summarise` of the features table grouped
    by d) and the network rows (test log RMSE of regression, test ROC-AUC of classification,
    from the ``nn_features`` summary grouped by task and d), whichever are given; then, where
    the network rows' per-repeat table is at hand (``network_repeats``, or
    ``jewson2023_nn_features.csv`` beside ``path``), βD minus DP-SGD paired by data set per d
    with 95 % t-intervals, one row per task.

    References
    ----------
    .. [1] J. Jewson, S. Ghalebikesabi and C. Holmes, NeurIPS 2023, Figure 10 (App. B).
    """
    parts, rows = [], []
    if summary is not None:
        _require(summary, {"dataset", "method", "epsilon", "d", "log_rmse_mean"}, "figure10")
        parts.append(summary.assign(dataset="logistic regression"))
        rows.append(("logistic regression", "log_rmse_mean", "log RMSE(θ) per coefficient", None))
    if networks is not None:
        _require(networks, {"task", "method", "epsilon", "d"}, "figure10")
        for task, label, col, ylabel, err in (
            ("regression", "NN regression", "log_test_rmse", "test log RMSE", None),
            ("classification", "NN classification", "auc_mean", "test ROC-AUC", "auc_se"),
        ):
            g = networks[networks["task"] == task]
            if len(g):
                if task == "regression":
                    g = g.assign(log_test_rmse=np.log(g["test_rmse_mean"]))
                parts.append(g.assign(dataset=label))
                rows.append((label, col, ylabel, err))
    if not parts:
        raise ValueError("figure10: give the features summary, the nn_features summary or both")
    if network_repeats is None:
        network_repeats = beside(path, f"{PAPER}_nn_features.csv")
    tuned = beside(path, f"{PAPER}_nn_features_dpsgd_tuned.csv")
    if network_repeats is not None and tuned is not None and TUNED_DPSGD not in set(network_repeats["method"]):
        network_repeats = pd.concat([network_repeats, tuned], ignore_index=True)  # the tuned DP-SGD's rows
    pairs = []
    if network_repeats is not None:
        _require(network_repeats, {"task", "method", "epsilon", "d", "repeat"}, "figure10")
        if networks is not None:
            parts, rows = _with_tuned_means(parts, rows, network_repeats)
        for task, label in (("regression", "NN regression"), ("classification", "NN classification")):
            for _, table, ylabel in _network_pairs(task, network_repeats[network_repeats["task"] == task], by="d"):
                pairs.append((label, table, ylabel))
    table = pd.concat(parts, ignore_index=True)
    fig = _panels(table, rows, "figure10", x="d", paired=pairs)
    ds = sorted(int(d) for d in table["d"].unique())
    for ax in fig.axes:
        if ax.get_title() and ax.axison and "paired" not in ax.get_title():  # paired panels: ticks with counts
            ax.minorticks_off()
            ax.set_xticks(ds, [str(d) for d in ds])
    if path is not None:
        save(fig, path)
    return fig


#: one marker per epsilon of the attack (Figures 4 and 11), in the order of the grid
_EPS_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")


def _scatter_on(ax, table: pd.DataFrame, y: str, marker: dict[float, str], counts: pd.DataFrame | None) -> int:
    """Draw on ``ax`` one curve per method of ``table`` through its epsilons (ordered), each
    epsilon its own marker; a point whose log RMSE rests on fewer released fits than attempted
    (``counts``: released ``sum`` and ``count`` by method and epsilon) hollow with k/m. Returns
    how many points were so marked."""
    marked = 0
    for method, g in table.groupby("method", sort=False):
        g = g.sort_values("epsilon")
        colour = _COLOURS.get(method, "grey")
        ax.plot(g["log_rmse"], g[y], color=colour, lw=1.2, label=method)
        for _, r in g.iterrows():
            shape = marker[float(r["epsilon"])]
            ax.plot(r["log_rmse"], r[y], ls="none", marker=shape, ms=6, color=colour)
            if counts is not None and (method, float(r["epsilon"])) in counts.index:
                c = counts.loc[(method, float(r["epsilon"]))]
                marked += mark_incomplete(
                    ax, [r["log_rmse"]], [r[y]], [c["sum"]], [c["count"]], colour=colour, marker=shape
                )
    return marked


def _scatter(
    table: pd.DataFrame,
    y: str,
    ylabel: str,
    title: str,
    rmse_repeats: pd.DataFrame | None,
    second: tuple[pd.DataFrame, str, str] | None = None,
) -> Figure:
    """One curve per method through its epsilons (ordered), each epsilon its own marker (no
    text labels that could overlap); a method's point whose log RMSE rests on fewer released
    fits than attempted hollow with k/m. ``second``: (table, its panel title, this table's
    panel title) draws that table in a second panel beside the first, on the same y axis."""
    tables = [table] if second is None else [table, second[0]]
    eps = sorted({float(e) for t in tables for e in t["epsilon"].unique()})
    if len(eps) > len(_EPS_MARKERS):
        raise ValueError(f"at most {len(_EPS_MARKERS)} epsilons can be told apart by marker, got {len(eps)}")
    marker = dict(zip(eps, _EPS_MARKERS))
    counts = None
    if rmse_repeats is not None:
        _require(rmse_repeats, {"method", "epsilon", "released"}, "the RMSE repeats")
        counts = rmse_repeats.groupby(["method", "epsilon"])["released"].agg(["sum", "count"])
    fig = Figure(figsize=(6.4 * len(tables), 5.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(tables), sharey=True, squeeze=False)[0]
    titles = [title] if second is None else [f"{title}\n{second[2]}", f"{title}\n{second[1]}"]
    marked = 0
    for ax, t, panel_title in zip(axes, tables, titles):
        marked += _scatter_on(ax, t, y, marker, counts)
        ax.set_xlabel("log RMSE(θ), n = 1000, d = 2 (simulated)")
        ax.set_title(panel_title, fontsize=9)
    ax = axes[0]
    for e in eps:
        ax.plot([], [], ls="none", marker=marker[e], color="grey", label=f"ε = {e:g}")
    if marked:
        incomplete_legend(ax, "hollow: log RMSE over k/m released fits")
    ax.set_ylabel(ylabel)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=4, fontsize=8)
    separate_labels(fig)
    return fig


def figure4(
    table: pd.DataFrame, path: str | os.PathLike | None = None, *, rmse_repeats: pd.DataFrame | None = None
) -> Figure:
    """Figure 4: membership-inference success rate vs log RMSE, one curve per method through
    its epsilons (each epsilon a marker). ``rmse_repeats``: the per-repeat RMSE rows
    (``jewson2023_attack_rmse.csv``, read from beside ``path`` when not given), to mark the
    points whose RMSE rests on fewer released fits than attempted.

    References
    ----------
    .. [1] J. Jewson, S. Ghalebikesabi and C. Holmes, NeurIPS 2023, Figure 4.
    """
    _require(table, {"method", "epsilon", "success", "log_rmse"}, "figure4")
    if rmse_repeats is None:
        rmse_repeats = beside(path, f"{PAPER}_attack_rmse.csv")
    fig = _scatter(
        table,
        "success",
        "attack success rate",
        "Bayes-optimal membership inference:\nD = {(1, 1), (0, 0)} vs D′ = {(−1, 1), (0, 0)}",
        rmse_repeats,
    )
    if path is not None:
        save(fig, path)
    return fig


#: the attack table at the paper's 10,000 rounds in all, looked for beside Figure 11's PNG
PAPER_ROUNDS_CSV = f"{PAPER}_attack_paper_rounds.csv"


def _rounds_title(table: pd.DataFrame) -> str:
    """'N outputs per data set (2N rounds in all)' from the ``rounds`` column (outputs of each
    of D and D') of an attack table; '' without one value there."""
    if "rounds" not in table or table["rounds"].nunique() != 1:
        return ""
    n = int(table["rounds"].iloc[0])
    return f"{n:,} outputs per data set ({2 * n:,} rounds in all)".replace(",", " ")


def figure11(
    table: pd.DataFrame,
    path: str | os.PathLike | None = None,
    *,
    rmse_repeats: pd.DataFrame | None = None,
    paper_rounds: pd.DataFrame | None = None,
) -> Figure:
    """Figure 11: empirical epsilon lower bound (Clopper-Pearson, 95 %) vs log RMSE, one curve
    per method through its claimed epsilons (each a marker); ``rmse_repeats`` as in
    :func:`figure4`.

    ``paper_rounds``: the same attack at the paper's 10,000 rounds in all
    (:func:`~.counterparts.attack_paper_rounds`; read from :data:`PAPER_ROUNDS_CSV` beside
    ``path`` when not given), drawn in a second panel on the same y axis; its log RMSE is the
    same per method and epsilon (the rounds do not change the estimates).

    References
    ----------
    .. [1] J. Jewson, S. Ghalebikesabi and C. Holmes, NeurIPS 2023, Figure 11 (App. B).
    """
    _require(table, {"method", "epsilon", "epsilon_lb", "log_rmse"}, "figure11")
    if rmse_repeats is None:
        rmse_repeats = beside(path, f"{PAPER}_attack_rmse.csv")
    if paper_rounds is None:
        paper_rounds = beside(path, PAPER_ROUNDS_CSV)
    second = None
    if paper_rounds is not None:
        _require(paper_rounds, {"method", "epsilon", "epsilon_lb", "log_rmse"}, "figure11's paper_rounds")
        second = (paper_rounds, "the paper's: " + _rounds_title(paper_rounds), _rounds_title(table))
    fig = _scatter(
        table,
        "epsilon_lb",
        "ε lower bound (95 %)",
        "empirical ε lower bound (markers: claimed ε)",
        rmse_repeats,
        second=second,
    )
    if path is not None:
        save(fig, path)
    return fig
