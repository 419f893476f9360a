"""Secure noise on large vectors (issue 67, item 3): coordinates per second of a release without
a seed (exact discrete noise, CSPRNG) for Laplace and the analytic Gaussian on integer and real
input, beside OpenDP's samplers on the same vectors and the library's former scalar path.

Rows (each the best of ``--repeat`` runs, wall and CPU (process) time):

* ``pystanprivacy``: ``Laplace(epsilon=1, sensitivity=1).release(x)`` and
  ``AnalyticGaussian(epsilon=1, delta=1e-6, sensitivity=1).release(x)`` on ``n`` Poisson(50)
  counts (int64) and ``n`` N(0, 10²) reals; every coordinate may change (``changed`` default).
* ``opendp``: ``opendp.measurements.make_laplace`` / ``make_gaussian`` on a vector domain (int,
  or float with the granularity ``k`` of our grid), with our recorded noise scale, on the first
  ``--opendp-n`` coordinates of the same vectors (OpenDP's samplers are much slower here).
* ``scalar (former)``: the library's former secure path (one scalar CKS draw per coordinate
  from ``secrets.randbelow``, Python-int grid arithmetic) on the first ``--scalar-n``.

Each row also reports the noise's standard deviation over the expected one (``sd_ratio``, near
1: Laplace ``sqrt(2)`` times its scale, Gaussian its sigma) and whether every output lies on
the released grid: a correctness check, not a timing.

Run:

    python benchmarks/bench_secure_noise.py [--n 1000000] [--repeat 5] [--opendp-n 20000] [--scalar-n 20000]

On a shared machine the CPU time is the steadier number; the load average is printed.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pystanprivacy.privacy import noise
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Laplace


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Best wall and best CPU time over ``repeat`` runs, and the last result."""
    wall = cpu = math.inf
    out = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu, out


def _vectors(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"integer": rng.poisson(50.0, n).astype(np.int64), "real": rng.normal(0.0, 10.0, n)}


def _mechanisms() -> dict[str, Callable[[], Any]]:
    return {
        "laplace": lambda: Laplace(epsilon=1.0, sensitivity=1.0),
        "gaussian": lambda: AnalyticGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0),
    }


def _check(x: np.ndarray, y: np.ndarray, kind: str, scale: float, grid: float) -> tuple[float, bool]:
    """(sd of the noise / expected sd, every output on the grid)."""
    z = np.asarray(y, dtype=np.float64) - np.asarray(x, dtype=np.float64)
    expected = scale * (math.sqrt(2.0) if kind == "laplace" else 1.0)
    on_grid = bool(np.all(np.asarray(y, dtype=np.float64) / grid == np.rint(np.asarray(y, dtype=np.float64) / grid)))
    return float(np.std(z) / expected), on_grid


def _row(library: str, kind: str, data: str, n: int, wall: float, cpu: float, check) -> dict[str, Any]:
    ratio, on_grid = check
    return {
        "library": library,
        "mechanism": kind,
        "input": data,
        "n": n,
        "wall_s": wall,
        "cpu_s": cpu,
        "coords_per_s_wall": n / wall,
        "coords_per_s_cpu": n / cpu if cpu > 0 else math.inf,
        "sd_ratio": ratio,
        "on_grid": on_grid,
    }


def _opendp_measurement(kind: str, data: str, scale: float, k: int, size: int):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    if data == "integer":
        domain = dp.vector_domain(dp.atom_domain(T=int))
        metric = dp.l1_distance(T=int) if kind == "laplace" else dp.l2_distance(T=int)
        extra: dict[str, Any] = {}
    else:
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)  # needed with k
        metric = dp.l1_distance(T=float) if kind == "laplace" else dp.l2_distance(T=float)
        extra = {"k": k}
    make = dp.m.make_laplace if kind == "laplace" else dp.m.make_gaussian
    return make(domain, metric, scale=scale, **extra)


def _scalar_release(mech: Any, x: np.ndarray) -> np.ndarray:
    """The former secure path: the plan of a release, then one scalar exact draw per coordinate
    from ``secrets`` (``SecureRandom.randbelow``) and the Python-int grid arithmetic."""
    _, plan = mech._validated(x, None)
    src = noise.SecureRandom()
    scalar = mech._discrete_noise
    k = plan.grid_exponent
    return noise.from_grid(noise.noisy_sum(noise.to_grid(x, k), lambda: scalar(plan.param, src)), k)


def measure(
    *, n: int = 1_000_000, repeat: int = 5, opendp_n: int = 20_000, scalar_n: int = 20_000, seed: int = 0
) -> list[dict[str, Any]]:
    """The rows of the table (see the module docstring)."""
    vectors = _vectors(n, seed)
    rows = []
    for kind, make in _mechanisms().items():
        for data, x in vectors.items():
            wall, cpu, rel = _best(lambda make=make, x=x: make().release(x), repeat)
            scale, grid, k = rel.record.scale, rel.record.details["grid"], rel.record.details["grid_exponent"]
            rows.append(_row("pystanprivacy", kind, data, n, wall, cpu, _check(x, rel.values, kind, scale, grid)))
            xs = x[:opendp_n]
            meas = _opendp_measurement(kind, data, scale, k, xs.size)
            xs_list = xs.tolist()
            wall, cpu, out = _best(lambda meas=meas, xs_list=xs_list: meas(xs_list), repeat)
            rows.append(_row("opendp", kind, data, xs.size, wall, cpu, _check(xs, np.array(out), kind, scale, grid)))
            xs = x[:scalar_n]
            wall, cpu, out = _best(lambda make=make, xs=xs: _scalar_release(make(), xs), 1)
            rows.append(_row("scalar (former)", kind, data, xs.size, wall, cpu, _check(xs, out, kind, scale, grid)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="coordinates of each vector")
    ap.add_argument("--repeat", type=int, default=5, help="runs per row (the best is reported)")
    ap.add_argument("--opendp-n", type=int, default=20_000, help="leading coordinates given to OpenDP")
    ap.add_argument("--scalar-n", type=int, default=20_000, help="leading coordinates for the former scalar path")
    ap.add_argument("--seed", type=int, default=0, help="seed of the (public, synthetic) input vectors")
    args = ap.parse_args()
    from importlib.metadata import version

    print(
        f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, numpy {np.__version__}, opendp {version('opendp')}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    rows = measure(n=args.n, repeat=args.repeat, opendp_n=args.opendp_n, scalar_n=args.scalar_n, seed=args.seed)
    head = f"{'library':16s} {'mechanism':9s} {'input':8s} {'n':>8s} {'wall_s':>8s} {'cpu_s':>8s} "
    print(head + f"{'coords/s (wall)':>16s} {'coords/s (CPU)':>15s} {'sd_ratio':>8s} on_grid")
    for r in rows:
        print(
            f"{r['library']:16s} {r['mechanism']:9s} {r['input']:8s} {r['n']:8d} {r['wall_s']:8.3f} {r['cpu_s']:8.3f} "
            f"{r['coords_per_s_wall']:16,.0f} {r['coords_per_s_cpu']:15,.0f} {r['sd_ratio']:8.4f} {r['on_grid']}"
        )
    print(f"# load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
