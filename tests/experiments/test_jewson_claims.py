"""The Jewson rows of the verdict table as code (:mod:`pystanprivacy.experiments.jewson2023.claims`).

Cells are checked against recomputations from the raw CSVs under ``results/jewson2023/``
written here independently (pivot tables, ``scipy.stats.sem``, ``numpy.interp`` where the
module merges, loops and interpolates by hand), the refusal rule on hand-made tables, and the
coverage of the verdict table's Jewson rows and of the paper's grid. Everything here is
deterministic (no sampling), so no test can fail by chance.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pystanprivacy.experiments.jewson2023 import claims as jc
from pystanprivacy.report.render import evaluate
from pystanprivacy.report.rule import VERDICTS, judge_claim

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
J = RESULTS / "jewson2023"
BY_KEY = {c.key: c for c in jc.CLAIMS}
REL = 1e-10


def _cells(key: str) -> dict[str, object]:
    return {c.label: c for p in BY_KEY[key].parts(RESULTS) for c in p.cells}


def _part(key: str, prefix: str):
    (part,) = [p for p in BY_KEY[key].parts(RESULTS) if p.text.startswith(prefix)]
    return part


# ------------------------------------------------------------------ coverage
def test_every_jewson_row_of_the_conclusions_table_is_a_claim() -> None:
    """Each Jewson row of REPRODUCTION.md's verdict table (matched by its 'paper, item' column;
    its key is the claim's or, for J10's two rows, the claim's before the '-') is one claim, in
    the table's order."""
    text = (ROOT / "REPRODUCTION.md").read_text()
    rows = re.findall(r"^\|\s*(J[0-9][A-Za-z0-9-]*)\s*\|\s*(Jewson[^|]*?)\s*\|", text, flags=re.MULTILINE)
    assert rows, "no Jewson rows found in REPRODUCTION.md's verdict table"
    keys_by_item: dict[str, set[str]] = {}
    for key, item in rows:  # an item may appear twice while a hand-written row awaits removal
        keys_by_item.setdefault(item, set()).add(key)
    assert list(keys_by_item) == [c.item for c in jc.CLAIMS]
    for claim in jc.CLAIMS:
        assert keys_by_item[claim.item] <= {claim.key, claim.key.split("-")[0]}, (claim.item, claim.key)
    assert len({c.key for c in jc.CLAIMS}) == len(jc.CLAIMS)
    assert jc.KEYS == ("J2", "J7", "J6", "J3", "J9", "J10-logistic", "J10-network", "J4", "J11")


def test_every_claim_evaluates_from_the_committed_results() -> None:
    """The report's own evaluation: tables and figure present, cells valid, number <= 40 words."""
    for claim in jc.CLAIMS:
        result = evaluate(claim, results_dir=RESULTS)
        assert result.judgement.verdict in VERDICTS
        assert result.judgement.verdict == judge_claim(result.parts).verdict
        assert claim.paper == "jewson2023"


def test_the_cells_are_the_whole_grid_of_the_tables() -> None:
    """J7 compares βD with each of the three other private methods in every (data set, n, ε) of
    the CSA tables (no subset); J2 at n = 1000 in every ε of each table."""
    paper = pd.read_csv(J / "jewson2023_logistic_paper_design.csv")
    uci = pd.read_csv(J / "jewson2023_logistic.csv").query("dataset != 'simulated'")
    grid = pd.concat([paper, uci]).query("method == 'beta-D'")[["dataset", "n_obs", "epsilon"]].drop_duplicates()
    (part,) = BY_KEY["J7"].parts(RESULTS)
    assert len(part.cells) == 3 * len(grid) == 258
    assert len({c.label for c in part.cells}) == len(part.cells)
    rmse, auc = BY_KEY["J2"].parts(RESULTS)
    assert len(rmse.cells) == 3 * paper.query("method == 'beta-D'")["epsilon"].nunique()
    assert len(auc.cells) == 3 * len(uci.query("method == 'beta-D'")[["dataset", "epsilon"]].drop_duplicates())


# ------------------------------------------------------------------ the refusal rule on hand-made tables
def _table(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["method", "dataset", "n_obs", "d", "repeat", "epsilon", "released", "m"])


def test_refused_rmse_scores_the_methods_largest_on_the_same_data_set() -> None:
    t = _table(
        [
            ("beta-D", "s", 10, 2, 0, 0.2, True, 3.0),
            ("beta-D", "s", 10, 2, 0, 1.0, True, 1.0),
            ("beta-D", "s", 10, 2, 0, 5.0, False, np.nan),  # -> 3.0, its data set's largest
            ("beta-D", "s", 10, 2, 1, 0.2, False, np.nan),  # nothing released on repeat 1 -> the cell's largest, 3.0
            ("beta-D", "s", 10, 2, 1, 1.0, False, np.nan),
            ("Minami", "s", 10, 2, 0, 1.0, True, 9.0),  # another method's value is never used
            ("beta-D", "s", 20, 2, 0, 1.0, True, 0.5),  # another n is another cell
        ]
    ).rename(columns={"m": "rmse"})
    s = jc.scored(t, "rmse")
    assert s["score"].tolist() == [3.0, 1.0, 3.0, 3.0, 3.0, 9.0, 0.5]
    assert s["refused"].tolist() == [False, False, True, True, True, False, False]


def test_refused_rmse_with_nothing_released_in_its_cell_is_an_error() -> None:
    t = _table([("beta-D", "s", 10, 2, 0, 1.0, False, np.nan), ("beta-D", "s", 20, 2, 0, 1.0, True, 1.0)])
    with pytest.raises(ValueError, match="no released rmse"):
        jc.scored(t.rename(columns={"m": "rmse"}), "rmse")


@pytest.mark.parametrize("metric", ["auc", "csa"])
def test_refused_auc_and_csa_score_one_half(metric: str) -> None:
    t = _table([("beta-D", "s", 10, 2, 0, 1.0, True, 0.9), ("beta-D", "s", 10, 2, 1, 1.0, False, np.nan)])
    s = jc.scored(t.rename(columns={"m": metric}), metric)
    assert s["score"].tolist() == [0.9, 0.5]


def test_scored_refuses_an_unknown_metric() -> None:
    t = _table([("beta-D", "s", 10, 2, 0, 1.0, True, 0.9)])
    with pytest.raises(ValueError, match="metric='m'"):
        jc.scored(t, "m")


# ------------------------------------------------------------------ cells against the raw CSVs
def test_j3_wine_cell_counts_its_refusals() -> None:
    """Wine, ε = 1, n = 100 (most βD releases refused): the paired log-RMSE difference βD − tuned
    DP-SGD with each refused release scored at βD's largest RMSE on that data set, by pivot."""
    reg = pd.read_csv(J / "jewson2023_nn_regression.csv")
    tuned = pd.read_csv(J / "jewson2023_nn_regression_dpsgd_tuned.csv")
    bd = reg[(reg["method"] == "beta-D") & (reg["dataset"] == "wine") & (reg["n_obs"] == 100)]
    wide = bd.pivot_table(index="repeat", columns="epsilon", values="test_rmse", aggfunc="first")
    worst = wide.max(axis=1)  # NaN (refused) entries are skipped by max
    at1 = bd[bd["epsilon"] == 1.0].set_index("repeat").sort_index()
    score = at1["test_rmse"].where(at1["released"], worst)
    dp = tuned.query("dataset == 'wine' and n_obs == 100 and epsilon == 1.0 and method == 'DP-SGD (tuned)'")
    diff = np.log(score) - np.log(dp.set_index("repeat")["test_rmse"].reindex(score.index))
    cell = _cells("J3")["Wine, ε = 1, n = 100"]
    assert cell.estimate == pytest.approx(diff.mean(), rel=REL)
    assert cell.se == pytest.approx(stats.sem(diff), rel=REL)
    assert cell.n == 10
    assert cell.refused == int((~at1["released"].astype(bool)).sum())
    assert cell.refused >= 5  # the case of the issue: most releases refused, and counted
    assert cell.attempts == 10
    # the refused releases make the difference larger (DP-SGD's direction) than dropping them would
    kept = diff[at1["released"].astype(bool)]
    assert cell.estimate > kept.mean()


def test_j2_auc_cell_scores_a_refused_release_at_one_half() -> None:
    """A UCI cell at n = 1000 where βD was refused: AUC βD − Chaudhuri 1/9, the refusal at 0.5."""
    t = pd.read_csv(J / "jewson2023_logistic.csv")
    big = t[(t["n_obs"] == 1000) & (t["dataset"] != "simulated")]
    refused = big[(big["method"] == "beta-D") & ~big["released"].astype(bool)]
    assert len(refused) >= 1, "the committed tables have a refused βD release at n = 1000 on UCI data"
    ds, eps = refused.iloc[0][["dataset", "epsilon"]]
    rows = big[big["epsilon"] == eps]
    rows = rows[rows["dataset"] == ds]
    wide = rows.pivot_table(index="repeat", columns="method", values="auc", aggfunc="first")
    wide["beta-D"] = wide["beta-D"].fillna(0.5)
    diff = wide["beta-D"] - wide["Chaudhuri 1/9"]
    label = f"{'Adult' if ds == 'adult' else 'abalone'}, n = 1000, ε = {eps:g}, vs Chaudhuri 1/9"
    cell = _cells("J2")[label]
    assert cell.estimate == pytest.approx(diff.mean(), rel=REL)
    assert cell.se == pytest.approx(stats.sem(diff), rel=REL)
    n_refused = int((~rows[rows["method"] == "beta-D"]["released"].astype(bool)).sum())
    assert (cell.refused, cell.attempts) == (n_refused, 10)


def test_j9_abalone_cell_is_dpsgd_minus_betad() -> None:
    """'DP-SGD better on abalone' at n = 200: tuned DP-SGD − βD AUC, paired by repeat."""
    main = pd.read_csv(J / "jewson2023_nn_classification.csv")
    tuned = pd.read_csv(J / "jewson2023_nn_classification_dpsgd_tuned.csv")
    both = pd.concat([main, tuned]).query("dataset == 'abalone' and n_obs == 200 and epsilon == 0.5")
    wide = both.pivot_table(index="repeat", columns="method", values="auc", aggfunc="first")
    diff = wide["DP-SGD (tuned)"] - wide["beta-D"].fillna(0.5)
    cell = {c.label: c for c in _part("J9", "abalone").cells}["abalone, ε = 0.5, n = 200"]
    assert cell.estimate == pytest.approx(diff.mean(), rel=REL)
    assert cell.se == pytest.approx(stats.sem(diff), rel=REL)


def test_j7_number_counts_the_highest_mean_csa_over_every_cell() -> None:
    """The number's 'highest mean CSA in k of 86', from group means (refusals at 0.5)."""
    paper = pd.read_csv(J / "jewson2023_logistic_paper_design.csv")
    uci = pd.read_csv(J / "jewson2023_logistic.csv").query("dataset != 'simulated'")
    t = pd.concat([paper, uci])
    t = t[np.isfinite(t["epsilon"]) & t["method"].isin(["beta-D", "Minami", "Chaudhuri 1/9", "Chaudhuri 1/(9n)"])]
    t = t.assign(csa=t["csa"].where(t["released"].astype(bool), 0.5))
    means = t.pivot_table(index=["dataset", "n_obs", "epsilon"], columns="method", values="csa", aggfunc="mean")
    others = means.drop(columns="beta-D").max(axis=1)
    highest = int((means["beta-D"] >= others - 1e-12).sum())
    claim = BY_KEY["J7"]
    number = claim.number(RESULTS, claim.parts(RESULTS))
    assert f"highest mean CSA (ties included) in {highest} of {len(means)}" in number
    assert len(means) == 86


def test_j6_chaudhuri_distance_cell() -> None:
    """Chaudhuri 1/9 on the simulated data at ε = 0.2: mean log distance at n = 50 − at n = 1000,
    with the SE of a difference of two independent means."""
    cp = pd.read_csv(J / "jewson2023_counterparts.csv").query("method == 'Chaudhuri 1/9' and epsilon == 0.2")
    g = np.log(cp.query("dataset == 'simulated'").set_index("n_obs")["distance"]).groupby(level=0)
    cell = {c.label: c for c in _part("J6", "Chaudhuri 1/9").cells}["simulated, ε = 0.2, n = 50 → 1000"]
    assert cell.estimate == pytest.approx(g.mean()[50] - g.mean()[1000], rel=REL)
    assert cell.se == pytest.approx(math.hypot(g.sem()[50], g.sem()[1000]), rel=REL)


def test_j4_minami_rmse_steps_and_betad_beyond_seven() -> None:
    """The parts show what the issue names: Minami's RMSE does not fall (no step beyond 2 SE)
    and neither does βD's beyond ε = 7; one step recomputed by pivot."""
    rm = pd.read_csv(J / "jewson2023_attack_rmse.csv").query("method == 'beta-D'")
    wide = rm.pivot_table(index="repeat", columns="epsilon", values="rmse", aggfunc="first")
    wide = wide.apply(lambda row: row.fillna(row.max()), axis=1)  # a refusal at its data set's largest
    step = np.log(wide[7.0]) - np.log(wide[10.0])
    cells = {c.label: c for c in _part("J4", "βD's RMSE").cells}
    assert cells["βD, ε = 7 → 10"].estimate == pytest.approx(step.mean(), rel=REL)
    assert cells["βD, ε = 7 → 10"].se == pytest.approx(stats.sem(step), rel=REL)
    assert all(cells[k].z < 2 for k in ("βD, ε = 7 → 10", "βD, ε = 10 → 20"))
    assert all(c.z < 2 for c in _part("J4", "Minami's RMSE").cells)


def test_j11_bound_is_interpolated_at_chaudhuris_rmse() -> None:
    """Chaudhuri 1/9 at ε = 20: its bound − βD's bound at the same log RMSE, βD's curve (ε in
    order) interpolated by numpy on the first segment that reaches that RMSE."""
    t = pd.read_csv(J / "jewson2023_attack_paper_rounds.csv")
    bd = t[t["method"] == "beta-D"].sort_values("epsilon")
    ch = t[(t["method"] == "Chaudhuri 1/9") & (t["epsilon"] == 20.0)].iloc[0]
    r, b = bd["log_rmse"].to_numpy(), bd["epsilon_lb"].to_numpy()
    k = next(i for i in range(len(r) - 1) if min(r[i], r[i + 1]) <= ch["log_rmse"] <= max(r[i], r[i + 1]))
    order = np.argsort(r[k : k + 2])
    at = np.interp(ch["log_rmse"], r[k : k + 2][order], b[k : k + 2][order])
    (cell,) = [c for c in _part("J11", "βD's empirical").cells if c.label.startswith("Chaudhuri 1/9, ε = 20 ")]
    assert cell.estimate == pytest.approx(ch["epsilon_lb"] - at, rel=REL)
