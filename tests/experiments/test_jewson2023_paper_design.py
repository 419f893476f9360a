"""Jewson et al. (2023), the simulated logistic design as Sec. 5 states it
(:func:`pystanprivacy.experiments.jewson2023.data.simulate_logistic_paper`,
:mod:`pystanprivacy.experiments.jewson2023.paper_design`, REPRODUCTION.md J2 and J10).

Checked against independent computations: the features against the clipped standard normal
and the coefficients against N(0, 3^2) (Kolmogorov-Smirnov), the labels against the stated
likelihood (a likelihood-ratio test at the true theta and a calibration test with the known
probabilities, each shown to reject labels drawn from the raw features), the study's design
against its committed Figure 2 tables, the AUCs with scikit-learn, the task's fit against
scikit-learn's regularised logistic regression, the figures against their tables. No Stan
sampling: the tasks run the closed-form Chaudhuri rows only.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from pystanprivacy.experiments.jewson2023 import paper_design as P
from pystanprivacy.experiments.jewson2023 import paper_design_figures as F
from pystanprivacy.experiments.jewson2023 import study as J
from pystanprivacy.experiments.jewson2023.counterparts import logistic_data_seeds
from pystanprivacy.experiments.jewson2023.data import simulate_logistic, simulate_logistic_paper
from pystanprivacy.run.runner import run_context, selected_tasks

RESULTS = Path(__file__).resolve().parents[2] / "results" / "jewson2023"
CHAUDHURI = ["Chaudhuri 1/(9n)", "Chaudhuri 1/9"]


# ----------------------------------------------------------------------------- the design
@pytest.mark.parametrize("d", [1, 2, 5])
def test_the_papers_design_has_d_features_in_the_unit_interval_and_no_constant_column(d):
    data = simulate_logistic_paper(3000, d, n_test=500, seed=20 + d)
    assert data.X.shape == (3000, d) and data.X_test.shape == (500, d) and data.truth["theta"].shape == (d,)
    assert not data.intercept and data.n_features == d
    for X in (data.X, data.X_test):
        assert X.min() >= 0.0 and X.max() <= 1.0
        assert np.all(X.std(axis=0) > 0.1)  # no constant column (a constant 1 has sd 0)
    # the features are N(0, 1) clipped to [-4, 4] and mapped onto [0, 1]: 8 x - 4 is N(0, 1)
    # (clipping touches 6e-5 of the draws). KS at level 1e-3 per d: false rejection 1e-3 each;
    # features mapped by min-max of the sample, or left unscaled, are rejected (p < 1e-10 here)
    p = stats.kstest((8.0 * data.X - 4.0).ravel(), "norm").pvalue
    assert p > 1e-3, p


def test_the_coefficients_are_n_0_9():
    """theta ~ N(0, 3^2) with nothing centred: the first and the second coefficient of 1,500
    independent truths each pass KS against N(0, 3^2) at level 1e-3 (false rejection 2e-3
    together); the study's centred intercept, -0.5 theta_1, has sd 1.5 and fails (p ~ 1e-40)."""
    thetas = np.array([simulate_logistic_paper(1, 2, n_test=1, seed=k).truth["theta"] for k in range(1500)])
    for j in range(2):
        assert stats.kstest(thetas[:, j], "norm", args=(0.0, 3.0)).pvalue > 1e-3
    assert stats.kstest(-0.5 * thetas[:, 1], "norm", args=(0.0, 3.0)).pvalue < 1e-10


def _log_lik(X, y, theta):
    eta = X @ theta
    return float(np.sum(y * eta - np.logaddexp(0.0, eta)))


def _likelihood_tests(X, y, theta):
    """(likelihood-ratio statistic of the true theta, ~ chi2_d; calibration statistic of the
    known probabilities in 20 bins of equal size, ~ chi2_20) for labels y ~ Bernoulli(expit(X theta))."""
    fit = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=10_000).fit(X, y)
    lr = 2.0 * (_log_lik(X, y, fit.coef_[0]) - _log_lik(X, y, theta))
    p = expit(X @ theta)
    bins = np.array_split(np.argsort(p), 20)
    hl = sum((y[b].sum() - p[b].sum()) ** 2 / np.sum(p[b] * (1 - p[b])) for b in bins)
    return lr, hl


def test_labels_follow_the_stated_likelihood_of_the_scaled_features():
    """y ~ Bernoulli(inv_logit(x' theta)) of the scaled features, no intercept. With n = 20,000
    (seed 13: theta = (5.5, -9.2, 2.9), 42 % ones) the likelihood-ratio statistic of the true
    theta is chi2_3 and the calibration statistic with the known probabilities is chi2_20
    (each asymptotically); each is rejected above its 0.9995 quantile, so a correct generator
    fails with probability about 1e-3. Labels drawn from the raw N(0, 1) features with the same
    theta are rejected by both here (LR > 1,000), as are labels with the study's intercept."""
    data = simulate_logistic_paper(20_000, 3, n_test=1, seed=13)
    X, y, theta = data.X, data.y, data.truth["theta"]
    assert 0.05 < y.mean() < 0.95
    lr, hl = _likelihood_tests(X, y, theta)
    assert lr < stats.chi2.ppf(0.9995, 3), lr
    assert hl < stats.chi2.ppf(0.9995, 20), hl
    # power: the same tests reject labels from the raw features z = 8 x - 4
    rng = np.random.default_rng(6)
    raw = (rng.random(X.shape[0]) < expit((8.0 * X - 4.0) @ theta)).astype(int)
    lr_raw, hl_raw = _likelihood_tests(X, raw, theta)
    assert lr_raw > 1000 and hl_raw > stats.chi2.ppf(0.9995, 20)


def test_the_class_balance_stated_in_the_docstring():
    """simulate_logistic_paper's docstring: at d = 2 the share of y = 1 of a truth has 10 % /
    90 % quantiles 0.07 / 0.92 and the minority class is under 5 % for 13 % of truths. Here
    4,000 other truths (another seed than the docstring's), the share by 4,000 feature draws:
    the quantiles' MC SE is about 0.006 and the fraction's 0.005, so tolerances of 0.025 and
    0.02 are 4 SE (false rejection < 1e-3); the share with a centred intercept, or with the
    raw features, moves them by more than 0.1."""
    rng = np.random.default_rng(77)
    theta = rng.normal(0.0, 3.0, (4000, 2))
    x = simulate_logistic_paper(4000, 2, n_test=1, seed=78).X  # the design's own features
    share = expit(x @ theta.T).mean(axis=0)
    q10, q90 = np.quantile(share, [0.1, 0.9])
    assert q10 == pytest.approx(0.07, abs=0.025) and q90 == pytest.approx(0.92, abs=0.025)
    assert np.mean(np.minimum(share, 1 - share) < 0.05) == pytest.approx(0.13, abs=0.02)


# ----------------------------------------------------------------------------- the study's design
def test_the_studys_design_is_unchanged_against_its_committed_figure2_rows():
    """simulate_logistic (the default) still draws the data sets of the committed logistic part:
    at n = 1000 every released row's test AUC is the AUC of the one feature or of its negative
    (the design has an intercept and one feature) on the test set drawn again from the part's
    data seeds, to 1e-12."""
    committed = pd.read_csv(RESULTS / "jewson2023_logistic.csv")
    committed = committed[(committed["dataset"] == "simulated") & committed["released"]]
    seeds = logistic_data_seeds(
        datasets=["simulated"],
        ns=J.FULL["logistic_sim_ns"],
        repeats=J.FULL["logistic_repeats"],
        seed=0,
        stream="logistic-sim",
    )
    checked = 0
    for _, n, r, s in seeds:
        if n != 1000:
            continue
        data = simulate_logistic(n, 2, n_test=1000, seed=s)
        assert data.intercept and np.all(data.X[:, 0] == 1.0) and data.X.shape == (1000, 2)
        assert data.truth["theta"][0] == -0.5 * data.truth["theta"][1]
        a = roc_auc_score(data.y_test, data.X_test[:, 1])
        rows = committed[(committed["n_obs"] == n) & (committed["repeat"] == r)]
        for auc in rows["auc"]:
            assert min(abs(auc - a), abs(auc - (1 - a))) < 1e-12
            checked += 1
    assert checked >= 240  # 10 repeats x 25 rows, a few refused


def test_the_auc_separates_directions_on_the_papers_design_and_not_on_the_studys():
    """At d = 2, two fitted directions with the slope's sign right get one AUC under the
    study's design (a monotone map of the one feature) and different AUCs under the paper's:
    with 5,000 test records (seed 34: theta = (-0.1, -3.8), 13 % ones) the two axes' AUCs are
    0.51 and 0.64, each with a standard error under 0.012, so the 0.05 margin is more than
    3 SE of their difference."""
    study = simulate_logistic(1000, 2, n_test=5000, seed=34)
    slope = np.sign(study.truth["theta"][1])
    a = roc_auc_score(study.y_test, study.X_test @ np.array([-0.5, 1.0 * slope]))
    b = roc_auc_score(study.y_test, study.X_test @ np.array([4.0, 0.3 * slope]))
    assert a == b
    paper = simulate_logistic_paper(1000, 2, n_test=5000, seed=34)
    theta = paper.truth["theta"]
    axes = [roc_auc_score(paper.y_test, paper.X_test @ t) for t in ([np.sign(theta[0]), 0.0], [0.0, np.sign(theta[1])])]
    assert abs(axes[0] - axes[1]) > 0.05, axes


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(n=0), "n"),
        (dict(d=0), "d"),
        (dict(n_test=0), "n_test"),
        (dict(coef_sd=0.0), "coef_sd"),
        (dict(coef_sd=-3.0), "coef_sd"),
        (dict(coef_sd=math.nan), "coef_sd"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(kwargs, name):
    args = {"n": 10, "d": 2, **kwargs}
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        simulate_logistic_paper(args.pop("n"), args.pop("d"), **args)


def test_wrong_types_and_bad_grids_are_refused():
    with pytest.raises(TypeError, match="^n must be an int"):
        simulate_logistic_paper(10.5)
    with pytest.raises(ValueError, match="repeats must be"):
        P.logistic_paper(repeats=0, progress=False)
    with pytest.raises(ValueError, match=r"ds\[i\] must be"):
        P.features_paper(ds=[0], progress=False)
    with pytest.raises(ValueError, match="unknown methods"):
        P.logistic_paper(methods=["DP-SGD"], progress=False)


# ----------------------------------------------------------------------------- the task
def test_the_task_fits_the_studys_methods_on_the_papers_data():
    """paper_design_task runs the study's logistic_task on simulate_logistic_paper's data (d
    columns, no intercept): at epsilon = 1e6 Chaudhuri's release is its noise-free regularised
    minimiser to within 2e-5 per coefficient, which is scikit-learn's L2 logistic regression
    without intercept at C = 1/(n lambda); its RMSE against the truth and its test AUC match
    to 1e-4 (a fit with an intercept column, or on the study's data, is off by > 0.05)."""
    data_seed, n, d = np.random.SeedSequence(7), 200, 3
    t = P.paper_design_task(
        n_obs=n, epsilons=[1e6], repeat=4, data_seed=data_seed, d=d, methods=CHAUDHURI, seed=np.random.SeedSequence(8)
    )
    assert J._logistic_data.__module__ == J.__name__ and J._logistic_data.__name__ == "_logistic_data"
    data = simulate_logistic_paper(n, d, n_test=1000, seed=np.random.SeedSequence(7))
    assert set(t["design"]) == {"paper"} and set(t["d"]) == {d} and set(t["n_obs"]) == {n} and set(t["repeat"]) == {4}
    assert (t["y1_share"] == data.y.mean()).all() and (t["y1_share_test"] == data.y_test.mean()).all()
    for method, lam in (("Chaudhuri 1/(9n)", 1.0 / (9 * n)), ("Chaudhuri 1/9", 1.0 / 9)):
        erm = LogisticRegression(C=1.0 / (n * lam), fit_intercept=False, tol=1e-12, max_iter=100_000)
        theta = erm.fit(data.X, data.y).coef_[0]
        row = t[t["method"] == method].iloc[0]
        assert row["rmse"] == pytest.approx(np.sqrt(np.mean((theta - data.truth["theta"]) ** 2)), abs=1e-4)
        assert row["auc"] == pytest.approx(roc_auc_score(data.y_test, data.X_test @ theta), abs=1e-4)
        assert row["csa"] == np.mean(np.sign(theta) == np.sign(data.truth["theta"]))
        assert row["epsilon_guarantee"] == pytest.approx(d * 1e6)  # the paper's noise is (p eps)-DP


def test_a_logistic_task_that_draws_its_data_elsewhere_is_refused(monkeypatch):
    def drawn_elsewhere(**kwargs):
        return pd.DataFrame([{"method": "Chaudhuri 1/9"}])

    original = J._logistic_data
    monkeypatch.setattr(J, "logistic_task", drawn_elsewhere)
    with pytest.raises(RuntimeError, match="drew its data 0 times"):
        P.paper_design_task(n_obs=20, epsilons=[1.0], repeat=0, data_seed=1, methods=CHAUDHURI)
    assert J._logistic_data is original


def test_the_grids_use_streams_of_their_own():
    """The tasks of both grids are the study's grids with their own data seeds: none equals a
    data seed of the study's logistic or features parts (nothing runs)."""
    seen = []

    def keep(task):
        seen.append(task)
        return False

    with selected_tasks(keep):
        P.logistic_paper(
            ns=J.FULL["logistic_sim_ns"], epsilons=[1.0], repeats=J.FULL["logistic_repeats"], progress=False
        )
        P.features_paper(
            ds=J.FULL["features_ds"],
            n_obs=J.FULL["features_n"],
            epsilons=[1.0],
            repeats=J.FULL["features_repeats"],
            progress=False,
        )
    assert len(seen) == 5 * 10 + 4 * 10
    assert {t.kwargs["d"] for t in seen[:50]} == {2} and [t.kwargs["d"] for t in seen[50::10]] == [2, 5, 10, 20]
    ours = {(str(s.entropy), tuple(s.spawn_key)) for s in (t.kwargs["data_seed"] for t in seen)}
    assert len(ours) == len(seen)
    study = logistic_data_seeds(
        datasets=["simulated"], ns=J.FULL["logistic_sim_ns"], repeats=10, seed=0, stream="logistic-sim"
    )
    study += logistic_data_seeds(datasets=["simulated"], ns=[1000], repeats=10, seed=0, stream="features-d2")
    assert not ours & {(str(s.entropy), tuple(s.spawn_key)) for *_, s in study}


# ----------------------------------------------------------------------------- summary and figures
def test_summarise_design_adds_the_standard_error_of_the_log_rmse():
    rng = np.random.default_rng(2)
    rows = [
        dict(
            dataset="simulated",
            method=m,
            epsilon=1.0,
            n_obs=n,
            repeat=r,
            released=r != 3,
            rmse=rng.uniform(0.1, 3.0),
            auc=rng.uniform(),
            csa=1.0,
        )
        for m in ("beta-D", "Minami")
        for n in (50, 100)
        for r in range(5)
    ]
    table = pd.DataFrame(rows)
    s = F.summarise_design(table, ("dataset", "method", "epsilon", "n_obs"))
    for _, row in s.iterrows():
        g = table[(table["method"] == row["method"]) & (table["n_obs"] == row["n_obs"]) & table["released"]]
        logs = np.log(g["rmse"].to_numpy())
        assert row["log_rmse_mean"] == pytest.approx(logs.mean(), rel=1e-12)
        assert row["log_rmse_se"] == pytest.approx(logs.std(ddof=1) / math.sqrt(4), rel=1e-12)
        assert row["runs"] == 5 and row["refused"] == 1


def _summary(rng, x, values):
    return pd.DataFrame(
        [
            dict(
                dataset="simulated",
                method=m,
                epsilon=e,
                **{x: v},
                runs=10,
                refused=0,
                log_rmse_mean=rng.normal(),
                log_rmse_se=0.1,
                auc_mean=rng.uniform(),
                auc_se=0.02,
            )
            for m, eps in (("beta-D", (0.5, 5.0)), ("Minami", (0.5, 5.0)), ("PM (non-private)", (math.inf,)))
            for e in eps
            for v in values
        ]
    )


def _line(ax, colour):
    from matplotlib.colors import to_rgba

    for ln in ax.get_lines():
        if to_rgba(ln.get_color()) == to_rgba(colour) and len(ln.get_xdata()) > 1:
            return np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
    raise AssertionError(f"no line of colour {colour}")


@pytest.mark.parametrize("which", ["figure2", "figure10"])
def test_the_figures_draw_both_designs_from_their_tables(which, tmp_path):
    rng = np.random.default_rng(4)
    x, values, draw = (
        ("n_obs", (50, 200, 1000), F.design_figure2) if which == "figure2" else ("d", (2, 5, 10, 20), F.design_figure10)
    )
    paper, study = _summary(rng, x, values), _summary(rng, x, values)
    fig = draw(paper, study, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert len(panels) == 4  # two designs x two epsilons, each a log-RMSE and an AUC row ...
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert len(axes) == 8  # ... so 8 panels, titles repeated per metric
    for k, (design, table) in enumerate((("paper's design", paper), ("study's design", study))):
        rmse_ax, auc_ax = axes[4 * k + 1], axes[4 * k + 3]  # epsilon = 5 of the RMSE row, then of the AUC row
        assert rmse_ax.get_title() == auc_ax.get_title() == f"{design}, ε = 5"
        g = table[(table["method"] == "beta-D") & (table["epsilon"] == 5.0)].sort_values(x)
        xs, ys = _line(rmse_ax, "tab:red")
        assert list(xs) == list(values) and np.allclose(ys, g["log_rmse_mean"])
        assert np.allclose(_line(auc_ax, "tab:red")[1], g["auc_mean"])
        assert rmse_ax.collections  # the ± SE band
    assert len([ax for ax in draw(paper).axes if ax.get_title()]) == 4  # the paper's design alone


# ----------------------------------------------------------------------------- committed results
def test_committed_tables_are_their_saved_tasks_read_back():
    """Every committed task file of part ``paper_design`` (results/jewson2023/paper_design) is read back by the current
    code under ``saved_only`` (nothing runs), none is missing, and the committed tables and
    summaries are those tasks' rows (a change to paper_design.py orphans them: this fails)."""
    size, tasks = J.FULL, RESULTS / "paper_design" / ".tasks"
    saved = {p.stem for p in tasks.glob("*.json")}
    with run_context(resume_dir=tasks, saved_only=True) as ctx:
        fig2 = P.logistic_paper(
            ns=size["logistic_sim_ns"],
            epsilons=size["logistic_sim_epsilons"],
            repeats=size["logistic_repeats"],
            d=2,
            sampler=size["sampler"],
            progress=False,
        )
        fig10 = P.features_paper(
            ds=size["features_ds"],
            n_obs=size["features_n"],
            epsilons=size["features_epsilons"],
            repeats=size["features_repeats"],
            sampler=size["sampler"],
            progress=False,
        )
    assert ctx.missing == [] and saved == ctx.found
    for table, name, x in ((fig2, "logistic", "n_obs"), (fig10, "features", "d")):
        committed = pd.read_csv(RESULTS / f"jewson2023_{name}_paper_design.csv")
        ours = table.drop(columns="seconds").assign(problems=table["problems"].replace("", np.nan))  # "" reads as NaN
        pd.testing.assert_frame_equal(ours, committed.drop(columns="seconds"), check_dtype=False)
        summary = pd.read_csv(RESULTS / f"jewson2023_{name}_paper_design_summary.csv")
        ours = F.summarise_design(committed, ("dataset", "method", "epsilon", x))
        pd.testing.assert_frame_equal(ours, summary, check_dtype=False)
