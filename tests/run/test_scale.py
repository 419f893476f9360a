"""Scale-out: the run context (executor + resume folder), atomic per-task result files,
resuming after kill -9, the same table on 1 process / a local pool / a Dask LocalCluster,
``--scheduler`` options and ``pystanprivacy reproduce all`` with its index."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy import cli
from pystanprivacy.run import runner
from pystanprivacy.run.runner import Task, run_context, run_tasks
from pystanprivacy.run.study import Study
from pystanprivacy.sampling.backends.base import PARALLEL_CHAINS_ENV, chain_process_cap, set_parallel_chains

#: the study of this file's task functions (every task function declares one: pystanprivacy.run.study)
STUDY = Study(name="tests/run/scale", version=1)

TESTS = Path(__file__).resolve().parent  # this test module (the child imports it)
REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- module-level (picklable) tasks
@STUDY.task()
def marked_task(*, i: int, log_dir: str, delay: float = 0.0, seed) -> pd.DataFrame:
    """Leaves a marker file per call (to count which tasks ran), sleeps, returns random floats."""
    Path(log_dir, f"ran-{i}-{os.getpid()}-{time.monotonic_ns()}").touch()
    time.sleep(delay)
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"i": [i, i], "u": rng.random(2), "label": [f"t{i}", "x"], "ok": [True, False]})


@STUDY.task()
def failing_task(*, i: int, seed) -> pd.DataFrame:
    if i == 1:
        raise ValueError("broken setting")
    return pd.DataFrame({"i": [i]})


def _ran(log_dir: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in log_dir.glob("ran-*"))


def _marked(n: int, log_dir: Path, delay: float = 0.0) -> list[Task]:
    return [Task(marked_task, {"i": i, "log_dir": str(log_dir), "delay": delay}, label=f"task {i}") for i in range(n)]


# ---------------------------------------------------------------- task result files
def test_result_file_round_trips_dtypes_and_floats_bit_exactly(tmp_path):
    frame = pd.DataFrame(
        {
            "x": [0.1, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1.7976931348623157e308],
            "n": np.arange(7, dtype=np.int64),
            "f32": np.linspace(0, 1, 7, dtype=np.float32),
            "b": [True, False] * 3 + [True],
            "s": pd.Series(["a", None, "c|d", "é", "", "x", "y"], dtype="str"),
            "o": pd.Series([None, 1, "a", 2.5, True, None, "z"], dtype=object),
        }
    )
    assert runner._save_result(tmp_path, "k1", frame, "demo", seconds=12.5)
    back, seconds = runner._load_result(tmp_path, "k1")
    assert seconds == 12.5
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    assert back["x"].to_numpy().view(np.uint64).tolist() == frame["x"].to_numpy().view(np.uint64).tolist()  # -0.0 too
    assert [p.name for p in tmp_path.iterdir()] == ["k1.json"]  # no temp file left
    # a table the format would not give back exactly is not saved (its task just runs again)
    odd = pd.DataFrame({"a": pd.Categorical(["b", "a"], categories=["b", "a"])})
    with pytest.warns(RuntimeWarning, match="task 'odd' cannot be saved exactly"):
        assert not runner._save_result(tmp_path, "k2", odd, "odd")
    with pytest.warns(RuntimeWarning, match="cannot be saved exactly"):
        assert not runner._save_result(tmp_path, "k3", pd.DataFrame({"a": [np.int64(1), (1, 2)]}, dtype=object), "t")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k1.json"]


def test_damaged_file_and_leftover_temp_file_are_ignored_and_removed(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    resume = tmp_path / "tasks"
    tasks = _marked(4, log)
    first = run_tasks(tasks, seed=5, resume_dir=resume, progress=False)
    keys = [runner.task_key(t, i, 5) for i, t in enumerate(tasks)]
    assert sorted(p.stem for p in resume.glob("*.json")) == sorted(keys)
    (resume / f"{keys[1]}.json").write_text('{"format": "pystanprivacy-task-result/1", "key": "')  # torn file
    leftover = resume / f".{keys[2]}.abc123.tmp"
    leftover.write_text("{half")
    for p in log.iterdir():
        p.unlink()
    with pytest.warns(RuntimeWarning, match="damaged task result file"):
        again = run_tasks(tasks, seed=5, resume_dir=resume, progress=False)
    assert _ran(log) == [1]  # only the task whose file was damaged ran again
    assert not leftover.exists()
    pd.testing.assert_frame_equal(again, first, check_exact=True)


def test_resume_runs_only_missing_tasks_and_keys_follow_content(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    resume = tmp_path / "tasks"
    whole = run_tasks(_marked(6, log), seed=11, stream="s", progress=False)
    assert _ran(log) == list(range(6))
    run_tasks(_marked(6, log)[:3], seed=11, stream="s", resume_dir=resume, progress=False)  # a prefix finished
    for p in log.iterdir():
        p.unlink()
    with cf.ThreadPoolExecutor(2) as ex:
        resumed = run_tasks(_marked(6, log), seed=11, stream="s", resume_dir=resume, executor=ex, progress=False)
    assert _ran(log) == [3, 4, 5]
    pd.testing.assert_frame_equal(resumed, whole, check_exact=True)
    # another seed, stream or argument is another task
    base = Task(marked_task, {"i": 0, "log_dir": "d"})
    k = runner.task_key(base, 0, 11, "s")
    assert k != runner.task_key(base, 0, 12, "s") != runner.task_key(base, 0, 11, "t")
    assert k != runner.task_key(base, 1, 11, "s")
    # arrays by content: these two have the same (elided) repr but differ in the middle
    a, b = np.zeros(5000), np.zeros(5000)
    b[2500] = 1.0
    assert repr(a) == repr(b)
    assert runner.task_key(Task(marked_task, {"x": a}), 0, 1) != runner.task_key(Task(marked_task, {"x": b}), 0, 1)
    with pytest.raises(ValueError, match="stable description"):
        runner.task_key(Task(marked_task, {"x": object()}), 0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="will not be saved"):
            run_tasks([Task(marked_task, {"i": 0, "log_dir": str(log), "x": object()})], seed=1, resume_dir=resume)


def test_saved_only_reads_the_saved_tasks_by_key_runs_nothing_and_leaves_the_folder_alone(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    resume = tmp_path / "tasks"
    whole = run_tasks(_marked(6, log), seed=11, stream="s", progress=False)
    run_tasks(_marked(6, log)[:3], seed=11, stream="s", resume_dir=resume, progress=False)  # a run in progress
    keys = [runner.task_key(t, i, 11, "s") for i, t in enumerate(_marked(6, log))]
    (resume / f"{keys[2]}.json").write_text('{"format": "pystanprivacy-task-result/1", "key": "')  # torn file
    in_flight = resume / f".{keys[3]}.abc123.tmp"  # the temp file of a task being written by the run
    in_flight.write_text("{half")
    for p in log.iterdir():
        p.unlink()
    with run_context(resume_dir=resume, saved_only=True) as ctx:
        with pytest.warns(RuntimeWarning, match="ignoring damaged task result file"):
            got = run_tasks(_marked(6, log), seed=11, stream="s", progress=False)
        other = run_tasks(_marked(2, log), seed=11, stream="t", progress=False)  # another stream: other keys
    assert _ran(log) == []  # nothing ran
    pd.testing.assert_frame_equal(got, whole.iloc[:4].reset_index(drop=True), check_exact=True)  # tasks 0 and 1
    assert other.empty
    assert ctx.missing == [f"task {i}" for i in (2, 3, 4, 5)] + ["task 0", "task 1"]
    assert ctx.found == set(keys[:2])  # the keys read (not the damaged file's), for naming orphaned files
    assert in_flight.exists() and (resume / f"{keys[2]}.json").exists()  # nothing deleted, nothing written
    assert sorted(p.name for p in resume.iterdir()) == sorted([f"{k}.json" for k in keys[:3]] + [in_flight.name])
    with pytest.raises(ValueError, match="saved_only=True needs a resume_dir"), run_context(saved_only=True):
        pass
    with pytest.raises(TypeError, match="saved_only must be a bool"), run_context(resume_dir=resume, saved_only="yes"):
        pass


def test_selected_tasks_run_as_the_whole_list_s_tasks_with_their_own_seeds_and_keys(tmp_path):
    """``selected_tasks`` runs only the kept tasks, each exactly as the whole run would (its seed,
    its key): a whole run reads them back, a selected run reads the whole run's, nothing twice."""
    log = tmp_path / "log"
    log.mkdir()
    resume = tmp_path / "tasks"
    whole = run_tasks(_marked(6, log), seed=11, stream="s", progress=False)  # no resume folder
    for p in log.iterdir():
        p.unlink()
    odd = lambda t: t.kwargs["i"] % 2 == 1
    with runner.selected_tasks(odd):
        got = run_tasks(_marked(6, log), seed=11, stream="s", resume_dir=resume, progress=False)
    assert _ran(log) == [1, 3, 5]
    pd.testing.assert_frame_equal(got, whole[whole["i"] % 2 == 1].reset_index(drop=True), check_exact=True)
    keys = [runner.task_key(t, i, 11, "s") for i, t in enumerate(_marked(6, log))]
    assert sorted(p.stem for p in resume.glob("*.json")) == sorted(keys[1::2])  # saved under the whole list's keys
    resumed = run_tasks(_marked(6, log), seed=11, stream="s", resume_dir=resume, progress=False)
    assert _ran(log) == [0, 1, 2, 3, 4, 5]  # the whole run ran only the even tasks
    pd.testing.assert_frame_equal(resumed, whole, check_exact=True)
    for p in log.iterdir():
        p.unlink()
    # nested filters keep what both keep; a saved_only reader sees (and misses) only the kept tasks
    with runner.selected_tasks(odd), runner.selected_tasks(lambda t: t.kwargs["i"] > 2):
        again = run_tasks(_marked(6, log), seed=11, stream="s", resume_dir=resume, progress=False)
    assert _ran(log) == [] and list(again["i"].unique()) == [3, 5]
    (resume / f"{keys[5]}.json").unlink()
    with run_context(resume_dir=resume, saved_only=True) as ctx, runner.selected_tasks(lambda t: t.kwargs["i"] >= 4):
        seen = run_tasks(_marked(6, log), seed=11, stream="s", progress=False)
    assert list(seen["i"].unique()) == [4] and ctx.missing == ["task 5"]
    with pytest.raises(TypeError, match="keep must be a callable"), runner.selected_tasks(3):
        pass


def test_sidecars_of_a_resumed_run_say_how_many_tasks_were_read_back(tmp_path):
    """A rerun that finds every task saved writes sidecars whose ``tasks`` say so (its ``seconds``
    are then the rebuild's, not the computation's) and carry the saved tasks' own seconds, so the
    study's task time survives resuming; outside a resume context there is no field."""
    import json

    log = tmp_path / "log"
    log.mkdir()
    out = tmp_path / "out"
    sidecars = []
    for attempt in range(2):
        with run_context(resume_dir=out / ".tasks"):
            table = run_tasks(_marked(4, log, delay=0.2), seed=3, stream="s", progress=False)
            runner.write_results(out, f"t{attempt}", table, {"seed": 3})
        sidecars.append(json.loads((out / f"t{attempt}.json").read_text())["tasks"])
    assert {k: sidecars[0][k] for k in ("run", "read", "read_seconds", "read_untimed")} == {
        "run": 4,
        "read": 0,
        "read_seconds": 0.0,
        "read_untimed": 0,
    }
    assert 0.8 <= sidecars[0]["run_seconds"] < 30  # four tasks that each sleep 0.2 s
    assert {k: sidecars[1][k] for k in ("run", "read", "run_seconds", "read_untimed")} == {
        "run": 0,
        "read": 4,
        "run_seconds": 0.0,
        "read_untimed": 0,
    }
    saved = sum(json.loads(p.read_text())["seconds"] for p in (out / ".tasks").glob("*.json"))
    assert sidecars[1]["read_seconds"] == round(saved, 1) == sidecars[0]["run_seconds"]
    assert sidecars[1]["resume_dir"] == str(out / ".tasks")
    # task files written before they recorded seconds still resume, and are counted as untimed
    for p in list((out / ".tasks").glob("*.json"))[:3]:
        payload = json.loads(p.read_text())
        del payload["seconds"]
        p.write_text(json.dumps(payload))
    with run_context(resume_dir=out / ".tasks"):
        again = run_tasks(_marked(4, log, delay=0.2), seed=3, stream="s", progress=False)
        runner.write_results(out, "t2", again, {"seed": 3})
    pd.testing.assert_frame_equal(again, table, check_exact=True)
    old = json.loads((out / "t2.json").read_text())["tasks"]
    assert (old["read"], old["read_untimed"], old["run"]) == (4, 3, 0)
    assert 0.2 <= old["read_seconds"] < sidecars[1]["read_seconds"]
    runner.write_results(tmp_path / "plain", "t", table, {"seed": 3})
    assert "tasks" not in json.loads((tmp_path / "plain" / "t.json").read_text())
    assert hash(runner.current_context()) == hash(runner.RunContext())  # still hashable


def test_run_context_sets_the_executor_of_make_executor_and_run_tasks(tmp_path):
    calls = []

    class Counting(cf.ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            calls.append(fn)
            return super().submit(fn, *args, **kwargs)

    log = tmp_path / "log"
    log.mkdir()
    with Counting(2) as ex, run_context(executor=ex) as ctx:
        assert runner.current_context() is ctx and ctx.resume_dir is None
        with runner.make_executor(3) as got:
            assert got is ex  # whatever workers an experiment asks for
        table = run_tasks(_marked(3, log), seed=2, progress=False)  # no executor passed: the context's
    assert len(calls) == 3 and runner.current_context().executor is None
    pd.testing.assert_frame_equal(table, run_tasks(_marked(3, log), seed=2, progress=False))
    with pytest.raises(TypeError, match="submit"), run_context(executor=object()):
        pass


# ---------------------------------------------------------------- kill -9 and resume
def slow_reproduce(out_dir, *, quick=True, seed=0, workers=1, progress=True):
    """A fake paper for the CLI: 8 sleeping tasks, one table."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = Path(os.environ["SCALE_TEST_LOG"])
    with runner.make_executor(workers) as ex:
        table = run_tasks(
            _marked(8, log, delay=0.6), seed=seed, stream="slow/table", workers=workers, executor=ex, progress=progress
        )
    runner.write_results(out, "slowpaper_table", table, {"seed": seed, "quick": quick})
    return {"table": table}


_CHILD = """
import sys
sys.path.insert(0, {tests!r})
import test_scale
from pystanprivacy import cli, experiments
test_scale.PAPER = "slowpaper"
test_scale.reproduce = test_scale.slow_reproduce
test_scale.DATA_HELP = test_scale.PARTS = None  # the paper protocol of pystanprivacy.experiments
experiments.PAPERS["slowpaper"] = "test_scale"
sys.exit(cli.main(["reproduce", "slowpaper", "--out", {out!r}, "--seed", "4", "--no-progress"]))
"""


def _child(out: Path, log: Path) -> list[str]:
    script = out.parent / f"child-{out.name}.py"
    script.write_text(textwrap.dedent(_CHILD.format(tests=str(TESTS), out=str(out))))
    return [sys.executable, str(script)]


def test_kill_9_then_the_same_command_finishes_only_the_missing_tasks(tmp_path):
    # the child process imports this module and runs slow_reproduce as paper "slowpaper"
    log = tmp_path / "log"
    log.mkdir()
    env = {
        **os.environ,
        "SCALE_TEST_LOG": str(log),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    out = tmp_path / "killed"
    tasks_dir = out / ".tasks"
    proc = subprocess.Popen(_child(out, log), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len(list(tasks_dir.glob("*.json"))) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no task finished in 120 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    saved = len(list(tasks_dir.glob("*.json")))
    assert 3 <= saved < 8, saved
    assert not (out / "slowpaper_table.csv").exists()
    before = set(log.iterdir())
    # the half-written temp file of the task in flight when the run was killed: ignored and removed
    in_flight = Task(marked_task, {"i": saved, "log_dir": str(log), "delay": 0.6})
    leftover = tasks_dir / f".{runner.task_key(in_flight, saved, 4, 'slow/table')}.x1y2z3.tmp"
    leftover.write_text('{"format": "pystanprivacy-task-result/1", "ke')
    done = subprocess.run(_child(out, log), env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"resuming: {saved} saved task result(s)" in done.stdout
    assert not leftover.exists() and len(list(tasks_dir.glob("*.json"))) == 8
    rerun = sorted(int(p.name.split("-")[1]) for p in set(log.iterdir()) - before)
    assert len(rerun) == 8 - saved and rerun == list(range(saved, 8))  # tasks run in order in one process
    # an uninterrupted run of the same command elsewhere gives the same table, byte for byte
    fresh = tmp_path / "fresh"
    whole = subprocess.run(_child(fresh, log), env=env, capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    assert (out / "slowpaper_table.csv").read_bytes() == (fresh / "slowpaper_table.csv").read_bytes()
    pd.testing.assert_frame_equal(
        pd.read_csv(out / "slowpaper_table.csv"), pd.read_csv(fresh / "slowpaper_table.csv"), check_exact=True
    )


def two_part_reproduce(out_dir, *, quick=True, seed=0, workers=1, progress=True, parts=("a", "b")):
    """A fake paper with two parts, each 6 sleeping tasks on its own seed stream, one table each."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = Path(os.environ["SCALE_TEST_LOG"])
    with runner.make_executor(workers) as ex:
        for part in parts:
            table = run_tasks(
                _marked(6, log, delay=0.2),
                seed=seed,
                stream=f"two/{part}",
                workers=workers,
                executor=ex,
                progress=progress,
            )
            runner.write_results(out, f"twopart_{part}", table, {"seed": seed, "part": part})
    return {}


_TWO_PART_CHILD = """
import sys
sys.path.insert(0, {tests!r})
import test_scale
from pystanprivacy import cli, experiments
test_scale.PAPER = "twopart"
test_scale.reproduce = test_scale.two_part_reproduce
test_scale.PARTS = ("a", "b")
test_scale.DATA_HELP = None
experiments.PAPERS["twopart"] = "test_scale"
sys.exit(cli.main(["reproduce", "twopart", "--out", {out!r}, "--seed", "4", "--no-progress", "--parts", {parts!r}]))
"""


def test_two_processes_run_two_parts_side_by_side_into_one_folder(tmp_path):
    """README "Parts side by side": two commands with --parts a and --parts b, at the same time,
    into one --out share its OUT/.tasks; a later command with both parts then runs nothing and
    writes the tables that one command running both parts writes elsewhere, byte for byte."""
    log = tmp_path / "log"
    log.mkdir()
    env = {
        **os.environ,
        "SCALE_TEST_LOG": str(log),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }

    def command(out: Path, parts: str) -> list[str]:
        script = tmp_path / f"child-{out.name}-{parts.replace(',', '')}.py"
        script.write_text(textwrap.dedent(_TWO_PART_CHILD.format(tests=str(TESTS), out=str(out), parts=parts)))
        return [sys.executable, str(script)]

    shared = tmp_path / "shared"
    procs = [
        subprocess.Popen(command(shared, p), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for p in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert len(list((shared / ".tasks").glob("*.json"))) == 12
    assert not list((shared / ".tasks").glob(".*.tmp"))
    for p in log.iterdir():
        p.unlink()
    both = subprocess.run(command(shared, "a,b"), env=env, capture_output=True, text=True, timeout=300)
    assert both.returncode == 0, both.stderr
    assert "resuming: 12 saved task result(s)" in both.stdout
    assert _ran(log) == []  # every task of both parts was read back
    fresh = tmp_path / "fresh"
    whole = subprocess.run(command(fresh, "a,b"), env=env, capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    assert len(_ran(log)) == 12
    for part in ("a", "b"):
        assert (shared / f"twopart_{part}.csv").read_bytes() == (fresh / f"twopart_{part}.csv").read_bytes()
    a, b = (pd.read_csv(fresh / f"twopart_{part}.csv") for part in ("a", "b"))
    assert not np.allclose(a["u"], b["u"])  # the parts draw from their own streams


# ---------------------------------------------------------------- command line
@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["reproduce", "foulds2016", "--scheduler", "tcp://127.0.0.1:8786", "--workers", "2"],
            "has the workers it was started with",
        ),
        (["reproduce", "foulds2016", "--scheduler", "somewhere"], "--scheduler must be 'local' or an address"),
        (["reproduce", "foulds2016", "--scheduler", "local", "--workers", "0"], "--workers must be >= 1"),
        (["reproduce", "foulds2016", "--fresh", "--no-resume"], "not allowed with argument"),
        (["reproduce", "foulds2016", "--parallel-chains", "0"], "--parallel-chains must be >= 1, got 0"),
        (["reproduce", "all", "--data", "x.csv"], "--data is not allowed with 'all'"),
        (["reproduce", "all", "--parts", "hmm"], "--parts is not allowed with 'all'"),
        (
            ["reproduce", "bernstein2018", "--parts", "hmm"],
            "bernstein2018 has the parts calibration, exponential_modes",
        ),
        (["reproduce", "foulds2016", "--parts", "hmm,nosuch"], "foulds2016 has the parts beta_bernoulli, hmm"),
        (
            ["reproduce", "jewson2023", "--parts", "attack,hmm"],
            "jewson2023 has the parts logistic, attack, nn_regression, nn_classification",
        ),
        (
            ["reproduce", "kulkarni2022", "--parts", "kosarak,hmm"],
            "kulkarni2022 has the parts calibration, histogram_rmse, kosarak, regression",
        ),
        (["reproduce", "nosuch"], "(or all)"),
    ],
)
def test_bad_scale_options_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def _recording_paper(seen: dict, name: str = "fakepaper"):
    def reproduce(out, *, quick, seed, workers, progress):
        ctx = runner.current_context()
        seen.update(out=Path(out), workers=workers, executor=ctx.executor, resume_dir=ctx.resume_dir)
        Path(out).mkdir(parents=True, exist_ok=True)
        return {}

    return types.SimpleNamespace(PAPER=name, reproduce=reproduce)


def test_parts_reach_the_paper(monkeypatch, tmp_path, capsys):
    seen: dict = {}

    def reproduce(out, *, quick, seed, workers, progress, parts=("a", "b")):
        seen.update(parts=parts, quick=quick)
        Path(out).mkdir(parents=True, exist_ok=True)
        return {}

    paper = types.SimpleNamespace(PAPER="fakepaper", PARTS=("a", "b"), reproduce=reproduce)
    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: paper)
    assert cli.main(["reproduce", "foulds2016", "--full", "--parts", "b", "--out", str(tmp_path), "--no-resume"]) == 0
    assert seen == {"parts": ("b",), "quick": False}
    assert cli.main(["reproduce", "foulds2016", "--parts", "b,a", "--out", str(tmp_path), "--no-resume"]) == 0
    assert seen["parts"] == ("b", "a")


class FakeClient:
    def nthreads(self):
        return {"tcp://a:1": 3, "tcp://b:1": 2}

    def submit(self, fn, *args, **kwargs):  # pragma: no cover - not called
        raise AssertionError


def test_scheduler_and_resume_options_reach_the_run_context(monkeypatch, tmp_path, capsys):
    import contextlib

    from pystanprivacy.run import cluster

    seen: dict = {}
    connected: list = []

    @contextlib.contextmanager
    def fake_connect(scheduler, *, workers=None, parallel_chains=None):
        connected.append((scheduler, workers) if parallel_chains is None else (scheduler, workers, parallel_chains))
        yield FakeClient()

    monkeypatch.setattr(cluster, "connect", fake_connect)
    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: _recording_paper(seen))
    out = tmp_path / "o"
    assert cli.main(["reproduce", "foulds2016", "--out", str(out), "--scheduler", "local", "--workers", "2"]) == 0
    assert connected == [("local", 2)] and isinstance(seen["executor"], FakeClient)
    assert seen["workers"] == 5 and seen["resume_dir"] == out / ".tasks"  # workers: the cluster's thread count
    assert "Dask cluster, 5 worker thread(s)" in capsys.readouterr().out
    assert cli.main(["reproduce", "foulds2016", "--out", str(out), "--scheduler", "tcp://10.0.0.5:8786"]) == 0
    assert connected[-1] == ("tcp://10.0.0.5:8786", None)
    monkeypatch.delenv(PARALLEL_CHAINS_ENV, raising=False)
    try:
        assert (
            cli.main(
                [
                    "reproduce",
                    "foulds2016",
                    "--out",
                    str(out),
                    "--scheduler",
                    "tcp://10.0.0.5:8786",
                    "--parallel-chains",
                    "1",
                ]
            )
            == 0
        )
        assert connected[-1] == ("tcp://10.0.0.5:8786", None, 1)
        # this process and the workers it starts (which inherit the variable) run one chain at a time
        assert chain_process_cap() == 1 and os.environ[PARALLEL_CHAINS_ENV] == "1"
    finally:
        set_parallel_chains(None)
        monkeypatch.delenv(PARALLEL_CHAINS_ENV, raising=False)
    assert cli.main(["reproduce", "foulds2016", "--out", str(out), "--workers", "3", "--no-resume"]) == 0
    assert seen["executor"] is None and seen["workers"] == 3 and seen["resume_dir"] is None
    (out / ".tasks").mkdir()
    (out / ".tasks" / "abc.json").write_text("{}")
    assert cli.main(["reproduce", "foulds2016", "--out", str(out)]) == 0
    assert "resuming: 1 saved task result(s)" in capsys.readouterr().out
    assert cli.main(["reproduce", "foulds2016", "--out", str(out), "--fresh"]) == 0
    assert not (out / ".tasks").exists() and seen["resume_dir"] == out / ".tasks"
    assert runner.current_context().executor is None  # nothing leaks out of a run


def test_missing_dask_names_the_scale_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: _recording_paper({}))
    with pytest.raises(SystemExit) as info:
        cli.main(["reproduce", "foulds2016", "--scheduler", "local"])
    assert "pip install 'pystanprivacy[scale]'" in str(info.value.code)


def _drawing_paper(name: str, *, fail: bool = False):
    def reproduce(out, *, quick, seed, workers, progress):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        if fail:
            raise ValueError("no data here")
        out = Path(out)
        log = out / "log"
        log.mkdir(parents=True, exist_ok=True)
        table = run_tasks(_marked(2, log), seed=seed, progress=progress)
        runner.write_results(out, f"{name}_table", table, {"seed": seed}, extra={"title": f"{name} | results"})
        runner.write_results(out, f"{name}_summary", table.head(1), {"seed": seed})
        fig, ax = plt.subplots()
        ax.plot([0, 1])
        fig.savefig(out / f"{name}_figure 1.png")
        plt.close(fig)
        return {"table": table}

    return types.SimpleNamespace(PAPER=name, reproduce=reproduce)


def test_reproduce_all_runs_every_paper_and_indexes_every_file(monkeypatch, tmp_path, capsys):
    from pystanprivacy import experiments

    papers = {
        "alpha": _drawing_paper("alpha"),
        "beta": _drawing_paper("beta"),
        "gamma": _drawing_paper("gamma", fail=True),
    }
    monkeypatch.setattr(experiments, "PAPERS", {k: f"fake.{k}" for k in papers})
    monkeypatch.setattr(experiments, "get_paper", lambda name: papers[name])
    root = tmp_path / "all"
    assert cli.main(["reproduce", "all", "--quick", "--out", str(root), "--no-progress"]) == 1  # gamma failed
    printed = capsys.readouterr()
    assert "FAILED gamma: ValueError: no data here" in printed.err
    index = (root / "index.md").read_text()
    assert str((root / "index.md").resolve()) in printed.out
    for paper in ("alpha", "beta"):
        assert (root / paper / ".tasks").is_dir()  # each paper resumable in its own folder
        files = [p for p in (root / paper).iterdir() if p.suffix in (".csv", ".png")]
        assert len(files) == 3
        for p in files:
            link = f"({paper}/{p.name.replace(' ', '%20')})"
            assert link in index, p
        assert f"| [{paper}](#{paper}) | done in" in index
    assert "alpha \\| results" in index  # the sidecar's title, table cell escaped
    assert "![alpha_figure 1](alpha/alpha_figure%201.png)" in index
    assert "| [gamma](#gamma) | **failed** |" in index and "Failed: `ValueError: no data here`" in index
    import re

    for target in re.findall(r"\]\(((?:alpha|beta)/[^)]+)\)", index):  # every link points at a file
        from urllib.parse import unquote

        assert (root / unquote(target)).is_file(), target
    del papers["gamma"]
    monkeypatch.setattr(experiments, "PAPERS", {k: f"fake.{k}" for k in papers})
    assert cli.main(["reproduce", "all", "--out", str(root), "--no-progress"]) == 0
    assert "gamma" not in (root / "index.md").read_text()


def test_unreachable_or_unusable_cluster_ends_with_a_message(monkeypatch, tmp_path):
    import contextlib

    from pystanprivacy.run import cluster

    @contextlib.contextmanager
    def refusing(scheduler, *, workers=None, parallel_chains=None):
        raise RuntimeError("1 Dask worker(s) run as daemonic processes (e.g. tcp://w:1)")
        yield  # pragma: no cover

    monkeypatch.setattr(cluster, "connect", refusing)
    monkeypatch.setattr("pystanprivacy.experiments.get_paper", lambda name: _recording_paper({}))
    with pytest.raises(SystemExit) as info:
        cli.main(["reproduce", "foulds2016", "--scheduler", "tcp://w:8786", "--out", str(tmp_path)])
    assert "daemonic" in str(info.value.code) and str(info.value.code).startswith("pystanprivacy: error:")
