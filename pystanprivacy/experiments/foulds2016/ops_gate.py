"""The OPS HMM's convergence gate on a posterior whose chains do not mix (issue 49, item 1).

One-posterior sampling releases one draw, ε-DP only if it comes from the target (Wang et al.
2015; Foulds et al. 2016, Sec. 3.2). :meth:`~pystanprivacy.models.foulds2016_hmm.NaiveBayesHMMOPS.
sample_one` releases only when the chains pass :data:`~pystanprivacy.models._ops.OPS_GATE`
(R-hat <= 1.05 on the label-aligned parameters and on the label-invariant log-likelihood and
sorted occupancy, ESS, no divergences, no saturated tree depth). On the 10-state HMM of the
realistic war logs (:func:`~.warlogs.non_mixing_war_logs`) the chains settle in different modes.

:func:`ops_gate_task` runs the OPS sampler under that gate (what ``sample_one`` does, without an
accountant) from the default EM start or from dispersed starts, and records whether a draw would
be released, the checks that failed, the label-invariant R-hat of the log-likelihood and the modes
the chains found (:func:`~pystanprivacy.sampling.stacking.chain_modes` on the chains' mean
log-likelihoods, tolerance 3 within-chain standard deviations). :func:`ops_gate_study` repeats it
over ε and sampler seeds: how often the gate refuses at each ε, and whether a release, when it
happens, rests on chains that found one mode.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_choice, check_epsilon, check_int, check_random_state, check_sampler
from ...models._ops import OPS_GATE
from ...models.foulds2016_hmm import NaiveBayesHMMOPS
from ...models.foulds2016_hmm.init import DEFAULT_MAX_TREEDEPTH
from ...run.runner import Task, run_tasks
from ...run.study import Study
from ...sampling.diagnostics import split_rhat
from ...sampling.stacking import chain_modes
from .hmm import NAME
from .warlogs import NON_MIXING_STATES, WarLogCounts

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="foulds2016/ops_gate", version=1)

#: the sampler of the study: 4 chains (two EM starts, k-means, a prior draw when dispersed)
SAMPLER = {"chains": 4, "warmup": 500, "draws": 500, "max_treedepth": DEFAULT_MAX_TREEDEPTH}
#: chains whose mean log-likelihoods differ by at most this many within-chain sds are one mode
MODE_SDS = 3.0


@STUDY.task(programs=("foulds2016/nb_hmm", "foulds2016/nb_hmm_ops"))
def ops_gate_task(
    *,
    counts: WarLogCounts,
    epsilon: float,
    init: str,
    repeat: int,
    n_states: int = NON_MIXING_STATES,
    multiplier: float = 10.0,
    sampler: Mapping[str, int] = SAMPLER,
    seed: Any = None,
) -> pd.DataFrame:
    """One OPS sampler run under :data:`OPS_GATE`: one row with ``released`` (would
    ``sample_one`` release a draw), ``problems`` (the failed checks), ``rhat_log_lik``,
    ``modes`` (modes found by the chains' mean log-likelihoods), ``spread_log_lik`` (largest
    difference of the chains' mean log-likelihoods) and ``seconds``."""
    epsilon = check_epsilon(epsilon)
    init = check_choice(init, "init", ("em", "dispersed"))
    sampler = check_sampler(sampler, SAMPLER, optional=("max_treedepth", "adapt_delta"))
    rng = check_random_state(seed)
    start = time.perf_counter()
    ops = NaiveBayesHMMOPS(n_states, multiplier=multiplier)
    res = ops.sample(counts, epsilon=epsilon, seed=rng, thresholds=OPS_GATE, keep_posterior=True, init=init, **sampler)
    seconds = time.perf_counter() - start
    ll = np.asarray(res.posterior.draws("log_lik", combine_chains=False), dtype=float)  # (chains, draws)
    means, sds = ll.mean(axis=1), ll.std(axis=1, ddof=1)
    modes = chain_modes(means, tol=MODE_SDS * float(np.median(sds)))
    return pd.DataFrame(
        [
            {
                "epsilon": epsilon,
                "init": init,
                "repeat": repeat,
                "n_states": n_states,
                "multiplier": multiplier,
                "temperature": res.details["temperature"],
                "released": res.release is not None,
                "problems": "; ".join(res.problems),
                "rhat_log_lik": float(split_rhat(ll)),
                "modes": modes.n_modes,
                "spread_log_lik": float(means.max() - means.min()),
                "median_sd_log_lik": float(np.median(sds)),
                "chain_mean_log_lik": " ".join(f"{m:.1f}" for m in means),
                "seconds": seconds,
            }
        ]
    )


def ops_gate_study(
    counts: WarLogCounts,
    *,
    epsilons: Sequence[float] = (1.0, 5.0, 10.0),
    inits: Sequence[str] = ("em", "dispersed"),
    repeats: int = 3,
    n_states: int = NON_MIXING_STATES,
    multiplier: float = 10.0,
    sampler: Mapping[str, int] = SAMPLER,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """:func:`ops_gate_task` for every ε, start and repeat (repeat-major, so that a partial run
    covers every ε and start)."""
    repeats = check_int(repeats, "repeats", minimum=1)
    tasks = [
        Task(
            ops_gate_task,
            dict(
                counts=counts,
                epsilon=float(e),
                init=i,
                repeat=r,
                n_states=n_states,
                multiplier=multiplier,
                sampler=dict(sampler),
            ),
            label=f"OPS gate eps={e:g} init={i} repeat={r}",
        )
        for r in range(repeats)
        for e in epsilons
        for i in inits
    ]
    return run_tasks(
        tasks,
        seed=seed,
        stream=f"{NAME}/ops-gate",
        workers=workers,
        executor=executor,
        progress=progress,
        desc="Foulds 2016 OPS gate on non-mixing chains",
    )


def summarise_ops_gate(table: pd.DataFrame) -> pd.DataFrame:
    """Per ε and start: runs, releases (the gate's refusal rate is 1 − released / runs), the
    runs whose chains found more than one mode, and the median R-hat of the log-likelihood."""
    return (
        table.groupby(["epsilon", "init"], sort=True)
        .agg(
            runs=("released", "size"),
            released=("released", "sum"),
            several_modes=("modes", lambda m: int((m > 1).sum())),
            median_rhat_log_lik=("rhat_log_lik", "median"),
            median_seconds=("seconds", "median"),
        )
        .reset_index()
    )


__all__ = ["MODE_SDS", "SAMPLER", "ops_gate_study", "ops_gate_task", "summarise_ops_gate"]
