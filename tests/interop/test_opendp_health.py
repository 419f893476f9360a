"""The OpenDP gallery example's simulator (examples/opendp_health/opendp_health_sim.py): its
releases are made by OpenDP and imported with records that say so, and the public bound of the
true counts omits the prior mass it states. The example itself (fits and SBC) runs in CI as a
documentation example (docs/examples/gallery_opendp_health.py, scripts/run_doc_examples.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

pytest.importorskip("opendp")
pytest.importorskip("polars")

HERE = Path(__file__).resolve().parents[2] / "examples" / "opendp_health"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sim():
    return _load("opendp_health_sim")


def _tail(exposure, max_count, mu, tau_sd):
    """P(n > max_count) under the prior, n ~ Poisson(exposure e^x), x | tau ~ N(mu_0, sd_mu^2 +
    tau^2), tau ~ N+(0, tau_sd): nested adaptive quadrature (relative error about 1e-7)."""
    centre, sd_mu = mu

    def inner(tau):
        s = float(np.hypot(sd_mu, tau))
        f = lambda x: stats.norm.pdf(x, centre, s) * stats.poisson.sf(max_count, exposure * np.exp(x))
        return integrate.quad(f, centre - 12 * s, centre + 12 * s, epsabs=0, epsrel=1e-8, limit=100)[0]

    g = lambda tau: 2 * stats.norm.pdf(tau, 0, tau_sd) * inner(tau)
    return integrate.quad(g, 0, 12 * tau_sd, epsabs=0, epsrel=1e-7, limit=100)[0]


def test_the_count_bound_omits_at_most_the_stated_prior_mass(sim):
    # the Poisson tail grows with the rate: the largest exposure has the largest omitted mass
    assert max(sim.EXPOSURE) == sim.EXPOSURE[-1]
    tails = [_tail(sim.EXPOSURE[-1], sim.MAX_COUNT, sim.PRIOR_MU, sim.PRIOR_TAU_SD)]
    assert 0.9 * sim.MAX_COUNT_TAIL < tails[-1] <= sim.MAX_COUNT_TAIL  # true, and not loose
    # a Monte-Carlo cross-check of the integral (its heavy tail: 30 % relative agreement)
    rng = np.random.default_rng(20261206)
    n = 2_000_000
    lam = np.exp(rng.normal(*sim.PRIOR_MU, n) + np.abs(rng.normal(0.0, sim.PRIOR_TAU_SD, n)) * rng.normal(size=n))
    assert float(stats.poisson.sf(sim.MAX_COUNT, sim.EXPOSURE[-1] * lam).mean()) == pytest.approx(tails[-1], rel=0.3)


def test_replicates_are_released_by_opendp_with_their_records(sim):
    rep = sim.simulate(np.random.default_rng(1))
    assert set(rep["parameters"]) == {"mu", "tau", "lambda", "theta"}
    imported = rep["private"]
    assert imported.keys["region"] == sim.REGIONS
    counts = sim.release(imported, epsilon=sim.EPSILON)
    assert counts is imported["len"] and counts.values.dtype.kind == "i" and (counts.values >= 0).all()
    for rec in imported.records:
        assert rec.details["source"] == "opendp" and rec.details["simulated"] is True
        assert rec.details["secure"] is False and rec.mechanism == "laplace" and rec.scale == 4.0
    assert counts.record.details["clamped"]["lower"] == 0
    assert rep["data"]["s_obs"] == imported["hosp"].values.tolist() and rep["data"]["s_scale"] == 4.0
    naive = _load("opendp_health_naive_sim").simulate(np.random.default_rng(1))
    assert naive["data"]["noise_aware"] == 0 and rep["data"]["noise_aware"] == 1
    with pytest.raises(ValueError, match="made at epsilon=0.5"):
        sim.release(imported, epsilon=1.0)
