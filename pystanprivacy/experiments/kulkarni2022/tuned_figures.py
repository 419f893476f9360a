"""Figures 4 and 5 of Kulkarni et al. (2022) with LDP-SGD tuned non-privately on a validation
split (:mod:`pystanprivacy.experiments.kulkarni2022.ldp_sgd_tuning`), drawn as K4 and K5's
verdicts judge them: the means per epsilon, and SS minus each LDP-SGD paired by repeat (the same
train/test split) with a zero line (matplotlib on an Agg canvas; never pyplot).

References
----------
.. [1] T. Kulkarni, J. Jälkö, A. Koskela, S. Kaski and A. Honkela (2021), "Differentially
   private Bayesian inference for generalized linear models", ICML. Figures 4 and 5.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .._figures import new_grid, require, save

__all__ = ["tuned_comparison", "untuned_pairs"]

#: the colour of each tuned user set, and of the committed run's methods
_USERS = {"all training": "tab:green", "10K subsample": "tab:red"}
_SS, _UNTUNED = "tab:blue", "tab:orange"
_METRIC = {"rmse": ("test RMSE", "< 0: SS better"), "auc": ("test ROC-AUC", "> 0: SS better")}


def untuned_pairs(committed: pd.DataFrame, metric: str, *, baseline: str = "ldp-sgd") -> pd.DataFrame:
    """SS minus ``baseline`` (the untuned LDP-SGD, or the inputs model) of the committed run
    (``kulkarni2022_regression_figureN.csv``) per epsilon, paired by repeat (the same split):
    columns ``epsilon``, ``pairs``, ``mean_diff``, ``se``
    (:func:`~pystanprivacy.experiments.compare.paired_differences`)."""
    from ..compare import paired_differences

    require(committed, {"method", "epsilon", "repeat", metric}, "untuned_pairs")
    private = committed[np.isfinite(committed["epsilon"].astype(float))]
    return paired_differences(
        private,
        metric,
        method="ss",
        baseline=baseline,
        groups=["epsilon"],
        pairs=["repeat"],
        lower_is_better=metric == "rmse",
    )


def tuned_comparison(
    summary: pd.DataFrame,
    committed_summary: pd.DataFrame,
    metric: str,
    title: str,
    path: str | os.PathLike | None = None,
    *,
    committed: pd.DataFrame | None = None,
    references: Mapping[str, float] | None = None,
) -> Figure:
    """K4 (``metric="rmse"``) or K5 (``"auc"``): left, the test metric per epsilon (mean ± 2
    standard errors over the repeats) of SS and the untuned LDP-SGD (the committed run), the
    LDP-SGD tuned non-privately for each set of tuning users, the non-private fit (dashed) and
    each of ``references`` (dotted, e.g. predicting 0); right, SS minus each LDP-SGD paired by
    repeat with ± 2 standard errors and a line at zero: the statistic the verdicts rest on.

    Parameters
    ----------
    summary:
        The tuned study's summary (``kulkarni2022_figureN_ldp_sgd_tuned_summary.csv``: ``users``,
        ``epsilon``, ``repeats``, ``tuned_mean``, ``tuned_se``, ``ss_minus_tuned``,
        ``ss_minus_tuned_se``).
    committed_summary:
        The committed run's summary (``method``, ``epsilon``, ``<metric>_mean``, ``<metric>_sd``,
        ``repeats``).
    metric:
        ``"rmse"`` or ``"auc"``.
    title:
        The left panel's title.
    path:
        Where to save the PNG.
    committed:
        The committed run's per-repeat rows; when given, SS minus its untuned LDP-SGD (and minus
        its inputs model, where it has one) is paired too (:func:`untuned_pairs`).
    references:
        Horizontal reference lines of the left panel, label -> value.
    """
    if metric not in _METRIC:
        raise ValueError(f"metric must be one of {sorted(_METRIC)}, got {metric!r}")
    require(
        summary,
        {"users", "epsilon", "repeats", "tuned_mean", "tuned_se", "ss_minus_tuned", "ss_minus_tuned_se"},
        "tuned_comparison",
    )
    require(committed_summary, {"method", "epsilon", f"{metric}_mean", f"{metric}_sd", "repeats"}, "tuned_comparison")
    references = dict(references or {})
    if not all(isinstance(k, str) and isinstance(v, (int, float)) and math.isfinite(v) for k, v in references.items()):
        raise ValueError(f"references must map str labels to finite numbers, got {references!r}")
    name, better = _METRIC[metric]
    fig, axes = new_grid(1, 2, panel_width=4.4, panel_height=4.4)
    means, diffs = axes[0]
    series = []
    for method, label, colour in (
        ("ss", "SS (noise-aware Bayes)", _SS),
        ("inputs", "inputs model (noise-aware Bayes)", "tab:brown"),
        ("ldp-sgd", "LDP-SGD, untuned", _UNTUNED),
    ):
        g = committed_summary[committed_summary["method"] == method].sort_values("epsilon")
        if g.empty:
            continue
        series.append((g["epsilon"], g[f"{metric}_mean"], g[f"{metric}_sd"] / np.sqrt(g["repeats"]), label, colour))
    for users, g in summary.groupby("users", sort=False):
        g = g.sort_values("epsilon")
        series.append(
            (
                g["epsilon"],
                g["tuned_mean"],
                g["tuned_se"],
                f"LDP-SGD, tuned non-privately ({users})",
                _USERS.get(users, "tab:purple"),
            )
        )
    for k, (eps, mean, se, label, colour) in enumerate(series):
        shift = 1.0 + 0.03 * (k - (len(series) - 1) / 2)
        means.errorbar(eps * shift, mean, yerr=2 * se, color=colour, marker="o", ms=3.5, capsize=2, lw=1.1, label=label)
    nonpriv = committed_summary[committed_summary["method"] == "non-private"]
    if len(nonpriv):
        means.axhline(float(nonpriv[f"{metric}_mean"].iloc[0]), color="black", ls="--", lw=1, label="non-private")
    for label, value in references.items():
        means.axhline(value, color="dimgray", ls=":", lw=1.4, label=f"{label}: {value:.3f}")
    means.set_ylabel(f"{name} (mean ± 2 SE)", fontsize=9)
    means.set_title(title, fontsize=9)

    pairs = []
    if committed is not None:
        u = untuned_pairs(committed, metric)
        pairs.append((u["epsilon"], u["mean_diff"], u["se"], "SS − LDP-SGD, untuned", _UNTUNED))
        if (committed["method"] == "inputs").any():
            u = untuned_pairs(committed, metric, baseline="inputs")
            pairs.append((u["epsilon"], u["mean_diff"], u["se"], "SS − inputs model", "tab:brown"))
    for users, g in summary.groupby("users", sort=False):
        g = g.sort_values("epsilon")
        pairs.append(
            (
                g["epsilon"],
                g["ss_minus_tuned"],
                g["ss_minus_tuned_se"],
                f"SS − LDP-SGD tuned non-privately ({users})",
                _USERS.get(users, "tab:purple"),
            )
        )
    diffs.axhline(0.0, color="black", lw=0.9)
    for k, (eps, mean, se, label, colour) in enumerate(pairs):
        shift = 1.0 + 0.03 * (k - (len(pairs) - 1) / 2)
        diffs.errorbar(
            np.asarray(eps, dtype=float) * shift,
            mean,
            yerr=2 * np.asarray(se, dtype=float),
            color=colour,
            marker="o",
            ms=3.5,
            capsize=2,
            lw=1.1,
            label=label,
        )
    diffs.set_ylabel(f"SS − the other method, {name}\n({better}), ± 2 SE", fontsize=9)
    diffs.set_title("SS − each other method, paired by repeat (the same split)", fontsize=9)
    eps = sorted(set(summary["epsilon"]) | set(committed_summary.loc[committed_summary["method"] == "ss", "epsilon"]))
    for ax in (means, diffs):
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(eps, [f"{e:g}" for e in eps])
        ax.set_xlabel("ε", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    handles, labels = [], []
    for ax in (means, diffs):
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.append(h)
            labels.append(label)
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=8)
    if path is not None:
        save(fig, path)
    return fig
