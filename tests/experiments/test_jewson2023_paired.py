"""Jewson et al.'s network parts compared data set by data set (:mod:`...jewson2023.paired` and
``scripts/jewson2023_paired.py``), on saved task files and tables written here by the runner:
no Stan fit, exact values."""
from __future__ import annotations

import json
import math
import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.jewson2023 import study
from pystanprivacy.experiments.jewson2023.paired import markdown_grid, network_comparisons, network_table
from pystanprivacy.run.runner import Task, run_context, run_tasks

SHIFT = {0: 1.0, 1: 4.0, 2: 9.0}  # each repeat's data set scales every method's RMSE alike
FACTOR = {"beta-D": {0.5: 3.0, 5.0: 0.5}, "DP-SGD": {0.5: 1.5, 5.0: 2.0}}


def fake_network_task(*, task: str, dataset: str, n_obs: int, d: int, repeat: int, refuse: bool = False,
                      seed) -> pd.DataFrame:
    """The rows of one network task (as ``networks.neural_task`` makes them) with known RMSEs."""
    metric = "test_rmse" if task == "regression" else "auc"
    rows = [dict(task=task, dataset=dataset, n_obs=n_obs, d=d, repeat=repeat, method="PM (non-private)",
                 epsilon=math.inf, released=True, **{metric: SHIFT[repeat] if task == "regression" else 0.9})]
    for method, by_eps in FACTOR.items():
        for eps, f in by_eps.items():
            ok = not (refuse and method == "beta-D" and eps == 5.0)
            value = SHIFT[repeat] * f if task == "regression" else 0.9 - 0.1 * f + 0.01 * repeat
            rows.append(dict(task=task, dataset=dataset, n_obs=n_obs, d=d, repeat=repeat, method=method, epsilon=eps,
                             released=ok, **({metric: value} if ok else {})))
    return pd.DataFrame(rows)


def _run(out: Path, task: str = "regression", *, features: bool = False) -> None:
    """Save the tasks of a part in progress (two n for simulated, one for wine) the way the
    study does: one labelled task per data set; ``features`` adds nn_features-like tasks."""
    specs = [("simulated", n, 2, r) for n in (100, 1000) for r in range(3)] + [("wine", 100, 11, r) for r in range(3)]
    tasks = [Task(fake_network_task, dict(task=task, dataset=ds, n_obs=n, d=d, repeat=r, refuse=(ds == "wine" and r == 1)),
                  label=f"NN {task} {ds} n={n} d={d} repeat={r}") for ds, n, d, r in specs]
    with run_context(resume_dir=out / ".tasks"):
        run_tasks(tasks, seed=0, stream="part", progress=False)
        if features:
            for d in (5, 2):
                run_tasks([Task(fake_network_task, dict(task=task, dataset="simulated", n_obs=1000, d=d, repeat=0),
                                label=f"NN {task} simulated n=1000 d={d} repeat=0")],
                          seed=0, stream=f"features-d{d}", progress=False)


def test_regression_pairs_cancel_each_data_set_and_skip_refusals(tmp_path):
    _run(tmp_path)
    table, source = network_table(tmp_path, "regression")
    assert source == "saved tasks" and len(table) == 9 * 5
    got = network_comparisons(table, "regression").set_index(["method", "baseline", "dataset", "n_obs", "epsilon"])
    for ds, n in (("simulated", 100), ("simulated", 1000), ("wine", 100)):
        for eps in (0.5, 5.0):
            refused = ds == "wine" and eps == 5.0
            row = got.loc[("beta-D", "DP-SGD", ds, n, eps)]
            # log(SHIFT f_betaD) - log(SHIFT f_DPSGD): the same for every data set, so se = 0
            assert row["mean_diff"] == pytest.approx(np.log(FACTOR["beta-D"][eps] / FACTOR["DP-SGD"][eps]), abs=1e-12)
            assert row["se"] == pytest.approx(0.0, abs=1e-12)
            assert row["pairs"] == (2 if refused else 3) and row["refused_method"] == (1 if refused else 0)
            assert row["better"] == (row["pairs"] if eps == 5.0 else 0)
            pm = got.loc[("beta-D", "PM (non-private)", ds, n, eps)]  # matched on data set and n, not epsilon
            assert pm["mean_diff"] == pytest.approx(np.log(FACTOR["beta-D"][eps]), abs=1e-12)
    assert set(got.index.get_level_values("method")) == {"beta-D", "DP-SGD"}


def test_authors_dpsgd_table_joins_and_the_finished_table_wins(tmp_path):
    _run(tmp_path)
    alt = fake_network_task(task="regression", dataset="simulated", n_obs=100, d=2, repeat=0, seed=None)
    alt = alt[alt["method"] == "DP-SGD"].assign(settings="authors' code", test_rmse=lambda t: t["test_rmse"] / 2)
    other = alt.assign(settings="paper text")  # only the authors' code's rows are joined
    pd.concat([alt, other]).to_csv(tmp_path / "jewson2023_nn_regression_dpsgd_settings.csv", index=False)
    table, _ = network_table(tmp_path, "regression")
    assert (table["method"] == "DP-SGD (authors' code)").sum() == 2
    got = network_comparisons(table, "regression").set_index(["method", "baseline", "dataset", "n_obs", "epsilon"])
    row = got.loc[("beta-D", "DP-SGD (authors' code)", "simulated", 100, 5.0)]
    assert row["pairs"] == 1 and row["mean_diff"] == pytest.approx(np.log(0.5 / 1.0), abs=1e-12)
    assert network_table(tmp_path, "regression", authors_dpsgd=False)[0]["method"].nunique() == 3
    # once the part has finished, its table is read, not the saved tasks
    table.iloc[:4].to_csv(tmp_path / "jewson2023_nn_regression.csv", index=False)
    finished, source = network_table(tmp_path, "regression", authors_dpsgd=False)
    assert source == "table" and len(finished) == 4


def test_classification_higher_auc_is_better(tmp_path):
    _run(tmp_path, "classification")
    table, _ = network_table(tmp_path, "classification")
    got = network_comparisons(table, "classification").set_index(["method", "baseline", "dataset", "n_obs", "epsilon"])
    row = got.loc[("beta-D", "DP-SGD", "simulated", 100, 5.0)]  # AUC 0.85 vs 0.70 at every repeat
    assert row["mean_diff"] == pytest.approx(0.15, abs=1e-12) and row["better"] == 3
    assert got.loc[("beta-D", "DP-SGD", "simulated", 100, 0.5), "better"] == 0


def test_saved_features_tasks_are_dropped_or_refused_by_name(tmp_path):
    _run(tmp_path, features=True)
    # d = 5 rows are nn_features' and dropped; its d = 2 task repeats a label of this part
    with pytest.raises(ValueError, match="more than one row for .* n=1000 repeat=0: nn_features has run"):
        network_table(tmp_path, "regression")
    with pytest.raises(FileNotFoundError, match="neither jewson2023_nn_classification.csv nor saved tasks"):
        network_table(tmp_path, "classification")
    with pytest.raises(ValueError, match="task must be one of"):
        network_table(tmp_path, "survival")


def test_script_prints_and_writes_the_paired_table(tmp_path, capsys):
    _run(tmp_path)
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "jewson2023_paired.py"))
    assert script["main"](["--task", "regression", "--out", str(tmp_path), "--write"]) == 0
    printed = capsys.readouterr().out
    assert "from its saved tasks" in printed and "wine" in printed
    written = pd.read_csv(tmp_path / "jewson2023_nn_regression_paired.csv")
    assert len(written) == 3 * 2 * 3  # 3 (dataset, n) x 2 epsilons x 3 comparisons
    meta = json.loads((tmp_path / "jewson2023_nn_regression_paired.json").read_text())
    assert meta["args"]["source"] == "saved tasks" and meta["args"]["data_sets"] == {
        "simulated n=100": 3, "simulated n=1000": 3, "wine n=100": 3}
    with pytest.raises(SystemExit):
        script["main"](["--task", "classification", "--out", str(tmp_path)])


def test_markdown_grid_cells(tmp_path):
    _run(tmp_path)
    paired = network_comparisons(network_table(tmp_path, "regression")[0], "regression")
    grid = markdown_grid(paired, dataset="wine", method="beta-D", baseline="DP-SGD", ns=[100, 200])
    # log(3 / 1.5) = +0.69 at epsilon 0.5 (never better), log(0.5 / 2) = -1.39 at 5 (one release refused)
    assert grid.split("\n") == ["| ε | n = 100 | n = 200 |", "|---|---|---|",
                                 "| 0.5 | +0.69 ± 0.00 (0 of 3) | pending |",
                                 "| 5 | \u22121.39 ± 0.00 (2 of 2) | pending |"]
    assert markdown_grid(paired, dataset="simulated", method="beta-D", baseline="PM (non-private)",
                         counts=False).split("\n")[2:] == ["| 0.5 | +1.10 ± 0.00 | +1.10 ± 0.00 |",
                                                           "| 5 | \u22120.69 ± 0.00 | \u22120.69 ± 0.00 |"]
    one = pd.DataFrame([dict(method="beta-D", baseline="DP-SGD", dataset="wine", n_obs=100, epsilon=1.0, pairs=1,
                             mean_diff=0.333, se=np.nan, better=0),
                        dict(method="beta-D", baseline="DP-SGD", dataset="wine", n_obs=200, epsilon=1.0, pairs=0,
                             mean_diff=np.nan, se=np.nan, better=0)])
    assert markdown_grid(one, dataset="wine", method="beta-D", baseline="DP-SGD").split("\n")[2] == \
        "| 1 | +0.33 (0 of 1) | no pair |"
    with pytest.raises(ValueError, match="no rows for 'beta-D' against 'DP-SGD' on dataset 'adult'"):
        markdown_grid(paired, dataset="adult", method="beta-D", baseline="DP-SGD")


def test_script_markdown_fills_only_complete_n(tmp_path, capsys, monkeypatch):
    _run(tmp_path)
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "jewson2023_paired.py"))
    monkeypatch.setitem(study.FULL, "nn_repeats", 3)  # the fake part has 3 data sets per (dataset, n)
    monkeypatch.setitem(study.FULL, "nn_ns", (100, 1000))
    assert script["main"](["--task", "regression", "--out", str(tmp_path), "--markdown"]) == 0
    printed = capsys.readouterr().out
    assert "beta-D minus DP-SGD, wine, log test_rmse (nn_regression from its saved tasks):" in printed
    assert "| 5 | \u22121.39 ± 0.00 (2 of 2) | pending |" in printed  # wine has no n = 1000 yet
    monkeypatch.setitem(study.FULL, "nn_repeats", 4)  # now no (dataset, n) is complete
    assert script["main"](["--task", "regression", "--out", str(tmp_path), "--markdown"]) == 0
    printed = capsys.readouterr().out
    assert "wine n = 100: 3 of 4 data sets saved, shown as pending" in printed and "| n = 100 |" not in printed
