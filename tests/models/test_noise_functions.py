"""The public Stan noise-function library (stan/functions/dp_noise.stanfunctions) and its
catalogue (pystanprivacy/stanfunctions.py).

Every ``dp_`` function is evaluated by ONE test-only program, tests/stan/noise_functions.stan
(compiled once per module): its values (fixed_param, generated quantities) against an
independent computation -- SciPy's distributions, a direct sum of the discrete Gaussian's
terms, numerical quadrature of the convolution, and the library's own mechanisms' ``log_prob``
(randomised response, OUE) -- and its gradient in every real argument that Stan
differentiates (``StanModel.log_density``) against central finite differences of that same
independent reference. The record fields a secure release writes (``scale``,
``details["grid"]``) are checked to be the parametrisation the discrete functions take.

Deterministic: no Monte-Carlo error, no false rejections. Tolerances: values to 1e-9
relative (quadrature references: 1e-8); gradients to 1e-6 relative of the largest component
(finite differences with step 1e-5, error about 1e-9).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln, logsumexp

from pystanprivacy import stanfunctions as sf
from pystanprivacy.privacy.mechanisms import (
    AnalyticGaussian,
    Gaussian,
    Laplace,
    OptimalUnaryEncoding,
    RandomizedResponse,
)
from pystanprivacy.sampling.stan import StanModel, flatten

PROGRAM = Path(__file__).parents[1] / "stan" / "noise_functions.stan"

#: function -> its index in the program's eval()
FN = {
    name: i + 1
    for i, name in enumerate(
        [
            "dp_laplace_clt_lpdf",
            "dp_gaussian_clt_lpdf",
            "dp_discrete_laplace_lpmf",
            "dp_discrete_gaussian_lpmf",
            "dp_discrete_laplace_grid_lpdf",
            "dp_discrete_gaussian_grid_lpdf",
            "dp_poisson_laplace_lpdf",
            "dp_poisson_gaussian_lpdf",
            "dp_poisson_discrete_laplace_lpdf",
            "dp_poisson_discrete_gaussian_lpdf",
            "dp_binomial_laplace_lpdf",
            "dp_binomial_gaussian_lpdf",
            "dp_binomial_discrete_laplace_lpdf",
            "dp_binomial_discrete_gaussian_lpdf",
            "dp_randomized_response_lpmf",
            "dp_oue_lpmf",
            "dp_clipped_laplace_normal_lpdf",
            "dp_clipped_laplace_exponential_lpdf",
            "dp_clipped_gaussian_normal_lpdf",
            "dp_binomial_laplace_weights",
            "dp_binomial_from_weights",
            "dp_discrete_laplace_censored_lpmf",
            "dp_discrete_gaussian_censored_lpmf",
        ]
    )
}
A_MAX = 6


# ----------------------------------------------------------------------------- the program
@pytest.fixture(scope="module")
def program():
    return StanModel.get(str(PROGRAM))


def _reports(zr=(), zi=(), Zo=None):
    Zo = np.zeros((len(zi), 0), int) if Zo is None else np.asarray(Zo, int)
    zr = np.asarray(zr, float)
    zi = np.asarray(zi, int)
    n = max(len(zr), len(zi), len(Zo))
    if not (len(zr) in (0, n) and len(zi) in (0, n) and len(Zo) in (0, n)):
        raise ValueError("give one kind of reports at a time")
    zr = zr if len(zr) else np.zeros(n)
    zi = zi if len(zi) else np.zeros(n, int)
    Zo = Zo if len(Zo) else np.zeros((n, Zo.shape[1]), int)
    return {"Nz": n, "zr": zr, "zi": zi, "D": Zo.shape[1], "Zo": Zo}


def _pad(a, size, fill=0.0):
    out = np.full(size, fill, float)
    out[: len(a)] = a
    return out


def _data(rows=(), *, which=0, at=(), iat=(), mask=(), **reports):
    return {
        "A": A_MAX,
        "B": 2,
        "M": len(rows),
        "fn": [FN[r[0]] for r in rows],
        "args": np.array([_pad(r[1], A_MAX) for r in rows]).reshape(len(rows), A_MAX),
        "iargs": np.array([_pad(r[2], 2) for r in rows], int).reshape(len(rows), 2),
        **_reports(**reports),
        "which": which,
        "at": _pad(at, A_MAX),
        "iat": _pad(iat, 2).astype(int),
        "mask": _pad(mask, A_MAX).astype(int),
        "P": int(np.sum(mask)),
    }


def evaluate(program, rows, **reports):
    """The values of ``rows`` = [(function, real args, int args), ...] (fixed_param)."""
    fit = program.fixed_param(_data(rows, **reports), draws=1, seed=1)
    return np.asarray(fit.draws("value")[0], float)


def gradient(program, name, at, mask, iat=(), **reports):
    """(log density, gradient) of ``name`` at ``at``, differentiated in the arguments flagged in
    ``mask`` (log_density of the program with which = the function)."""
    data = _data(which=FN[name], at=at, iat=iat, mask=mask, **reports)
    p = np.asarray(at, float)[np.asarray(mask, bool)]
    lp, grad = program.log_density(data, {"p": p})
    return lp[0], grad[0]


def finite_difference(ref, at, mask, step=1e-5):
    """Central differences of ``ref(*args)`` in the flagged arguments (relative step)."""
    at = np.asarray(at, float)
    out = []
    for k in np.flatnonzero(mask):
        h = step * max(1.0, abs(at[k]))
        up, down = at.copy(), at.copy()
        up[k] += h
        down[k] -= h
        out.append((ref(*up) - ref(*down)) / (2 * h))
    return np.array(out)


def assert_gradient(program, name, ref, at, mask, iat=(), **reports):
    lp, grad = gradient(program, name, at, mask, iat, **reports)
    assert lp == pytest.approx(ref(*at), rel=1e-8, abs=1e-10), (name, at)
    fd = finite_difference(ref, at, mask)
    assert np.allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max()), (name, at, grad, fd)


# ----------------------------------------------------------------------------- references
def _quad(f, lo, hi, points=()):
    pts = [p for p in points if lo < p < hi]
    return integrate.quad(f, lo, hi, points=pts or None, epsabs=0.0, epsrel=1e-12, limit=500)[0]


def ref_laplace_clt(y, mu, sigma, b):
    if sigma == 0:
        return stats.laplace.logpdf(y, mu, b)
    lo, hi = mu - 14 * sigma, mu + 14 * sigma
    return math.log(_quad(lambda s: stats.norm.pdf(s, mu, sigma) * stats.laplace.pdf(y, s, b), lo, hi, [y]))


def ref_gaussian_clt(y, mu, sigma, scale):
    if sigma == 0:
        return stats.norm.logpdf(y, mu, scale)
    lo, hi = mu - 14 * sigma, mu + 14 * sigma
    return math.log(_quad(lambda s: stats.norm.pdf(s, mu, sigma) * stats.norm.pdf(y, s, scale), lo, hi, [y]))


def log_discrete_gaussian_norm(u):
    """log sum_{|k| <= K} exp(-k^2 / (2 u^2)), K = 40 u + 12 (the rest below e^-800): a direct
    sum (math.fsum), independent of the program's Poisson-summation branch."""
    K = int(40 * u) + 12
    k = np.arange(-K, K + 1, dtype=float)
    return math.log(math.fsum(np.exp(-k * k / (2 * u * u))))


def ref_discrete_laplace(k, t):
    """log P(K = k), K ~ DLap(t) on the integers: -|k| / t minus the log of the direct sum of
    exp(-|j| / t) over |j| <= 60 t + 12 (the rest below e^-60 relative), checked against
    SciPy's dlaplace (a = 1 / t) wherever that is finite."""
    K = int(60 * t) + 12
    j = np.arange(-K, K + 1, dtype=float)
    out = -np.abs(k) / t - math.log(math.fsum(np.exp(-np.abs(j) / t)))
    scipy_value = stats.dlaplace.logpmf(k, 1.0 / t)
    assert np.all(~np.isfinite(scipy_value) | (np.abs(scipy_value - out) <= 1e-9 * np.maximum(1.0, np.abs(out))))
    return out


def ref_discrete_gaussian(k, u):
    return -k * k / (2 * u * u) - log_discrete_gaussian_norm(u)


def _noise(kind, y, x, scale, grid=1.0):
    """log noise of y - x for every x (the references of the four noises)."""
    if kind == "laplace":
        return stats.laplace.logpdf(y, x, scale)
    if kind == "gaussian":
        return stats.norm.logpdf(y, x, scale)
    k = (y - x) / grid
    assert np.all(k == np.round(k))
    if kind == "discrete_laplace":
        return ref_discrete_laplace(k, scale / grid)
    return ref_discrete_gaussian(k, scale / grid)


def ref_poisson(kind, y, lam, scale, grid, max_count):
    x = np.arange(max_count + 1)
    return logsumexp(stats.poisson.logpmf(x, lam) + _noise(kind, y, x, scale, grid))


def ref_binomial(kind, y, n, theta, scale, grid):
    x = np.arange(n + 1)
    return logsumexp(stats.binom.logpmf(x, n, theta) + _noise(kind, y, x, scale, grid))


def ref_randomized_response(z, p, eps):
    mech = RandomizedResponse(epsilon=eps)
    z = np.asarray(z)
    per = (
        np.logaddexp(math.log1p(-p) + mech.log_prob(z, 0), math.log(p) + mech.log_prob(z, 1))
        if 0 < p < 1
        else mech.log_prob(z, int(p))
    )
    return float(np.sum(per))


def ref_oue(Z, theta, eps):
    Z = np.asarray(Z)
    mech = OptimalUnaryEncoding(epsilon=eps, d=Z.shape[1])
    per = [logsumexp([math.log(t) + mech.log_prob(z, k) for k, t in enumerate(theta)]) for z in Z]
    return float(np.sum(per))


def _clipped(z, lo, hi, log_mass_lo, log_mass_hi, pdf, noise_logpdf, span):
    """log p(z) for z = clip(x, lo, hi) + noise: point masses at the bounds, quadrature inside."""
    out = 0.0
    for zi in z:
        inner = _quad(lambda x, zi=zi: pdf(x) * math.exp(noise_logpdf(zi, x)), max(lo, span[0]), min(hi, span[1]), [zi])
        terms = [
            math.log(inner) if inner > 0 else -math.inf,
            log_mass_lo + noise_logpdf(zi, lo),
            log_mass_hi + noise_logpdf(zi, hi),
        ]
        out += logsumexp(terms)
    return out


def ref_clipped_laplace_normal(z, mu, sigma, lo, hi, scale):
    return _clipped(
        z,
        lo,
        hi,
        stats.norm.logcdf(lo, mu, sigma),
        stats.norm.logsf(hi, mu, sigma),
        lambda x: stats.norm.pdf(x, mu, sigma),
        lambda zz, x: stats.laplace.logpdf(zz, x, scale),
        (mu - 14 * sigma, mu + 14 * sigma),
    )


def ref_clipped_laplace_exponential(z, theta, lo, hi, scale):
    assert lo == 0
    return _clipped(
        z,
        0.0,
        hi,
        -math.inf,
        -theta * hi,
        lambda x: stats.expon.pdf(x, scale=1 / theta),
        lambda zz, x: stats.laplace.logpdf(zz, x, scale),
        (0.0, hi),
    )


def ref_clipped_gaussian_normal(z, mu, sigma, lo, hi, scale):
    return _clipped(
        z,
        lo,
        hi,
        stats.norm.logcdf(lo, mu, sigma),
        stats.norm.logsf(hi, mu, sigma),
        lambda x: stats.norm.pdf(x, mu, sigma),
        lambda zz, x: stats.norm.logpdf(zz, x, scale),
        (mu - 14 * sigma, mu + 14 * sigma),
    )


# ----------------------------------------------------------------------------- CLT sums
CLT = [
    (3.0, 2.5, 1.0, 0.7),
    (-40.0, 10.0, 30.0, 2.0),
    (100.0, 90.0, 4.0, 20.0),
    (0.3, 0.0, 0.01, 1.0),
    (5.0, 1.0, 0.0, 2.0),
]


def test_clt_sums_match_quadrature(program):
    rows = [(name, args, ()) for name in ("dp_laplace_clt_lpdf", "dp_gaussian_clt_lpdf") for args in CLT]
    got = evaluate(program, rows)
    want = [ref_laplace_clt(*a) for a in CLT] + [ref_gaussian_clt(*a) for a in CLT]
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "name, ref", [("dp_laplace_clt_lpdf", ref_laplace_clt), ("dp_gaussian_clt_lpdf", ref_gaussian_clt)]
)
def test_clt_sums_gradients(program, name, ref):
    for at in ([3.0, 2.5, 1.0, 0.7], [-40.0, 10.0, 30.0, 2.0], [1.0, 0.0, 0.5, 3.0]):
        assert_gradient(program, name, ref, at, [1, 1, 1, 1])


# ----------------------------------------------------------------------------- discrete noise
DISCRETE_SCALES = [0.05, 0.3, 0.999, 1.0, 1.001, 2.5, 37.0, 128.0, 5000.0]


def test_discrete_laplace_and_gaussian_on_the_integers(program):
    rows, want = [], []
    for t in DISCRETE_SCALES:
        for y, x in ((3, 3), (5, 2), (-7, 4), (0, 40)):
            rows.append(("dp_discrete_laplace_lpmf", [t], [y, x]))
            want.append(ref_discrete_laplace(y - x, t))
            rows.append(("dp_discrete_gaussian_lpmf", [t], [y, x]))
            want.append(ref_discrete_gaussian(y - x, t))
    np.testing.assert_allclose(evaluate(program, rows), want, rtol=1e-9, atol=1e-12)


def _censored_reference(kind, y, x, t):
    """log P(max(0, x + K) = y): the discrete reference for y >= 1, and for y = 0 the log of the
    direct sum of P(K = k) over k <= -x (down to -x - 60 t - 60: the rest below e^-60)."""
    ref = ref_discrete_laplace if kind == "laplace" else ref_discrete_gaussian
    if y > 0:
        return ref(y - x, t)
    ks = np.arange(-x - int(60 * t) - 60, -x + 1)
    return float(logsumexp([ref(k, t) for k in ks]))


def test_censored_discrete_noise_matches_direct_sums(program):
    """dp_discrete_{laplace,gaussian}_censored_lpmf (a count clamped at 0, OpenDP's dp.len()):
    the point mass at 0 against a direct sum of the uncensored law's masses at k <= -x, the
    other values against the uncensored references; and each sums to 1 over y >= 0."""
    rows, want = [], []
    for t in (0.3, 1.0, 2.5, 37.0):
        for y, x in ((0, 0), (0, 1), (0, 4), (0, -3), (0, 60), (3, 3), (5, 0), (1, 9)):
            for kind in ("laplace", "gaussian"):
                rows.append((f"dp_discrete_{kind}_censored_lpmf", [t], [y, x]))
                want.append(_censored_reference(kind, y, x, t))
    np.testing.assert_allclose(evaluate(program, rows), want, rtol=1e-9, atol=1e-12)
    for t, x in ((0.7, 0), (2.0, 3), (6.0, 1)):
        ys = np.arange(0, x + int(60 * t) + 60)
        for kind in ("laplace", "gaussian"):
            got = evaluate(program, [(f"dp_discrete_{kind}_censored_lpmf", [t], [int(y), x]) for y in ys])
            assert math.fsum(np.exp(got)) == pytest.approx(1.0, abs=1e-12), (kind, t, x)


def test_discrete_noise_sums_to_one(program):
    """Each pmf sums to 1 over its lattice (to 1e-12), for scales on both sides of the
    Gaussian normaliser's switch (u = 1) and on a fine grid."""
    for scale, grid in ((0.4, 1.0), (1.0, 1.0), (3.0, 0.25), (2.0, 2.0**-6)):
        u = scale / grid
        ks = np.arange(-int(60 * u) - 20, int(60 * u) + 21)
        rows = [
            (name, [k * grid, 0.0, scale, grid], ())
            for k in ks
            for name in ("dp_discrete_laplace_grid_lpdf", "dp_discrete_gaussian_grid_lpdf")
        ]
        got = evaluate(program, rows)
        assert math.fsum(np.exp(got[0::2])) == pytest.approx(1.0, abs=1e-12), (scale, grid)
        assert math.fsum(np.exp(got[1::2])) == pytest.approx(1.0, abs=1e-12), (scale, grid)


def test_discrete_noise_on_a_grid(program):
    rows, want = [], []
    for scale, grid in ((0.75, 0.5), (3.0, 2.0**-5), (1e3, 4.0), (0.1, 1.0)):
        for k in (0, 1, -3, 17):
            y, mu = 2.0 + k * grid, 2.0
            rows.append(("dp_discrete_laplace_grid_lpdf", [y, mu, scale, grid], ()))
            want.append(ref_discrete_laplace(k, scale / grid))
            rows.append(("dp_discrete_gaussian_grid_lpdf", [y, mu, scale, grid], ()))
            want.append(ref_discrete_gaussian(k, scale / grid))
    np.testing.assert_allclose(evaluate(program, rows), want, rtol=1e-9, atol=1e-12)


def test_discrete_noise_gradients_in_the_scale(program):
    for t in (0.3, 0.999, 1.001, 40.0):
        assert_gradient(program, "dp_discrete_laplace_lpmf", lambda s: ref_discrete_laplace(4, s), [t], [1], iat=[7, 3])
        assert_gradient(
            program, "dp_discrete_gaussian_lpmf", lambda s: ref_discrete_gaussian(4, s), [t], [1], iat=[7, 3]
        )
    grid = 0.25
    for scale in (0.2, 3.0):

        def lap(y, mu, s, g):
            return ref_discrete_laplace(round((y - mu) / g), s / g)

        def gau(y, mu, s, g):
            return ref_discrete_gaussian(round((y - mu) / g), s / g)

        assert_gradient(program, "dp_discrete_laplace_grid_lpdf", lap, [1.75, 1.0, scale, grid], [0, 0, 1, 0])
        assert_gradient(program, "dp_discrete_gaussian_grid_lpdf", gau, [1.75, 1.0, scale, grid], [0, 0, 1, 0])


def test_secure_release_records_give_the_functions_arguments():
    """What the secure mechanisms write is what the functions take: integer input stays on the
    integers (Laplace: grid 1, scale = floor(sensitivity) / epsilon) or on a grid 2^-j that
    holds every integer (Gaussian), and record.scale / grid is the noise's scale in grid steps
    (the t of P(K = k) ∝ exp(-|k| / t), the sigma of the discrete Gaussian)."""
    counts = np.array([3, 10, 0, 250])
    rel = Laplace(epsilon=0.7, sensitivity=1.0).release(counts)
    d = rel.record.details
    assert d["grid"] == 1.0 and "integer input" in d["noise"]
    assert rel.record.scale == pytest.approx(1 / 0.7, rel=1e-15)
    assert rel.record.scale / d["grid"] == pytest.approx(d["scale_grid_units"], rel=1e-15)
    assert np.all(np.asarray(rel.values) == np.round(rel.values))
    # sigma >= 128 grid steps: grid 1; a small sigma: a finer grid
    for mech in (
        Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0),
        AnalyticGaussian(epsilon=20.0, delta=1e-5, sensitivity=1.0),
    ):
        rel = mech.release(counts)
        d = rel.record.details
        g = d["grid"]
        assert 0 < g <= 1 and math.log2(g) == round(math.log2(g)) and "integer input" in d["noise"], d
        assert rel.record.scale / g == pytest.approx(d["sigma_grid_units"], rel=1e-15)
        y = np.asarray(rel.values, float)
        assert np.all(y / g == np.round(y / g))


# ----------------------------------------------------------------------------- noisy counts
POISSON = [
    (12.0, 9.5, 1.3, 1.0, 60),
    (-2.0, 0.7, 2.0, 1.0, 40),
    (150.0, 140.0, 25.0, 1.0, 400),
    (4.25, 3.0, 0.9, 0.25, 50),
]
BINOMIAL = [
    (7.0, 20, 0.3, 1.0, 1.0),
    (-3.0, 5, 0.05, 4.0, 1.0),
    (180.0, 300, 0.62, 10.0, 1.0),
    (11.5, 30, 0.4, 0.6, 0.5),
]


def test_noisy_count_marginals_match_direct_sums(program):
    rows, want = [], []
    for kind in ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian"):
        for y, lam, scale, grid, max_count in POISSON:
            if kind in ("laplace", "gaussian"):
                rows.append((f"dp_poisson_{kind}_lpdf", [y, lam, scale], [max_count]))
                want.append(ref_poisson(kind, y, lam, scale, 1.0, max_count))
            else:
                rows.append((f"dp_poisson_{kind}_lpdf", [y, lam, scale, grid], [max_count]))
                want.append(ref_poisson(kind, y, lam, scale, grid, max_count))
        for y, n, theta, scale, grid in BINOMIAL:
            if kind in ("laplace", "gaussian"):
                rows.append((f"dp_binomial_{kind}_lpdf", [y, theta, scale], [n]))
                want.append(ref_binomial(kind, y, n, theta, scale, 1.0))
            else:
                rows.append((f"dp_binomial_{kind}_lpdf", [y, theta, scale, grid], [n]))
                want.append(ref_binomial(kind, y, n, theta, scale, grid))
    np.testing.assert_allclose(evaluate(program, rows), want, rtol=1e-9, atol=1e-10)


def test_poisson_marginal_with_a_far_bound_is_the_untruncated_one(program):
    """With max_count far in the tail, the truncated sum equals the sum to 10x the bound."""
    y, lam, scale = 30.0, 25.0, 2.0
    got = evaluate(program, [("dp_poisson_laplace_lpdf", [y, lam, scale], [120])])[0]
    assert got == pytest.approx(ref_poisson("laplace", y, lam, scale, 1.0, 1200), rel=1e-13)


def test_binomial_laplace_marginal_matches_the_exact_registry_model():
    """dp_binomial_laplace_lpdf is the likelihood of stan/bernstein2018/binomial_beta_exact.stan
    (which computes it through dp_binomial_laplace_weights and dp_binomial_from_weights): the
    two programs' log densities differ only by the Beta prior."""
    exact = StanModel.get("bernstein2018/binomial_beta_exact")
    n, scale, y = 40, 2.0, 13.7
    data = {"R": 1, "n": n, "y": [y], "scale": scale, "prior_alpha": 1.0, "prior_beta": 1.0}
    for theta in (0.2, 0.35, 0.8):
        lp, _ = exact.log_density(data, {"theta": [theta]})
        # uniform prior: lp = log-likelihood + log Jacobian of the logit transform (+ const)
        jac = math.log(theta) + math.log1p(-theta)
        assert lp[0] - jac == pytest.approx(ref_binomial("laplace", y, n, theta, scale, 1.0), rel=1e-9)


# ----------------------------------------------------------------------------- binomial from weights
def ref_binomial_laplace_weights(y, n, scale):
    """log C(n, s) + log Laplace(y | s, scale), s = 0..n (log-gamma and SciPy's Laplace)."""
    s = np.arange(n + 1)
    return gammaln(n + 1) - gammaln(s + 1) - gammaln(n - s + 1) + stats.laplace.logpdf(y, s, scale)


def ref_binomial_from_weights(log_w, theta):
    """log sum_s w_s theta^s (1 - theta)^(n - s), a direct log-sum-exp in log theta, log(1 - theta)."""
    s = np.arange(len(log_w))
    n = len(log_w) - 1
    return logsumexp(np.asarray(log_w) + s * math.log(theta) + (n - s) * math.log1p(-theta))


WEIGHTS = [(7.0, 20, 1.0), (-3.0, 5, 4.0), (180.0, 300, 10.0), (11.5, 30, 0.6), (0.4, 0, 2.0), (60.0, 9, 0.25)]


def test_binomial_laplace_weights_are_the_direct_terms(program):
    rows, want = [], []
    for y, n, scale in WEIGHTS:
        rows += [("dp_binomial_laplace_weights", [y, scale], [n, s]) for s in range(n + 1)]
        want.extend(ref_binomial_laplace_weights(y, n, scale))
    np.testing.assert_allclose(evaluate(program, rows), want, rtol=1e-12, atol=1e-11)
    # a weight's gradient in y and scale (y off the counts: |y - s| is differentiable there)
    for y, n, scale, s in ((7.3, 20, 1.0, 4), (-3.0, 5, 4.0, 5), (11.5, 30, 0.6, 12)):
        assert_gradient(
            program,
            "dp_binomial_laplace_weights",
            lambda yy, sc, n=n, s=s: ref_binomial_laplace_weights(yy, n, sc)[s],
            [y, scale],
            [1, 1],
            iat=[n, s],
        )


@pytest.mark.parametrize("n", [0, 1, 12, 150])
def test_binomial_from_weights_matches_a_direct_sum(program, n):
    log_w = np.random.default_rng(n).normal(0.0, 3.0, size=n + 1)
    thetas = [1e-4, 0.03, 0.3, 0.5, 0.77, 0.9999]
    got = evaluate(program, [("dp_binomial_from_weights", [t], [n]) for t in thetas], zr=log_w)
    np.testing.assert_allclose(got, [ref_binomial_from_weights(log_w, t) for t in thetas], rtol=1e-11, atol=1e-11)
    for theta in (0.03, 0.3, 0.77):
        assert_gradient(
            program,
            "dp_binomial_from_weights",
            lambda t: ref_binomial_from_weights(log_w, t),
            [theta],
            [1],
            iat=[n],
            zr=log_w,
        )


def test_binomial_from_laplace_weights_is_dp_binomial_laplace_lpdf(program):
    """dp_binomial_from_weights(dp_binomial_laplace_weights(y, n, scale), n, theta) =
    dp_binomial_laplace_lpdf(y | n, theta, scale), both from the program (and SciPy's sum)."""
    for y, n, scale in WEIGHTS:
        log_w = evaluate(program, [("dp_binomial_laplace_weights", [y, scale], [n, s]) for s in range(n + 1)])
        thetas = [0.02, 0.3, 0.62, 0.95]
        composed = evaluate(program, [("dp_binomial_from_weights", [t], [n]) for t in thetas], zr=log_w)
        direct = evaluate(program, [("dp_binomial_laplace_lpdf", [y, t, scale], [n]) for t in thetas])
        np.testing.assert_allclose(composed, direct, rtol=1e-12, atol=1e-11)
        want = [ref_binomial("laplace", y, n, t, scale, 1.0) for t in thetas]
        np.testing.assert_allclose(composed, want, rtol=1e-11, atol=1e-11)


def test_exact_binomial_model_is_the_former_program_to_the_last_bit():
    """stan/bernstein2018/binomial_beta_exact.stan calls dp_binomial_laplace_weights (transformed
    data) and dp_binomial_from_weights (model) instead of writing the sum inline as it did
    before (tests/stan/binomial_beta_exact_former.stan), with the same floating-point
    arithmetic: the same log density and gradient bit for bit, hence the same draws for the
    same seed."""
    assert sf.functions_called(flatten("bernstein2018/binomial_beta_exact")) == {
        "dp_binomial_laplace_weights",
        "dp_binomial_from_weights",
    }
    new = StanModel.get("bernstein2018/binomial_beta_exact")
    old = StanModel.get(str(PROGRAM.parent / "binomial_beta_exact_former.stan"))
    data = {"R": 3, "n": 25, "y": [7.3, -2.0, 26.9], "scale": 1.7, "prior_alpha": 2.0, "prior_beta": 0.8}
    points = np.array([[-1.4, 0.0, 2.2], [-9.0, 7.5, 0.31], [25.0, -30.0, 3.0]])  # unconstrained logit(theta)
    lp_new, grad_new = new.log_density(data, unconstrained=points)
    lp_old, grad_old = old.log_density(data, unconstrained=points)
    assert np.all(np.isfinite(lp_old)) and np.array_equal(lp_new, lp_old), lp_new - lp_old
    assert np.array_equal(grad_new, grad_old), grad_new - grad_old
    sampler = dict(chains=2, warmup=150, draws=100, seed=7)
    draws_new = new.sample(data, **sampler).draws("theta", combine_chains=False)
    draws_old = old.sample(data, **sampler).draws("theta", combine_chains=False)
    assert draws_new.shape == (2, 100, 3) and np.array_equal(draws_new, draws_old)


@pytest.mark.parametrize("kind", ["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"])
def test_noisy_count_marginal_gradients(program, kind):
    discrete = kind.startswith("discrete")
    y, grid = (4.25, 0.25) if discrete else (4.3, 1.0)
    for lam, scale in ((3.0, 0.9), (6.0, 2.5)):
        if discrete:
            assert_gradient(
                program,
                f"dp_poisson_{kind}_lpdf",
                lambda yy, la, s, g: ref_poisson(kind, yy, la, s, g, 40),
                [y, lam, scale, grid],
                [0, 1, 1, 0],
                iat=[40],
            )
        else:
            assert_gradient(
                program,
                f"dp_poisson_{kind}_lpdf",
                lambda yy, la, s: ref_poisson(kind, yy, la, s, 1.0, 40),
                [y, lam, scale],
                [1, 1, 1],
                iat=[40],
            )
    for theta, scale in ((0.3, 0.9), (0.7, 3.0)):
        if discrete:
            assert_gradient(
                program,
                f"dp_binomial_{kind}_lpdf",
                lambda yy, th, s, g: ref_binomial(kind, yy, 12, th, s, g),
                [y, theta, scale, grid],
                [0, 1, 1, 0],
                iat=[12],
            )
        else:
            assert_gradient(
                program,
                f"dp_binomial_{kind}_lpdf",
                lambda yy, th, s: ref_binomial(kind, yy, 12, th, s, 1.0),
                [y, theta, scale],
                [1, 1, 1],
                iat=[12],
            )


# ----------------------------------------------------------------------------- local reports
def test_randomized_response_matches_the_mechanism(program):
    z = [1, 0, 0, 1, 1, 1, 0, 1]
    cases = [(0.3, 1.0), (0.9, 0.05), (0.5, 8.0), (0.0, 2.0), (1.0, 0.5), (0.2, 40.0)]
    got = evaluate(program, [("dp_randomized_response_lpmf", [p, eps], ()) for p, eps in cases], zi=z)
    np.testing.assert_allclose(got, [ref_randomized_response(z, p, eps) for p, eps in cases], rtol=1e-10)
    for p, eps in ((0.3, 1.0), (0.8, 0.1)):
        assert_gradient(
            program,
            "dp_randomized_response_lpmf",
            lambda pp, ee: ref_randomized_response(z, pp, ee),
            [p, eps],
            [1, 1],
            zi=z,
        )


def test_oue_matches_the_mechanism(program):
    rng = np.random.default_rng(3)
    Z = rng.integers(0, 2, size=(9, 4))
    Z[0] = 0  # no bit set
    Z[1] = 1  # every bit set
    cases = [
        ([0.1, 0.2, 0.3, 0.4], 1.0),
        ([0.7, 0.1, 0.1, 0.1], 0.05),
        ([0.25] * 4, 6.0),
        ([0.97, 0.01, 0.01, 0.01], 30.0),
    ]
    got = evaluate(program, [("dp_oue_lpmf", list(theta) + [eps], ()) for theta, eps in cases], Zo=Z)
    np.testing.assert_allclose(got, [ref_oue(Z, theta, eps) for theta, eps in cases], rtol=1e-10)
    # gradient: in epsilon, and in theta along directions that stay on the simplex
    for theta, eps in cases[:2]:
        at = list(theta) + [eps]
        lp, grad = gradient(program, "dp_oue_lpmf", at, [1] * 5, Zo=Z)
        assert lp == pytest.approx(ref_oue(Z, theta, eps), rel=1e-10)
        h = 1e-6
        d_eps = (ref_oue(Z, theta, eps + h) - ref_oue(Z, theta, eps - h)) / (2 * h)
        assert grad[4] == pytest.approx(d_eps, rel=1e-6)
        for k in range(3):
            e = np.zeros(4)
            e[k], e[3] = h, -h
            fd = (ref_oue(Z, np.array(theta) + e, eps) - ref_oue(Z, np.array(theta) - e, eps)) / (2 * h)
            assert grad[k] - grad[3] == pytest.approx(fd, rel=1e-6, abs=1e-8), (theta, k)


Z_CLIP = np.array([-7.0, -5.0, -2.3, 0.0, 0.4, 1.9, 3.0, 4.2, 9.5])  # below, at, inside and above [-2, 3]


@pytest.mark.parametrize(
    "name, ref, cases, mask",
    [
        (
            "dp_clipped_laplace_normal_lpdf",
            ref_clipped_laplace_normal,
            [(0.5, 1.2, -2.0, 3.0, 1.1), (2.0, 0.3, -2.0, 3.0, 5.0), (-1.0, 4.0, -2.0, 3.0, 0.2)],
            [1, 1, 0, 0, 1],
        ),
        (
            "dp_clipped_gaussian_normal_lpdf",
            ref_clipped_gaussian_normal,
            [(0.5, 1.2, -2.0, 3.0, 1.1), (2.0, 0.3, -2.0, 3.0, 5.0), (-1.0, 4.0, -2.0, 3.0, 0.2)],
            [1, 1, 0, 0, 1],
        ),
        (
            "dp_clipped_laplace_exponential_lpdf",
            ref_clipped_laplace_exponential,
            [(0.8, 0.0, 3.0, 1.5), (3.0, 0.0, 3.0, 0.3), (0.1, 0.0, 3.0, 6.0)],
            [1, 0, 0, 1],
        ),
    ],
)
def test_clipped_reports_match_quadrature(program, name, ref, cases, mask):
    got = evaluate(program, [(name, list(c), ()) for c in cases], zr=Z_CLIP)
    np.testing.assert_allclose(got, [ref(Z_CLIP, *c) for c in cases], rtol=1e-8)
    assert_gradient(program, name, lambda *a: ref(Z_CLIP, *a), list(cases[0]), mask, zr=Z_CLIP)


# ----------------------------------------------------------------------------- domain
# The domain tests evaluate the model block with no free parameter (an all-false mask: P = 0).
# CmdStan's log_prob method refuses such a program ("... has no parameters, nothing to
# estimate."); StanModel.log_density evaluates it on either backend (the cmdstanpy backend through
# an evaluation copy with one unused parameter), so these tests see the functions' own messages.
def test_log_density_with_no_free_parameters_is_the_functions_value(program):
    """With no free parameter, ``log_density`` gives the function's value (the independent
    references: quadrature, a direct sum) and an empty gradient."""
    at = [3.0, 2.5, 1.0, 0.7]
    lp, grad = gradient(program, "dp_laplace_clt_lpdf", at, [0, 0, 0, 0])
    assert lp == pytest.approx(ref_laplace_clt(*at), rel=1e-8, abs=1e-10)
    assert grad.shape == (0,)
    lp, grad = gradient(program, "dp_discrete_laplace_lpmf", [2.5], [0], iat=[5, 2])
    assert lp == pytest.approx(ref_discrete_laplace(3, 2.5), rel=1e-9)
    assert grad.shape == (0,)


@pytest.mark.parametrize(
    "name, at, iat, message",
    [
        ("dp_laplace_clt_lpdf", [1.0, 0.0, 1.0, 0.0], [], "scale must be finite and >"),
        ("dp_gaussian_clt_lpdf", [1.0, 0.0, -1.0, 1.0], [], "sigma must be >="),
        ("dp_discrete_laplace_grid_lpdf", [1.3, 0.0, 1.0, 0.5], [], "multiple of grid"),
        ("dp_poisson_discrete_laplace_lpdf", [2.0, 1.0, 1.0, 3.0], [10], "grid must be"),
        ("dp_poisson_discrete_gaussian_lpdf", [2.1, 1.0, 1.0, 1.0], [10], "on the grid"),
        ("dp_clipped_laplace_exponential_lpdf", [1.0, -1.0, 3.0, 1.0], [], "the clipping bounds must be ("),
        ("dp_clipped_laplace_normal_lpdf", [0.0, 1.0, 3.0, 3.0, 1.0], [], "lo < hi"),
        ("dp_clipped_gaussian_normal_lpdf", [0.0, 0.0, -1.0, 1.0, 1.0], [], "sigma must be >"),
        ("dp_poisson_laplace_lpdf", [2.0, 0.0, 1.0], [10], "lambda must be finite and >"),
        ("dp_poisson_gaussian_lpdf", [2.0, 1.0, 1.0], [-1], "max_count must be >="),
        ("dp_binomial_laplace_lpdf", [2.0, 1.0, 1.0], [10], "theta must be in ("),
        ("dp_binomial_discrete_gaussian_lpdf", [2.0, 0.5, 1.0, 1.0], [-2], "n must be >="),
        ("dp_binomial_laplace_weights", [2.0, 0.0], [10, 0], "scale must be finite and >"),
        ("dp_binomial_laplace_weights", [2.0, 1.0], [-1, 0], "n must be >="),
        ("dp_binomial_from_weights", [1.0], [0], "theta must be in ("),
        ("dp_binomial_from_weights", [0.5], [3], "log_w must have n + "),  # (numbers are redacted in errors)
        ("dp_discrete_laplace_censored_lpmf", [1.0], [-1, 2], "(the release is clamped at"),
        ("dp_discrete_gaussian_censored_lpmf", [1.0], [-1, 2], "(the release is clamped at"),
        ("dp_discrete_gaussian_censored_lpmf", [0.0], [0, 2], "scale must be finite and >"),
    ],
)
def test_arguments_outside_the_domain_are_rejected(program, name, at, iat, message):
    with pytest.raises(Exception, match=re.escape(message)):
        gradient(program, name, at, [0] * len(at), iat=iat, zr=[0.5])


def test_local_reports_outside_the_domain_are_rejected(program):
    with pytest.raises(Exception, match="every report must be"):
        gradient(program, "dp_randomized_response_lpmf", [0.5, 1.0], [1, 1], zi=[0, 1, 2])
    with pytest.raises(Exception, match=re.escape("p must be in [")):
        gradient(program, "dp_randomized_response_lpmf", [1.5, 1.0], [0, 0], zi=[0, 1])
    with pytest.raises(Exception, match="theta must be a simplex"):
        gradient(program, "dp_oue_lpmf", [0.5, 0.6, 1.0], [0, 0, 0], Zo=[[0, 1], [1, 1]])
    with pytest.raises(Exception, match="every bit must be"):
        gradient(program, "dp_oue_lpmf", [0.5, 0.5, 1.0], [0, 0, 0], Zo=[[0, 2], [1, 1]])


# ----------------------------------------------------------------------------- the catalogue
def _definitions():
    """name -> (file, the definition's text up to its body) of every function in stan/functions/."""
    out = {}
    for path in sorted(sf.functions_dir().glob("*.stanfunctions")):
        text = sf.strip_comments_and_strings(path.read_text(encoding="utf-8"))
        for name in sf.defined_functions(path):
            m = re.search(rf"^[ \t]*([^\n;{{}}]*?\b{re.escape(name)}\s*\([^{{;]*\))\s*\{{", text, re.MULTILINE)
            assert m, (path.name, name)
            out.setdefault(name, (path.name, " ".join(m.group(1).split())))
    return out


def test_catalogue_and_helpers_are_every_function_of_the_library():
    defs = _definitions()
    listed = set(sf.CATALOGUE) | set(sf.HELPERS)
    assert not set(sf.CATALOGUE) & set(sf.HELPERS)
    assert set(defs) == listed, (sorted(set(defs) - listed), sorted(listed - set(defs)))
    assert {n for n in defs if n.startswith("dp_")} == {n for n in sf.CATALOGUE if n.startswith("dp_")}
    assert {n for n in sf.CATALOGUE if n.startswith("dp_")} == set(FN)  # every one is tested here


def test_catalogue_signatures_and_files_are_the_definitions():
    defs = _definitions()
    for name, entry in sf.CATALOGUE.items():
        file, definition = defs[name]
        assert entry.file == file, name
        assert entry.name == name
        assert " ".join(entry.signature.replace(" |", ",").split()) == definition, (entry.signature, definition)
        for req in entry.requires:
            assert (sf.functions_dir() / req).is_file(), (name, req)


def test_catalogue_mechanisms_are_the_records_mechanisms():
    from pystanprivacy.models.kulkarni2022_regression import _RELEASE_MECHANISMS

    known = {cls.name for cls in (Laplace, Gaussian, AnalyticGaussian, RandomizedResponse, OptimalUnaryEncoding)}
    known |= set(_RELEASE_MECHANISMS.values())
    for entry in sf.CATALOGUE.values():
        assert entry.mechanisms and entry.mechanisms <= known, (entry.name, entry.mechanisms)
        assert entry.density and entry.domain and entry.doc


def test_every_dp_function_has_its_reference_comment():
    text = (sf.functions_dir() / "dp_noise.stanfunctions").read_text(encoding="utf-8")
    for name in FN:
        m = re.search(rf"/\*\*((?:(?!\*/).)*)\*/\s*(?:real|vector) {name}\(", text, re.DOTALL)
        assert m, name
        assert "Domain" in m.group(1) or "domain" in m.group(1), name


def test_functions_called_ignores_comments_strings_and_definitions():
    code = '''
    functions {
      real my_lpdf(real y, real m) { return dp_gaussian_clt_lpdf(y | m, 1, 1); }
      real dp_oue_lpmf(array[,] int Z, vector theta, real epsilon);  // dp_oue_lpmf(Z | t, e)
    }
    model {
      /* dp_poisson_laplace_lpdf(y | 1, 1, 10); multi-line
         ldp_oue_loglik(Z, Zc, w, theta, eps) */
      print("dp_binomial_laplace_lpdf(y | n, p, s) // not a call");
      y ~ dp_laplace_clt(0, 1, scale);   // sampling statement
      target += dp_randomized_response_lupmf(z | p, epsilon);
      reject("x \\" dp_oue_lpmf(");
      y2 ~ my(0);
    }'''
    assert sf.functions_called(code) == {"dp_gaussian_clt_lpdf", "dp_laplace_clt_lpdf", "dp_randomized_response_lpmf"}


def test_functions_called_on_a_flattened_program_sees_only_its_own_calls():
    code = flatten(str(PROGRAM))  # holds every library definition, and their bodies' calls
    assert "normal_laplace_lpdf(" in code and "ldp_gauss_laplace_loglik(" in code
    assert sf.functions_called(code) == set(FN)
    assert sf.functions_called(flatten("kulkarni2022/gaussian")) == {"ldp_gauss_laplace_loglik"}
    assert sf.functions_called(flatten("bernstein2018/exponential_gamma")) == {
        "normal_laplace_lpdf",
        "rs_clt_truncated_exponential",
    }


def test_functions_called_refuses_a_non_string():
    with pytest.raises(TypeError, match="program_code must be a str"):
        sf.functions_called(b"model {}")


def test_the_docs_page_describes_every_dp_function():
    page = (Path(__file__).parents[2] / "docs" / "guide" / "stan-functions.md").read_text(encoding="utf-8")
    for name, entry in sf.CATALOGUE.items():
        if name.startswith("dp_"):
            assert f"\n### {name}\n" in page, name
            assert f"`{entry.signature}`" in page, entry.signature


def test_imported_opendp_records_select_functions_that_are_their_law(program):
    """pystanprivacy.interop.opendp.likelihood(record) names the library function of an
    imported OpenDP record; that function, called as the record says (dp_scale; dp_grid and the
    input rounded to it), equals the record's law in Python (``logp``, which
    tests/interop/test_opendp.py tests against OpenDP's own draws)."""
    pytest.importorskip("opendp")
    import opendp.prelude as dp

    from pystanprivacy.interop import opendp as io

    dp.enable_features("contrib")
    rows, want = [], []
    for make, metric, extra in (
        (dp.m.make_laplace, dp.l1_distance, {}),
        (dp.m.make_gaussian, dp.l2_distance, {"delta": 1e-6}),
    ):
        for T, k, x in ((int, None, 4), (float, -2, 0.3)):
            atom = dp.atom_domain(T=T) if T is int else dp.atom_domain(T=T, nan=False)
            meas = make(dp.vector_domain(atom, size=3), metric(T=T), scale=1.7, k=k)
            rec = io.import_measurement(meas, meas([x] * 3), d_in=T(1), neighbouring="add-remove", **extra).record
            lik = io.likelihood(rec)
            assert lik.stan in sf.CATALOGUE and rec.mechanism in sf.CATALOGUE[lik.stan].mechanisms
            for step in (-5, 0, 2, 9):
                if T is int:
                    y = x + step
                    rows.append((lik.stan, [rec.scale], [y, x]))
                else:
                    grid = rec.details["grid"]
                    mu = grid * round(x / grid)
                    y = mu + step * grid
                    rows.append((lik.stan, [y, mu, rec.scale, grid], ()))
                want.append(float(lik.logp(y, x)))
    np.testing.assert_allclose(evaluate(program, rows), want, rtol=1e-9, atol=1e-12)
