"""stan/kulkarni2022/linear_regression_ss.stan samples one of two exact parameterisations of the
same posterior (data flag sample_chol): theta and log(sigma) (0), or the last row b = L_x' theta of
the Cholesky factor of the joint covariance C of u = (x, y) and a softplus of sigma (1).
stan/kulkarni2022/logistic_regression_ss.stan likewise samples theta (0) or b = L_x' theta (1).

* Same posterior: each flag and the former program (tests/stan/kulkarni_linreg_ss_centered.stan,
  which samples theta and log(sigma); tests/stan/kulkarni_logreg_ss_centered.stan) fitted to
  the same privatised data agree in the posterior mean and sd of every element of theta, sigma and Sigma within Monte-Carlo error (flag 0 on
  weak data, flag 1 on data that pin Sigma: the regimes "auto" picks them for).
* Jacobian: with a likelihood that is flat to ~1e-6 (noise variances 1e12) the fit returns the
  prior -- theta ~ N(0, prior_theta_sd^2), tau ~ N+(0, prior_tau_sd^2), sigma ~
  N+(0, prior_sigma_sd^2), Omega_12 ~ LKJ marginal. Without the term -sum(log(tau)) -
  sum(log(diag(L_Omega))) theta would still look right (given tau and L_Omega it stays
  N(0, prior_theta_sd^2)), but the implied density of (tau, L_Omega) would be tilted by
  prod(tau) prod(diag(L_Omega)): tau ~ Rayleigh instead of half-normal, which the test rejects;
  without the softplus Jacobian sigma would not be half-normal.
* The "auto" rule and the refusal of a bad ``parameterisation``.

False-rejection rates are stated with each test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pystanprivacy.models.kulkarni2022_regression import (
    LinearRegressionSS,
    LogisticRegressionSS,
    quadrature_grid,
)
from pystanprivacy.privacy.mechanisms import ClipL2
from pystanprivacy.sampling.stan import StanModel

CENTERED = Path(__file__).parents[1] / "stan" / "kulkarni_linreg_ss_centered.stan"
LOGIT_CENTERED = Path(__file__).parents[1] / "stan" / "kulkarni_logreg_ss_centered.stan"
SIGMA2 = np.array([[0.09, 0.02], [0.02, 0.05]])
THETA = np.array([1.5, -2.0])
SAMPLER = dict(chains=4, warmup=500, draws=1000, adapt_delta=0.95)


@pytest.fixture(scope="module")
def model() -> StanModel:
    return LinearRegressionSS().stan_model


@pytest.fixture(scope="module")
def centered() -> StanModel:
    return StanModel.get(str(CENTERED))


@pytest.fixture(scope="module")
def logit_model() -> StanModel:
    return LogisticRegressionSS().stan_model


@pytest.fixture(scope="module")
def logit_centered() -> StanModel:
    return StanModel.get(str(LOGIT_CENTERED))


def _scalars(post) -> dict[str, np.ndarray]:
    """Every element of theta, sigma and the upper triangle of Sigma as (chains, draws)."""
    out = {}
    theta = post.draws("theta", combine_chains=False)
    for j in range(theta.shape[2]):
        out[f"theta[{j}]"] = theta[:, :, j]
    if "sigma" in post.variables:
        out["sigma"] = post.draws("sigma", combine_chains=False)
    Sigma = post.draws("Sigma", combine_chains=False)
    for j in range(Sigma.shape[2]):
        for k in range(j, Sigma.shape[3]):
            out[f"Sigma[{j},{k}]"] = Sigma[:, :, j, k]
    return out


def _mean_sd_mcse(x: np.ndarray) -> tuple[float, float, float, float]:
    """Posterior mean, sd and their Monte-Carlo standard errors (ArviZ, ESS-based)."""
    import arviz as az

    ds = az.convert_to_dataset({"x": x[:, :, None]})
    mcse_mean = float(az.mcse(ds, method="mean")["x"].values[0])
    mcse_sd = float(az.mcse(ds, method="sd")["x"].values[0])
    return float(x.mean()), float(x.std()), mcse_mean, mcse_sd


def _release(n: int, epsilon: float):
    rng = np.random.default_rng(7)
    x = ClipL2(1.0)(rng.multivariate_normal(np.zeros(2), SIGMA2, size=n))
    y = np.clip(x @ THETA + rng.normal(0, 0.3, size=n), -2.0, 2.0)
    return LinearRegressionSS.release(x, y, epsilon=epsilon, R_y=2.0, seed=8)


@pytest.mark.parametrize("parameterisation, n, epsilon", [("theta", 20_000, 2.0), ("cholesky", 200_000, 8.0)])
def test_same_posterior_as_the_centered_program(model, centered, parameterisation, n, epsilon):
    """Posterior means and sds of theta, sigma, Sigma (6 elements -> 12 comparisons) agree
    between the parameterisations: |difference| / sqrt(mcse_1^2 + mcse_2^2) below the
    Bonferroni two-sided normal bound for a false-rejection rate of 1e-3 per case (z ~ 3.9;
    per comparison ~8e-5). "auto" picks the tested flag for both data sets (asserted). On the
    weak data the prior matters; on the strong data a wrong map from b to theta would move
    theta by many posterior sds."""
    data = LinearRegressionSS(parameterisation=parameterisation).data(_release(n, epsilon))
    assert data["sample_chol"] == int(parameterisation == "cholesky")
    assert LinearRegressionSS().data(_release(n, epsilon))["sample_chol"] == data["sample_chol"]
    _compare(model, centered, data)


def _compare(model, centered, data) -> None:
    """Fit ``model`` (with ``data``) and the former program (without the flag); every element
    of theta, sigma (if any) and Sigma: Bonferroni z-tests of mean and sd at 1e-3 overall."""
    new = model.sample(data, seed=9, **SAMPLER)
    old = centered.sample({k: v for k, v in data.items() if k != "sample_chol"}, seed=10, **SAMPLER)
    for post in (new, old):
        assert max(float(np.nanmax(v)) for v in post.rhat().values()) < 1.02
    assert new.num_divergences == 0
    a, b = _scalars(new), _scalars(old)
    z_crit = stats.norm.isf(1e-3 / (2 * 2 * len(a)))
    for name in a:
        m1, s1, em1, es1 = _mean_sd_mcse(a[name])
        m2, s2, em2, es2 = _mean_sd_mcse(b[name])
        assert abs(m1 - m2) < z_crit * np.hypot(em1, em2), (name, "mean", m1, m2, em1, em2)
        assert abs(s1 - s2) < z_crit * np.hypot(es1, es2), (name, "sd", s1, s2, es1, es2)


def test_logistic_cholesky_same_posterior(logit_model, logit_centered):
    """logistic_regression_ss with sample_chol = 1 (picked by "auto" here: asserted) and the
    former program on the same release (n = 50 000, epsilon = 5): theta (2) and Sigma (3) ->
    10 comparisons, Bonferroni z-tests at 1e-3 overall (z ~ 3.9). (sample_chol = 0 is the former
    program's code: theta = v, no Jacobian.)"""
    rng = np.random.default_rng(17)
    n = 50_000
    x = ClipL2(1.0)(rng.multivariate_normal(np.zeros(2), SIGMA2, size=n))
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ np.array([3.0, -4.0])))).astype(int)
    data = LogisticRegressionSS().data(LogisticRegressionSS.release(x, y, epsilon=5.0, seed=18))
    assert data["sample_chol"] == 1
    _compare(logit_model, logit_centered, data)


def _thinned(post, name: str, index: tuple = ()) -> np.ndarray:
    """Draws of one element, thinned to about one draw per effective sample (min of bulk and
    tail ESS) so that the KS test's independence assumption roughly holds."""
    return _thin(post.draws(name, combine_chains=False)[(slice(None), slice(None), *index)])


def _thin(x: np.ndarray) -> np.ndarray:
    """Draws (chains, draws) of one quantity, thinned as in :func:`_thinned`, flattened."""
    import arviz as az

    ds = az.convert_to_dataset({"x": x[:, :, None]})
    ess = min(float(az.ess(ds, method="bulk")["x"].values[0]), float(az.ess(ds, method="tail")["x"].values[0]))
    step = max(1, int(np.ceil(x.size / ess)))
    return x[:, ::step].ravel()


def test_flat_likelihood_returns_the_prior(model):
    """Linear model, sample_chol = 0 (theta, log(sigma)). Noise variances 1e12 make the
    likelihood flat (its log varies by ~1e-6 over the prior's range), so the posterior is the
    prior. KS tests of the thinned draws (6 tests, each at
    level 1e-4: overall false-rejection rate < 6e-4, approximately, as thinning to the ESS
    leaves the draws nearly but not exactly independent) against theta_j ~ N(0, 1.5^2),
    tau_j ~ N+(0, 0.8^2), sigma ~ N+(0, 0.6^2) and (Omega_12 + 1) / 2 ~ Beta(eta, eta)
    (the LKJ(eta) marginal for d = 2). The tau draws must also reject the Rayleigh law they
    would follow without the Jacobian term (power check)."""
    prior = {"prior_theta_sd": 1.5, "prior_tau_sd": 0.8, "prior_sigma_sd": 0.6, "lkj_eta": 2.0}
    data = {
        "d": 2,
        "n": 1,
        "z_sum": np.zeros(6),
        "sigma_t2": 1e6,
        "sigma_xy": 1e6,
        "sigma_yy": 1e6,
        **prior,
        "sample_chol": 0,
    }
    post = model.sample(data, seed=11, chains=4, warmup=500, draws=1000, adapt_delta=0.95)
    assert post.num_divergences == 0
    alpha = 1e-4
    for j in range(2):
        th = _thinned(post, "theta", (j,))
        assert stats.kstest(th, stats.norm(0, prior["prior_theta_sd"]).cdf).pvalue > alpha
        tau = _thinned(post, "tau", (j,))
        assert stats.kstest(tau, stats.halfnorm(scale=prior["prior_tau_sd"]).cdf).pvalue > alpha
        # without the Jacobian: density of tau_j tilted by tau_j, i.e. Rayleigh(prior_tau_sd)
        assert stats.kstest(tau, stats.rayleigh(scale=prior["prior_tau_sd"]).cdf).pvalue < alpha
    sig = _thinned(post, "sigma")
    assert stats.kstest(sig, stats.halfnorm(scale=prior["prior_sigma_sd"]).cdf).pvalue > alpha
    L = post.draws("L_Omega", combine_chains=False)
    S = post.draws("Sigma", combine_chains=False)
    omega12 = S[:, :, 0, 1] / np.sqrt(S[:, :, 0, 0] * S[:, :, 1, 1])
    np.testing.assert_allclose(omega12, L[:, :, 1, 0], atol=1e-8)  # Omega_12 = L_Omega[2, 1]
    r = _thinned(post, "L_Omega", (1, 0))
    eta = prior["lkj_eta"]
    assert stats.kstest((r + 1) / 2, stats.beta(eta, eta).cdf).pvalue > alpha


def test_auto_rule_and_bad_parameterisation():
    """ "auto" takes the Cholesky coordinates exactly when min_j z_sum[j] / n >=
    CHOL_MIN_SNR * sigma_t2 / sqrt(n); "theta" / "cholesky" force the flag; bad values are refused."""
    from pystanprivacy.models.kulkarni2022_regression import CHOL_MIN_SNR

    m = LinearRegressionSS()
    n, sd = 10_000, 2.0
    edge = CHOL_MIN_SNR * sd / np.sqrt(n) * n  # z_sum[j] at the threshold
    assert m.sample_chol(np.array([edge, 2 * edge, -5.0]), n, 2, sd)
    assert not m.sample_chol(np.array([edge * 0.999, 2 * edge, 1e9]), n, 2, sd)
    assert LinearRegressionSS(parameterisation="cholesky").sample_chol(np.zeros(3), n, 2, sd)
    assert not LinearRegressionSS(parameterisation="theta").sample_chol(np.full(3, 1e9), n, 2, sd)
    with pytest.raises(ValueError, match="parameterisation must be one of"):
        LinearRegressionSS(parameterisation="chol")
    with pytest.raises(TypeError, match="parameterisation must be a str"):
        LinearRegressionSS(parameterisation=1)


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_cholesky_jacobian(request, kind):
    """sample_chol = 1 (linear and logistic models) with a likelihood that informs Sigma only
    (the t2(x) block of n = 10 users with negligible noise; y x (and y^2) with noise variances
    1e12): the prior on b has a funnel
    in tau, so the flat-likelihood test above cannot be used, but here tau is pinned to ~+-25 %.
    Checks: theta_j ~ N(0, 1.5^2) and sigma ~ N+(0, 0.6^2) exactly (the likelihood does not
    depend on them; sigma: linear model only; KS at level 1e-4 each on draws thinned to the
    ESS: <= 3 tests, ~3e-4 per model); the
    mean and sd of tau_j, Omega_12 agree with the former program on the same data (8
    comparisons, Bonferroni z-test at 1e-3 overall). A missing softplus Jacobian makes the
    posterior of sigma improper near 0; a missing -sum(log(tau)) - sum(log(diag(L_Omega)))
    tilts (tau, L_Omega) by prod(tau) L_Omega[2, 2]: the draws reweighted by that factor (what
    the wrong program would sample) must fail the same tau comparison (power check)."""
    prior = {"prior_theta_sd": 1.5, "prior_tau_sd": 0.8, "lkj_eta": 2.0}
    n = 10
    z_t2 = n * np.array([SIGMA2[0, 0], SIGMA2[1, 1], np.sqrt(2) * SIGMA2[0, 1]])
    if kind == "linear":
        model, centered = request.getfixturevalue("model"), request.getfixturevalue("centered")
        data = {
            "d": 2,
            "n": n,
            "z_sum": np.concatenate([z_t2, np.zeros(3)]),
            "sigma_t2": 1e-3,
            "sigma_xy": 1e6,
            "sigma_yy": 1e6,
            "prior_sigma_sd": 0.6,
            **prior,
        }
    else:  # layout [y x, t2(x)]; the y x block carries the noise 1e12
        model, centered = request.getfixturevalue("logit_model"), request.getfixturevalue("logit_centered")
        qx, qw = quadrature_grid()
        data = {
            "d": 2,
            "n": n,
            "z_sum": np.concatenate([np.zeros(2), z_t2]),
            "sigma_yx": 1e6,
            "sigma_t2": 1e-3,
            "n_quad": qx.size,
            "quad_x": qx,
            "quad_w": qw,
            **prior,
        }
    new = model.sample({**data, "sample_chol": 1}, seed=12, chains=4, warmup=1000, draws=2500, adapt_delta=0.95)
    old = centered.sample(data, seed=13, chains=4, warmup=1000, draws=2500, adapt_delta=0.95)
    assert new.num_divergences == 0 and old.num_divergences == 0
    alpha = 1e-4
    for j in range(2):
        assert stats.kstest(_thinned(new, "theta", (j,)), stats.norm(0, 1.5).cdf).pvalue > alpha
    if kind == "linear":
        assert stats.kstest(_thinned(new, "sigma"), stats.halfnorm(scale=0.6).cdf).pvalue > alpha
    pick = {"tau[0]": ("tau", (0,)), "tau[1]": ("tau", (1,)), "Omega12": ("L_Omega", (1, 0))}
    z_crit = stats.norm.isf(1e-3 / (2 * 2 * len(pick)))
    for name, (var, idx) in pick.items():
        a = new.draws(var, combine_chains=False)[(slice(None), slice(None), *idx)]
        b = old.draws(var, combine_chains=False)[(slice(None), slice(None), *idx)]
        m1, s1, em1, es1 = _mean_sd_mcse(a)
        m2, s2, em2, es2 = _mean_sd_mcse(b)
        assert abs(m1 - m2) < z_crit * np.hypot(em1, em2), (name, "mean", m1, m2, em1, em2)
        assert abs(s1 - s2) < z_crit * np.hypot(es1, es2), (name, "sd", s1, s2, es1, es2)
    # power: the law without the b -> theta Jacobian, by importance weights prod(tau) L_Omega[2, 2]
    tau = new.draws("tau")
    wts = tau.prod(axis=1) * new.draws("L_Omega")[:, 1, 1]
    wts /= wts.sum()
    tilted_mean = float(wts @ tau[:, 0])
    m2, _, em2, _ = _mean_sd_mcse(old.draws("tau", combine_chains=False)[:, :, 0])
    _, _, em1, _ = _mean_sd_mcse(new.draws("tau", combine_chains=False)[:, :, 0])
    assert abs(tilted_mean - m2) > z_crit * np.hypot(em1, em2), (tilted_mean, m2)
