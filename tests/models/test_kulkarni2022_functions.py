"""The local-DP likelihoods of Kulkarni et al. (2022) (stan/functions/ldp.stanfunctions)
against numerical integration of the latent input (mpmath quadrature at 30 digits, so that
far-tail values like e^-300 are resolved) and brute-force enumeration (OUE), through the
test-only program tests/stan/kulkarni2022_functions.stan run with fixed_param.

Cases include extreme epsilon (0.01 and 100-200: Laplace scale 1000 and 0.05-0.1 on a
width-10 interval, the deep-tail branch of ldp_log_Phi), reports far outside [a, b] (up to
300 Laplace scales away), means far outside the clipping interval (almost all mass in one
point mass: the cancellation-prone branches of ldp_log_Phi_diff) and the k = 0 branch of
the exponential likelihood (theta = epsilon / b exactly)."""

from __future__ import annotations

import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
from scipy.special import logsumexp

from pystanprivacy.privacy.mechanisms import OptimalUnaryEncoding
from pystanprivacy.sampling.stan import StanModel

PROGRAM = Path(__file__).parents[1] / "stan" / "kulkarni2022_functions.stan"

# (z, mu, sigma, a, b, epsilon)
GAUSS = [
    (0.3, 0.0, 1.0, -5.0, 5.0, 1.0),
    (-7.0, 1.0, 2.0, -5.0, 5.0, 0.5),
    (12.0, -1.0, 3.0, -5.0, 5.0, 2.0),
    (3000.0, 1.0, 2.0, -5.0, 5.0, 0.01),  # epsilon 0.01, z 300 scales above b... (beta = 1000)
    (-3000.0, 1.0, 2.0, -5.0, 5.0, 1.0),  # z 300 Laplace scales below a
    (2.0, 1.0, 3.0, -5.0, 5.0, 100.0),  # beta = 0.1: (z - mu - c)/sigma ~ -30 (loop branch)
    (-1.0, 0.5, 5.0, -5.0, 5.0, 200.0),  # beta = 0.05: deep tails everywhere
    (7.0, 0.5, 5.0, -5.0, 5.0, 200.0),
    (0.0, -20.0, 1.0, -5.0, 5.0, 1.0),  # mean far below a: Phi differences of upper tails
    (-4.0, 25.0, 1.5, -5.0, 5.0, 3.0),  # mean far above b
    (4.999, 0.0, 0.01, -5.0, 5.0, 1.0),  # tiny sigma
    (-5.0, 0.0, 1.0, -5.0, 5.0, 1.0),  # z exactly at a
    (5.0, 0.0, 1.0, -5.0, 5.0, 1.0),  # z exactly at b
    (1.0, 2.0, 0.7, 0.0, 3.0, 0.001),  # epsilon 0.001
    (3.0, 2.0, 4.0, -5.0, 5.0, 150.0),  # sigma^2/(2 beta^2) = 1800: log-scale path
    (-2.0, -3.0, 1.0, -5.0, 5.0, 30.0),
]
# (z, theta, b, epsilon)
EXPO = [
    (1.0, 1.0, 5.0, 1.0),
    (-2.0, 0.5, 5.0, 1.0),
    (9.0, 2.0, 5.0, 0.5),
    (2.5, 0.2, 5.0, 1.0),  # k = 1/beta - theta = 0 exactly
    (2.5, 3.0, 5.0, 1.0),  # k < 0
    (4.0, 0.05, 5.0, 0.1),  # heavy clipping at b, large noise
    (-1500.0, 1.0, 5.0, 1.0),  # far below 0
    (3000.0, 1.0, 5.0, 0.01),  # far above b, epsilon 0.01
    (0.2, 1.0, 5.0, 100.0),  # beta = 0.05: large k
    (4.9, 30.0, 5.0, 200.0),  # large theta and epsilon
    (0.004, 150.0, 5.0, 1.0),  # theta b = 750: log-scale path
    (2.0, 1.0, 5.0, 700.0),  # epsilon 700: log-scale path
]
OUE_EPS = [0.001, 0.5, 2.0, 50.0, 500.0]


def _gauss_ref(z, mu, sigma, a, b, eps):
    mpmath.mp.dps = 30
    z, mu, sigma, a, b, eps = (mpmath.mpf(v) for v in (z, mu, sigma, a, b, eps))
    beta = (b - a) / eps
    lap = lambda x: mpmath.exp(-abs(z - x) / beta) / (2 * beta)
    dens = lambda x: mpmath.npdf(x, mu, sigma)
    pts = sorted(
        {float(a), float(b), float(min(max(z, a), b))}
        | {float(min(max(mu + k * sigma, a), b)) for k in (-8, -3, -1, 0, 1, 3, 8)}
        | {float(min(max(z + k * beta, a), b)) for k in (-30, -10, -3, -1, 1, 3, 10, 30)}
    )
    integral = mpmath.quad(lambda x: lap(x) * dens(x), pts, maxdegree=10)
    total = mpmath.ncdf((a - mu) / sigma) * lap(a) + mpmath.ncdf((mu - b) / sigma) * lap(b) + integral
    return float(mpmath.log(total))


def _expo_ref(z, theta, b, eps):
    mpmath.mp.dps = 30
    z, theta, b, eps = (mpmath.mpf(v) for v in (z, theta, b, eps))
    beta = b / eps
    lap = lambda x: mpmath.exp(-abs(z - x) / beta) / (2 * beta)
    pts = sorted(
        {float(min(max(z, 0), b))}
        | {float(min(k / theta, b)) for k in (1, 5, 20)}
        | {float(min(max(z + k * beta, 0), b)) for k in (-30, -10, -3, -1, 1, 3, 10, 30)}
    )
    integral = mpmath.quad(lambda x: lap(x) * theta * mpmath.exp(-theta * x), pts, maxdegree=10)
    return float(mpmath.log(integral + mpmath.exp(-theta * b) * lap(b)))


@pytest.fixture(scope="module")
def case_data():
    rng = np.random.default_rng(3)
    d = 5
    reports, thetas, eps = [], [], []
    for e in OUE_EPS:
        for _ in range(4):
            z = rng.integers(0, 2, size=d)
            if z.sum() in (0, d):
                z[0], z[1] = 1, 0
            reports.append(z)
            theta = rng.dirichlet(np.full(d, 0.5))
            theta = np.maximum(theta, 1e-12)
            thetas.append(theta / theta.sum())
            eps.append(e)
    v_z = np.concatenate([rng.laplace(0.5, 3.0, size=60), [-40.0, 60.0, -5.0, 5.0, 0.0]])
    data = {
        "K_g": len(GAUSS),
        "g_args": [[z, mu, s, a, b, (b - a) / e] for z, mu, s, a, b, e in GAUSS],
        "K_e": len(EXPO),
        "e_args": [[z, t, b, b / e] for z, t, b, e in EXPO],
        "K_o": len(reports),
        "d": d,
        "o_z": np.array(reports),
        "o_theta": np.array(thetas),
        "o_eps": eps,
        "N_v": len(v_z),
        "v_z": v_z,
        "v_gauss": [0.3, 1.7, -5.0, 5.0],
        "v_exp": [0.6, 5.0],
        "v_beta": 2.5,
    }
    return data


@pytest.fixture(scope="module")
def values(case_data):
    fit = StanModel.get(str(PROGRAM)).fixed_param(case_data, draws=1, seed=1)
    return {name: fit.draws(name)[0] for name in ("g_ll", "e_ll", "o_ll", "v_gauss_ll", "v_exp_ll")}


@pytest.mark.parametrize("i", range(len(GAUSS)))
def test_gaussian_laplace_likelihood_matches_quadrature(values, i):
    got = values["g_ll"][i]
    assert np.isfinite(got)
    assert got == pytest.approx(_gauss_ref(*GAUSS[i]), rel=1e-8, abs=1e-8), GAUSS[i]


@pytest.mark.parametrize("i", range(len(EXPO)))
def test_exponential_laplace_likelihood_matches_quadrature(values, i):
    got = values["e_ll"][i]
    assert np.isfinite(got)
    assert got == pytest.approx(_expo_ref(*EXPO[i]), rel=1e-8, abs=1e-8), EXPO[i]


def test_oue_likelihood_matches_brute_force_enumeration(values, case_data):
    d = case_data["d"]
    for k in range(case_data["K_o"]):
        z, theta, eps = case_data["o_z"][k], case_data["o_theta"][k], case_data["o_eps"][k]
        mech = OptimalUnaryEncoding(epsilon=eps, d=d)
        # Pr[z | theta] = sum_x theta_x Pr[z | x]: enumerate the latent category
        brute = logsumexp(np.log(theta) + mech.log_prob(np.broadcast_to(z, (d, d)), np.arange(d)))
        # Eq. 33 constant: Pr[z | theta] = p^(d-1)/2 e^{-eps |z|} ((1 - z.theta) + e^eps z.theta)
        log_p = -np.logaddexp(0.0, -eps)
        const = (d - 1) * log_p - math.log(2.0) - eps * z.sum()
        assert values["o_ll"][k] + const == pytest.approx(brute, rel=1e-10, abs=1e-10), (k, eps)


def test_grouped_vectorised_likelihoods_equal_the_sum_of_single_reports(values, case_data):
    # the models' path (reports outside (a, b) summarised by count and sum, the middle
    # group vectorised) equals the report-by-report sum, which the tests above pin down
    assert values["v_gauss_ll"][0] == pytest.approx(values["v_gauss_ll"][1], rel=1e-11)
    assert values["v_exp_ll"][0] == pytest.approx(values["v_exp_ll"][1], rel=1e-11)
    mu, sigma, a, b = case_data["v_gauss"]
    eps = (b - a) / case_data["v_beta"]
    ref = sum(_gauss_ref(z, mu, sigma, a, b, eps) for z in case_data["v_z"][::8])
    stan_single = (
        StanModel.get(str(PROGRAM))
        .fixed_param(
            {
                **case_data,
                "K_g": len(case_data["v_z"][::8]),
                "g_args": [[z, mu, sigma, a, b, case_data["v_beta"]] for z in case_data["v_z"][::8]],
            },
            draws=1,
        )
        .draws("g_ll")[0]
        .sum()
    )
    assert stan_single == pytest.approx(ref, rel=1e-8)
