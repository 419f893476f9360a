"""Jewson et al. (2023) experiments: the membership-inference audit on the worst-case
neighbours (below the claimed epsilon for correctly calibrated beta-D-Bayes, above it for a
deliberately mis-calibrated beta), Remark 1's normaliser estimate, the logistic and
neural-network tasks and the figures.

The audit's epsilon lower bound holds with probability >= 95 % (Clopper-Pearson with
Bonferroni), so a correct mechanism fails ``lb <= epsilon`` with probability <= 5 %; the
seeds are fixed, so the tests are deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pystanprivacy.experiments.jewson2023 import figures as plots
from pystanprivacy.experiments.jewson2023 import study as J
from pystanprivacy.models.jewson2023 import betad_loss_bernoulli
from pystanprivacy.sampling.stan import StanModel

ROUNDS = 20_000


@pytest.fixture(scope="module", autouse=True)
def _models():
    StanModel.get("jewson2023/logistic")


def _attack(method, epsilon, seed, **kw):
    return J.attack_task(method=method, epsilon=epsilon, rounds=ROUNDS, seed=np.random.SeedSequence(seed), **kw).iloc[0]


@pytest.mark.parametrize("epsilon", [1.0, 7.0])
def test_attack_lower_bound_below_claimed_epsilon_for_betad(epsilon):
    row = _attack("beta-D", epsilon, 1)
    # the long runs mixed and the thinned draws are close to independent (binomial counts)
    assert row["rhat_max"] < 1.01 and min(row["ess_d"], row["ess_d_prime"]) > 0.7 * ROUNDS
    assert row["epsilon_lb"] <= epsilon
    assert 0.5 <= row["success"] <= math.exp(epsilon) / (1 + math.exp(epsilon)) + 0.01
    # Remark 1's Monte-Carlo normaliser ratio agrees with quadrature
    assert row["log_z_ratio_mc"] == pytest.approx(row["log_z_ratio_quadrature"], abs=0.05)


def test_attack_lower_bound_exceeds_claim_for_miscalibrated_beta():
    """Claim epsilon = 1 but sample with beta = 1.1 (the beta of epsilon = 20): the audit
    catches it. The attack's certified bound exceeds 1 (deterministic under the seed; the
    true privacy loss of this pair reaches ~10, far above 1)."""
    row = _attack("beta-D", 1.0, 2, beta=1.1)
    assert row["beta"] == 1.1 and row["epsilon_of_beta"] == pytest.approx(20.0)
    assert row["epsilon_lb"] > 1.0


def test_attack_chaudhuri_exact_mechanism_and_minami():
    row = _attack("Chaudhuri 1/9", 2.0, 3)
    assert row["epsilon_lb"] <= 2.0 and row["success"] > 0.5
    row = _attack("Minami", 2.0, 4)
    assert row["epsilon_lb"] <= 2.0 and row["delta"] == 1e-5
    with pytest.raises(ValueError, match="method must be one of"):
        J.attack_task(method="bogus", epsilon=1.0, rounds=100)


def test_log_ratio_is_the_exact_posterior_ratio():
    """ops_log_ratio equals log p(theta|D') - log p(theta|D) with both densities normalised
    by direct quadrature."""
    beta = 2.0

    def loss(yy, eta):
        return betad_loss_bernoulli(yy, eta, beta)

    lz = J.log_normaliser_ratio(loss)
    t = np.array([-3.0, 0.0, 0.7, 4.0])
    grid = np.linspace(-60, 60, 400_001)

    def log_post(X, y, th):
        from scipy import stats

        lp = stats.norm.logpdf(th, 0, 3) - loss(y[:, None], X[:, :1] * th[None, :]).sum(0)
        lg = stats.norm.logpdf(grid, 0, 3) - loss(y[:, None], X[:, :1] * grid[None, :]).sum(0)
        return lp - (lg.max() + np.log(np.trapezoid(np.exp(lg - lg.max()), grid)))

    direct = log_post(*J.ATTACK_D_PRIME, t) - log_post(*J.ATTACK_D, t)
    np.testing.assert_allclose(J.ops_log_ratio(t, loss, lz), direct, atol=1e-6)


def test_logistic_task_rows_and_metrics():
    table = J.logistic_task(
        dataset="simulated",
        n_obs=300,
        epsilons=[1.0],
        repeat=0,
        data_seed=np.random.SeedSequence(5),
        sampler=dict(chains=2, warmup=300, draws=100),
        seed=np.random.SeedSequence(6),
    )
    assert set(table["method"]) == set(J.LOGISTIC_METHODS)
    ok = table[table["released"]]
    assert ok["auc"].between(0, 1).all() and ok["csa"].between(0, 1).all() and (ok["rmse"] > 0).all()
    pm = table[table["method"] == "PM (non-private)"].iloc[0]
    assert np.isinf(pm["epsilon"])
    # Chaudhuri with lambda = 1/(9n) adds Laplace(18/epsilon) noise: its RMSE is far worse than PM's
    ch = table[table["method"] == "Chaudhuri 1/(9n)"].iloc[0]
    assert ch["rmse"] > pm["rmse"]
    # the paper's Chaudhuri noise (Theorem 4) with p = 2 coefficients is (2 epsilon)-DP, and says so
    chaudhuri = table[table["method"].str.startswith("Chaudhuri")]
    assert (chaudhuri["epsilon_guarantee"] == 2 * chaudhuri["epsilon"]).all()
    assert table.loc[~table["method"].str.startswith("Chaudhuri"), "epsilon_guarantee"].isna().all()
    s = J.summarise(table, ["rmse", "auc", "csa"])
    assert {"rmse_mean", "log_rmse_mean", "auc_mean", "csa_mean", "refused"} <= set(s.columns)


def test_figures_from_small_tables(tmp_path):
    rows = []
    for m in J.LOGISTIC_METHODS:
        for n in (100, 1000):
            for e in (math.inf,) if m.startswith("PM") else (0.5, 5.0):
                rows.append(
                    dict(
                        dataset="simulated",
                        method=m,
                        epsilon=e,
                        n_obs=n,
                        released=True,
                        rmse=1.0 / n**0.5,
                        auc=0.7,
                        csa=0.9,
                    )
                )
    s = J.summarise(pd.DataFrame(rows), ["rmse", "auc", "csa"])
    for fig in ("figure2", "figure7"):
        getattr(plots, fig)(s, tmp_path / f"{fig}.png")
        assert (tmp_path / f"{fig}.png").stat().st_size > 1000
    att = pd.DataFrame(
        [
            dict(method=m, epsilon=e, success=0.6, epsilon_lb=0.5, log_rmse=-1.0 - e / 10)
            for m in J.ATTACK_METHODS
            for e in (1.0, 2.0)
        ]
    )
    plots.figure4(att, tmp_path / "f4.png")
    plots.figure11(att, tmp_path / "f11.png")
    with pytest.raises(ValueError, match="missing"):
        plots.figure4(att.drop(columns="success"))


def test_features_sweep_d_at_fixed_n(tmp_path):
    """Figure 10's logistic row: one data stream per d, d coefficients per release (RMSE per
    coefficient), the Chaudhuri rows' real guarantee d epsilon; a bad d is refused first."""
    methods = ["Chaudhuri 1/(9n)", "Chaudhuri 1/9"]
    table = J.features(ds=(2, 4), n_obs=120, epsilons=[1.0, 5.0], repeats=2, methods=methods, seed=3, progress=False)
    assert sorted(table["d"].unique()) == [2, 4] and (table["n_obs"] == 120).all()
    assert len(table) == 2 * 2 * 2 * len(methods)
    assert (table["epsilon_guarantee"] == table["d"] * table["epsilon"]).all()
    # lambda = 1/(9n): Laplace(18/epsilon) per coefficient dominates, so the RMSE falls with epsilon
    ch = table[table["method"] == "Chaudhuri 1/(9n)"].groupby("epsilon")["rmse"].mean()
    assert ch[5.0] < ch[1.0]
    again = J.features(ds=(2, 4), n_obs=120, epsilons=[1.0, 5.0], repeats=2, methods=methods, seed=3, progress=False)
    pd.testing.assert_frame_equal(table.drop(columns="seconds"), again.drop(columns="seconds"))
    # d = 2 draws other data than the logistic study's stream at the same n
    base = J.logistic(ns=[120], epsilons=[1.0, 5.0], repeats=2, methods=methods, seed=3, progress=False)
    assert not np.allclose(base["rmse"], table.loc[table["d"] == 2, "rmse"])
    s = J.summarise(table, ["rmse", "auc", "csa"], by=("dataset", "method", "epsilon", "d"))
    fig = plots.figure10(s, tmp_path / "f10.png")
    assert (tmp_path / "f10.png").stat().st_size > 1000
    assert {ax.get_xlabel() for ax in fig.axes if ax.get_title()} == {"d"}
    with pytest.raises(ValueError, match=r"ds\[i\] must be an int >= 2"):
        J.features(ds=(2, 1), progress=False)


def test_figure_panels_outside_a_data_sets_grid_are_not_drawn():
    """The UCI grid has fewer epsilons than the simulated one: its row has only its own panels
    (no empty placeholder), each with every method's curve plus the non-private line."""
    rows = []
    for ds, eps in (("simulated", (0.5, 2.0)), ("adult", (0.5,))):
        for m in J.LOGISTIC_METHODS:
            for n in (100, 1000):
                for e in (math.inf,) if m.startswith("PM") else eps:
                    rows.append(
                        dict(dataset=ds, method=m, epsilon=e, n_obs=n, released=True, rmse=0.5, auc=0.7, csa=0.9)
                    )
    fig = plots.figure2(J.summarise(pd.DataFrame(rows), ["rmse", "auc", "csa"]))
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert "adult, ε = 2" not in panels and all(ax.axison for ax in fig.axes)
    assert len(panels["adult, ε = 0.5"].lines) >= len(J.LOGISTIC_METHODS)
    assert len(panels["simulated, ε = 2"].lines) >= len(J.LOGISTIC_METHODS)


def test_reproduce_data_path_folder_is_checked_before_running(tmp_path):
    empty = tmp_path / "no_uci_here"
    empty.mkdir()
    out = tmp_path / "out"
    # a given folder must hold every file the run needs: the loader's error names file and folder,
    # raised before any output folder or fit exists
    with pytest.raises(FileNotFoundError, match=r"'adult.data' not found; looked in .*no_uci_here"):
        J.reproduce(out, quick=True, data_path=empty, progress=False)
    assert not out.exists()
    (empty / "adult.data").write_text("")
    with pytest.raises(FileNotFoundError, match=r"'abalone.data' not found; looked in .*no_uci_here"):
        J.uci_available(J.FULL, empty)
    assert J.uci_available(J.QUICK, str(empty)) == ({"adult"}, [])  # quick needs adult.data only
    with pytest.raises(ValueError, match=r"data_path must be a folder .*adult.data.*not a folder"):
        J.reproduce(out, data_path=empty / "adult.data", progress=False)


def test_uci_lookup_without_data_path(tmp_path, monkeypatch, shared_data_dir, no_shipped_data):
    from pystanprivacy.datasets.uci import DATA_ENV

    assert J.uci_available(J.FULL, shared_data_dir) == ({"adult", "abalone", "wine"}, [])
    monkeypatch.delenv(DATA_ENV, raising=False)
    have, notes = J.uci_available(J.FULL)  # nothing found: every UCI panel skipped, saying why
    assert have == set() and len(notes) == 3
    assert all(f"UCI {ds} panels skipped" in " ".join(notes) for ds in ("adult", "abalone", "wine"))
    monkeypatch.setenv(DATA_ENV, str(shared_data_dir))
    assert J.uci_available(J.FULL) == ({"adult", "abalone", "wine"}, [])


def test_uci_files_are_needed_only_for_the_parts_that_run(tmp_path):
    folder = tmp_path / "uci"
    folder.mkdir()
    (folder / "adult.data").write_text("")
    # the attack uses simulated data only: no UCI file needed, even from an empty folder
    assert J.uci_available(J.FULL, folder, parts=("attack",)) == (set(), [])
    with pytest.raises(FileNotFoundError, match="'abalone.data' not found"):
        J.uci_available(J.FULL, folder, parts=("logistic",))  # full: adult and abalone
    with pytest.raises(FileNotFoundError, match="'winequality-red.csv' not found"):
        J.uci_available(J.FULL, folder, parts=("attack", "nn_regression"))
    assert J.uci_available(J.QUICK, folder, parts=("logistic", "attack")) == ({"adult"}, [])


def test_parts_run_only_the_parts_named(tmp_path, monkeypatch):
    """parts=("nn_classification",): only the network classification study runs, from its own
    seed stream; bad parts fail before anything runs."""
    seen = []
    monkeypatch.setattr(J, "logistic", lambda **kw: pytest.fail("the logistic study ran"))
    monkeypatch.setattr(J, "attack", lambda **kw: pytest.fail("the attack ran"))

    def neural(**kw):
        seen.append(kw["task"])
        return pd.DataFrame(
            {
                "method": ["βD-Bayes"],
                "dataset": ["simulated"],
                "n": [50],
                "epsilon": [5.0],
                "repeat": [0],
                "auc": [0.7],
                "released": [True],
            }
        )

    monkeypatch.setattr(J, "neural", neural)
    monkeypatch.setattr(J, "summarise", lambda table, metrics: table)
    monkeypatch.setattr("pystanprivacy.experiments.jewson2023.figures.figure9", lambda summary, path: None)
    tables = J.reproduce(tmp_path / "out", quick=True, progress=False, parts=("nn_classification",))
    assert seen == ["classification"]  # quick: the simulated networks only (no UCI panel)
    assert set(tables) == {"nn_classification", "nn_classification_summary"}
    assert (tmp_path / "out" / "jewson2023_nn_classification.csv").is_file()
    for bad in (("logistic", "nosuch"), ()):
        with pytest.raises(ValueError, match=r"parts must be a non-empty subset of \('logistic', 'attack'"):
            J.reproduce(tmp_path / "bad", quick=True, progress=False, parts=bad)
    assert not (tmp_path / "bad").exists()


def test_neural_features_sweep_d_at_fixed_n():
    """Figure 10's network rows: every release at the requested d and n, one data stream per
    d (the rows of a d do not depend on which other d run), a bad d refused first."""
    kw = dict(
        task="regression",
        n_obs=30,
        epsilons=[5.0],
        repeats=2,
        methods=["beta-D", "PM (non-private)"],
        sampler=dict(chains=2, warmup=150, draws=50),
        seed=3,
        progress=False,
    )
    table = J.neural_features(ds=(1, 3), **kw)
    assert sorted(table["d"].unique()) == [1, 3] and (table["n_obs"] == 30).all()
    assert len(table) == 2 * 2 * 2 and (table["task"] == "regression").all()
    ok = table[table["released"].astype(bool)]
    assert len(ok) and (ok["test_rmse"] > 0).all()
    alone = J.neural_features(ds=(3,), **kw)
    pd.testing.assert_frame_equal(
        table[table["d"] == 3].drop(columns="seconds").reset_index(drop=True),
        alone.drop(columns="seconds").reset_index(drop=True),
        check_like=True,
    )
    with pytest.raises(ValueError, match=r"ds\[i\] must be an int >= 1"):
        J.neural_features(ds=(2, 0), progress=False)
    with pytest.raises(ValueError, match=r"unknown methods \['nosuch'\]"):
        J.neural(methods=["nosuch"], progress=False)


def test_figure10_holds_the_rows_it_is_given(tmp_path):
    logistic = J.summarise(
        pd.DataFrame(
            [
                dict(
                    dataset="simulated",
                    method=m,
                    epsilon=e,
                    d=d,
                    n_obs=1000,
                    released=True,
                    rmse=0.1 * d,
                    auc=0.7,
                    csa=0.9,
                )
                for m in ("beta-D", "Minami")
                for e in (0.5, 5.0)
                for d in (2, 5)
            ]
        ),
        ["rmse", "auc", "csa"],
        by=("dataset", "method", "epsilon", "d"),
    )
    rows = [
        dict(
            task=t,
            dataset="simulated",
            method=m,
            epsilon=e,
            d=d,
            n_obs=1000,
            released=True,
            **({"test_rmse": 0.5 + d / 10} if t == "regression" else {"auc": 0.6 + d / 100}),
        )
        for t in ("regression", "classification")
        for d in (2, 5)
        for m, eps in (("beta-D", (0.5, 5.0)), ("PM (non-private)", (math.inf,)))
        for e in eps
    ]
    nets = J.summarise(pd.DataFrame(rows), ["test_rmse", "auc"], by=("task", "dataset", "method", "epsilon", "d"))
    fig = plots.figure10(logistic, tmp_path / "f10.png", networks=nets)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == [
        f"{r}, ε = {e}" for r in ("logistic regression", "NN regression", "NN classification") for e in ("0.5", "5")
    ]
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    reg = next(ln for ln in panels["NN regression, ε = 5"].lines if ln.get_label() == "beta-D")
    np.testing.assert_allclose(reg.get_ydata(), np.log([0.7, 1.0]))  # log of the mean test RMSE, by d
    assert panels["NN classification, ε = 0.5"].get_ylabel() == "test ROC-AUC"
    only = plots.figure10(None, networks=nets)
    assert len([ax for ax in only.axes if ax.get_title()]) == 4
    with pytest.raises(ValueError, match="figure10: give the features summary"):
        plots.figure10(None)


def test_nn_features_part_draws_figure10_with_the_logistic_row_of_an_earlier_run(tmp_path, monkeypatch):
    seen, drawn = [], {}

    def neural_features(**kw):
        seen.append((kw["task"], kw["ds"], kw["n_obs"]))
        metric = {"test_rmse": [0.5]} if kw["task"] == "regression" else {"auc": [0.7]}
        return pd.DataFrame(
            {
                "task": [kw["task"]],
                "dataset": ["simulated"],
                "method": ["beta-D"],
                "epsilon": [5.0],
                "d": [2],
                "n_obs": [kw["n_obs"]],
                "repeat": [0],
                "released": [True],
                **metric,
            }
        )

    monkeypatch.setattr(J, "neural_features", neural_features)
    monkeypatch.setattr(
        "pystanprivacy.experiments.jewson2023.figures.figure10",
        lambda summary, path, networks=None: drawn.update(logistic=summary, networks=networks),
    )
    out = tmp_path / "out"
    out.mkdir()
    earlier = pd.DataFrame(
        {"dataset": ["simulated"], "method": ["beta-D"], "epsilon": [5.0], "d": [2], "log_rmse_mean": [-1.0]}
    )
    earlier.to_csv(out / "jewson2023_features_summary.csv", index=False)
    tables = J.reproduce(out, quick=True, progress=False, parts=("nn_features",))
    assert seen == [
        ("regression", J.QUICK["nn_features_ds"], J.QUICK["nn_features_n"]),
        ("classification", J.QUICK["nn_features_ds"], J.QUICK["nn_features_n"]),
    ]
    assert set(tables) == {"nn_features", "nn_features_summary"}
    assert (out / "jewson2023_nn_features_summary.csv").is_file()
    pd.testing.assert_frame_equal(drawn["logistic"], earlier)
    assert set(drawn["networks"]["task"]) == {"regression", "classification"}
