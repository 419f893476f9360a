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

Data come from each model's own Python class (release + data functions) through the data
builders of the paper benchmarks (``bench_bernstein2018._release``,
``bench_kulkarni2022.make_release``, ``bench_kulkarni2022_regression.make_data``,
``bench_hmm.make_counts``, ``bench_jewson2023.make_cases``).

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
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The paper uses 10 states. On the synthetic logs, 5 (or 10) states leave the chains in
# different modes (split R-hat ~2 after label alignment), so an ESS is not meaningful there;
# 2 states mix (R-hat < 1.05). The cost per gradient at K = 10 is in bench_hmm.py.
HMM_STATES = 2
HMM_EPSILON = 5.0


# ----------------------------------------------------------------------------- cases
# Each builder takes (n, seed) and returns (fit, n_records): ``fit(**sampler)`` runs the
# model's own fit path on data built beforehand and returns a Posterior.
def _binary(n: int, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(n) < 0.3).astype(np.int64)


def _beta_bernoulli(n: int, seed: int):
    from pystanprivacy.models.foulds2016 import BetaBernoulli

    rng = np.random.default_rng(seed)
    model = BetaBernoulli()
    release = model.release(_binary(n, rng), epsilon=1.0, seed=rng)
    return (lambda **s: model.fit(release, **s)), n


def _beta_bernoulli_ops(n: int, seed: int):
    from pystanprivacy.models.foulds2016 import BetaBernoulliOPS

    rng = np.random.default_rng(seed)
    model = BetaBernoulliOPS()
    x = _binary(n, rng)[None, :]
    return (lambda **s: model.sample_batch(x, epsilon=1.0, allow_unconverged=True, keep_posterior=True,
                                           **s).posterior), n


def _hmm(ops: bool):
    def build(entries: int, seed: int):
        from bench_hmm import make_counts
        from pystanprivacy.models.foulds2016_hmm import NaiveBayesHMM, NaiveBayesHMMOPS

        counts = make_counts(entries, seed)
        if ops:
            model = NaiveBayesHMMOPS(HMM_STATES)
            fit = lambda **s: model.sample(counts, epsilon=HMM_EPSILON, allow_unconverged=True,  # noqa: E731
                                           keep_posterior=True, **s).posterior
        else:
            model = NaiveBayesHMM(HMM_STATES)
            release = model.release(counts, epsilon=HMM_EPSILON, seed=seed)
            fit = lambda **s: model.fit(release, **s)  # noqa: E731
        return fit, int(counts.n_records)
    return build


def _bernstein(kind: str, exact: bool = False):
    def build(n: int, seed: int):
        from bench_bernstein2018 import _release
        from pystanprivacy.models.bernstein2018 import BinomialBetaExact

        model, release = _release(kind, n, 0.1, 1, seed)
        if exact:
            model = BinomialBetaExact()
        return (lambda **s: model.fit(release, **s)), n
    return build


def _kulkarni(kind: str):
    def build(n: int, seed: int):
        from bench_kulkarni2022 import make_release

        model, release = make_release(kind, n, 1.0, np.random.default_rng(seed))
        return (lambda **s: model.fit(release, **s)), n
    return build


def _regression(cls_name: str, kind: str):
    def build(n: int, seed: int):
        from bench_kulkarni2022_regression import make_data
        from pystanprivacy.models import kulkarni2022_regression as K

        rng = np.random.default_rng(seed)
        x, y = make_data(n, kind, rng)
        cls = getattr(K, cls_name)
        if cls_name.startswith("NonPrivate"):
            model = cls()
            return (lambda **s: model.fit_nonprivate(x, y, **s)), n
        release = cls.release(x, y, epsilon=4.0, seed=rng, **({"R_y": 1.0} if kind == "linear" else {}))
        model = cls()
        return (lambda **s: model.fit(release, **s)), n
    return build


def _jewson(index: int):
    def build(n: int, seed: int):
        from bench_jewson2023 import make_cases

        _, model, X, y, eps = make_cases(n)[index]
        return (lambda **s: model.generalised_posterior(X, y, epsilon=eps, **s)), n
    return build


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


@dataclasses.dataclass(frozen=True)
class Case:
    build: Callable[[int, int], tuple[Callable[..., Any], int]]
    sizes: tuple[int, int]          # (small, large) n
    quick: tuple[int, int]          # with --quick
    expected: str                   # expected scaling of the cost in n
    n_is: str = "records"
    min_ess: Callable[[Any], float] | None = None  # default: min bulk ESS over the parameters block
    also_ess: tuple[str, ...] = ()  # derived quantities also in the min ESS (a reparameterised model's outputs)


CASES: dict[str, Case] = {
    "foulds2016/beta_bernoulli": Case(_beta_bernoulli, (100, 1_000_000), (100, 100_000), "flat (counts)"),
    "foulds2016/beta_bernoulli_ops": Case(_beta_bernoulli_ops, (100, 1_000_000), (100, 100_000), "flat (counts)"),
    "foulds2016/nb_hmm": Case(_hmm(False), (10, 1000), (10, 300), "flat (counts per cell)",
                              "log entries", _hmm_min_ess),
    "foulds2016/nb_hmm_ops": Case(_hmm(True), (10, 1000), (10, 300), "flat (counts per cell)",
                                  "log entries", _hmm_min_ess),
    "bernstein2018/binomial_beta": Case(_bernstein("binomial"), (100, 1_000_000), (100, 100_000), "flat (CLT)"),
    "bernstein2018/binomial_beta_exact": Case(_bernstein("binomial", exact=True), (100, 10_000), (100, 3_000),
                                              "linear (sum over 0..n)"),
    "bernstein2018/multinomial_dirichlet": Case(_bernstein("multinomial"), (100, 1_000_000), (100, 100_000),
                                                "flat (CLT)"),
    "bernstein2018/exponential_gamma": Case(_bernstein("exponential"), (100, 1_000_000), (100, 100_000),
                                            "flat (CLT)"),
    "kulkarni2022/gaussian": Case(_kulkarni("gaussian"), (1_000, 10_000), (300, 3_000), "linear (per user)"),
    "kulkarni2022/exponential": Case(_kulkarni("exponential"), (1_000, 10_000), (300, 3_000), "linear (per user)"),
    "kulkarni2022/histogram_oue": Case(_kulkarni("histogram"), (1_000, 100_000), (1_000, 30_000),
                                       "flat (fixed d)"),
    # theta is a transformed parameter in these two (sampled as b = L_x' theta when the data pin
    # Sigma): its ESS counts too
    "kulkarni2022/linear_regression_ss": Case(_regression("LinearRegressionSS", "linear"), (1_000, 100_000),
                                              (1_000, 30_000), "flat (sums)", also_ess=("theta",)),
    "kulkarni2022/logistic_regression_ss": Case(_regression("LogisticRegressionSS", "logistic"), (1_000, 100_000),
                                                (1_000, 30_000), "flat (sums)", also_ess=("theta",)),
    # the likelihood goes through the (d+1)x(d+1) scatter matrix of the reports: O(n d^2) once,
    # O(d^3) per gradient
    "kulkarni2022/linear_regression_inputs": Case(_regression("LinearRegressionInputs", "linear"), (1_000, 100_000),
                                                  (1_000, 30_000), "flat (scatter matrix)"),
    "kulkarni2022/logistic_regression_inputs": Case(_regression("LogisticRegressionInputs", "logistic"),
                                                    (300, 3_000), (200, 1_000), "linear (per user)"),
    "kulkarni2022/linear_regression_nonprivate": Case(_regression("NonPrivateLinearRegression", "linear"),
                                                      (1_000, 10_000), (300, 3_000), "linear (per record)"),
    "kulkarni2022/logistic_regression_nonprivate": Case(_regression("NonPrivateLogisticRegression", "logistic"),
                                                        (1_000, 10_000), (300, 3_000), "linear (per record)"),
    "jewson2023/logistic": Case(_jewson(0), (100, 1_000), (100, 300), "linear (per record)"),
    "jewson2023/linear_regression": Case(_jewson(1), (100, 1_000), (100, 300), "linear (per record)"),
    "jewson2023/nn_classifier": Case(_jewson(2), (50, 200), (50, 150), "linear (per record)"),
    "jewson2023/nn_regression": Case(_jewson(3), (50, 200), (50, 150), "linear (per record)"),
}

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
    out = subprocess.run([sys.executable, "-c", LOAD_CHILD, name], capture_output=True, text=True, env=env,
                         check=True)
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
    steps = post.sample_stat("n_steps")
    leap = float(steps.mean())
    # gradients of the whole run, estimated from the post-warm-up steps per iteration
    grads = post.num_chains * (sampler["warmup"] + sampler["draws"]) * leap
    return {
        "model": name, "n": n_records, "fit_s": post.elapsed, "min_ess_bulk": min_ess,
        "s_per_1k_ess": 1000 * post.elapsed / max(min_ess, 1e-9),
        "ms_per_grad": 1000 * post.elapsed / grads, "leapfrog_per_iter": leap,
        "mean_tree_depth": float(post.sample_stat("tree_depth").mean()),
        "divergences": int(post.num_divergences),
        "ess_per_draw": min_ess / (post.num_chains * post.num_draws), "load1": load1,
    }


def slope(a: float, b: float, n_a: int, n_b: int) -> float:
    return math.log(b / a) / math.log(n_b / n_a)


# ------------------------------------------------------------------------------ main
def select(patterns: str | None) -> list[str]:
    """The models of the registry whose names match the comma-separated globs ``patterns``
    (all of them when ``patterns`` is empty); exits naming any model of the registry that has
    no case in :data:`CASES`, or a case that names no model."""
    from pystanprivacy.models.registry import model_names

    names = model_names()
    missing = sorted(set(names) - set(CASES))
    if missing:
        raise SystemExit(f"no benchmark case for {', '.join(missing)}: add one to CASES")
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


def model_row(name: str, *, quick: bool = False, sampler: dict | None = None, seed: int = 1, load: bool = True,
              cold: dict | None = None) -> dict:
    """One row of the table: fresh-process load time (unless ``load`` is false) and a fit at
    the case's small and large n (``quick``: the ``--quick`` sizes; ``sampler``: default
    ``SAMPLER`` or ``QUICK_SAMPLER``); ``cold``: the model's :func:`cold_compile` row, if any."""
    case = CASES[name]
    sampler = sampler if sampler is not None else (QUICK_SAMPLER if quick else SAMPLER)
    small, large = case.quick if quick else case.sizes
    timing = load_time(name) if load else {}
    a, b = (fit_once(name, case, n, sampler, seed) for n in (small, large))
    return {
        "model": name, "n_small": a["n"], "n_large": b["n"],
        "cold_compile_s": (cold or {}).get("load_s", float("nan")),
        "load_s": timing.get("load_s", float("nan")), "proc_s": timing.get("proc_s", float("nan")),
        "s_per_1k_ess_small": a["s_per_1k_ess"], "s_per_1k_ess_large": b["s_per_1k_ess"],
        "slope": slope(a["s_per_1k_ess"], b["s_per_1k_ess"], a["n"], b["n"]),
        "grad_slope": slope(a["ms_per_grad"], b["ms_per_grad"], a["n"], b["n"]),
        "expected": case.expected,
        "fit_s_small": a["fit_s"], "fit_s_large": b["fit_s"],
        "min_ess_bulk_small": a["min_ess_bulk"], "min_ess_bulk_large": b["min_ess_bulk"],
        "ms_per_grad_small": a["ms_per_grad"], "ms_per_grad_large": b["ms_per_grad"],
        "leapfrog_per_iter": b["leapfrog_per_iter"], "mean_tree_depth": b["mean_tree_depth"],
        "divergences": b["divergences"], "ess_per_draw": b["ess_per_draw"],
        "ess_per_draw_small": a["ess_per_draw"], "divergences_small": a["divergences"],
        "load1": max(a["load1"], b["load1"]), "n_is": case.n_is,
    }


COLUMNS = [("model", "model"), ("n_small", "n small"), ("n_large", "n large"), ("load_s", "load s"),
           ("proc_s", "proc s"), ("s_per_1k_ess_small", "s/1k ESS small"), ("s_per_1k_ess_large", "s/1k ESS large"),
           ("slope", "slope"), ("grad_slope", "grad slope"), ("expected", "expected"),
           ("leapfrog_per_iter", "leapfrog/iter"), ("mean_tree_depth", "tree depth"),
           ("ess_per_draw", "ESS/draw"), ("divergences", "div"), ("load1", "load1")]
TWO_DECIMALS = ("slope", "grad_slope", "load1", "ess_per_draw", "load1_start", "load1_end")


def markdown_table(rows: list[dict], columns: list[tuple[str, str]] | None = None, *, cold: bool = False) -> str:
    """The rows as a Markdown table (``columns``: (key, header) pairs, default ``COLUMNS``;
    ``cold``: with the cold-compile column)."""
    cols = list(COLUMNS if columns is None else columns)
    if cold:
        cols.insert(3, ("cold_compile_s", "cold compile s"))
    lines = ["| " + " | ".join(h for _, h in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(k, ""), ".2f") if k in TWO_DECIMALS else fmt(r.get(k, ""))
                                       for k, _ in cols) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    global HMM_STATES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=None, help="comma-separated glob(s) of model names, e.g. 'kulkarni2022/*'")
    ap.add_argument("--quick", action="store_true", help="smaller n and 2 x (250 + 250) iterations")
    ap.add_argument("--cold", default=None, metavar="GLOB",
                    help="also compile the matching models into a throwaway cache and time it")
    ap.add_argument("--no-load", action="store_true", help="skip the fresh-process load timings")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hmm-states", type=int, default=HMM_STATES, help="states of the HMM models (default 2)")
    ap.add_argument("--out", default=None, help="also write the rows to this CSV file")
    args = ap.parse_args(argv)
    names = select(args.models)
    HMM_STATES = args.hmm_states
    sampler = QUICK_SAMPLER if args.quick else SAMPLER
    started = time.perf_counter()
    print(f"sampler {sampler}, cpu count {os.cpu_count()}, load average at start "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)

    cold: dict[str, dict] = {}
    if args.cold:
        for name in select(args.cold):
            cold[name] = cold_compile(name)
            print(f"cold compile {name}: {cold[name]['load_s']:.1f} s (load1 {os.getloadavg()[0]:.2f})", flush=True)

    overhead = fixed_cost()
    print(f"fixed cost of one Stan run (fixed_param, 1 draw, foulds2016/beta_bernoulli; median of 3): "
          f"{overhead:.3f} s (load1 {os.getloadavg()[0]:.2f})", flush=True)
    rows = []
    for name in names:
        rows.append(model_row(name, quick=args.quick, sampler=sampler, seed=args.seed, load=not args.no_load,
                              cold=cold.get(name)))
        print(f"  done {name} ({time.perf_counter() - started:.0f} s so far)", file=sys.stderr, flush=True)

    print("\n" + markdown_table(rows, cold=bool(cold)))
    print(f"\n{sampler['chains']} chains x ({sampler['warmup']} + {sampler['draws']}); diagnostics of the large-n "
          f"fit; slopes of s/1k ESS and of ms/gradient in log n; HMM: {HMM_STATES} states, n = log entries; "
          f"total {time.perf_counter() - started:.0f} s")
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
