"""The simulator of opendp_health.stan for ``pystanprivacy sbc``: releases made by OpenDP.

``simulate(rng)`` draws one replicate from the program's prior (the parameters, by the
program's names), the private cases (one row per case: region, hospitalised 0/1), and
releases them **with OpenDP itself**: the agency's query (:func:`query`), case counts and
hospitalisations by region on public keys under ε = 0.5, imported with
:func:`pystanprivacy.interop.opendp.import_polars_query` (``simulated=True``). OpenDP releases
both columns in one query, so ``simulate`` makes the release: it returns the imported counts'
release as ``private`` (``release()`` hands it on) and the hospitalisations' values and scale
as the program's data (``s_obs``, ``s_scale``, read from their record). OpenDP cannot be
seeded: the parameters and the cases come from the replicate's generator, the noise from
OpenDP's own sampler, so a rerun's ranks differ by the noise alone.
``opendp_health_naive_sim.py`` is the same simulator for the naive fit.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

#: the regions (public keys) and their exposures (thousand person-years, public)
REGIONS = ("east", "north", "south", "west")
EXPOSURE = np.array([0.25, 0.5, 0.75, 1.0])
#: the public bound of every true count: under the prior P(n_g > 40) is at most MAX_COUNT_TAIL
#: (2.57e-6 at the largest exposure, by numerical integration over the prior:
#: tests/interop/test_opendp_health.py)
MAX_COUNT = 40
MAX_COUNT_TAIL = 2.6e-6
#: the agency's budget for the query (pure ε-DP, split evenly by OpenDP over the two columns)
EPSILON = 0.5
PRIOR_MU = (np.log(4.0), 0.2)
PRIOR_TAU_SD = 0.2
PRIOR_THETA = (2.0, 8.0)


@functools.lru_cache(maxsize=1)
def query():
    """The agency's OpenDP query and its measurement (resolved once: the noise scale does not
    depend on the data). Counts (``dp.len()``) and hospitalisations (``dp.sum((0, 1))``) by
    region, the regions a public key set (``with_keys``); one case is one row (add/remove)."""
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    schema = pl.LazyFrame(schema={"region": pl.String, "hosp": pl.Int64})
    context = dp.Context.compositor(
        data=schema,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=EPSILON),
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=["region"], max_length=100_000, max_groups=len(REGIONS))],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # dp.len(): signed=False is the default
        q = (
            context.query()
            .group_by("region")
            .agg(dp.len(), pl.col("hosp").dp.sum((0, 1)))
            .with_keys(pl.LazyFrame({"region": list(REGIONS)}))
        )
    return q, q.resolve()


def cases_frame(counts, hospitalised):
    """The private cases as a Polars frame: one row per case (region, hosp)."""
    import polars as pl

    regions = np.repeat(np.array(REGIONS), counts)
    return pl.LazyFrame({"region": regions.tolist(), "hosp": np.asarray(hospitalised, dtype=np.int64).tolist()})


def opendp_release(frame, *, simulated):
    """The query's release of ``frame`` by OpenDP, imported (rows in the keys' order)."""
    from pystanprivacy.interop.opendp import import_polars_query

    q, meas = query()
    released = meas(frame).collect().sort("region")
    return import_polars_query(q, released, measurement=meas, simulated=simulated)


def public_data(*, noise_aware: int = 1) -> dict:
    """The program's public data besides the two releases."""
    return {"exposure": EXPOSURE.tolist(), "max_count": MAX_COUNT, "noise_aware": int(noise_aware)}


def draw(rng: np.random.Generator) -> dict:
    """(parameters, counts, hospitalisation indicators) from the prior."""
    mu = rng.normal(*PRIOR_MU)
    tau = abs(rng.normal(0.0, PRIOR_TAU_SD))
    lam = np.exp(mu + tau * rng.normal(size=EXPOSURE.size))
    theta = rng.beta(*PRIOR_THETA)
    counts = rng.poisson(EXPOSURE * lam)
    hosp = (rng.random(int(counts.sum())) < theta).astype(np.int64)
    return {"parameters": {"mu": mu, "tau": tau, "lambda": lam, "theta": theta}, "counts": counts, "hosp": hosp}


def simulate(rng: np.random.Generator, *, noise_aware: int = 1) -> dict:
    """One replicate: the prior draw, and the OpenDP release of its cases (see the module)."""
    truth = draw(rng)
    imported = opendp_release(cases_frame(truth["counts"], truth["hosp"]), simulated=True)
    hosp = imported["hosp"]
    data = {**public_data(noise_aware=noise_aware), "s_obs": hosp.values.tolist(), "s_scale": hosp.record.scale}
    return {"parameters": truth["parameters"], "private": imported, "data": data}


def release(private, *, epsilon, seed=None, accountant=None):
    """The counts' release of the replicate (made by OpenDP in :func:`simulate`)."""
    if epsilon != EPSILON:
        raise ValueError(f"epsilon={epsilon!r}: the agency's OpenDP query is made at epsilon={EPSILON}")
    return private["len"]
