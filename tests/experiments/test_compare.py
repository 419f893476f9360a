"""Paired comparison of two methods over repeats (:mod:`pystanprivacy.experiments.compare`)
and reading the saved task results of a run in progress (:func:`runner.saved_results`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.compare import paired_differences
from pystanprivacy.run import runner
from pystanprivacy.run.runner import Task, run_context, run_tasks
from pystanprivacy.run.study import Study

#: the study of this file's task functions (every task function declares one: pystanprivacy.run.study)
STUDY = Study(name="tests/experiments/compare", version=1)


def _study() -> pd.DataFrame:
    """Two n, two epsilons, three repeats; method A is refused once, the non-private PM has
    epsilon = inf, and the repeats' data sets shift every method by the same amount."""
    rows = []
    shift = {0: 1.0, 1: 5.0, 2: 20.0}
    for n in (100, 1000):
        for r in range(3):
            rows.append(dict(n_obs=n, repeat=r, method="PM", epsilon=np.inf, rmse=shift[r], released=True))
            for eps in (0.5, 5.0):
                rows.append(
                    dict(
                        n_obs=n,
                        repeat=r,
                        method="A",
                        epsilon=eps,
                        rmse=shift[r] * (2.0 if eps < 1 else 0.5),
                        released=not (n == 1000 and eps == 5.0 and r == 2),
                    )
                )
                rows.append(
                    dict(n_obs=n, repeat=r, method="B", epsilon=eps, rmse=shift[r] * (1.0 + r / 10), released=True)
                )
    return pd.DataFrame(rows)


def test_paired_differences_against_hand_computed_values():
    table = _study()
    got = paired_differences(
        table, "rmse", method="A", baseline="B", groups=["n_obs", "epsilon"], pairs=["repeat"], transform=np.log
    ).set_index(["n_obs", "epsilon"])
    # log(A) - log(B) = log(factor) - log(1 + r/10): the data set's shift cancels exactly
    for n in (100, 1000):
        for eps, factor in ((0.5, 2.0), (5.0, 0.5)):
            reps = [0, 1] if (n == 1000 and eps == 5.0) else [0, 1, 2]  # the refused release is not paired
            d = np.array([np.log(factor) - np.log(1 + r / 10) for r in reps])
            row = got.loc[(n, eps)]
            assert row["pairs"] == len(reps)
            assert row["mean_diff"] == pytest.approx(d.mean(), abs=1e-12)
            assert row["se"] == pytest.approx(d.std(ddof=1) / np.sqrt(len(d)), abs=1e-12)
            assert row["better"] == int((d < 0).sum())
            assert row["refused_method"] == (1 if (n == 1000 and eps == 5.0) else 0)
            assert row["refused_baseline"] == 0
    # against a non-private baseline with epsilon = inf: leave epsilon out of baseline_groups
    pm = paired_differences(
        table,
        "rmse",
        method="A",
        baseline="PM",
        groups=["n_obs", "epsilon"],
        pairs=["repeat"],
        baseline_groups=["n_obs"],
    ).set_index(["n_obs", "epsilon"])
    assert pm.loc[(100, 0.5), "mean_diff"] == pytest.approx(np.mean([1.0, 5.0, 20.0]), abs=1e-12)
    assert pm.loc[(1000, 5.0), "mean_diff"] == pytest.approx(np.mean([-0.5, -2.5]), abs=1e-12)
    # a higher-is-better metric counts the other way
    auc = paired_differences(
        table, "rmse", method="A", baseline="B", groups=["n_obs", "epsilon"], pairs=["repeat"], lower_is_better=False
    ).set_index(["n_obs", "epsilon"])
    assert auc.loc[(100, 0.5), "better"] == 3 and auc.loc[(100, 5.0), "better"] == 0


def test_paired_differences_rejects_bad_input_by_name():
    table = _study()
    kw = dict(method="A", baseline="B", groups=["n_obs", "epsilon"], pairs=["repeat"])
    with pytest.raises(ValueError, match=r"lacks the columns \['auc'\]"):
        paired_differences(table, "auc", **kw)
    with pytest.raises(ValueError, match="baseline 'C' has no rows"):
        paired_differences(table, "rmse", **{**kw, "baseline": "C"})
    with pytest.raises(ValueError, match="more than one row"):  # PM matched without n_obs is ambiguous
        paired_differences(
            table, "rmse", method="A", baseline="PM", groups=["n_obs", "epsilon"], pairs=["repeat"], baseline_groups=[]
        )
    with pytest.raises(ValueError, match="subset of groups"):
        paired_differences(table, "rmse", **kw, baseline_groups=["dataset"])
    with pytest.raises(TypeError, match="lower_is_better must be a bool"):
        paired_differences(table, "rmse", **kw, lower_is_better="yes")


@STUDY.task()
def labelled_task(*, i: int, seed) -> pd.DataFrame:
    return pd.DataFrame({"i": [i], "u": [np.random.default_rng(seed).random()]})


def test_saved_results_reads_a_run_in_progress(tmp_path):
    resume = tmp_path / ".tasks"
    tasks = [Task(labelled_task, {"i": i}, label=f"{'even' if i % 2 == 0 else 'odd'} {i}") for i in range(5)]
    with run_context(resume_dir=resume):
        whole = run_tasks(tasks, seed=1, progress=False)
    (resume / ".abc.tmp").write_text("{half")  # a temp file and a damaged file are skipped
    (resume / "bad.json").write_text('{"label": "even 9", "format": "x"}')
    even = runner.saved_results(resume, "even")
    assert even["task_label"].tolist() == ["even 0", "even 2", "even 4"]
    pd.testing.assert_frame_equal(
        even.drop(columns=["task_label", "task_seconds"]),
        whole.iloc[[0, 2, 4]].reset_index(drop=True),
        check_exact=True,
    )
    assert (even["task_seconds"] >= 0).all()
    assert len(runner.saved_results(resume)) == 5 and runner.saved_results(resume, "none").empty
    assert (resume / "bad.json").exists()  # never deleted by a reader
    assert all("seconds" in json.loads(p.read_text()) for p in resume.glob("*.json") if p.name != "bad.json")
    with pytest.raises(FileNotFoundError, match="resume_dir must be a folder"):
        runner.saved_results(tmp_path / "nowhere")
