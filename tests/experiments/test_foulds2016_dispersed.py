"""F5/F8 from dispersed starts (pystanprivacy.experiments.foulds2016.dispersed)."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.foulds2016.dispersed import (
    chain_states,
    dispersed_task,
    entry_shares,
    summarise_dispersed,
)
from pystanprivacy.experiments.foulds2016.hmm import synthetic_dataset


def test_chain_states_use_one_chains_draws_only():
    rng = np.random.default_rng(0)
    prob = rng.dirichlet(np.ones(3), size=(6, 2, 4))  # (S, R, T, K): draws 0-2 chain 0, 3-5 chain 1
    chain = np.repeat([0, 1], 3)
    draws = types.SimpleNamespace(state_prob=prob, z=None, chain=chain, n_states=3)
    for c in (0, 1):
        expected = np.array(
            [[np.argmax(sum(prob[s, r, t] for s in range(6) if chain[s] == c)) for t in range(4)] for r in range(2)]
        )
        np.testing.assert_array_equal(chain_states(draws, c), expected)
    z = np.array([[[0, 1]], [[0, 2]], [[1, 2]], [[2, 2]]])  # OPS: z draws (S, R, T), chain 0 = draws 0, 1
    ops = types.SimpleNamespace(state_prob=None, z=z, chain=np.array([0, 0, 1, 1]), n_states=3)
    np.testing.assert_array_equal(chain_states(ops, 0), [[0, 1]])  # tie 1 vs 2 goes to the lower state
    np.testing.assert_array_equal(chain_states(ops, 1), [[1, 2]])


def test_entry_shares_weight_cells_by_their_entries():
    states = np.array([[0, 0, 2], [2, 1, 0]])
    entries = np.array([[10, 30, 5], [5, 0, 50]])
    np.testing.assert_allclose(entry_shares(states, entries, 4), [90 / 100, 0.0, 10 / 100, 0.0])


def test_summary_lists_every_mode_with_its_chains():
    table = pd.DataFrame(
        {
            "dataset": "d",
            "method": "laplace",
            "n_states": 3,
            "n_modes": 2,
            "rhat_log_lik": 1.8,
            "chain": [1, 2, 3, 4],
            "start": ["best EM", "EM", "k-means", "prior draw"],
            "mode": [1, 1, 2, 1],
            "mean_log_lik": [-10.0, -12.0, -50.0, -11.0],
            "agreement": [0.9, 0.92, 0.5, 0.91],
            "states_substantial": [3, 3, 2, 3],
        }
    )
    out = summarise_dispersed(table)
    assert out["mode"].tolist() == [1, 2]
    assert out.loc[0, "chains"] == "1 (best EM) 2 (EM) 4 (prior draw)" and out.loc[0, "mean_log_lik"] == -11.0
    assert out.loc[0, "agreement"] == "0.900–0.920" and out.loc[1, "states_substantial"] == "2–2"


def test_one_fit_reports_every_chain():
    counts, truth = synthetic_dataset("iraq", seed=np.random.default_rng(5), n_months=24, median_records=150)
    table = dispersed_task(
        counts=counts,
        truth=truth,
        dataset="toy",
        method="non-private",
        n_states=2,
        epsilon=5.0,
        multiplier=None,
        sampler={"chains": 3, "warmup": 150, "draws": 100},
        seed=2,
    )
    assert table["chain"].tolist() == [1, 2, 3]
    assert table["start"].tolist() == ["best EM", "EM", "k-means"]
    assert table["agreement"].between(0, 1).all() and (table["states_used"] <= 2).all()
    assert table["mode"].between(1, table["n_modes"].iloc[0]).all()
    with pytest.raises(ValueError, match="epsilon"):
        dispersed_task(
            counts=counts,
            truth=truth,
            dataset="toy",
            method="laplace",
            n_states=2,
            epsilon=-1.0,
            multiplier=None,
            sampler={"chains": 2, "warmup": 10, "draws": 10},
        )
