"""pystanprivacy.sampling.evaluate: posterior quantiles, KS against Uniform(0, 1) with its critical
value, calibration summaries, ECDF, interval coverage and the unbiased MMD² estimator.

Statistical checks use fixed seeds, so they are deterministic; the stated false-rejection
rate is the chance that a correct implementation would fail with a random seed."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pystanprivacy.sampling.evaluate import (
    calibration_summary,
    ecdf,
    gaussian_kernel,
    interval_coverage,
    ks_critical_value,
    ks_uniform,
    median_bandwidth,
    mmd2_unbiased,
    posterior_quantile,
)


def test_posterior_quantile_of_exact_posteriors_is_uniform():
    # Conjugate normal model: mu ~ N(0, 1), y ~ N(mu, 1) => mu | y ~ N(y/2, 1/2). With exact
    # iid posterior draws the randomised rank is exactly Uniform(0, 1) for any L, here L = 9
    # (coarse: the plain fraction would be visibly discrete). KS p > 1e-3: false rejection 0.1%.
    rng = np.random.default_rng(1)
    m = 4000
    mu = rng.standard_normal(m)
    y = mu + rng.standard_normal(m)
    draws = y[:, None] / 2 + math.sqrt(0.5) * rng.standard_normal((m, 9))
    u = posterior_quantile(draws, mu, seed=2)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # a posterior that is too narrow (sd halved) is clearly not uniform
    narrow = y[:, None] / 2 + 0.5 * math.sqrt(0.5) * rng.standard_normal((m, 9))
    assert stats.kstest(posterior_quantile(narrow, mu, seed=3), "uniform").pvalue < 1e-6


def test_posterior_quantile_breaks_ties_of_discrete_draws_uniformly():
    # truth and draws from the same discrete distribution (many ties): still uniform when
    # randomised; KS p > 1e-3 (false rejection 0.1%)
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 3, size=3000).astype(float)
    draws = rng.integers(0, 3, size=(3000, 5)).astype(float)
    assert stats.kstest(posterior_quantile(draws, truth, seed=5), "uniform").pvalue > 1e-3
    plain = posterior_quantile(draws, truth, randomize=False)
    np.testing.assert_allclose(plain, (draws < truth[:, None]).mean(axis=1))


def test_posterior_quantile_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="truth must have one value per trial \\(2\\), got 3"):
        posterior_quantile(np.zeros((2, 5)), np.zeros(3))
    with pytest.raises(ValueError, match="draws must have 1 or 2 dimension"):
        posterior_quantile(np.zeros((2, 5, 1)), np.zeros(2))


def test_ks_statistic_and_critical_value():
    m = 50
    u = (np.arange(m) + 0.5) / m  # the best possible sample: D = 1/(2m)
    d, p = ks_uniform(u)
    assert d == pytest.approx(0.5 / m) and p > 0.99
    assert ks_uniform(np.full(10, 0.5))[0] == pytest.approx(0.5)
    # exact finite-m value and the asymptotic 1.628/sqrt(m) (Massey 1951) at 1%
    assert ks_critical_value(100, 0.01) == pytest.approx(stats.kstwo.ppf(0.99, 100))
    assert ks_critical_value(100, 0.01) == pytest.approx(0.1608, abs=5e-4)
    assert ks_critical_value(20000, 0.01) == pytest.approx(1.6276 / math.sqrt(20000), rel=5e-3)
    with pytest.raises(ValueError, match="alpha must be in \\(0, 1\\), got 1.5"):
        ks_critical_value(10, 1.5)
    with pytest.raises(ValueError, match="u must hold values in \\[0, 1\\]"):
        ks_uniform([0.2, 1.3])


def test_critical_value_has_its_stated_level():
    # 1500 uniform samples of size 30: the count with D > c(1%) is Binomial(1500, 0.01)
    # (mean 15); [3, 35] holds it with probability > 1 - 1e-4.
    rng = np.random.default_rng(6)
    c = ks_critical_value(30, 0.01)
    d = np.array([stats.kstest(rng.random(30), "uniform").statistic for _ in range(1500)])
    assert 3 <= int((d > c).sum()) <= 35


def test_calibration_summary_groups_and_flags():
    rng = np.random.default_rng(7)
    good = pd.DataFrame({"method": "good", "n": 10, "u": rng.random(300)})
    bad = pd.DataFrame({"method": "bad", "n": 10, "u": rng.random(300) ** 3})
    holes = pd.DataFrame({"method": "holes", "n": 10, "u": [0.1, np.nan, 0.7, 0.4]})
    out = calibration_summary(pd.concat([good, bad, holes]), ["method", "n"]).set_index("method")
    # uniform sample: calibrated unless a 1%-probability event; u**3 is far from uniform
    assert bool(out.loc["good", "calibrated"]) and not bool(out.loc["bad", "calibrated"])
    assert out.loc["bad", "ks"] > 0.3
    assert out.loc["holes", "trials"] == 3 and out.loc["holes", "missing"] == 1
    assert out.loc["good", "critical"] == pytest.approx(ks_critical_value(300, 0.01))
    with pytest.raises(ValueError, match="no column 'q'"):
        calibration_summary(good, ["method"], u_column="q")


def test_ecdf_and_interval_coverage():
    np.testing.assert_allclose(ecdf([0.1, 0.5, 0.5, 0.9], [0.0, 0.1, 0.5, 0.95]), [0.0, 0.25, 0.75, 1.0])
    rng = np.random.default_rng(8)
    truth = rng.standard_normal(2000)
    draws = truth[:, None] * 0 + rng.standard_normal((2000, 400))  # truth ~ N(0,1) = "posterior"
    cover = interval_coverage(draws, truth, 0.9)
    # coverage ~ Binomial(2000, 0.9)/2000 (plus quantile noise): 0.87..0.93 fails w.p. < 1e-5
    assert 0.87 < cover.mean() < 0.93
    with pytest.raises(ValueError, match="level must be in \\(0, 1\\), got 1"):
        interval_coverage(draws, truth, 1)


def _mmd2_bruteforce(x, y, h):
    x = np.atleast_2d(x.T).T
    y = np.atleast_2d(y.T).T
    k = lambda a, b: math.exp(-float(np.sum((a - b) ** 2)) / (2 * h * h))
    m, n = len(x), len(y)
    kxx = sum(k(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    kyy = sum(k(y[i], y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    kxy = sum(k(x[i], y[j]) for i in range(m) for j in range(n)) / (m * n)
    return kxx + kyy - 2 * kxy


def test_mmd2_matches_the_definition_in_chunks_and_dimensions():
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal(17), rng.standard_normal(11) + 0.3
    for chunk in (1, 4, 2048):
        assert mmd2_unbiased(x, y, bandwidth=0.7, chunk=chunk) == pytest.approx(_mmd2_bruteforce(x, y, 0.7), abs=1e-12)
    x2, y2 = rng.standard_normal((9, 3)), rng.standard_normal((12, 3))
    assert mmd2_unbiased(x2, y2, bandwidth=1.3) == pytest.approx(_mmd2_bruteforce(x2, y2, 1.3), abs=1e-12)
    np.testing.assert_allclose(gaussian_kernel(x2, y2, 1.3)[2, 5], math.exp(-np.sum((x2[2] - y2[5]) ** 2) / (2 * 1.69)))
    assert median_bandwidth(x, y) > 0
    assert np.isfinite(mmd2_unbiased(x, y, bandwidth="median"))
    with pytest.raises(ValueError, match="same dimension, got 3 and 2"):
        mmd2_unbiased(x2, rng.standard_normal((5, 2)))
    with pytest.raises(ValueError, match="bandwidth must be a finite number > 0, got -1"):
        mmd2_unbiased(x, y, bandwidth=-1)
    with pytest.raises(ValueError, match="bandwidth must be a positive number or 'median', got 'auto'"):
        mmd2_unbiased(x, y, bandwidth="auto")


def test_mmd2_is_unbiased():
    # X ~ N(0, 1), Y ~ N(mu, 1), kernel bandwidth h: MMD² = 2h/sqrt(h²+2) (1 − exp(−mu²/(2(h²+2)))).
    # The mean of 400 independent estimates (m = n = 30) must be within 4.5 standard errors
    # of the truth, for mu = 0 (MMD² = 0) and mu = 1: false rejection < 1e-5 per case.
    rng = np.random.default_rng(10)
    h = 1.0
    for mu in (0.0, 1.0):
        truth = 2 * h / math.sqrt(h * h + 2) * (1 - math.exp(-mu * mu / (2 * (h * h + 2))))
        est = np.array(
            [mmd2_unbiased(rng.standard_normal(30), mu + rng.standard_normal(30), bandwidth=h) for _ in range(400)]
        )
        se = est.std(ddof=1) / math.sqrt(est.size)
        assert abs(est.mean() - truth) < 4.5 * se, (mu, est.mean(), truth, se)
    # and it grows with the distance between the distributions
    far = mmd2_unbiased(rng.standard_normal(200), 3 + rng.standard_normal(200))
    near = mmd2_unbiased(rng.standard_normal(200), 0.3 + rng.standard_normal(200))
    assert far > 10 * near > 0
