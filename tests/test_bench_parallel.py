"""benchmarks/bench_parallel.py at its tiniest settings: both modes run every fit once (the
same rows), the parallel wall time is the slowest process's, and bad sizes are refused. No
timing is asserted."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("bench_parallel")


def test_both_modes_run_every_fit(bench):
    row = bench.measure(3, repeats=4, n_obs=20, processes=2)
    assert row["rows_serial"] == row["rows_parallel"] == 3 * 4
    assert row["serial_s"] > 0 and row["parallel_s"] > 0
    assert row["ceiling"] == pytest.approx(row["serial_s"] / row["parallel_s"])


def test_fewer_fits_than_processes_is_refused(bench):
    with pytest.raises(ValueError, match=r"fits must be at least processes \(2\), got 1"):
        bench.measure(1, processes=2)
