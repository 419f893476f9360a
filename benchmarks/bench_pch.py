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

``--variant O2`` compares two builds with the precompiled header and ``-g0`` at ``-O3`` (httpstan's
level) and at ``-O2`` (the backend's since issue 54, item 3). ``--variant g0`` compares instead two
builds that both use the precompiled header: with the debug information that Python's
``sysconfig`` flags ask for (``-g``; ``-g0`` left out of the backend's ``MODEL_COMPILE_FLAGS``) and
with the backend's ``-g0`` (appended last, so it wins; the header is then built with ``-g0`` too). ``-g`` changes no generated code, so the draws must be
identical here as well. Each row also gives the size of the built module.

Run (about 10 min on a loaded 2-core machine; ``nice`` keeps it from slowing other work)::

    nice -n 10 python benchmarks/bench_pch.py [--variant pch|g0|O2] [--rounds 1] [--programs foulds2016/beta_bernoulli,...]

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
    # matrix algebra (Eigen) and a Markov chain's forward algorithm, for --variant O2
    "kulkarni2022/linear_regression_nonprivate": {
        "d": 2,
        "n": 40,
        "x": np.round(np.cos(np.arange(80.0)).reshape(40, 2), 6).tolist(),
        "y": np.round(np.sin(np.arange(40.0)) + 0.3, 6).tolist(),
        "prior_theta_sd": 2.0,
        "prior_sigma_sd": 1.0,
    },
    "foulds2016/nb_hmm": {
        "R": 2,
        "T": 6,
        "K": 2,
        "D": 2,
        "feature_size": [2, 3],
        "reference": [1, 1],
        "counts": (1.0 + np.abs(np.sin(np.arange(60.0))).reshape(12, 5) * 4).round(4).tolist(),
        "heldout": [0] * 12,
        "alpha": 1.0,
        "beta": 1.0,
    },
}
SAMPLER = {"chains": 2, "warmup": 300, "draws": 300, "seed": 20260541}


#: the two builds each variant compares: (precompiled header used, debug information kept,
#: optimisation level appended last; the backend's own is -O2)
VARIANTS = {
    "pch": ((False, False, "O2"), (True, False, "O2")),
    "g0": ((True, True, "O2"), (True, False, "O2")),
    "O2": ((True, False, "O3"), (True, False, "O2")),
}


def _child(program: str, pch_enabled: bool, debug_info: bool, opt: str, out: str) -> None:
    """Compile ``program`` into ``$PYSTANPRIVACY_CACHE`` with or without the precompiled header
    and with or without ``-g0``, at optimisation level ``opt``, fit it and save the seconds, the
    module's size and the draws to ``out`` (``.npz``)."""
    from pystanprivacy.sampling.backends import pch, pystan_backend
    from pystanprivacy.sampling.stan import StanModel

    pch.ENABLED = pch_enabled
    flags = [f for f in pystan_backend.MODEL_COMPILE_FLAGS if not f.startswith("-O")]
    if debug_info:
        flags.remove("-g0")
    pystan_backend.MODEL_COMPILE_FLAGS = (*flags, f"-{opt}")
    start = time.perf_counter()
    cpu0 = os.times()
    model = StanModel(program, backend="pystan")
    cpu1 = os.times()
    seconds = time.perf_counter() - start
    compiler_cpu = (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)
    assert not model.was_cached
    module_bytes = sum(f.stat().st_size for f in Path(os.environ["PYSTANPRIVACY_CACHE"]).glob("*/models/*/*.so"))
    fit = model.sample(DATA[program], **SAMPLER)
    draws = {f"draws_{name}": fit.draws(name) for name in fit.variables}
    np.savez(out, seconds=seconds, compiler_cpu=compiler_cpu, module_bytes=module_bytes, **draws)


def _run_child(program: str, build: tuple[bool, bool, str], cache: Path, out: Path) -> dict:
    pch_enabled, debug_info, opt = build
    env = {**os.environ, "PYSTANPRIVACY_CACHE": str(cache), "PYSTANPRIVACY_BACKEND": "pystan"}
    load = os.getloadavg()[0]
    subprocess.run(
        [sys.executable, __file__, "--child", program, str(int(pch_enabled)), str(int(debug_info)), opt, str(out)],
        env=env,
        check=True,
        cwd=ROOT,
    )
    with np.load(out) as saved:
        row = {
            "program": program,
            "pch": pch_enabled,
            "debug_info": debug_info,
            "opt": opt,
            "seconds": round(float(saved["seconds"]), 1),
            "compiler_cpu_s": round(float(saved["compiler_cpu"]), 1),
            "module_bytes": int(saved["module_bytes"]),
            "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2),
        }
        row["draws"] = {k: np.array(saved[k]) for k in saved.files if k.startswith("draws_")}
    print(json.dumps({k: v for k, v in row.items() if k != "draws"}), flush=True)  # as it goes: the run is long
    return row


def _fresh_models(cache: Path) -> None:
    """Remove the compiled models (and the compile locks) from ``cache``, keeping a built header."""
    for folder in cache.glob("*/models"):
        shutil.rmtree(folder)
    shutil.rmtree(cache / "locks", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="pch")
    parser.add_argument("--programs", default="foulds2016/beta_bernoulli,bernstein2018/binomial_beta")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    if args.child:
        program, enabled, debug_info, opt, out = args.child
        _child(program, enabled == "1", debug_info == "1", opt, out)
        return
    programs = args.programs.split(",")
    unknown = [p for p in programs if p not in DATA]
    if unknown:
        raise SystemExit(f"--programs: no data for {unknown}; known: {list(DATA)}")
    rows, identical = [], True
    builds = VARIANTS[args.variant]
    with tempfile.TemporaryDirectory(prefix="bench-pch-") as tmp:
        caches = {build: Path(tmp) / f"pch{int(build[0])}-g{int(build[1])}-{build[2]}" for build in builds}
        for build in builds:  # each build that uses the header builds its own first (other flags, other key)
            if build[0]:
                first = _run_child(programs[0], build, caches[build], Path(tmp) / "first.npz")
                first["note"] = "first compile, header build included"
                rows.append(first)
                _fresh_models(caches[build])
        for round_ in range(args.rounds):
            for program in programs:
                for build in builds if round_ % 2 == 0 else builds[::-1]:
                    row = _run_child(program, build, caches[build], Path(tmp) / "fit.npz")
                    _fresh_models(caches[build])
                    rows.append(row)
        for program in programs:
            fits = [r["draws"] for r in rows if r["program"] == program]
            same = all(
                fit.keys() == fits[0].keys() and all(np.array_equal(fit[k], fits[0][k]) for k in fit)
                for fit in fits[1:]
            )
            identical &= same
            print(f"{program}: {len(fits)} fits (builds {builds}), every draw identical: {same}")
        sizes = {str(build): [h.stat().st_size for h in cache.glob("*/pch/*/*.gch")] for build, cache in caches.items()}
    for row in rows:
        row.pop("draws")
        print(json.dumps(row))  # again, together (the first compiles' rows with their note)
    print(json.dumps({"gch_bytes": sizes, "cpus": os.cpu_count()}))
    if not identical:
        print(f"the draws of the two builds of variant {args.variant!r} differ")
        sys.exit(1)


if __name__ == "__main__":
    main()
