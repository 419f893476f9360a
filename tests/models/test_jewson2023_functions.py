"""Jewson et al. (2023) without Stan: Lemma 1, the beta <-> epsilon calibration, the losses,
the baselines' closed forms, data preparation and bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pystanprivacy.experiments.jewson2023 import baselines as base
from pystanprivacy.experiments.jewson2023.data import load_uci, simulate_logistic, simulate_nn, subsample
from pystanprivacy.experiments.jewson2023.study import correct_sign_accuracy, roc_auc
from pystanprivacy.models.jewson2023 import (
    LinearRegressionBetaD,
    LogisticRegressionBetaD,
    NNClassifierBetaD,
    NNRegressionBetaD,
    beta_from_epsilon,
    betad_loss_bernoulli,
    betad_loss_normal,
    epsilon_from_beta,
    gaussian_density_bound,
    loss_sensitivity,
    min_epsilon,
    min_variance_bound,
    nn_forward,
)
from pystanprivacy.privacy.records import PrivacyAccountant

M_GAUSS = gaussian_density_bound(0.01)  # (2 pi 0.01)^(-1/2) = 3.989


# ----------------------------------------------------------------------------- Lemma 1
@pytest.mark.parametrize("beta", [1.01, 1.1, 1.5, 3.0, 11.0, 201.0])
def test_lemma1_bernoulli_loss_difference_never_exceeds_bound(beta):
    """|l(D) - l(D')| <= M^(beta-1)/(beta-1) with M = 1 for random theta and random
    neighbouring observations (y, x) and (y', x'), including different features (the
    integral term depends on x; the bound still holds because y -> l is monotone in f)."""
    rng = np.random.default_rng(1)
    n = 200_000
    eta = rng.normal(0, 1, n) * rng.choice([0.1, 1, 10, 100], n)  # x' theta for D_i
    eta_p = rng.normal(0, 1, n) * rng.choice([0.1, 1, 10, 100], n)  # x'' theta for D'_i
    y, y_p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    diff = np.abs(betad_loss_bernoulli(y, eta, beta) - betad_loss_bernoulli(y_p, eta_p, beta))
    bound = loss_sensitivity(beta, 1.0)
    assert diff.max() <= bound * (1 + 1e-9)
    assert diff.max() >= 0.5 * bound  # the bound is approached (|eta| up to hundreds)


@pytest.mark.parametrize("beta", [1.05, 1.3, 1.62, 2.0])
@pytest.mark.parametrize("s2", [0.01, 0.5])
def test_lemma1_gaussian_loss_difference_never_exceeds_bound(beta, s2):
    rng = np.random.default_rng(2)
    n = 200_000
    sigma2 = s2 * np.exp(rng.exponential(1.0, n) * rng.choice([0.0, 1.0], n))  # sigma2 >= s2, often = s2
    mu = rng.normal(0, 3, n)
    y = mu + rng.normal(0, 1, n) * np.sqrt(sigma2) * rng.choice([0.0, 0.1, 1, 30], n)
    y_p = rng.normal(0, 50, n)
    diff = np.abs(betad_loss_normal(y, mu, sigma2, beta) - betad_loss_normal(y_p, mu, sigma2, beta))
    bound = loss_sensitivity(beta, gaussian_density_bound(s2))
    assert diff.max() <= bound * (1 + 1e-9)
    assert diff.max() >= 0.9 * bound


def test_losses_match_their_definition_numerically():
    """l = -f^(b)/b + (1/beta) ∫ f^beta, with the integral done by quadrature / summation."""
    beta, mu, sigma2, y = 1.7, 0.3, 0.8, 1.1
    f = stats.norm(mu, math.sqrt(sigma2)).pdf
    integral = integrate.quad(lambda z: f(z) ** beta, -np.inf, np.inf)[0]
    expect = -(f(y) ** (beta - 1)) / (beta - 1) + integral / beta
    assert betad_loss_normal(y, mu, sigma2, beta) == pytest.approx(expect, rel=1e-10)
    p = 1 / (1 + math.exp(-0.4))
    expect = -(p ** (beta - 1)) / (beta - 1) + (p**beta + (1 - p) ** beta) / beta
    assert betad_loss_bernoulli(1, 0.4, beta) == pytest.approx(expect, rel=1e-12)
    # beta -> 1: differences of the beta-D loss tend to differences of -log f
    b = 1 + 1e-7
    d = betad_loss_bernoulli(1, 0.4, b) - betad_loss_bernoulli(0, 0.4, b)
    assert d == pytest.approx(-math.log(p) + math.log(1 - p), rel=1e-5)


# ----------------------------------------------------------------------------- calibration
@pytest.mark.parametrize("M", [1.0, M_GAUSS, 0.3])
@pytest.mark.parametrize("epsilon", [0.05, 0.2, 1.0, 7.53, 10.0, 20.0, 500.0])
def test_beta_epsilon_round_trip(M, epsilon):
    if epsilon < min_epsilon(M):
        with pytest.raises(ValueError, match=r"not reachable .* s2 >= exp\(-epsilon/e\)/\(2 pi\)"):
            beta_from_epsilon(epsilon, M)
        return
    beta = beta_from_epsilon(epsilon, M)
    assert beta > 1
    assert epsilon_from_beta(beta, M) == pytest.approx(epsilon, rel=1e-10)
    assert 2 * loss_sensitivity(beta, M) == pytest.approx(epsilon, rel=1e-10)
    if M > 1:  # the branch closer to the standard posterior
        assert beta - 1 <= 1 / math.log(M) + 1e-12


def test_calibration_closed_forms_and_minimum():
    assert beta_from_epsilon(1.0) == 3.0 and beta_from_epsilon(0.2) == pytest.approx(11.0)
    assert M_GAUSS == pytest.approx(1 / math.sqrt(2 * math.pi * 0.01))
    eps_min = min_epsilon(M_GAUSS)
    assert eps_min == pytest.approx(2 * math.e * math.log(M_GAUSS))
    assert beta_from_epsilon(eps_min, M_GAUSS) == pytest.approx(1 + 1 / math.log(M_GAUSS))
    # min_variance_bound is exactly the s2 whose minimum epsilon is the given one
    for eps in (0.5, 3.0, 8.0):
        assert min_epsilon(gaussian_density_bound(min_variance_bound(eps))) == pytest.approx(eps)
    # the Gaussian models calibrate with their own s2
    for cls in (LinearRegressionBetaD, NNRegressionBetaD):
        m = cls(s2=0.05)
        assert m.density_bound == gaussian_density_bound(0.05)
        assert m.beta(10.0) == beta_from_epsilon(10.0, gaussian_density_bound(0.05))
        assert m.epsilon(m.beta(10.0)) == pytest.approx(10.0)


# ----------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("cls", [LogisticRegressionBetaD, NNClassifierBetaD])
def test_classifier_bad_inputs(cls):
    m = cls()
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"y must hold labels in \{0, 1\}; 1 value\(s\) are not") as err:
        m.check_data(X, [0, 1, 2])
    assert "2" not in str(err.value).replace("{0, 1}", "").replace("1 value", "")
    with pytest.raises(ValueError, match="same number of rows"):
        m.check_data(X, [0, 1])
    with pytest.raises(ValueError, match="X must have 2 dimension"):
        m.check_data(np.zeros(3), [0, 1, 1])
    with pytest.raises(ValueError, match="X contains NaN"):
        m.check_data(np.full((3, 2), np.nan), [0, 1, 1])
    with pytest.raises(ValueError, match=r"epsilon must be a finite number > 0, got 0"):
        m.sample_one(X, [0, 1, 1], epsilon=0)
    with pytest.raises(ValueError, match=r"epsilon must be a finite number > 0, got -1"):
        m.try_sample_one(X, [0, 1, 1], epsilon=-1.0)
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        m.sample_one(X, [0, 1, 1], epsilon="1")


def test_regression_bad_inputs():
    for bad in (0, 0.0, -0.01, float("nan")):
        with pytest.raises(ValueError, match=r"s2 must be a finite number > 0"):
            LinearRegressionBetaD(s2=bad)
        with pytest.raises(ValueError, match=r"s2 must be a finite number > 0"):
            NNRegressionBetaD(s2=bad)
    m = LinearRegressionBetaD()  # s2 = 0.01: epsilon below 7.52 is unreachable
    with pytest.raises(
        ValueError,
        match=r"epsilon=1.0 is not reachable with the variance lower bound s2=0.01 "
        r"\(M = \(2 pi s2\)\^\(-1/2\) = 3.98942\): the smallest reachable "
        r"epsilon is 2 e ln M = 7.52\d*\. .* s2 >= exp\(-epsilon/e\)/\(2 pi\) = 0.110167",
    ):
        m.beta(1.0)
    assert NNRegressionBetaD(s2=min_variance_bound(1.0) * 1.0001).beta(1.0) > 1  # that s2 does reach it
    with pytest.raises(ValueError, match="y contains 1 infinite"):
        m.check_data(np.zeros((2, 1)), [0.0, np.inf])
    acct = PrivacyAccountant(5.0)
    with pytest.raises(ValueError, match="not reachable"):
        m.sample_one(np.zeros((2, 1)), [0.0, 1.0], epsilon=1.0, accountant=acct)
    assert acct.spent == (0.0, 0.0)


def test_release_layout_round_trip():
    m = NNRegressionBetaD(hidden=3)
    layout = m.layout(2)
    assert [n for n, _ in layout] == ["W", "b_in", "w_out", "b_out", "sigma2"]
    vals = np.arange(2 * 3 + 3 + 3 + 1 + 1, dtype=float)
    params = m.unpack(vals, 2)
    assert params["W"].shape == (2, 3) and params["sigma2"] == vals[-1]
    np.testing.assert_array_equal(m._flatten(params, 2), vals)
    with pytest.raises(ValueError, match="must have 14 entries"):
        m.unpack(vals[:-1], 2)
    X = np.random.default_rng(0).random((5, 2))
    manual = np.tanh(X @ params["W"] + params["b_in"]) @ params["w_out"] + params["b_out"]
    np.testing.assert_allclose(m.predict(params, X), manual)
    # batched forward pass equals the per-draw one
    Ws = np.stack([params["W"], 2 * params["W"]])
    batch = nn_forward(X, Ws, np.stack([params["b_in"]] * 2), np.stack([params["w_out"]] * 2), np.array([1.0, 2.0]))
    np.testing.assert_allclose(batch[1], nn_forward(X, 2 * params["W"], params["b_in"], params["w_out"], 2.0))


# ----------------------------------------------------------------------------- baselines
def test_regularised_logistic_regression_solves_its_optimality_condition():
    data = simulate_logistic(300, 3, seed=4)
    lam = 0.01
    th = base.regularised_logistic_regression(data.X, data.y, lam=lam)
    p = 1 / (1 + np.exp(-data.X @ th))
    grad = data.X.T @ (p - data.y) / 300 + lam * th
    assert np.abs(grad).max() < 1e-7
    th_sk = base.logistic_regression(data.X, data.y, C=1.0)
    p = 1 / (1 + np.exp(-data.X @ th_sk))
    grad = data.X.T @ (p - data.y) + np.r_[0.0, th_sk[1:]]
    assert np.abs(grad).max() < 1e-6


def _old_logistic_regression(X, y, C=1.0):
    """The former hand-written sklearn-default logistic regression, kept as the reference:
    argmin C sum_i log(1 + exp(-s_i x_i' theta)) + ||theta_{-0}||^2 / 2 by L-BFGS-B (gradient
    tolerance 1e-10), the intercept (column 0) unpenalised."""
    from scipy import optimize

    s = 2.0 * y - 1.0
    penalty = np.r_[0.0, np.ones(X.shape[1] - 1)]

    def objective(theta):
        z = s * (X @ theta)
        return (
            C * np.logaddexp(0.0, -z).sum() + 0.5 * np.sum(penalty * theta**2),
            C * (X.T @ (-s / (1.0 + np.exp(z)))) + penalty * theta,
        )

    return optimize.minimize(
        objective,
        np.zeros(X.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-15},
    ).x


def test_sklearn_logistic_regression_agrees_with_the_former_solver(shared_data_dir):
    """sklearn's LogisticRegression (C = 1, unpenalised intercept, tol 1e-10) gives the former
    minimiser within 1e-5 on simulated data and on Adult (measured: 4e-7), so the reference
    signs of the correct-sign accuracy are the same."""
    for d in (simulate_logistic(500, 4, seed=21), load_uci("adult", shared_data_dir, seed=np.random.default_rng(0))):
        new, old = base.logistic_regression(d.X, d.y), _old_logistic_regression(d.X, d.y)
        np.testing.assert_allclose(new, old, rtol=0, atol=1e-5)
        np.testing.assert_array_equal(np.sign(new), np.sign(old))
    small = simulate_logistic(200, 3, seed=22)
    X, y = small.X, small.y
    np.testing.assert_allclose(
        base.logistic_regression(X, y, C=0.3), _old_logistic_regression(X, y, C=0.3), rtol=0, atol=1e-5
    )
    with pytest.raises(ValueError, match=r"X\[:, 0\] must be the constant-1 intercept column"):
        base.logistic_regression(X[:, 1:], y)
    with pytest.raises(ValueError, match="y must hold both labels"):
        base.logistic_regression(X, np.ones(200, dtype=int))


def test_chaudhuri_release_noise_scale_and_record():
    """Default calibration: Laplace(2 p / (n lam epsilon)) per coordinate, epsilon charged.
    ``calibration="paper"``: the paper's Laplace(2 / (n lam epsilon)), charged p epsilon.
    KS tests of the noise against those scales; false-rejection rate 1e-3 each."""
    data = simulate_logistic(50, 2, seed=5)
    lam = base.CHAUDHURI_LAMBDAS["1/9"](50)
    th = base.regularised_logistic_regression(data.X, data.y, lam=lam)
    for calibration, scale, charged in (("l1", 2 * 2 / (50 * lam * 0.5), 0.5), ("paper", 2 / (50 * lam * 0.5), 1.0)):
        rng = np.random.default_rng(2024)
        rels = np.array(
            [
                base.chaudhuri_output_perturbation(
                    data.X, data.y, epsilon=0.5, lam=lam, calibration=calibration, seed=rng
                ).values
                for _ in range(400)
            ]
        )
        assert stats.kstest((rels - th).ravel(), stats.laplace(scale=scale).cdf).pvalue > 1e-3
        # and not the other calibration's scale (a factor p = 2 apart)
        assert (
            stats.kstest(
                (rels - th).ravel(), stats.laplace(scale=scale * (2 if calibration == "paper" else 0.5)).cdf
            ).pvalue
            < 1e-3
        )
        acct = PrivacyAccountant(2.0)
        rec = base.chaudhuri_output_perturbation(
            data.X, data.y, epsilon=0.5, lam=lam, calibration=calibration, seed=1, accountant=acct
        ).record
        assert (rec.mechanism, rec.epsilon, rec.delta, rec.n) == ("laplace", charged, 0.0, 50)
        assert acct.spent == (charged, 0.0)
        assert rec.scale == pytest.approx(scale) and rec.details["lam"] == lam
        assert (rec.details["calibration"], rec.details["nominal_epsilon"]) == (calibration, 0.5)
    acct = PrivacyAccountant(1.0)
    with pytest.raises(ValueError, match=r"X contains 2 value\(s\) with \|x_j\| > 1"):
        base.chaudhuri_output_perturbation(data.X + np.eye(50, 2) * 5, data.y, epsilon=0.5, lam=lam, accountant=acct)
    with pytest.raises(ValueError, match=r"calibration must be one of \['l1', 'paper'\], got 'theorem4'"):
        base.chaudhuri_output_perturbation(
            data.X, data.y, epsilon=0.5, lam=lam, calibration="theorem4", accountant=acct
        )
    assert acct.spent == (0.0, 0.0)


def test_chaudhuri_paper_sensitivity_fails_for_p_above_one():
    """Theorem 4 of the paper bounds ||theta_hat(D) - theta_hat(D')||_1 by 2 / (n lam); these
    neighbours (p = 10, every record an intercept but the changed one, whose features are all 1
    and whose label flips) move the minimiser 3.9 times further, within 2 p / (n lam)."""
    n, p, lam = 100, 10, 1 / 9
    X = np.zeros((n, p))
    X[:, 0] = 1.0
    X[0] = 1.0
    y = np.tile([0, 1], n // 2)
    y_prime = y.copy()
    y_prime[0] = 1 - y[0]
    moved = np.abs(
        base.regularised_logistic_regression(X, y, lam=lam) - base.regularised_logistic_regression(X, y_prime, lam=lam)
    ).sum()
    assert moved > 3.5 * 2 / (n * lam)
    assert moved <= base.chaudhuri_sensitivity(n, lam, p) == pytest.approx(2 * p / (n * lam))
    assert base.chaudhuri_sensitivity(n, lam, 1) == pytest.approx(2 / (n * lam))  # p = 1: the paper's bound


def test_minami_weight():
    w = base.minami_weight(1.0, lipschitz=base.minami_lipschitz(2), m_pi=1 / 9, delta=1e-5)
    assert w == pytest.approx(1.0 / (2 * 2 * math.sqrt(2)) * math.sqrt((1 / 9) / (1 + 2 * math.log(1e5))))
    assert base.MinamiGibbsLogistic().weight(1.0, 2) == pytest.approx(w)
    with pytest.raises(ValueError, match="delta must be a finite number in \\(0, 1\\)"):
        base.minami_weight(1.0, lipschitz=1.0, m_pi=1.0, delta=0.0)


def test_dpsgd_needs_the_extra():
    if base.dpsgd_available():
        pytest.skip("torch and opacus are installed: the guard is not exercised")
    with pytest.raises(ImportError, match=r"pip install 'pystanprivacy\[dpsgd\]'"):
        base.train_nn_sgd(np.zeros((4, 2)), np.zeros(4), task="regression", epsilon=1.0)
    assert base.dpsgd_epochs(1.0) == 15 and base.dpsgd_epochs(5.5) == 19


def test_dpsgd_trains_when_installed():
    pytest.importorskip("torch", reason="DP-SGD needs the optional extra [dpsgd] (torch)")
    pytest.importorskip("opacus", reason="DP-SGD needs the optional extra [dpsgd] (opacus)")
    data = simulate_nn(2000, 2, task="regression", seed=3)
    params, rec = base.train_nn_sgd(data.X, data.y, task="regression", epsilon=5.0, seed=0)
    assert rec is not None and rec.epsilon <= 5.0 + 1e-6 and rec.delta == 1e-5
    assert rec.details["secure"] is False  # torch's generator, not a cryptographic one
    pred = nn_forward(data.X_test, params["W"], params["b_in"], params["w_out"], params["b_out"])
    # better than predicting 0 (the responses have a non-zero mean function)
    assert np.mean((pred - data.y_test) ** 2) < np.mean(data.y_test**2)


# ----------------------------------------------------------------------------- data, metrics
def test_simulated_data():
    d = simulate_logistic(5000, 3, seed=0)
    assert d.X.shape == (5000, 3) and np.all(d.X[:, 0] == 1) and d.X.min() >= 0 and d.X.max() <= 1
    assert set(np.unique(d.y)) == {0, 1}
    p = 1 / (1 + np.exp(-d.X @ d.truth["theta"]))
    # labels follow the model: mean label vs mean probability, 5 sd (false rejection ~6e-7)
    assert abs(d.y.mean() - p.mean()) < 5 * math.sqrt(np.sum(p * (1 - p))) / 5000
    r = simulate_nn(50, 4, task="regression", seed=1)
    assert r.X.shape == (50, 4) and r.truth["W"].shape == (4, 10) and r.truth["sigma2"] > 0


def test_uci_preparation(shared_data_dir):
    for name, p in (("adult", 7), ("abalone", 10), ("banknote", 5), ("wine", 11)):
        d = load_uci(name, shared_data_dir, seed=0)
        total = d.n + d.X_test.shape[0]
        assert d.X_test.shape[0] == round(0.1 * total)
        assert d.X.shape[1] == p and d.X.min() == 0.0 and d.X.max() == 1.0
        assert d.X_test.min() >= 0 and d.X_test.max() <= 1
        s = subsample(d, 100, seed=1)
        assert s.n == 100 and s.X_test is d.X_test
    assert load_uci("abalone", shared_data_dir, seed=0).y.mean() == pytest.approx(0.35, abs=0.02)
    bank = load_uci("banknote", shared_data_dir, seed=0)  # 610 forged of 1372; 10 % test split
    assert bank.n + bank.y_test.size == 1372 and int(bank.y.sum() + bank.y_test.sum()) == 610


def _rank_auc(y, score):
    """The former hand-written AUC, kept as the reference: Mann-Whitney U / (n1 n0) from
    mid-ranks (ties count one half)."""
    y = np.asarray(y)
    n1 = int(np.sum(y == 1))
    n0 = y.size - n1
    ranks = stats.rankdata(score)
    return float((ranks[y == 1].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def test_auc_and_csa():
    y = np.array([0, 0, 1, 1, 1])
    assert roc_auc(y, np.array([0.1, 0.4, 0.35, 0.8, 0.9])) == pytest.approx(5 / 6)
    assert roc_auc(y, np.array([1, 1, 1, 1, 1])) == 0.5
    assert np.isnan(roc_auc(np.ones(4), np.arange(4.0))) and np.isnan(roc_auc(np.zeros(4), np.arange(4.0)))
    rng = np.random.default_rng(0)
    yy = rng.integers(0, 2, 400)
    s = rng.normal(size=400)
    assert roc_auc(yy, s) == pytest.approx(
        stats.mannwhitneyu(s[yy == 1], s[yy == 0]).statistic / (yy.sum() * (400 - yy.sum()))
    )
    # sklearn's AUC (trapezoids under the ROC curve) equals the former rank formula up to rounding:
    # |difference| <= 4 ulp of 1 (about 1e-15); ties (rounded scores) included
    for k in range(30):
        n = int(rng.integers(5, 2000))
        yk = rng.integers(0, 2, n)
        yk[:2] = [0, 1]
        sk = rng.normal(size=n) + yk * rng.normal()
        if k % 3 == 0:
            sk = np.round(sk, 1)
        assert abs(roc_auc(yk, sk) - _rank_auc(yk, sk)) <= 4 * np.finfo(float).eps
    assert correct_sign_accuracy(np.array([1.0, -2.0, 3.0]), np.array([2.0, 1.0, 1.0])) == pytest.approx(2 / 3)
