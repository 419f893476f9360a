"""The 10-state occupancy claim of Foulds et al. (2016), Sec. 5 (experiments/foulds2016/occupancy.py):
the per-state counts against a hand-computed table, and a miniature run that writes every
table and figure from the logs of the states study."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.foulds2016 import hmm
from pystanprivacy.experiments.foulds2016 import occupancy as occ
from pystanprivacy.run.runner import root_sequence


def _cells(states, entries, **fit):
    return pd.DataFrame(
        {
            "state": states,
            "n_entries": entries,
            "converged_invariant": True,
            "seconds": 1.0,
            "dataset": "d",
            "method": "laplace",
            "epsilon": 5.0,
            "multiplier": np.nan,
            "n_states": 4,
            **fit,
        }
    )


def test_occupancy_counts_by_hand():
    """Four cells in states 1, 1, 2, 3 of a 4-state model with 10, 20, 65 and 5 entries:
    state 2 holds 65 %, state 1 30 %, state 3 5 % and state 4 nothing."""
    table = occ.occupancy_table(
        pd.concat([_cells([1, 1, 2, 3], [10, 20, 65, 5]), _cells([4, 4], [3, 1], method="non-private", epsilon=np.inf)])
    )
    lap = table[table["method"] == "laplace"]
    assert lap["state"].tolist() == [2, 1, 3, 4] and lap["rank"].tolist() == [1, 2, 3, 4]
    assert lap["cells"].tolist() == [1, 2, 1, 0] and lap["entries"].tolist() == [65, 30, 5, 0]
    np.testing.assert_allclose(lap["entry_share"], [0.65, 0.30, 0.05, 0.0])
    np.testing.assert_allclose(lap["cell_share"], [0.25, 0.5, 0.25, 0.0])
    summary = occ.summarise_occupancy(table).set_index("method")
    assert summary.loc["laplace", "states_used"] == 3 and summary.loc["laplace", "states_substantial"] == 3
    shares = np.array([0.65, 0.30, 0.05])
    assert summary.loc["laplace", "effective_states"] == pytest.approx(np.exp(-np.sum(shares * np.log(shares))))
    assert summary.loc["non-private", "states_used"] == 1 and summary.loc["non-private", "effective_states"] == 1
    assert occ.summarise_occupancy(table, threshold=0.1).set_index("method").loc["laplace", "states_substantial"] == 2
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\), got 1.5"):
        occ.summarise_occupancy(table, threshold=1.5)


TINY_LOGS = {"afghanistan": {"n_months": 12, "median_records": 40}}


def test_miniature_reproduce_uses_the_states_study_logs(nb_hmm_model, nb_hmm_ops_model, tmp_path, monkeypatch):
    monkeypatch.setitem(hmm.QUICK, "datasets", TINY_LOGS)
    monkeypatch.setattr(occ, "QUICK", {"epsilons": (5.0,), "sampler": {"chains": 2, "warmup": 60, "draws": 40}})
    tables = occ.reproduce(tmp_path, quick=True, seed=3, progress=False)
    table, summary = tables["occupancy"], tables["occupancy_summary"]
    for name in ("occupancy", "occupancy_summary"):
        sidecar = json.loads((tmp_path / f"foulds2016_hmm_{name}.json").read_text())
        assert sidecar["seed"] == 3 and sidecar["args"]["n_states"] == 10
    assert (tmp_path / "foulds2016_hmm_occupancy.png").stat().st_size > 10_000
    from pystanprivacy.experiments.foulds2016 import hmm_figures

    fig = hmm_figures.occupancy(tables["occupancy"])  # one bar group per fit, a bar per state
    assert [len(c) for c in fig.axes[0].containers] == [10, 10, 10]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "non-private",
        "Laplace mechanism, ε = 5",
        "OPS (one draw), ε = 5, M = 100",
    ]
    assert sorted(summary["method"]) == ["laplace", "non-private", "ops"]
    # the logs of the states study (same seed stream): every fit counts all their entries once
    counts, _ = hmm.synthetic_dataset(
        "afghanistan",
        seed=np.random.default_rng(root_sequence(3, f"{hmm.NAME}/data/afghanistan")),
        **TINY_LOGS["afghanistan"],
    )
    totals = table.groupby("method")["entries"].sum()
    assert (totals == int(counts.cell_totals.sum())).all()
    assert (table.groupby("method")["rank"].max() == 10).all()
    np.testing.assert_allclose(table.groupby("method")["entry_share"].sum(), 1.0)
    assert summary["states_used"].between(1, 10).all()
    assert (summary["states_substantial"] <= summary["states_used"]).all()


def test_reproduce_on_a_war_logs_file(nb_hmm_model, nb_hmm_ops_model, tmp_path, monkeypatch):
    """--data PATH: the 10-state fits run on the file's logs (no truth), through the
    foulds2016 entry point with parts=("hmm_occupancy",) alone."""
    from pathlib import Path

    from pystanprivacy.experiments import foulds2016

    monkeypatch.setattr(occ, "QUICK", {"epsilons": (5.0,), "sampler": {"chains": 2, "warmup": 60, "draws": 40}})
    path = Path(__file__).parents[1] / "data" / "warlogs_iraq_small.csv"
    tables = foulds2016.reproduce(
        tmp_path, quick=True, seed=1, progress=False, data_path=path, parts=("hmm_occupancy",)
    )
    assert set(tables) == {"hmm_occupancy", "hmm_occupancy_summary"}
    assert set(tables["hmm_occupancy"]["dataset"]) == {"iraq"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "foulds2016_hmm_occupancy.csv",
        "foulds2016_hmm_occupancy.json",
        "foulds2016_hmm_occupancy.png",
        "foulds2016_hmm_occupancy_summary.csv",
        "foulds2016_hmm_occupancy_summary.json",
    ]
    with pytest.raises(ValueError, match="needs 'hmm' or 'hmm_occupancy' in parts"):
        foulds2016.reproduce(tmp_path / "bad", quick=True, data_path=path, parts=("beta_bernoulli",))
