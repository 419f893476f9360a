"""Figures 3-5 (F5) and the 10-state occupancy claim (F8) of Foulds et al. (2016) refitted with
every chain from its own start (issue 49, item 1).

The committed fits of parts ``hmm`` and ``hmm_occupancy`` start every chain near one EM solution,
so chains that agree only show that NUTS stays in that mode. :func:`dispersed_task` refits one data
set with ``init="dispersed"`` (chain 0 at the best EM solution, the others at an EM run of their own,
a k-means clustering and a prior draw: :mod:`pystanprivacy.models.foulds2016_hmm.init`) and reports
every chain on its own: its mean log-likelihood, the mode it is in (chains whose mean
log-likelihoods differ by at most 3 within-chain standard deviations are one mode,
:func:`~pystanprivacy.sampling.stacking.chain_modes`), the agreement of its most probable states
with the true states (F5) and the states holding a substantial share of the log entries (F8, as
:mod:`.occupancy` counts them). A verdict then either rests on chains that agree, or is checked in
every mode found.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_random_state, check_sampler
from ...models.foulds2016_hmm import NaiveBayesHMM, NaiveBayesHMMOPS
from ...models.foulds2016_hmm.labels import align_states, state_agreement
from ...run.runner import Task, run_tasks
from ...run.study import Study
from ...sampling.diagnostics import split_rhat
from ...sampling.stacking import chain_modes
from .hmm import METHODS, NAME
from .warlogs import WarLogCounts

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="foulds2016/dispersed", version=1)

#: chains whose mean log-likelihoods differ by at most this many within-chain sds are one mode
MODE_SDS = 3.0
#: a state holds a "substantial" share of the entries from this share on (as :mod:`.occupancy`)
THRESHOLD = 0.05


def chain_states(draws: Any, chain: int) -> np.ndarray:
    """Most probable state of every region/month over one chain's draws, (R, T), 0-based: the
    argmax of the mean state probabilities (non-private and Laplace fits) or the most frequent
    drawn state (OPS fits, which draw z)."""
    mine = draws.chain == chain
    if draws.state_prob is not None:
        return draws.state_prob[mine].mean(axis=0).argmax(axis=-1)
    z = draws.z[mine]
    return np.stack([(z == k).sum(axis=0) for k in range(draws.n_states)], axis=-1).argmax(axis=-1)


def entry_shares(states: np.ndarray, cell_entries: np.ndarray, n_states: int) -> np.ndarray:
    """Share of the log entries in the cells whose state is k, for every k: (n_states,)."""
    totals = np.bincount(states.ravel(), weights=cell_entries.ravel().astype(float), minlength=n_states)
    return totals / totals.sum()


@STUDY.task(programs=("foulds2016/nb_hmm", "foulds2016/nb_hmm_ops"))
def dispersed_task(
    *,
    counts: WarLogCounts,
    truth: np.ndarray | None,
    dataset: str,
    method: str,
    n_states: int,
    epsilon: float,
    multiplier: float | None,
    sampler: Mapping[str, int],
    threshold: float = THRESHOLD,
    seed: Any = None,
) -> pd.DataFrame:
    """One fit from dispersed starts; one row per chain (see the module doc)."""
    epsilon = check_epsilon(epsilon)
    sampler = check_sampler(sampler, {"chains": 4, "warmup": 500, "draws": 500}, optional=("max_treedepth",))
    rng = check_random_state(seed)
    start = time.perf_counter()
    if method == "ops":
        res = NaiveBayesHMMOPS(n_states, multiplier=multiplier).sample(
            counts, epsilon=epsilon, seed=rng, allow_unconverged=True, keep_posterior=True, init="dispersed", **sampler
        )
        post = res.posterior
    else:
        model = NaiveBayesHMM(n_states)
        if method == "non-private":
            post = model.fit_nonprivate(counts, seed=rng, init="dispersed", **sampler)
        else:
            post = model.fit(model.release(counts, epsilon=epsilon, seed=rng), seed=rng, init="dispersed", **sampler)
    seconds = time.perf_counter() - start
    ll = np.asarray(post.draws("log_lik", combine_chains=False), dtype=float)
    means, sds = ll.mean(axis=1), ll.std(axis=1, ddof=1)
    modes = chain_modes(means, tol=MODE_SDS * float(np.median(sds)))
    draws = align_states(post)
    rows = []
    for c in range(ll.shape[0]):
        states = chain_states(draws, c)
        shares = entry_shares(states, counts.cell_totals, n_states)
        positive = shares[shares > 0]
        rows.append(
            {
                "dataset": dataset,
                "method": method,
                "n_states": n_states,
                "epsilon": np.inf if method == "non-private" else epsilon,
                "multiplier": multiplier if method == "ops" else np.nan,
                "chain": c + 1,
                "start": ("best EM", "EM", "k-means", "prior draw")[min(c, 3)] if c < 4 else "cycle",
                "mean_log_lik": means[c],
                "sd_log_lik": sds[c],
                "mode": int(modes.labels[c]) + 1,
                "n_modes": modes.n_modes,
                "rhat_log_lik": float(split_rhat(ll)),
                "agreement": state_agreement(states, truth) if truth is not None else np.nan,
                "states_used": int((shares > 0).sum()),
                "states_substantial": int((shares >= threshold).sum()),
                "effective_states": float(np.exp(-(positive * np.log(positive)).sum())),
                "largest_share": float(shares.max()),
                "seconds": seconds,
            }
        )
    return pd.DataFrame(rows)


def dispersed_study(
    datasets: Mapping[str, tuple[WarLogCounts, np.ndarray | None]],
    *,
    n_states: Mapping[str, int],
    sampler: Mapping[str, int],
    epsilon: float = 5.0,
    methods: Sequence[str] = METHODS,
    ops_multiplier: float = 100.0,
    stream: str,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """:func:`dispersed_task` for every data set (``n_states`` per label) and method, at total
    ε = ``epsilon`` (the paper's 5) and OPS multiplier M = ``ops_multiplier`` (100)."""
    tasks = [
        Task(
            dispersed_task,
            dict(
                counts=counts,
                truth=truth,
                dataset=label,
                method=m,
                n_states=n_states[label],
                epsilon=epsilon,
                multiplier=ops_multiplier if m == "ops" else None,
                sampler=dict(sampler),
            ),
            label=f"dispersed {stream} {label} {m}",
        )
        for label, (counts, truth) in datasets.items()
        for m in methods
    ]
    return run_tasks(
        tasks,
        seed=seed,
        stream=f"{NAME}/dispersed/{stream}",
        workers=workers,
        executor=executor,
        progress=progress,
        desc=f"Foulds 2016 HMM from dispersed starts ({stream})",
    )


def summarise_dispersed(table: pd.DataFrame) -> pd.DataFrame:
    """Per fit: modes found, R-hat of the log-likelihood, and per mode (best first) its chains,
    mean log-likelihood, agreement with the truth and substantial states (min-max over its chains)."""
    rows = []
    for (dataset, method), fit in table.groupby(["dataset", "method"], sort=False):
        for mode, part in fit.groupby("mode"):
            rows.append(
                {
                    "dataset": dataset,
                    "method": method,
                    "n_states": int(fit["n_states"].iloc[0]),
                    "n_modes": int(fit["n_modes"].iloc[0]),
                    "rhat_log_lik": float(fit["rhat_log_lik"].iloc[0]),
                    "mode": int(mode),
                    "chains": " ".join(f"{c} ({s})" for c, s in zip(part["chain"], part["start"])),
                    "mean_log_lik": float(part["mean_log_lik"].mean()),
                    "agreement": f"{part['agreement'].min():.3f}–{part['agreement'].max():.3f}",
                    "states_substantial": f"{part['states_substantial'].min()}–{part['states_substantial'].max()}",
                }
            )
    return pd.DataFrame(rows)


__all__ = [
    "MODE_SDS",
    "THRESHOLD",
    "chain_states",
    "dispersed_study",
    "dispersed_task",
    "entry_shares",
    "summarise_dispersed",
]
