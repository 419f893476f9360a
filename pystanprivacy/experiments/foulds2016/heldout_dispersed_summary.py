"""Summaries of the F6 refit from dispersed starts (:mod:`.heldout_dispersed`): Laplace against
OPS in each fit's best mode, pooled, and chain by chain. Kept apart from the task module, whose
source is part of every saved task's key."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _best_mode(fit: pd.DataFrame) -> pd.DataFrame:
    """The chains of one fit in its mode of highest mean training log-likelihood."""
    best = fit.groupby("mode")["mean_log_lik"].mean().idxmax()
    return fit.loc[fit["mode"] == best]


def summarise_heldout_dispersed(table: pd.DataFrame, *, baseline: str = "ops") -> pd.DataFrame:
    """Laplace − ``baseline`` per data set, split and ε: the difference between the two fits' best
    modes (each fit's chains in its mode of highest mean log-likelihood), the pooled difference
    (chain means averaged with equal weights, what a pooled fit reports), every Laplace chain
    against the baseline's best mode (``laplace_chains_min``/``_max``) and the Laplace best mode
    against every baseline chain (``<baseline>_chains_min``/``_max``), the smallest and largest difference
    over every pair of (Laplace chain, baseline chain), the modes each found, and whether the
    sign of the difference is the same in every pair (``holds_in_every_mode``)."""
    rows = []
    for (dataset, split, eps), part in table.groupby(["dataset", "split", "epsilon"], sort=True):
        lap = part.loc[part["method"] == "laplace"]
        base = part.loc[part["method"] == baseline]
        if lap.empty or base.empty:
            continue
        diffs = lap["heldout_per_entry"].to_numpy()[:, None] - base["heldout_per_entry"].to_numpy()[None, :]
        lo, hi = float(diffs.min()), float(diffs.max())
        lap_best, base_best = _best_mode(lap), _best_mode(base)
        # every Laplace chain against the baseline's best mode, and the other way round
        lap_vs = lap["heldout_per_entry"].to_numpy() - base_best["heldout_per_entry"].mean()
        vs_base = lap_best["heldout_per_entry"].mean() - base["heldout_per_entry"].to_numpy()
        rows.append(
            {
                "dataset": dataset,
                "split": int(split),
                "epsilon": float(eps),
                "laplace_modes": int(lap["n_modes"].iloc[0]),
                f"{baseline}_modes": int(base["n_modes"].iloc[0]),
                "laplace_rhat_log_lik": float(lap["rhat_log_lik"].iloc[0]),
                f"{baseline}_rhat_log_lik": float(base["rhat_log_lik"].iloc[0]),
                "laplace_best_mode_chains": len(lap_best),
                f"{baseline}_best_mode_chains": len(base_best),
                "best_mode_difference": float(
                    lap_best["heldout_per_entry"].mean() - base_best["heldout_per_entry"].mean()
                ),
                "pooled_difference": float(lap["heldout_per_entry"].mean() - base["heldout_per_entry"].mean()),
                "laplace_chains_min": float(lap_vs.min()),
                "laplace_chains_max": float(lap_vs.max()),
                f"{baseline}_chains_min": float(vs_base.min()),
                f"{baseline}_chains_max": float(vs_base.max()),
                "min_difference": lo,
                "max_difference": hi,
                "holds_in_every_mode": bool(lo > 0 or hi < 0),
                "laplace_chain_spread": float(np.ptp(lap["heldout_per_entry"])),
                f"{baseline}_chain_spread": float(np.ptp(base["heldout_per_entry"])),
            }
        )
    return pd.DataFrame(rows)


__all__ = ["summarise_heldout_dispersed"]
