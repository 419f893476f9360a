"""benchmarks/bench_secure_noise.py at tiny sizes: every row is measured, and each library's
noise is on the released grid with the standard deviation of the recorded scale. No timing
is asserted."""

from __future__ import annotations

import math

import numpy as np
import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("bench_secure_noise")


def test_every_row_is_measured_and_its_noise_has_the_recorded_scale(bench):
    """4000 coordinates per row: the noise sd over the expected one is within 10 % of 1 (its
    standard error is about 2 %, so a wrong scale, a missing factor sqrt(2) or noise on the
    wrong grid fails), except the integer Laplace at t = 1 grid step, whose exact discrete sd
    is sqrt(2q)/(1 - q), q = e^-1, i.e. 0.9595 of the continuous sqrt(2) b."""
    rows = bench.measure(n=4000, repeat=1, opendp_n=4000, scalar_n=4000)
    keys = {(r["library"], r["mechanism"], r["input"]) for r in rows}
    assert keys == {
        (lib, mech, data)
        for lib in ("pystanprivacy", "opendp", "scalar (former)")
        for mech in ("laplace", "gaussian")
        for data in ("integer", "real")
    }
    q = math.exp(-1.0)
    for r in rows:
        assert r["n"] == 4000 and r["wall_s"] > 0 and r["coords_per_s_wall"] == pytest.approx(4000 / r["wall_s"])
        assert r["on_grid"], r
        expected = (
            math.sqrt(2 * q) / (1 - q) / math.sqrt(2) if (r["mechanism"], r["input"]) == ("laplace", "integer") else 1
        )
        assert abs(r["sd_ratio"] / expected - 1) < 0.1, r


def test_the_former_scalar_path_adds_noise_of_the_same_release_plan(bench):
    """The reference row really is the former secure path: one scalar draw per coordinate on
    the plan's grid, with the release's scale."""
    mech = bench._mechanisms()["laplace"]()
    x = np.arange(3000, dtype=np.int64)
    y = bench._scalar_release(mech, x)
    z = y - x
    assert (
        np.array_equal(z, np.rint(z)) and abs(np.std(z) / (math.sqrt(2 * math.exp(-1)) / (1 - math.exp(-1))) - 1) < 0.1
    )
