"""Floating-point-safe noise (pystanprivacy.privacy.noise) and its use by the mechanisms.

Exact samplers are checked against their exact pmfs with G-tests at fixed seeds through the
seeded source (each test rejects a correct sampler with probability <= 1e-4 under the null,
so the whole file falsely fails with probability < 2e-3; with fixed seeds the outcome is
deterministic). Privacy accounting (delta of the discrete Gaussian, zCDP conversion) is
checked against independent brute-force computations with mpmath.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from pystanprivacy.privacy import ldp, noise
from pystanprivacy.privacy.mechanisms import (
    AnalyticGaussian,
    Gaussian,
    Laplace,
    OptimalUnaryEncoding,
    RandomizedResponse,
    analytic_gaussian_sigma,
)
from pystanprivacy.privacy.records import (
    PrivacyAccountant,
    ReproducibleNotSecureWarning,
    reset_reproducible_warning,
)

P_REJECT = 1e-4  # per-test false-rejection rate of the goodness-of-fit tests


def _g_test(counts: np.ndarray, probs: np.ndarray) -> float:
    """p-value of the G-test of observed ``counts`` against exact cell ``probs``."""
    counts = np.asarray(counts, dtype=float)
    expected = probs * counts.sum()
    mask = counts > 0
    g = 2.0 * np.sum(counts[mask] * np.log(counts[mask] / expected[mask]))
    return float(stats.chi2.sf(g, len(counts) - 1))


def _binned(draws: np.ndarray, pmf, kmax: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts and exact probabilities on cells (-inf, -kmax], -kmax+1, ..., kmax-1, [kmax, inf)."""
    ks = np.arange(-kmax + 1, kmax)
    p_mid = np.array([pmf(k) for k in ks])
    tail = (1.0 - p_mid.sum()) / 2.0
    probs = np.concatenate([[tail], p_mid, [tail]])
    clipped = np.clip(draws, -kmax, kmax)
    counts = np.array([np.count_nonzero(clipped == k) for k in range(-kmax, kmax + 1)])
    return counts, probs


@pytest.fixture
def fresh_warning():
    reset_reproducible_warning()
    yield
    reset_reproducible_warning()


# ============================================================ randomness sources
def test_seeded_randbelow_is_exact_and_uniform_for_huge_ranges():
    src = noise.SeededRandom(3)
    n = 3 * 2**70 + 1
    draws = [src.randbelow(n) for _ in range(6000)]
    assert all(0 <= r < n for r in draws)
    top = np.array([r // 2**70 for r in draws])  # uniform on {0, 1, 2} (the value 3 has prob ~1e-21)
    counts = np.array([np.count_nonzero(top == j) for j in range(3)])
    assert _g_test(counts, np.full(3, 1 / 3)) > P_REJECT
    assert noise.SeededRandom(7).randbelow(10**30) == noise.SeededRandom(7).randbelow(10**30)  # reproducible


def test_as_source():
    assert isinstance(noise.as_source(None), noise.SecureRandom) and noise.as_source(None).secure
    assert isinstance(noise.as_source(1), noise.SeededRandom) and not noise.as_source(1).secure
    src = noise.SeededRandom(0)
    assert noise.as_source(src) is src
    with pytest.raises(TypeError, match="seed"):
        noise.as_source("abc")


# ============================================================ exact samplers
@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(3, 10), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_frequency(gamma):
    src = noise.SeededRandom(11)
    n = 20000
    ones = sum(noise.bernoulli_exp(gamma, src) for _ in range(n))
    p = math.exp(-float(gamma))
    if p == 1.0:
        assert ones == n
        return
    assert stats.binomtest(ones, n, p).pvalue > P_REJECT


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_bernoulli_logistic_frequency(eps):
    draws = noise.sample_bernoulli_logistic(eps, 20000, rng=5)
    assert set(np.unique(draws)) <= {0, 1}
    assert stats.binomtest(int(draws.sum()), draws.size, 1.0 / (1.0 + math.exp(eps))).pvalue > P_REJECT


@pytest.mark.parametrize("t", [Fraction(5, 2), 0.7])
def test_discrete_laplace_matches_exact_pmf(t):
    draws = noise.sample_discrete_laplace(t, 30000, rng=1)
    assert draws.dtype == np.int64 and draws.shape == (30000,)
    tf = float(t)
    counts, probs = _binned(draws, lambda k: math.tanh(0.5 / tf) * math.exp(-abs(k) / tf), 8)
    assert _g_test(counts, probs) > P_REJECT


@pytest.mark.parametrize("sigma2", [Fraction(9, 4), 20])
def test_discrete_gaussian_matches_exact_pmf(sigma2):
    draws = noise.sample_discrete_gaussian(sigma2, (150, 200), rng=2)
    assert draws.shape == (150, 200) and draws.dtype == np.int64
    s2 = float(sigma2)
    z = sum(math.exp(-k * k / (2 * s2)) for k in range(-400, 401))
    counts, probs = _binned(draws.ravel(), lambda k: math.exp(-k * k / (2 * s2)) / z, int(3 * math.sqrt(s2)) + 1)
    assert _g_test(counts, probs) > P_REJECT


def test_secure_samplers_return_int64_arrays():
    assert noise.sample_discrete_laplace(3, (2, 3)).shape == (2, 3)
    assert noise.sample_discrete_gaussian(Fraction(1, 3), 5).dtype == np.int64
    assert noise.sample_discrete_laplace(1.5, 0).shape == (0,)


@pytest.mark.parametrize(
    "fn, name",
    [
        (noise.sample_discrete_laplace, "t"),
        (noise.sample_discrete_gaussian, "sigma2"),
        (noise.sample_bernoulli_logistic, "epsilon"),
    ],
)
@pytest.mark.parametrize(
    "bad, exc",
    [
        (0, ValueError),
        (-1.5, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        ("1", TypeError),
        (True, TypeError),
        (None, TypeError),
        (1j, TypeError),
    ],
)
def test_bad_parameters_name_argument_and_value(fn, name, bad, exc):
    with pytest.raises(exc, match=rf"^{name} must .*{repr(bad)[:3]}"):
        fn(bad, 3, rng=0)


@pytest.mark.parametrize(
    "size, exc", [(-1, ValueError), (2.0, TypeError), ((2, -1), ValueError), ("3", TypeError), (True, TypeError)]
)
def test_bad_size(size, exc):
    with pytest.raises(exc, match="size must"):
        noise.sample_discrete_laplace(1, size, rng=0)


# ============================================================ grid
def test_grid_exponent():
    assert noise.grid_exponent(1.0) == -20
    assert noise.grid_exponent(3.0, 10) == -22  # 3 / (2^20 10) in [2^-22, 2^-21)
    assert noise.grid_exponent(2.0**-20) == -40
    for sens, c in [(0.37, 1), (5.0, 7), (1e6, 3)]:
        k = noise.grid_exponent(sens, c)
        assert 2.0**k <= sens * 2.0**-20 / c < 2.0 ** (k + 1)
    with pytest.raises(ValueError, match="sensitivity"):
        noise.grid_exponent(0.0)
    with pytest.raises(ValueError, match="changed"):
        noise.grid_exponent(1.0, 0)


def test_to_grid_rounds_exactly_to_nearest_half_even():
    rng = np.random.default_rng(4)
    x = np.concatenate(
        [rng.normal(0, 1e3, 500), rng.normal(0, 1e-3, 500), np.array([2.5, -2.5, 3.5, 0.5, -0.5, 1.5]) * 2.0**-10]
    )
    k = -10
    m = noise.to_grid(x, k)
    g = Fraction(2) ** k
    for xi, mi in zip(x, m):
        err = Fraction(float(xi)) - int(mi) * g
        assert abs(err) <= g / 2
        if abs(err) == g / 2:
            assert int(mi) % 2 == 0  # ties to even
    assert list(m[-6:]) == [2, -2, 4, 0, 0, 2]


def test_from_grid_is_exact_within_2_53_and_the_nearest_float_beyond():
    m = np.array([0, 1, -7, 2**53, -(2**53)], dtype=np.int64)
    out = noise.from_grid(m, -20)
    assert all(Fraction(float(v)) == int(mi) * Fraction(2) ** -20 for v, mi in zip(out, m))
    # issue 53: beyond 2^53 the nearest float64 (half to even), not an OverflowError
    assert noise.from_grid([2**53 + 1, 2**53 + 3], 0).tolist() == [2.0**53, 2.0**53 + 4]


def test_to_grid_is_exact_beyond_2_52_steps_and_refuses_only_non_finite_values():
    # issue 17: a data-dependent refusal told neighbours apart; issue 53: the clamp to 2^52
    # steps that replaced it lost data silently. Every finite value has its exact index.
    secret = 123456789.0
    m = noise.to_grid(np.array([1.0, secret, -secret]), -40)
    assert list(m) == [2**40, 123456789 * 2**40, -123456789 * 2**40]
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="1 non-finite value\\(s\\)") as info:
            noise.to_grid(np.array([secret, bad]), -40)
        assert "123456789" not in str(info.value)


# ============================================================ discrete Gaussian privacy
def _brute_force_delta(sigma: float, eps: float, d: int) -> mpmath.mpf:
    """delta = sum_y max(0, P(y | 0) - e^eps P(y | d)) directly from the definition (mpmath)."""
    mpmath.mp.dps = 40
    s2 = mpmath.mpf(sigma) ** 2
    kmax = int(40 * sigma) + 2 * d + 10
    w = [mpmath.exp(-(mpmath.mpf(k) ** 2) / (2 * s2)) for k in range(-kmax, kmax + 1)]
    z = mpmath.fsum(w)
    e = mpmath.exp(mpmath.mpf(eps))
    total = mpmath.mpf(0)
    for i, y in enumerate(range(-kmax, kmax + 1)):
        j = y - d + kmax  # index of y - d
        q = w[j] if 0 <= j < len(w) else mpmath.mpf(0)
        total += max(mpmath.mpf(0), w[i] - e * q)
    return total / z


@pytest.mark.parametrize(
    "sigma, eps, d", [(1.5, 1.0, 1), (3.0, 0.5, 1), (4.0, 1.0, 3), (25.0, 0.2, 2), (200.0, 0.05, 1)]
)
def test_discrete_gaussian_delta_bounds_the_exact_delta(sigma, eps, d):
    exact = float(_brute_force_delta(sigma, eps, d))
    bound = noise.discrete_gaussian_delta(sigma, eps, d)
    assert bound >= exact
    # the bound's slack is at most the pmf at the tail start, phi(m/sigma)/sigma
    assert bound - exact <= 1.0 / (sigma * math.sqrt(2 * math.pi)) * 1.01
    if sigma >= 200:
        assert bound == pytest.approx(exact, rel=1e-2)


def test_zcdp_delta_matches_a_brute_force_minimum():
    for rho, eps in [(0.02, 1.0), (0.5, 3.0), (0.001, 0.1)]:
        alphas = np.exp(np.linspace(math.log(1.00001), math.log(1e6), 400000))
        # CKS 2020 Corollary 13: exp((a-1)(a rho - eps)) / (a-1) * (1 - 1/a)^a, on a dense grid of a
        log_d = (alphas - 1) * (alphas * rho - eps) - np.log(alphas - 1) + alphas * np.log1p(-1 / alphas)
        ref = math.exp(float(log_d.min()))
        got = noise.zcdp_delta(rho, eps)
        assert got == pytest.approx(ref, rel=1e-3)
        assert got <= ref * (1 + 1e-9)  # our minimiser is at least as good as the grid


@pytest.mark.parametrize("changed, d", [(1, 1048577), (3, 3.0 * 2**20 + 3)])
def test_discrete_gaussian_sigma_meets_delta_and_is_near_minimal(changed, d):
    eps, delta = 1.0, 1e-5
    start = analytic_gaussian_sigma(eps, delta, 1.0) * d * 0.999  # deliberately too small
    sigma, bound = noise.discrete_gaussian_sigma(eps, delta, d, changed=changed, start=start)
    assert bound <= delta
    below = sigma * (1 - 1e-6)
    check = (
        noise.discrete_gaussian_delta(below, eps, d)
        if changed == 1
        else noise.zcdp_delta(d * d / (2 * below * below), eps)
    )
    assert check > delta


# ============================================================ mechanisms: secure path
def test_secure_laplace_real_input_on_grid():
    mech = Laplace(epsilon=0.5, sensitivity=2.0)
    rel = mech.release(np.array([0.3, 1.7, -2.2]), n=3)
    det = rel.record.details
    assert det["secure"] is True and det["randomness"] == "cryptographic (secrets)" and det["seeded"] is False
    k = det["grid_exponent"]
    assert k == noise.grid_exponent(2.0, 3) and det["grid"] == 2.0**k and "discrete_laplace on grid" in det["noise"]
    assert np.all(np.isfinite(rel.values))
    units = np.ldexp(rel.values, -k)
    assert np.array_equal(units, np.rint(units))  # on the grid
    d_int = math.floor(2.0 / 2.0**k) + 3
    assert det["integer_sensitivity"] == d_int
    assert rel.record.scale == float(Fraction(d_int) / Fraction(0.5) * Fraction(2) ** k)
    assert 4.0 <= rel.record.scale <= 4.0 * (1 + 2.0**-20)


def test_secure_laplace_integer_input_gets_integer_noise_with_exact_scale():
    rel = Laplace(epsilon=0.7, sensitivity=2.0).release(np.array([3, 10, 0]))
    assert rel.record.scale == 2.0 / 0.7 and rel.record.details["grid"] == 1.0
    assert np.array_equal(rel.values, np.rint(rel.values))


def test_secure_laplace_noise_distribution_through_the_mechanism():
    """The secure path's noise, with the source swapped for a seeded one, is DLap(D/eps)."""
    mech = Laplace(epsilon=1.0, sensitivity=2.0)
    mech._source = noise.SeededRandom(9)
    out = mech.randomise(np.zeros(20000, dtype=np.int64)).astype(np.int64)
    counts, probs = _binned(out, lambda k: math.tanh(0.25) * math.exp(-abs(k) / 2.0), 8)
    assert _g_test(counts, probs) > P_REJECT


def test_secure_laplace_releases_values_far_beyond_the_exact_range_and_charges_once():
    # issue 17: formerly refused (a data-dependent refusal); issue 53: then clamped to 2^52
    # grid steps (about 9.4e9 here). Now released near the value: noise beyond 50 scales has
    # probability e^-50, the false-rejection rate of this test.
    acc = PrivacyAccountant(1.0)
    rel = Laplace(epsilon=0.5, sensitivity=1e-6).release(np.array([1e12]), accountant=acc)
    lo, hi = rel.record.details["exact_range"]
    assert hi == -lo == math.ldexp(1.0, 52 + rel.record.details["grid_exponent"]) < 1e12
    assert rel.record.details["representable_range"] == (-noise.FLOAT_MAX, noise.FLOAT_MAX)
    assert acc.spent == (0.5, 0.0) and abs(rel.values[0] - 1e12) < 50 * rel.record.scale + 1e12 * 2.0**-52


@pytest.mark.parametrize("cls, eps", [(AnalyticGaussian, 2.0), (Gaussian, 0.5)])
@pytest.mark.parametrize("x", [np.array([0.25]), np.array([0.1, -0.4, 2.0]), np.array([4, 7])])
def test_secure_gaussian_meets_delta_with_at_least_the_continuous_sigma(cls, eps, x):
    mech = cls(epsilon=eps, delta=1e-6, sensitivity=1.5)
    rel = mech.release(x)
    det = rel.record.details
    assert det["secure"] is True and det["delta_bound"] <= 1e-6
    assert rel.record.scale >= mech.scale
    assert rel.record.scale == math.ldexp(det["sigma_grid_units"], det["grid_exponent"])
    assert det["sigma_grid_units"] >= 128
    units = np.ldexp(rel.values, -det["grid_exponent"])
    assert np.array_equal(units, np.rint(units)) and np.all(np.isfinite(rel.values))
    if x.size == 1:  # exact delta: sigma within a hair of the continuous one
        assert rel.record.scale <= mech.scale * 1.001


def test_secure_rr_and_oue():
    rr = RandomizedResponse(epsilon=1.0).release(np.array([0, 1, 1, 0, 1]))
    assert set(np.unique(rr.values)) <= {0, 1} and rr.record.details["secure"] is True
    assert "exact Bernoulli" in rr.record.details["noise"]
    oue = OptimalUnaryEncoding(epsilon=1.0, d=4).release(np.array([0, 3, 2]))
    assert oue.values.shape == (3, 4) and set(np.unique(oue.values)) <= {0, 1}
    assert oue.record.details["secure"] is True


def test_secure_rr_flip_rate_through_the_mechanism():
    mech = RandomizedResponse(epsilon=1.5)
    mech._source = noise.SeededRandom(12)
    out = mech.randomise(np.zeros(20000, dtype=np.int64))
    assert stats.binomtest(int(out.sum()), out.size, 1 / (1 + math.exp(1.5))).pvalue > P_REJECT


def test_secure_ldp_reports():
    rel = ldp.clipped_laplace_reports(np.array([0.2, 5.0, -1.0]), epsilon=1.0, bounds=(0.0, 1.0))
    det = rel.record.details
    assert det["secure"] and det["changed_coordinates"] == 1 and det["grid_exponent"] == -20
    g = ldp.gaussian_reports(
        np.array([[0.1, 0.2], [0.3, -0.1]]), epsilon=1.0, delta=1e-5, sensitivity=2.0, scale_ratios=[1.0, 2.0]
    )
    gd = g.record.details
    assert gd["secure"] and gd["delta_bound"] <= 1e-5 and gd["changed_coordinates"] == 2
    assert list(gd["noise_sd"]) == [g.record.scale, 2 * g.record.scale]
    assert g.record.scale >= analytic_gaussian_sigma(1.0, 1e-5, 2.0)
    # the rescaled statistic values / r is on the grid
    units = np.ldexp(g.values / np.array([1.0, 2.0]), -gd["grid_exponent"])
    assert np.array_equal(units, np.rint(units))
    assert ldp.randomized_response_reports([0, 1], epsilon=1.0).record.details["secure"]
    assert ldp.oue_reports([0, 1], epsilon=1.0, d=3).record.details["secure"]


# ============================================================ seeded path
def test_seeded_release_warns_once_and_is_marked_not_secure(fresh_warning):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rel = Laplace(epsilon=1.0, sensitivity=1.0, seed=1).release(np.array([0.5]))
        Laplace(epsilon=1.0, sensitivity=1.0, seed=2).randomise(0.5)
        ldp.gaussian_reports(np.array([0.1]), epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=3)
    ours = [w for w in caught if issubclass(w.category, ReproducibleNotSecureWarning)]
    assert len(ours) == 1 and "reproducible, NOT secure" in str(ours[0].message)
    det = rel.record.details
    assert det["secure"] is False and det["seeded"] is True
    assert det["randomness"] == "seeded numpy generator: reproducible, not secure"
    assert det["noise"] == "continuous float64 (numpy)" and "grid" not in det


def test_seeded_path_is_unchanged_continuous_numpy(fresh_warning):
    with pytest.warns(ReproducibleNotSecureWarning):
        got = Laplace(epsilon=0.5, sensitivity=2.0, seed=42).randomise(np.array([1.0, 2.0]))
    assert np.array_equal(got, np.array([1.0, 2.0]) + np.random.default_rng(42).laplace(0.0, 4.0, 2))


def test_secure_release_does_not_warn(fresh_warning):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReproducibleNotSecureWarning)
        Laplace(epsilon=1.0, sensitivity=1.0).release(np.array([0.5]))


# ============================================================ the model approximation bound
def test_laplace_grid_likelihood_bound():
    """|log p_disc(y|x) - log p_cont(y|x) - C| <= g/(2b) on a coarse grid (so it is visible)."""
    k, t = -2, Fraction(3)  # g = 1/4, b = 3/4
    g, b = 2.0**k, float(t) * 2.0**k
    const = math.log(math.tanh(0.5 / float(t))) + math.log(2 * b)
    rng = np.random.default_rng(0)
    worst = 0.0
    for x in rng.uniform(-3, 3, 400):
        r = int(noise.to_grid(np.array([x]), k)[0])
        for kk in range(-12, 13):
            yu = r + kk  # output in grid units
            y = yu * g
            log_disc = math.log(math.tanh(0.5 / float(t))) - abs(yu - r) / float(t)
            log_cont = -math.log(2 * b) - abs(y - x) / b
            worst = max(worst, abs(log_disc - log_cont - const))
    assert worst <= g / (2 * b) + 1e-12
    assert worst >= 0.9 * g / (2 * b)  # and the bound is tight


def test_gaussian_grid_likelihood_bound_and_integer_exactness():
    k, s_u = -3, 5.0  # g = 1/8, sigma = 5 grid steps
    g, s = 2.0**k, s_u * 2.0**k
    log_z = math.log(sum(math.exp(-j * j / (2 * s_u**2)) for j in range(-200, 201)))
    const = -log_z + math.log(s * math.sqrt(2 * math.pi))
    rng = np.random.default_rng(1)
    for x in rng.uniform(-2, 2, 300):
        r = int(noise.to_grid(np.array([x]), k)[0])
        for kk in range(-15, 16):
            y = (r + kk) * g
            log_disc = -(kk**2) / (2 * s_u**2) - log_z
            log_cont = -((y - x) ** 2) / (2 * s**2) - math.log(s * math.sqrt(2 * math.pi))
            assert abs(log_disc - log_cont - const) <= (g * abs(y - x) + g * g / 4) / (2 * s * s) + 1e-12
    # integer statistic with integer noise (g = 1): the difference is the same constant for all s
    t = 2.5
    diffs = [
        math.log(math.tanh(0.5 / t)) - abs(y - si) / t - (-math.log(2 * t) - abs(y - si) / t)
        for si in range(-5, 6)
        for y in range(-10, 11)
    ]
    assert max(diffs) - min(diffs) < 1e-12


# ============================================================ models read the recorded scale
def test_models_use_the_recorded_scale_of_a_secure_release():
    from pystanprivacy.models.bernstein2018 import BinomialBeta, ExponentialGamma
    from pystanprivacy.models.kulkarni2022 import ExponentialLDP, GaussianLDP

    x = np.random.default_rng(0).normal(size=50)
    rel = GaussianLDP.release(x, epsilon=1.0, bounds=(-2.0, 2.0))
    assert rel.record.details["secure"] and rel.record.scale != 4.0  # grid allowance: not exactly (b-a)/eps
    assert GaussianLDP().data(rel)["beta"] == rel.record.scale
    rel = ExponentialLDP.release(np.abs(x), epsilon=0.5)
    assert ExponentialLDP().data(rel)["beta"] == rel.record.scale

    binom = BinomialBeta()
    rel = binom.release(np.random.default_rng(1).integers(0, 2, size=30), epsilon=0.5)
    assert rel.record.details["grid"] == 1.0 and rel.record.details["secure"]
    assert binom.data(rel)["scale"] == rel.record.scale == 2.0
    expo = ExponentialGamma(bounds=(0.0, 5.0))
    rel = expo.release(np.random.default_rng(2).exponential(size=40), epsilon=1.0)
    assert rel.record.details["grid_exponent"] < 0 and rel.record.scale > 5.0
    assert expo.data(rel)["scale"] == rel.record.scale


def test_ldp_regression_models_use_the_recorded_sigma_of_a_secure_release():
    from pystanprivacy.models.kulkarni2022_regression import LinearRegressionInputs, LinearRegressionSS

    rng = np.random.default_rng(3)
    x = np.clip(rng.normal(scale=0.3, size=(40, 2)), -0.7, 0.7)
    y = np.clip(rng.normal(size=40), -1.0, 1.0)
    rel = LinearRegressionSS.release(x, y, epsilon=1.0, delta=1e-5)
    det = rel.record.details
    assert det["secure"] and det["delta_bound"] <= 1e-5
    data = LinearRegressionSS().data(rel)
    assert data["sigma_t2"] == rel.record.scale == det["sigma_grid_units"] * det["grid"]
    rel = LinearRegressionInputs.release(x, y, epsilon=1.0, delta=1e-5)
    det = rel.record.details
    assert det["secure"] and det["randomness"] == "cryptographic (secrets)"
    data = LinearRegressionInputs().data(rel)
    assert data["sigma_x"] == det["sigma_x"] and data["sigma_y"] == det["sigma_y"]
    # features: one user's row (2 coordinates, zCDP calibration) needs more than the continuous sigma
    assert det["sigma_x"] > analytic_gaussian_sigma(0.5, 0.5e-5, 2.0)
