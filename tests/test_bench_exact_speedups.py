"""benchmarks/bench_exact_speedups.py at tiny settings: both programs of each pair fit the same
release, alternating, and every row carries its measurements. No timing is asserted."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("bench_exact_speedups")


@pytest.mark.parametrize(
    "key, model",
    [
        ("linear", "kulkarni2022/linear_regression_inputs"),
        ("logistic", "kulkarni2022/logistic_regression_inputs"),
        ("nn_classifier", "jewson2023/nn_classifier"),
    ],
)
def test_both_programs_fit_the_same_release(bench, key, model):
    sampler = {"chains": 1, "warmup": 100, "draws": 100, "adapt_delta": 0.95}
    header, rows = bench.measure(key, n=80, repeats=2, sampler=sampler)
    assert header.startswith(f"{model}: n = 80")
    assert [r["program"] for r in rows] == ["former", "current", "current", "former"]
    for r in rows:
        assert r["fit_s"] > 0 and r["leapfrog/iter"] >= 1 and r["min_ess"] > 0
        assert r["ms/grad"] == pytest.approx(1000 * r["fit_s"] / (100 + 100) / r["leapfrog/iter"])


def test_unknown_pair_is_refused(bench):
    with pytest.raises(ValueError, match="key must be one of"):
        bench.measure("probit", n=10)
