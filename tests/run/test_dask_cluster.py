"""The same tables on one process, a local process pool and a real Dask ``LocalCluster``
(2 single-threaded worker processes), Stan fits on Dask workers, errors and cancellation.
One cluster for the module, closed at its end."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from pystanprivacy.experiments.bernstein2018 import study as bernstein2018
from pystanprivacy.experiments.foulds2016 import beta_bernoulli as foulds2016
from pystanprivacy.run import cluster, runner
from pystanprivacy.run.runner import Task, run_context, run_tasks
from pystanprivacy.run.study import Study
from pystanprivacy.sampling import checkpoints

#: the study of this file's task functions (every task function declares one: pystanprivacy.run.study)
STUDY = Study(name="tests/run/dask_cluster", version=1)


@STUDY.task()
def sleepy_or_failing(*, i: int, seed) -> pd.DataFrame:
    if i == 0:
        time.sleep(0.5)
        raise ValueError("broken setting")
    time.sleep(3.0)
    return pd.DataFrame({"i": [i]})


@STUDY.task()
def worker_pid(*, seed) -> pd.DataFrame:
    import os

    time.sleep(0.5)
    return pd.DataFrame({"pid": [os.getpid()], "u": [np.random.default_rng(seed).random()]})


@pytest.fixture(scope="module")
def dask_client():
    with cluster.connect("local", workers=2) as client:
        info = client.scheduler_info()["workers"]
        assert len(info) == 2 and all(w["nthreads"] == 1 for w in info.values())
        yield client


def _untimed(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=[c for c in table.columns if "seconds" in c])


def test_same_table_on_one_process_a_pool_and_a_local_cluster(dask_client):
    # numpy-only methods of the Bernstein-Sheldon calibration study (Gibbs sampler, naive,
    # non-private): 8 settings x 4 trials, short Gibbs chains; only the timing column differs between runs
    kw = dict(
        models=["binomial", "multinomial"],
        ns=[10, 100],
        epsilons=[0.1, 1.0],
        trials=4,
        gibbs={"chains": 2, "burnin": 50, "iterations": 100},
        mmd_draws=50,
        methods=(bernstein2018.GIBBS, bernstein2018.NAIVE, bernstein2018.NONPRIVATE),
        seed=3,
        progress=False,
    )
    one = _untimed(bernstein2018.calibration(**kw, workers=1))
    pool = _untimed(bernstein2018.calibration(**kw, workers=2))
    dask = _untimed(bernstein2018.calibration(**kw, executor=dask_client))
    assert len(one) == 8 * 4 * 3 and one["post_mean"].notna().any()
    pd.testing.assert_frame_equal(pool, one, check_exact=True)
    pd.testing.assert_frame_equal(dask, one, check_exact=True)
    # the same through run_context, as `pystanprivacy reproduce --scheduler` runs a paper
    with run_context(executor=dask_client), runner.make_executor(1) as ex:
        assert ex is dask_client
        via_context = _untimed(bernstein2018.calibration(**kw, workers=1, executor=ex))
    pd.testing.assert_frame_equal(via_context, one, check_exact=True)
    assert not _untimed(bernstein2018.calibration(**{**kw, "seed": 4}, executor=dask_client)).equals(one)


def test_tasks_spread_over_both_workers(dask_client):
    table = run_tasks([Task(worker_pid) for _ in range(6)], seed=0, executor=dask_client, progress=False)
    assert table["pid"].nunique() == 2
    pd.testing.assert_series_equal(table["u"], run_tasks([Task(worker_pid) for _ in range(6)], seed=0)["u"])


def test_stan_fits_run_on_dask_workers(dask_client, beta_bernoulli_model, beta_bernoulli_ops_model):
    # pystan starts a process pool per fit: possible only because connect() starts
    # non-daemonic workers. The models are compiled (once) by the fixtures; the workers load
    # them from the shared, locked cache.
    kw = dict(
        ns=[10, 30],
        repeats=3,
        methods=("laplace", "ops"),
        sampler=dict(chains=2, warmup=100, draws=100),
        ops_sampler=dict(chains=2, warmup=100, draws=100),
        diagnostics=False,
        seed=1,
        progress=False,
    )
    dask = _untimed(foulds2016.figure2(**kw, executor=dask_client))
    one = _untimed(foulds2016.figure2(**kw, workers=1))
    assert len(one) == 2 * 2 * 3
    pd.testing.assert_frame_equal(dask, one, check_exact=True)
    # each of the 2 one-thread workers ran its chains on its share of the CPUs, not on all of them
    share = runner.worker_chain_cap(os.cpu_count() or 1, 2)
    pystan = beta_bernoulli_model.backend.name == "pystan"
    assert set(dask_client.run(_chain_pool, pystan).values()) == {(share, share) if pystan else (share,)}


def _chain_pool(pystan: bool) -> tuple[int, ...]:
    """The worker's chain cap, and on pystan the size of httpstan's chain pool, which follows it.
    A cmdstanpy fit never uses that pool (its size there is httpstan's default, every CPU: the
    ``(1, 2)`` once seen with CmdStan): it hands the cap to cmdstanpy as ``parallel_chains``, the
    size of the thread pool that starts one CmdStan process per chain, so at most the cap of
    chain processes run at once (tests/sampling/test_cmdstanpy_backend_chains.py counts them)."""
    from pystanprivacy.sampling.backends.base import chain_process_cap

    if not pystan:
        return (chain_process_cap(),)
    import httpstan.services_stub as stub

    return chain_process_cap(), stub.executor._max_workers  # the pool a chain runs in


def test_failure_on_a_worker_names_the_task_and_cancels_the_rest(dask_client):
    tasks = [Task(sleepy_or_failing, {"i": i}, label=f"setting {i}") for i in range(8)]
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"task 0 \(setting 0\) failed: ValueError: broken setting"):
        run_tasks(tasks, seed=0, executor=dask_client, progress=False)
    assert time.perf_counter() - start < 3.0 * 4  # failed as soon as task 0 did, not after all 8
    deadline = time.monotonic() + 10
    while dask_client.processing() and any(dask_client.processing().values()):
        assert time.monotonic() < deadline, f"tasks still running after the failure: {dask_client.processing()}"
        time.sleep(0.2)


def test_resume_files_written_by_a_cluster_run_are_read_by_a_local_run(dask_client, tmp_path):
    tasks = [Task(worker_pid) for _ in range(4)]
    first = run_tasks(tasks, seed=9, executor=dask_client, resume_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("*.json"))) == 4
    again = run_tasks(tasks, seed=9, resume_dir=tmp_path, progress=False)  # nothing runs: same pids
    pd.testing.assert_frame_equal(again, first, check_exact=True)


def _set_min_seconds(seconds: float) -> None:
    """Run on each worker: the shortest fit it checkpoints."""
    from pystanprivacy.sampling import checkpoints

    checkpoints.MIN_SECONDS = seconds


def test_fits_are_checkpointed_and_replayed_on_a_cluster_on_this_host(dask_client, beta_bernoulli_model, tmp_path):
    """A local cluster's workers see the resume folder: a task interrupted on a worker leaves its
    finished fit there, the resumed task reads it back and its table is an uninterrupted run's."""
    from test_fit_checkpoints import two_fits

    from pystanprivacy.run.runner import CHECKPOINT_SUFFIX

    assert runner._dask_on_this_host(dask_client)
    flag = tmp_path / "stop"
    task = [Task(two_fits, {"stop_flag": str(flag)}, label="two fits")]
    uninterrupted = run_tasks(task, seed=5, progress=False)
    resume = tmp_path / ".tasks"
    flag.touch()
    dask_client.run(_set_min_seconds, 0.0)  # store these sub-second fits
    try:
        with pytest.raises(RuntimeError, match="interrupted"):
            run_tasks(task, seed=5, progress=False, resume_dir=resume, executor=dask_client)
    finally:
        dask_client.run(_set_min_seconds, checkpoints.MIN_SECONDS)  # the default, as in this process
    folders = list(resume.glob(f"*{CHECKPOINT_SUFFIX}"))
    assert len(folders) == 1 and len(list(folders[0].glob("*.npz"))) == 1  # the first fit, stored by a worker

    flag.unlink()
    resumed = run_tasks(task, seed=5, progress=False, resume_dir=resume, executor=dask_client)
    pd.testing.assert_frame_equal(resumed, uninterrupted, check_exact=True)
    assert not folders[0].exists()  # removed once the result was saved
    saved = json.loads(next(resume.glob("*.json")).read_text())
    assert saved["replayed_fits"] == 1 and saved["replayed_fit_seconds"] > 0


def test_no_checkpoints_when_a_worker_is_on_another_host():
    class Remote:
        def __init__(self, hosts):
            self.hosts = hosts

        def run(self, fn):
            if self.hosts is None:
                raise OSError("scheduler gone")
            return {f"tcp://w{i}:1": h for i, h in enumerate(self.hosts)}

    here = runner._hostname()
    assert runner._dask_on_this_host(Remote([here, here]))
    assert not runner._dask_on_this_host(Remote([here, "node-7"]))
    assert not runner._dask_on_this_host(Remote([]))
    assert not runner._dask_on_this_host(Remote(None))


def test_workers_are_checked_for_what_pystan_needs(dask_client):
    # connect()'s local workers: non-daemonic, no statistical profiler
    info = cluster._check_workers(dask_client)
    assert len(info) == 2 and not any(i["daemon"] or i["profile"] for i in info.values())

    class Fake:
        def __init__(self, **item):
            self.item = {
                "daemon": False,
                "version": info[next(iter(info))]["version"],
                "host": "h",
                "cpus": 2,
                "profile": False,
                **item,
            }

        def run(self, fn):
            return {"tcp://w:1": dict(self.item)}

    assert cluster._check_workers(Fake())["tcp://w:1"]["cpus"] == 2
    with pytest.raises(RuntimeError, match="run as daemonic processes"):
        cluster._check_workers(Fake(daemon=True))
    # Dask's profiler holds running frames; pystan's simdjson parser then fails at random on large fits
    with pytest.raises(RuntimeError, match="DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"):
        cluster._check_workers(Fake(profile=True))
    with pytest.raises(RuntimeError, match="install the same version"):
        cluster._check_workers(Fake(version="0.0.0"))


def test_connect_rejects_bad_arguments():
    with pytest.raises(ValueError, match="only for scheduler='local'"), cluster.connect("tcp://127.0.0.1:1", workers=2):
        pass
    with pytest.raises(ValueError, match="address such as"), cluster.connect("nonsense"):
        pass
    with (
        pytest.raises(ValueError, match="parallel_chains must be an int >= 1 or None"),
        cluster.connect("local", workers=1, parallel_chains=0),
    ):
        pass
