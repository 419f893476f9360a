"""stan/kulkarni2022/logistic_regression_inputs.stan samples tau in one of two coordinates (data
flag signed_tau, issue 15's exact speed-ups): log(tau) with tau ~ N+(0, s^2) (0), or a signed
tau ~ N(0, s^2) with no transform, Sigma = diag(tau) Omega diag(tau) (1). Flipping tau_j's sign
flips row/column j of Omega, which LKJ does not see, so Sigma (and theta) have the same
posterior; only tau's signs are not identified.

* Same posterior: the two flags on one release where the feature noise swamps Var(x) (the
  regime "auto" picks signed_tau for) agree in the posterior mean and sd of theta and Sigma
  within Monte-Carlo error; the comparison rejects a prior on tau 25 % too wide (power).
* The prior: with a flat likelihood the signed fit returns theta ~ N(0, s_theta^2),
  |tau_j| ~ N+(0, s^2) and the LKJ marginal of Omega_12, and tau takes both signs.
* The "auto" rule, and the refusal of a bad ``parameterisation``.

False-rejection rates are stated with each test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from test_kulkarni2022_inputs_ss import _z_scores
from test_kulkarni2022_ss_reparam import _scalars, _thin, _thinned

from pystanprivacy.models.kulkarni2022_regression import SIGNED_TAU_MIN_NOISE, LogisticRegressionInputs
from pystanprivacy.privacy.mechanisms import ClipL2

SAMPLER = dict(chains=4, warmup=500, draws=1000)


@pytest.fixture(scope="module")
def model():
    return LogisticRegressionInputs().stan_model


def _mixed(post) -> None:
    """R-hat of theta and Sigma (tau's signs and L_Omega are not identified under signed_tau)."""
    rhat = post.rhat()
    assert max(float(np.nanmax(rhat[name])) for name in ("theta", "Sigma")) < 1.02
    assert post.num_divergences == 0


def test_signed_tau_same_posterior_as_log_tau(model):
    """One release (n = 2000, d = 2, epsilon = 1: sigma_x ~ 10, so "auto" picks signed_tau,
    asserted), fitted with signed_tau = 1 and 0, independent seeds: posterior mean and sd of
    theta (2) and the upper triangle of Sigma (3), 10 comparisons, each
    |difference| / sqrt(mcse_1^2 + mcse_2^2) below the Bonferroni two-sided normal bound for an
    overall false-rejection rate of 1e-3. Power: the same comparison rejects the log-tau fit
    with prior_tau_sd 25 % too large (Sigma is prior-dominated here)."""
    rng = np.random.default_rng(5)
    x = ClipL2(1.0)(rng.multivariate_normal(np.zeros(2), [[0.09, 0.02], [0.02, 0.05]], size=2000))
    y = (rng.random(2000) < 1 / (1 + np.exp(-x @ np.array([3.0, -4.0])))).astype(int)
    data = LogisticRegressionInputs().data(LogisticRegressionInputs.release(x, y, epsilon=1.0, seed=6))
    assert data["signed_tau"] == 1
    signed = model.sample(data, seed=7, **SAMPLER)
    logged = model.sample({**data, "signed_tau": 0}, seed=8, **SAMPLER)
    for post in (signed, logged):
        _mixed(post)
    assert float(np.min(signed.draws("tau"))) < 0 < float(np.min(logged.draws("tau")))
    a, b = _scalars(signed), _scalars(logged)
    assert len(a) == 5
    z_crit = stats.norm.isf(1e-3 / (2 * 2 * len(a)))
    for name, (z_mean, z_sd) in _z_scores(a, b).items():
        assert z_mean < z_crit and z_sd < z_crit, (name, z_mean, z_sd, z_crit)
    wide = model.sample({**data, "signed_tau": 0, "prior_tau_sd": 1.25 * data["prior_tau_sd"]}, seed=8, **SAMPLER)
    assert max(max(z) for z in _z_scores(a, _scalars(wide)).values()) > z_crit


def test_signed_tau_flat_likelihood_returns_the_prior(model):
    """signed_tau = 1 with sigma_x = 1e6 (the features' term varies by ~1e-11 over the prior's
    range) and labels that carry nothing (P(z_y = 1 | z_x) = 1/2 up to ~1e-7): the posterior is
    the prior. KS tests of draws thinned to the ESS (6 tests at level 1e-4 each: overall
    false-rejection rate < 6e-4, approximately, as the thinned draws are nearly but not exactly
    independent) against theta_j ~ N(0, 1.5^2), |tau_j| ~ N+(0, 0.8^2) (|tau_j| = sqrt(Sigma_jj))
    and (Omega_12 + 1) / 2 ~ Beta(eta, eta); tau takes both signs; and |tau_j| rejects a
    half-normal 25 % wider (power)."""
    rng = np.random.default_rng(9)
    m = LogisticRegressionInputs(prior_theta_sd=1.5, prior_tau_sd=0.8, lkj_eta=2.0)
    data = {
        "d": 2,
        "n": 10,
        "zx": rng.normal(size=(10, 2)),
        "zy": rng.integers(0, 2, 10),
        "sigma_x": 1e6,
        "p_keep": 0.75,
        "cheb": m.cheb,
        **m._priors(),
        "signed_tau": 1,
    }
    post = model.sample(data, seed=10, **SAMPLER)
    assert post.num_divergences == 0
    alpha = 1e-4
    tau = post.draws("tau")
    assert (tau < 0).mean() > 0.3 and (tau > 0).mean() > 0.3
    S = post.draws("Sigma", combine_chains=False)
    np.testing.assert_allclose(
        np.sqrt(S[:, :, 0, 0]), np.abs(post.draws("tau", combine_chains=False)[:, :, 0]), rtol=1e-10
    )
    for j in range(2):
        th = _thinned(post, "theta", (j,))
        assert stats.kstest(th, stats.norm(0, 1.5).cdf).pvalue > alpha
        abs_tau = np.sqrt(_thinned(post, "Sigma", (j, j)))
        assert stats.kstest(abs_tau, stats.halfnorm(scale=0.8).cdf).pvalue > alpha
        assert stats.kstest(abs_tau, stats.halfnorm(scale=1.0).cdf).pvalue < alpha
    r = _thin(S[:, :, 0, 1] / np.sqrt(S[:, :, 0, 0] * S[:, :, 1, 1]))
    assert stats.kstest((r + 1) / 2, stats.beta(2.0, 2.0).cdf).pvalue > alpha


def test_auto_rule_and_bad_parameterisation():
    """ "auto" samples a signed tau exactly when sigma_x^2 sqrt(2 / n) >= SIGNED_TAU_MIN_NOISE * R^2;
    "log_tau" / "signed_tau" force the flag; bad values are refused with the allowed ones named."""
    m = LogisticRegressionInputs()
    n, R = 10_000, 0.5
    edge = math.sqrt(SIGNED_TAU_MIN_NOISE * R**2 / math.sqrt(2.0 / n))  # sigma_x at the threshold
    assert m.signed_tau(edge * 1.0001, n, R)
    assert not m.signed_tau(edge * 0.999, n, R)
    assert not m.signed_tau(edge * 1.0001, 4 * n, R)  # more reports pin tau better
    assert LogisticRegressionInputs(parameterisation="signed_tau").signed_tau(1e-3, n, R)
    assert not LogisticRegressionInputs(parameterisation="log_tau").signed_tau(1e3, n, R)
    with pytest.raises(ValueError, match=r"parameterisation must be one of \('auto', 'log_tau', 'signed_tau'\)"):
        LogisticRegressionInputs(parameterisation="theta")
    with pytest.raises(TypeError, match="parameterisation must be a str"):
        LogisticRegressionInputs(parameterisation=None)
