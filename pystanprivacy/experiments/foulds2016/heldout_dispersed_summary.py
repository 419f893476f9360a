"""Summaries of the F6 refit from dispersed starts (:mod:`.heldout_dispersed`): Laplace against
OPS in each fit's best mode, pooled, chain by chain, and (study version 2) on the posterior over
the modes found. Kept apart from the task module.

**Laplace − OPS on the posterior** (tables of version 2). Each fit's held-out score is an
interval that holds its posterior value over the modes found: the point ``posterior_per_entry``
(:data:`~pystanprivacy.sampling.modes.POSTERIOR_MODE_MASS`) where its mode masses are
reliable, else the range over its modes ``[modes_min, modes_max]``
(:data:`~pystanprivacy.sampling.modes.MODE_RANGE`: any weighting of the modes found lies
inside it). The difference then lies in ``[Laplace low − OPS high, Laplace high − OPS low]``
(``difference_low``, ``difference_high``), and its sign is ``beyond_doubt`` when that interval
excludes 0: e.g. Laplace is ahead on the posterior over the modes found whatever the masses
when Laplace's worst mode beats OPS's best. ``estimate`` says which: the posterior when both
fits' masses are reliable (the interval is then the point ``difference``), the range otherwise.
The same with the paper's statistic for Laplace, the log of the mean likelihood
(``logmean_difference_low``/``_high``; OPS's one released draw has one score).
Assumption of every range: the modes found carry the posterior mass.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...sampling.modes import MODE_RANGE, POSTERIOR_MODE_MASS

#: the columns of study version 2 the posterior comparison reads (absent in version-1 tables)
POSTERIOR_COLUMNS = ("posterior_per_entry", "modes_min_per_entry", "modes_max_per_entry", "masses_reliable")


def fit_interval(fit: pd.DataFrame, *, logmean: bool = False) -> tuple[float, float, bool]:
    """One fit's held-out score as an interval holding its posterior value over the modes found:
    ``(v, v, True)`` with the mode-mass weighted ``v`` where the masses are reliable, else the
    range over the modes ``(min, max, False)``. ``logmean=True``: the paper's log of the mean
    likelihood (Laplace and non-private fits)."""
    first = fit.iloc[0]
    key = "logmean_" if logmean else ""
    post = float(first[f"posterior_{key}per_entry"])
    if bool(first["masses_reliable"]) and np.isfinite(post):
        return post, post, True
    return float(first[f"modes_{key}min_per_entry"]), float(first[f"modes_{key}max_per_entry"]), False


def _posterior_columns(lap: pd.DataFrame, base: pd.DataFrame, baseline: str) -> dict[str, object]:
    """Laplace − baseline on the posterior over the modes found (module doc)."""
    l_lo, l_hi, l_post = fit_interval(lap)
    b_lo, b_hi, b_post = fit_interval(base)
    lm_lo, lm_hi, _ = fit_interval(lap, logmean=True)
    both = l_post and b_post
    low, high = l_lo - b_hi, l_hi - b_lo
    return {
        "laplace_estimate": POSTERIOR_MODE_MASS if l_post else MODE_RANGE,
        f"{baseline}_estimate": POSTERIOR_MODE_MASS if b_post else MODE_RANGE,
        "laplace_low": l_lo,
        "laplace_high": l_hi,
        f"{baseline}_low": b_lo,
        f"{baseline}_high": b_hi,
        "estimate": POSTERIOR_MODE_MASS if both else MODE_RANGE,
        "difference": low if both else np.nan,
        "difference_low": low,
        "difference_high": high,
        "beyond_doubt": bool(low > 0 or high < 0),
        "laplace_logmean_low": lm_lo,
        "laplace_logmean_high": lm_hi,
        "logmean_difference_low": lm_lo - b_hi,
        "logmean_difference_high": lm_hi - b_lo,
        "one_mode_difference": float(lap["one_mode_per_entry"].iloc[0] - base["one_mode_per_entry"].iloc[0]),
        "laplace_stacked_per_entry": float(lap["stacked_lpd_per_entry"].iloc[0]),
    }


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
    sign of the difference is the same in every pair (``holds_in_every_mode``). Tables of study
    version 2 add the comparison on the posterior over the modes found (module doc)."""
    posterior = all(c in table.columns for c in POSTERIOR_COLUMNS)
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
                **(_posterior_columns(lap, base, baseline) if posterior else {}),
            }
        )
    return pd.DataFrame(rows)


__all__ = ["POSTERIOR_COLUMNS", "fit_interval", "summarise_heldout_dispersed"]
