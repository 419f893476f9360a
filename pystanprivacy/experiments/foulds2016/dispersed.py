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

Version 2 (issue 64) runs on the logs of Figures 3-5 as part ``hmm`` makes them (at full scale
the Afghan War Diary, :mod:`.logs`), keeps each chain's most probable states (``states``: one
digit per region/month, row-major) and estimates every mode's posterior mass by bridge sampling
(:func:`~pystanprivacy.models.foulds2016_hmm.modes.laplace_mode_masses`,
:func:`~pystanprivacy.models.foulds2016_hmm.modes.nonprivate_mode_masses`,
:func:`~pystanprivacy.models.foulds2016_hmm.modes.ops_mode_masses`, the last of OPS's tempered
target): per row its mode's ``mode_log_mass``, ``mode_log_mass_sd``, ``mode_weight`` and the
fit's ``masses_reliable``. :func:`summarise_dispersed` then gives per fit the agreement and the
substantial states labelled by estimate: mode-mass weighted
(:data:`~pystanprivacy.sampling.modes.POSTERIOR_MODE_MASS`) where the masses are reliable, and
always the range over the modes found (:data:`~pystanprivacy.sampling.modes.MODE_RANGE`, which
holds the posterior value whatever the masses, if the modes found carry the mass). Without true
states (the diary) the agreement is with the non-private fit's states (its chain of highest mean
log-likelihood), as F5 reads the diary.
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
from ...models.foulds2016_hmm.modes import laplace_mode_masses, nonprivate_mode_masses, ops_mode_masses
from ...run.runner import Task, run_tasks
from ...run.study import Study
from ...sampling.diagnostics import split_rhat
from ...sampling.modes import MODE_RANGE, POSTERIOR_MODE_MASS, mode_estimate
from .hmm import METHODS, NAME
from .warlogs import WarLogCounts

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="foulds2016/dispersed", version=2)

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
        ops = NaiveBayesHMMOPS(n_states, multiplier=multiplier)
        res = ops.sample(
            counts, epsilon=epsilon, seed=rng, allow_unconverged=True, keep_posterior=True, init="dispersed", **sampler
        )
        post = res.posterior
    else:
        model = NaiveBayesHMM(n_states)
        if method == "non-private":
            post = model.fit_nonprivate(counts, seed=rng, init="dispersed", **sampler)
        else:
            release = model.release(counts, epsilon=epsilon, seed=rng)
            post = model.fit(release, seed=rng, init="dispersed", **sampler)
    seconds = time.perf_counter() - start
    ll = np.asarray(post.draws("log_lik", combine_chains=False), dtype=float)
    means, sds = ll.mean(axis=1), ll.std(axis=1, ddof=1)
    tol = MODE_SDS * float(np.median(sds))
    # the modes (chains within tol of each other, as version 1) and their posterior masses
    if method == "ops":
        found = ops_mode_masses(ops, post, counts, epsilon=epsilon, tol=tol, seed=rng)
    elif method == "laplace":
        found = laplace_mode_masses(model, post, release, tol=tol, seed=rng)
    else:
        found = nonprivate_mode_masses(model, post, counts, tol=tol, seed=rng)
    masses, labels = found.masses, found.modes.labels
    draws = align_states(post)
    rows = []
    for c in range(ll.shape[0]):
        states = chain_states(draws, c)
        shares = entry_shares(states, counts.cell_totals, n_states)
        positive = shares[shares > 0]
        m = int(labels[c])
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
                "mode": m + 1,
                "n_modes": found.modes.n_modes,
                "rhat_log_lik": float(split_rhat(ll)),
                "agreement": state_agreement(states, truth) if truth is not None else np.nan,
                "states_used": int((shares > 0).sum()),
                "states_substantial": int((shares >= threshold).sum()),
                "effective_states": float(np.exp(-(positive * np.log(positive)).sum())),
                "largest_share": float(shares.max()),
                # one digit per region/month (space-separated beyond 10 states)
                "states": ("" if n_states <= 10 else " ").join(str(int(k)) for k in states.ravel()),
                "mode_log_mass": float(masses.log_mass[m]),
                "mode_log_mass_sd": float(masses.log_sd[m]),
                "mode_weight": float(masses.weights[m]),
                "masses_reliable": bool(masses.reliable),
                "draws_per_coordinate": float(masses.draws_per_coordinate),
                "mass_seconds": found.seconds,
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


def _states_grid(text: str) -> np.ndarray:
    """A chain's ``states`` column back as integers (row-major region/months)."""
    return np.array([int(k) for k in (text.split() if " " in text else text)], dtype=int)


def reference_agreement(table: pd.DataFrame) -> pd.Series:
    """Every chain's agreement with its data set's reference states: the true states where the
    task had them (``agreement``), else (the diary) the most probable states of the non-private
    fit's chain of highest mean log-likelihood (``states``), after the best relabelling; ``nan``
    where neither is there (a version-1 table of real logs)."""
    out = table["agreement"].astype(float).copy()
    if "states" not in table.columns:
        return out
    for dataset, rows in table.groupby("dataset", sort=False):
        if rows["agreement"].notna().all():
            continue
        nonprivate = rows.loc[rows["method"] == "non-private"]
        if nonprivate.empty:
            continue
        ref = _states_grid(nonprivate.loc[nonprivate["mean_log_lik"].idxmax(), "states"])
        for i, row in rows.iterrows():
            out.loc[i] = state_agreement(_states_grid(row["states"]), ref)
    return out


def _fit_estimate(fit: pd.DataFrame, column: str) -> dict[str, object]:
    """Per-mode means of ``column`` (over each mode's chains) weighted by the modes' masses
    where reliable (:func:`~pystanprivacy.sampling.modes.mode_estimate`), and their range."""
    per_mode = fit.groupby("mode").agg(value=(column, "mean"), weight=("mode_weight", "first")).sort_index()
    if per_mode["value"].isna().any():
        return {"posterior": np.nan, "low": np.nan, "high": np.nan}
    est = mode_estimate(
        per_mode["value"].to_numpy(), per_mode["weight"].to_numpy(), reliable=bool(fit["masses_reliable"].iloc[0])
    )
    return {"posterior": est.posterior, "low": est.low, "high": est.high}


def summarise_dispersed(table: pd.DataFrame) -> pd.DataFrame:
    """Per fit: modes found, R-hat of the log-likelihood, and per mode (best first) its chains,
    mean log-likelihood, agreement with the truth and substantial states (min-max over its chains).

    Tables of study version 2 add per mode its ``mode_weight``, ``mode_log_mass`` (± sd) and per
    fit ``estimate`` (:data:`~pystanprivacy.sampling.modes.POSTERIOR_MODE_MASS` where the masses
    are reliable, else :data:`~pystanprivacy.sampling.modes.MODE_RANGE`), the agreement with the
    reference states (:func:`reference_agreement`, named in ``reference``) and the number of
    substantial states, each as ``*_posterior`` (mode-mass weighted, ``nan`` unless reliable) and
    ``*_low``/``*_high`` (the range over the modes found)."""
    v2 = "mode_weight" in table.columns
    if v2:
        table = table.assign(agreement_reference=reference_agreement(table))
    rows = []
    for (dataset, method), fit in table.groupby(["dataset", "method"], sort=False):
        extra: dict[str, object] = {}
        if v2:
            reliable = bool(fit["masses_reliable"].iloc[0])
            agree = _fit_estimate(fit, "agreement_reference")
            subst = _fit_estimate(fit, "states_substantial")
            truth = fit["agreement"].notna().all()
            extra = {
                "masses_reliable": reliable,
                "estimate": POSTERIOR_MODE_MASS if reliable else MODE_RANGE,
                "reference": "true states" if truth else "non-private fit's best chain",
                **{f"agreement_{k}": v for k, v in agree.items()},
                **{f"substantial_{k}": v for k, v in subst.items()},
            }
        for mode, part in fit.groupby("mode"):
            row = {
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
            if v2:
                row.update(
                    {
                        "mode_weight": float(part["mode_weight"].iloc[0]),
                        "mode_log_mass": float(part["mode_log_mass"].iloc[0]),
                        "mode_log_mass_sd": float(part["mode_log_mass_sd"].iloc[0]),
                        "mode_agreement": float(part["agreement_reference"].mean()),
                        "mode_substantial": float(part["states_substantial"].mean()),
                        **extra,
                    }
                )
            rows.append(row)
    return pd.DataFrame(rows)


__all__ = [
    "MODE_SDS",
    "THRESHOLD",
    "chain_states",
    "dispersed_study",
    "dispersed_task",
    "entry_shares",
    "reference_agreement",
    "summarise_dispersed",
]
