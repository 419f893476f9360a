"""Portable task keys: a task whose arguments hold floating-point arrays is found again when
those arrays differ only in their last bits (BLAS/LAPACK results on another CPU), through the
resume folder's ``portable-keys.index``; a real change of the data still runs the task again."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy._fingerprint import fingerprint, has_float_data
from pystanprivacy.run import runner
from pystanprivacy.run.runner import PORTABLE_KEYS, Task, portable_task_key, run_context, run_tasks, task_key

RUNS: list[int] = []


def mean_task(*, x: np.ndarray, tag: int, seed) -> pd.DataFrame:
    RUNS.append(tag)
    return pd.DataFrame({"tag": [tag], "mean": [float(np.mean(x))], "u": [np.random.default_rng(seed).random()]})


def _last_bits(x: np.ndarray, ulps: int = 3) -> np.ndarray:
    """``x`` moved by a few units in the last place, as another CPU's BLAS may give it."""
    y = x.copy()
    for _ in range(ulps):
        y = np.nextafter(y, np.inf)
    return y


def _tasks(x: np.ndarray) -> list[Task]:
    return [Task(mean_task, {"x": x[i], "tag": i}, label=f"mean {i}") for i in range(len(x))]


@pytest.fixture
def data():
    return np.random.default_rng(3).normal(size=(4, 500))


def test_portable_fingerprint_absorbs_last_bits_and_nothing_more(data):
    x, y = data, _last_bits(data)
    assert fingerprint(x) != fingerprint(y)
    assert fingerprint(x, portable=True) == fingerprint(y, portable=True)
    z = x.copy()
    z[2, 7] *= 1 + 2.0**-20  # beyond 24 significant bits
    assert fingerprint(z, portable=True) != fingerprint(x, portable=True)
    assert fingerprint(x.astype(np.float32), portable=True) != fingerprint(x, portable=True)  # dtype kept
    frame = pd.DataFrame({"a": x[0], "n": np.arange(500)})
    moved = frame.assign(a=y[0])
    assert fingerprint(frame, portable=True) == fingerprint(moved, portable=True) != fingerprint(
        frame.assign(n=np.arange(1, 501)), portable=True)
    big = np.array([1e300, -np.inf, np.nan, 5e-324, 0.0])  # no overflow to inf, unlike a float32 cast
    assert fingerprint(big, portable=True) != fingerprint(np.array([2e300, -np.inf, np.nan, 5e-324, 0.0]), portable=True)
    # everything else exactly as without portable
    other = {"n": 3, "eps": 0.5, "name": "wine", "ints": np.arange(4)}
    assert fingerprint(other, portable=True) == fingerprint(other) and not has_float_data(other)
    assert has_float_data({"a": [x]}) and has_float_data(frame) and not has_float_data(frame[["n"]])


def test_portable_key_only_for_float_arrays_and_exact_key_unchanged(data):
    t = Task(mean_task, {"x": data[0], "tag": 0})
    assert portable_task_key(t, 0, 1) == portable_task_key(Task(mean_task, {"x": _last_bits(data[0]), "tag": 0}), 0, 1)
    assert task_key(t, 0, 1) != task_key(Task(mean_task, {"x": _last_bits(data[0]), "tag": 0}), 0, 1)
    assert portable_task_key(t, 0, 1) != portable_task_key(t, 0, 2) != portable_task_key(t, 1, 1)
    assert portable_task_key(Task(mean_task, {"x": [1, 2], "tag": 0}), 0, 1) is None
    assert portable_task_key(t, 0, 1).startswith("p") and len(portable_task_key(t, 0, 1)) == 24


def test_resume_on_another_cpu_finds_the_tasks_through_the_portable_keys(tmp_path, data):
    RUNS.clear()
    first = run_tasks(_tasks(data), seed=5, resume_dir=tmp_path)
    assert RUNS == [0, 1, 2, 3]
    keys = json.loads((tmp_path / PORTABLE_KEYS).read_text())["keys"]
    assert sorted(keys.values()) == sorted(p.stem for p in tmp_path.glob("*.json")) and len(keys) == 4
    RUNS.clear()
    again = run_tasks(_tasks(_last_bits(data)), seed=5, resume_dir=tmp_path)  # other exact keys
    assert RUNS == [] and again.equals(first)
    changed = data.copy()
    changed[1, 0] += 1e-6
    RUNS.clear()
    third = run_tasks(_tasks(changed), seed=5, resume_dir=tmp_path)
    assert RUNS == [1] and third.drop(index=1).equals(first.drop(index=1))
    assert len(runner.read_portable_keys(tmp_path)) == 5
    with run_context(resume_dir=tmp_path, saved_only=True) as ctx:
        run_tasks(_tasks(_last_bits(changed, 2)), seed=5)
    assert ctx.missing == [] and ctx.found == {p.stem for p in tmp_path.glob("*.json")} - {
        json.loads((tmp_path / PORTABLE_KEYS).read_text())["keys"][portable_task_key(_tasks(data)[1], 1, 5)]}


def test_results_saved_before_portable_keys_are_recorded_by_a_resume_or_paired_by_label(tmp_path, data):
    RUNS.clear()
    first = run_tasks(_tasks(data), seed=5, resume_dir=tmp_path)
    (tmp_path / PORTABLE_KEYS).unlink()  # as saved by an older version
    moved = _last_bits(data)
    with run_context(resume_dir=tmp_path, saved_only=True) as ctx:  # another CPU: nothing found
        run_tasks(_tasks(moved), seed=5)
    assert len(ctx.missing) == 4 and not (tmp_path / PORTABLE_KEYS).exists()
    with run_context(resume_dir=tmp_path, saved_only=True, pair_by_label=True) as ctx:
        paired = run_tasks(_tasks(moved), seed=5)
    assert ctx.paired_by_label == ["mean 0", "mean 1", "mean 2", "mean 3"] and paired.equals(first)
    assert not (tmp_path / PORTABLE_KEYS).exists()  # a reader writes nothing: it hands the pairs on
    assert runner.add_portable_keys(tmp_path, ctx.portable_pairs) == 4
    assert runner.add_portable_keys(tmp_path, ctx.portable_pairs) == 0
    some, key = next(iter(ctx.portable_pairs.items()))
    assert runner.add_portable_keys(tmp_path, {some: "f" * 24}) == 0  # its file exists: kept
    (tmp_path / f"{key}.json").rename(tmp_path / "aside")
    assert runner.add_portable_keys(tmp_path, {some: "f" * 24}) == 1  # a lost file: replaced
    (tmp_path / "aside").rename(tmp_path / f"{key}.json")
    assert runner.read_portable_keys(tmp_path)[some] == "f" * 24
    assert runner.add_portable_keys(tmp_path, {some: key}) == 1  # "f"*24 has no file: replaced again
    assert runner.read_portable_keys(tmp_path)[some] == key
    RUNS.clear()
    assert run_tasks(_tasks(moved), seed=5, resume_dir=tmp_path).equals(first) and RUNS == []
    # on the machine that saved them, a resume records the keys itself
    (tmp_path / PORTABLE_KEYS).unlink()
    run_tasks(_tasks(data), seed=5, resume_dir=tmp_path)
    assert RUNS == [] and len(runner.read_portable_keys(tmp_path)) == 4
    # a label that two files carry is never paired
    for p in tmp_path.glob("*.json"):
        p.write_text(p.read_text().replace('"mean 3"', '"mean 2"'))
    (tmp_path / PORTABLE_KEYS).unlink()
    with run_context(resume_dir=tmp_path, saved_only=True, pair_by_label=True) as ctx:
        run_tasks(_tasks(moved), seed=5)
    assert ctx.paired_by_label == ["mean 0", "mean 1"] and ctx.missing == ["mean 2", "mean 3"]


def test_bad_portable_options_and_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="pair_by_label=True needs saved_only=True"):
        with run_context(resume_dir=tmp_path, pair_by_label=True):
            pass
    with pytest.raises(TypeError, match="pair_by_label must be a bool, got int"):
        with run_context(resume_dir=tmp_path, saved_only=True, pair_by_label=1):
            pass
    (tmp_path / PORTABLE_KEYS).write_text('{"keys": []}')
    with pytest.raises(ValueError, match="is not a portable-keys file"):
        runner.read_portable_keys(tmp_path)


def test_committed_kulkarni_regression_tasks_have_portable_keys():
    """Kulkarni et al.'s regression tasks take PCA features (LAPACK): their exact keys depend on
    the CPU, so every one of them must be in the committed portable-keys file."""
    tasks = Path(__file__).resolve().parents[2] / "results" / "kulkarni2022" / ".tasks"
    keys = runner.read_portable_keys(tasks)
    labels = {json.loads((tasks / f"{k}.json").read_text())["label"] for k in keys.values()}
    assert len(keys) == len(labels) == 392
    assert {lab.split()[0] for lab in labels} == {"figure4", "figure5"}


def test_script_records_the_committed_kulkarni_keys_again_by_label(tmp_path):
    """scripts/portable_task_keys.py on a copy of the committed Kulkarni tasks without their
    portable-keys file: every task is read (on a CPU whose exact keys differ, the regression
    tasks by label) and the file it writes holds the committed pairs."""
    import importlib.util
    import shutil

    repo = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("portable_task_keys", repo / "scripts" / "portable_task_keys.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    shutil.copytree(repo / "results" / "kulkarni2022" / ".tasks", tmp_path / "kulkarni2022" / ".tasks")
    (tmp_path / "kulkarni2022" / ".tasks" / PORTABLE_KEYS).unlink()
    counts = script.record("kulkarni2022", pair_by_label=True, results=tmp_path)
    assert counts["missing"] == 0 and counts["added"] == counts["portable_keys"] == 392
    assert counts["files_read"] == len(list((tmp_path / "kulkarni2022" / ".tasks").glob("*.json")))
    assert runner.read_portable_keys(tmp_path / "kulkarni2022" / ".tasks") == runner.read_portable_keys(
        repo / "results" / "kulkarni2022" / ".tasks")
    with pytest.raises(FileNotFoundError, match="no saved tasks for paper='bernstein2018'"):
        script.record("bernstein2018", results=tmp_path)
