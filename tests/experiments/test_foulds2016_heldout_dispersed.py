"""F6 from dispersed starts (pystanprivacy.experiments.foulds2016.heldout_dispersed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import digamma

from pystanprivacy.experiments.foulds2016.heldout_dispersed import (
    heldout_dispersed_task,
)
from pystanprivacy.experiments.foulds2016.heldout_dispersed_summary import summarise_heldout_dispersed
from pystanprivacy.experiments.foulds2016.hmm import heldout_masks, synthetic_dataset


def _fit(method, values, modes, log_liks):
    return pd.DataFrame(
        {
            "dataset": "d",
            "split": 0,
            "epsilon": 1.0,
            "method": method,
            "chain": range(1, len(values) + 1),
            "heldout_per_entry": values,
            "mode": modes,
            "n_modes": len(set(modes)),
            "mean_log_lik": log_liks,
            "rhat_log_lik": 1.5,
        }
    )


def test_summary_compares_best_modes_pooled_fits_and_every_chain_pair():
    lap = _fit("laplace", [-5.00, -5.02, -5.30], [1, 1, 2], [-100.0, -101.0, -900.0])
    # OPS: its best mode (highest mean log-likelihood) is mode 2, chain 3 alone
    ops = _fit("ops", [-5.10, -5.12, -5.04], [1, 1, 2], [-300.0, -301.0, -200.0])
    out = summarise_heldout_dispersed(pd.concat([lap, ops])).iloc[0]
    assert out["best_mode_difference"] == pytest.approx(-5.01 - -5.04)
    assert out["laplace_best_mode_chains"] == 2 and out["ops_best_mode_chains"] == 1
    assert out["pooled_difference"] == pytest.approx(np.mean([-5.00, -5.02, -5.30]) - np.mean([-5.10, -5.12, -5.04]))
    assert out["min_difference"] == pytest.approx(-5.30 - -5.04)
    assert (out["laplace_chains_min"], out["laplace_chains_max"]) == pytest.approx((-5.30 - -5.04, -5.00 - -5.04))
    assert (out["ops_chains_min"], out["ops_chains_max"]) == pytest.approx((-5.01 - -5.04, -5.01 - -5.12))
    assert out["max_difference"] == pytest.approx(-5.00 - -5.12)
    assert not out["holds_in_every_mode"]  # Laplace's minor mode is behind every OPS chain
    assert out["laplace_chain_spread"] == pytest.approx(0.30) and out["ops_chain_spread"] == pytest.approx(0.08)
    ahead = summarise_heldout_dispersed(pd.concat([lap.assign(heldout_per_entry=[-5.0, -5.0, -5.01]), ops])).iloc[0]
    assert ahead["holds_in_every_mode"] and ahead["min_difference"] == pytest.approx(0.03)


@pytest.fixture(scope="module")
def toy():
    counts, _ = synthetic_dataset("iraq", seed=np.random.default_rng(5), n_months=24, median_records=150)
    mask = heldout_masks(*counts.cell_totals.shape, fraction=0.1, seed=1)[0]
    return counts, mask


def test_each_chains_heldout_score_matches_the_dirichlet_closed_form(toy):
    """One state (naive Bayes), non-private: theta's posterior is Dirichlet(1 + training counts) per
    feature, so the expected held-out log-likelihood is sum_c sum_j n_cj (psi(1 + N_j) - psi(K_d + N_d)).
    Its posterior sd per entry is 0.0035 here; a 100-draw chain mean (ESS about 100) has Monte Carlo
    sd about 0.00035, so 0.002 is about 6 of them (false-rejection rate below 1e-8 per chain)."""
    counts, mask = toy
    n = counts.counts.astype(float)
    N = n[~mask].sum(axis=0)
    elog = np.empty_like(N)
    for block in counts.feature_slices.values():
        elog[block] = digamma(1 + N[block]) - digamma(N[block].size + N[block].sum())
    expected = (n[mask] @ elog).sum() / counts.cell_totals[mask].sum()
    table = heldout_dispersed_task(
        counts=counts,
        dataset="toy",
        split=0,
        heldout=mask,
        method="non-private",
        epsilon=1.0,
        n_states=1,
        sampler={"chains": 3, "warmup": 100, "draws": 100},
        seed=3,
    )
    assert table["chain"].tolist() == [1, 2, 3] and table["start"].tolist() == ["best EM", "EM", "k-means"]
    np.testing.assert_allclose(table["heldout_per_entry"], expected, atol=0.002)
    assert table["stacking_weight"].sum() == pytest.approx(1.0)
    # the stacked predictive is a log of a mean, so (Jensen) at least the mean of the logs
    assert table["stacked_lpd_per_entry"].iloc[0] >= table["heldout_per_entry"].min() - 0.002
    assert table["heldout_entries"].iloc[0] == counts.cell_totals[mask].sum()


def test_an_ops_fit_scores_every_chain_and_the_released_draw(toy):
    counts, mask = toy
    table = heldout_dispersed_task(
        counts=counts,
        dataset="toy",
        split=0,
        heldout=mask,
        method="ops",
        epsilon=5.0,
        n_states=2,
        multiplier=10.0,
        sampler={"chains": 2, "warmup": 60, "draws": 40},
        seed=4,
    )
    assert len(table) == 2 and table["multiplier"].eq(10.0).all() and table["stacking_weight"].isna().all()
    assert np.isfinite(table["released_per_entry"]).all() and table["released_per_entry"].nunique() == 1
    # a released draw's score is a log-probability of every held-out entry: below 0, above the
    # uniform guess over each feature's categories
    uniform = -sum(np.log(s) for s in counts.feature_sizes)
    assert (table["heldout_per_entry"] < 0).all() and (table["heldout_per_entry"] > uniform).all()
    with pytest.raises(ValueError, match="method"):
        heldout_dispersed_task(counts=counts, dataset="toy", split=0, heldout=mask, method="gibbs", epsilon=1.0)
