"""The runner: per-task seeds from one root seed (same table whatever the number of
workers), task order, executors, errors, progress, and the CSV + JSON sidecar files."""

from __future__ import annotations

import concurrent.futures as cf
import json
import time

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.run import runner
from pystanprivacy.run.runner import Task, run_tasks, task_seeds, write_results
from pystanprivacy.run.study import Study

#: the study of this file's task functions (every task function declares one: pystanprivacy.run.study)
STUDY = Study(name="tests/run/runner", version=1)


# Module-level (picklable) tasks: spawned worker processes import this module by name.
@STUDY.task()
def cheap_task(*, setting: int, repeats: int, seed) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"setting": setting, "repeat": np.arange(repeats), "value": rng.normal(size=repeats)})


@STUDY.task()
def sleepy_task(*, setting: int, delay: float, seed) -> pd.DataFrame:
    time.sleep(delay)
    return pd.DataFrame({"setting": [setting], "u": [np.random.default_rng(seed).random()]})


@STUDY.task()
def failing_task(*, setting: int, seed) -> pd.DataFrame:
    if setting == 2:
        raise ValueError("boom")
    return pd.DataFrame({"setting": [setting]})


@STUDY.task()
def not_a_frame(*, seed):
    return [1, 2]


def _tasks(n: int = 6, repeats: int = 5) -> list[Task]:
    return [Task(cheap_task, {"setting": i, "repeats": repeats}, label=f"setting {i}") for i in range(n)]


def test_same_seed_same_table_with_one_and_two_workers():
    one = run_tasks(_tasks(), seed=123, workers=1, progress=False)
    two = run_tasks(_tasks(), seed=123, workers=2, progress=False)
    pd.testing.assert_frame_equal(one, two)
    assert list(one["setting"]) == [i for i in range(6) for _ in range(5)]  # task order, long format
    assert one.index.equals(pd.RangeIndex(30))
    other = run_tasks(_tasks(), seed=124, workers=1, progress=False)
    assert not np.allclose(one["value"], other["value"])


def test_tasks_get_independent_seeds_from_seedsequence_spawn():
    table = run_tasks(_tasks(n=3, repeats=4), seed=7, workers=1, progress=False)
    children = np.random.SeedSequence([7, 0]).spawn(3)
    for i, child in enumerate(children):
        expected = np.random.default_rng(child).normal(size=4)
        np.testing.assert_array_equal(table.loc[table["setting"] == i, "value"].to_numpy(), expected)
    # same (seed, stream) -> same children however often asked; streams differ
    a, b = task_seeds(7, 3), task_seeds(7, 3)
    assert [s.generate_state(2).tolist() for s in a] == [s.generate_state(2).tolist() for s in b]
    c = task_seeds(7, 3, stream="foulds2016/figure2")
    assert a[0].generate_state(2).tolist() != c[0].generate_state(2).tolist()


def test_results_in_task_order_even_when_later_tasks_finish_first():
    tasks = [Task(sleepy_task, {"setting": i, "delay": d}) for i, d in enumerate([0.3, 0.0, 0.15, 0.0])]
    with cf.ThreadPoolExecutor(max_workers=4) as ex:
        threaded = run_tasks(tasks, seed=1, executor=ex, progress=False)
    assert list(threaded["setting"]) == [0, 1, 2, 3]
    inline = run_tasks(tasks, seed=1, workers=1, progress=False)
    pd.testing.assert_frame_equal(threaded, inline)  # any Executor gives the same table


def test_shared_executor_from_make_executor():
    with runner.make_executor(1) as ex:
        assert ex is None  # workers=1: in-process, no pool
    with runner.make_executor(2) as ex:
        assert isinstance(ex, cf.ProcessPoolExecutor)
        first = run_tasks(_tasks(n=2), seed=5, executor=ex, progress=False)
        second = run_tasks(_tasks(n=2), seed=5, executor=ex, progress=False)
    pd.testing.assert_frame_equal(first, second)


def test_failing_task_is_named():
    tasks = [Task(failing_task, {"setting": i}, label=f"setting {i}") for i in range(4)]
    with pytest.raises(RuntimeError, match=r"task 2 \(setting 2\) failed: ValueError: boom"):
        run_tasks(tasks, seed=0, workers=1, progress=False)
    with pytest.raises(RuntimeError, match="must return a pandas DataFrame"):
        run_tasks([Task(not_a_frame)], seed=0, progress=False)


def test_task_and_argument_validation():
    with pytest.raises(TypeError, match="module-level function"):
        Task(lambda seed: pd.DataFrame())
    with pytest.raises(ValueError, match="must not contain 'seed'"):
        Task(cheap_task, {"seed": 1})
    with pytest.raises(ValueError, match="workers must be an int >= 1"):
        run_tasks(_tasks(), seed=0, workers=0)
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        run_tasks(_tasks(), seed=-1)
    with pytest.raises(TypeError, match="seed must be"):
        run_tasks(_tasks(), seed=1.5)
    assert run_tasks([], seed=0).empty


def test_no_progress_bar_without_a_terminal(capsys):
    run_tasks(_tasks(n=2), seed=0, progress=True)  # stderr is captured: not a TTY
    assert capsys.readouterr().err == ""
    assert runner._progress_enabled(False) is False


def test_write_results_csv_and_sidecar(tmp_path):
    table = run_tasks(_tasks(n=2, repeats=3), seed=42, progress=False)
    args = {"seed": 42, "repeats": 3, "ns": (10, 100), "epsilon": 0.1, "sampler": {"chains": 2}, "inf": float("inf")}
    csv_path, json_path = write_results(tmp_path / "out", "demo", table, args)
    assert csv_path == tmp_path / "out" / "demo.csv" and json_path == tmp_path / "out" / "demo.json"
    pd.testing.assert_frame_equal(pd.read_csv(csv_path), table)
    meta = json.loads(json_path.read_text())
    assert meta["seed"] == 42
    assert meta["args"] == {
        "seed": 42,
        "repeats": 3,
        "ns": [10, 100],
        "epsilon": 0.1,
        "sampler": {"chains": 2},
        "inf": "inf",
    }
    for pkg in ("python", "numpy", "pandas", "scipy", "arviz"):
        assert meta["versions"][pkg], pkg
    assert meta["versions"]["numpy"] == np.__version__
    assert meta["versions"]["pystan"] or meta["versions"]["cmdstanpy"]
    backend = meta["stan_backend"]
    assert backend["name"] in ("pystan", "cmdstanpy") and backend["version_tag"]
    assert meta["rows"] == 6 and meta["columns"] == list(table.columns)
    with pytest.raises(ValueError, match="plain file name"):
        write_results(tmp_path, "../escape", table, args)
    with pytest.raises(TypeError, match="DataFrame"):
        write_results(tmp_path, "x", table.to_dict(), args)


def test_to_jsonable_handles_numpy_and_seedsequences():
    ss = np.random.SeedSequence(3)
    out = runner.to_jsonable({"a": np.int64(2), "b": np.array([1.5, np.nan]), "c": ss, "d": {1, 2}})
    assert out == {"a": 2, "b": [1.5, "nan"], "c": {"entropy": 3, "spawn_key": []}, "d": [1, 2]}
    json.dumps(out)


# --------------------------------------------------------------------------- killed runs
_POOL_CHILD = r"""
import json, os, sys
from pathlib import Path

from pystanprivacy import runner


def fit(marker):
    from pystanprivacy.sampling.backends.pystan_backend import PystanBackend
    from pystanprivacy.sampling.stan import StanModel

    original = PystanBackend.run

    def run(self, handle, data, settings, workdir):
        (Path(workdir) / "data.json").write_text(json.dumps(dict(data)))
        print("workdir", os.getpid(), workdir, flush=True)
        return original(self, handle, data, settings, workdir)

    PystanBackend.run = run
    StanModel.get(os.environ["HOSTILE_MODEL"]).sample(
        {"mode": 0, "N": 2, "x": [marker, 1.5]}, chains=1, warmup=100, draws=10**7, seed=1)


if __name__ == "__main__":
    with runner.make_executor(2) as pool:
        pool.submit(fit, float(sys.argv[1])).result()
"""


def test_pool_workers_end_their_fits_when_the_run_is_killed(tmp_path):
    """SIGKILL of the process that made the pool (a killed ``reproduce``): its pool workers
    get SIGTERM, so a fit under way removes its private directory (with the data) and its
    chain processes end, instead of fitting on for nobody."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from pystanprivacy.sampling.backends import select_backend

    if select_backend().name != "pystan" or not Path("/proc/self/task").is_dir():
        pytest.skip("pystan backend on Linux")
    script = tmp_path / "run.py"
    script.write_text(_POOL_CHILD)
    hostile = Path(__file__).parents[1] / "stan" / "hostile_reject.stan"
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "HOSTILE_MODEL": str(hostile),
        "PYSTANPRIVACY_BACKEND": "pystan",
    }
    proc = subprocess.Popen(
        [sys.executable, str(script), "73519.3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        cwd=tmp_path,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("workdir "), proc.stderr.read()[-3000:]
        worker, workdir = int(line.split()[1]), Path(line.split()[2])
        time.sleep(1.0)
        chains = [int(c) for t in Path(f"/proc/{worker}/task").iterdir() for c in (t / "children").read_text().split()]
        assert chains and workdir.is_dir()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

        def running(pid):
            try:
                return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            except OSError:
                return False

        deadline = time.monotonic() + 20
        while (running(worker) or any(map(running, chains)) or workdir.exists()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(worker), "the pool worker fitted on after the run was killed"
        assert not any(map(running, chains)), "a chain process outlived the run"
        assert not workdir.exists(), "the worker's fit directory (with the data) is left behind"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
