"""Figure 6 (F6) of Foulds et al. (2016) refitted with every chain from its own start (issue 49,
item 1).

The committed held-out study (:func:`.hmm.heldout_study`) runs 2 chains from one EM start, and
most of its 10-state fits fail the convergence checks. :func:`heldout_dispersed_task` refits one
split of one data set from dispersed starts (``init="dispersed"``: chain 0 at the best EM
solution, the others at an EM run of their own, a k-means clustering and a prior draw,
:mod:`pystanprivacy.models.foulds2016_hmm.init`) and reports every chain on its own:

* ``mean_log_lik`` and ``mode``: the chain's mean training log-likelihood and the mode it is in
  (chains within :data:`MODE_SDS` within-chain standard deviations of each other are one mode,
  :func:`~pystanprivacy.sampling.stacking.chain_modes`);
* ``heldout_per_entry``: Figure 6's statistic from this chain alone, per held-out log entry.
  Laplace and non-private: the mean over the chain's draws of the held-out log-likelihood with
  the masked cells' state probabilities (as :func:`.hmm.heldout_task`); OPS: the mean over the
  chain's draws of the held-out log-likelihood of one draw with the neighbouring states' weights,
  i.e. the expected score of an OPS release drawn from this chain's mode;
* Laplace and non-private only: the chain's stacking weight (Yao, Vehtari & Gelman 2022, on
  PSIS-LOO of the training cells given the released counts:
  :func:`~pystanprivacy.models.foulds2016_hmm.chains.chain_summary`) and the held-out log
  predictive density of the stacked chains (``stacked_lpd_per_entry``, the same in every row of
  the fit), a :data:`~pystanprivacy.sampling.stacking.STACKED_PREDICTIVE`, not the posterior.

Version 2 (issue 64) adds what the posterior says, from the modes' masses. Every fit's modes
(the same grouping) get a posterior mass by bridge sampling
(:func:`~pystanprivacy.models.foulds2016_hmm.modes.laplace_mode_masses` for Laplace, with the
fit's held-out mask; :func:`~pystanprivacy.models.foulds2016_hmm.modes.ops_mode_masses` for OPS,
the masses of its tempered target; :func:`~pystanprivacy.models.foulds2016_hmm.modes.
nonprivate_mode_masses`): per row its mode's ``mode_log_mass``, ``mode_log_mass_sd``,
``mode_rel_error``, ``mode_weight`` and the fit's ``masses_reliable`` (the masses are compared
only with at least 10 draws per coordinate in every mode: below it ``posterior_*`` is ``nan``).
Each mode's held-out score pools its chains' draws (``mode_heldout_per_entry``), and each fit
reports it labelled by estimate (:func:`fit_estimates`):

* ``posterior_per_entry``: ``sum_m w_m`` × mode m's score, :data:`~pystanprivacy.sampling.modes.
  POSTERIOR_MODE_MASS` (where the masses are reliable);
* ``modes_min_per_entry``, ``modes_max_per_entry``: the range over the modes found,
  :data:`~pystanprivacy.sampling.modes.MODE_RANGE`, always: any weighting of the modes found lies
  inside it, so it bounds the posterior value whatever the masses, assuming the modes found carry
  the posterior mass;
* ``one_mode_per_entry``: the mode of highest mean training log-likelihood alone
  (:data:`~pystanprivacy.sampling.modes.ONE_MODE`);
* ``heldout_estimate`` names what ``posterior_per_entry`` or, where it is ``nan``, the range is.

Laplace and non-private fits give both held-out scores (issue 64): the mean over draws of the
log-likelihood (``*_per_entry``, the score of the committed study) and the paper's log of the
mean likelihood (``*_logmean_per_entry``: logsumexp over draws − log S, per chain and per mode;
its posterior value is ``log sum_m w_m exp(L_m)``). OPS has one score, the expected score of one
released draw (``*_logmean_*`` is ``nan``); weighted by the tempered masses it is the expected
score of a release drawn from the OPS target over the modes found.

:func:`.heldout_dispersed_summary.summarise_heldout_dispersed` then compares Laplace with OPS (M = 10)
mode by mode. The summaries live in a module of their own (written when a task module's source was
part of its tasks' keys; keys now hold the study's version, programs and data:
:mod:`pystanprivacy.run.study`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from ..._validation import check_epsilon, check_int, check_random_state, check_sampler
from ...models.foulds2016_hmm import (
    NaiveBayesHMM,
    NaiveBayesHMMOPS,
    align_states,
    convergence_problems,
    heldout_log_likelihood,
    neighbour_state_log_weights,
)
from ...models.foulds2016_hmm.chains import chain_summary
from ...models.foulds2016_hmm.modes import laplace_mode_masses, nonprivate_mode_masses, ops_mode_masses
from ...run.runner import Task, root_sequence, run_tasks
from ...run.study import Study
from ...sampling.diagnostics import split_rhat
from ...sampling.modes import mode_estimate
from .hmm import FULL, NAME, heldout_masks
from .warlogs import WarLogCounts

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="foulds2016/heldout_dispersed", version=2)

#: chains whose mean log-likelihoods differ by at most this many within-chain sds are one mode
MODE_SDS = 3.0
#: 4 chains from dispersed starts, each as long as a chain of the committed study
SAMPLER = {"chains": 4, "warmup": 500, "draws": 500}
#: the reduced grid: both sides of the Iraq crossing (Laplace behind at eps <= 1, ahead at >= 2)
EPSILONS = (0.2, 1.0, 5.0)
SPLITS = 3
N_STATES = 10
MULTIPLIER = 10.0
METHODS = ("laplace", "ops")
_STARTS = ("best EM", "EM", "k-means", "prior draw")


def _ops_draw_scores(draws: Any, counts: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Held-out log-likelihood of every draw of an OPS fit, each scored as a release would be
    (its theta, with the state weights of its neighbouring states): (S,)."""
    return np.array(
        [
            heldout_log_likelihood(
                draws.theta[s], neighbour_state_log_weights(draws.A[s], draws.z[s], mask), counts, mask
            )
            for s in range(draws.theta.shape[0])
        ]
    )


def fit_estimates(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray, *, reliable: bool) -> dict[str, Any]:
    """Held-out scores of one fit per chain, per mode and labelled by estimate.

    Parameters
    ----------
    scores : array (chains, draws)
        Every draw's held-out log-likelihood (the whole held-out set).
    labels : array (chains,)
        Every chain's mode (0-based; mode 0 has the highest mean training log-likelihood).
    weights : array (n_modes,)
        The modes' posterior masses (:attr:`~pystanprivacy.sampling.modes.ModeMasses.weights`).
    reliable : bool
        Whether the masses can be compared.

    Returns
    -------
    dict
        ``chain_mean``, ``chain_logmean`` (chains,): the mean over a chain's draws of the score and
        the log of its mean likelihood (logsumexp − log S); ``mode_mean``, ``mode_logmean``
        (n_modes,): the same over the pooled draws of each mode's chains; ``mean`` and ``logmean``:
        :class:`~pystanprivacy.sampling.modes.ModeEstimate` of each (posterior where reliable, the
        range over the modes always); ``one_mode_mean``, ``one_mode_logmean``: mode 0's.
    """
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels, dtype=int)
    n_modes = int(np.asarray(weights).size)
    if scores.ndim != 2 or labels.shape != (scores.shape[0],) or set(labels.tolist()) != set(range(n_modes)):
        raise ValueError(
            f"scores must be (chains, draws) with one mode label per chain naming each of the {n_modes} modes, "
            f"got scores {scores.shape} and labels {labels.tolist()}"
        )
    S = scores.shape[1]
    mode_mean = np.array([scores[labels == m].mean() for m in range(n_modes)])
    mode_logmean = np.array([logsumexp(scores[labels == m]) - np.log(scores[labels == m].size) for m in range(n_modes)])
    return {
        "chain_mean": scores.mean(axis=1),
        "chain_logmean": logsumexp(scores, axis=1) - np.log(S),
        "mode_mean": mode_mean,
        "mode_logmean": mode_logmean,
        "mean": mode_estimate(mode_mean, weights, reliable=reliable),
        "logmean": mode_estimate(mode_logmean, weights, reliable=reliable, log_mean=True),
        "one_mode_mean": float(mode_mean[0]),
        "one_mode_logmean": float(mode_logmean[0]),
    }


@STUDY.task(programs=("foulds2016/nb_hmm", "foulds2016/nb_hmm_ops"))
def heldout_dispersed_task(
    *,
    counts: WarLogCounts,
    dataset: str,
    split: int,
    heldout: np.ndarray,
    method: str,
    epsilon: float,
    n_states: int = N_STATES,
    multiplier: float = MULTIPLIER,
    sampler: Mapping[str, int] = SAMPLER,
    seed: Any = None,
) -> pd.DataFrame:
    """One held-out fit from dispersed starts; one row per chain (see the module doc)."""
    if method not in ("non-private", "laplace", "ops"):
        raise ValueError(f"method must be 'non-private', 'laplace' or 'ops', got {method!r}")
    epsilon = np.inf if method == "non-private" else check_epsilon(epsilon)
    sampler = check_sampler(sampler, SAMPLER, optional=("max_treedepth",))
    rng = check_random_state(seed)
    mask = np.asarray(heldout, dtype=bool)
    n_entries = int(counts.cell_totals[mask].sum())
    start = time.perf_counter()
    stacked = np.nan
    weights = None
    released = np.nan
    if method == "ops":
        ops = NaiveBayesHMMOPS(n_states, multiplier=multiplier)
        res = ops.sample(
            counts,
            epsilon=epsilon,
            heldout=mask,
            seed=rng,
            allow_unconverged=True,
            keep_posterior=True,
            init="dispersed",
            **sampler,
        )
        post, problems = res.posterior, res.problems
        draws = align_states(post)
        flat = _ops_draw_scores(draws, counts.counts, mask)
        scores = np.stack([flat[draws.chain == c] for c in range(post.num_chains)])
        p = res.params
        released = float(
            heldout_log_likelihood(p["theta"], neighbour_state_log_weights(p["A"], p["z"], mask), counts.counts, mask)
        )
    else:
        model = NaiveBayesHMM(n_states)
        if method == "non-private":
            post = model.fit_nonprivate(counts, heldout=mask, seed=rng, init="dispersed", **sampler)
            seen = np.asarray(counts.counts, dtype=float)
        else:
            release = model.release(counts, epsilon=epsilon, seed=rng)
            post = model.fit(release, heldout=mask, seed=rng, init="dispersed", **sampler)
            # the fit saw the released training cells; held-out cells are scored on the true counts
            seen = np.where(mask[..., None], counts.counts, release.values)
        problems = convergence_problems(post)
        theta = post.draws("theta", combine_chains=False)
        with np.errstate(divide="ignore"):
            log_w = np.log(post.draws("state_prob", combine_chains=False))
        scores = np.stack(
            [heldout_log_likelihood(theta[c], log_w[c], counts.counts, mask) for c in range(post.num_chains)]
        )
    ll = np.asarray(post.draws("log_lik", combine_chains=False), dtype=float)
    means, sds = ll.mean(axis=1), ll.std(axis=1, ddof=1)
    tol = MODE_SDS * float(np.median(sds))
    if method != "ops":
        summary = chain_summary(post, seen, heldout=mask, tol=tol)
        weights = summary.weights
        stacked = float(summary.stacked_heldout_lpd.sum())
    fit_seconds = time.perf_counter() - start
    # the modes (grouped as before: the same tolerance) and their posterior masses
    if method == "ops":
        found = ops_mode_masses(ops, post, counts, epsilon=epsilon, heldout=mask, tol=tol, seed=rng)
    elif method == "laplace":
        found = laplace_mode_masses(model, post, release, heldout=mask, tol=tol, seed=rng)
    else:
        found = nonprivate_mode_masses(model, post, counts, heldout=mask, tol=tol, seed=rng)
    masses, labels = found.masses, found.modes.labels
    est = fit_estimates(scores, labels, masses.weights, reliable=masses.reliable)

    def logmean(x: float) -> float:  # OPS has one score: the expected score of one released draw
        return np.nan if method == "ops" else x / n_entries

    rows = []
    for c in range(ll.shape[0]):
        m = int(labels[c])
        rows.append(
            {
                "dataset": dataset,
                "split": split,
                "method": method,
                "n_states": n_states,
                "epsilon": epsilon,
                "multiplier": multiplier if method == "ops" else np.nan,
                "chain": c + 1,
                "start": _STARTS[c] if c < len(_STARTS) else "cycle",
                "mean_log_lik": means[c],
                "sd_log_lik": sds[c],
                "mode": m + 1,
                "n_modes": found.modes.n_modes,
                "rhat_log_lik": float(split_rhat(ll)),
                "heldout_entries": n_entries,
                "heldout_per_entry": est["chain_mean"][c] / n_entries,
                "heldout_logmean_per_entry": logmean(est["chain_logmean"][c]),
                "stacking_weight": np.nan if weights is None else float(weights[c]),
                "stacked_lpd_per_entry": stacked / n_entries,
                "released_per_entry": released / n_entries,
                "mode_log_mass": float(masses.log_mass[m]),
                "mode_log_mass_sd": float(masses.log_sd[m]),
                "mode_rel_error": float(masses.rel_error[m]),
                "mode_weight": float(masses.weights[m]),
                "masses_reliable": bool(masses.reliable),
                "draws_per_coordinate": float(masses.draws_per_coordinate),
                "mode_heldout_per_entry": est["mode_mean"][m] / n_entries,
                "mode_heldout_logmean_per_entry": logmean(est["mode_logmean"][m]),
                "heldout_estimate": est["mean"].estimate,
                "posterior_per_entry": est["mean"].posterior / n_entries,
                "posterior_logmean_per_entry": logmean(est["logmean"].posterior),
                "modes_min_per_entry": est["mean"].low / n_entries,
                "modes_max_per_entry": est["mean"].high / n_entries,
                "modes_logmean_min_per_entry": logmean(est["logmean"].low),
                "modes_logmean_max_per_entry": logmean(est["logmean"].high),
                "one_mode_per_entry": est["one_mode_mean"] / n_entries,
                "one_mode_logmean_per_entry": logmean(est["one_mode_logmean"]),
                "converged": not problems,
                "problems": "; ".join(problems),
                "fit_seconds": fit_seconds,
                "mass_seconds": found.seconds,
                "seconds": time.perf_counter() - start,
            }
        )
    return pd.DataFrame(rows)


def heldout_dispersed_study(
    counts: WarLogCounts,
    *,
    label: str,
    epsilons: Sequence[float] = EPSILONS,
    splits: int = SPLITS,
    methods: Sequence[str] = METHODS,
    sampler: Mapping[str, int] = SAMPLER,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """:func:`heldout_dispersed_task` on the first ``splits`` held-out masks of the committed study
    (the same masks: :func:`.hmm.heldout_study` draws them from the same stream), every ε and
    method; one data set per call (its own seed stream, so data sets can run apart). Tasks run
    split by split, so a partial run covers every ε and method."""
    splits = check_int(splits, "splits", minimum=1)
    if splits > FULL["splits"]:
        raise ValueError(f"splits must be at most the committed study's {FULL['splits']}, got {splits}")
    epsilons = [check_epsilon(e, "epsilons[i]") for e in epsilons]
    R, T = counts.cell_totals.shape
    masks = heldout_masks(
        R, T, fraction=0.1, n_splits=splits, seed=np.random.default_rng(root_sequence(seed, f"{NAME}/splits/{label}"))
    )
    tasks = [
        Task(
            heldout_dispersed_task,
            dict(counts=counts, dataset=label, split=split, heldout=mask, method=m, epsilon=eps, sampler=dict(sampler)),
            label=f"heldout dispersed {label} split {split} {m} eps={eps}",
        )
        for split, mask in enumerate(masks)
        for eps in epsilons
        for m in methods
    ]
    return run_tasks(
        tasks,
        seed=seed,
        stream=f"{NAME}/heldout_dispersed/{label}",
        workers=workers,
        executor=executor,
        progress=progress,
        desc=f"Foulds 2016 F6 from dispersed starts ({label})",
    )


__all__ = [
    "EPSILONS",
    "METHODS",
    "MODE_SDS",
    "SAMPLER",
    "SPLITS",
    "fit_estimates",
    "heldout_dispersed_study",
    "heldout_dispersed_task",
]
