"""F6 from dispersed starts (pystanprivacy.experiments.foulds2016.heldout_dispersed)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import digamma

from pystanprivacy.experiments.foulds2016 import heldout_dispersed as hd
from pystanprivacy.experiments.foulds2016 import occupancy, supplementary
from pystanprivacy.experiments.foulds2016.heldout_dispersed import (
    fit_estimates,
    heldout_dispersed_task,
)
from pystanprivacy.experiments.foulds2016.heldout_dispersed_summary import summarise_heldout_dispersed
from pystanprivacy.experiments.foulds2016.hmm import heldout_masks, synthetic_dataset
from pystanprivacy.sampling.modes import MODE_RANGE, POSTERIOR_MODE_MASS


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


def test_fit_estimates_pool_each_modes_draws_and_weigh_the_modes_by_mass():
    """Two chains in mode 0, one in mode 1; by hand: each mode's mean and log of the mean
    likelihood over its pooled draws, the posterior as sum_m w_m mean_m and log sum_m w_m
    exp(logmean_m), and the range over the two modes."""
    scores = np.array([[-1.0, -1.2, -0.9, -1.1], [-1.3, -1.0, -1.05, -0.95], [-2.0, -2.5, -1.8, -2.2]])
    out = fit_estimates(scores, np.array([0, 0, 1]), np.array([0.8, 0.2]), reliable=True)
    m0 = [-1.0, -1.2, -0.9, -1.1, -1.3, -1.0, -1.05, -0.95]
    m1 = [-2.0, -2.5, -1.8, -2.2]
    mean0, mean1 = sum(m0) / 8, sum(m1) / 4
    log0 = math.log(sum(math.exp(x) for x in m0) / 8)
    log1 = math.log(sum(math.exp(x) for x in m1) / 4)
    np.testing.assert_allclose(out["mode_mean"], [mean0, mean1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["mode_logmean"], [log0, log1], rtol=0, atol=1e-12)
    assert out["chain_logmean"][2] == pytest.approx(log1, abs=1e-12)
    assert out["mean"].estimate == POSTERIOR_MODE_MASS
    assert out["mean"].posterior == pytest.approx(0.8 * mean0 + 0.2 * mean1, abs=1e-12)
    assert out["logmean"].posterior == pytest.approx(math.log(0.8 * math.exp(log0) + 0.2 * math.exp(log1)), abs=1e-12)
    assert (out["mean"].low, out["mean"].high) == pytest.approx((mean1, mean0))
    assert out["one_mode_mean"] == pytest.approx(mean0) and out["one_mode_logmean"] == pytest.approx(log0)
    # masses that cannot be compared: no posterior number, the range stays
    unsure = fit_estimates(scores, np.array([0, 0, 1]), np.array([0.8, 0.2]), reliable=False)
    assert unsure["mean"].estimate == MODE_RANGE and math.isnan(unsure["mean"].posterior)
    assert (unsure["logmean"].low, unsure["logmean"].high) == pytest.approx((log1, log0))
    with pytest.raises(ValueError, match="mode label per chain"):
        fit_estimates(scores, np.array([0, 0, 0]), np.array([0.8, 0.2]), reliable=True)


def _fit_v2(method, *, reliable, posterior, low, high, logmean=(np.nan, np.nan, np.nan), stacked=np.nan):
    """A version-2 fit of two chains in two modes whose fit-level columns say what is given."""
    table = _fit(method, [high, low], [1, 2], [-100.0, -200.0])
    return table.assign(
        masses_reliable=reliable,
        posterior_per_entry=posterior,
        modes_min_per_entry=low,
        modes_max_per_entry=high,
        posterior_logmean_per_entry=logmean[0],
        modes_logmean_min_per_entry=logmean[1],
        modes_logmean_max_per_entry=logmean[2],
        one_mode_per_entry=high,
        stacked_lpd_per_entry=stacked,
    )


def test_summary_compares_laplace_and_ops_on_the_posterior_or_the_mode_range():
    """By hand: Laplace's reliable posterior -5.00 against OPS's range [-5.10, -5.02] gives
    Laplace − OPS in [+0.02, +0.10], ahead whatever OPS's masses; overlapping ranges are not
    beyond doubt; two reliable posteriors give the point difference."""
    lap = _fit_v2("laplace", reliable=True, posterior=-5.00, low=-5.30, high=-4.95, logmean=(-4.97, -5.2, -4.9))
    ops = _fit_v2("ops", reliable=False, posterior=np.nan, low=-5.10, high=-5.02)
    out = summarise_heldout_dispersed(pd.concat([lap, ops])).iloc[0]
    assert out["estimate"] == MODE_RANGE and math.isnan(out["difference"])
    assert out["laplace_estimate"] == POSTERIOR_MODE_MASS and out["ops_estimate"] == MODE_RANGE
    assert (out["difference_low"], out["difference_high"]) == pytest.approx((0.02, 0.10))
    assert out["beyond_doubt"]
    assert (out["logmean_difference_low"], out["logmean_difference_high"]) == pytest.approx((0.05, 0.13))
    assert out["one_mode_difference"] == pytest.approx(-4.95 - -5.02)
    # Laplace's masses unreliable too: its range [-5.30, -4.95] overlaps OPS's, no sign is certain
    vague = summarise_heldout_dispersed(pd.concat([lap.assign(masses_reliable=False), ops])).iloc[0]
    assert (vague["difference_low"], vague["difference_high"]) == pytest.approx((-0.28, 0.15))
    assert not vague["beyond_doubt"]
    both = summarise_heldout_dispersed(pd.concat([lap, ops.assign(masses_reliable=True, posterior_per_entry=-5.06)]))
    row = both.iloc[0]
    assert row["estimate"] == POSTERIOR_MODE_MASS and row["difference"] == pytest.approx(0.06)
    assert row["difference_low"] == row["difference_high"] == pytest.approx(0.06)
    # a version-1 table has no posterior columns: none are made up
    assert "difference_low" not in summarise_heldout_dispersed(
        pd.concat([_fit("laplace", [-5.0], [1], [-1.0]), _fit("ops", [-5.1], [1], [-1.0])])
    )


def _logs(size, seed, data_path, *, real=False):
    """Stand-ins for the study's logs (the replaced study never reads them)."""
    return {("afghanistan" if real else "synthetic afghanistan"): (None, None), "synthetic iraq": (None, None)}


def _one_fit_study(counts, *, label, **kwargs):
    """Stand-in for heldout_dispersed_study: one Laplace and one OPS fit holding out 999 entries."""
    fits = [_fit(m, [-5.0, -5.1], [1, 1], [-1.0, -1.1]) for m in ("laplace", "ops")]
    return pd.concat(fits, ignore_index=True).assign(dataset=label, heldout_entries=999)


def test_a_quick_run_does_not_check_its_masks_against_a_quick_part_hmm(tmp_path: Path, monkeypatch):
    """Commit f0804b4a: a quick part hmm holds out of shorter logs (QUICK heldout_months), so a
    quick part heldout_dispersed must not compare its held-out entries with that table (README
    command 1, ``reproduce foulds2016 --quick``, failed on it); a full run still compares them and
    refuses masks that differ. The study and its logs are replaced (no Stan)."""
    monkeypatch.setattr(hd, "heldout_dispersed_study", _one_fit_study)
    monkeypatch.setattr(occupancy, "_datasets", _logs)
    held = "dataset,split,heldout_entries\nsynthetic afghanistan,0,111\nafghanistan,0,111\nsynthetic iraq,0,111\n"
    for folder in ("quick", "full"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "foulds2016_hmm_heldout.csv").write_text(held)
    out = supplementary.reproduce_heldout_dispersed(tmp_path / "quick", quick=True, seed=0, workers=1, progress=False)
    assert (out["hmm_heldout_dispersed"]["heldout_entries"] == 999).all()
    assert (tmp_path / "quick" / "heldout_dispersed" / "foulds2016_hmm_heldout_dispersed_summary.csv").is_file()
    with pytest.raises(RuntimeError, match="held-out masks differ"):
        supplementary.reproduce_heldout_dispersed(tmp_path / "full", quick=False, seed=0, workers=1, progress=False)


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
    # one state, one mode: its mass is the whole posterior, so the posterior number is the closed form too
    assert table["n_modes"].eq(1).all() and table["mode_weight"].eq(1.0).all() and table["masses_reliable"].all()
    assert table["heldout_estimate"].eq(POSTERIOR_MODE_MASS).all()
    np.testing.assert_allclose(table["posterior_per_entry"], expected, atol=0.002)
    # the paper's log of the mean likelihood is at least the mean of the logs (Jensen), per chain and mode
    assert (table["heldout_logmean_per_entry"] >= table["heldout_per_entry"] - 1e-12).all()
    assert (table["posterior_logmean_per_entry"] >= table["posterior_per_entry"] - 1e-12).all()
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
    # the tempered target's mode masses: one weight per mode found, summing to 1; OPS has one score
    weights = table.groupby("mode")["mode_weight"].first()
    assert len(weights) == table["n_modes"].iloc[0] and weights.sum() == pytest.approx(1.0)
    assert table["heldout_logmean_per_entry"].isna().all() and table["posterior_logmean_per_entry"].isna().all()
    assert (table["modes_min_per_entry"] <= table["one_mode_per_entry"]).all()
    assert (table["one_mode_per_entry"] <= table["modes_max_per_entry"]).all()
    with pytest.raises(ValueError, match="method"):
        heldout_dispersed_task(counts=counts, dataset="toy", split=0, heldout=mask, method="gibbs", epsilon=1.0)
