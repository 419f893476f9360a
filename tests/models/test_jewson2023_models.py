"""Jewson et al. (2023) Stan models: targets against numerically integrated posteriors,
beta-D -> standard posterior as epsilon grows, sigma2 >= s2, the neural networks, the
convergence gate (refusal, explicit recorded override) and the privacy record.

Statistical tests use fixed seeds (deterministic); each states the probability that a
correct implementation fails it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.experiments.jewson2023.data import simulate_logistic, simulate_nn
from pystanprivacy.experiments.jewson2023.study import roc_auc
from pystanprivacy.models.base import NONPRIVATE, Model, OPSModel, OPSResult
from pystanprivacy.models.jewson2023 import (
    ConvergenceError,
    LinearRegressionBetaD,
    LogisticRegressionBetaD,
    NNClassifierBetaD,
    NNRegressionBetaD,
    betad_loss_bernoulli,
    epsilon_from_beta,
    gaussian_density_bound,
    reference_inputs,
)
from pystanprivacy.privacy.records import PrivacyAccountant
from pystanprivacy.sampling.stan import StanModel

Z_MAX = 4.5  # |z| < 4.5 per compared moment: false rejection ~7e-6 each
LONG = dict(chains=4, warmup=500, draws=1000)
NN_SAMPLER = dict(
    chains=2, warmup=300, draws=200
)  # small runs in CI; 2 x 100 draws often miss the ESS gate (25 per chain)


@pytest.fixture(scope="module")
def logistic_model():
    StanModel.get("jewson2023/logistic")
    return LogisticRegressionBetaD()


@pytest.fixture(scope="module")
def small_logistic():
    return simulate_logistic(40, 2, seed=11)


def _grid_posterior(X, y, loss, prior_sd=3.0, half=12.0, m=481):
    """Posterior of 2 coefficients on a grid: prior N(0, prior_sd^2 I) x exp(-sum loss)."""
    g = np.linspace(-half, half, m)
    t0, t1 = np.meshgrid(g, g, indexing="ij")
    eta = X[:, 0, None, None] * t0 + X[:, 1, None, None] * t1  # (N, m, m)
    logp = stats.norm.logpdf(t0, 0, prior_sd) + stats.norm.logpdf(t1, 0, prior_sd) - loss(y[:, None, None], eta).sum(0)
    w = np.exp(logp - logp.max())
    w /= w.sum()
    mean = np.array([(w * t0).sum(), (w * t1).sum()])
    sd = np.sqrt(np.array([(w * t0**2).sum(), (w * t1**2).sum()]) - mean**2)
    return mean, sd


def _assert_moments(draws, ess, mean, sd):
    z = (draws.mean(0) - mean) / (sd / np.sqrt(ess))
    assert np.all(np.abs(z) < Z_MAX), f"posterior means off: z = {z}"
    # sd: relative error of a sample sd ~ 1/sqrt(2 ESS) (normal approximation)
    zs = (draws.std(0) / sd - 1) / np.sqrt(1 / (2 * ess))
    assert np.all(np.abs(zs) < Z_MAX), f"posterior sds off: z = {zs}"


def test_logistic_betad_target_matches_numerical_integration(logistic_model, small_logistic):
    d = small_logistic
    beta = 3.0  # epsilon = 1
    post = logistic_model.generalised_posterior(d.X, d.y, beta=beta, seed=1, **LONG)
    assert post.check(variables=["theta"]) == []
    mean, sd = _grid_posterior(d.X, d.y, lambda yy, eta: betad_loss_bernoulli(yy, eta, beta))
    _assert_moments(post.draws("theta"), post.ess_bulk()["theta"], mean, sd)


def test_logistic_betad_approaches_standard_posterior_as_epsilon_grows(logistic_model, small_logistic):
    """The grid distance between the beta-D posterior and the standard posterior falls as
    epsilon grows, and the Stan beta-D draws at epsilon = 1e4 match the standard posterior."""
    d = small_logistic
    std_mean, std_sd = _grid_posterior(
        d.X, d.y, lambda yy, eta: -np.where(yy == 1, -np.logaddexp(0, -eta), -np.logaddexp(0, eta))
    )
    gaps = []
    for eps in (0.5, 2.0, 10.0, 100.0, 1e4):
        beta = logistic_model.beta(eps)
        m, _ = _grid_posterior(d.X, d.y, lambda yy, eta, b=beta: betad_loss_bernoulli(yy, eta, b))
        gaps.append(np.abs(m - std_mean).max())
    assert all(a > b for a, b in itertools.pairwise(gaps)), gaps
    assert gaps[-1] < 1e-3 * std_sd.min()
    post = logistic_model.generalised_posterior(d.X, d.y, epsilon=1e4, seed=2, **LONG)
    _assert_moments(post.draws("theta"), post.ess_bulk()["theta"], std_mean, std_sd)
    # the standard posterior of the same program (w = 1, the non-private baseline) matches too
    post1 = logistic_model.fit_nonprivate(d.X, d.y, seed=3, **LONG)
    assert post1.privacy == "non-private" and post.privacy == "non-private"
    _assert_moments(post1.draws("theta"), post1.ess_bulk()["theta"], std_mean, std_sd)


def test_sample_one_release_record_and_accountant(logistic_model):
    d = simulate_logistic(1000, 2, seed=3)
    acct = PrivacyAccountant(3.0)
    out = logistic_model.sample_one(d.X, d.y, epsilon=2.0, seed=4, accountant=acct)
    assert isinstance(out, OPSResult) and out.released and out.problems == [] and out.posterior is None
    rel = out.release
    rec = rel.record
    assert out.record is rec and out.details == {"beta": 2.0}
    np.testing.assert_array_equal(out.params["theta"], rel.values)
    assert (rec.mechanism, rec.epsilon, rec.delta, rec.n, rec.neighbouring) == ("ops", 2.0, 0.0, 1000, "replace-one")
    assert rec.details["beta"] == 2.0 and rec.details["M"] == 1.0
    assert "converged target" in rec.details["assumption"]
    assert rec.details["convergence_override"] is False
    assert (
        rec.details["sampler"]["warmup"] == 1000 and rec.details["sampler"]["draws"] == 400
    )  # the documented OPS default, 4 x (1000 + 400)
    assert rec.sensitivity == pytest.approx(1.0)  # M^(beta-1)/(beta-1) = 1 at beta = 2
    assert acct.spent == (2.0, 0.0)
    assert rel.values.shape == (2,)
    # the draw is a plausible posterior draw: within 5 posterior sds of the truth-ish region
    assert np.all(np.abs(rel.values - d.truth["theta"]) < 3.0)


def test_refusal_on_non_converged_run_and_recorded_override(logistic_model):
    d = simulate_logistic(200, 2, seed=5)
    acct = PrivacyAccountant(10.0)
    short = dict(chains=2, warmup=3, draws=8)  # far too short: R-hat / ESS cannot pass
    with pytest.raises(
        ConvergenceError, match=r"checks on theta \(thresholds: split R-hat .*allow_unconverged=True"
    ) as err:
        logistic_model.sample_one(d.X, d.y, epsilon=1.0, seed=6, accountant=acct, **short)
    assert "convergence checks" in str(err.value)
    assert acct.spent == (1.0, 0.0)  # the refusal depends on the data: the attempt is charged
    rel = logistic_model.sample_one(d.X, d.y, epsilon=1.0, seed=6, accountant=acct, allow_unconverged=True, **short)
    rec = rel.record
    assert rec.details["convergence_override"] is True and rec.details["override_requested"] is True
    # which checks failed (and their R-hat / ESS numbers) are statistics of the private run
    assert (
        "unmet_checks" not in rec.details and "not enforced (allow_unconverged=True)" in rec.details["convergence_gate"]
    )
    assert acct.spent == (2.0, 0.0)
    with pytest.raises(TypeError, match="allow_unconverged must be a bool"):
        logistic_model.sample_one(d.X, d.y, epsilon=1.0, allow_unconverged="yes", **short)


def _nig_posterior(X, y, a0, b0, v):
    """Standard posterior of y ~ N(X theta, s^2), theta | s^2 ~ N(0, v s^2 I), s^2 ~ IG(a0, b0):
    E[theta] and E[s^2] (closed form, normal-inverse-gamma)."""
    n, p = X.shape
    prec = X.T @ X + np.eye(p) / v
    m = np.linalg.solve(prec, X.T @ y)
    a = a0 + n / 2
    b = b0 + 0.5 * (y @ y - m @ prec @ m)
    return m, b / (a - 1)


def test_linear_regression_betad_tends_to_conjugate_posterior_and_respects_s2():
    StanModel.get("jewson2023/linear_regression")
    rng = np.random.default_rng(7)
    X = np.column_stack([np.ones(300), rng.random(300)])
    y = X @ np.array([1.0, -2.0]) + rng.normal(0, 0.7, 300)
    model = LinearRegressionBetaD(s2=0.01)
    post = model.generalised_posterior(X, y, epsilon=1e4, seed=8, **LONG)
    m, s2_mean = _nig_posterior(X, y, 1.0, 1.0, 9.0)
    th = post.draws("theta")
    # the posterior sd of theta from the draws; |z| < 4.5 on the means (false rejection ~1e-5)
    z = (th.mean(0) - m) / (th.std(0) / np.sqrt(post.ess_bulk()["theta"]))
    assert np.all(np.abs(z) < Z_MAX), z
    sig = post.draws("sigma2")
    assert abs(sig.mean() - s2_mean) < Z_MAX * sig.std() / np.sqrt(post.ess_bulk()["sigma2"])


def test_gaussian_models_never_sample_sigma2_below_s2_and_calibrate_with_it():
    StanModel.get("jewson2023/linear_regression")
    rng = np.random.default_rng(9)
    X = np.column_stack([np.ones(200), rng.random(200)])
    y = X @ np.array([0.5, 1.5]) + rng.normal(0, 0.01, 200)  # true variance 1e-4 << s2
    s2 = 0.05
    model = LinearRegressionBetaD(s2=s2)
    out = model.try_sample_one(X, y, epsilon=20.0, seed=10, keep_posterior=True, allow_unconverged=True)
    sig = out.posterior.draws("sigma2")
    assert sig.min() >= s2
    assert np.quantile(sig, 0.5) < 1.5 * s2  # pushed against the bound
    rec = out.release.record
    assert rec.details["s2"] == s2 and rec.details["M"] == gaussian_density_bound(s2)
    assert epsilon_from_beta(rec.details["beta"], rec.details["M"]) == pytest.approx(20.0)
    assert model.unpack(out.release.values, 2)["sigma2"] >= s2


@pytest.fixture(scope="module")
def nn_regression_model():
    StanModel.get("jewson2023/nn_regression")
    return NNRegressionBetaD(s2=0.1)


def test_nn_regression_release_predicts_and_respects_s2(nn_regression_model):
    rng = np.random.default_rng(12)
    X, X_test = rng.random((120, 2)), rng.random((500, 2))

    def mean(x):
        return 1.5 * np.sin(np.pi * x[:, 0]) + x[:, 1]

    y = mean(X) + 0.2 * rng.standard_normal(120)
    y_test = mean(X_test) + 0.2 * rng.standard_normal(500)
    out = nn_regression_model.try_sample_one(
        X, y, epsilon=20.0, seed=13, keep_posterior=True, max_treedepth=12, **NN_SAMPLER
    )
    post = out.posterior
    assert post.draws("sigma2").min() >= 0.1
    # the invariant gate: f_ref mixes even where raw weights may not
    assert np.nanmax(post.rhat()["f_ref"]) < 1.1
    assert out.released, out.problems
    pred = nn_regression_model.predict(out.params, X_test)
    # the released network captures the mean function: test RMSE well below the constant
    # predictor's (about 0.55; the noise sd is 0.2)
    assert np.sqrt(np.mean((pred - y_test) ** 2)) < 0.5 * np.sqrt(np.mean((y.mean() - y_test) ** 2))
    # layout consistency: predict() of each draw equals Stan's own f_ref
    W, b_in, w_out, b_out = (post.draws(k)[:5] for k in ("W", "b_in", "w_out", "b_out"))
    ref = reference_inputs(2, nn_regression_model.n_reference)
    for i in range(5):
        params = {"W": W[i], "b_in": b_in[i], "w_out": w_out[i], "b_out": b_out[i]}
        np.testing.assert_allclose(
            nn_regression_model.predict(params, ref), post.draws("f_ref")[i], rtol=1e-6, atol=1e-8
        )


def test_nn_classifier_release_classifies():
    StanModel.get("jewson2023/nn_classifier")
    model = NNClassifierBetaD()
    d = simulate_nn(150, 2, task="classification", seed=14, weight_sd=3.0)  # a clear signal
    out = model.try_sample_one(d.X, d.y, epsilon=10.0, seed=15, keep_posterior=True, **NN_SAMPLER)
    assert out.released, out.problems
    assert out.release.record.details["beta"] == pytest.approx(1.2)
    auc = roc_auc(d.y_test, model.predict(out.params, d.X_test))
    true_auc = roc_auc(d.y_test, model.predict(d.truth, d.X_test))
    assert auc > 0.5 + 0.5 * (true_auc - 0.5)  # at least half the Bayes-optimal AUC gain
    # the beta-D likelihood tempers: its posterior of the outputs lies between the standard
    # posterior and the prior, nearer the prior at small epsilon. At epsilon = 10 (beta = 1.2)
    # the spreads differ by less than these short runs resolve; at epsilon = 0.2 (beta = 11) the
    # median sd is about twice the standard posterior's (1.2-1.3 vs 0.61 over seeds 17, 18) and
    # below the prior's (2.37, from 4000 exact prior draws)
    tempered = model.try_sample_one(d.X, d.y, epsilon=0.2, seed=17, keep_posterior=True, **NN_SAMPLER).posterior
    std = model.fit_nonprivate(d.X, d.y, seed=16, **NN_SAMPLER)
    rng = np.random.default_rng(0)
    ref = reference_inputs(2, model.n_reference)
    prior = np.array(
        [
            model.predict(
                {
                    "W": rng.normal(size=(2, 10)),
                    "b_in": rng.normal(size=10),
                    "w_out": rng.normal(size=10),
                    "b_out": rng.normal(),
                },
                ref,
            )
            for _ in range(4000)
        ]
    )
    spread = {
        name: float(np.median(f.std(0)))
        for name, f in (("beta-D", tempered.draws("f_ref")), ("standard", std.draws("f_ref")), ("prior", prior))
    }
    assert 1.5 * spread["standard"] < spread["beta-D"] < spread["prior"], spread


# ------------------------------------------------------------------ the one model interface
def test_betad_classes_follow_the_one_model_interface():
    """Every beta-D class is an OPSModel with the base's stan_model (not a copy of its own);
    release / fit are not theirs (one-posterior sampling releases a draw)."""
    for cls in (LogisticRegressionBetaD, NNClassifierBetaD, LinearRegressionBetaD, NNRegressionBetaD):
        assert issubclass(cls, OPSModel)
        assert [k for k in cls.__mro__ if "stan_model" in vars(k)] == [Model]
    X, y = np.ones((3, 1)), np.array([0, 1, 1])
    with pytest.raises(NotImplementedError, match="LogisticRegressionBetaD has no release: one-posterior sampling"):
        LogisticRegressionBetaD.release(X, y, epsilon=1.0)
    with pytest.raises(NotImplementedError, match="use sample_one"):
        LogisticRegressionBetaD().fit(None)


def test_sample_one_result_publishes_one_draw_with_the_requested_epsilon(logistic_model):
    """sample_one returns an OPSResult whose release carries the requested epsilon (and the
    charge); the posterior it was drawn from, when asked for, is marked non-private and is not
    part of the release (the release holds one draw of it, nothing more)."""
    d = simulate_logistic(200, 2, seed=17)
    acct = PrivacyAccountant(2.0)
    out = logistic_model.sample_one(
        d.X,
        d.y,
        epsilon=0.75,
        seed=18,
        accountant=acct,
        keep_posterior=True,
        allow_unconverged=True,
        chains=2,
        warmup=200,
        draws=50,
    )
    assert isinstance(out, OPSResult) and out.released
    assert out.release.record.epsilon == 0.75 and out.release.record.delta == 0.0
    assert out.details == {"beta": logistic_model.beta(0.75)} and out.details["beta"] == pytest.approx(1 + 2 / 0.75)
    assert acct.spent == (0.75, 0.0)
    post = out.posterior
    assert post is not None and post.privacy == NONPRIVATE
    theta = post.draws("theta", combine_chains=False)
    # the release is one (chain, iteration) of the run, not the run
    assert out.release.values.shape == (2,)
    hits = np.all(theta == out.release.values, axis=-1)
    assert hits.sum() == 1
    # without keep_posterior nothing but the draw comes back
    plain = logistic_model.sample_one(
        d.X, d.y, epsilon=0.75, seed=18, allow_unconverged=True, chains=2, warmup=200, draws=50
    )
    assert plain.posterior is None
    np.testing.assert_array_equal(plain.release.values, out.release.values)  # same seed, same draw


def test_fit_nonprivate_is_the_standard_posterior_marked_non_private(logistic_model, small_logistic):
    """fit_nonprivate is the w = 1 Gibbs posterior of the same program, draw for draw, and says
    "non-private"; the deprecated posterior() spelling warns and gives the same draws."""
    d = small_logistic
    kw = dict(seed=19, chains=2, warmup=100, draws=50)
    post = logistic_model.fit_nonprivate(d.X, d.y, **kw)
    assert post.privacy == "non-private"
    same = logistic_model.generalised_posterior(d.X, d.y, w=1.0, **kw)
    np.testing.assert_array_equal(post.draws("theta"), same.draws("theta"))
    with pytest.warns(DeprecationWarning, match=r"posterior is deprecated .*fit_nonprivate"):
        old = logistic_model.posterior(d.X, d.y, w=1.0, **kw)
    np.testing.assert_array_equal(old.draws("theta"), post.draws("theta"))
    with pytest.raises(ValueError, match="give exactly one of epsilon, beta"):
        logistic_model.generalised_posterior(d.X, d.y, beta=2.0, w=1.0)
    with pytest.raises(TypeError, match="fit_nonprivate takes no beta, w: it is the standard posterior"):
        logistic_model.fit_nonprivate(d.X, d.y, w=2.0, beta=3.0)
