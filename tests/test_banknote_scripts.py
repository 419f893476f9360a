"""Banknote authentication beside Abalone in Jewson et al.'s Figure 9 (part ``banknote`` of
``reproduce jewson2023``, which writes into ``OUT/banknote``; scripts/redraw_figures.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parents[1] / "results" / "jewson2023"


def _study_rows() -> pd.DataFrame:
    return pd.read_csv(RESULTS / "jewson2023_nn_classification.csv")


def test_figure9_tables_gain_banknote_rows_from_its_own_folder(load_script, tmp_path):
    """With a banknote run's table in ``banknote/`` Figure 9 gets banknote's rows (and only those: the
    run's Abalone rows are the study's own); without it the tables are unchanged."""
    redraw = load_script("redraw_figures")
    from pystanprivacy.experiments.jewson2023.study import summarise

    study = _study_rows()
    summary = summarise(study, ["auc"])
    same = redraw.with_banknote(tmp_path, summary, study)
    assert same[0] is summary and same[1] is study
    abalone = study[study["dataset"] == "abalone"]
    rng = np.random.default_rng(0)
    banknote = abalone.assign(dataset="banknote", auc=rng.uniform(0.5, 1.0, len(abalone)))
    (tmp_path / "banknote").mkdir()
    pd.concat([abalone, banknote]).to_csv(tmp_path / "banknote" / "jewson2023_nn_classification.csv", index=False)
    new_summary, new_rows = redraw.with_banknote(tmp_path, summary, study)
    assert len(new_rows) == len(study) + len(banknote)
    assert (new_rows["dataset"] == "abalone").sum() == len(abalone)  # not added twice
    got = new_summary[new_summary["dataset"] == "banknote"].set_index(["method", "epsilon", "n_obs"])["auc_mean"]
    # the mean AUC per cell, computed here from the rows
    expected = banknote[banknote["released"]].groupby(["method", "epsilon", "n_obs"])["auc"].mean()
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)


def test_network_figures_mean_rows_gain_the_tuned_dpsgd_of_every_data_set(load_script):
    """Figures 3 and 9's mean rows show DP-SGD tuned as App. B describes for each data set (the
    baseline its paired row is judged against), as the per-data-set mean of its released runs, and
    leave the tuned non-private SGD out; a data set that already has them is not added twice."""
    redraw = load_script("redraw_figures")
    from pystanprivacy.experiments.jewson2023.study import summarise

    study = _study_rows()
    tuned = pd.read_csv(RESULTS / "jewson2023_nn_classification_dpsgd_tuned.csv")
    summary = summarise(study, ["auc"])
    out = redraw.with_tuned(summary, pd.concat([study, tuned], ignore_index=True), "auc")
    added = out.iloc[len(summary) :]
    assert set(added["method"]) == {"DP-SGD (tuned)"}
    assert set(added["dataset"]) == set(tuned["dataset"])
    ok = tuned[(tuned["method"] == "DP-SGD (tuned)") & tuned["released"].astype(bool)]
    expected = ok.groupby(["dataset", "epsilon", "n_obs"])["auc"].mean()
    got = added.set_index(["dataset", "epsilon", "n_obs"])["auc_mean"]
    assert len(got) == len(expected) == 32
    np.testing.assert_allclose(got.loc[expected.index].to_numpy(), expected.to_numpy(), rtol=1e-12)
    again = redraw.with_tuned(out, pd.concat([study, tuned], ignore_index=True), "auc")
    assert len(again) == len(out)
