"""Mode masses and the OPS HMM's release rule on the real Afghanistan war diary (issue 64).

:func:`mode_mass_cost` fits the Laplace HMM from dispersed starts and estimates the posterior
mass of every mode its chains found (:func:`~pystanprivacy.models.foulds2016_hmm.modes.laplace_mode_masses`):
the modes, their log masses and weights (labelled ``"posterior (mode-mass weighted)"``), next to
the stacking weights (``"stacked predictive"``) and the chain-count shares, and what the mass
estimate cost on top of the fit.

:func:`ops_release_study` runs the OPS HMM's default release rule
(:meth:`~pystanprivacy.models.foulds2016_hmm.NaiveBayesHMMOPS.sample_one`: dispersed starts,
``select="top-mode"``, :data:`~pystanprivacy.models._ops.OPS_GATE`) through
:meth:`~pystanprivacy.models.foulds2016_hmm.NaiveBayesHMMOPS.sample` (the same rule, no
accountant, the run's statistics kept) at several ε: whether each attempt released or refused,
why, and which mode the released draw came from (the rank of its chain's mean log-likelihood
among the modes found: 0 = the highest). Both write nothing private anywhere but the returned
tables: they are studies on data the caller may read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int, check_random_state
from ...models._ops import OPS_GATE
from ...models.foulds2016_hmm import NaiveBayesHMM, NaiveBayesHMMOPS
from ...models.foulds2016_hmm.chains import chain_summary
from ...models.foulds2016_hmm.init import DEFAULT_MAX_TREEDEPTH
from ...models.foulds2016_hmm.modes import DEFAULT_MIN_LOG_GAP, laplace_mode_masses
from ...sampling.modes import POSTERIOR_MODE_MASS
from ...sampling.stacking import STACKED_PREDICTIVE
from .warlogs import WarLogCounts

__all__ = ["OPS_SAMPLER", "mode_mass_cost", "ops_release_study", "real_diary_study", "write_table"]

#: the sampler of :func:`ops_release_study`: 4 chains (best EM, own EM, k-means, prior draw)
OPS_SAMPLER = {"chains": 4, "warmup": 500, "draws": 500, "max_treedepth": DEFAULT_MAX_TREEDEPTH}


def mode_mass_cost(
    counts: WarLogCounts,
    *,
    n_states: int,
    epsilon: float = 1.0,
    chains: int = 8,
    warmup: int = 500,
    draws: int = 500,
    tol: float = 50.0,
    seed: Any = 0,
) -> dict[str, Any]:
    """A Laplace fit from dispersed starts and its modes' masses, with what each step cost.

    Returns a dict: ``fit_seconds``, ``mass_seconds`` (grouping, alignment, log densities and
    bridge sampling), ``n_modes``, ``chain_modes``, ``mean_log_lik`` (per mode), ``log_mass``
    and ``log_mass_sd`` (per mode), ``weights`` (posterior mode-mass weighted), ``chain_share``
    (share of chains per mode: what pooling weighs by), ``stacking_mode_weights`` (stacking
    weights summed per mode: a predictive) and the settings.
    """
    epsilon = check_epsilon(epsilon)
    rng = check_random_state(seed)
    release = NaiveBayesHMM.release(counts, epsilon=epsilon, seed=rng)
    model = NaiveBayesHMM(check_int(n_states, "n_states", minimum=1))
    start = time.perf_counter()
    post = model.fit(release, init="dispersed", chains=chains, warmup=warmup, draws=draws, seed=rng)
    fit_seconds = time.perf_counter() - start
    found = laplace_mode_masses(model, post, release, tol=tol, seed=rng)
    summary = chain_summary(post, release.values, tol=tol)
    labels = found.modes.labels
    n_modes = found.modes.n_modes
    return {
        "n_states": n_states,
        "epsilon": epsilon,
        "chains": chains,
        "warmup": warmup,
        "draws": draws,
        "tol": tol,
        "parameters": (n_states + 1) * (n_states - 1)
        + (sum(counts.feature_sizes) - len(counts.feature_sizes)) * n_states,
        "fit_seconds": fit_seconds,
        "mass_seconds": found.seconds,
        "n_modes": n_modes,
        "chain_modes": labels.tolist(),
        "mean_log_lik": found.modes.centres[:, 0].tolist(),
        "log_mass": found.masses.log_mass.tolist(),
        "log_mass_sd": found.masses.log_sd.tolist(),
        "weights": found.masses.weights.tolist(),
        "weights_estimate": POSTERIOR_MODE_MASS,
        "chain_share": (np.bincount(labels, minlength=n_modes) / labels.size).tolist(),
        "stacking_mode_weights": np.bincount(labels, weights=summary.weights, minlength=n_modes).tolist(),
        "stacking_estimate": STACKED_PREDICTIVE,
        "rhat_log_lik": summary.rhat_log_lik,
    }


def ops_release_study(
    counts: WarLogCounts,
    *,
    epsilons: Sequence[float] = (1.0, 2.0, 5.0),
    n_states: int = 3,
    attempts: int = 2,
    multiplier: float = 100.0,
    sampler: dict[str, int] | None = None,
    min_log_gap: float = DEFAULT_MIN_LOG_GAP,
    seed: Any = 0,
) -> pd.DataFrame:
    """``attempts`` runs of the OPS HMM's default release rule per ε: one row per attempt.

    Columns: ``epsilon``, ``attempt``, ``temperature``, ``released``, ``refused_by`` (``""``,
    ``"mode rule"`` (no decisive mode), ``"gate"`` (the top mode's chains failed
    :data:`OPS_GATE`) or both), ``n_modes``, ``top_chains`` (chains in the mode of highest
    mass), ``log_gap`` and ``log_gap_sd`` (tempered log mass of the top mode over the next),
    ``released_mode_rank`` (rank of the released draw's mode by mean log-likelihood, 0 = highest;
    -1 when refused), ``released_below_best`` (the released chain's mean log-likelihood below the
    best chain's), ``spread_log_lik`` (largest difference of the chains' mean log-likelihoods)
    ``mass_seconds`` (the mode masses' share of the run) and ``seconds``.
    """
    rng = check_random_state(seed)
    sampler = dict(OPS_SAMPLER if sampler is None else sampler)
    attempts = check_int(attempts, "attempts", minimum=1)
    rows = []
    ops = NaiveBayesHMMOPS(check_int(n_states, "n_states", minimum=1), multiplier=multiplier)
    for eps in epsilons:
        eps = check_epsilon(eps)
        for attempt in range(attempts):
            start = time.perf_counter()
            res = ops.sample(
                counts,
                epsilon=eps,
                seed=rng,
                thresholds=OPS_GATE,
                init="dispersed",
                select="top-mode",
                min_log_gap=min_log_gap,
                keep_posterior=True,
                **sampler,
            )
            info = res.details["modes"]
            chain_means = res.posterior.draws("log_lik", combine_chains=False).mean(axis=1)
            mode_of = np.asarray(info["chain_modes"])
            by_rank = np.argsort(-np.asarray(info["mean_log_lik"]))
            rank_of_mode = np.empty_like(by_rank)
            rank_of_mode[by_rank] = np.arange(by_rank.size)
            released = res.release is not None
            chain = info.get("released_chain", -1)
            rule_words = ("no decisive mode", "the masses of the")
            mode_rule = any(p.startswith(rule_words) for p in res.problems)
            gate = any(not p.startswith(rule_words) for p in res.problems)
            rows.append(
                {
                    "n_states": n_states,
                    "epsilon": eps,
                    "attempt": attempt,
                    "temperature": res.details["temperature"],
                    "released": released,
                    "refused_by": " and ".join(
                        name for name, hit in (("mode rule", mode_rule), ("gate", gate)) if hit and not released
                    ),
                    "n_modes": info["n_modes"],
                    "top_chains": len(info["top_chains"]),
                    "top_mode_rank": int(rank_of_mode[info["top_mode"]]),
                    "masses_reliable": bool(info["reliable"]),
                    "log_gap": info["log_gap"],
                    "log_gap_sd": info["log_gap_sd"],
                    "released_mode_rank": int(rank_of_mode[mode_of[chain]]) if released else -1,
                    "released_below_best": float(chain_means.max() - chain_means[chain]) if released else float("nan"),
                    "spread_log_lik": float(np.ptp(chain_means)),
                    "mass_seconds": info["seconds"],
                    "seconds": time.perf_counter() - start,
                }
            )
    return pd.DataFrame(rows)


def write_table(table: pd.DataFrame, path: str | Path, *, meta: dict[str, Any]) -> None:
    """``path`` with suffix .csv (the table) and .json (``meta`` and the rows)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path.with_suffix(".csv"), index=False)
    rows = json.loads(table.to_json(orient="records"))
    path.with_suffix(".json").write_text(json.dumps({**meta, "rows": rows}, indent=2) + "\n")


def real_diary_study(
    *,
    diary: str | Path = "data/afg_war_diary.csv.gz",
    out: str | Path = "results/foulds2016/ops_hmm_real_diary",
    n_states: Sequence[int] = (3,),
    epsilons: Sequence[float] = (1.0, 2.0, 5.0),
    attempts: int = 2,
    seed: int = 64,
) -> pd.DataFrame:
    """:func:`ops_release_study` on the real Afghanistan diary (:func:`~.warlogs.load_war_logs`)
    for every K in ``n_states``, written to ``out`` .csv / .json with the settings."""
    from .warlogs import load_war_logs

    counts = load_war_logs(diary)
    meta = {
        "data": f"{Path(diary).name}: {counts.n_records} records, {counts.counts.shape[0]} regions x "
        f"{counts.counts.shape[1]} months",
        "rule": "NaiveBayesHMMOPS default release rule (init='dispersed', select='top-mode', OPS_GATE), "
        "run through sample() so that each attempt's modes are kept",
        "sampler": OPS_SAMPLER,
        "multiplier": 100.0,
        "min_log_gap": DEFAULT_MIN_LOG_GAP,
        "attempts_per_cell": attempts,
        "seed": seed,
        "command": "python -c 'from pystanprivacy.experiments.foulds2016.ops_modes import real_diary_study; "
        f"real_diary_study(n_states={tuple(n_states)}, epsilons={tuple(epsilons)}, attempts={attempts}, seed={seed})'",
    }
    tables: list[pd.DataFrame] = []
    for k in n_states:
        rng = np.random.default_rng([seed, k])
        for eps in epsilons:  # written after every cell: a long study keeps what it measured
            tables.append(ops_release_study(counts, epsilons=[eps], n_states=k, attempts=attempts, seed=rng))
            write_table(pd.concat(tables, ignore_index=True), out, meta=meta)
    return pd.concat(tables, ignore_index=True)
