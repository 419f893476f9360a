"""stan/kulkarni2022/gaussian.stan (the reports inside (a, b) through ``ldp_gauss_mid_linear``,
report-only factors formed once in transformed data) against the program whose likelihood it
rewrites, tests/stan/kulkarni2022_gaussian_former.stan (every report through
``ldp_gauss_laplace_mid`` of stan/functions/ldp.stanfunctions, whose values
tests/models/test_kulkarni2022_functions.py checks against quadrature):

* the same log density up to a constant at points of both paths of the rewritten sum, and a
  gradient equal to finite differences (deterministic);
* the same posterior of (mu, sigma) from fits with independent seeds (z-tests on MCMC means and
  sds, false-rejection rate stated in the test).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_ndtr
from test_kulkarni2022_ss_reparam import _mean_sd_mcse

from pystanprivacy.sampling.stan import StanModel

FORMER = Path(__file__).parents[1] / "stan" / "kulkarni2022_gaussian_former.stan"
A, B = -5.0, 5.0


@pytest.fixture(scope="module")
def programs():
    return StanModel.get("kulkarni2022/gaussian"), StanModel.get(str(FORMER))


def _data(mu: float, sigma: float, n: int, epsilon: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    z = np.clip(rng.normal(mu, sigma, n), A, B) + rng.laplace(0.0, (B - A) / epsilon, n)
    return {
        "R": 1,
        "N": [n],
        "z": z,
        "a": A,
        "b": B,
        "beta": (B - A) / epsilon,
        "mu_prior_mean": 0.0,
        "mu_prior_sd": 2.0,
        "sigma_prior_shape": 2.0,
        "sigma_prior_rate": 1.0,
    }


def _linear_path(mu: float, sigma: float, beta: float) -> bool:
    """Whether ldp_gauss_mid_linear sums on the linear scale at (mu, sigma) (its condition,
    recomputed here with scipy's log_ndtr)."""
    h = 0.5 * (sigma / beta) ** 2
    k1 = mu / beta + h - log_ndtr((A - mu) / sigma) - A / beta
    k2 = -mu / beta + h - log_ndtr((mu - B) / sigma) + B / beta
    g = (B - A) / (2 * beta)
    return g < 300 and max(k1, k2) + g < 700


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0, 10.0, 100.0])
def test_same_log_density_as_the_former_program_and_an_exact_gradient(programs, epsilon):
    """25 points (mu from -6 to 8, sigma from 0.05 to 60) on 3000 reports: log densities equal to
    the former program's up to one constant (spread < 1e-8 relative to |lp|), and gradients (in
    mu, log sigma) equal to central finite differences of the log density at the points of the
    linear-scale sum (the former program's gradient is not a reference: its log Phi's derivative
    is off by up to 2e-3, tests/models/test_log_phi_gradients.py). At every epsilon <= 10 most points take the
    linear-scale sum (asserted, so the comparison is not of the log-scale fallback alone); at
    epsilon = 100 some take each path."""
    current, former = programs
    data = _data(1.3, 2.1, 3000, epsilon, seed=int(epsilon * 10))
    grid = [(m, s) for m in (-6.0, -1.0, 0.5, 4.0, 8.0) for s in (0.05, 0.5, 2.0, 10.0, 60.0)]
    linear = [_linear_path(m, s, data["beta"]) for m, s in grid]
    if epsilon <= 10:
        assert sum(linear) >= 15, linear
    else:
        assert 0 < sum(linear) < len(grid), linear
    step = 1e-4  # lp reaches 1e5 at epsilon = 100: a smaller step is rounding-bound
    points = [
        {"mu": [m + dm], "sigma": [float(np.exp(np.log(s) + ds))]}
        for m, s in grid
        for dm, ds in ((0, 0), (step, 0), (-step, 0), (0, step), (0, -step))
    ]
    lp, grad = current.log_density(data, points)
    lp_former, _ = former.log_density(data, points)
    assert np.all(np.isfinite(lp)) and np.all(np.isfinite(grad))
    diff = lp - lp_former
    assert np.ptp(diff) <= 1e-8 * max(1.0, float(np.abs(lp_former).max())), diff
    for j in np.flatnonzero(linear):  # the log-scale fallback is the former code, checked in test_log_phi_gradients
        k = 5 * j
        fd = np.array([(lp[k + 1] - lp[k + 2]) / (2 * step), (lp[k + 3] - lp[k + 4]) / (2 * step)])
        assert np.allclose(grad[k], fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max()), (grid[j], grad[k], fd)


def test_same_posterior_as_the_former_program(programs):
    """Both programs on 3000 reports at epsilon = 1 (mu = 1.3, sigma = 2.1: a fifth of the users
    clipped), 4 chains x (500 + 500) as in the calibration study, independent seeds: posterior
    mean and sd of mu and sigma -> 4 comparisons, |difference| / sqrt(mcse_1^2 + mcse_2^2)
    (ESS-based MCSE) below the Bonferroni two-sided normal bound for an overall false-rejection
    rate of 1e-3 (z ~ 3.5). Power: the same comparison rejects the former program fitted with a
    Laplace scale 10 % too small."""
    current, former = programs
    data = _data(1.3, 2.1, 3000, 1.0, seed=4)
    sampler = dict(chains=4, warmup=500, draws=500)
    new = current.sample(data, seed=41, **sampler)
    old = former.sample(data, seed=42, **sampler)
    wrong = former.sample({**data, "beta": 0.9 * data["beta"]}, seed=43, **sampler)
    z_crit = stats.norm.isf(1e-3 / 2 / 4)

    def z_max(a, b):
        out = []
        for name in ("mu", "sigma"):
            m1, s1, em1, es1 = _mean_sd_mcse(a.draws(name, combine_chains=False)[..., 0])
            m2, s2, em2, es2 = _mean_sd_mcse(b.draws(name, combine_chains=False)[..., 0])
            out += [abs(m1 - m2) / np.hypot(em1, em2), abs(s1 - s2) / np.hypot(es1, es2)]
        return max(out)

    for post in (new, old):
        assert post.num_divergences == 0
        assert max(float(np.max(v)) for v in post.rhat().values()) < 1.02
    assert z_max(new, old) < z_crit
    assert z_max(wrong, old) > z_crit
