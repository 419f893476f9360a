"""The Kulkarni et al. (2022) experiments (distribution half) on tiny sizes: the tables,
their summaries, the files written by ``reproduce`` and the hand-over to the regression
half."""

from __future__ import annotations

import hashlib
import json
import sys
import types

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments import get_paper
from pystanprivacy.experiments.kulkarni2022 import study as k22

TINY_SAMPLER = {"chains": 2, "warmup": 150, "draws": 200}
TINY = {
    "sampler": TINY_SAMPLER,
    "gaussian": {"epsilons": (1.0,), "n_users": 200, "repeats": 2, "batch": 2},
    "exponential": {"epsilons": (1.0,), "n_users": 200, "repeats": 2, "batch": 2},
    "histogram": {"epsilons": (1.0,), "n_users": 200, "repeats": 2, "batch": 2, "d": 4},
    "rmse": {"ns": (100, 1000), "epsilons": (0.5,), "repeats": 3},
    "kosarak": {"epsilons": (2.0,), "repeats": 2, "top": 20, "n_records": 500},
}


def test_registered():
    assert get_paper("kulkarni2022").reproduce is k22.reproduce  # the package re-exports the study's reproduce


def test_ecdf_l1():
    a = np.array([0.0, 1.0])
    assert k22.ecdf_l1(a, a) == 0.0
    # a = {0}, b = {1}: at the pooled point 0 the ECDFs are 1 and 0, at 1 both are 1
    assert k22.ecdf_l1(np.array([0.0]), np.array([1.0])) == pytest.approx(0.5)


def test_histogram_rmse_task_compares_posterior_mean_and_projection():
    t = k22.histogram_rmse_task(n_users=2000, epsilon=1.0, repeats=3, sampler=TINY_SAMPLER, seed=1)
    assert set(t["method"]) == {"posterior mean", "projected OUE estimate"}
    assert len(t) == 6 and (t["rmse"] < 0.2).all()
    est = t[[f"est_{k}" for k in range(3)]].to_numpy()
    assert np.allclose(est.sum(axis=1), 1.0)
    s = k22.summarise_histogram_rmse(t)
    assert set(s.columns) >= {"rmse", "unusable", "misordered", "bad"}


def _write_kosarak_file(path, n_sessions=3000, n_items=60, seed=0):
    """A small file in the Kosarak format: one session per line, space-separated item ids
    (Zipf-like popularity), item ids 1000 + k so they cannot be confused with categories."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_items + 1)
    p /= p.sum()
    lines = [
        " ".join(str(1000 + i) for i in np.unique(rng.choice(n_items, size=rng.integers(1, 6), p=p)))
        for _ in range(n_sessions)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_reproduce_takes_data_path_for_the_kosarak_study():
    import inspect

    # the CLI passes --data PATH as data_path= when reproduce has that parameter
    param = inspect.signature(k22.reproduce).parameters["data_path"]
    assert param.default is None and param.kind is inspect.Parameter.KEYWORD_ONLY


def test_reproduce_fails_fast_on_a_missing_data_path(tmp_path, monkeypatch):
    monkeypatch.setattr(k22, "calibration", lambda **kw: pytest.fail("ran an experiment before checking data_path"))
    with pytest.raises(FileNotFoundError, match="kosarak.dat"):
        k22.reproduce(tmp_path / "out", data_path=tmp_path / "no_such_folder", progress=False)
    assert not (tmp_path / "out").exists()


def test_reproduce_writes_tables_figures_and_calls_the_regression_half(tmp_path, monkeypatch):
    monkeypatch.setattr(k22, "QUICK", TINY)
    kosarak = _write_kosarak_file(tmp_path / "my_clicks.dat")
    calls = []
    fake = types.ModuleType("fake_kulkarni2022_regression")
    fake.reproduce = lambda out, **kw: calls.append((out, kw)) or {"figure4": pd.DataFrame({"x": [1]})}
    monkeypatch.setitem(sys.modules, "fake_kulkarni2022_regression", fake)
    monkeypatch.setattr(k22, "REGRESSION_MODULE", "fake_kulkarni2022_regression")
    monkeypatch.delenv("PYSTANPRIVACY_DATA", raising=False)
    # the study's own parts (the supplementary ones read the real regression half's files; tested apart)
    parts = ("calibration", "histogram_rmse", "kosarak", "regression")
    tables = k22.reproduce(tmp_path, quick=True, seed=3, workers=1, progress=False, data_path=kosarak, parts=parts)
    for name in (
        "calibration",
        "calibration_summary",
        "histogram_rmse",
        "histogram_rmse_summary",
        "kosarak",
        "kosarak_summary",
    ):
        assert (tmp_path / f"kulkarni2022_{name}.csv").is_file()
        meta = json.loads((tmp_path / f"kulkarni2022_{name}.json").read_text())
        assert meta["args"]["seed"] == 3 if "args" in meta else True
    for fig in ("calibration", "histogram_rmse", "kosarak"):
        assert (tmp_path / f"kulkarni2022_{fig}.png").stat().st_size > 1000
    cal = tables["calibration"]
    assert set(cal["model"]) == {"gaussian", "exponential", "histogram"}
    assert set(cal[cal["model"] == "histogram"]["parameter"]) == {f"theta[{k}]" for k in range(4)}
    assert cal[[c for c in cal.columns if c.startswith("covered_")]].dtypes.map(lambda d: d == bool).all()
    # nested intervals: covered at 50 % implies covered at 95 %
    assert (~cal["covered_50"] | cal["covered_95"]).all()
    # the Figure 2 study ran on the given file (its records: every session of the file that
    # clicked one of the 10 chosen items, at most n_records = 500), and its sidecar says which
    kos = tables["kosarak"]
    assert set(kos["source"]) == {"kosarak"} and set(kos["dimension"]) == set(range(10))
    assert kos["n_records"].nunique() == 1 and 100 <= kos["n_records"].iloc[0] <= 500
    meta = json.loads((tmp_path / "kulkarni2022_kosarak.json").read_text())["args"]
    assert meta["sources"] == ["kosarak"] and meta["kosarak_file"] == kosarak.name and meta["data"] == "real"
    assert meta["kosarak_sha256"] == hashlib.sha256(kosarak.read_bytes()).hexdigest()
    assert meta["transactions"] == 3000 and meta["prefix"] is True and meta["records"] == kos["n_records"].iloc[0]
    assert meta["data_note"] == "real Kosarak, a prefix: its first 3,000 of 990,002 transactions"
    assert len(calls) == 1 and calls[0][1] == {"quick": True, "seed": 3, "workers": 1, "progress": False}
    assert "figure4" in tables


def test_regression_half_is_skipped_only_when_the_module_itself_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(k22, "REGRESSION_MODULE", "pystanprivacy.experiments._no_such_regression_half")
    assert k22.run_regression_half(tmp_path, quick=True) == {}
    # a module that exists but fails on a missing dependency must not be skipped silently
    (tmp_path / "broken_k22_regression.py").write_text("import no_such_dependency_k22\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(k22, "REGRESSION_MODULE", "broken_k22_regression")
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_k22"):
        k22.run_regression_half(tmp_path, quick=True)


def test_parts_run_only_the_parts_named(tmp_path, monkeypatch):
    """--parts histogram_rmse,regression: the histogram RMSE study and the regression half run,
    calibration and Kosarak do not; the part's table is the one the whole run writes (its own
    seed stream)."""
    monkeypatch.setattr(k22, "QUICK", TINY)
    ran = []
    monkeypatch.setattr(k22, "calibration", lambda **kw: pytest.fail("calibration ran"))
    monkeypatch.setattr(k22, "kosarak_ecdf", lambda **kw: pytest.fail("the Kosarak study ran"))
    monkeypatch.setattr(k22, "run_regression_half", lambda out, **kw: ran.append(kw) or {})
    tables = k22.reproduce(tmp_path, quick=True, seed=3, progress=False, parts=("histogram_rmse", "regression"))
    assert set(tables) == {"histogram_rmse", "histogram_rmse_summary"} and len(ran) == 1
    assert sorted(p.name for p in tmp_path.glob("*.csv")) == [
        "kulkarni2022_histogram_rmse.csv",
        "kulkarni2022_histogram_rmse_summary.csv",
    ]
    alone = k22.reproduce(tmp_path / "alone", quick=True, seed=3, progress=False, parts=("histogram_rmse",))
    pd.testing.assert_frame_equal(
        alone["histogram_rmse"].drop(columns=["stan_seconds"]), tables["histogram_rmse"].drop(columns=["stan_seconds"])
    )
    assert len(ran) == 1  # without "regression" the regression half is not called


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"parts": ("calibration", "nosuch")},
            r"parts must be a non-empty subset of \('calibration', 'histogram_rmse'",
        ),
        ({"parts": ()}, "parts must be a non-empty subset"),
        ({"parts": ("calibration",), "data_path": "kosarak.dat"}, "it needs 'kosarak' in parts"),
    ],
)
def test_bad_parts_fail_before_any_experiment(tmp_path, monkeypatch, kwargs, message):
    monkeypatch.setattr(k22, "calibration", lambda **kw: pytest.fail("ran an experiment"))
    with pytest.raises(ValueError, match=message):
        k22.reproduce(tmp_path / "out", progress=False, **kwargs)
    assert not (tmp_path / "out").exists()


def test_calibration_read_back_of_unsaved_tasks_is_empty_and_names_every_task(tmp_path):
    """A saved-only read of calibration tasks none of which is saved (all stale, say) returns an
    empty table, with no Stan run, and names every task as missing, so a part with more
    models goes on to read theirs (test_committed_results counts the stale files of each)."""
    from pystanprivacy.run.runner import run_context

    with run_context(resume_dir=tmp_path / ".tasks", saved_only=True) as ctx:
        table = k22.calibration(model="gaussian", epsilons=(0.5, 2.0), n_users=50, repeats=3, batch=2)
    assert table.empty
    expected = [f"calibration gaussian eps={e} batch {b}" for e in (0.5, 2.0) for b in (0, 1)]
    assert ctx.missing == expected
