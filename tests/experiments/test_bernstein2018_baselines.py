"""Bernstein & Sheldon (2018) without Stan: releases and their records, the paper's Gibbs
building blocks (NormProduct, truncated normal, Lemma 1 moments, RS-CLT, the inverse-
Gaussian update, the multinomial count conditional), the Gibbs samplers, the naive,
non-private and OPS baselines, and input validation.

Statistical checks use fixed seeds (deterministic); each states the chance that a correct
implementation would fail it with a random seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pystanprivacy.experiments.bernstein2018 import baselines as bl
from pystanprivacy.models.base import OPSResult
from pystanprivacy.models.bernstein2018 import (
    BinomialBeta,
    BinomialBetaExact,
    ExponentialGamma,
    MultinomialDirichlet,
    exponential_sensitivity,
    normal_laplace_logpdf,
    prior_predictive_bounds,
    rs_clt_exponential,
    truncated_exponential_moments,
)
from pystanprivacy.models.foulds2016 import BetaBernoulli, ops_temperature
from pystanprivacy.privacy.records import PrivacyAccountant, Release


# ------------------------------------------------------------------------------ releases
def test_binomial_release_record_and_laplace_noise():
    model = BinomialBeta()
    rel = model.release(np.array([1, 0, 1, 1, 0]), epsilon=0.5, seed=1)
    rec = rel.record
    assert rel.values.shape == (1,)
    assert (rec.mechanism, rec.sensitivity, rec.scale, rec.n, rec.bounds) == ("laplace", 1.0, 2.0, 5, (0.0, 1.0))
    assert rec.details["statistic"] == model.statistic and rec.details["projection"] == "none"
    # noise ~ Laplace(1/eps) and not projected (values below 0 survive); KS p > 1e-3: 0.1%
    s = np.full(5000, 3)
    rel = model.release_statistics(s, n=5, epsilon=0.5, seed=2)
    assert rel.values.shape == (5000, 1)
    assert np.any(rel.values < 0)
    assert stats.kstest(rel.values[:, 0] - 3, stats.laplace(scale=2.0).cdf).pvalue > 1e-3


def test_multinomial_noise_is_independent_per_statistic_with_sensitivity_2():
    model = MultinomialDirichlet(prior_alpha=[1, 1, 1, 1])
    counts = np.tile([10, 20, 30, 40], (6000, 1))
    rel = model.release_statistics(counts, n=100, epsilon=0.4, seed=3)
    assert rel.record.sensitivity == 2.0 and rel.record.scale == pytest.approx(5.0)
    noise = rel.values - counts
    # each column Laplace(2/eps) (KS p > 1e-3 each: 0.4% in all) and the columns differ and are
    # uncorrelated (|r| < 0.06 = 4.6 standard errors: < 1e-5 each) -- not one shared draw
    for k in range(4):
        assert stats.kstest(noise[:, k], stats.laplace(scale=5.0).cdf).pvalue > 1e-3
    corr = np.corrcoef(noise.T)
    assert np.all(np.abs(corr[np.triu_indices(4, 1)]) < 0.06)
    # categorical records -> bincount
    rel1 = model.release(np.array([0, 3, 3, 1]), epsilon=1.0, seed=4)
    assert rel1.values.shape == (4,) and rel1.record.n == 4


def test_exponential_sensitivity_is_b_not_b_minus_a():
    assert exponential_sensitivity((2.0, 5.0)) == 5.0
    model = ExponentialGamma(bounds=(0.5, 3.0))
    rel = model.release(np.array([0.1, 0.7, 2.0, 4.0]), epsilon=1.0, seed=5)
    assert rel.record.sensitivity == 3.0 and rel.record.scale == 3.0 and rel.record.bounds == (0.5, 3.0)
    # the truncated sum drops records outside [a, b]: 0.7 + 2.0
    assert model.truncated_sum(np.array([0.1, 0.7, 2.0, 4.0]))[0] == pytest.approx(2.7)
    # replace-one: one record moves the truncated sum by at most b (e.g. 0 -> 3.0 or 3.0 -> 0.1)
    x = np.array([0.7, 2.0, 3.0])
    for new in (0.0, 0.5, 3.0, 1e9):
        assert abs(model.truncated_sum(np.r_[x[:2], new])[0] - model.truncated_sum(x)[0]) <= 3.0


def test_default_bounds_come_from_the_prior_predictive():
    a, b = prior_predictive_bounds(8.0, 2.0, 0.95)
    model = ExponentialGamma(prior_shape=8.0, prior_rate=2.0)
    assert model.bounds == (a, b) and model.sensitivity == b
    # Lomax quantiles match a Monte Carlo prior predictive (1e6 draws: within 0.5% / 0.004)
    rng = np.random.default_rng(6)
    x = rng.exponential(1.0 / rng.gamma(8.0, 0.5, size=1_000_000))
    q = np.quantile(x, [0.025, 0.975])
    assert a == pytest.approx(q[0], rel=0.05) and b == pytest.approx(q[1], rel=0.01)


def test_accountant_is_charged_once_and_not_on_error():
    acct = PrivacyAccountant(1.0)
    model = BinomialBeta()
    with pytest.raises(ValueError):
        model.release(np.array([0, 1, 2]), epsilon=0.5, accountant=acct)
    assert acct.spent == (0.0, 0.0)
    model.release(np.ones((7, 20), dtype=int), epsilon=0.5, accountant=acct)  # 7 data sets: parallel
    assert acct.spent[0] == pytest.approx(0.5)


# --------------------------------------------------------------------------- bad inputs
def test_bad_inputs_raise_clear_errors_without_private_values():
    binom, multi = BinomialBeta(), MultinomialDirichlet()
    with pytest.raises(ValueError, match=r"y must have shape \(3,\) or \(R, 3\).*got shape \(2,\)"):
        multi.published([4.0, 5.0], n=10, epsilon=1.0)
    with pytest.raises(ValueError, match=r"s must have shape \(3,\) or \(R, 3\)"):
        multi.release_statistics([[1, 2, 3, 4]], n=10, epsilon=1.0)
    with pytest.raises(ValueError, match=r"bounds must be finite with 0 <= a < b, got \(2.0, 1.0\)"):
        ExponentialGamma(bounds=(2.0, 1.0))
    with pytest.raises(ValueError, match=r"bounds must be finite with 0 <= a < b, got \(1.0, 1.0\)"):
        ExponentialGamma(bounds=(1.0, 1.0))
    with pytest.raises(ValueError, match=r"bounds must be finite with 0 <= a < b, got \(-1.0, 1.0\)"):
        ExponentialGamma(bounds=(-1.0, 1.0))
    with pytest.raises(ValueError, match="negative counts") as err:
        binom.release_statistics([3, -17], n=10, epsilon=1.0)
    assert "17" not in str(err.value)
    with pytest.raises(ValueError, match="negative counts"):
        multi.release_statistics([4, -2, 8], n=10, epsilon=1.0)
    with pytest.raises(ValueError, match="s is inconsistent with n=10: a count of ones cannot exceed n") as err:
        binom.release_statistics([3, 12], n=10, epsilon=1.0)
    assert "12" not in str(err.value)
    with pytest.raises(
        ValueError, match="s is inconsistent with n=10: the counts of 1 data set\\(s\\) do not sum to n"
    ):
        multi.release_statistics([[2, 3, 5], [2, 3, 6]], n=10, epsilon=1.0)
    with pytest.raises(ValueError, match="n must be an int >= 1, got 0"):
        binom.published(3.0, n=0, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0, got -1"):
        binom.published(3.0, n=5, epsilon=-1)
    with pytest.raises(ValueError, match="prior_alpha must hold K >= 2 positive numbers"):
        MultinomialDirichlet(prior_alpha=[1.0])
    with pytest.raises(ValueError, match="x must be >= 0 \\(exponential data\\); 1 value\\(s\\) are negative"):
        ExponentialGamma().release(np.array([0.3, -2.5]), epsilon=1.0)


def test_release_records_are_checked_against_the_model():
    binom = BinomialBeta()
    rel = binom.release_statistics([4, 6], n=10, epsilon=1.0, seed=1)
    # n inconsistent with the rest of the record (statistic range [0, 10])
    import dataclasses

    tampered = Release(values=rel.values, record=dataclasses.replace(rel.record, n=1000))
    with pytest.raises(
        ValueError, match=r"release record is inconsistent: n=1000 implies the statistic range \[0, 1000\]"
    ):
        binom.check_release(tampered)
    no_n = Release(values=rel.values, record=dataclasses.replace(rel.record, n=None))
    with pytest.raises(ValueError, match="release record has no n"):
        binom.check_release(no_n)
    # a release of another model or paper, or made with other bounds
    with pytest.raises(ValueError, match="release must be a Laplace release of the multinomial category counts"):
        MultinomialDirichlet().check_release(rel)
    foulds = BetaBernoulli.release(np.array([0, 1, 1]), epsilon=1.0, seed=2)
    with pytest.raises(ValueError, match="release must be a Laplace release of the binomial count"):
        binom.check_release(foulds)
    exp_rel = ExponentialGamma(bounds=(0.0, 2.0)).release(np.array([0.5, 1.0]), epsilon=1.0, seed=3)
    with pytest.raises(ValueError, match="release sensitivity=2.0 does not match this model's sensitivity 3.0"):
        ExponentialGamma(bounds=(0.0, 3.0)).check_release(exp_rel)
    with pytest.raises(TypeError, match="release must be a Release made by BinomialBeta.release, got ndarray"):
        binom.check_release(np.array([3.0]))
    # the exact and CLT binomial models share the release
    values, n, scale, eps = BinomialBetaExact().check_release(rel)
    assert values.shape == (2, 1) and (n, scale, eps) == (10, 1.0, 1.0)


# ------------------------------------------------------------------------ building blocks
def test_norm_product_is_the_normalised_product_of_densities():
    grid = np.linspace(-30, 30, 200001)
    dens = stats.norm(1.5, 2.0).pdf(grid) * stats.norm(-3.0, 0.7).pdf(grid)
    dens /= integrate.trapezoid(dens, grid)
    mean = integrate.trapezoid(grid * dens, grid)
    var = integrate.trapezoid((grid - mean) ** 2 * dens, grid)
    m3, v3 = bl.norm_product(1.5, 4.0, -3.0, 0.49)
    assert float(m3) == pytest.approx(mean, abs=1e-8) and float(v3) == pytest.approx(var, rel=1e-7)


@pytest.mark.parametrize(
    "mean, sd, lower, upper",
    [
        (0.0, 1.0, -0.5, 2.0),
        (0.12, 0.4, 0.0, np.inf),
        (50.0, 1.0, 0.0, 10.0),  # 40 sd below the mean
        (-3.0, 1.0, 40.0, 41.0),
        (0.0, 1.0, -np.inf, -30.0),
        (5.0, 2.0, -np.inf, np.inf),
    ],
)
def test_truncated_normal_matches_scipy_even_far_in_the_tails(mean, sd, lower, upper):
    # KS p > 1e-3 against scipy's truncnorm: false rejection 0.1% per case
    x = bl.truncated_normal(np.random.default_rng(11), np.full(20000, mean), sd, lower, upper)
    assert np.all((x >= lower) & (x <= upper))
    ref = stats.truncnorm((lower - mean) / sd, (upper - mean) / sd, loc=mean, scale=sd)
    assert stats.kstest(x, ref.cdf).pvalue > 1e-3


@pytest.mark.parametrize("x", [1e-6, 1e-3, 0.0999, 0.1, 0.1001, 0.7, 5.0, 49.9, 50.1, 300.0])
def test_truncated_exponential_moments_lemma1(x):
    # against scipy's truncated exponential, across the series / direct / tail branches
    v, theta = 0.3, 2.0
    w = v + x / theta
    mean, var = truncated_exponential_moments(np.array([theta]), v, w)
    ref = stats.truncexpon(b=x, loc=v, scale=1 / theta)
    assert mean[0] == pytest.approx(ref.mean(), rel=1e-10)
    if x < 30:  # scipy's variance cancels badly beyond; the tail value is 1/theta² there
        assert var[0] == pytest.approx(ref.var(), rel=1e-8)
    else:
        assert var[0] == pytest.approx(1 / theta**2, rel=1e-12)


def test_lemma1_as_stated_derivatives_of_the_log_partition():
    # mean = E_p[t] + d/d eta log(F(w) − F(v)), var = Var_p[t] + d²/d eta² log(F(w) − F(v)),
    # eta = −theta, evaluated by central differences
    v, w, theta = 0.2, 1.5, 3.0

    def log_mass(eta):
        return math.log(math.exp(eta * v) - math.exp(eta * w))

    h = 1e-4
    eta = -theta
    d1 = (log_mass(eta + h) - log_mass(eta - h)) / (2 * h)
    d2 = (log_mass(eta + h) - 2 * log_mass(eta) + log_mass(eta - h)) / h**2
    mean, var = truncated_exponential_moments(np.array([theta]), v, w)
    assert mean[0] == pytest.approx(1 / theta + d1, rel=1e-7)
    assert var[0] == pytest.approx(1 / theta**2 + d2, rel=1e-5)
    mean_inf, var_inf = truncated_exponential_moments(np.array([theta]), v, np.inf)
    assert (mean_inf[0], var_inf[0]) == pytest.approx((v + 1 / theta, 1 / theta**2))


def test_rs_clt_matches_simulated_truncated_sums():
    # Prop. 1: mean and variance of the sum of the records in [v, w] of n Exponential(theta)
    # records; 20000 simulated sums, within 4.5 standard errors (false rejection < 1e-5 each)
    rng = np.random.default_rng(12)
    n, theta = 60, 2.5
    x = rng.exponential(1 / theta, size=(20000, n))
    for v, w in ((0.0, 0.05), (0.05, 1.2), (1.2, np.inf)):
        s = np.where((x >= v) & (x <= w), x, 0.0).sum(axis=1)
        m, var = rs_clt_exponential(np.array([theta]), n, v, w)
        se_mean = s.std() / math.sqrt(s.size)
        se_var = s.var() * math.sqrt(2 / (s.size - 1)) * 1.5  # kurtosis allowance
        assert abs(s.mean() - m[0]) < 4.5 * se_mean
        assert abs(s.var() - var[0]) < 4.5 * se_var


def test_inverse_gaussian_update_is_the_laplace_scale_mixture_conditional():
    # Park & Casella: e | s2 ~ N(0, s2), s2 ~ Exp(rate 1/(2 b²)) gives e ~ Laplace(b), and
    # s2 | e has 1/s2 ~ InverseGaussian(1/(b|e|), 1/b²). Check the draws of s2 against the
    # conditional CDF integrated numerically; KS p > 1e-3 per residual (0.3% in all).
    rng = np.random.default_rng(13)
    b = 2.0
    mix = rng.standard_normal(200000) * np.sqrt(rng.exponential(2 * b * b, size=200000))
    assert stats.kstest(mix, stats.laplace(scale=b).cdf).pvalue > 1e-3
    for r in (0.3, 2.0, 9.0):
        draws = bl._inverse_gaussian_noise_var(rng, np.full(20000, r), b)
        grid = np.exp(np.linspace(-12, 8, 40001))
        dens = stats.norm.pdf(r, scale=np.sqrt(grid)) * np.exp(-grid / (2 * b * b))
        cdf = integrate.cumulative_trapezoid(dens, grid, initial=0.0)
        cdf /= cdf[-1]
        assert stats.kstest(draws, lambda q, grid=grid, cdf=cdf: np.interp(q, grid, cdf)).pvalue > 1e-3


def test_multinomial_count_conditional_matches_dense_linear_algebra():
    # NormProduct in the K − 1 free coordinates vs the dense computation with explicit matrices
    rng = np.random.default_rng(14)
    k, n = 4, 500.0
    theta = rng.dirichlet(np.ones(k), size=3)
    noise_var = rng.exponential(50.0, size=(3, k))
    y = n * theta + rng.normal(0, 5, size=(3, k))
    mean, cov = bl.multinomial_count_conditional(theta, noise_var, y, n)
    a = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])
    c = np.r_[np.zeros(k - 1), n]
    for i in range(3):
        t = theta[i, :-1]
        sigma = n * (np.diag(t) - np.outer(t, t))
        prec = np.linalg.inv(sigma) + a.T @ np.diag(1 / noise_var[i]) @ a
        lin = np.linalg.solve(sigma, n * t) + a.T @ ((y[i] - c) / noise_var[i])
        np.testing.assert_allclose(cov[i], np.linalg.inv(prec), rtol=1e-9)
        np.testing.assert_allclose(mean[i], np.linalg.solve(prec, lin), rtol=1e-9)


def test_truncated_multinomial_count_draws_are_valid_and_exact():
    # A conditional that puts ~90% of its mass outside {s >= 0, sum <= n}. Start 3000 rows
    # (independent chains) at exact draws of the truncated target (brute-force rejection) and
    # apply one step of the sampler: the fallback coordinate sweep alone (max_tries=0) and
    # rejection + fallback (max_tries=1) must both leave the target invariant. KS against
    # fresh exact draws, p > 1e-3 per coordinate and kernel: 0.4% in all.
    rng = np.random.default_rng(15)
    n = 20.0
    theta = np.array([[0.02, 0.03, 0.95]])
    noise_var = np.array([[9.0, 9.0, 9.0]])
    y = np.array([[-6.0, -5.0, 30.0]])
    mean, cov = bl.multinomial_count_conditional(theta, noise_var, y, n)
    chol = np.linalg.cholesky(cov[0])
    z = mean[0] + rng.standard_normal((200000, 2)) @ chol.T
    ok = np.all(z >= 0, axis=1) & (z.sum(axis=1) <= n)
    assert ok.mean() < 0.15  # one plain draw out of 7+ is valid
    exact = z[ok]
    start, ref = exact[:3000], exact[3000:9000]
    rows = 3000
    tiled = [np.repeat(a, rows, axis=0) for a in (theta, noise_var, y)]
    for tries in (0, 1):
        out = bl._multinomial_counts(rng, *tiled, n, start.copy(), max_tries=tries)
        assert np.all(out >= 0) and np.all(out.sum(axis=1) <= n)
        assert not np.allclose(out, start)
        for j in range(2):
            assert stats.ks_2samp(out[:, j], ref[:, j]).pvalue > 1e-3, (tries, j)


# ----------------------------------------------------------------------------- Gibbs
@pytest.mark.parametrize("kind", ["binomial", "multinomial", "exponential"])
def test_gibbs_with_an_uninformative_release_returns_the_prior(kind):
    # epsilon = 1e-5: the release says nothing, so the stationary distribution of theta must be
    # the prior. The paper's two-view Gibbs (conjugate theta | s, CLT s | theta) is only
    # approximately coherent, so the check allows 5% of a prior sd in the mean and 10% in the
    # sd (measured: < 2% and < 8%); 40 chains of 1000 thinned iterations make the Monte Carlo
    # error < 1% of a prior sd.
    if kind == "binomial":
        model, rel, prior = BinomialBeta(), None, stats.beta(10, 10)
        rel = model.published(np.full(40, 50.0), n=100, epsilon=1e-5)
    elif kind == "multinomial":
        model, prior = MultinomialDirichlet(), stats.beta(5, 10)
        rel = model.published(np.full((40, 3), 100 / 3), n=100, epsilon=1e-5)
    else:
        model, prior = ExponentialGamma(), stats.gamma(8, scale=0.5)
        rel = model.published(np.full(40, 25.0), n=100, epsilon=1e-5)
    post = bl.gibbs_posterior(model, rel, iterations=10000, burnin=1000, thin=10, seed=16)
    theta = post.draws("theta")
    flat = (theta[..., 0] if theta.ndim == 3 else theta).ravel()
    assert abs(flat.mean() - prior.mean()) < 0.05 * prior.std()
    assert abs(flat.std() / prior.std() - 1) < 0.10


def test_gibbs_binomial_matches_the_exact_posterior_for_large_n():
    # n = 2000: the CLT is accurate, so the Gibbs posterior must match the exact one (grid of
    # Σ_s Binomial Laplace) within Monte Carlo error: |mean diff| < 4 MCSE (+ 2% of an sd
    # for the CLT) -- false rejection < 1e-4
    model = BinomialBeta(prior_alpha=2.0, prior_beta=3.0)
    n, eps = 2000, 0.05
    rel = model.release_statistics([700], n=n, epsilon=eps, seed=17)
    y = float(rel.values.ravel()[0])
    post = bl.gibbs_posterior(model, rel, iterations=8000, burnin=1000, chains=4, seed=18)
    draws = post.draws("theta").ravel()
    grid = np.linspace(1e-4, 1 - 1e-4, 4001)
    s = np.arange(n + 1)
    lp = stats.beta(2, 3).logpdf(grid) + np.array(
        [np.logaddexp.reduce(stats.binom.logpmf(s, n, t) - np.abs(y - s) * eps) for t in grid]
    )
    w = np.exp(lp - lp.max())
    w /= w.sum()
    mean = (w * grid).sum()
    sd = math.sqrt((w * grid**2).sum() - mean**2)
    mcse = draws.std() / math.sqrt(float(post.ess_bulk()["theta"].min()))
    assert abs(draws.mean() - mean) < 4 * mcse + 0.02 * sd
    assert abs(draws.std() / sd - 1) < 0.05
    assert post.check() == [] and post.backend == "numpy-gibbs"


def test_gibbs_rejects_bad_arguments():
    model = BinomialBeta()
    rel = model.published(3.0, n=10, epsilon=1.0)
    with pytest.raises(ValueError, match="iterations must be an int >= 1, got 0"):
        bl.gibbs_posterior(model, rel, iterations=0)
    with pytest.raises(TypeError, match="model must be a bernstein2018 model instance, got str"):
        bl.gibbs_posterior("binomial", rel)
    with pytest.raises(ValueError, match="release must be a Laplace release of the multinomial category counts"):
        bl.gibbs_posterior(MultinomialDirichlet(), rel)


# ----------------------------------------------------------- naive, non-private, OPS
def test_naive_and_nonprivate_conjugate_updates():
    binom = BinomialBeta(prior_alpha=2.0, prior_beta=3.0)
    rel = binom.published([[-4.0], [7.5], [40.0]], n=30, epsilon=1.0)
    naive = bl.naive_posterior(binom, rel)
    np.testing.assert_allclose(naive.params, [[2, 33], [9.5, 25.5], [32, 3]])  # y projected to [0, n]
    exact = binom.fit_nonprivate(statistics=[0, 7, 30], n=30)
    np.testing.assert_allclose(exact.params, [[2, 33], [9, 26], [32, 3]])
    assert exact.cdf([0.5, 0.5, 0.5]) == pytest.approx(stats.beta([2, 9, 32], [33, 26, 3]).cdf(0.5))
    assert exact.privacy == "non-private" and naive.privacy is None  # the naive update is of a release

    multi = MultinomialDirichlet(prior_alpha=[1.0, 2.0, 3.0])
    nv = bl.naive_posterior(multi, multi.published([[-5.0, 20.0, 15.0]], n=30, epsilon=1.0))
    assert nv.params.sum() == pytest.approx(6 + 30) and np.all(nv.params >= [1, 2, 3])
    draws = nv.sample(20000, seed=19)
    assert draws.shape == (1, 20000, 3)
    np.testing.assert_allclose(draws.mean(axis=1)[0], nv.mean()[0], atol=0.01)  # 8+ MC se
    assert nv.cdf([0.1], component=1)[0] == pytest.approx(stats.beta(nv.params[0, 1], 36 - nv.params[0, 1]).cdf(0.1))

    expo = ExponentialGamma()
    cheat = bl.naive_untruncated_posterior(expo, np.full(4000, 30.0), n=100, epsilon=0.5, seed=20)
    # the noise of the cheating baseline has the release's magnitude b/eps (KS p > 1e-3: 0.1%)
    noise = cheat.params[:, 1] - expo.prior_rate - 30.0
    assert stats.kstest(noise, stats.laplace(scale=expo.sensitivity / 0.5).cdf).pvalue > 1e-3
    assert np.all(cheat.params[:, 0] == expo.prior_shape + 100)
    with pytest.raises(ValueError, match="statistics must be >= 0"):
        expo.fit_nonprivate(statistics=[-1.0], n=10)


def test_fit_nonprivate_from_records_is_the_exact_conjugate_posterior_and_says_non_private():
    # from raw records: the statistic of the exact model (the exponential's FULL sum, not the
    # truncated one that is released), the same posterior as from the statistics
    x = np.array([[1, 0, 1, 1], [0, 0, 0, 1]])
    binom = BinomialBeta(prior_alpha=2.0, prior_beta=3.0)
    post = binom.fit_nonprivate(x)
    np.testing.assert_allclose(post.params, [[5, 4], [3, 6]])
    assert post.privacy == "non-private" and post.label == "non-private"
    np.testing.assert_allclose(binom.fit_nonprivate(statistics=[3, 1], n=4).params, post.params)
    multi = MultinomialDirichlet(prior_alpha=[1.0, 1.0, 1.0])
    np.testing.assert_allclose(multi.fit_nonprivate(np.array([0, 2, 2, 1, 2])).params, [[2, 2, 4]])
    expo = ExponentialGamma(bounds=(0.0, 1.0))
    rec = np.array([0.5, 3.0, 0.25])
    np.testing.assert_allclose(expo.fit_nonprivate(rec).params, [[expo.prior_shape + 3, expo.prior_rate + 3.75]])
    with pytest.raises(TypeError, match="either x .* or statistics"):
        binom.fit_nonprivate()
    with pytest.raises(TypeError, match="either x .* or statistics"):
        binom.fit_nonprivate(x, statistics=[3, 1])
    with pytest.raises(TypeError, match="give n only with statistics, got n=4"):
        binom.fit_nonprivate(x, n=4)
    with pytest.raises(ValueError, match="x must be >= 0 \\(exponential data\\); 1 value\\(s\\) are negative"):
        expo.fit_nonprivate(np.array([0.5, -1.0]))
    # the former spelling warns and gives the same posterior
    with pytest.warns(DeprecationWarning, match="use model.fit_nonprivate"):
        old = bl.nonprivate_posterior(binom, [3, 1], n=4)
    np.testing.assert_allclose(old.params, post.params)
    assert old.privacy == "non-private"


def test_release_is_a_classmethod_whose_declared_bounds_are_the_models_on_an_instance():
    import inspect

    for cls in (BinomialBeta, BinomialBetaExact, MultinomialDirichlet, ExponentialGamma):
        for name in ("release", "release_statistics", "published"):
            assert isinstance(inspect.getattr_static(cls, name), classmethod), (cls, name)
    x = np.array([0.5, 1.0, 2.0, 7.0])
    on_class = ExponentialGamma.release(x, epsilon=1.0, bounds=(0.0, 5.0), seed=3)
    on_model = ExponentialGamma(bounds=(0.0, 5.0)).release(x, epsilon=1.0, seed=3)
    np.testing.assert_array_equal(on_class.values, on_model.values)
    assert on_class.record == on_model.record and on_class.record.bounds == (0.0, 5.0)
    # without bounds: those of ExponentialGamma() (the prior predictive's central 95%)
    assert ExponentialGamma.release(x, epsilon=1.0, seed=3).record.bounds == ExponentialGamma().bounds
    cats = np.array([0, 3, 3, 1])
    by_k = MultinomialDirichlet.release(cats, epsilon=1.0, K=4, seed=4)
    by_model = MultinomialDirichlet(prior_alpha=[1, 1, 1, 1]).release(cats, epsilon=1.0, seed=4)
    np.testing.assert_array_equal(by_k.values, by_model.values)
    assert by_k.values.shape == (4,) and by_k.record == by_model.record
    with pytest.raises(ValueError, match=r"x contains 2 value\(s\) outside the declared bounds \[0, 2\]"):  # K = 3
        MultinomialDirichlet.release(cats, epsilon=1.0)
    with pytest.raises(TypeError, match="bounds is declared by the model this was called on"):
        ExponentialGamma(bounds=(0.0, 5.0)).release(x, epsilon=1.0, bounds=(0.0, 3.0))
    with pytest.raises(TypeError, match="unexpected keyword argument 'K'"):
        BinomialBeta.release(np.array([0, 1]), epsilon=1.0, K=3)
    published = ExponentialGamma.published(2.5, n=4, epsilon=1.0, bounds=(0.0, 5.0))
    assert published.record.sensitivity == 5.0 and published.record.details["published_externally"] is True


def test_ops_draws_follow_the_truncated_tempered_posterior():
    model = BinomialBeta()
    n, eps, a0 = 50, 20.0, 0.1
    ops = bl.ops_binomial(model, [10, 40], n=n, epsilon=eps, a0=a0, samples=100, seed=21)
    rec = ops.record
    draws = ops.params["theta"]
    assert isinstance(ops, OPSResult) and ops.released and ops.converged
    assert draws.shape == (2, 100) and rec.epsilon == eps and rec.mechanism == "ops"
    np.testing.assert_array_equal(ops.release.values, draws)  # the draws are the release
    assert rec.details["epsilon_per_sample"] == pytest.approx(0.2)
    assert rec.details["temperature"] == pytest.approx(ops_temperature(0.2, a0))
    assert ops.details["temperature"] == rec.details["temperature"]
    assert np.all((draws >= a0) & (draws <= 1 - a0))
    with pytest.warns(DeprecationWarning, match="OPSSamples is deprecated"):
        assert bl.OPSSamples is OPSResult
    # the exact sampler against the tempered truncated density integrated on a grid
    # (20000 draws, KS p > 1e-3 per data set: 0.2% in all)
    big = bl.ops_binomial(model, [10, 40], n=n, epsilon=eps, a0=a0, samples=20000, seed=22)
    t = big.record.details["temperature"]
    grid = np.linspace(a0, 1 - a0, 20001)
    for i, s in enumerate((10, 40)):
        dens = np.exp(((s + 9) * np.log(grid) + (n - s + 9) * np.log1p(-grid)) / t)
        cdf = integrate.cumulative_trapezoid(dens, grid, initial=0.0)
        cdf /= cdf[-1]
        assert stats.kstest(big.params["theta"][i], lambda q, grid=grid, cdf=cdf: np.interp(q, grid, cdf)).pvalue > 1e-3
    with pytest.raises(TypeError, match="model must be a BinomialBeta"):
        bl.ops_binomial(MultinomialDirichlet(), [1, 2], n=3, epsilon=1.0)


def test_normal_laplace_logpdf_is_the_convolution():
    # numpy twin of the Stan function, against direct numerical integration
    for y, mu, sigma, b in ((3.0, 1.0, 2.0, 0.5), (-40.0, 2.0, 1.0, 10.0), (5.0, 5.0, 30.0, 1.0)):
        val = integrate.quad(
            lambda s, y=y, mu=mu, sigma=sigma, b=b: stats.norm.pdf(s, mu, sigma) * stats.laplace.pdf(y, s, b),
            mu - 12 * sigma,
            mu + 12 * sigma,
            points=[y],
            limit=200,
        )[0]
        assert float(normal_laplace_logpdf(y, mu, sigma, b)) == pytest.approx(math.log(val), rel=1e-8)
    assert float(normal_laplace_logpdf(1.0, 0.0, 0.0, 2.0)) == pytest.approx(stats.laplace.logpdf(1.0, 0, 2.0))
