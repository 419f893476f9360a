"""What 2 workers can gain on this machine at best: the same batched Stan fits run one after
another in one process, then split over 2 independent processes started together -- no
runner, no Dask, nothing shared. The ratio of the two wall times is the ceiling for the
speed-up of ``reproduce --scheduler local --workers 2`` over ``--workers 1`` on the same
fits; ``benchmarks/run_all.py --compare-workers`` measures the real thing.

The fits are Foulds et al. (2016) Figure 2's Laplace runs at N = 2500: one Stan run over
R = 1000 data sets, 2 chains x (300 warm-up + 500 draws), with one chain process per Python
process (``PYSTANPRIVACY_PARALLEL_CHAINS=1``), as the runner's workers use them. A pystan fit
is itself two processes: the chain process samples while the Python process (httpstan's
server) receives, compresses and parses the draws, so one worker keeps more than one core
partly busy and 2 cores allow less than 2x.

Run:  python benchmarks/bench_parallel.py [--fits 6] [--repeats 1000] [--n-obs 2500]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
from pystanprivacy.experiments.foulds2016.beta_bernoulli import BATCH_SAMPLER, one_draw_task
first, count, repeats, n_obs = (int(a) for a in sys.argv[1:5])
one_draw_task(method="laplace", n_obs=10, repeats=2, p=0.1, a0=0.05, epsilon=0.1, data_seed=0,
              sampler=BATCH_SAMPLER, seed=0)  # load the model before the clock starts
start = time.perf_counter()
done = 0
for i in range(first, first + count):
    t = one_draw_task(method="laplace", n_obs=n_obs, repeats=repeats, p=0.1, a0=0.05, epsilon=0.1,
                      data_seed=i, sampler=BATCH_SAMPLER, seed=i)
    done += len(t)
print(json.dumps({"wall_s": time.perf_counter() - start, "rows": done}))
"""


def _start(first: int, count: int, repeats: int, n_obs: int, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(first), str(count), str(repeats), str(n_obs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _result(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed (exit {proc.returncode}): {err.strip()[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


def measure(
    fits: int = 6, *, repeats: int = 1000, n_obs: int = 2500, processes: int = 2, env: dict | None = None
) -> dict:
    """Wall time of ``fits`` batched fits in one process (``serial_s``) and split as evenly
    as possible over ``processes`` processes started together (``parallel_s``: the slowest
    one), each timed from its first fit after loading the model; ``ceiling`` is their ratio.
    The same seeds are used in both modes."""
    if fits < processes:
        raise ValueError(f"fits must be at least processes ({processes}), got {fits}")
    env = dict(os.environ if env is None else env)
    env["PYSTANPRIVACY_PARALLEL_CHAINS"] = "1"
    load0 = os.getloadavg()[0]
    serial = _result(_start(0, fits, repeats, n_obs, env))
    shares = [fits // processes + (k < fits % processes) for k in range(processes)]
    firsts = [sum(shares[:k]) for k in range(processes)]
    procs = [_start(f, c, repeats, n_obs, env) for f, c in zip(firsts, shares)]
    parts = [_result(p) for p in procs]
    parallel_s = max(p["wall_s"] for p in parts)
    return {
        "fits": fits,
        "repeats": repeats,
        "n_obs": n_obs,
        "processes": processes,
        "serial_s": serial["wall_s"],
        "parallel_s": parallel_s,
        "ceiling": serial["wall_s"] / parallel_s,
        "rows_serial": serial["rows"],
        "rows_parallel": sum(p["rows"] for p in parts),
        "load1_start": load0,
        "load1_end": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fits", type=int, default=6, help="batched fits in all (default 6)")
    ap.add_argument("--repeats", type=int, default=1000, help="data sets per fit (default 1000)")
    ap.add_argument("--n-obs", type=int, default=2500, help="records per data set (default 2500)")
    ap.add_argument("--processes", type=int, default=2, help="processes of the parallel run (default 2)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    row = measure(args.fits, repeats=args.repeats, n_obs=args.n_obs, processes=args.processes)
    print(json.dumps(row, indent=1))
    print(
        f"{row['fits']} fits: {row['serial_s']:.1f} s in 1 process, {row['parallel_s']:.1f} s over "
        f"{row['processes']} processes: ceiling {row['ceiling']:.2f}x ({time.perf_counter() - t0:.0f} s in all)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
