"""Cost of the persistent ledger (:mod:`pystanprivacy.privacy.ledger`) on an SQLite file: the
time of one spend (a synced transaction) and of opening a ledger (which replays every entry),
per composition rule.

Usage::

    python benchmarks/bench_ledger.py [--spends 100] [--rules basic,zcdp,rdp,pld] [--folder DIR]

Prints one row per rule: median and 90th percentile of a spend (ms) and the time to open the
ledger of ``--spends`` entries (s). The file lives in ``--folder`` (default: a temporary folder,
removed): its disk decides the cost of the fsyncs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from pystanprivacy.privacy.ledger import PrivacyLedger
from pystanprivacy.privacy.mechanisms import Gaussian
from pystanprivacy.privacy.records import PrivacyRecord


def run(rule: str, spends: int, folder: Path) -> dict[str, float]:
    """Spend ``spends`` Gaussian releases (ε = 0.01, δ = 1e-9) into a new ledger, then reopen it."""
    path = folder / f"bench-{rule}.db"
    scale = Gaussian(epsilon=0.01, delta=1e-9, sensitivity=1.0, seed=0).scale
    record = PrivacyRecord(
        mechanism="gaussian", epsilon=0.01, delta=1e-9, sensitivity=1.0, sensitivity_norm="l2", scale=scale
    )
    times = []
    with PrivacyLedger.create(path, dataset="bench", epsilon=1e6, delta=1e-3, composition=rule) as ledger:
        for _ in range(spends):
            start = time.perf_counter()
            ledger.spend(0.01, 1e-9, label="bench", record=record)
            times.append(time.perf_counter() - start)
    start = time.perf_counter()
    PrivacyLedger.open(path).close()
    opened = time.perf_counter() - start
    path.unlink()
    times.sort()
    return {
        "median_ms": 1000 * statistics.median(times),
        "p90_ms": 1000 * times[int(0.9 * (len(times) - 1))],
        "open_s": opened,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spends", type=int, default=100, help="entries per ledger (default 100)")
    parser.add_argument("--rules", default="basic,zcdp,rdp,pld", help="composition rules (comma-separated)")
    parser.add_argument("--folder", default=None, help="where the ledger files go (default: a temporary folder)")
    args = parser.parse_args()
    if args.spends < 1:
        parser.error(f"--spends must be >= 1, got {args.spends}")
    print(f"{platform.node()}: {os.cpu_count()} cores, {platform.python_version()}, {args.spends} spends per rule")
    print(f"{'rule':6s} {'spend median (ms)':>18s} {'spend p90 (ms)':>15s} {'open (s)':>9s}")
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        for rule in args.rules.split(","):
            row = run(rule.strip(), args.spends, Path(tmp))
            print(f"{rule:6s} {row['median_ms']:18.1f} {row['p90_ms']:15.1f} {row['open_s']:9.2f}")


if __name__ == "__main__":
    main()
