"""The Stan models of Kulkarni et al. (2022), distribution half: each recovers the
generating parameters on moderate synthetic data, the histogram posterior matches a
numerically integrated posterior, and a small calibration run of the Gaussian model covers
at the nominal 90 % rate. Each model is compiled once (module fixtures)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from pystanprivacy.models.kulkarni2022 import ExponentialLDP, GaussianLDP, HistogramOUE

SAMPLER = dict(chains=2, warmup=300, draws=500)


@pytest.fixture(scope="module")
def gaussian():
    model = GaussianLDP()
    _ = model.stan_model  # compile / load once
    return model


@pytest.fixture(scope="module")
def exponential():
    model = ExponentialLDP()
    _ = model.stan_model
    return model


@pytest.fixture(scope="module")
def histogram():
    model = HistogramOUE()
    _ = model.stan_model
    return model


def _z(draws, truth):
    return abs(draws.mean() - truth) / draws.std()


def test_gaussian_recovers_mu_and_sigma_with_clipping(gaussian):
    rng = np.random.default_rng(11)
    # sigma = 3 on [-5, 5]: about 10 % of the users clip; epsilon = 2 (Laplace scale 5)
    x = rng.normal(1.0, 3.0, size=3000)
    release = gaussian.release(x, epsilon=2.0, seed=12)
    post = gaussian.fit(release, seed=13, **SAMPLER)
    assert post.privacy == release.record.to_dict()  # the posterior carries the release's record
    mu, sigma = post.draws("mu")[:, 0], post.draws("sigma")[:, 0]
    # the truth within 3.5 posterior sd (a calibrated posterior misses with prob. < 0.1 %)
    assert _z(mu, 1.0) < 3.5 and _z(sigma, 3.0) < 3.5
    assert mu.std() < 0.35 and sigma.std() < 0.5  # informative, not the prior
    assert post.num_divergences == 0


def test_gaussian_ignoring_clipping_would_be_wrong(gaussian):
    # with sigma = 6 on [-5, 5] a third of the users clip: the naive sd of the clipped values
    # is far below 6, but the noise-aware model recovers sigma
    rng = np.random.default_rng(21)
    x = rng.normal(0.0, 6.0, size=3000)
    post = gaussian.fit(gaussian.release(x, epsilon=4.0, seed=22), seed=23, **SAMPLER)
    sigma = post.draws("sigma")[:, 0]
    assert np.clip(x, -5, 5).std() < 4.5
    assert _z(sigma, 6.0) < 3.5


def test_exponential_recovers_theta(exponential):
    rng = np.random.default_rng(31)
    x = rng.exponential(1 / 0.8, size=(2, 3000))  # two data sets in one run
    post = exponential.fit(exponential.release(x, epsilon=1.0, seed=32), seed=33, **SAMPLER)
    theta = post.draws("theta")
    assert theta.shape[1] == 2
    for r in range(2):
        assert _z(theta[:, r], 0.8) < 3.5
    assert theta.std(axis=0).max() < 0.15


def test_histogram_recovers_theta_and_cost_is_set_by_distinct_reports(histogram):
    rng = np.random.default_rng(41)
    theta = np.array([0.5, 0.3, 0.15, 0.05])
    x = rng.choice(4, size=50_000, p=theta)
    release = histogram.release(x, epsilon=1.0, d=4, seed=42)
    data = histogram.data(release)
    assert sum(data["M"]) <= 2**4 - 2  # 50 000 users, <= 14 rows
    post = histogram.fit(release, seed=43, **SAMPLER)
    draws = post.draws("theta")[:, 0, :]
    assert np.all(np.abs(draws.mean(axis=0) - theta) < 3.5 * draws.std(axis=0))
    assert np.allclose(draws.sum(axis=1), 1.0)


def test_histogram_posterior_matches_numerical_integration(histogram):
    """d = 3: the posterior mean of theta from Stan equals the mean under the exact
    posterior Dirichlet(1) x prod_i Pr[z_i | theta] (Eq. 33) integrated on a fine grid over
    the simplex, within Monte Carlo error."""
    rng = np.random.default_rng(51)
    eps = 0.8
    x = rng.choice(3, size=300, p=[0.6, 0.3, 0.1])
    release = histogram.release(x, epsilon=eps, d=3, seed=52)
    post = histogram.fit(release, seed=53, chains=4, warmup=500, draws=2000)
    draws = post.draws("theta")[:, 0, :]
    # grid posterior (brute force: the latent category of every user summed out)
    g = np.linspace(0, 1, 601)[1:-1]
    t1, t2 = np.meshgrid(g, g, indexing="ij")
    ok = t1 + t2 < 1
    th = np.stack([t1[ok], t2[ok], 1 - t1[ok] - t2[ok]], axis=1)  # (G, 3)
    z = release.values
    s = z @ th.T  # (N, G) = z . theta
    loglik = np.log1p(np.expm1(eps) * s).sum(axis=0)
    w = np.exp(loglik - logsumexp(loglik))
    exact = w @ th
    sd = np.sqrt(w @ (th - exact) ** 2)
    ess = min(post.ess_bulk()["theta"].ravel())
    # within 4 Monte Carlo standard errors (false rejection < 2e-4 per coordinate), plus the
    # grid's discretisation (spacing 1/600)
    assert np.all(np.abs(draws.mean(axis=0) - exact) < 4 * sd / np.sqrt(ess) + 2e-3)
    assert np.allclose(draws.std(axis=0), sd, rtol=0.1)


@pytest.mark.parametrize("name", ["gaussian", "exponential", "histogram"])
def test_published_reports_give_the_posterior_of_the_release_that_made_them(name, request):
    # the users' reports released here (seeded: the record's scale is exactly the nominal one)
    # or made on their devices and published to the aggregator with the same public
    # parameters: the same Stan data, so the same draws for the same seed
    model = request.getfixturevalue(name)
    rng = np.random.default_rng(70)
    if name == "gaussian":
        x, public = rng.normal(0.5, 2.0, size=(2, 300)), {"bounds": (-4.0, 4.0)}
    elif name == "exponential":
        x, public = rng.exponential(1.0, size=(2, 300)), {"bound": 3.0}
    else:
        x, public = rng.integers(0, 3, size=(2, 300)), {"d": 3}
    release = model.release(x, epsilon=1.5, seed=71, **public)
    published = model.published(release.values, epsilon=1.5, **public)
    assert published.record.details["published_externally"] is True and published.record.n == 300
    assert model.data(published).keys() == model.data(release).keys()
    a = model.fit(release, seed=72, chains=1, warmup=150, draws=150)
    b = model.fit(published, seed=72, chains=1, warmup=150, draws=150)
    for var in a.variables:
        np.testing.assert_array_equal(a.draws(var), b.draws(var))
    assert a.privacy == release.record.to_dict() and b.privacy == published.record.to_dict()


def test_published_refuses_what_no_user_could_have_sent():
    for empty in (np.zeros((2, 0)), np.zeros((0, 3)), []):  # no report, or no data set
        with pytest.raises(ValueError, match=r"z must hold at least one report, got shape \("):
            GaussianLDP.published(empty, epsilon=1.0)
    with pytest.raises(ValueError, match=r"reports must have shape \(N, 4\) or \(R, N, 4\)"):
        HistogramOUE.published(np.zeros((5, 3), dtype=int), epsilon=1.0, d=4)
    with pytest.raises(ValueError, match="reports contains 1 value"):
        HistogramOUE.published(np.array([[0, 2, 1]]), epsilon=1.0, d=3)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        ExponentialLDP.published(np.ones(3), epsilon=-1.0)


def test_gaussian_intervals_cover_in_a_small_calibration_run(gaussian):
    """40 data sets with (mu, sigma) from the prior, 800 users each, epsilon = 1, in batched
    runs of 5: the central 90 % intervals of mu and of sigma hold the truth at the nominal
    rate. Accept >= 30 of 40 per parameter: for a calibrated posterior
    Pr[Binomial(40, 0.9) < 30] = 0.15 % per parameter. In the default tier: the issue names
    this check (about 2 min of CPU)."""
    rng = np.random.default_rng(61)
    repeats, n = 40, 800
    mu, sigma = gaussian.sample_prior(repeats, seed=rng)
    x = rng.normal(mu[:, None], sigma[:, None], size=(repeats, n))
    covered = {"mu": 0, "sigma": 0}
    for chunk in np.array_split(np.arange(repeats), 8):
        post = gaussian.fit(gaussian.release(x[chunk], epsilon=1.0, seed=rng), seed=rng, **SAMPLER)
        for name, truth in (("mu", mu[chunk]), ("sigma", sigma[chunk])):
            d = post.draws(name)
            lo, hi = np.quantile(d, [0.05, 0.95], axis=0)
            covered[name] += int(((lo <= truth) & (truth <= hi)).sum())
    assert stats.binom.cdf(29, 40, 0.9) < 0.0015
    assert covered["mu"] >= 30 and covered["sigma"] >= 30, covered
