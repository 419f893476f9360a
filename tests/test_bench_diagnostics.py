"""benchmarks/bench_diagnostics.py at a tiny size: both implementations give the same numbers
(the benchmark's speed-up is for identical results). No timing is asserted."""

from __future__ import annotations


def test_both_implementations_agree(load_benchmark):
    module = load_benchmark("bench_diagnostics")
    row = module.measure(chains=2, draws=60, elements=5)
    assert row["max_rel_diff"] < 1e-10
    assert row["arviz_s"] > 0 and row["vectorised_s"] > 0
