"""Mode masses of a Stan posterior with two modes of known, unequal mass
(``tests/stan/mode_mass_cauchy.stan``): NUTS chains that stay in their modes, the log density
from :meth:`StanModel.log_density` (unconstrained scale, Jacobian included), the exact masses by
quadrature. Chain-count pooling and stacking both get the masses wrong here; the bridge estimate
does not.

Calibration (measured with sampler seeds 11-30, 4 x (500 + 400), every second draw; in 18 of
them every chain stayed in the mode it started in): the estimated weight of the minor mode had
mean 0.2103 and sd 0.0019 around the exact 0.2108, the largest error 0.0033. The tolerance 0.02
is 10 sds: a false-rejection rate below 1e-20 under a normal approximation (the test's seed 11
is fixed, so the outcome is deterministic). Pooling misses by 0.54, stacking by 0.29 (its minor-mode weight
was 0.4999-0.5001 in every seed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from pystanprivacy.sampling.modes import POSTERIOR_MODE_MASS, mode_masses
from pystanprivacy.sampling.stacking import (
    STACKED_PREDICTIVE,
    chain_loo_lpd,
    chain_modes,
    stacked_predictive,
    stacking_weights,
)
from pystanprivacy.sampling.stan import StanModel

PROGRAM = Path(__file__).parents[1] / "stan" / "mode_mass_cauchy.stan"
PRIOR = (1.5, 3.0)
TOL = 0.02


def _data() -> dict:
    rng = np.random.default_rng(7)
    half = -4.0 + rng.normal(0.0, 0.5, size=20)
    y = np.concatenate([half, -half])
    return {"N": y.size, "y": y, "prior_mu": PRIOR[0], "prior_sd": PRIOR[1]}


def _quadrature(data: dict):
    """The exact posterior on a fine grid (trapezoid rule): grid, normalised density."""
    grid = np.linspace(-15.0, 15.0, 60_001)
    log_post = stats.norm.logpdf(grid, *PRIOR) + stats.cauchy.logpdf(data["y"][:, None] - grid[None, :]).sum(axis=0)
    post = np.exp(log_post - log_post.max())
    return grid, post / np.trapezoid(post, grid)


@pytest.fixture(scope="module")
def fit():
    model = StanModel.get(str(PROGRAM))
    data = _data()
    # three chains start in the mode at -4 (the minor one), one at +4; none crosses the valley
    inits = [{"theta": -4.0}] * 3 + [{"theta": 4.0}]
    post = model.sample(data, chains=4, warmup=500, draws=400, seed=11, init=inits)
    return model, data, post


def test_mode_masses_recover_the_exact_masses_that_pooling_and_stacking_miss(fit):
    model, data, post = fit
    theta = post.draws("theta", combine_chains=False)  # (4, 400)
    assert np.all(theta[:3] < 0) and np.all(theta[3] > 0)  # the chains never crossed
    grid, dens = _quadrature(data)
    exact_minor = float(np.trapezoid(np.where(grid < 0, dens, 0.0), grid))
    assert exact_minor == pytest.approx(0.2108, abs=5e-4)

    modes = chain_modes(theta.mean(axis=1), tol=1.0)  # the chains' locations: two groups
    assert modes.n_modes == 2
    # every second draw (halves the log-density evaluations, ~15 ms each on pystan); the
    # unconstrained scale of theta is theta itself
    groups = [theta[modes.members(m), ::2, None] for m in range(2)]
    masses = mode_masses(groups, lambda u: model.log_density(data, unconstrained=u)[0], seed=0)
    minor = 0 if np.all(theta[modes.members(0)] < 0) else 1
    assert masses.estimate == POSTERIOR_MODE_MASS
    assert masses.weights[minor] == pytest.approx(exact_minor, abs=TOL)

    # pooling the draws (chain counts) gives the minor mode 3/4
    pooled_minor = float(np.mean(theta < 0))
    assert abs(pooled_minor - exact_minor) > 10 * TOL
    # stacking the chains (PSIS-LOO of the 40 points) gives it about 1/2: the modes predict the
    # mirrored clusters equally well, whatever their posterior mass
    w = stacking_weights(chain_loo_lpd(post.draws("log_lik", combine_chains=False)).lpd)
    assert abs(w[:3].sum() - exact_minor) > 5 * TOL

    # the posterior predictive density of new points: the mode-mass weighted chains match the
    # exact (quadrature) one; the stacked predictive does not
    new = np.array([-4.0, 0.0, 4.0])
    exact = np.log(np.trapezoid(stats.cauchy.pdf(new[:, None] - grid[None, :]) * dens[None, :], grid, axis=1))
    per_chain = logsumexp(stats.cauchy.logpdf(new[None, None, :] - theta[..., None]), axis=1) - np.log(400)
    weighted = stacked_predictive(per_chain, masses.chain_weights(modes.labels))
    stacked = stacked_predictive(per_chain, w)
    assert np.max(np.abs(weighted - exact)) < 0.05
    assert np.max(np.abs(stacked - exact)) > 0.3
    assert STACKED_PREDICTIVE == "stacked predictive"
