"""Backend overhead: cold compile, second construction of a cached model, and a 4 x 1000
fit of foulds2016/beta_bernoulli.

Run:  python benchmarks/bench_backend.py [--backend pystan|cmdstanpy] [--cold]

``--cold`` compiles into a fresh, empty cache directory first (about 30-60 s). Each timing
of a cached construction runs in a fresh Python process, so it includes imports and the
load of the compiled model, as a user's second session would see it. ``fixed_param_s`` is
the wall time of a Stan run that does (almost) nothing (fixed_param, one draw): the
overhead every fit pays on top of its sampling.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from pystanprivacy.sampling.stan import StanModel
m = StanModel(sys.argv[1], backend=sys.argv[2])
t1 = time.perf_counter()
data = {"R": 1, "successes": [6.0], "failures": [14.0], "prior_alpha": 1.0, "prior_beta": 1.0}
post = m.sample(data, chains=4, warmup=1000, draws=1000, seed=1)
t2 = time.perf_counter()
m.fixed_param(data, draws=1, seed=1)
t3 = time.perf_counter()
print(json.dumps({"cached": m.was_cached, "construct_s": t1 - t0, "fit_s": t2 - t1, "fixed_param_s": t3 - t2,
                  "total_s": t2 - t0, "draws": int(post.draws("p").shape[0])}))
"""


def run_child(model: str, backend: str, env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, model, backend], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def availability(backend: str) -> str | None:
    """``None`` when ``backend`` can be used here, else the backend's own reason
    (``Backend.availability()``)."""
    from pystanprivacy.sampling.backends import BACKENDS

    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    return BACKENDS[backend].availability()


def measure(
    backend: str = "pystan",
    model: str = "foulds2016/beta_bernoulli",
    *,
    repeats: int = 3,
    cold: bool = False,
    env: dict | None = None,
) -> list[dict]:
    """The rows of the table: an optional cold compile + fit, then ``repeats`` fresh
    processes that construct the cached model and fit it (each row: ``construct_s``,
    ``fit_s``, ``fixed_param_s``, ``total_s`` in the child, ``wall_s`` of the whole process)."""
    env = dict(os.environ) if env is None else env
    rows = []
    if cold:
        with tempfile.TemporaryDirectory() as cache:
            env_cold = {**env, "PYSTANPRIVACY_CACHE": cache}
            t = time.perf_counter()
            rows.append({"case": "cold compile + fit", **run_child(model, backend, env_cold)})
            rows[-1]["wall_s"] = time.perf_counter() - t
    run_child(model, backend, env)  # make sure the user cache holds the model
    for i in range(repeats):
        t = time.perf_counter()
        rows.append({"case": f"cached construction + 4x1000 fit (run {i + 1})", **run_child(model, backend, env)})
        rows[-1]["wall_s"] = time.perf_counter() - t
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="pystan")
    ap.add_argument("--model", default="foulds2016/beta_bernoulli")
    ap.add_argument("--cold", action="store_true", help="also time a compile into an empty cache")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    why = availability(args.backend)
    if why is not None:
        raise SystemExit(f"backend {args.backend!r} is not available here: {why}")
    rows = measure(args.backend, args.model, repeats=args.repeats, cold=args.cold)
    print(
        f"{'case':48s} {'construct_s':>11s} {'fit_s':>7s} {'fixed_param_s':>13s} {'in-process':>10s} "
        f"{'process wall':>12s}"
    )
    for r in rows:
        print(
            f"{r['case']:48s} {r['construct_s']:11.2f} {r['fit_s']:7.2f} {r['fixed_param_s']:13.3f} "
            f"{r['total_s']:10.2f} {r['wall_s']:12.2f}"
        )


if __name__ == "__main__":
    main()
