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
    reference_agreement,
    summarise_dispersed,
)
from pystanprivacy.experiments.foulds2016.hmm import synthetic_dataset
from pystanprivacy.sampling.modes import MODE_RANGE, POSTERIOR_MODE_MASS


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


def _v2(method, states, modes, log_liks, substantial, weights, *, reliable):
    """A version-2 fit on logs without true states (as the diary): one row per chain."""
    return pd.DataFrame(
        {
            "dataset": "afghanistan",
            "method": method,
            "n_states": 3,
            "n_modes": len(set(modes)),
            "rhat_log_lik": 1.5,
            "chain": range(1, len(states) + 1),
            "start": ["best EM", "EM", "k-means", "prior draw"][: len(states)],
            "mode": modes,
            "mean_log_lik": log_liks,
            "agreement": np.nan,
            "states_substantial": substantial,
            "states": states,
            "mode_weight": [weights[m - 1] for m in modes],
            "mode_log_mass": [np.log(weights[m - 1]) for m in modes],
            "mode_log_mass_sd": 0.1,
            "masses_reliable": reliable,
        }
    )


def test_summary_weighs_each_modes_agreement_and_states_by_its_mass_or_gives_their_range():
    """Without true states the reference is the non-private fit's best chain (highest mean
    log-likelihood: "0011"); by hand, Laplace's chains agree with it in 4/4 ("2200" relabels to
    it), 3/4 ("0012", "1101" relabelled) and mode 2 in 2/4 ("0101"). Mode 1 (chains 1, 2) then
    agrees 0.875, mode 2 0.5: weighted 0.9 and 0.1 that is 0.8375; with unreliable masses only
    the range [0.5, 0.875]. Substantial states: mode 1 mean 2.5, mode 2 3."""
    nonprivate = _v2("non-private", ["0011", "1100"], [1, 2], [-10.0, -30.0], [2, 2], [0.6, 0.4], reliable=True)
    laplace = _v2(
        "laplace", ["2200", "0012", "0101"], [1, 1, 2], [-20.0, -21.0, -60.0], [2, 3, 3], [0.9, 0.1], reliable=True
    )
    agree = reference_agreement(pd.concat([nonprivate, laplace], ignore_index=True))
    np.testing.assert_allclose(agree.to_numpy(), [1.0, 1.0, 1.0, 0.75, 0.5])
    out = summarise_dispersed(pd.concat([nonprivate, laplace], ignore_index=True))
    lap = out.loc[out["method"] == "laplace"]
    assert lap["mode_agreement"].tolist() == pytest.approx([0.875, 0.5])
    first = lap.iloc[0]
    assert first["estimate"] == POSTERIOR_MODE_MASS and first["reference"] == "non-private fit's best chain"
    assert first["agreement_posterior"] == pytest.approx(0.9 * 0.875 + 0.1 * 0.5)
    assert (first["agreement_low"], first["agreement_high"]) == pytest.approx((0.5, 0.875))
    assert first["substantial_posterior"] == pytest.approx(0.9 * 2.5 + 0.1 * 3.0)
    unsure = summarise_dispersed(pd.concat([nonprivate, laplace.assign(masses_reliable=False)], ignore_index=True))
    row = unsure.loc[unsure["method"] == "laplace"].iloc[0]
    assert row["estimate"] == MODE_RANGE and np.isnan(row["agreement_posterior"])
    assert (row["agreement_low"], row["agreement_high"]) == pytest.approx((0.5, 0.875))
    assert (row["substantial_low"], row["substantial_high"]) == pytest.approx((2.5, 3.0))


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
    # every mode's posterior mass (weights over the modes found sum to 1), the chain's states kept
    weights = table.groupby("mode")["mode_weight"].first()
    assert len(weights) == table["n_modes"].iloc[0] and weights.sum() == pytest.approx(1.0)
    assert table["states"].str.len().eq(truth.size).all() and table["states"].str.fullmatch("[01]+").all()
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
