"""The Foulds rows of the verdict table as code (:mod:`pystanprivacy.experiments.foulds2016.claims`).

Cells are checked against recomputations from the raw CSVs written here independently (other
pandas operations, brute force where the module uses a closed form or an assignment solver), on
the committed ``results/`` and on copies whose Afghanistan rows are relabelled as the real diary
(so the real-diary branch, which the committed tables do not reach yet, is exercised too).
Everything here is deterministic except the bootstrap check, whose tolerance is stated there.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from pystanprivacy.experiments.foulds2016 import claims as fc
from pystanprivacy.report.rule import NOT_TESTABLE, judge_claim, judge_part

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
F = RESULTS / "foulds2016"
BY_KEY = {c.key: c for c in fc.CLAIMS}


def _cells(key: str, results: Path = RESULTS) -> dict[str, object]:
    return {c.label: c for p in BY_KEY[key].parts(results) for c in p.cells}


def _part(key: str, prefix: str, results: Path = RESULTS):
    (part,) = [p for p in BY_KEY[key].parts(results) if p.text.startswith(prefix)]
    return part


# ------------------------------------------------------------------ coverage
def test_every_foulds_row_of_the_conclusions_table_is_a_claim() -> None:
    """The verdict table's Foulds rows (key column, then 'Foulds, …'), wherever the table sits."""
    text = (ROOT / "REPRODUCTION.md").read_text()
    rows = {m.group(1) for m in re.finditer(r"^\|\s*(F[0-9][A-Za-z0-9-]*)\s*\|\s*Foulds", text, flags=re.MULTILINE)}
    assert rows, "no Foulds rows found in REPRODUCTION.md's verdict table"
    assert {c.key for c in fc.CLAIMS} == rows
    assert [c.key for c in fc.CLAIMS] == sorted(rows, key=lambda k: int(k[1:]))


def test_every_claim_judges_and_its_number_fits_the_column() -> None:
    for claim in fc.CLAIMS:
        parts = claim.parts(RESULTS)
        judge_claim(parts)  # raises on a malformed cell
        number = claim.number(RESULTS, parts)
        assert 0 < len(number.split()) <= 40, (claim.key, number)
        for rel in claim.tables:
            assert (RESULTS / rel).is_file(), rel
        assert claim.figure is None or (RESULTS / claim.figure).is_file(), claim.figure
    for key in ("F5", "F6", "F7", "F8"):
        assert BY_KEY[key].data == fc.DATA_LINE
    for key in ("F1", "F2", "F3", "F4"):
        assert BY_KEY[key].data == ""


# ------------------------------------------------------------------ F1-F4 against the raw tables
def test_f2_cells_score_refusals_by_a_prior_draw() -> None:
    summary = pd.read_csv(F / "foulds2016_figure2_summary.csv")
    p, a0 = 0.1, 0.05  # the sidecar's args, also the paper's
    # |U - p| for U uniform on [a0, 1 - a0], by quadrature instead of the closed form
    width = 1 - 2 * a0
    mean_u = integrate.quad(lambda u: abs(u - p) / width, a0, 1 - a0, points=[p])[0]
    second_u = integrate.quad(lambda u: (u - p) ** 2 / width, a0, 1 - a0)[0]
    assert fc.ops_refusal_score(p=p, a0=a0) == pytest.approx((mean_u, second_u - mean_u**2), rel=1e-9)

    ops = summary.query("method == 'ops' and n_obs == 10").iloc[0]
    lap = summary.query("method == 'laplace' and n_obs == 10").iloc[0]
    attempts = ops.n_released + ops.n_refused
    ops_mean = (ops.mean_abs_error * ops.n_released + mean_u * ops.n_refused) / attempts
    ops_se = math.sqrt(
        (ops.se_abs_error * ops.n_released / attempts) ** 2 + ops.n_refused * (second_u - mean_u**2) / attempts**2
    )
    cell = _cells("F2")["N = 10, laplace − ops"]
    assert cell.estimate == pytest.approx(lap.mean_abs_error - ops_mean, rel=1e-12)
    assert cell.se == pytest.approx(math.sqrt(lap.se_abs_error**2 + ops_se**2), rel=1e-12)
    assert (cell.refused, cell.attempts) == (3, 1000)
    # the grid: one cell at N = 10, one per larger N, one per N below the largest
    parts = BY_KEY["F2"].parts(RESULTS)
    assert [len(p.cells) for p in parts] == [1, 5, 5]
    big = _cells("F2")["log(Laplace / non-private error), N = 2500 − N = 10000"]
    r = summary.set_index(["method", "n_obs"])["mean_abs_error"]
    assert big.estimate == pytest.approx(
        np.log(r["laplace", 2500] / r["non-private", 2500]) - np.log(r["laplace", 10000] / r["non-private", 10000]),
        rel=1e-12,  # Laplace and non-private have no refusals: the summary's means as they are
    )


def test_f3_cells_from_the_raw_draws() -> None:
    raw = pd.read_csv(F / "foulds2016_theorems.csv")
    cells = _cells("F3")
    for method, theory_of in (
        ("non-private", lambda r: 2 * 0.3 * 0.7),
        ("laplace", lambda r: 2 * 0.3 * 0.7),
        ("ops", lambda r: (1 + r.temperature.dropna().iloc[0]) * 0.3 * 0.7),
    ):
        rows = raw.loc[(raw["method"] == method) & raw["released"].astype(bool)]
        scaled = rows["n_obs"] * (rows["draw"] - rows["p_true"]) ** 2
        (cell,) = [c for label, c in cells.items() if label.startswith(f"{method}:")]
        assert cell.estimate == pytest.approx(scaled.mean() - theory_of(raw[raw["method"] == method]), abs=1e-9)
        assert cell.se == pytest.approx(scaled.std(ddof=1) / math.sqrt(len(scaled)), rel=1e-6)
        refused = int((~raw.loc[raw["method"] == method, "released"].astype(bool)).sum())
        assert cell.refused == refused
    assert judge_part(BY_KEY["F3"].parts(RESULTS)[0]).n_depart == 0


def test_f4_cells_are_the_exact_local_epsilon_steps() -> None:
    raw = pd.read_csv(F / "foulds2016_adversarial.csv")
    eps = dict(zip(raw["n_obs"], raw["local_epsilon"], strict=True))
    (part,) = BY_KEY["F4"].parts(RESULTS)
    assert [c.estimate for c in part.cells] == pytest.approx(
        [eps[10] - eps[1], eps[100] - eps[10], eps[1000] - eps[100], eps[5000] - eps[1000]]
    )
    assert all(c.se == 0.0 for c in part.cells)


def test_f1_cells_from_the_raw_densities() -> None:
    raw = pd.read_csv(F / "foulds2016_figure1.csv")
    ops = raw[raw["curve"] == "ops"]
    npv = raw[raw["curve"] == "non-private"]
    sd = {
        name: math.sqrt(np.cov(c["p"], aweights=c["density_stan"], ddof=0))
        for name, c in (("ops", ops), ("non-private", npv))
    }
    cells = _cells("F1")
    assert cells["posterior sd, OPS − non-private"].estimate == pytest.approx(sd["ops"] - sd["non-private"], rel=1e-9)
    outside = ops.loc[~ops["p"].between(0.2, 0.8), "density_stan"]
    assert cells["OPS, Stan draws' mass outside [0.2, 0.8]"].estimate == pytest.approx(outside.sum() * 0.005, abs=1e-12)
    means = raw[raw["curve"] == "laplace"].drop_duplicates("replicate")["draws_mean"]
    (scatter,) = [c for label, c in cells.items() if label.startswith("sd of the 30 Laplace")]
    assert scatter.estimate == pytest.approx(means.std() - sd["non-private"] / math.sqrt(4 * 2500), rel=1e-9)


# ------------------------------------------------------------------ F5-F8, committed (synthetic Afghanistan)
def test_afghanistan_parts_are_judged_only_on_real_diary_rows() -> None:
    """Whatever the committed tables hold: an Afghanistan part has cells only where its table has
    rows labelled 'afghanistan' whose sidecar says they are the real diary, and otherwise says
    what the table holds (today: the synthetic Afghanistan logs)."""
    for key in ("F5", "F6", "F7", "F8"):
        claim = BY_KEY[key]
        (rel,) = claim.tables
        table = pd.read_csv(RESULTS / rel)
        side = json.loads((RESULTS / rel).with_suffix(".json").read_text())
        real = (side["args"].get("data") or {}).get("afghanistan", {}).get("data") == "real"
        real &= bool((table["dataset"] == "afghanistan").any())
        for part in claim.parts(RESULTS):
            if not part.text.startswith("Afghanistan"):
                continue
            if real:
                assert part.cells or "incomplete" in (part.untestable or ""), (key, part.text)
            else:
                assert part.untestable is not None and judge_part(part).verdict == NOT_TESTABLE, (key, part.text)
                held = sorted(set(table["dataset"]) - {"synthetic iraq"})
                assert all(f"'{x}'" in part.untestable for x in held), (key, part.untestable)


def test_f6_iraq_hmm_cell_from_the_raw_table() -> None:
    raw = pd.read_csv(F / "foulds2016_hmm_heldout.csv")
    iraq = raw[(raw["dataset"] == "synthetic iraq") & (raw["model"] == "HMM (K=10)") & (raw["epsilon"] == 1.0)]
    lap = iraq[iraq["method"] == "laplace"][["split", "heldout_loglik_per_entry"]]
    ops = iraq[(iraq["method"] == "ops") & (iraq["multiplier"] == 10.0)][["split", "heldout_loglik_per_entry"]]
    pair = lap.merge(ops, on="split", suffixes=("_l", "_o"))
    d = pair["heldout_loglik_per_entry_l"] - pair["heldout_loglik_per_entry_o"]
    cell = _cells("F6")["Iraq, HMM (K=10), ε = 1, M = 10"]
    assert len(pair) == 10 and cell.n == 10
    assert cell.estimate == pytest.approx(d.mean(), rel=1e-12)
    assert cell.se == pytest.approx(d.sem(), rel=1e-12)
    assert len(_part("F6", "Iraq naive Bayes").cells) == len(_part("F6", "Iraq HMM").cells) == 14


def test_f5_and_f7_iraq_cells_from_the_raw_tables() -> None:
    states = pd.read_csv(F / "foulds2016_hmm_states.csv")
    fit = states[(states["part"] == "cell") & (states["dataset"] == "synthetic iraq") & (states["method"] == "laplace")]
    est, true = fit["state"].to_numpy(int), fit["true_state"].to_numpy(int)
    labels = sorted(set(est) | set(true))
    best = max(
        np.mean(np.vectorize(dict(zip(labels, perm, strict=True)).get)(est) == true)
        for perm in itertools.permutations(labels)
    )
    base = pd.Series(true).value_counts(normalize=True).max()
    (cell,) = _part("F5", "Iraq").cells
    assert cell.estimate == pytest.approx(best - base, abs=1e-12)
    assert cell.se == pytest.approx(math.sqrt(base * (1 - base) / len(true)), rel=1e-12)

    ops = pd.read_csv(F / "foulds2016_hmm_ops_states.csv")
    s = ops[(ops["part"] == "score") & (ops["dataset"] == "synthetic iraq")]
    a = s[s["estimate"] == "last 100"][["repeat", "chain", "agreement"]]
    b = s[s["estimate"] == "last one"][["repeat", "chain", "agreement"]]
    d = a.merge(b, on=["repeat", "chain"]).eval("agreement_x - agreement_y")
    (cell,) = _part("F7", "Iraq").cells
    assert (cell.n, cell.estimate, cell.se) == (len(d), pytest.approx(d.mean()), pytest.approx(d.sem()))


def test_f8_iraq_is_not_testable_on_a_two_state_generator() -> None:
    (iraq,) = [p for p in BY_KEY["F8"].parts(RESULTS) if p.text.startswith("Iraq")]
    assert iraq.untestable and "2 true states" in iraq.untestable


# ------------------------------------------------------------------ the real-diary branch
def _as_diary(tmp_path: Path, rel: str, *, provenance: bool = True, edit=None) -> Path:
    """A results folder whose ``rel`` has its synthetic Afghanistan rows (if any are left) relabelled
    as the diary, and a sidecar that says the diary (``provenance``) or says nothing of its data."""
    src, dst = F / rel, tmp_path / "foulds2016" / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    table = pd.read_csv(src)
    table.loc[table["dataset"] == "synthetic afghanistan", "dataset"] = "afghanistan"
    if edit is not None:
        table = edit(table)
    table.to_csv(dst, index=False)
    side = json.loads(src.with_suffix(".json").read_text())
    if provenance:
        side["args"]["data"] = {"afghanistan": {"data": "real", "file": "afg_war_diary.csv.gz", "sha256": "0" * 64}}
    else:  # a sidecar that does not say which data its rows came from
        side["args"].pop("data", None)
    dst.with_suffix(".json").write_text(json.dumps(side))
    return tmp_path


def test_relabelled_rows_without_the_sidecars_word_are_not_the_diary(tmp_path: Path) -> None:
    results = _as_diary(tmp_path, "foulds2016_hmm_occupancy.csv", provenance=False)
    part = _part("F8", "Afghanistan: the private", results)
    assert part.untestable and "does not say" in part.untestable


def test_f5_on_the_diary_compares_with_the_non_private_states(tmp_path: Path) -> None:
    results = _as_diary(tmp_path, "foulds2016_hmm_states.csv")
    (cell,) = _part("F5", "Afghanistan", results).cells
    raw = pd.read_csv(results / "foulds2016" / "foulds2016_hmm_states.csv")
    cells = raw[(raw["part"] == "cell") & (raw["dataset"] == "afghanistan")]
    lap = cells[cells["method"] == "laplace"].sort_values(["region", "month"])["state"].to_numpy(int)
    ref = cells[cells["method"] == "non-private"].sort_values(["region", "month"])["state"].to_numpy(int)
    best = max(np.mean(np.array(perm)[lap - 1] == ref - 1) for perm in itertools.permutations(range(3)))
    base = np.bincount(ref).max() / len(ref)
    assert cell.estimate == pytest.approx(best - base, abs=1e-12)


def test_f5_on_the_diary_waits_for_every_fit(tmp_path: Path) -> None:
    def drop(t: pd.DataFrame) -> pd.DataFrame:
        return t[~((t["dataset"] == "afghanistan") & (t["method"] == "laplace"))]

    results = _as_diary(tmp_path, "foulds2016_hmm_states.csv", edit=drop)
    part = _part("F5", "Afghanistan", results)
    assert part.untestable == "real-diary fits incomplete: no laplace fit yet"


def test_f6_on_the_diary_needs_the_whole_grid(tmp_path: Path) -> None:
    results = _as_diary(tmp_path, "foulds2016_hmm_heldout.csv")
    parts = {p.text: p for p in BY_KEY["F6"].parts(results)}
    nb = parts["Afghanistan naive Bayes: Laplace > OPS"]
    hmm = parts["Afghanistan HMM: OPS competitive with Laplace"]
    assert len(nb.cells) == len(hmm.cells) == 14
    # 'competitive' judged 'no worse': OPS − Laplace paired by split, from the raw table
    raw = pd.read_csv(results / "foulds2016" / "foulds2016_hmm_heldout.csv")
    sub = raw[(raw["dataset"] == "afghanistan") & (raw["model"] == "HMM (K=10)") & (raw["epsilon"] == 0.2)]
    lap = sub[sub["method"] == "laplace"].set_index("split")["heldout_loglik_per_entry"]
    ops = sub[(sub["method"] == "ops") & (sub["multiplier"] == 100.0)].set_index("split")["heldout_loglik_per_entry"]
    d = (ops - lap).dropna()
    cell = {c.label: c for c in hmm.cells}["Afghanistan, HMM (K=10), ε = 0.2, M = 100"]
    assert (cell.estimate, cell.se) == (pytest.approx(d.mean(), rel=1e-12), pytest.approx(d.sem(), rel=1e-12))
    assert hmm.kind == "no worse"

    def drop(t: pd.DataFrame) -> pd.DataFrame:
        gone = (t["dataset"] == "afghanistan") & (t["model"] == "naive Bayes") & (t["method"] == "ops")
        gone &= (t["epsilon"] == 2.0) & (t["multiplier"] == 100.0) & (t["split"] == 3)
        return t[~gone]

    partial = _as_diary(tmp_path / "partial", "foulds2016_hmm_heldout.csv", edit=drop)
    nb = _part("F6", "Afghanistan naive Bayes", partial)
    assert nb.untestable and "13 of 14 cells have all 10 splits (ε = 2, M = 100 (9 of 10 splits))" in nb.untestable


def test_f7_on_the_diary_scores_state_switches(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)

    def add_switches(t: pd.DataFrame) -> pd.DataFrame:
        t = t.copy()
        t["switches"] = np.where(t["part"] == "score", rng.integers(0, 60, size=len(t)), np.nan)
        return t

    results = _as_diary(tmp_path, "foulds2016_hmm_ops_states.csv", edit=add_switches)
    raw = pd.read_csv(results / "foulds2016" / "foulds2016_hmm_ops_states.csv")
    s = raw[(raw["part"] == "score") & (raw["dataset"] == "afghanistan")]
    one = s[s["estimate"] == "last one"][["repeat", "chain", "switches"]]
    hundred = s[s["estimate"] == "last 100"][["repeat", "chain", "switches"]]
    d = one.merge(hundred, on=["repeat", "chain"]).eval("switches_x - switches_y")
    (cell,) = _part("F7", "Afghanistan", results).cells
    assert (cell.n, cell.estimate, cell.se) == (40, pytest.approx(d.mean()), pytest.approx(d.sem()))


def test_f8_on_the_diary_counts_states(tmp_path: Path) -> None:
    results = _as_diary(tmp_path, "foulds2016_hmm_occupancy.csv")
    raw = pd.read_csv(results / "foulds2016" / "foulds2016_hmm_occupancy.csv")
    afg = raw[raw["dataset"] == "afghanistan"]
    count = {m: int((g["entries"] / g["entries"].sum() >= 0.05).sum()) for m, g in afg.groupby("method")}
    fewer = _part("F8", "Afghanistan: the private", results)
    assert [c.estimate for c in fewer.cells] == [
        count["non-private"] - count["laplace"],
        count["non-private"] - count["ops"],
    ]
    values = _part("F8", "Afghanistan: private HMMs use", results)
    assert values.cells[-1].estimate == count["non-private"] - 10
    assert judge_claim(BY_KEY["F8"].parts(results)).verdict != NOT_TESTABLE
    assert "Afghanistan, states" in BY_KEY["F8"].number(results, BY_KEY["F8"].parts(results))


def test_occupancy_bootstrap_matches_a_cell_level_resampling() -> None:
    """The module's multinomial bootstrap against resampling an explicit list of region/month
    cells. Both SEs have Monte-Carlo error of about 1.5 % (4000 replicates each); the 10 %
    tolerance is over 4.5 of their combined sds, so a false failure has probability < 1e-5."""
    cells = np.array([100, 80, 60, 40, 20, 18, 15, 12, 10, 5])
    size = np.array([30.0, 25, 20, 18, 16, 15, 14, 13, 12, 11])
    entries = cells * size
    count, se = fc.occupancy_count_se(cells, entries)
    assert count == int((entries / entries.sum() >= 0.05).sum())
    state_of_cell = np.repeat(np.arange(len(cells)), cells)
    rng = np.random.default_rng(123)
    counts = []
    for _ in range(4000):
        picked = rng.choice(state_of_cell, size=len(state_of_cell), replace=True)
        ent = np.bincount(picked, minlength=len(cells)) * size
        counts.append(int((ent / ent.sum() >= 0.05).sum()))
    assert se > 0.2
    assert se == pytest.approx(np.std(counts, ddof=1), rel=0.10)


# ------------------------------------------------------------------ the dispersed refits (secondary lines)
def test_the_dispersed_checks_are_pending_on_tables_without_mode_masses(tmp_path: Path) -> None:
    """A refit of study version 1 (no mode-mass columns) or no refit at all is named pending; a
    secondary line never decides a verdict."""
    for key in ("F5", "F6", "F8"):
        assert "pending: no " in BY_KEY[key].secondary(tmp_path), key
    v1 = pd.DataFrame({"dataset": ["synthetic afghanistan"], "method": ["laplace"], "mode": [1]})
    for key, rel in (("F5", fc.DISPERSED_STATES), ("F6", fc.HELDOUT_DISPERSED), ("F8", fc.DISPERSED_OCCUPANCY)):
        text = BY_KEY[key].secondary(_write_summary(tmp_path, rel, v1, real=False))
        assert "pending" in text and "study version 1" in text, (key, text)


def _write_summary(tmp_path: Path, rel: str, table: pd.DataFrame, *, real: bool = True) -> Path:
    dst = tmp_path / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(dst, index=False)
    data = {"afghanistan": {"data": "real", "file": "afg_war_diary.csv.gz", "sha256": "0" * 64}} if real else {}
    dst.with_suffix(".json").write_text(json.dumps({"args": {"data": data}}))
    return tmp_path


def test_f6_secondary_reports_the_diary_refit_by_estimate(tmp_path: Path) -> None:
    """Two diary fit pairs by hand: Laplace − OPS in [+0.02, +0.10] (posterior for Laplace, OPS's
    range) and in [−0.04, +0.03] (both ranges): the line gives −0.040 to +0.100, Laplace ahead
    whatever the masses in 1, behind in 0, 0 pairs with both posteriors, the paper's log-mean
    statistic −0.010 to +0.130; the Iraq row is left out."""
    rows = pd.DataFrame(
        {
            "dataset": ["afghanistan", "afghanistan", "synthetic iraq"],
            "split": [0, 1, 0],
            "epsilon": [1.0, 1.0, 1.0],
            "estimate": ["range over the modes found"] * 3,
            "difference_low": [0.02, -0.04, -9.0],
            "difference_high": [0.10, 0.03, 9.0],
            "logmean_difference_low": [0.05, -0.01, -9.0],
            "logmean_difference_high": [0.13, 0.06, 9.0],
            "one_mode_difference": [0.07, -0.01, 9.0],
            "laplace_stacked_per_entry": [-5.0, -6.0, 0.0],
            "ops_low": [-5.10, -6.05, 0.0],
            "ops_high": [-5.02, -5.99, 0.0],
        }
    )
    results = _write_summary(tmp_path, fc.HELDOUT_DISPERSED, rows)
    text = BY_KEY["F6"].secondary(results)
    assert "(2 of 9 fit pairs)" in text
    assert "posterior (mode-mass weighted) in 0, else the range over the modes found) between −0.040 and +0.100" in text
    assert "ahead whatever the masses in 1, behind in 0" in text
    assert "for Laplace −0.010 to +0.130" in text and "'one mode' (each fit's best mode) −0.010 to +0.070" in text
    # Laplace's stacked predictive − OPS's best-scoring mode: -5.0 - -5.02 and -6.0 - -5.99
    assert "'stacked predictive' − OPS's best-scoring mode −0.010 to +0.020" in text
    # the same table without the diary's provenance is pending
    assert "pending" in BY_KEY["F6"].secondary(
        _write_summary(tmp_path / "synthetic", fc.HELDOUT_DISPERSED, rows, real=False)
    )


def test_f5_and_f8_secondary_report_each_method_by_estimate(tmp_path: Path) -> None:
    base = {"dataset": "afghanistan", "n_modes": 2, "reference": "non-private fit's best chain"}
    states = pd.DataFrame(
        [
            {**base, "method": "laplace", "agreement_posterior": 0.8375, "agreement_low": 0.5, "agreement_high": 0.875},
            {**base, "method": "ops", "agreement_posterior": np.nan, "agreement_low": 0.61, "agreement_high": 0.74},
        ]
    )
    text = BY_KEY["F5"].secondary(_write_summary(tmp_path, fc.DISPERSED_STATES, states))
    assert (
        "Laplace 2 mode(s), agreement vs the non-private fit's best chain 0.838 (posterior (mode-mass weighted))"
        in text
    )
    assert (
        "OPS 2 mode(s), agreement vs the non-private fit's best chain 0.610–0.740 (range over the modes found)" in text
    )
    occ = pd.DataFrame(
        [
            {
                **base,
                "n_modes": 1,
                "method": "ops",
                "substantial_posterior": 3.0,
                "substantial_low": 3.0,
                "substantial_high": 3.0,
            }
        ]
    )
    text = BY_KEY["F8"].secondary(_write_summary(tmp_path, fc.DISPERSED_OCCUPANCY, occ))
    assert "OPS 1 mode(s), states ≥ 5 % 3.0 (one mode found)" in text
