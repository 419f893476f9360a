#!/usr/bin/env python
"""False-refusal rate of the one-posterior-sampling (OPS) convergence gate (issue 53, item 12).

Every refused OPS attempt costs its epsilon, so a gate that refuses runs on targets that
NUTS samples well wastes budget. This script runs real, seeded OPS runs on targets with a
known, easy law and counts how often the gate refuses them, for the former and the current
defaults. Each run is judged by every gate through the models' own gate code
(:func:`pystanprivacy.models.foulds2016.gate_per_dataset` for the beta-Bernoulli,
:func:`pystanprivacy.models.jewson2023.convergence_problems`, that is
:meth:`~pystanprivacy.sampling.posterior.Posterior.check`, for the others), so the rates of
the former and the current default come from the same runs.

Every attempt is one seeded run; a gate whose setting has fewer draws per chain than the
run judges its first draws (:func:`first_draws`: exactly the run that the same seed with that
many draws gives, warm-up included). Targets, with the sampler settings of the OPS models they
stand for:

* ``beta1d``: :class:`~pystanprivacy.models.foulds2016.BetaBernoulliOPS` on its example
  (n = 100 Bernoulli(0.3) records, a0 = 0.2, epsilon = 1: a 1-D tempered, truncated Beta),
  4 chains x (1000 warm-up + 1000 draws) (the Foulds models' default), gated on p.
* ``logistic``: :class:`~pystanprivacy.models.jewson2023.LogisticRegressionBetaD` on its
  example (n = 100, intercept + 1 feature, epsilon = 1), gated on theta: the former default
  4 x (1000 + 100) and the current :data:`~pystanprivacy.models.jewson2023.OPS_SAMPLER`,
  from one run of the larger.
* ``gauss10``: ``tests/stan/ops_gate_gaussian.stan``, a 10-D Gaussian N(0, Sigma) with
  Sigma_ij = 0.5^|i-j|, gated on x; one run of 4 x (1000 + 1000) judged as each of the
  settings above.

Per target and gate: refusals / attempts and the one-sided 95 % Clopper-Pearson upper bound
on the rate (:func:`pystanprivacy.privacy.audit.clopper_pearson_upper`); per attempt (JSON
with ``--out``): the seed, the run's largest split R-hat, smallest bulk and tail ESS,
divergences and tree-depth hits over the gated quantities (all draws of the run), and each
gate's verdict. Attempt ``i`` of a target uses seed ``seed + i``.

    python benchmarks/ops_gate_false_refusal.py --attempts 400 --targets beta1d,logistic,gauss10
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

PROGRAM = Path(__file__).resolve().parents[1] / "tests" / "stan" / "ops_gate_gaussian.stan"
TARGETS = ("beta1d", "logistic", "gauss10")


def gaussian_data(d: int = 10, rho: float = 0.5, separation: float = 0.0) -> dict[str, Any]:
    """Stan data of ``ops_gate_gaussian.stan``: N(0, Sigma), Sigma_ij = rho^|i-j| (with
    ``separation`` > 0: the equal mixture of N(-/+ separation, Sigma))."""
    idx = np.arange(d)
    sigma = rho ** np.abs(idx[:, None] - idx[None, :])
    return {"D": d, "mu": np.zeros(d), "L": np.linalg.cholesky(sigma), "separation": float(separation)}


def gates(target: str) -> dict[str, tuple[int, Any]]:
    """``label -> (draws per chain judged, thresholds)`` of a target: the former and the
    current default of the OPS models it stands for."""
    from pystanprivacy.models._ops import OPS_GATE
    from pystanprivacy.models.jewson2023 import OPS_SAMPLER
    from pystanprivacy.sampling.posterior import Thresholds

    foulds = {
        "former 4x1000": (1000, Thresholds()),  # split R-hat <= 1.01, ESS >= 100 per chain
        "current 4x1000": (1000, OPS_GATE),
    }
    jewson = {
        "former 4x100": (100, Thresholds(max_rhat=1.05, min_ess_per_chain=25.0)),  # the former beta-D default
        f"current 4x{OPS_SAMPLER['draws']}": (OPS_SAMPLER["draws"], OPS_GATE),
    }
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    return {"beta1d": foulds, "logistic": jewson, "gauss10": {**foulds, **jewson}}[target]


def first_draws(post: Any, n: int) -> Any:
    """``post`` cut to its first ``n`` draws per chain (draws and sampler statistics), with
    ``settings.draws = n``: what the same seeded run with ``draws=n`` gives (Stan's warm-up
    does not depend on the number of draws; ``tests/test_bench_ops_gate.py`` checks it)."""
    from pystanprivacy.sampling.backends.base import RawFit
    from pystanprivacy.sampling.posterior import _STAT_NAMES, Posterior

    if n == post.num_draws:
        return post
    inverse = {v: k for k, v in _STAT_NAMES.items()}
    raw = RawFit(
        variables={k: post.draws(k, combine_chains=False)[:, :n] for k in post.variables},
        sampler={inverse[k]: np.asarray(v)[:, :n].astype(float) for k, v in post._stats.items()},
    )
    return Posterior(
        raw,
        model=post.model,
        backend=post.backend,
        settings=dataclasses.replace(post.settings, draws=n),
        elapsed=post.elapsed,
    )


def runner(
    target: str, draws: int | None = None, warmup: int = 1000
) -> tuple[Callable[[int], Any], str, Callable[[Any, Any], bool]]:
    """``(run(seed) -> Posterior, gated variable, passes(posterior, thresholds))`` of a target:
    4 chains x (``warmup`` + ``draws``), default the most draws its gates judge."""
    from pystanprivacy.models.foulds2016 import BetaBernoulliOPS, gate_per_dataset
    from pystanprivacy.models.jewson2023 import LogisticRegressionBetaD, convergence_problems
    from pystanprivacy.sampling.stan import StanModel

    draws = draws or max(n for n, _ in gates(target).values())
    if target == "beta1d":
        example = BetaBernoulliOPS.example()
        x = example.data["x"][None, :]

        def run(seed: int):
            return example.model.sample_batch(
                x, seed=seed, keep_posterior=True, chains=4, warmup=warmup, draws=draws, **example.kwargs
            ).posterior

        return run, "p", lambda post, t: bool(gate_per_dataset(post, t)[0][0])
    if target == "logistic":
        example = LogisticRegressionBetaD.example()

        def run(seed: int):
            return example.model.try_sample_one(
                example.data["X"],
                example.data["y"],
                seed=seed,
                keep_posterior=True,
                chains=4,
                warmup=warmup,
                draws=draws,
                **example.kwargs,
            ).posterior

        return run, "theta", lambda post, t: not convergence_problems(post, t, ["theta"])
    model = StanModel.get(str(PROGRAM))
    data = gaussian_data()

    def run(seed: int):
        return model.sample(data, chains=4, warmup=warmup, draws=draws, seed=seed)

    return run, "x", lambda post, t: not convergence_problems(post, t, ["x"])


def attempt_row(post: Any, variable: str) -> dict[str, Any]:
    """The run's statistics over the gated variable, for the record (the verdicts come from
    the gate code)."""
    return {
        "max_rhat": float(np.max(post.rhat()[variable])),
        "min_ess_bulk": float(np.min(post.ess_bulk()[variable])),
        "min_ess_tail": float(np.min(post.ess_tail()[variable])),
        "divergences": int(post.num_divergences),
        "treedepth_hits": int(post.num_max_treedepth),
    }


def measure(target: str, attempts: int, seed: int = 0) -> dict[str, Any]:
    """``attempts`` seeded runs of ``target``, each judged by the former and the current gate."""
    from pystanprivacy.privacy.audit import clopper_pearson_upper

    run, variable, passes = runner(target)
    judged = gates(target)
    rows = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded runs' "reproducible, not secure" warning
        for i in range(attempts):
            post = run(seed + i)
            row = {"seed": seed + i, **attempt_row(post, variable)}
            row.update({f"refused {name}": not passes(first_draws(post, n), t) for name, (n, t) in judged.items()})
            rows.append(row)
    seconds = time.perf_counter() - start
    summary = {}
    for name, (n, t) in judged.items():
        k = sum(r[f"refused {name}"] for r in rows)
        summary[name] = {
            "draws": n,
            "thresholds": dataclasses.asdict(t),
            "refused": k,
            "attempts": attempts,
            "upper95": float(clopper_pearson_upper(k, attempts, 0.05)),
        }
    return {"target": target, "attempts": attempts, "seed": seed, "seconds": seconds, "gates": summary, "rows": rows}


def chi2_rhat_rate(max_rhat: float, draws: int, tau: float, chains: int = 4) -> float:
    """Approximate probability that split R-hat exceeds ``max_rhat`` for chains that sample the
    target with integrated autocorrelation time ``tau`` (``draws`` per chain): R-hat^2 =
    (B/W + n - 1)/n with n = draws/2 per split chain and B/W ~ tau chi^2_{2C-1}/(2C-1) for the
    2C split chains, so the rate is P(chi^2_{2C-1} > (2C-1) (n (max_rhat^2 - 1) + 1) / tau).
    The cheap estimate used to choose the thresholds (checked by :func:`simulate_ar1`).

    References
    ----------
    .. [1] Gelman and Rubin (1992), "Inference from iterative simulation using multiple
       sequences", Statistical Science 7(4), 457-472 (the F / chi^2 law of B/W).
    """
    from scipy.stats import chi2

    df = 2 * chains - 1
    n = draws // 2
    return float(chi2.sf(df * (n * (max_rhat**2 - 1.0) + 1.0) / tau, df))


def simulate_ar1(
    phi: float, replicates: int, *, chains: int = 4, draws: int = 1000, seed: int = 0, batch: int = 2000
) -> dict[str, np.ndarray]:
    """Split R-hat, bulk and tail ESS (:mod:`pystanprivacy.sampling.diagnostics`, the gate's
    arithmetic) of ``replicates`` independent sets of ``chains`` stationary AR(1) chains with
    coefficient ``phi`` (autocorrelation time (1 + phi)/(1 - phi)), ``draws`` each."""
    from pystanprivacy.sampling import diagnostics

    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {"rhat": [], "ess_bulk": [], "ess_tail": []}
    scale = np.sqrt(1.0 - phi**2)
    for start in range(0, replicates, batch):
        k = min(batch, replicates - start)
        eps = rng.standard_normal((chains, draws, k))
        x = np.empty_like(eps)
        x[:, 0] = eps[:, 0]
        for t in range(1, draws):
            x[:, t] = phi * x[:, t - 1] + scale * eps[:, t]
        out["rhat"].append(diagnostics.split_rhat(x))
        out["ess_bulk"].append(diagnostics.ess_bulk(x))
        out["ess_tail"].append(diagnostics.ess_tail(x))
    return {k: np.concatenate(v) for k, v in out.items()}


def table(results: list[dict[str, Any]]) -> str:
    """The Markdown table of the summaries."""
    lines = [
        "| target | default | draws/chain | max R-hat | min ESS/chain | refused / attempts | 95 % upper bound |",
        "|---|---|---|---|---|---|---|",
    ]
    for res in results:
        for name, g in res["gates"].items():
            t = g["thresholds"]
            lines.append(
                f"| {res['target']} | {name.split()[0]} | {g['draws']} | {t['max_rhat']:g} | "
                f"{t['min_ess_per_chain']:g} | {g['refused']} / {g['attempts']} | {100 * g['upper95']:.2f} % |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attempts", type=int, default=400, help="attempts per target (default 400)")
    ap.add_argument("--targets", default=",".join(TARGETS), help=f"comma-separated, of {', '.join(TARGETS)}")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first attempt (default 0)")
    ap.add_argument("--out", type=Path, help="write every attempt's row and the summaries here (JSON)")
    args = ap.parse_args(argv)
    context = {
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "load1_start": os.getloadavg()[0],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    results = []
    for target in args.targets.split(","):
        results.append(measure(target, args.attempts, args.seed))
        print(f"{target}: {results[-1]['seconds']:.0f} s", file=sys.stderr, flush=True)
        if args.out:  # after every target, so that a long run keeps what it measured
            args.out.write_text(json.dumps({"context": context, "results": results}, indent=1))
    context["load1_end"] = os.getloadavg()[0]
    print(json.dumps(context))
    print(table(results))
    if args.out:
        args.out.write_text(json.dumps({"context": context, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
