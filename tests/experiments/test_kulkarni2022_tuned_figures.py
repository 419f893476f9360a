"""K4 and K5's figures (:mod:`pystanprivacy.experiments.kulkarni2022.tuned_figures`): the paired
differences their verdicts rest on, with a zero line and K4's predicting-0 line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.kulkarni2022 import tuned_figures


def _tables():
    rng = np.random.default_rng(11)
    eps = (0.5, 2.0, 8.0)
    committed = pd.DataFrame(
        [
            dict(method=m, epsilon=e, repeat=r, auc=rng.uniform(0.5, 0.9))
            for e in eps
            for r in range(6)
            for m in ("ss", "ldp-sgd", "inputs")
        ]
        + [dict(method="non-private", epsilon=math.inf, repeat=0, auc=0.86)]
    )
    committed_summary = (
        committed.groupby(["method", "epsilon"])["auc"].agg(auc_mean="mean", auc_sd="std", repeats="size").reset_index()
    )
    summary = pd.DataFrame(
        [
            dict(
                users=u,
                epsilon=e,
                repeats=6,
                tuned_mean=0.7,
                tuned_se=0.01,
                ss_minus_tuned=k / 10 - 0.1,
                ss_minus_tuned_se=0.02,
            )
            for u in ("10K subsample", "all training")
            for k, e in enumerate(eps)
        ]
    )
    return summary, committed_summary, committed


def _line(ax, label):
    container = next(c for c in ax.containers if c.get_label() == label)
    return container.lines[0].get_xdata(), container.lines[0].get_ydata()


def test_the_paired_panel_holds_ss_minus_each_method_by_repeat_and_a_zero_line():
    summary, committed_summary, committed = _tables()
    fig = tuned_figures.tuned_comparison(
        summary, committed_summary, "auc", "t", committed=committed, references={"predicting 0": 0.873}
    )
    means, diffs = fig.axes
    for baseline, label in (("ldp-sgd", "SS − LDP-SGD, untuned"), ("inputs", "SS − inputs model")):
        wide = committed[committed["method"].isin(["ss", baseline])].pivot_table(
            index=["epsilon", "repeat"], columns="method", values="auc"
        )
        want = (wide["ss"] - wide[baseline]).groupby(level="epsilon").mean().to_numpy()
        _, y = _line(diffs, label)
        assert np.allclose(y, want)
    _, y = _line(diffs, "SS − LDP-SGD tuned non-privately (all training)")
    assert np.allclose(y, [-0.1, 0.0, 0.1])
    assert any(np.allclose(ln.get_ydata(), 0.0) and ln.get_color() == "black" for ln in diffs.lines)
    ref = [ln for ln in means.lines if ln.get_label().startswith("predicting 0")]
    assert len(ref) == 1 and np.allclose(ref[0].get_ydata(), 0.873) and ref[0].get_linestyle() == ":"
    with pytest.raises(ValueError, match="metric must be one of"):
        tuned_figures.tuned_comparison(summary, committed_summary, "mse", "t")
