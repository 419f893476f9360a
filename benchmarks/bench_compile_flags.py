"""Compiler settings as a speed-up of the network fits (issue 15): the same Stan program
(``jewson2023/nn_regression``, the non-private Gibbs posterior at w = 1, the study's costliest fit)
built the way httpstan builds it (stanc default, ``g++ -O3``) and with one change, on the same data,
seed and sampler settings, alternating the two so that both see the same machine load:

* ``O1``: stanc's ``--O1`` (struct-of-arrays matrices where stanc can prove it safe);
* ``native``: ``g++ -march=native -mtune=native`` added to httpstan's flags (AVX2/FMA here);
* ``O2`` and ``O3``: the optimisation level appended last (the backend appends ``-O2`` since
  issue 54, item 3; httpstan asks for ``-O3``), both compiled into the temporary cache, so that
  ``--variants O3,O2`` compares the two compiles and their draws (the "default" model is the
  one in the model cache, built with whichever level was current when it was compiled).

A changed build is not a changed program: the leapfrog counts and the draws must agree with the
default build's to rounding (the script prints both), so only the seconds can change. Milliseconds
per gradient are estimated as in ``bench_models.run_costs`` (pystan keeps no warm-up statistics: the
kept draws' mean leapfrog steps times all iterations; the run's fixed cost included).
The variants compile into a temporary model cache that is removed at the end.

Run::

    python benchmarks/bench_compile_flags.py [--variants O1,native,O2] [--n 1000] [--repeats 2]

Each variant's compile is reported in wall seconds and in compiler CPU seconds (the child
processes'), the latter nearly independent of other load; both include the build of the
variant's own precompiled header in the temporary cache.
"""

from __future__ import annotations

import argparse
import functools
import importlib.resources
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLER = {"chains": 1, "warmup": 150, "draws": 100, "adapt_delta": 0.8}
HTTPSTAN_FLAGS = ["-O3", "-std=c++14", "-Wno-sign-compare"]  # httpstan.models' default


def _stanc_o1(program_code: str, stan_model_name: str) -> tuple[str, str]:
    """httpstan.compile.compile with ``--O1`` added to stanc's arguments."""
    with importlib.resources.path("httpstan", "stanc") as stanc, tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{stan_model_name}.stan"
        path.write_text(program_code)
        done = subprocess.run(
            [stanc, "--name", stan_model_name, "--O1", "--print-cpp", str(path)], capture_output=True, timeout=60
        )
    if done.returncode != 0:
        raise ValueError(done.stderr.decode())
    return done.stdout.decode().strip(), done.stderr.decode().strip()


def variant_backend(variant: str):
    """A pystan backend whose compile differs from the default in ``variant`` only; its own
    version tag keeps its build apart from the default one in the cache."""
    import httpstan.compile
    import httpstan.models

    from pystanprivacy.sampling.backends import pystan_backend
    from pystanprivacy.sampling.backends.pystan_backend import PystanBackend

    saved_flags = pystan_backend.MODEL_COMPILE_FLAGS
    if variant not in ("O1", "native", "O2", "O3"):
        raise ValueError(f"variant must be 'O1', 'native', 'O2' or 'O3', got {variant!r}")

    class Variant(PystanBackend):
        def version_tag(self) -> str:
            return f"{super().version_tag()}-{variant}"

        def compile(self, program, key, cache_dir):
            stanc, build = httpstan.compile.compile, httpstan.models.build_services_extension_module
            if variant == "O1":
                httpstan.compile.compile = _stanc_o1
            elif variant in ("O2", "O3"):  # in place of the backend's own level, last (after httpstan's -O3)
                others = [f for f in saved_flags if not f.startswith("-O")]
                pystan_backend.MODEL_COMPILE_FLAGS = (*others, f"-{variant}")
            else:
                httpstan.models.build_services_extension_module = functools.partial(
                    build, extra_compile_args=[*HTTPSTAN_FLAGS, "-march=native", "-mtune=native"]
                )
            try:
                return super().compile(program, key, cache_dir)
            finally:
                httpstan.compile.compile, httpstan.models.build_services_extension_module = stanc, build
                pystan_backend.MODEL_COMPILE_FLAGS = saved_flags

    return Variant()


def _children_cpu() -> float:
    """CPU seconds of this process's finished child processes (the compiler's)."""
    times = os.times()
    return times.children_user + times.children_system


def network_data(n: int, d: int = 11, seed: int = 1) -> dict:
    """Stan data of ``nn_regression`` for ``n`` records from a random 10-unit network (Wine's d)."""
    from pystanprivacy.models.jewson2023 import NNRegressionBetaD

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.tanh(X @ rng.normal(size=(d, 10))) @ rng.normal(size=10) + 0.5 * rng.normal(size=n)
    return NNRegressionBetaD().stan_data(X, y, w=1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="O1,native")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)

    from pystanprivacy.sampling.backends.pystan_backend import PystanBackend
    from pystanprivacy.sampling.stan import CACHE_ENV_VAR, StanModel

    data = network_data(args.n)
    default = StanModel("jewson2023/nn_regression", backend=PystanBackend())
    tmp_cache = tempfile.mkdtemp(prefix="bench-flags-")
    os.environ[CACHE_ENV_VAR] = tmp_cache
    try:
        for variant in args.variants.split(","):
            start, cpu = time.perf_counter(), _children_cpu()
            other = StanModel("jewson2023/nn_regression", backend=variant_backend(variant))
            print(
                f"{variant}: compiled in {time.perf_counter() - start:.0f} s, "
                f"{_children_cpu() - cpu:.1f} compiler CPU-s (its precompiled header's build included)"
            )
            for rep in range(args.repeats):
                pair = [("default", default), (variant, other)]
                draws = {}
                for label, model in pair if rep % 2 == 0 else pair[::-1]:
                    start = time.perf_counter()
                    post = model.sample(data, seed=100 + rep, **SAMPLER)
                    seconds = time.perf_counter() - start
                    steps = float(np.sum(post.sample_stat("n_steps")))  # the kept draws' leapfrog steps
                    grads = (SAMPLER["warmup"] + SAMPLER["draws"]) * steps / SAMPLER["draws"]
                    print(
                        f"  seed {100 + rep} {label:8s} {seconds:6.1f} s  leapfrog (draws) {steps:6.0f}  "
                        f"ms/grad {1000 * seconds / grads:.3f}  "
                        f"mean sigma2 {np.mean(post.draws('sigma2')):.10f}  "
                        f"load {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
                    draws[label] = post.draws("sigma2")
                print(f"  seed {100 + rep}: sigma2 draws identical: {np.array_equal(*draws.values())}")
    finally:
        shutil.rmtree(tmp_cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
