"""Compile time with and without the precompiled Stan header (issue 54, item 3;
``pystanprivacy/sampling/backends/pch.py``), and the proof that it changes no draw.

Each program is compiled by the pystan backend, in a child process, into a temporary model cache
of its own, once with ``pch.ENABLED = False`` (httpstan's plain build) and once with it True, the
two alternating so that both see the same machine load (the 1-minute load average is printed with
each). The header itself is built first, in the precompiled-header way's cache, by a compile that
is reported on its own line ("first compile, header build included"); the rounds after reuse it.

Each compile is followed by a fit of the freshly built module (fixed seed, the same data and
settings both ways), and every variable's draws of the plain build and of the precompiled-header
build are compared with ``np.array_equal``; the script exits with status 1 where any differ.

Run (about 10 min on a loaded 2-core machine; ``nice`` keeps it from slowing other work)::

    nice -n 10 python benchmarks/bench_pch.py [--rounds 1] [--programs foulds2016/beta_bernoulli,...]

References
----------
GCC manual, "Using Precompiled Headers", https://gcc.gnu.org/onlinedocs/gcc/Precompiled-Headers.html
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: the programs and the data of their fit (any valid data: only the equality of the draws matters)
DATA = {
    "foulds2016/beta_bernoulli": {
        "R": 2,
        "successes": [7.3, 4.1],
        "failures": [2.8, 5.6],
        "prior_alpha": 1.0,
        "prior_beta": 1.0,
    },
    "bernstein2018/binomial_beta": {"R": 1, "n": 100, "y": [62.4], "scale": 2.0, "prior_alpha": 1.0, "prior_beta": 1.0},
}
SAMPLER = {"chains": 2, "warmup": 300, "draws": 300, "seed": 20260541}


def _child(program: str, pch_enabled: bool, out: str) -> None:
    """Compile ``program`` into ``$PYSTANPRIVACY_CACHE`` with or without the precompiled header,
    fit it and save the seconds and the draws to ``out`` (``.npz``)."""
    from pystanprivacy.sampling.backends import pch
    from pystanprivacy.sampling.stan import StanModel

    pch.ENABLED = pch_enabled
    start = time.perf_counter()
    cpu0 = os.times()
    model = StanModel(program, backend="pystan")
    cpu1 = os.times()
    seconds = time.perf_counter() - start
    compiler_cpu = (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)
    assert not model.was_cached
    fit = model.sample(DATA[program], **SAMPLER)
    draws = {f"draws_{name}": fit.draws(name) for name in fit.variables}
    np.savez(out, seconds=seconds, compiler_cpu=compiler_cpu, **draws)


def _run_child(program: str, pch_enabled: bool, cache: Path, out: Path) -> dict:
    env = {**os.environ, "PYSTANPRIVACY_CACHE": str(cache), "PYSTANPRIVACY_BACKEND": "pystan"}
    load = os.getloadavg()[0]
    subprocess.run(
        [sys.executable, __file__, "--child", program, str(int(pch_enabled)), str(out)], env=env, check=True, cwd=ROOT
    )
    with np.load(out) as saved:
        row = {
            "program": program,
            "pch": pch_enabled,
            "seconds": round(float(saved["seconds"]), 1),
            "compiler_cpu_s": round(float(saved["compiler_cpu"]), 1),
            "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2),
        }
        row["draws"] = {k: np.array(saved[k]) for k in saved.files if k.startswith("draws_")}
    return row


def _fresh_models(cache: Path) -> None:
    """Remove the compiled models (and the compile locks) from ``cache``, keeping a built header."""
    for folder in cache.glob("*/models"):
        shutil.rmtree(folder)
    shutil.rmtree(cache / "locks", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--programs", default="foulds2016/beta_bernoulli,bernstein2018/binomial_beta")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    if args.child:
        program, enabled, out = args.child
        _child(program, enabled == "1", out)
        return
    programs = args.programs.split(",")
    unknown = [p for p in programs if p not in DATA]
    if unknown:
        raise SystemExit(f"--programs: no data for {unknown}; known: {list(DATA)}")
    rows, identical = [], True
    with tempfile.TemporaryDirectory(prefix="bench-pch-") as tmp:
        plain_cache, pch_cache = Path(tmp) / "plain", Path(tmp) / "pch"
        first = _run_child(programs[0], True, pch_cache, Path(tmp) / "first.npz")
        first["note"] = "first compile, header build included"
        rows.append(first)
        _fresh_models(pch_cache)
        for round_ in range(args.rounds):
            for program in programs:
                for enabled in (False, True) if round_ % 2 == 0 else (True, False):
                    cache = pch_cache if enabled else plain_cache
                    row = _run_child(program, enabled, cache, Path(tmp) / "fit.npz")
                    _fresh_models(cache)
                    rows.append(row)
        for program in programs:
            fits = [r["draws"] for r in rows if r["program"] == program]
            same = all(
                fit.keys() == fits[0].keys() and all(np.array_equal(fit[k], fits[0][k]) for k in fit)
                for fit in fits[1:]
            )
            identical &= same
            print(f"{program}: {len(fits)} fits (plain and precompiled header), every draw identical: {same}")
        header = sorted(pch_cache.glob("*/pch/*/*.gch"))
        size = header[0].stat().st_size if header else 0
    for row in rows:
        row.pop("draws")
        print(json.dumps(row))
    print(json.dumps({"gch_bytes": size, "cpus": os.cpu_count()}))
    if not identical:
        print("the draws of a model built with the precompiled header differ from the plain build's")
        sys.exit(1)


if __name__ == "__main__":
    main()
