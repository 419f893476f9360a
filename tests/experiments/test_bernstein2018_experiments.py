"""The Bernstein & Sheldon (2018) experiment module: the per-setting calibration table, its
summaries, the figures and reproduce()'s files, on a tiny configuration."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.bernstein2018 import figures
from pystanprivacy.experiments.bernstein2018 import study as exp


@pytest.fixture(scope="module")
def tiny_table():
    return exp.calibration(
        models=("binomial", "multinomial", "exponential"),
        ns=(30,),
        epsilons=(0.5,),
        trials=12,
        stan={"chains": 2, "warmup": 150, "draws": 150},
        gibbs={"chains": 2, "burnin": 100, "iterations": 200},
        mmd_draws=40,
        seed=3,
        progress=False,
    )


def test_calibration_table_is_long_and_complete(tiny_table):
    t = tiny_table
    assert list(t.columns) == exp._COLUMNS
    per_model = t.groupby("model")["method"].agg(lambda m: set(m)).to_dict()
    assert per_model["binomial"] == {exp.STAN, exp.GIBBS, exp.NAIVE, exp.OPS, exp.NONPRIVATE}
    assert per_model["multinomial"] == {exp.STAN, exp.GIBBS, exp.NAIVE, exp.NONPRIVATE}
    assert per_model["exponential"] == {exp.STAN, exp.GIBBS, exp.NAIVE, exp.NAIVE_TRUNCATED, exp.NONPRIVATE}
    assert (t.groupby(["model", "method"]).size() == 12).all()
    assert t["u"].between(0, 1).all()
    # the true theta is the same for every method of a trial
    assert (t.groupby(["model", "trial"])["theta"].nunique() == 1).all()
    # MMD only for the binomial and multinomial, and only for the noise-aware and naive methods
    has_mmd = t.dropna(subset=["mmd2"])
    assert set(has_mmd["model"]) == {"binomial", "multinomial"}
    assert set(has_mmd["method"]) == set(exp.MMD_METHODS)
    # diagnostics only for the sampled posteriors
    assert set(t.dropna(subset=["rhat"])["method"]) == {exp.STAN, exp.GIBBS}


def test_same_seed_same_table():
    args = dict(
        model="binomial",
        n=20,
        epsilon=1.0,
        trials=5,
        stan={"chains": 1, "warmup": 100, "draws": 100},
        gibbs={"chains": 1, "burnin": 50, "iterations": 100},
        methods=(exp.STAN, exp.GIBBS, exp.OPS),
        mmd=False,
    )
    a = exp.calibration_task(**args, seed=np.random.SeedSequence(7))
    b = exp.calibration_task(**args, seed=np.random.SeedSequence(7))
    pd.testing.assert_frame_equal(a.drop(columns="run_seconds"), b.drop(columns="run_seconds"))


def test_summaries_and_figures(tiny_table, tmp_path):
    summary = exp.summarise_calibration(tiny_table)
    assert {"ks", "critical", "calibrated", "trials", "rhat_above_1_01"} <= set(summary.columns)
    assert (summary["trials"] == 12).all()
    mmd = exp.summarise_mmd(tiny_table)
    assert set(mmd["method"]) == set(exp.MMD_METHODS) and (mmd["trials"] == 12).all()
    for fn, arg, name in ((figures.figure1a, summary, "a.png"), (figures.figure1c, mmd, "c.png")):
        fn(arg, tmp_path / name)
        assert (tmp_path / name).stat().st_size > 10_000
    fig = figures.figure1b(tiny_table, tmp_path / "b.png", n=30, epsilon=0.5)
    assert (tmp_path / "b.png").stat().st_size > 10_000
    assert len(fig.axes) == 3 and next(ax.get_title() for ax in fig.axes) == "binomial, n = 30, ε = 0.5"
    with pytest.raises(ValueError, match=r"Figure 1a needs columns .*missing \['critical', 'ks'\]"):
        figures.figure1a(tiny_table)
    with pytest.warns(DeprecationWarning, match="figures.figure1c"):
        assert exp.plot_figure1c is figures.figure1c


def test_bad_arguments():
    with pytest.raises(
        ValueError, match="model must be one of \\['binomial', 'multinomial', 'exponential'\\], got 'poisson'"
    ):
        exp.calibration_task(model="poisson", n=10, epsilon=1.0, trials=5, stan={}, gibbs={})
    with pytest.raises(ValueError, match="unknown method\\(s\\) \\['magic'\\]"):
        exp.calibration_task(model="binomial", n=10, epsilon=1.0, trials=5, stan={}, gibbs={}, methods=("magic",))
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0, got 0"):
        exp.calibration_task(model="binomial", n=10, epsilon=0, trials=5, stan={}, gibbs={})


def test_reproduce_writes_tables_sidecars_and_figures(tmp_path, monkeypatch):
    tiny = {
        "ns": (20,),
        "epsilons": (1.0,),
        "trials": 6,
        "stan": {"chains": 2, "warmup": 100, "draws": 100},
        "gibbs": {"chains": 2, "burnin": 50, "iterations": 100},
        "mmd_draws": 30,
    }
    monkeypatch.setattr(exp, "QUICK", tiny)
    # part calibration alone (part exponential_modes has its own test: test_bernstein2018_exponential_modes.py)
    tables = exp.reproduce(tmp_path, quick=True, seed=5, workers=1, progress=False, parts=("calibration",))
    assert set(tables) == {"calibration", "calibration_summary", "mmd_summary"}
    for name in tables:
        csv = tmp_path / f"bernstein2018_{name}.csv"
        meta = json.loads((tmp_path / f"bernstein2018_{name}.json").read_text())
        assert len(pd.read_csv(csv)) == len(tables[name])
        assert meta["args"]["seed"] == 5 and meta["args"]["trials"] == 6 and meta["args"]["quick"] is True
        assert "versions" in meta and "stan_backend" in meta
    for fig in ("figure1a", "figure1b", "figure1c"):
        assert (tmp_path / f"bernstein2018_{fig}.png").stat().st_size > 10_000
