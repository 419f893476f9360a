"""Bernstein & Sheldon (2018)'s claims about Figure 1, judged by :mod:`pystanprivacy.report.rule`.

Every cell is read from the committed tables under ``results/bernstein2018/``:

* ``bernstein2018_calibration_summary.csv``: per setting (model, n, ε) and method, the KS
  statistic of the 500 posterior quantiles ``u`` against Uniform(0, 1) and its p-value;
* every trial (the quantile ``u``, the MMD² to the non-private posterior ``mmd2``; the methods
  of one trial share its data and release): the rows of ``bernstein2018_calibration.csv``, read
  from the committed task results ``.tasks/`` (that 9.3 MB table is not committed; its sidecar
  ``bernstein2018_calibration.json`` is, with its row count);
* ``bernstein2018_exponential_modes.{csv,json}`` (part ``exponential_modes``,
  :mod:`pystanprivacy.experiments.bernstein2018.exponential_modes`): the exponential posterior on
  the authors' driver problem (their data code: n = 1000, ε = 0.1, bounds at the 2.5 % and 97.5 %
  quantiles of Exp(θ)), computed on a θ grid by quadrature and compared with each sampler, and the
  calibration of the library's Gibbs sampler at those bounds (200 trials, the sidecar's
  ``extra.calibration_fixed_bounds``). Rows of the authors' own Gibbs code (``authors' Gibbs``)
  count beside the library's where the table has them.

The grid of cells is the study's full grid (3 models × n ∈ {10, 100, 1000, 10⁴} × ε ∈
{0.01, 0.1}); "the largest n and ε" is its last point, n = 10⁴ with ε = 0.1. Nothing is
released and refused here, so no cell carries refusals.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from pystanprivacy.report.claims import Claim
from pystanprivacy.report.rule import AGREEMENT, DIRECTION, NO_WORSE, Cell, Part, judge_part
from pystanprivacy.run.runner import saved_results

__all__ = ["CLAIMS"]

_DIR = "bernstein2018"
_SUMMARY = f"{_DIR}/bernstein2018_calibration_summary.csv"
_TRIALS = f"{_DIR}/bernstein2018_calibration.json"  # the sidecar of the per-trial table
_TASKS = f"{_DIR}/.tasks"
_MODES = f"{_DIR}/bernstein2018_exponential_modes.csv"
_MODES_JSON = f"{_DIR}/bernstein2018_exponential_modes.json"

GIBBS = "noise-aware (Gibbs)"
NAIVE = "naive"
OPS = "OPS"
NON_PRIVATE = "non-private"
#: the study's largest n and ε: where the paper says naive becomes calibrated
LARGEST = (10_000, 0.1)
#: Figure 1b's setting
FIG1B = (1000, 0.01)
#: "tails": u < 0.05 or u > 0.95 (0.10 if calibrated); "middle": 0.25 <= u <= 0.75 (0.50)
TAIL, MIDDLE = 0.05, (0.25, 0.75)


def _floor(x: float, digits: int = 2) -> str:
    """``x`` rounded down to ``digits`` significant digits (a lower bound stays a lower bound)."""
    if x <= 0:
        return f"{x:.{digits}g}"
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    return f"{math.floor(x * scale) / scale:.{digits}g}"


def _ceil(x: float, decimals: int = 3) -> str:
    """``x`` rounded up to ``decimals`` decimals (an upper bound stays an upper bound)."""
    scale = 10.0**decimals
    return f"{math.ceil(x * scale) / scale:.{decimals}f}"


def _label(row: pd.Series | tuple, method: str | None = None) -> str:
    model, n, eps = (row["model"], row["n"], row["epsilon"]) if isinstance(row, pd.Series) else row
    text = f"{model}, n = {int(n)}, ε = {float(eps):g}"
    return f"{method}: {text}" if method else text


def _summary(results: Path) -> pd.DataFrame:
    table = pd.read_csv(results / _SUMMARY)
    return table.sort_values(["model", "n", "epsilon", "method"], kind="stable").reset_index(drop=True)


def _ks_cells(table: pd.DataFrame, method: str, *, prefix: bool = False) -> tuple[Cell, ...]:
    """One cell per setting: estimate = the KS statistic, p_value = its p-value."""
    rows = table[table["method"] == method]
    if rows.empty:
        raise ValueError(f"{_SUMMARY}: no rows of method {method!r}")
    return tuple(
        Cell(
            label=_label(r, method if prefix else None),
            estimate=float(r["ks"]),
            p_value=float(r["pvalue"]),
            n=int(r["trials"]),
        )
        for _, r in rows.iterrows()
    )


def _is_largest(table: pd.DataFrame) -> pd.Series:
    return (table["n"] == LARGEST[0]) & np.isclose(table["epsilon"], LARGEST[1])


def _trials(results: Path) -> pd.DataFrame:
    """The per-trial table, from the committed task results; every trial of every setting and
    method exactly once, and as many rows as the table's sidecar records."""
    table = saved_results(results / _TASKS)
    expected = json.loads((results / _TRIALS).read_text(encoding="utf-8"))["rows"]
    if len(table) != expected:
        raise ValueError(f"{_TASKS}: {len(table)} task rows, the sidecar {_TRIALS} records {expected}")
    keys = ["model", "n", "epsilon", "method", "trial"]
    if table.duplicated(keys).any():
        raise ValueError(f"{_TASKS}: a trial appears twice (a stale task file beside its rerun?)")
    return table[[*keys, "u", "mmd2"]]


def _driver_modes(results: Path) -> pd.DataFrame:
    modes = pd.read_csv(results / _MODES)
    return modes[modes["problem"] == "driver"]


def _fixed_bounds(results: Path) -> dict:
    return json.loads((results / _MODES_JSON).read_text(encoding="utf-8"))["extra"]["calibration_fixed_bounds"]


# ---------------------------------------------------------------------------------------- B1a


def _b1a_parts(results: Path) -> tuple[Part, ...]:
    table = _summary(results)
    largest = _is_largest(table)
    fixed = _fixed_bounds(results)
    gibbs = fixed["library Gibbs"]
    driver = Cell(
        label=f"{GIBBS}: authors' driver problem, n = {fixed['n']}, ε = {fixed['epsilon']:g}, bounds from θ",
        estimate=float(gibbs["ks"]),
        p_value=float(gibbs["pvalue"]),
        n=int(fixed["trials"]),
    )
    return (
        Part(text="Gibbs calibrated in every setting of Figure 1a", kind=AGREEMENT, cells=_ks_cells(table, GIBBS)),
        Part(text="Gibbs calibrated on the authors' driver problem", kind=AGREEMENT, cells=(driver,)),
        Part(
            text="naive miscalibrated below the largest n and ε",
            kind=DIRECTION,
            cells=_ks_cells(table[~largest], NAIVE),
        ),
        Part(text="naive calibrated at the largest n and ε", kind=AGREEMENT, cells=_ks_cells(table[largest], NAIVE)),
        Part(text="OPS never calibrated", kind=DIRECTION, cells=_ks_cells(table, OPS)),
    )


def _b1a_number(results: Path, parts: tuple[Part, ...]) -> str:
    gibbs, driver, _, naive_large, ops = parts
    fixed = _fixed_bounds(results)
    modes = _driver_modes(results)
    grid = modes[modes["method"] == "grid"].set_index("seed")["minor_mass"]
    heavy = grid[grid > 0.05]  # the seeds whose posterior has a second mode of real mass
    gibbs_rows = modes[modes["method"].isin(["library Gibbs", "authors' Gibbs"]) & modes["seed"].isin(heavy.index)]
    who = "Gibbs, their code too," if (gibbs_rows["method"] == "authors' Gibbs").any() else "Gibbs"
    min_p = min(c.p_value for c in gibbs.cells)
    naive_ok = len(naive_large.cells) - judge_part(naive_large).n_depart
    ops_off = judge_part(ops).n_support
    return (
        f"Gibbs KS p ≥ {_floor(min_p)}; authors' driver: {who} misses a "
        f"{heavy.min() * 100:.0f}–{heavy.max() * 100:.0f}% mode ({len(heavy)} of {len(grid)} seeds; share "
        f"≤ {_ceil(gibbs_rows['minor_mass'].max())}), KS {driver.cells[0].estimate:.3f} > {fixed['ks_critical_1pct']:.3f} (1%); "
        f"naive calibrated {naive_ok} of {len(naive_large.cells)} at largest n, ε, OPS {len(ops.cells) - ops_off} of "
        f"{len(ops.cells)}"
    )


# ---------------------------------------------------------------------------------------- B1b


def _b1b_parts(results: Path) -> tuple[Part, ...]:
    trials = _trials(results)
    at = trials[(trials["n"] == FIG1B[0]) & np.isclose(trials["epsilon"], FIG1B[1])]

    def share_cells(method: str, inside, stated: float) -> tuple[Cell, ...]:
        cells = []
        for model, rows in at[at["method"] == method].groupby("model", sort=True):
            u = rows["u"].to_numpy(dtype=float)
            if np.isnan(u).any():
                raise ValueError(f"{_TRIALS}: {method}, {model}: a trial without its quantile u")
            share = float(np.mean(inside(u)))
            cells.append(
                Cell(
                    label=_label((model, *FIG1B), method),
                    estimate=share - stated,
                    se=float(np.sqrt(stated * (1.0 - stated) / u.size)),  # the share's SE if calibrated
                    n=int(u.size),
                )
            )
        if not cells:
            raise ValueError(f"{_TRIALS}: no trials of {method!r} at n = {FIG1B[0]}, ε = {FIG1B[1]}")
        return tuple(cells)

    summary = _summary(results)
    fig1b = summary[(summary["n"] == FIG1B[0]) & np.isclose(summary["epsilon"], FIG1B[1])]
    return (
        Part(
            text="naive: too many quantiles in the outer 10 %",
            kind=DIRECTION,
            cells=share_cells(NAIVE, lambda u: (u < TAIL) | (u > 1.0 - TAIL), 2 * TAIL),
        ),
        Part(
            text="OPS: too many quantiles in the middle half",
            kind=DIRECTION,
            cells=share_cells(OPS, lambda u: (u >= MIDDLE[0]) & (u <= MIDDLE[1]), MIDDLE[1] - MIDDLE[0]),
        ),
        Part(
            text="Gibbs and non-private calibrated",
            kind=AGREEMENT,
            cells=_ks_cells(fig1b, GIBBS, prefix=True) + _ks_cells(fig1b, NON_PRIVATE, prefix=True),
        ),
    )


def _b1b_number(results: Path, parts: tuple[Part, ...]) -> str:
    naive, ops, calibrated = parts
    tails = [c.estimate + 2 * TAIL for c in naive.cells]
    middle = [c.estimate + (MIDDLE[1] - MIDDLE[0]) for c in ops.cells]
    return (
        f"n = 1000, ε = 0.01: naive {min(tails):.0%}–{max(tails):.0%} of quantiles in the outer 10 % (10 % if "
        f"calibrated); OPS {max(middle):.0%} in the middle half (50 %); Gibbs, non-private KS p ≥ "
        f"{_floor(min(c.p_value for c in calibrated.cells))}"
    )


# ---------------------------------------------------------------------------------------- B1c


def _b1c_parts(results: Path) -> tuple[Part, ...]:
    trials = _trials(results)
    keys = ["model", "n", "epsilon", "trial"]
    naive = trials[trials["method"] == NAIVE].set_index(keys)["mmd2"]
    gibbs = trials[trials["method"] == GIBBS].set_index(keys)["mmd2"]
    paired = pd.concat({"naive": naive, "gibbs": gibbs}, axis=1, join="inner").dropna()
    paired = paired[paired.index.get_level_values("model").isin(["binomial", "multinomial"])]
    cells = []
    for (model, n, eps), rows in paired.groupby(level=["model", "n", "epsilon"], sort=True):
        diff = (rows["naive"] - rows["gibbs"]).to_numpy(dtype=float)  # > 0: Gibbs closer to non-private
        cells.append(
            Cell(
                label=_label((model, n, eps)),
                estimate=float(diff.mean()),
                se=float(diff.std(ddof=1) / np.sqrt(diff.size)),
                n=int(diff.size),
            )
        )
    return (Part(text="Gibbs MMD² to non-private at most naive's", kind=NO_WORSE, cells=tuple(cells)),)


def _b1c_number(results: Path, parts: tuple[Part, ...]) -> str:
    (part,) = parts
    summary = pd.read_csv(results / f"{_DIR}/bernstein2018_mmd_summary.csv")
    pick = summary[(summary["model"] == "binomial") & (summary["n"] == 100) & np.isclose(summary["epsilon"], 0.01)]
    mean = pick.set_index("method")["mmd2_mean"]
    z = [c.estimate / c.se for c in part.cells]
    return (
        f"Gibbs lower beyond 2 SE in {sum(x >= 2 for x in z)} of {len(z)} settings, higher in "
        f"{sum(x <= -2 for x in z)}; binomial n = 100, ε = 0.01: naive {mean[NAIVE]:.3f}, Gibbs {mean[GIBBS]:.4f}"
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        key="B1a",
        paper="bernstein2018",
        item="Bernstein, Fig. 1a",
        claim="noise-aware (Gibbs) as calibrated as non-private in all settings; naive only with increasing n and ε; OPS not calibrated",
        where="Sec. 4, Fig. 1a",
        statistic=(
            "KS test of the 500 posterior quantiles against Uniform(0, 1) per setting (3 models × 4 n × 2 ε); "
            "the authors' driver problem: 200 trials at the bounds of their data code"
        ),
        tables=(_SUMMARY, _MODES, _MODES_JSON),
        figure=f"{_DIR}/bernstein2018_figure1a.png",
        parts=_b1a_parts,
        number=_b1a_number,
    ),
    Claim(
        key="B1b",
        paper="bernstein2018",
        item="Bernstein, Fig. 1b",
        claim="naive puts too much quantile mass near 0 and 1, OPS near the middle; noise-aware and non-private calibrated",
        where="Sec. 4, Fig. 1b",
        statistic=(
            "share of the 500 posterior quantiles in the outer 10 % (naive) or the middle half (OPS) minus its "
            "calibrated value, SE under calibration; KS p-values (Gibbs, non-private); n = 1000, ε = 0.01"
        ),
        tables=(_TRIALS, _SUMMARY),
        figure=f"{_DIR}/bernstein2018_figure1b.png",
        parts=_b1b_parts,
        number=_b1b_number,
    ),
    Claim(
        key="B1c",
        paper="bernstein2018",
        item="Bernstein, Fig. 1c",
        claim="noise-aware utility (MMD² to non-private) at least as good as naive for binomial and multinomial models",
        where="Sec. 4, Fig. 1c",
        statistic="paired difference of MMD² to the non-private posterior, naive − Gibbs, 500 trials per setting (2 models × 4 n × 2 ε)",
        tables=(_TRIALS, f"{_DIR}/bernstein2018_mmd_summary.csv"),
        figure=f"{_DIR}/bernstein2018_figure1c.png",
        parts=_b1c_parts,
        number=_b1c_number,
    ),
)
