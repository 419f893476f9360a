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

from pystanprivacy.experiments.jewson2023 import network_features, networks, study
from pystanprivacy.experiments.jewson2023.paired import (
    features_table,
    markdown_grid,
    network_comparisons,
    network_table,
    saved_features,
    saved_part,
)
from pystanprivacy.run.runner import run_context
from pystanprivacy.run.study import Study

SHIFT = {0: 1.0, 1: 4.0, 2: 9.0}  # each repeat's data set scales every method's RMSE alike
FACTOR = {"beta-D": {0.5: 3.0, 5.0: 0.5}, "DP-SGD": {0.5: 1.5, 5.0: 2.0}}


#: the fake task's own study (the runner keys a task by its study's declaration)
FAKE_STUDY = Study(name="tests/jewson2023_paired/fake_network_task", version=1)


@FAKE_STUDY.task()
def fake_network_task(
    *, task: str, dataset: str, n_obs: int, repeat: int, d: int = 2, seed=None, **settings
) -> pd.DataFrame:
    """The rows of one network task (as ``networks.neural_task`` makes them, with its arguments)
    with known metrics; wine's repeat 1 has its beta-D release at epsilon 5 refused."""
    refuse = dataset == "wine" and repeat == 1
    metric = "test_rmse" if task == "regression" else "auc"
    rows = [
        dict(
            task=task,
            dataset=dataset,
            n_obs=n_obs,
            d=d,
            repeat=repeat,
            method="PM (non-private)",
            epsilon=math.inf,
            released=True,
            **{metric: SHIFT[repeat] if task == "regression" else 0.9},
        )
    ]
    for method, by_eps in FACTOR.items():
        for eps, f in by_eps.items():
            ok = not (refuse and method == "beta-D" and eps == 5.0)
            value = SHIFT[repeat] * f * (d / 2) if task == "regression" else 0.9 - 0.1 * f + 0.01 * repeat
            rows.append(
                dict(
                    task=task,
                    dataset=dataset,
                    n_obs=n_obs,
                    d=d,
                    repeat=repeat,
                    method=method,
                    epsilon=eps,
                    released=ok,
                    **({metric: value} if ok else {}),
                )
            )
    return pd.DataFrame(rows)


@pytest.fixture
def small_grid(monkeypatch):
    """The study's full grid made small (n 100 and 1000, epsilon 0.5 and 5, 3 repeats; d 2 and 5
    for nn_features) and neural_task replaced by the fake: the parts' own calls, keys and labels."""
    for key, value in dict(
        nn_ns=(100, 1000),
        nn_epsilons=(0.5, 5.0),
        nn_repeats=3,
        nn_regression_uci=("wine",),
        nn_classification_uci=("wine",),
        nn_features_ds=(2, 5),
        nn_features_n=1000,
        nn_features_epsilons=(0.5, 5.0),
        nn_features_repeats=3,
    ).items():
        monkeypatch.setitem(study.FULL, key, value)
    monkeypatch.setattr(networks, "neural_task", fake_network_task)


def _run(out: Path, task: str = "regression", *, features: bool = False) -> None:
    """Run a part the way the study does (its calls of ``networks.neural``, with the fake task)
    and leave it in progress: wine's n = 1000 tasks not saved yet; ``features`` also runs
    nn_features' ``task`` half into the same folder."""
    size = study.FULL
    grid = dict(
        task=task,
        ns=size["nn_ns"],
        epsilons=size["nn_epsilons"],
        repeats=size["nn_repeats"],
        sampler=size["nn_sampler"],
        seed=0,
        progress=False,
    )
    with run_context(resume_dir=out / ".tasks"):
        networks.neural(datasets=["simulated"], **grid)
        networks.neural(datasets=["wine"], **grid)
        if features:  # as study.reproduce calls it: d = 2 is nn_<task>'s simulated n = 1000 cell
            network_features.neural_features(
                task=task,
                ds=size["nn_features_ds"],
                n_obs=size["nn_features_n"],
                epsilons=size["nn_features_epsilons"],
                repeats=size["nn_features_repeats"],
                figure=study.nn_figure_grid(size),
                sampler=size["nn_sampler"],
                seed=0,
                progress=False,
            )
    for path in (out / ".tasks").glob("*.json"):
        if " wine n=1000 " in json.loads(path.read_text())["label"]:
            path.unlink()


def test_regression_pairs_cancel_each_data_set_and_skip_refusals(tmp_path, small_grid):
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


def test_authors_dpsgd_table_joins_and_the_finished_table_wins(tmp_path, small_grid):
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


def test_classification_higher_auc_is_better(tmp_path, small_grid):
    _run(tmp_path, "classification")
    table, _ = network_table(tmp_path, "classification")
    got = network_comparisons(table, "classification").set_index(["method", "baseline", "dataset", "n_obs", "epsilon"])
    row = got.loc[("beta-D", "DP-SGD", "simulated", 100, 5.0)]  # AUC 0.85 vs 0.70 at every repeat
    assert row["mean_diff"] == pytest.approx(0.15, abs=1e-12) and row["better"] == 3
    assert got.loc[("beta-D", "DP-SGD", "simulated", 100, 0.5), "better"] == 0


def test_parts_in_one_folder_are_read_by_their_keys_not_their_labels(tmp_path, small_grid):
    """nn_features' d = 2 cell is nn_regression's simulated n = 1000 tasks (where Figure 10 meets
    Figure 3): the very tasks, saved once and read by both parts. Its other d are tasks of its own,
    and the parts' saved tasks are found by their exact keys, so nothing else mixes; nothing runs."""
    _run(tmp_path, features=True)
    # nn_regression: 2 n x 3 simulated + 3 wine n = 100 (wine n = 1000 removed); nn_features: d = 5 only
    assert len(list((tmp_path / ".tasks").glob("*.json"))) == 6 + 3 + 3
    table, source = network_table(tmp_path, "regression")
    assert source == "saved tasks" and len(table) == 9 * 5 and set(table["d"]) == {2}
    _, missing = saved_part(tmp_path, "regression")
    assert missing == [f"NN regression wine n=1000 d=2 repeat={r}" for r in range(3)]
    feats, source = features_table(tmp_path, "regression")
    assert source == "saved tasks" and len(feats) == 2 * 3 * 5 and sorted(feats["d"].unique()) == [2, 5]
    figure3 = table[(table["dataset"] == "simulated") & (table["n_obs"] == 1000)]
    pd.testing.assert_frame_equal(feats[feats["d"] == 2].reset_index(drop=True), figure3.reset_index(drop=True))
    got = network_comparisons(feats, "regression", by="d").set_index(["method", "baseline", "dataset", "d", "epsilon"])
    for d in (2, 5):  # the fake scales every method alike with d: the paired differences do not move
        row = got.loc[("beta-D", "DP-SGD", "simulated", d, 5.0)]
        assert row["mean_diff"] == pytest.approx(np.log(0.5 / 2.0), abs=1e-12) and row["pairs"] == 3
    grid = markdown_grid(
        network_comparisons(feats, "regression", by="d"),
        dataset="simulated",
        method="beta-D",
        baseline="DP-SGD",
        ns=[2, 5, 10],
        by="d",
    )
    assert grid.split("\n")[:3] == [
        "| ε | d = 2 | d = 5 | d = 10 |",
        "|---|---|---|---|",
        "| 0.5 | +0.69 ± 0.00 (0 of 3) | +0.69 ± 0.00 (0 of 3) | pending |",
    ]
    # the finished nn_features table, once written, holds both tasks: only this task's rows are read
    both = pd.concat([feats, feats.assign(task="classification")])
    both.to_csv(tmp_path / "jewson2023_nn_features.csv", index=False)
    finished, source = features_table(tmp_path, "regression")
    assert source == "table" and len(finished) == len(feats)
    with pytest.raises(FileNotFoundError, match="neither jewson2023_nn_classification.csv nor saved tasks"):
        network_table(tmp_path, "classification")
    with pytest.raises(ValueError, match="task must be one of"):
        network_table(tmp_path, "survival")
    with pytest.raises(ValueError, match="by must be one of"):
        network_comparisons(table, "regression", by="n")


def test_the_committed_full_run_is_found_by_its_keys():
    """All 80 saved tasks of the full nn_regression run committed in results/jewson2023/.tasks are
    found by the keys that the current code gives the study's tasks: a change to the network
    experiment's module (its source is part of every key) would orphan them and restart a run of
    many hours from zero; this catches it."""
    out = Path(__file__).resolve().parents[2] / "results" / "jewson2023"
    table, missing = saved_part(out, "regression")
    found = table.drop_duplicates(["dataset", "n_obs", "repeat"])
    assert len(found) == 80 and not missing  # the part is complete (2026-11-29)
    assert len(found[found["dataset"] == "simulated"]) == 40


def test_the_committed_classification_tasks_are_found_by_their_keys():
    """The saved nn_classification tasks committed in results/jewson2023/.tasks (60 of 80 by
    2026-11-30, the run still going) are found by the keys the current code gives them, as
    above: a change to those keys would find none of them."""
    out = Path(__file__).resolve().parents[2] / "results" / "jewson2023"
    table, missing = saved_part(out, "classification")
    found = table.drop_duplicates(["dataset", "n_obs", "repeat"])
    assert len(found) >= 60 and len(found) + len(missing) == 80
    assert len(found[found["dataset"] == "simulated"]) == 40


def test_only_figure10_s_cell_of_figures_3_and_9_is_shared(tmp_path, small_grid):
    """The d = 2 cell is shared only where it is the figures' cell: their d, one of their n, the
    same epsilons (one task's argument) and no more repeats than they have; fewer repeats take the
    figures' first ones."""
    grid = dict(ns=(100, 1000), epsilons=(0.5, 5.0), repeats=3)
    share = network_features.shares_figure_cell
    assert share(d=2, n_obs=1000, epsilons=[0.5, 5], repeats=3, figure=grid)
    assert share(d=2, n_obs=100, epsilons=[0.5, 5.0], repeats=2, figure=grid)
    for d, n, eps, reps, fig in (
        (5, 1000, (0.5, 5.0), 3, grid),
        (2, 500, (0.5, 5.0), 3, grid),
        (2, 1000, (5.0,), 3, grid),
        (2, 1000, (5.0, 0.5), 3, grid),
        (2, 1000, (0.5, 5.0), 4, grid),
        (2, 1000, (0.5, 5.0), 3, None),
    ):
        assert not share(d=d, n_obs=n, epsilons=eps, repeats=reps, figure=fig)
    _run(tmp_path)
    before = sorted(p.name for p in (tmp_path / ".tasks").glob("*.json"))
    with run_context(resume_dir=tmp_path / ".tasks", saved_only=True) as ctx:
        two = network_features.neural_features(
            task="regression",
            ds=[2],
            n_obs=1000,
            epsilons=[0.5, 5.0],
            repeats=2,
            figure=grid,
            sampler=study.FULL["nn_sampler"],
            seed=0,
            progress=False,
        )
    assert ctx.missing == [] and sorted(two["repeat"].unique()) == [0, 1] and (two["n_obs"] == 1000).all()
    assert sorted(p.name for p in (tmp_path / ".tasks").glob("*.json")) == before


def test_the_committed_figure10_d2_cell_is_the_committed_figure_3_and_9_tasks():
    """At full scale, nn_features' d = 2 cell is read from the committed nn_regression and
    nn_classification tasks at simulated n = 1000 (all 10 data sets of each), row for row."""
    out = Path(__file__).resolve().parents[2] / "results" / "jewson2023"
    for task in ("regression", "classification"):
        feats, missing = saved_features(out, task)
        shared = feats[feats["d"] == 2].reset_index(drop=True)
        assert sorted(shared["repeat"].unique()) == list(range(10))
        assert not [m for m in missing if " d=2 " in m]
        part, _ = saved_part(out, task)
        figure = part[(part["dataset"] == "simulated") & (part["n_obs"] == 1000)].reset_index(drop=True)
        pd.testing.assert_frame_equal(shared, figure)


def test_script_prints_and_writes_the_paired_table(tmp_path, capsys, small_grid):
    _run(tmp_path)
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "jewson2023_paired.py"))
    assert script["main"](["--task", "regression", "--out", str(tmp_path), "--write"]) == 0
    printed = capsys.readouterr().out
    assert "from its saved tasks" in printed and "wine" in printed
    written = pd.read_csv(tmp_path / "jewson2023_nn_regression_paired.csv")
    assert len(written) == 3 * 2 * 3  # 3 (dataset, n) x 2 epsilons x 3 comparisons
    meta = json.loads((tmp_path / "jewson2023_nn_regression_paired.json").read_text())
    assert meta["args"]["source"] == "saved tasks" and meta["args"]["data_sets"] == {
        "simulated n=100": 3,
        "simulated n=1000": 3,
        "wine n=100": 3,
    }
    with pytest.raises(SystemExit):
        script["main"](["--task", "classification", "--out", str(tmp_path)])


def test_markdown_grid_cells(tmp_path, small_grid):
    _run(tmp_path)
    paired = network_comparisons(network_table(tmp_path, "regression")[0], "regression")
    grid = markdown_grid(paired, dataset="wine", method="beta-D", baseline="DP-SGD", ns=[100, 200])
    # log(3 / 1.5) = +0.69 at epsilon 0.5 (never better), log(0.5 / 2) = -1.39 at 5 (one release refused)
    assert grid.split("\n") == [
        "| ε | n = 100 | n = 200 |",
        "|---|---|---|",
        "| 0.5 | +0.69 ± 0.00 (0 of 3) | pending |",
        "| 5 | \u22121.39 ± 0.00 (2 of 2) | pending |",
    ]
    assert markdown_grid(paired, dataset="simulated", method="beta-D", baseline="PM (non-private)", counts=False).split(
        "\n"
    )[2:] == ["| 0.5 | +1.10 ± 0.00 | +1.10 ± 0.00 |", "| 5 | \u22120.69 ± 0.00 | \u22120.69 ± 0.00 |"]
    one = pd.DataFrame(
        [
            dict(
                method="beta-D",
                baseline="DP-SGD",
                dataset="wine",
                n_obs=100,
                epsilon=1.0,
                pairs=1,
                mean_diff=0.333,
                se=np.nan,
                better=0,
            ),
            dict(
                method="beta-D",
                baseline="DP-SGD",
                dataset="wine",
                n_obs=200,
                epsilon=1.0,
                pairs=0,
                mean_diff=np.nan,
                se=np.nan,
                better=0,
            ),
        ]
    )
    assert (
        markdown_grid(one, dataset="wine", method="beta-D", baseline="DP-SGD").split("\n")[2]
        == "| 1 | +0.33 (0 of 1) | no pair |"
    )
    with pytest.raises(ValueError, match="no rows for 'beta-D' against 'DP-SGD' on dataset 'adult'"):
        markdown_grid(paired, dataset="adult", method="beta-D", baseline="DP-SGD")


def test_script_markdown_fills_only_complete_columns(tmp_path, capsys, small_grid):
    _run(tmp_path, features=True)
    script = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "jewson2023_paired.py"))
    assert script["main"](["--task", "regression", "--out", str(tmp_path), "--markdown"]) == 0
    printed = capsys.readouterr().out
    assert "wine n = 1000" not in printed.split("beta-D minus")[0]  # not saved at all: a pending column, no count
    assert "beta-D minus DP-SGD, wine, log test_rmse (nn_regression from its saved tasks):" in printed
    assert "| 5 | \u22121.39 ± 0.00 (2 of 2) | pending |" in printed  # wine has no n = 1000 yet
    # Figure 10's network rows: a column per d of the grid, d = 20 not in this grid
    assert script["main"](["--task", "regression", "--features", "--out", str(tmp_path), "--markdown"]) == 0
    printed = capsys.readouterr().out
    assert "beta-D minus DP-SGD, simulated, log test_rmse (nn_features (regression) from its saved tasks):" in printed
    assert "| 5 | \u22121.39 ± 0.00 (3 of 3) | \u22121.39 ± 0.00 (3 of 3) |" in printed
    assert script["main"](["--task", "regression", "--features", "--out", str(tmp_path), "--write"]) == 0
    assert (tmp_path / "jewson2023_nn_features_regression_paired.csv").is_file()
    with pytest.raises(SystemExit):
        script["main"](["--task", "regression", "--features", "--data", "x", "--out", str(tmp_path)])
    # one wine data set at n = 100 gone: no wine column is complete, so no wine grid
    for path in (tmp_path / ".tasks").glob("*.json"):
        if json.loads(path.read_text())["label"] == "NN regression wine n=100 d=2 repeat=2":
            path.unlink()
    assert script["main"](["--task", "regression", "--out", str(tmp_path), "--markdown"]) == 0
    printed = capsys.readouterr().out
    assert "wine n = 100: 2 of 3 data sets saved, shown as pending" in printed
    assert "beta-D minus DP-SGD, wine" not in printed and "beta-D minus DP-SGD, simulated" in printed
