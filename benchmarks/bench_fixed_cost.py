"""The fixed cost of a Stan fit, and what it costs the Bernstein & Sheldon binomial fit.

1. ``fixed``: the wall time of a warm ``StanModel.fixed_param(data, draws=1)`` on
   ``foulds2016/beta_bernoulli`` (1 chain x 1 draw: the Stan run itself takes microseconds, so
   this is what every fit pays on top of its sampling), and of a warm 4 x (0 + 1) NUTS fit;
   median (and quartiles) of ``--repeats`` fits after one warm-up fit in the same process.
   CPU seconds of this process are reported beside the wall time (a fit that mostly waits
   has CPU << wall).
2. ``ess``: the paper's binomial problem (n = 1000, eps = 0.1, one data set, the release of
   ``bench_bernstein2018``): ``BinomialBeta`` on Stan, 4 x (1000 + 1000), against the library's
   vectorised numpy Gibbs sampler (``experiments.bernstein2018.baselines.gibbs_posterior``, the
   paper's run length 4 x (2000 + 5000)); min bulk ESS of theta per wall second, one row per
   repeat, side by side in one process.
3. ``--authors DIR``: also the authors' own Gibbs sampler (Bernstein & Sheldon's
   ``Bounded_Suff_Stats`` code, https://github.com/gbernstein6/private_bayesian_expfam; not part
   of this repository: pass the folder holding its ``Gibbs.py`` and ``distributions.py``) on the
   same noisy count, 4 chains of its driver's length (500 + 1000), ESS computed the same way.

4. ``--former``: every Stan row is measured twice, alternating, with the pystan backend's current
   fit and with its former one (stock pystan: ``stan.build(...).sample(...)`` through httpstan's
   HTTP API on the backend's private Unix socket, as the backend ran fits before issue 54), so
   that before and after come from one run under the same load.

Run:

    python benchmarks/bench_fixed_cost.py [--repeats 50] [--ess-repeats 5] [--former] [--authors DIR] [--json out.json]

Timings are wall clock on a shared machine: compare the rows of one run, and note the load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import sys
import time
import warnings

import numpy as np

BB_DATA = {"R": 1, "successes": [6.0], "failures": [14.0], "prior_alpha": 1.0, "prior_beta": 1.0}


def _former_run(self, handle, data, settings, workdir):
    """The pystan backend's ``run`` as it was before issue 54 (stock pystan through httpstan's
    HTTP API on the private Unix socket), for side-by-side timings."""
    import stan
    from pystanprivacy.sampling.backends import pystan_backend as pb
    from pystanprivacy.sampling.backends.base import SAMPLER_COLUMNS, RawFit, chain_process_cap

    program, root = handle
    kwargs = {"num_chains": settings.chains, "num_samples": settings.draws, "num_thin": settings.thin}
    if not settings.fixed_param:
        kwargs.update(num_warmup=settings.warmup, delta=settings.adapt_delta, max_depth=settings.max_treedepth)
    if settings.init is not None:
        kwargs["init"] = [dict(i) for i in settings.init]
    with pb._RUN_LOCK:
        pb._ensure_chain_pool(chain_process_cap())
        try:
            with pb._private_request(root, workdir):
                posterior = stan.build(program, data=dict(data), random_seed=int(settings.seed))
                fit = (posterior.fixed_param if settings.fixed_param else posterior.sample)(**kwargs)
            if fit is None:
                raise KeyboardInterrupt
        except BaseException:
            pb._kill_chain_pool()
            raise
    chains, n_draws = settings.chains, fit._draws.shape[1]

    def per_chain(flat):
        return flat.reshape(*flat.shape[:-1], n_draws, chains)

    variables = {}
    for name, dims in zip(fit.param_names, fit.dims):
        if 0 in dims:
            variables[name] = np.zeros((chains, n_draws, *dims))
            continue
        arr = per_chain(np.asarray(fit[name]).reshape(*dims, -1) if dims else np.asarray(fit[name]).reshape(-1))
        nd = len(dims)
        arr = np.moveaxis(arr, [nd, nd + 1], [1, 0]) if nd else arr.T
        variables[name] = np.ascontiguousarray(arr, dtype=float)
    sampler = {
        col: np.ascontiguousarray(per_chain(np.asarray(fit[col]).reshape(-1)).T, dtype=float)
        for col in SAMPLER_COLUMNS
        if col in fit.sample_and_sampler_param_names
    }
    return RawFit(variables=variables, sampler=sampler)


@contextlib.contextmanager
def _backend(path: str):
    """``path`` "current": the pystan backend as it is; "former": its run replaced by :func:`_former_run`."""
    from pystanprivacy.sampling.backends.pystan_backend import PystanBackend

    current = PystanBackend.run
    if path == "former":
        PystanBackend.run = _former_run
    try:
        yield
    finally:
        PystanBackend.run = current


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _quartiles(values: list[float]) -> dict:
    q = np.quantile(values, [0.25, 0.5, 0.75])
    return {"q1": float(q[0]), "median": float(q[1]), "q3": float(q[2]), "n": len(values)}


def fixed_cost(repeats: int, paths: tuple[str, ...]) -> dict:
    """Warm 1 x 1 fixed_param fits and 4 x (0 + 1) NUTS fits, each backend path in turn per
    repeat: wall and CPU seconds of this process."""
    from pystanprivacy.sampling.stan import StanModel

    model = StanModel.get("foulds2016/beta_bernoulli")
    out = {}
    cases = {
        "fixed_param 1 chain x 1 draw": lambda seed: model.fixed_param(BB_DATA, draws=1, seed=seed),
        "NUTS 4 chains x (0 + 1)": lambda seed: model.sample(BB_DATA, chains=4, warmup=0, draws=1, seed=seed),
    }
    for name, fit in cases.items():
        walls: dict = {p: [] for p in paths}
        cpus: dict = {p: [] for p in paths}
        for path in paths:
            with _backend(path):
                fit(0)  # warm: the chain pool is started, the module loaded
        for seed in range(1, repeats + 1):
            for path in paths:
                with _backend(path):
                    c, t = _cpu(), time.perf_counter()
                    fit(seed)
                    walls[path].append(time.perf_counter() - t)
                    cpus[path].append(_cpu() - c)
        for path in paths:
            out[f"{name} ({path})"] = {"wall_s": _quartiles(walls[path]), "cpu_s_parent": _quartiles(cpus[path])}
    return out


def _release():
    from pystanprivacy.models.bernstein2018 import BinomialBeta, simulate_statistics

    model = BinomialBeta()
    s, _ = simulate_statistics("binomial", 1000, 1, 2)
    return model, model.release_statistics(s, n=1000, epsilon=0.1, seed=3)  # bench_bernstein2018's release


def _min_ess_theta(post) -> float:
    return float(np.min(post.ess_bulk()["theta"]))


def ess_rows(repeats: int, authors: str | None, paths: tuple[str, ...]) -> list[dict]:
    """Stan (each backend path), the library's Gibbs and (with ``authors``) the authors' Gibbs,
    alternated per repeat."""
    from pystanprivacy.experiments.bernstein2018.baselines import gibbs_posterior

    model, rel = _release()
    _ = model.stan_model  # compiled/loaded outside the timing
    for path in paths:
        with _backend(path), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            model.fit(rel, seed=1, chains=4, warmup=1000, draws=1000)  # warm the chain pool
    rows = []
    for rep in range(repeats):
        for path in paths:
            with _backend(path), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                t = time.perf_counter()
                post = model.fit(rel, seed=20 + rep, chains=4, warmup=1000, draws=1000)
                seconds = time.perf_counter() - t
            rows.append(
                {
                    "method": f"BinomialBeta, Stan 4 x (1000 + 1000) ({path})",
                    "rep": rep,
                    "seconds": seconds,
                    "min_ess_bulk": _min_ess_theta(post),
                    "mean": float(post.draws("theta").mean()),
                }
            )
        t = time.perf_counter()
        post = gibbs_posterior(model, rel, seed=30 + rep, chains=4, burnin=2000, iterations=5000)
        seconds = time.perf_counter() - t
        rows.append(
            {
                "method": "library numpy Gibbs 4 x (2000 + 5000)",
                "rep": rep,
                "seconds": seconds,
                "min_ess_bulk": _min_ess_theta(post),
                "mean": float(post.draws("theta").mean()),
            }
        )
        if authors is not None:
            rows.append(_authors_row(authors, rel, rep))
    for r in rows:
        r["ess_per_s"] = r["min_ess_bulk"] / r["seconds"]
    return rows


def _authors_row(folder: str, rel, rep: int) -> dict:
    """The authors' ``Gibbs.calculate_Gibbs_posterior`` with their ``Beta_Binomial`` pair (prior
    Beta(10, 10), as ``BinomialBeta``'s default) on the same noisy count, as their ``driver.py``
    calls it (one chain of 500 + 1000 iterations); 4 chains one after the other, bulk ESS by the
    library's estimator (``sampling.diagnostics.ess_bulk``, ArviZ's)."""
    from pystanprivacy.sampling.diagnostics import ess_bulk

    sys.path.insert(0, folder)
    try:
        import Gibbs  # the authors' module
        from distributions import Beta_Binomial  # the authors' module
    finally:
        sys.path.remove(folder)
    noisy = np.asarray(rel.values, dtype=float).reshape(1, 1)  # the driver's (s, 1) statistic
    chains = []
    t = time.perf_counter()
    for chain in range(4):
        np.random.seed(1000 * rep + chain)
        chains.append(Gibbs.calculate_Gibbs_posterior(noisy, Beta_Binomial(), 1e3, 0.1)[0])
    seconds = time.perf_counter() - t
    draws = np.stack(chains)
    return {
        "method": "authors' Gibbs 4 x (500 + 1000)",
        "rep": rep,
        "seconds": seconds,
        "min_ess_bulk": float(ess_bulk(draws)),
        "mean": float(draws.mean()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=50, help="warm fits per fixed-cost case")
    ap.add_argument("--ess-repeats", type=int, default=5)
    ap.add_argument("--parts", default="fixed,ess")
    ap.add_argument("--authors", help="folder of the authors' Bounded_Suff_Stats code (Gibbs.py)")
    ap.add_argument("--former", action="store_true", help="also time the backend's former (stock pystan) fit")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    paths = ("current", "former") if args.former else ("current",)
    result: dict = {"load_before": os.getloadavg()}
    if "fixed" in parts:
        result["fixed"] = fixed_cost(args.repeats, paths)
        print(f"warm fits of foulds2016/beta_bernoulli, {args.repeats} each (seconds):")
        print(f"{'case':42s} {'wall q1':>8s} {'median':>8s} {'q3':>8s} {'parent CPU median':>18s}")
        for name, r in result["fixed"].items():
            w = r["wall_s"]
            print(f"{name:42s} {w['q1']:8.4f} {w['median']:8.4f} {w['q3']:8.4f} {r['cpu_s_parent']['median']:18.4f}")
    if "ess" in parts:
        rows = ess_rows(args.ess_repeats, args.authors, paths)
        result["ess"] = rows
        print("\nbinomial, n = 1000, eps = 0.1, one data set (min bulk ESS of theta per wall second):")
        print(f"{'method':50s} {'rep':>3s} {'seconds':>8s} {'min ESS':>8s} {'ESS/s':>8s} {'mean':>7s}")
        for r in rows:
            print(
                f"{r['method']:50s} {r['rep']:3d} {r['seconds']:8.3f} {r['min_ess_bulk']:8.0f} "
                f"{r['ess_per_s']:8.0f} {r['mean']:7.4f}"
            )
        for method in dict.fromkeys(r["method"] for r in rows):
            sel = [r["ess_per_s"] for r in rows if r["method"] == method]
            print(f"{method:50s} median ESS/s {statistics.median(sel):8.0f}")
    result["load_after"] = os.getloadavg()
    print(f"\nload average before {result['load_before']}, after {result['load_after']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
