"""Portable task keys: a task whose arguments hold floating-point arrays is found again when
those arrays differ only in their last bits (BLAS/LAPACK results on another CPU), through the
resume folder's ``portable-keys.index`` (portable key and a sketch of the arrays, matched within
1e-9 of their norm); a real change of the data still runs the task again."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy._fingerprint import SKETCH_RTOL, fingerprint, has_float_data, portable_fingerprint, sketches_match
from pystanprivacy.run import runner
from pystanprivacy.run.runner import (
    PORTABLE_KEYS,
    Task,
    portable_task_key,
    run_context,
    run_tasks,
    task_key,
    task_sketch,
)
from pystanprivacy.run.study import Study

#: the study of this file's task functions (every task function declares one: pystanprivacy.run.study)
STUDY = Study(name="tests/run/portable_keys", version=1)

REPO = Path(__file__).resolve().parents[2]
RUNS: list[int] = []


@STUDY.task()
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


def _same(a, b) -> bool:
    """Same portable description and matching sketches."""
    (da, sa), (db, sb) = portable_fingerprint(a), portable_fingerprint(b)
    return da == db and sketches_match(sa, sb)


def _files(index) -> list[str]:
    return sorted(f for entries in index.values() for f, _ in entries)


@pytest.fixture
def data():
    return np.random.default_rng(3).normal(size=(4, 500))


def test_portable_fingerprint_absorbs_last_bits_and_nothing_more(data):
    x, y = data, _last_bits(data)
    assert fingerprint(x) != fingerprint(y) and _same(x, y)
    assert fingerprint(x, portable=True) == portable_fingerprint(x)[0]
    z = x.copy()
    z[2, 7] *= 1 + 2.0**-20  # one value moved by ~1e-6, 2e-8 of the array's norm
    assert not _same(z, x)
    swapped = x.copy()
    swapped[0, [3, 4]] = swapped[0, [4, 3]]  # same values, same norm
    assert not _same(swapped, x) and not _same(-x, x)
    assert not _same(x.astype(np.float32), x)  # dtype kept
    assert not _same(x.ravel(), x)  # shape kept
    frame = pd.DataFrame({"a": x[0], "n": np.arange(500)})
    assert _same(frame, frame.assign(a=y[0])) and not _same(frame, frame.assign(n=np.arange(1, 501)))
    assert not _same(frame, frame.assign(a=z[2])) and not _same(frame, frame.set_axis(np.arange(1, 501)))
    assert _same(frame["a"], frame.assign(a=y[0])["a"]) and not _same(frame["a"], frame["n"].astype(float))
    big = np.array([1e300, -np.inf, np.nan, 5e-324, 0.0])  # no overflow
    assert _same(big, big) and not _same(big, np.array([2e300, -np.inf, np.nan, 5e-324, 0.0]))
    assert not _same(big, np.array([1e300, np.inf, np.nan, 5e-324, 0.0]))  # non-finite entries exactly
    assert _same(np.zeros(3), np.zeros(3)) and not _same(np.zeros(3), np.array([0.0, 0.0, 1e-300]))
    c = x[0] + 1j * x[1]
    assert _same(c, _last_bits(x[0]) + 1j * x[1]) and not _same(c, x[0] - 1j * x[1])
    # everything else exactly as without portable
    other = {"n": 3, "eps": 0.5, "name": "wine", "ints": np.arange(4)}
    assert fingerprint(other, portable=True) == fingerprint(other) and not has_float_data(other)
    assert portable_fingerprint(other)[1] == ()
    assert has_float_data({"a": [x]}) and has_float_data(frame) and not has_float_data(frame[["n"]])


def test_sketches_absorb_blas_differences_that_rounding_the_values_did_not():
    """A product summed in two orders (~1e-16 of the norm apart) and every value moved by up to
    1e-11 of itself (as PCA features of values near zero move between CPUs): rounding each value
    to 24 bits (the first format's keys) gives other arrays, the sketches match; 1e-7 of the
    norm added to any one value is a change."""
    rng = np.random.default_rng(11)
    X, A = rng.normal(size=(20_000, 30)), rng.normal(size=(30, 5))
    one = X @ A
    other = np.zeros_like(one)
    for k in range(29, -1, -1):
        other += np.outer(X[:, k], A[k])
    jittered = one * (1 + 1e-11 * rng.uniform(-1, 1, size=one.shape))
    m, e = np.frexp(one)
    mj, ej = np.frexp(jittered)
    assert (one != other).mean() > 0.2 and (np.round(m * 2**24) * 2.0**e != np.round(mj * 2**24) * 2.0**ej).any()
    assert _same(one, other) and _same(one, jittered) and _same({"x": [one, 2]}, {"x": [jittered, 2]})
    norm = np.linalg.norm(one)
    for where in [(0, 0), (12_345, 3), (19_999, 4)]:
        bumped = other.copy()
        bumped[where] += 1e-7 * norm
        assert not _same(one, bumped)
    sa, sb = portable_fingerprint(one)[1], portable_fingerprint(jittered)[1]
    assert max(abs(p - q) for p, q in zip(sa[0], sb[0])) < 0.05 * SKETCH_RTOL * norm
    assert not sketches_match(sa, sa + sa) and not sketches_match(sa, ((1.0,) + sa[0][1:],))


def test_portable_key_only_for_float_arrays_and_exact_key_unchanged(data):
    t = Task(mean_task, {"x": data[0], "tag": 0})
    moved = Task(mean_task, {"x": _last_bits(data[0]), "tag": 0})
    assert portable_task_key(t, 0, 1) == portable_task_key(moved, 0, 1)
    assert sketches_match(task_sketch(t), task_sketch(moved))
    assert task_key(t, 0, 1) != task_key(moved, 0, 1)
    assert portable_task_key(t, 0, 1) != portable_task_key(t, 0, 2) != portable_task_key(t, 1, 1)
    assert portable_task_key(t, 0, 1) != portable_task_key(Task(mean_task, {"x": data[0], "tag": 1}), 0, 1)
    assert portable_task_key(Task(mean_task, {"x": [1, 2], "tag": 0}), 0, 1) is None
    assert task_sketch(Task(mean_task, {"x": [1, 2], "tag": 0})) == ()
    assert portable_task_key(t, 0, 1).startswith("p") and len(portable_task_key(t, 0, 1)) == 24
    # the exact key is scheme 3's (pystanprivacy.run.study): the arguments by content beside the
    # study, its version and its (here no) programs and data files -- the portable key only adds to it
    text = json.dumps(
        {
            "scheme": 3,
            "study": "tests/run/portable_keys",
            "version": 1,
            "programs": {},
            "data": {},
            "fn": "mean_task",
            "kwargs": fingerprint({"x": data[0], "tag": 0}),
            "seed": fingerprint(1),
            "stream": None,
            "index": 0,
        },
        sort_keys=True,
    )
    import hashlib

    assert task_key(t, 0, 1) == hashlib.sha256(text.encode()).hexdigest()[:24]


def test_resume_on_another_cpu_finds_the_tasks_through_the_portable_keys(tmp_path, data):
    RUNS.clear()
    first = run_tasks(_tasks(data), seed=5, resume_dir=tmp_path)
    assert RUNS == [0, 1, 2, 3]
    index = runner.read_portable_keys(tmp_path)
    assert _files(index) == sorted(p.stem for p in tmp_path.glob("*.json")) and len(index) == 4
    RUNS.clear()
    with run_context(resume_dir=tmp_path) as ctx:
        again = run_tasks(_tasks(_last_bits(data)), seed=5)  # other exact keys
    assert RUNS == [] and again.equals(first) and ctx.found_by_portable_key == ["mean 0", "mean 1", "mean 2", "mean 3"]
    assert runner.read_portable_keys(tmp_path) == index  # nothing new to record
    changed = data.copy()
    changed[1, 0] += 1e-6
    RUNS.clear()
    third = run_tasks(_tasks(changed), seed=5, resume_dir=tmp_path)
    assert RUNS == [1] and third.drop(index=1).equals(first.drop(index=1))
    index = runner.read_portable_keys(tmp_path)
    assert len(index) == 4 and len(_files(index)) == 5  # the changed task: a second entry, its own file
    old_file = next(
        f
        for f, sk in index[portable_task_key(_tasks(data)[1], 1, 5)]
        if sketches_match(sk, task_sketch(_tasks(data)[1]))
    )
    with run_context(resume_dir=tmp_path, saved_only=True) as ctx:
        run_tasks(_tasks(_last_bits(changed, 2)), seed=5)
    assert ctx.missing == [] and ctx.found == {p.stem for p in tmp_path.glob("*.json")} - {old_file}
    RUNS.clear()
    assert run_tasks(_tasks(_last_bits(data, 1)), seed=5, resume_dir=tmp_path).equals(first) and RUNS == []


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
    some, (key, sketch) = next(iter(ctx.portable_pairs.items()))
    assert runner.add_portable_keys(tmp_path, {some: ("f" * 24, sketch)}) == 0  # its file exists: kept
    (tmp_path / f"{key}.json").rename(tmp_path / "aside")
    assert runner.add_portable_keys(tmp_path, {some: ("f" * 24, sketch)}) == 1  # a lost file: replaced
    (tmp_path / "aside").rename(tmp_path / f"{key}.json")
    assert [f for f, _ in runner.read_portable_keys(tmp_path)[some]] == ["f" * 24]
    assert runner.add_portable_keys(tmp_path, {some: (key, sketch)}) == 1  # "f"*24 has no file: replaced again
    assert [f for f, _ in runner.read_portable_keys(tmp_path)[some]] == [key]
    other = tuple((v[0], -v[1], *v[2:]) for v in sketch)  # other data under the same portable key: a second entry
    assert runner.add_portable_keys(tmp_path, {some: ("e" * 24, other)}) == 1
    # both entries, sorted by file name (the key hashes this module's source, so its place varies)
    assert [f for f, _ in runner.read_portable_keys(tmp_path)[some]] == sorted(["e" * 24, key])
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
    with (
        pytest.raises(ValueError, match="pair_by_label=True needs saved_only=True"),
        run_context(resume_dir=tmp_path, pair_by_label=True),
    ):
        pass
    with (
        pytest.raises(TypeError, match="pair_by_label must be a bool, got int"),
        run_context(resume_dir=tmp_path, saved_only=True, pair_by_label=1),
    ):
        pass
    for text in (
        '{"keys": []}',
        '[1]',
        ('{"format": "pystanprivacy-portable-keys/2", "keys": {"p": [["f", ["x"]]]}, "sketches": {}}'),
    ):
        (tmp_path / PORTABLE_KEYS).write_text(text)
        with pytest.raises(ValueError, match="is not a portable-keys file"):
            runner.read_portable_keys(tmp_path)
    (tmp_path / PORTABLE_KEYS).write_text('{"format": "pystanprivacy-portable-keys/1", "keys": {"p1": "abc"}}')
    with pytest.warns(RuntimeWarning, match="older version .* scripts/portable_task_keys.py"):
        assert runner.read_portable_keys(tmp_path) == {}


def test_committed_kulkarni_regression_tasks_have_portable_keys():
    """Kulkarni et al.'s regression tasks take PCA features (LAPACK): their exact keys depend on
    the CPU, so every one of them must be in the committed portable-keys file."""
    tasks = REPO / "results" / "kulkarni2022" / ".tasks"
    index = runner.read_portable_keys(tasks)
    labels = {json.loads((tasks / f"{f}.json").read_text())["label"] for f in _files(index)}
    assert len(index) == len(_files(index)) == len(labels) == 392
    assert {lab.split()[0] for lab in labels} == {"figure4", "figure5"}


def _openblas_kernels() -> str | None:
    """An OpenBLAS kernel set other than the one this CPU picks (its ``OPENBLAS_CORETYPE``)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    return "Sandybridge"


@pytest.mark.skipif(_openblas_kernels() is None, reason="OPENBLAS_CORETYPE kernels named here are x86-64 ones")
def test_committed_kulkarni_tasks_are_found_under_other_blas_kernels(tmp_path):
    """The committed Kulkarni regression part (the tasks with PCA features) read back in a process
    whose OpenBLAS uses other kernels (``OPENBLAS_CORETYPE``: the PCA features differ in their last
    bits, so no exact key is saved): every task is found through its portable key, none is missing."""
    code = f"""
import json, pathlib
from pystanprivacy.experiments import kulkarni2022
from pystanprivacy.run.runner import run_context
tasks = pathlib.Path({str(REPO / "results" / "kulkarni2022" / ".tasks")!r})
with run_context(resume_dir=tasks, saved_only=True) as ctx:
    kulkarni2022.reproduce({str(tmp_path)!r}, quick=False, progress=False, parts=["regression"])
print(json.dumps({{"missing": len(ctx.missing), "found": sorted(ctx.found), "portable": ctx.found_by_portable_key}}))
"""
    env = {**os.environ, "OPENBLAS_CORETYPE": _openblas_kernels(), "OPENBLAS_VERBOSE": "0"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    saved = {
        p.stem
        for p in (REPO / "results" / "kulkarni2022" / ".tasks").glob("*.json")
        if json.loads(p.read_text())["label"].split()[0] in ("figure4", "figure5")
    }
    assert got["missing"] == 0 and set(got["found"]) == saved
    assert len(got["portable"]) == 392 and {lab.split()[0] for lab in got["portable"]} == {"figure4", "figure5"}


def test_script_records_the_committed_kulkarni_keys_again_by_label(tmp_path):
    """scripts/portable_task_keys.py on a copy of the committed Kulkarni tasks without their
    portable-keys file: every task is read (on a CPU whose exact keys differ, the regression
    tasks by label) and the index it writes holds the committed entries (the same files under
    the same portable keys, with matching sketches)."""
    import importlib.util
    import shutil

    spec = importlib.util.spec_from_file_location("portable_task_keys", REPO / "scripts" / "portable_task_keys.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    shutil.copytree(REPO / "results" / "kulkarni2022" / ".tasks", tmp_path / "kulkarni2022" / ".tasks")
    (tmp_path / "kulkarni2022" / ".tasks" / PORTABLE_KEYS).unlink()
    counts = script.record("kulkarni2022", pair_by_label=True, results=tmp_path)
    assert counts["missing"] == 0 and counts["added"] == counts["portable_keys"] == 392
    assert counts["files_read"] == len(list((tmp_path / "kulkarni2022" / ".tasks").glob("*.json")))
    again = runner.read_portable_keys(tmp_path / "kulkarni2022" / ".tasks")
    committed = runner.read_portable_keys(REPO / "results" / "kulkarni2022" / ".tasks")
    assert again.keys() == committed.keys()
    for p, entries in committed.items():
        assert [f for f, _ in again[p]] == [f for f, _ in entries]
        assert sketches_match(again[p][0][1], entries[0][1])
    with pytest.raises(FileNotFoundError, match="no saved tasks for paper='bernstein2018'"):
        script.record("bernstein2018", results=tmp_path)
