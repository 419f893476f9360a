"""The OPS gate study on non-mixing chains (pystanprivacy.experiments.foulds2016.ops_gate)."""

from __future__ import annotations

import pandas as pd
import pytest

from pystanprivacy.experiments.foulds2016.ops_gate import ops_gate_task, summarise_ops_gate
from pystanprivacy.experiments.foulds2016.warlogs import non_mixing_war_logs, preprocess_war_logs


def test_summary_counts_releases_and_runs_with_several_modes():
    table = pd.DataFrame(
        {
            "epsilon": [1.0, 1.0, 1.0, 5.0],
            "init": ["em", "em", "dispersed", "em"],
            "released": [True, False, False, True],
            "modes": [1, 3, 2, 1],
            "rhat_log_lik": [1.01, 2.0, 1.5, 1.02],
            "seconds": [1.0, 3.0, 2.0, 4.0],
        }
    )
    out = summarise_ops_gate(table).set_index(["epsilon", "init"])
    assert out.loc[(1.0, "em"), ["runs", "released", "several_modes"]].tolist() == [2, 1, 1]
    assert out.loc[(1.0, "em"), "median_rhat_log_lik"] == pytest.approx(1.505)
    assert out.loc[(1.0, "dispersed"), ["runs", "released", "several_modes"]].tolist() == [1, 0, 1]
    assert out.loc[(5.0, "em"), ["runs", "released"]].tolist() == [1, 1]


def test_chains_in_different_modes_are_refused_and_the_row_says_why():
    counts = preprocess_war_logs(non_mixing_war_logs().records)
    row = ops_gate_task(
        counts=counts,
        epsilon=5.0,
        init="dispersed",
        repeat=0,
        sampler={"chains": 4, "warmup": 20, "draws": 20, "max_treedepth": 4},
        seed=1,
    ).iloc[0]
    # four dispersed starts on the non-mixing logs end thousands of log-likelihood units apart
    assert row["modes"] >= 2 and row["spread_log_lik"] > 10 * row["median_sd_log_lik"]
    assert not row["released"] and "R-hat of log_lik" in row["problems"]
    assert row["rhat_log_lik"] > 1.05
    with pytest.raises(ValueError, match="init"):
        ops_gate_task(counts=counts, epsilon=5.0, init="kmeans", repeat=0)
