"""Cost of floating-point-safe noise (pystanprivacy.privacy.noise) against the seeded NumPy path.

Rows: exact discrete Laplace / discrete Gaussian draws from the cryptographic source
(``secrets``) and from the seeded source, and whole releases (secure vs seeded) of the
mechanisms and LDP report functions at typical sizes. Each row is the best of ``--repeat``
runs: wall time and CPU (process) time in seconds (on a shared machine the CPU time is the
more stable number).

Run:

    python benchmarks/bench_noise.py [--repeat 3] [--n 100000] [--users 10000]

The machine is shared, so compare the rows of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from pystanprivacy.privacy import ldp, noise
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Laplace, OptimalUnaryEncoding
from pystanprivacy.privacy.records import ReproducibleNotSecureWarning


def _best(fn, repeat: int) -> tuple[float, float]:
    """Best wall and best CPU (process) time over ``repeat`` runs."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--n", type=int, default=100_000, help="draws for the sampler rows")
    ap.add_argument("--users", type=int, default=10_000, help="users for the LDP rows")
    args = ap.parse_args()
    warnings.simplefilter("ignore", ReproducibleNotSecureWarning)
    n, u, r = args.n, args.users, args.repeat
    rng = np.random.default_rng(0)
    x_users = rng.normal(size=u)
    rows = [
        (
            f"discrete Laplace t=(2^20+1)/0.7 grid units, {n} draws, secure",
            lambda: noise.sample_discrete_laplace((2**20 + 1) / 0.7, n),
        ),
        (
            f"discrete Laplace same, {n} draws, seeded source",
            lambda: noise.sample_discrete_laplace((2**20 + 1) / 0.7, n, rng=1),
        ),
        (
            f"discrete Gaussian sigma=3.9e6 grid units, {n // 10} draws, secure",
            lambda: noise.sample_discrete_gaussian(3.9e6**2, n // 10),
        ),
        (f"numpy Laplace, {n} draws (seeded path)", lambda: np.random.default_rng(1).laplace(0, 1, n)),
        (
            f"clipped_laplace_reports, {u} users, secure",
            lambda: ldp.clipped_laplace_reports(x_users, epsilon=1.0, bounds=(-3.0, 3.0)),
        ),
        (
            f"clipped_laplace_reports, {u} users, seeded",
            lambda: ldp.clipped_laplace_reports(x_users, epsilon=1.0, bounds=(-3.0, 3.0), seed=1),
        ),
        (
            f"gaussian_reports, {u} users x 3, secure",
            lambda: ldp.gaussian_reports(
                np.clip(rng.normal(size=(u, 3)), -0.5, 0.5), epsilon=1.0, delta=1e-5, sensitivity=2.0
            ),
        ),
        (
            f"randomized_response_reports, {u} users, secure",
            lambda: ldp.randomized_response_reports(rng.integers(0, 2, u), epsilon=1.0),
        ),
        (f"oue_reports d=6, {u} users, secure", lambda: ldp.oue_reports(rng.integers(0, 6, u), epsilon=1.0, d=6)),
        (
            "Laplace release of 1000 counts (integer), secure",
            lambda: Laplace(epsilon=1.0, sensitivity=2.0).release(rng.integers(0, 100, 1000)),
        ),
        (
            "AnalyticGaussian release of 1 real value (sigma calibration), secure",
            lambda: AnalyticGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0).release(np.array([0.3])),
        ),
        (
            "OUE mechanism d=6, 1000 users, secure",
            lambda: OptimalUnaryEncoding(epsilon=1.0, d=6).release(rng.integers(0, 6, 1000)),
        ),
    ]
    print(f"{'what':78s} {'wall_s':>8s} {'cpu_s':>8s}")
    for name, fn in rows:
        wall, cpu = _best(fn, r)
        print(f"{name:78s} {wall:8.3f} {cpu:8.3f}")


if __name__ == "__main__":
    main()
