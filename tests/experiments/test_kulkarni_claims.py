"""The Kulkarni rows of the verdict table as code (:mod:`pystanprivacy.experiments.kulkarni2022.claims`).

Cells are checked against recomputations from the raw files under ``results/kulkarni2022/``
written here independently: coverages and KS tests from the saved task files read by the
runner's own reader (``saved_results``) with the KS p-value from the exact Kolmogorov
distribution (``scipy.stats.kstwo``), paired differences by ``pivot_table`` / ``merge`` and
``scipy.stats.sem``, the predicting-0 RMSE from the Wine split rebuilt from the shipped data.
The grid of every part is counted from the sidecars. Everything is deterministic (no
sampling), so no test can fail by chance.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pystanprivacy.experiments.kulkarni2022 import claims as kc
from pystanprivacy.report.claims import all_claims
from pystanprivacy.report.rule import NOT_TESTABLE, judge_claim

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
K = RESULTS / "kulkarni2022"
BY_KEY = {c.key: c for c in kc.CLAIMS}
REL = 1e-9

#: the Kulkarni rows of REPRODUCTION.md's verdict table, in its order
KULKARNI_ROWS = ("K1", "K10", "K11", "K2", "K3", "K9", "K4", "K5", "K6")


def _cells(key: str) -> dict[str, object]:
    return {c.label: c for p in BY_KEY[key].parts(RESULTS) for c in p.cells}


def _sidecar(name: str) -> dict:
    return json.loads((K / f"{name}.json").read_text(encoding="utf-8"))["args"]


def test_every_kulkarni_row_is_a_claim_in_table_order():
    assert tuple(c.key for c in kc.CLAIMS) == KULKARNI_ROWS
    assert tuple(c.key for c in all_claims(papers=("kulkarni2022",))) == KULKARNI_ROWS
    for claim in kc.CLAIMS:
        assert claim.paper == "kulkarni2022"
        for path in (*claim.tables, claim.figure):
            assert (RESULTS / path).is_file(), (claim.key, path)


@pytest.mark.parametrize("key", KULKARNI_ROWS)
def test_each_claim_is_judged_fast_with_a_short_number(key):
    claim = BY_KEY[key]
    start = time.perf_counter()
    parts = claim.parts(RESULTS)
    text = claim.number(RESULTS, parts)
    assert time.perf_counter() - start < 5.0
    assert 0 < len(text.split()) <= 40
    assert judge_claim(parts).verdict != NOT_TESTABLE  # every row has a testable part


def test_the_calibration_grids_are_every_epsilon_parameter_and_level():
    args = _sidecar("kulkarni2022_calibration_summary")
    for key, model, n_params in (
        ("K1", "gaussian", 2),
        ("K10", "histogram", args["histogram"]["d"]),
        ("K11", "exponential", 1),
    ):
        (part,) = BY_KEY[key].parts(RESULTS)
        n_eps = len(args[model]["epsilons"])
        assert len(part.cells) == n_eps * n_params * (len(kc.LEVELS) + 1)  # 4 coverages and a KS test each
        assert sum(c.p_value is not None for c in part.cells) == n_eps * n_params
        runs = {c.n for c in part.cells}
        assert runs == {args[model]["repeats"]}


def test_calibration_cells_against_the_task_files():
    """Gaussian σ at ε = 1: coverage of the 90 % interval and the KS test of the 500 quantiles,
    recomputed from the task files through the runner's reader and the exact KS distribution."""
    from pystanprivacy.run.runner import saved_results

    runs = saved_results(K / ".tasks", "calibration gaussian eps=1.0 ")
    sigma = runs[runs["parameter"] == "sigma"]
    assert len(sigma) == 500
    cells = _cells("K1")
    cov = cells["σ, ε = 1, 90 % coverage"]
    assert cov.estimate + 0.9 == pytest.approx(sigma["covered_90"].mean(), rel=REL)
    assert cov.se == pytest.approx(math.sqrt(0.9 * 0.1 / 500), rel=REL)
    u = np.sort(sigma["quantile"].to_numpy())
    n = u.size
    d = max((np.arange(1, n + 1) / n - u).max(), (u - np.arange(n) / n).max())
    ks = cells["σ, ε = 1, KS"]
    assert ks.estimate == pytest.approx(d, rel=REL)
    assert ks.p_value == pytest.approx(stats.kstwo.sf(d, n), rel=1e-6)


def test_kosarak_claim_is_on_the_real_prefix_and_its_cells_recompute():
    meta = _sidecar("kulkarni2022_kosarak")
    assert BY_KEY["K2"].data == meta["data_note"] == kc.KOSARAK_DATA
    assert meta["data"] == "real" and meta["prefix"] is True and meta["transactions"] == 36_683
    table = pd.read_csv(K / "kulkarni2022_kosarak.csv")
    wide = table.pivot_table(index=["dimension", "repeat"], columns="epsilon", values="ecdf_l1")
    lo, hi = wide.columns.min(), wide.columns.max()
    cells = _cells("K2")
    assert len(cells) == 10
    for dim in (0, 7):
        a, b = wide.xs(dim, level="dimension")[lo], wide.xs(dim, level="dimension")[hi]
        assert len(a) == len(b) == 50
        cell = cells[f"item {dim}: ε = {lo:g} − ε = {hi:g}"]
        assert cell.estimate == pytest.approx(a.mean() - b.mean(), rel=REL)
        assert cell.se == pytest.approx(math.hypot(stats.sem(a), stats.sem(b)), rel=REL)
    (untestable,) = [p for p in BY_KEY["K2"].parts(RESULTS) if p.untestable]
    assert "close" in untestable.text


@pytest.mark.parametrize("key, epsilons", [("K3", (0.5,)), ("K9", (0.1, 1.0, 2.0))])
def test_histogram_rmse_cells_are_paired_by_release(key, epsilons):
    table = pd.read_csv(K / "kulkarni2022_histogram_rmse.csv")
    ns = sorted(table["n_users"].unique())
    rmse_part, bad_part = BY_KEY[key].parts(RESULTS)
    assert len(rmse_part.cells) == len(bad_part.cells) == len(epsilons) * len(ns)
    eps, n = epsilons[0], ns[0]
    g = table[(table["epsilon"] == eps) & (table["n_users"] == n)]
    wide = g.pivot_table(index="repeat", columns="method", values=["rmse", "bad"])
    diff = wide["rmse"]["projected OUE estimate"] - wide["rmse"]["posterior mean"]
    cell = {c.label: c for c in rmse_part.cells}[f"ε = {eps:g}, N = {n}"]
    assert cell.estimate == pytest.approx(diff.mean(), rel=REL)
    assert cell.se == pytest.approx(stats.sem(diff), rel=REL) and cell.n == 50
    bad = wide["bad"]["projected OUE estimate"].astype(float) - wide["bad"]["posterior mean"].astype(float)
    cell = {c.label: c for c in bad_part.cells}[f"ε = {eps:g}, N = {n}"]
    assert cell.estimate == pytest.approx(bad.mean(), rel=REL, abs=1e-12)


def test_wine_cells_against_a_merge_of_the_raw_tables():
    run = pd.read_csv(K / "kulkarni2022_regression_figure4.csv")
    tuned = pd.read_csv(K / "kulkarni2022_figure4_ldp_sgd_tuned.csv")
    ss = run[run["method"] == "ss"][["epsilon", "repeat", "rmse"]]
    sgd = tuned[tuned["method"] == "ldp-sgd-tuned"][["epsilon", "repeat", "rmse"]]
    both = ss.merge(sgd, on=["epsilon", "repeat"], suffixes=("_ss", "_tuned"))
    cells = _cells("K4")
    assert len(cells) == 2 * len(kc.SMALL_EPSILON_FIG4) + 2 * len(kc.LARGE_EPSILON_FIG4)
    at = both[both["epsilon"] == 0.5]
    cell = cells["ε = 0.5, LDP-SGD tuned non-privately − SS"]
    assert cell.estimate == pytest.approx((at["rmse_tuned"] - at["rmse_ss"]).mean(), rel=REL)
    assert cell.se == pytest.approx(stats.sem(at["rmse_tuned"] - at["rmse_ss"]), rel=REL) and cell.n == 30
    plain = run[run["method"] == "ldp-sgd"][["epsilon", "repeat", "rmse"]].merge(ss, on=["epsilon", "repeat"])
    at = plain[plain["epsilon"] == 16]
    cell = cells["ε = 16, SS − LDP-SGD"]
    assert cell.estimate == pytest.approx((at["rmse_y"] - at["rmse_x"]).mean(), rel=REL)


def test_predicting_zero_is_the_committed_split_rebuilt_from_the_data():
    """K4's reference line: the test RMSE of predicting 0 on the committed run's split, read from
    the sweep's table, equals the one computed from the Wine split rebuilt here."""
    from pystanprivacy.experiments.kulkarni2022.data import regression_data

    args = _sidecar("kulkarni2022_regression_figure4")
    pre = args["preprocessing"]
    data = regression_data(args["data"], args["data_dir"], d=int(pre["d"]), seed=args["seed"], R_y=2.0)
    assert data.info["n_test"] == pre["n_test"] and data.info["n_train"] == pre["n_train"]
    assert kc._predicting_zero(RESULTS) == pytest.approx(float(np.sqrt(np.mean(data.y_test**2))), rel=1e-9)
    assert kc._predicting_zero(RESULTS) == pytest.approx(0.8734, abs=5e-5)  # REPRODUCTION.md's 0.873


def test_adult_cells_against_a_merge_of_the_raw_tables():
    run = pd.read_csv(K / "kulkarni2022_regression_figure5.csv")
    tuned = pd.read_csv(K / "kulkarni2022_figure5_ldp_sgd_tuned.csv")
    parts = BY_KEY["K5"].parts(RESULTS)
    small, level, inputs = parts
    assert len(small.cells) == 3 * len(kc.SMALL_EPSILON_FIG5) and len(level.cells) == 3 * len(kc.LARGE_EPSILON_FIG5)
    assert len(inputs.cells) == len(_sidecar("kulkarni2022_regression_figure5")["epsilons"])
    ss = run[run["method"] == "ss"][["epsilon", "repeat", "auc"]]
    allrows = tuned[(tuned["method"] == "ldp-sgd-tuned") & (tuned["users"] == "all training")]
    at = ss.merge(allrows[["epsilon", "repeat", "auc"]], on=["epsilon", "repeat"], suffixes=("_ss", "_t"))
    at = at[at["epsilon"] == 8]
    cell = {c.label: c for c in level.cells}["ε = 8, SS − LDP-SGD tuned all rows"]
    assert cell.estimate == pytest.approx((at["auc_ss"] - at["auc_t"]).mean(), rel=REL, abs=1e-12)
    assert cell.se == pytest.approx(stats.sem(at["auc_ss"] - at["auc_t"]), rel=REL)
    inp = run[run["method"] == "inputs"][["epsilon", "repeat", "auc"]].merge(ss, on=["epsilon", "repeat"])
    at = inp[inp["epsilon"] == 0.25]
    cell = {c.label: c for c in inputs.cells}["ε = 0.25, SS − inputs"]
    assert cell.estimate == pytest.approx((at["auc_y"] - at["auc_x"]).mean(), rel=REL)


def test_chebyshev_cells_against_the_committed_summary():
    summary = pd.read_csv(K / "kulkarni2022_chebyshev_summary.csv")
    summary = summary[summary["radius"] == 3.0].set_index("d")
    cells = {c.label: c for c in BY_KEY["K6"].parts(RESULTS)[0].cells}
    assert len(cells) == len(summary)
    for d, row in summary.iterrows():
        cell = cells[f"d = {d}"]
        assert cell.estimate == pytest.approx(kc.CHEBYSHEV_TOLERANCE - row["abs_diff_mean"], rel=REL)
        assert cell.se == pytest.approx(row["abs_diff_sd"] / math.sqrt(row["runs"]), rel=REL)


def test_a_paired_cell_refuses_sides_that_do_not_pair():
    a = pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2])
    with pytest.raises(ValueError, match="paired sides differ"):
        kc._paired(a, pd.Series([1.0, 2.0], index=[0, 1]))
    with pytest.raises(ValueError, match="paired sides differ"):
        kc._paired(a, pd.Series([1.0, 2.0, 3.0], index=[0, 0, 1]))
    m, se, n = kc._paired(a, pd.Series([0.0, 0.0, 0.0], index=[2, 1, 0]))  # paired by index, not position
    assert (m, n) == (2.0, 3) and se == pytest.approx(1 / math.sqrt(3))
