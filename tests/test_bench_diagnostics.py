"""benchmarks/bench_diagnostics.py at a tiny size: both implementations give the same numbers
(the benchmark's speed-up is for identical results). No timing is asserted."""
from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_diagnostics.py"


def test_both_implementations_agree():
    spec = importlib.util.spec_from_file_location("bench_diagnostics", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = module.measure(chains=2, draws=60, elements=5)
    assert row["max_rel_diff"] < 1e-10
    assert row["arviz_s"] > 0 and row["vectorised_s"] > 0
