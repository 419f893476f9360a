"""Per-model benchmark: one row per model of the registry (``pystanprivacy.models.registry.model_names``).

Columns (one run; the machine may be shared, so the 1-minute load average is printed with
every row: compare the rows of one run, not runs of different days):

* ``load_s``: construction of the cached compiled model (``StanModel.get(name)``) in a fresh
  Python process, after the imports (``proc_s``: the whole process, imports included).
* ``s/1k ESS``: wall time of the sampling alone (``Posterior.elapsed``: the Stan run and
  pystan's transfer of the draws; no release, no data preparation, no compilation) per 1000
  effective samples, the effective sample size being the minimum bulk ESS over every element
  of the model's ``parameters`` block (and of the derived quantities named in the case's
  ``also_ess``, e.g. theta of a reparameterised model); at a small and a large number of records n.
* ``slope``: log-log slope of that time in n between the two sizes (0: flat, 1: linear),
  and ``grad slope``: the same slope of the time per gradient (leapfrog step), which is free
  of the noise in the ESS and of changes in the posterior's geometry; next to the expected
  behaviour (sufficient-statistics models flat in n, per-user models linear, OUE flat for a
  fixed d, HMM flat in the number of log entries, beta-D OPS models linear).
* diagnostics of the large-n fit: mean leapfrog steps per iteration, mean tree depth,
  divergences, ESS per draw (min bulk ESS / post-warm-up draws of all chains).
* ``--cold GLOB``: also compile the matching models into an empty, throwaway cache directory
  (``$PYSTANPRIVACY_CACHE`` pointed at a temporary folder; one process per model, one at a
  time) and report the compile time.

Data and the fit path come from each model's own class: ``Model.example(n, seed=)`` (an
``Example``: simulated data, the public arguments, and ``Example.fit``). The sizes, the
expected scaling and the ESS rule of each model are the ``"benchmark"`` key of its
``stan/<paper>/<model>.json``.

Run (compiled models are cached; models that are not are compiled first, untimed):

    python benchmarks/bench_models.py [--quick] [--models 'kulkarni2022/*'] [--out models.csv]
                                      [--cold 'foulds2016/beta_bernoulli*']

Sampler: 2 chains x (500 warm-up + 500 draws) (``--quick``: 2 x (250 + 250), smaller n).
This is a benchmark of throughput, not the papers' settings.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import fnmatch
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The paper uses 10 states. On the synthetic logs, 5 (or 10) states leave the chains in
# different modes (split R-hat ~2 after label alignment), so an ESS is not meaningful there;
# 2 states mix (R-hat < 1.05). The cost per gradient at K = 10 is in bench_hmm.py.
# ``--hmm-states`` overrides the ``n_states`` of the HMM models' "benchmark" "example" settings.
HMM_STATES: int | None = None


# ----------------------------------------------------------------------------- cases
def _hmm_min_ess(post: Any) -> float:
    """Min bulk ESS of theta and A after aligning the state labels of the chains (the
    posterior is invariant to relabelling; chains settle in different labellings, so the
    raw parameters would show the label switch, not the mixing)."""
    import arviz as az

    from pystanprivacy.models.foulds2016_hmm import align_states

    aligned = align_states(post)
    out = []
    for arr in (aligned.theta, aligned.A):
        x = arr.reshape(post.num_chains, post.num_draws, -1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(float(np.nanmin(az.ess(az.convert_to_dataset({"x": x}), method="bulk")["x"].values)))
    return min(out)


#: the ``"min_ess"`` rules a model's "benchmark" settings may name (default: min bulk ESS
#: over the parameters block and ``also_ess``)
MIN_ESS_RULES: dict[str, Callable[[Any], float]] = {"aligned_states": _hmm_min_ess}


@dataclasses.dataclass(frozen=True)
class Case:
    build: Callable[[int, int], tuple[Callable[..., Any], int]]
    sizes: tuple[int, int]  # (small, large) n
    quick: tuple[int, int]  # with --quick
    expected: str  # expected scaling of the cost in n
    n_is: str = "records"
    min_ess: Callable[[Any], float] | None = None  # default: min bulk ESS over the parameters block
    also_ess: tuple[str, ...] = ()  # derived quantities also in the min ESS (a reparameterised model's outputs)


def _builder(name: str, settings: dict[str, Any]) -> Callable[[int, int], tuple[Callable[..., Any], int]]:
    """``build(n, seed) -> (fit, n_records)``: the model's own :meth:`Model.example` and its
    one data path (:meth:`Example.fit`: release + fit, the whole OPS run, or the non-private fit)."""

    def build(n: int, seed: int):
        from pystanprivacy.models.registry import model_class

        extra = dict(settings)
        if HMM_STATES is not None and "n_states" in extra:
            extra["n_states"] = HMM_STATES
        example = model_class(name).example(n, seed=seed, **extra)
        return example.fit, example.n_records or n

    return build


def case_of(name: str) -> Case:
    """The benchmark case of model ``name``, from the ``"benchmark"`` key of its JSON file."""
    from pystanprivacy.models.registry import model_metadata

    b = model_metadata(name).get("benchmark")
    if not isinstance(b, dict):
        raise SystemExit(f"no benchmark case for {name}: add a \"benchmark\" key to stan/{name}.json")
    rule = b.get("min_ess")
    if rule is not None and rule not in MIN_ESS_RULES:
        raise SystemExit(f"stan/{name}.json: benchmark min_ess must be one of {sorted(MIN_ESS_RULES)}; got {rule!r}")
    return Case(
        _builder(name, b.get("example", {})),
        tuple(b["sizes"]),
        tuple(b["quick"]),
        b["expected"],
        b.get("n_is", "records"),
        None if rule is None else MIN_ESS_RULES[rule],
        tuple(b.get("also_ess", ())),
    )


def _all_cases() -> dict[str, Case]:
    from pystanprivacy.models.registry import model_metadata, model_names

    return {name: case_of(name) for name in model_names() if "benchmark" in model_metadata(name)}


#: model name -> its benchmark case (from the registry's JSON files)
CASES: dict[str, Case] = _all_cases()

SAMPLER = {"chains": 2, "warmup": 500, "draws": 500}
QUICK_SAMPLER = {"chains": 2, "warmup": 250, "draws": 250}


# --------------------------------------------------------------------------- timings
LOAD_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from pystanprivacy.sampling.stan import StanModel
t1 = time.perf_counter()
m = StanModel.get(sys.argv[1])
t2 = time.perf_counter()
print(json.dumps({"cached": m.was_cached, "import_s": t1 - t0, "load_s": t2 - t1}))
"""


def _child(name: str, env: dict[str, str]) -> dict:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", LOAD_CHILD, name], capture_output=True, text=True, env=env, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["proc_s"] = time.perf_counter() - t
    return row


def load_time(name: str) -> dict:
    """Load of the cached model in a fresh process (the model is compiled first if needed)."""
    from pystanprivacy.sampling.stan import StanModel

    StanModel.get(name)  # make sure the user cache holds it
    return _child(name, dict(os.environ))


def cold_compile(name: str) -> dict:
    """Compile ``name`` into an empty, throwaway cache (fresh process)."""
    with tempfile.TemporaryDirectory(prefix="pystanprivacy-cold-") as cache:
        row = _child(name, {**os.environ, "PYSTANPRIVACY_CACHE": cache})
    if row["cached"]:
        raise RuntimeError(f"{name}: the throwaway cache already held the model")
    return row


def fixed_cost() -> float:
    """Wall time of a Stan run that does (almost) nothing: the per-fit overhead that every
    row's time includes (process and data transfer), charged to the gradients in ``ms/grad``."""
    from pystanprivacy.sampling.stan import StanModel

    model = StanModel.get("foulds2016/beta_bernoulli")
    data = {"R": 1, "successes": [6.0], "failures": [14.0], "prior_alpha": 1.0, "prior_beta": 1.0}
    return float(np.median([model.fixed_param(data, draws=1, seed=i).elapsed for i in range(3)]))


def parameter_names(name: str) -> list[str]:
    from pystanprivacy.sampling.stan import model_info

    return list(model_info(name)["parameters"])


def fit_once(name: str, case: Case, n: int, sampler: dict, seed: int) -> dict:
    fit, n_records = case.build(n, seed)
    load1 = os.getloadavg()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = fit(seed=seed, **sampler)
        if case.min_ess is not None:
            min_ess = case.min_ess(post)
        else:
            ess = post.ess_bulk()
            names = list(dict.fromkeys([*parameter_names(name), *case.also_ess]))
            min_ess = float(min(np.min(ess[p]) for p in names if p in ess and ess[p].size))
    return {"model": name, "n": n_records, **run_costs(post, sampler, min_ess), "load1": load1}


def run_costs(post: Any, sampler: dict, min_ess: float) -> dict:
    """The cost measures of one fit (``post``, sampled with ``sampler``'s chains, warmup and
    draws) given its minimum bulk ESS: wall time of the Stan run, seconds per 1000 ESS,
    milliseconds per gradient (the run's fixed cost included; gradients estimated from the
    post-warm-up leapfrog steps per iteration), tree depth, divergences, ESS per draw."""
    leap = float(post.sample_stat("n_steps").mean())
    grads = post.num_chains * (sampler["warmup"] + sampler["draws"]) * leap
    return {
        "fit_s": post.elapsed,
        "min_ess_bulk": min_ess,
        "s_per_1k_ess": 1000 * post.elapsed / max(min_ess, 1e-9),
        "ms_per_grad": 1000 * post.elapsed / grads,
        "leapfrog_per_iter": leap,
        "mean_tree_depth": float(post.sample_stat("tree_depth").mean()),
        "divergences": int(post.num_divergences),
        "ess_per_draw": min_ess / (post.num_chains * post.num_draws),
    }


def slope(a: float, b: float, n_a: int, n_b: int) -> float:
    return math.log(b / a) / math.log(n_b / n_a)


# ------------------------------------------------------------------------------ main
def select(patterns: str | None) -> list[str]:
    """The models of the registry whose names match the comma-separated globs ``patterns``
    (all of them when ``patterns`` is empty); exits naming any model of the registry that has
    no case in :data:`CASES` (no ``"benchmark"`` key in its JSON), or a case that names no model."""
    from pystanprivacy.models.registry import model_names

    names = model_names()
    missing = sorted(set(names) - set(CASES))
    if missing:
        raise SystemExit(
            f"no benchmark case for {', '.join(missing)}: add one to CASES "
            f"(a \"benchmark\" key in its stan/<paper>/<model>.json)"
        )
    stale = sorted(set(CASES) - set(names))
    if stale:
        raise SystemExit(f"benchmark cases for models that are not in the registry: {', '.join(stale)}")
    if not patterns:
        return names
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in pats)]
    if not chosen:
        raise SystemExit(f"--models {patterns!r} matches none of {', '.join(names)}")
    return chosen


def fmt(x: Any, spec: str = ".3g") -> str:
    if isinstance(x, float):
        return "nan" if not math.isfinite(x) else format(x, spec)
    return str(x)


def model_row(
    name: str,
    *,
    quick: bool = False,
    sampler: dict | None = None,
    seed: int = 1,
    load: bool = True,
    cold: dict | None = None,
) -> dict:
    """One row of the table: fresh-process load time (unless ``load`` is false) and a fit at
    the case's small and large n (``quick``: the ``--quick`` sizes; ``sampler``: default
    ``SAMPLER`` or ``QUICK_SAMPLER``); ``cold``: the model's :func:`cold_compile` row, if any."""
    case = CASES[name]
    sampler = sampler if sampler is not None else (QUICK_SAMPLER if quick else SAMPLER)
    small, large = case.quick if quick else case.sizes
    timing = load_time(name) if load else {}
    a, b = (fit_once(name, case, n, sampler, seed) for n in (small, large))
    return {
        "model": name,
        "n_small": a["n"],
        "n_large": b["n"],
        "cold_compile_s": (cold or {}).get("load_s", float("nan")),
        "load_s": timing.get("load_s", float("nan")),
        "proc_s": timing.get("proc_s", float("nan")),
        "s_per_1k_ess_small": a["s_per_1k_ess"],
        "s_per_1k_ess_large": b["s_per_1k_ess"],
        "slope": slope(a["s_per_1k_ess"], b["s_per_1k_ess"], a["n"], b["n"]),
        "grad_slope": slope(a["ms_per_grad"], b["ms_per_grad"], a["n"], b["n"]),
        "expected": case.expected,
        "fit_s_small": a["fit_s"],
        "fit_s_large": b["fit_s"],
        "min_ess_bulk_small": a["min_ess_bulk"],
        "min_ess_bulk_large": b["min_ess_bulk"],
        "ms_per_grad_small": a["ms_per_grad"],
        "ms_per_grad_large": b["ms_per_grad"],
        "leapfrog_per_iter": b["leapfrog_per_iter"],
        "mean_tree_depth": b["mean_tree_depth"],
        "divergences": b["divergences"],
        "ess_per_draw": b["ess_per_draw"],
        "ess_per_draw_small": a["ess_per_draw"],
        "divergences_small": a["divergences"],
        "load1": max(a["load1"], b["load1"]),
        "n_is": case.n_is,
    }


COLUMNS = [
    ("model", "model"),
    ("n_small", "n small"),
    ("n_large", "n large"),
    ("load_s", "load s"),
    ("proc_s", "proc s"),
    ("s_per_1k_ess_small", "s/1k ESS small"),
    ("s_per_1k_ess_large", "s/1k ESS large"),
    ("slope", "slope"),
    ("grad_slope", "grad slope"),
    ("expected", "expected"),
    ("leapfrog_per_iter", "leapfrog/iter"),
    ("mean_tree_depth", "tree depth"),
    ("ess_per_draw", "ESS/draw"),
    ("divergences", "div"),
    ("load1", "load1"),
]
TWO_DECIMALS = ("slope", "grad_slope", "load1", "ess_per_draw", "load1_start", "load1_end")


def markdown_table(rows: list[dict], columns: list[tuple[str, str]] | None = None, *, cold: bool = False) -> str:
    """The rows as a Markdown table (``columns``: (key, header) pairs, default ``COLUMNS``;
    ``cold``: with the cold-compile column)."""
    cols = list(COLUMNS if columns is None else columns)
    if cold:
        cols.insert(3, ("cold_compile_s", "cold compile s"))
    lines = ["| " + " | ".join(h for _, h in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        lines.append(
            "| "
            + " | ".join(fmt(r.get(k, ""), ".2f") if k in TWO_DECIMALS else fmt(r.get(k, "")) for k, _ in cols)
            + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    global HMM_STATES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="comma-separated glob(s) of model names, e.g. 'kulkarni2022/*'")
    ap.add_argument("--quick", action="store_true", help="smaller n and 2 x (250 + 250) iterations")
    ap.add_argument(
        "--cold",
        default=None,
        metavar="GLOB",
        help="also compile the matching models into a throwaway cache and time it",
    )
    ap.add_argument("--no-load", action="store_true", help="skip the fresh-process load timings")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--hmm-states",
        type=int,
        default=None,
        help="states of the HMM models (default: their JSON's benchmark settings, 2)",
    )
    ap.add_argument("--out", default=None, help="also write the rows to this CSV file")
    args = ap.parse_args(argv)
    names = select(args.models)
    HMM_STATES = args.hmm_states
    sampler = QUICK_SAMPLER if args.quick else SAMPLER
    started = time.perf_counter()
    print(
        f"sampler {sampler}, cpu count {os.cpu_count()}, load average at start "
        f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}",
        flush=True,
    )

    cold: dict[str, dict] = {}
    if args.cold:
        for name in select(args.cold):
            cold[name] = cold_compile(name)
            print(f"cold compile {name}: {cold[name]['load_s']:.1f} s (load1 {os.getloadavg()[0]:.2f})", flush=True)

    overhead = fixed_cost()
    print(
        f"fixed cost of one Stan run (fixed_param, 1 draw, foulds2016/beta_bernoulli; median of 3): "
        f"{overhead:.3f} s (load1 {os.getloadavg()[0]:.2f})",
        flush=True,
    )
    rows = []
    for name in names:
        rows.append(
            model_row(
                name, quick=args.quick, sampler=sampler, seed=args.seed, load=not args.no_load, cold=cold.get(name)
            )
        )
        print(f"  done {name} ({time.perf_counter() - started:.0f} s so far)", file=sys.stderr, flush=True)

    print("\n" + markdown_table(rows, cold=bool(cold)))
    print(
        f"\n{sampler['chains']} chains x ({sampler['warmup']} + {sampler['draws']}); diagnostics of the large-n "
        f"fit; slopes of s/1k ESS and of ms/gradient in log n; HMM: {HMM_STATES or 2} states, n = log entries; "
        f"total {time.perf_counter() - started:.0f} s"
    )
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
