"""War-logs case study (experiments/foulds2016_hmm.py, plots_hmm.py): held-out splits, the
held-out likelihood of naive Bayes against its closed form, and a miniature reproduce run
that writes every table and figure."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy.special import digamma

from pystanprivacy.experiments.foulds2016 import hmm as exp
from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMM


def test_heldout_masks():
    masks = exp.heldout_masks(5, 40, fraction=0.1, n_splits=4, seed=1)
    assert len(masks) == 4
    for m in masks:
        assert m.shape == (5, 40) and m.sum() == 20 and not m.all(axis=1).any()
    assert not np.array_equal(masks[0], masks[1])
    again = exp.heldout_masks(5, 40, fraction=0.1, n_splits=4, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(masks, again))
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\)"):
        exp.heldout_masks(5, 40, fraction=1.0)


def test_sampler_and_method_checks():
    """Sampler settings go through the shared check_sampler: a partial mapping is completed
    from the study's full-scale settings, max_treedepth is optional, and a bad setting is
    refused (naming it) before any task runs."""
    from pystanprivacy._validation import check_sampler

    full = exp.FULL["states_sampler"]
    assert check_sampler({"draws": 10}, full, optional=("max_treedepth",)) == {**full, "draws": 10}
    assert check_sampler({"max_treedepth": 6}, full, optional=("max_treedepth",))["max_treedepth"] == 6
    assert "max_treedepth" not in check_sampler(None, full, optional=("max_treedepth",))
    with pytest.raises(ValueError, match="sampler\\['chains'\\] must be an int >= 2"):
        exp.state_study({}, sampler={"chains": 1, "warmup": 10, "draws": 10})
    with pytest.raises(
        ValueError, match=r"unknown keys \['thin'\]; allowed: \['chains', 'warmup', 'draws', 'max_treedepth'\]"
    ):
        exp.heldout_study({}, sampler={"thin": 2})
    with pytest.raises(TypeError, match=r"sampler\['max_treedepth'\] must be an int, got float 6.5"):
        exp.heldout_task(
            counts=None,
            dataset="x",
            split=0,
            heldout=np.zeros((1, 2), bool),
            n_states=1,
            method="laplace",
            epsilon=1.0,
            multiplier=None,
            sampler={"max_treedepth": 6.5},
        )
    with pytest.raises(ValueError, match="method must be one of"):
        exp._check_method("gibbs", None)
    with pytest.raises(ValueError, match="needs multiplier"):
        exp._check_method("ops", None)


@pytest.fixture(scope="module")
def small():
    return exp.synthetic_dataset("afghanistan", seed=np.random.default_rng(3), n_months=12, median_records=60)


def test_naive_bayes_heldout_likelihood_matches_the_dirichlet_closed_form(nb_hmm_model, small):
    """K = 1 is conjugate: theta_d | train ~ Dirichlet(n_train_d + 1), so the expected
    held-out log-likelihood is sum_d sum_j N_heldout_{d,j} (psi(a_j) - psi(sum a)). The Stan
    fit + evaluator must match it within 5 Monte-Carlo standard errors (ESS-based; false
    rejection ~6e-7)."""
    counts, _ = small
    mask = exp.heldout_masks(*counts.cell_totals.shape, fraction=0.2, n_splits=1, seed=2)[0]
    post = NaiveBayesHMM(1).fit_nonprivate(counts, heldout=mask, chains=2, warmup=300, draws=500, seed=4)
    from pystanprivacy.models.foulds2016_hmm import heldout_log_likelihood

    per_draw = heldout_log_likelihood(post.draws("theta"), np.log(post.draws("state_prob")), counts.counts, mask)
    train = counts.counts[~mask].sum(axis=0) + 1.0
    test = counts.counts[mask].sum(axis=0)
    expected = sum(
        float(test[sl] @ (digamma(train[sl]) - digamma(train[sl].sum()))) for sl in counts.feature_slices.values()
    )
    ess = float(az.ess(per_draw.reshape(2, -1)))
    se = per_draw.std(ddof=1) / np.sqrt(ess)
    assert abs(per_draw.mean() - expected) < 5 * se
    # and the experiment task reports the same quantity (its own Stan run, so within MC error)
    row = exp.heldout_task(
        counts=counts,
        dataset="small",
        split=0,
        heldout=mask,
        n_states=1,
        method="non-private",
        epsilon=np.inf,
        multiplier=None,
        sampler={"chains": 2, "warmup": 300, "draws": 500},
        seed=np.random.SeedSequence(5),
    ).iloc[0]
    assert abs(row["heldout_loglik"] - expected) < 5 * se * np.sqrt(2)
    assert row["heldout_entries"] == int(counts.cell_totals[mask].sum())
    assert row["heldout_loglik_per_entry"] == pytest.approx(row["heldout_loglik"] / row["heldout_entries"])


TINY = {
    "datasets": {"afghanistan": {"n_months": 12, "median_records": 40}},
    "states_sampler": {"chains": 2, "warmup": 60, "draws": 40},
    "heldout_datasets": ("afghanistan",),
    "heldout_months": 12,
    "epsilons": (1.0,),
    "splits": 1,
    "n_states": (1,),
    "multipliers": (10.0,),
    "heldout_sampler": {"chains": 2, "warmup": 60, "draws": 40},
}


def test_miniature_reproduce_writes_every_table_and_figure(nb_hmm_model, nb_hmm_ops_model, tmp_path, monkeypatch):
    monkeypatch.setattr(exp, "QUICK", TINY)
    tables = exp.reproduce(tmp_path, quick=True, seed=3, progress=False)
    names = ["preprocessing", "states", "parameters", "states_summary", "heldout", "heldout_summary"]
    for name in names:
        assert (tmp_path / f"foulds2016_hmm_{name}.csv").stat().st_size > 0
        sidecar = json.loads((tmp_path / f"foulds2016_hmm_{name}.json").read_text())
        assert sidecar["seed"] == 3 and sidecar["args"]["quick"] is True
    for png in ("states_synthetic_afghanistan", "parameters_synthetic_afghanistan", "heldout"):
        assert (tmp_path / f"foulds2016_hmm_{png}.png").stat().st_size > 10_000
    # --quick stays synthetic, and its sidecars say so; the diary's preprocessing counts are written
    data = json.loads((tmp_path / "foulds2016_hmm_states.json").read_text())["args"]["data"]
    assert data["synthetic afghanistan"]["data"] == "synthetic"
    diary = pd.read_csv(tmp_path / "foulds2016_warlogs_afghanistan_preprocessing.csv").set_index("quantity")
    assert diary.loc["median reports per region/month", "value"] == 58  # Foulds et al., Sec. 5
    summary = tables["states_summary"]
    assert sorted(summary["method"]) == ["laplace", "non-private", "ops"]
    assert (summary["n_states"] == 3).all()  # Afghanistan-style: 3 states
    assert summary["agreement"].between(0, 1).all()
    states = tables["states"]
    counts = tables["preprocessing"]
    assert set(states["state"]) <= {1, 2, 3} and len(states) == 3 * 5 * 12
    assert (counts["step"] == "drop_near_empty_regions").any()
    params = tables["parameters"]
    sums = params.groupby(["method", "state", "feature"])["probability"].sum()
    np.testing.assert_allclose(sums.to_numpy(), 1.0, atol=1e-8)  # every emission distribution sums to 1
    held = tables["heldout"]
    assert sorted(held["method"]) == ["laplace", "non-private", "ops"]
    ops = held.loc[held["method"] == "ops"].iloc[0]
    assert ops["temperature"] > 1 and ops["multiplier"] == 10.0
    assert np.isfinite(held["heldout_loglik"]).all() and (held["heldout_loglik"] < 0).all()
    # the same seed gives the same tables
    again = exp.reproduce(tmp_path / "again", quick=True, seed=3, progress=False)
    pd.testing.assert_frame_equal(tables["heldout"].drop(columns="seconds"), again["heldout"].drop(columns="seconds"))


def test_reproduce_on_a_war_logs_file(nb_hmm_model, nb_hmm_ops_model, tmp_path, monkeypatch):
    """--data PATH: the file goes through the E.2 steps (Iraq: 2 states) instead of synthetic data."""
    monkeypatch.setattr(exp, "QUICK", TINY)
    path = Path(__file__).parents[1] / "data" / "warlogs_iraq_small.csv"
    tables = exp.reproduce(tmp_path, quick=True, seed=1, progress=False, data_path=path)
    assert set(tables["states_summary"]["dataset"]) == {"iraq"}
    assert (tables["states_summary"]["n_states"] == 2).all()
    assert tables["states_summary"]["agreement"].isna().all()  # no truth for real data
    rep = tables["preprocessing"]
    assert rep.loc[rep["step"] == "drop_regions", "records_removed"].item() == 2
    assert set(tables["heldout"]["dataset"]) == {"iraq"} and (tables["heldout"]["heldout_cells"] == 2).all()
    assert (tmp_path / "foulds2016_hmm_states_iraq.png").is_file()
    sidecar = json.loads((tmp_path / "foulds2016_hmm_heldout.json").read_text())
    assert sidecar["args"]["data_path"] == str(path)
    real = sidecar["args"]["data"]["iraq"]
    assert real == {"data": "real", "file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
