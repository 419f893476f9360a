"""benchmarks/bench_ledger.py at a tiny size: it spends into a real ledger file, reopens it and
leaves nothing behind. No timing is asserted."""

from __future__ import annotations


def test_the_ledger_benchmark_spends_reopens_and_cleans_up(load_benchmark, tmp_path):
    module = load_benchmark("bench_ledger")
    for rule in ("basic", "zcdp"):
        row = module.run(rule, 3, tmp_path)
        assert set(row) == {"median_ms", "p90_ms", "open_s"}
        assert 0 < row["median_ms"] <= row["p90_ms"] and row["open_s"] > 0
    assert list(tmp_path.iterdir()) == []
