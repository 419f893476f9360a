"""Stan fit checkpoints of a running task (:mod:`pystanprivacy.sampling.checkpoints`): a task
interrupted after some of its fits resumes from them and gives, bit for bit, the table of an
uninterrupted run; the checkpoints go when the task's result is saved. One small cached model
(``foulds2016/beta_bernoulli``), fits of a second or less."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.run.runner import CHECKPOINT_SUFFIX, Task, make_executor, run_tasks
from pystanprivacy.run.study import Study
from pystanprivacy.sampling import checkpoints
from pystanprivacy.sampling.backends.base import RawFit, SamplerSettings
from pystanprivacy.sampling.checkpoints import FitCheckpoints, active_checkpoints, fit_checkpoints

#: the study of this file's task functions (every task function declares one: pystanprivacy.run.study)
STUDY = Study(name="tests/run/fit_checkpoints", version=1)


@STUDY.task(programs=("foulds2016/beta_bernoulli",))
def two_fits(*, stop_flag: str, seed) -> pd.DataFrame:
    """Two seeded beta-Bernoulli fits with random data between them; raises after the first
    while ``stop_flag`` exists (an interruption)."""
    from pystanprivacy.sampling.stan import StanModel

    rng = np.random.default_rng(seed)
    model = StanModel.get("foulds2016/beta_bernoulli")
    rows = []
    for k in range(2):
        ones = rng.integers(0, 50, size=3).astype(float)
        data = {"R": 3, "successes": ones, "failures": 50.0 - ones, "prior_alpha": 1.0, "prior_beta": 1.0}
        post = model.sample(data, chains=2, warmup=200, draws=200, seed=rng)
        rows.append({"fit": k, "p_mean": float(post.draws("p").mean()), "next_uniform": float(rng.random())})
        if k == 0 and Path(stop_flag).exists():
            raise RuntimeError("interrupted")
    return pd.DataFrame(rows)


def test_an_interrupted_task_resumes_after_its_finished_fit(tmp_path, beta_bernoulli_model, monkeypatch):
    monkeypatch.setattr(checkpoints, "MIN_SECONDS", 0.0)  # store these sub-second fits (in-process run)
    flag = tmp_path / "stop"
    task = [Task(two_fits, {"stop_flag": str(flag)}, label="two fits")]
    uninterrupted = run_tasks(task, seed=5, progress=False)  # no resume folder: no checkpoints

    resume = tmp_path / ".tasks"
    flag.touch()
    with pytest.raises(RuntimeError, match="interrupted"):
        run_tasks(task, seed=5, progress=False, resume_dir=resume)
    folders = list(resume.glob(f"*{CHECKPOINT_SUFFIX}"))
    assert len(folders) == 1 and len(list(folders[0].glob("*.npz"))) == 1  # the first fit, stored
    assert stat.S_IMODE(folders[0].stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folders[0].iterdir())

    flag.unlink()  # resumed in the studies' shared pool (make_executor; a new process): it finds the stored fit too
    with make_executor(2) as pool:
        resumed = run_tasks(task, seed=5, progress=False, resume_dir=resume, executor=pool)
    pd.testing.assert_frame_equal(resumed, uninterrupted, check_exact=True)
    assert not folders[0].exists()  # removed once the result was saved
    saved = json.loads(next(resume.glob("*.json")).read_text())
    assert saved["replayed_fits"] == 1 and saved["replayed_fit_seconds"] > 0

    # read back from the result file now: nothing is run, nothing checkpointed
    again = run_tasks(task, seed=5, progress=False, resume_dir=resume)
    pd.testing.assert_frame_equal(again, uninterrupted, check_exact=True)
    assert not list(resume.glob(f"*{CHECKPOINT_SUFFIX}"))


def test_quick_fits_are_not_stored_and_a_task_without_replays_records_none(tmp_path, beta_bernoulli_model):
    flag = tmp_path / "stop"
    flag.touch()
    resume = tmp_path / ".tasks"
    task = [Task(two_fits, {"stop_flag": str(flag)})]
    with pytest.raises(RuntimeError, match="interrupted"):  # its sub-second fit is under MIN_SECONDS
        run_tasks(task, seed=1, progress=False, resume_dir=resume)
    assert not list(resume.glob(f"*{CHECKPOINT_SUFFIX}/*.npz"))
    flag.unlink()
    run_tasks(task, seed=1, progress=False, resume_dir=resume)
    saved = json.loads(next(resume.glob("*.json")).read_text())
    assert "replayed_fits" not in saved and not list(resume.glob(f"*{CHECKPOINT_SUFFIX}"))


def _raw(seed: int = 0) -> RawFit:
    rng = np.random.default_rng(seed)
    return RawFit(
        variables={"theta": rng.normal(size=(2, 5, 3)), "lp": rng.normal(size=(2, 5))},
        sampler={"lp__": rng.normal(size=(2, 5)), "n_leapfrog__": rng.integers(1, 9, size=(2, 5)) * 1.0},
    )


def test_store_round_trips_exactly_and_drops_damaged_files(tmp_path):
    store = FitCheckpoints(tmp_path / "fits", min_seconds=1.0)
    raw = _raw()
    assert not store.save("quick", raw, 0.5) and not (tmp_path / "fits").exists()
    assert store.save("k", raw, 1.25)
    got, elapsed = store.load("k")
    assert elapsed == 1.25 and list(got.variables) == ["theta", "lp"] and list(got.sampler) == ["lp__", "n_leapfrog__"]
    for a, b in [
        *zip(got.variables.values(), raw.variables.values()),
        *zip(got.sampler.values(), raw.sampler.values()),
    ]:
        np.testing.assert_array_equal(a, b)
    assert (store.replayed, store.replayed_seconds) == (1, 1.25)
    assert store.load("other") is None and store.replayed == 1
    (tmp_path / "fits" / "k.npz").write_bytes(b"not a zip")
    assert store.load("k") is None and not (tmp_path / "fits" / "k.npz").exists()
    store.remove()
    assert not (tmp_path / "fits").exists()


def test_key_changes_with_the_program_the_data_and_the_settings():
    data = {"N": 3, "y": np.array([0.0, 1.0, 2.0])}
    settings = SamplerSettings(chains=2, warmup=10, draws=10, seed=7)
    base = FitCheckpoints.key("m-abc", data, settings)
    assert base == FitCheckpoints.key("m-abc", {"y": data["y"].copy(), "N": 3}, SamplerSettings(2, 10, 10, 7))
    assert base != FitCheckpoints.key("m-abd", data, settings)
    assert base != FitCheckpoints.key("m-abc", {"N": 3, "y": np.array([0.0, 1.0, 2.0 + 1e-12])}, settings)
    assert base != FitCheckpoints.key("m-abc", data, SamplerSettings(chains=2, warmup=10, draws=10, seed=8))
    assert base != FitCheckpoints.key(
        "m-abc", data, SamplerSettings(chains=2, warmup=10, draws=10, seed=7, adapt_delta=0.9)
    )
    assert FitCheckpoints.key("m-abc", {"f": object()}, settings) is None  # no stable description: not stored


def test_checkpoints_are_active_only_inside_the_block(tmp_path):
    assert active_checkpoints() is None
    with fit_checkpoints(tmp_path / "f") as store:
        assert active_checkpoints() is store
    assert active_checkpoints() is None


class _OutsideExecutor:
    """An executor that is not a concurrent.futures one (like a Dask client): runs in place."""

    def submit(self, fn, *args, **kwargs):
        import concurrent.futures as cf

        fut = cf.Future()
        fut.set_result(fn(*args, **kwargs))
        return fut


def test_no_checkpoints_on_an_outside_executor(tmp_path, beta_bernoulli_model, monkeypatch):
    monkeypatch.setattr(checkpoints, "MIN_SECONDS", 0.0)
    flag = tmp_path / "stop"
    flag.touch()
    resume = tmp_path / ".tasks"
    with pytest.raises(RuntimeError, match="interrupted"):
        run_tasks(
            [Task(two_fits, {"stop_flag": str(flag)})],
            seed=2,
            progress=False,
            resume_dir=resume,
            executor=_OutsideExecutor(),
        )
    assert not list(resume.glob(f"*{CHECKPOINT_SUFFIX}"))


def test_a_network_task_replays_its_fits_exactly(tmp_path, monkeypatch):
    """The path the long runs take: Jewson et al.'s network task (beta-D releases through the
    convergence gate, the non-private fit; DP-SGD when installed) run twice on the same
    checkpoints gives the same table but for its seconds, every Stan fit read back the second time."""
    from pystanprivacy.experiments.jewson2023.networks import neural_task

    monkeypatch.setattr(checkpoints, "MIN_SECONDS", 0.0)
    kw = dict(
        task="regression",
        dataset="simulated",
        n_obs=100,
        epsilons=[0.5, 5.0],
        repeat=0,
        data_seed=np.random.SeedSequence(11),
        sampler={"chains": 2, "warmup": 150, "draws": 100},
    )
    with fit_checkpoints(tmp_path) as first:
        a = neural_task(**kw, seed=np.random.SeedSequence(3))
    with fit_checkpoints(tmp_path) as second:
        b = neural_task(**kw, seed=np.random.SeedSequence(3))
    stored = len(list(tmp_path.glob("*.npz")))
    assert first.replayed == 0 and stored == 3 and second.replayed == 3  # 2 releases + the non-private fit
    cols = [c for c in a.columns if c != "seconds"]
    pd.testing.assert_frame_equal(a[cols], b[cols], check_exact=True)
