"""Figure 7 of Foulds et al. (2016): the OPS HMM's last-100-draws estimate against its last draw
(pystanprivacy.experiments.foulds2016.ops_states)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.foulds2016.hmm import synthetic_dataset
from pystanprivacy.experiments.foulds2016.ops_states import (
    last_draws_modal,
    ops_states_task,
    state_switches,
    summarise_ops_states,
)


def test_last_draws_modal_counts_only_the_final_draws():
    rng = np.random.default_rng(3)
    z = rng.integers(0, 3, size=(40, 2, 5))
    z[:25] = 2  # early draws all say state 2; only the last 15 may count
    got = last_draws_modal(z, 3, last=15)
    for r in range(2):
        for t in range(5):
            counts = Counter(z[-15:, r, t].tolist())
            best = max(counts.values())
            assert got[r, t] == min(k for k, v in counts.items() if v == best)  # ties to the lower state


@pytest.mark.parametrize(
    ("z", "last", "match"),
    [
        (np.zeros((5, 2)), 2, "z must be"),
        (np.zeros((5, 2, 2), int), 6, "last must be at most"),
        (np.zeros((5, 2, 2), int), 0, "last"),
    ],
)
def test_last_draws_modal_rejects_bad_input(z, last, match):
    with pytest.raises(ValueError, match=match):
        last_draws_modal(z, 2, last=last)


def test_summary_pairs_last_100_with_last_one_per_chain():
    rows = []
    values = {(0, 1): (0.9, 0.8), (0, 2): (0.95, 0.95), (1, 1): (1.0, 0.7), (1, 2): (0.85, 0.9)}
    for (r, c), (hundred, one) in values.items():
        rows += [
            dict(
                part="score", dataset="d", repeat=r, chain=c, estimate="last 100", agreement=hundred, converged=r == 0
            ),
            dict(part="score", dataset="d", repeat=r, chain=c, estimate="last one", agreement=one, converged=r == 0),
        ]
    rows.append(dict(part="score", dataset="d", repeat=0, chain=0, estimate="released", agreement=0.5, converged=True))
    out = summarise_ops_states(pd.DataFrame(rows)).iloc[0]
    diffs = np.array([0.1, 0.0, 0.3, -0.05])
    assert out["last 100 - last one"] == pytest.approx(diffs.mean())
    assert out["se"] == pytest.approx(np.std(diffs, ddof=1) / 2)
    assert (out["pairs"], out["pairs last 100 better"], out["pairs equal"], out["fits_converged"]) == (4, 2, 1, 1)
    assert out["agreement released"] == 0.5


def test_one_run_scores_every_chain_and_draws_the_matched_states():
    counts, truth = synthetic_dataset("iraq", seed=np.random.default_rng(5), n_months=24, median_records=150)
    table = ops_states_task(
        counts=counts,
        truth=truth,
        dataset="toy",
        n_states=2,
        epsilon=5.0,
        multiplier=100.0,
        repeat=0,
        sampler={"chains": 2, "warmup": 150, "draws": 120},
        cells=True,
        seed=1,
    )
    scores = table.loc[table["part"] == "score"]
    assert sorted(zip(scores["chain"], scores["estimate"])) == [
        (0, "released"),
        (1, "last 100"),
        (1, "last one"),
        (2, "last 100"),
        (2, "last one"),
    ]
    assert scores["agreement"].between(0, 1).all()
    cells = table.loc[table["part"] == "cell"]
    assert len(cells) == 3 * truth.size  # chain 1's two estimates and the released draw
    for (chain, name), part in cells.groupby(["chain", "estimate"]):
        # the drawn labels are the best match to the truth: their plain agreement is the score
        plain = float(np.mean(part["state"].to_numpy() == part["true_state"].to_numpy()))
        score = scores.loc[(scores["chain"] == chain) & (scores["estimate"] == name), "agreement"].item()
        assert plain == pytest.approx(score)


def test_state_switches_counts_month_to_month_changes_whatever_the_labels():
    grid = np.array([[0, 0, 1, 1, 0], [2, 2, 2, 2, 2], [1, 0, 1, 0, 1]])
    assert state_switches(grid) == 2 + 0 + 4  # counted by hand, region by region
    assert state_switches(np.array([2, 0, 1])[grid]) == 6  # a relabelling changes nothing
    with pytest.raises(ValueError, match="regions, months"):
        state_switches(np.zeros(5))


def test_summary_without_true_states_pairs_the_switches():
    """Real logs: agreement is NaN; the switches (last one - last 100) carry the comparison."""
    rows = []
    values = {(0, 1): (4, 9), (0, 2): (5, 5), (1, 1): (3, 10), (1, 2): (6, 4)}  # (last 100, last one)
    for (r, c), (hundred, one) in values.items():
        for name, sw in (("last 100", hundred), ("last one", one)):
            rows.append(
                dict(
                    part="score",
                    dataset="real",
                    repeat=r,
                    chain=c,
                    estimate=name,
                    agreement=np.nan,
                    switches=sw,
                    agreement_last100=0.9 if name == "last one" else np.nan,
                    converged=True,
                )
            )
    rows.append(
        dict(
            part="score",
            dataset="real",
            repeat=0,
            chain=0,
            estimate="released",
            agreement=np.nan,
            switches=7,
            agreement_last100=np.nan,
            converged=True,
        )
    )
    out = summarise_ops_states(pd.DataFrame(rows)).iloc[0]
    noisier = np.array([5, 0, 7, -2])
    assert out["switches last one - last 100"] == pytest.approx(noisier.mean())
    assert out["switches se"] == pytest.approx(np.std(noisier, ddof=1) / 2)
    assert out["pairs last one noisier"] == 2
    assert out["switches released"] == 7 and out["agreement last one with last 100"] == pytest.approx(0.9)
    assert np.isnan(out["last 100 - last one"]) and np.isnan(out["agreement last 100"])


def test_one_run_on_logs_without_true_states(tmp_path):
    """As on the real diary (truth None): no agreement with a truth, the truth-free scores, cells
    labelled as chain 1's last-100 estimate, and a Figure 7 without a truth panel."""
    from pystanprivacy.experiments.foulds2016 import hmm_figures

    counts, _ = synthetic_dataset("iraq", seed=np.random.default_rng(5), n_months=24, median_records=150)
    table = ops_states_task(
        counts=counts,
        truth=None,
        dataset="real",
        n_states=2,
        epsilon=5.0,
        multiplier=100.0,
        repeat=0,
        sampler={"chains": 2, "warmup": 150, "draws": 120},
        cells=True,
        seed=1,
    )
    scores = table.loc[table["part"] == "score"].set_index(["chain", "estimate"])
    assert scores["agreement"].isna().all()
    cells = table.loc[table["part"] == "cell"]
    assert cells["true_state"].isna().all() and len(cells) == 3 * counts.cell_totals.size
    for (chain, name), part in cells.groupby(["chain", "estimate"]):
        grid = part.pivot(index="region", columns="month", values="state").loc[list(counts.regions)].to_numpy()
        assert scores.loc[(chain, name), "switches"] == state_switches(grid)
    hundred = cells.loc[cells["estimate"] == "last 100", "state"].to_numpy()
    one = cells.loc[cells["estimate"] == "last one", "state"].to_numpy()
    # chain 1's last draw is drawn with the labels that best match its last 100: plain agreement is the score
    assert scores.loc[(1, "last one"), "agreement_last100"] == pytest.approx(np.mean(hundred == one))
    assert scores["agreement_last100"].dropna().between(0, 1).all()
    fig = hmm_figures.ops_last_samples(table, "real", tmp_path / "figure7.png")
    assert "switches" in fig.axes[0].get_title() and (tmp_path / "figure7.png").stat().st_size > 10_000
