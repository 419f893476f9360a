"""Kulkarni et al. (2022) Figures 4-5 experiment code: metrics, the long tables, and a tiny
end-to-end reproduce() on the synthetic stand-ins (files, sidecars, figures, notice)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.experiments.kulkarni2022 import figures
from pystanprivacy.experiments.kulkarni2022 import regression as exp
from pystanprivacy.experiments.kulkarni2022.data import preprocess, synthetic_regression
from pystanprivacy.privacy.mechanisms import ClipL2

TINY = dict(chains=2, warmup=150, draws=150)


def _former_roc_auc(scores, labels):
    """The hand-written AUC before 0.2 (Mann-Whitney U with mid-ranks for ties)."""
    labels = np.asarray(labels).astype(bool)
    n1, n0 = int(labels.sum()), int((~labels).sum())
    ranks = stats.rankdata(scores)
    return float((ranks[labels].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def test_metrics():
    rng = np.random.default_rng(0)
    s = rng.normal(size=60).round(1)  # ties on purpose
    y = rng.integers(0, 2, size=60)
    pairs = [(a, b) for a in s[y == 1] for b in s[y == 0]]
    brute = np.mean([1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs])
    assert exp.roc_auc(s, y) == pytest.approx(brute, rel=1e-12)
    assert np.isnan(exp.roc_auc(s, np.ones(60))) and np.isnan(exp.roc_auc(s, np.zeros(60)))
    assert exp.rmse(np.array([1.0, 3.0]), np.array([0.0, 0.0])) == pytest.approx(np.sqrt(5))


def test_sklearn_auc_equals_the_former_hand_written_one_with_ties():
    # scikit-learn's trapezoid and the former rank formula agree to rounding (<= 2 ulp here),
    # on scores with many ties and on all-tied scores (AUC 1/2)
    rng = np.random.default_rng(1)
    for n in (7, 60, 5000):
        s = rng.integers(0, 5, size=n).astype(float)  # at most 5 distinct scores
        y = np.r_[0, 1, rng.integers(0, 2, size=n - 2)]
        assert exp.roc_auc(s, y) == pytest.approx(_former_roc_auc(s, y), rel=0, abs=5e-16)
    assert exp.roc_auc(np.ones(10), np.r_[np.zeros(5), np.ones(5)]) == 0.5


def test_pca_is_the_former_svd_projection_up_to_a_deterministic_sign():
    # the hand-written SVD before 0.2 against scikit-learn's PCA: the same projection (to
    # rounding) up to the sign of each component, which now follows scikit-learn's convention
    # (the largest loading of each component positive) instead of whatever LAPACK returned
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 6)) @ rng.normal(size=(6, 6))
    y = X @ rng.normal(size=6) + rng.normal(size=300)
    d = 3
    data = preprocess(X, y, task="linear", d=d, R_y=50.0, seed=3)
    perm = np.random.default_rng(3).permutation(300)
    train = perm[60:]
    Z = (X - X[train].mean(axis=0)) / X[train].std(axis=0)
    _, svals, vt = np.linalg.svd(Z[train] - Z[train].mean(axis=0), full_matrices=False)
    P = (Z - Z[train].mean(axis=0)) @ vt[:d].T
    scale = np.quantile(np.linalg.norm(P[train], axis=1), 0.95)
    former = ClipL2(1.0)(P / scale)[train]
    signs = np.sign(vt[:d][np.arange(d), np.abs(vt[:d]).argmax(axis=1)])  # flip to "largest loading > 0"
    np.testing.assert_allclose(data.x_train, former * signs, rtol=0, atol=1e-12)
    assert data.info["feature_scale"] == pytest.approx(scale, rel=1e-12)
    assert data.info["explained_variance"] == pytest.approx((svals[:d] ** 2).sum() / (svals**2).sum(), rel=1e-12)


def test_figure4_and_figure5_tables():
    lin = synthetic_regression("linear", n=1500, d=2, seed=1)
    t4 = exp.figure4(
        lin,
        epsilons=[8.0],
        repeats=2,
        methods=("ss", "inputs", "ldp-sgd", "non-private"),
        sampler=TINY,
        seed=3,
        progress=False,
    )
    assert sorted(t4["method"].unique()) == ["inputs", "ldp-sgd", "non-private", "ss"]
    assert len(t4) == 2 * 3 + 1 and t4["synthetic"].all() and (t4["d"] == 2).all()
    base = exp.rmse(np.zeros_like(lin.y_test), lin.y_test)
    assert t4.loc[t4["method"] == "non-private", "rmse"].iloc[0] < 0.9 * base  # the signal is learnt
    again = exp.figure4(lin, epsilons=[8.0], repeats=2, methods=("ldp-sgd",), sampler=TINY, seed=3, progress=False)
    np.testing.assert_array_equal(again["rmse"], t4.loc[t4["method"] == "ldp-sgd", "rmse"])  # seeded per task
    log = synthetic_regression("logistic", n=3000, d=2, seed=2)
    t5 = exp.figure5(
        log, epsilons=[4.0, 8.0], repeats=1, subsample=500, inputs_epsilons=[8.0], sampler=TINY, seed=4, progress=False
    )
    counts = t5.groupby("method").size().to_dict()
    assert counts == {"inputs": 1, "ldp-sgd": 2, "non-private": 1, "ss": 2}
    assert (t5.loc[t5["method"] == "inputs", "n_users"] == 500).all()
    assert t5.loc[t5["method"] == "non-private", "auc"].iloc[0] > 0.7
    summ = exp.summarise(t5, "auc")
    assert {"auc_mean", "auc_sd", "repeats"} <= set(summ.columns)
    fig = figures.regression(summ, "auc", "tiny")
    assert fig.axes[0].get_ylabel() == "AUC" and len(fig.axes[0].get_legend().get_texts()) == 4
    with pytest.warns(DeprecationWarning, match="figures.regression"):
        assert exp.plot_summary is figures.regression
    with pytest.raises(ValueError, match="figure4 needs linear-regression data"):
        exp.figure4(log, epsilons=[1.0], repeats=1)
    with pytest.raises(ValueError, match="methods .* unknown"):
        exp.figure5(log, epsilons=[1.0], repeats=1, methods=("ss", "svm"))
    with pytest.raises(ValueError, match="epsilons"):
        exp.figure5(log, epsilons=[-1.0], repeats=1)


def test_reproduce_writes_files_on_synthetic_stand_ins(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(exp.QUICK, "fig4_epsilons", (4.0,))
    monkeypatch.setitem(exp.QUICK, "fig5_epsilons", (4.0,))
    monkeypatch.setitem(exp.QUICK, "fig5_inputs_epsilons", (4.0,))
    monkeypatch.setitem(exp.QUICK, "repeats", 1)
    monkeypatch.setitem(exp.QUICK, "subsample", 300)
    monkeypatch.setitem(exp.QUICK, "sampler", TINY)
    tables = exp.reproduce(tmp_path / "out", quick=True, seed=0, data_dir=tmp_path / "no-data", progress=False)
    assert "SYNTHETIC" in capsys.readouterr().err
    for name in ("figure4", "figure4_summary", "figure5", "figure5_summary"):
        assert (tmp_path / "out" / f"{exp.PREFIX}_{name}.csv").is_file()
        side = json.loads((tmp_path / "out" / f"{exp.PREFIX}_{name}.json").read_text())
        assert side["args"]["synthetic"] is True
    assert (tmp_path / "out" / f"{exp.PREFIX}_figure4.png").stat().st_size > 1000
    assert (tmp_path / "out" / f"{exp.PREFIX}_figure5.png").stat().st_size > 1000
    for name in ("chebyshev", "chebyshev_summary", "chebyshev_grid"):  # supplement Figure 6
        assert (tmp_path / "out" / f"kulkarni2022_{name}.csv").is_file()
        assert (tmp_path / "out" / f"kulkarni2022_{name}.json").is_file()
    assert (tmp_path / "out" / "kulkarni2022_chebyshev.png").stat().st_size > 1000
    assert (
        set(tables["chebyshev_summary"]["radius"]) == {3.0, 4.0} and (tables["chebyshev_summary"]["runs"] == 50).all()
    )
    side = json.loads((tmp_path / "out" / f"{exp.PREFIX}_figure5.json").read_text())
    assert side["args"]["estimated_full_seconds"] > 0
    assert tables["figure5"]["synthetic"].all()
