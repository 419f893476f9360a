"""The war-logs case study of Foulds, Geumlek, Welling & Chaudhuri (2016), Sec. 5 and
supplement E: a hidden Markov model with naive-Bayes emissions, private by the Laplace
mechanism on the count vectors or by one-posterior sampling (OPS).

* :func:`state_study` -- Figures 3-5 (and supplement Figs. 3-6): the most frequent state of
  every region/month after warm-up and the per-state emission distributions, Laplace
  mechanism at total ε = 5 (ε = 1 per feature), 2 states for Iraq-style data and 3 for
  Afghanistan-style data; the non-private fit and one OPS draw (M = 100) beside it, and on
  synthetic data the agreement with the true states.
* :func:`heldout_study` -- Figure 6 (and supplement Fig. 2): held-out log-likelihood of 10 %
  of the region/month cells vs total ε, for naive Bayes (K = 1) and the 10-state HMM,
  Laplace vs OPS (a0 = 1/(M K_d), M = 10, 100) vs non-private, over several random splits;
  the held-out likelihood is evaluated on the true counts.
* :func:`reproduce` -- both, written as CSV + JSON sidecars + PNG figures: at full scale
  Afghanistan on the shipped Afghan War Diary and Iraq on synthetic logs, ``--quick`` on
  synthetic logs, or everything on one real war-logs file (``data_path``).

Choices where the paper is silent or where this implementation differs:

* Stan's NUTS on (A, theta) with the states summed out replaces the collapsed Gibbs
  sampler (same posterior); every chain starts from the best of several EM (Baum-Welch)
  runs on the counts the fit sees -- the release for Laplace, the exact counts for OPS
  (inside its charged run) and the non-private baseline
  (:func:`~pystanprivacy.models.foulds2016_hmm.em_initial_values`): on logs like the real
  ones chains started apart settle in different modes.
* "Most frequent state after burn-in" is the mode over post-warm-up draws of z (forward
  filtering, backward sampling), after aligning the chains' labels.
* The Laplace held-out likelihood is averaged over posterior draws with the predictive
  state probabilities of the held-out cells (forward-backward with the cells masked); OPS
  uses its single released draw, with the held-out cell's state weights from the released
  neighbouring states and transitions. The ε axis is the *total* ε for both mechanisms
  (Laplace: ε/5 per feature).
* Figure 6 of the main text says 10 splits, supplement E.2 says 5; ``FULL`` uses 10.
* Priors: Dirichlet(1) for transitions and emissions (the paper does not state them).

Seeds give reproducibility, not security.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int, check_random_state, check_real, check_sampler
from .warlogs import WarLogCounts, load_war_logs, preprocess_war_logs, synthetic_war_logs
from ...models.foulds2016_hmm import (
    NaiveBayesHMM,
    NaiveBayesHMMOPS,
    align_states,
    convergence_problems,
    heldout_log_likelihood,
    match_states,
    neighbour_state_log_weights,
    state_agreement,
)
from ...run.runner import Task, make_executor, root_sequence, run_tasks, write_results
from ...run.study import Study

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
STUDY = Study(name="foulds2016/hmm", version=1)

PAPER = "foulds2016"
NAME = "foulds2016_hmm"
METHODS = ("non-private", "laplace", "ops")
#: the paper's number of states per data set in Figures 3-5
STATES_PER_DATASET = {"iraq": 2, "afghanistan": 3, "generic": 3}

QUICK: dict[str, Any] = {
    # Iraq-style cells are smaller than the paper's (median 972) to keep generation fast
    "datasets": {"iraq": {"median_records": 200}, "afghanistan": {}},
    "states_sampler": {"chains": 2, "warmup": 500, "draws": 500, "max_treedepth": 6},
    "heldout_datasets": ("afghanistan",),
    "heldout_months": 36,
    "epsilons": (0.5, 5.0),
    "splits": 1,
    "n_states": (1, 10),
    "multipliers": (10.0, 100.0),
    "heldout_sampler": {"chains": 2, "warmup": 150, "draws": 100, "max_treedepth": 6},
}
FULL: dict[str, Any] = {
    "datasets": {"iraq": {}, "afghanistan": {}},
    "states_sampler": {"chains": 4, "warmup": 1000, "draws": 1000},
    "heldout_datasets": ("afghanistan", "iraq"),
    "heldout_months": 72,
    "epsilons": (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0),
    "splits": 10,
    "n_states": (1, 10),
    "multipliers": (10.0, 100.0),
    "heldout_sampler": {"chains": 2, "warmup": 500, "draws": 500},
}

#: sampler settings that may be given without a default (the models' own default otherwise)
_OPTIONAL_SAMPLER_KEYS = ("max_treedepth",)


def _check_method(method: str, multiplier: float | None) -> None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    if method == "ops" and multiplier is None:
        raise ValueError("method 'ops' needs multiplier (M of a0 = 1/(M K_d))")


# ----------------------------------------------------------------------------- data
def synthetic_dataset(kind: str, *, seed: Any, n_months: int = 72, **kwargs: Any) -> tuple[WarLogCounts, np.ndarray]:
    """Synthetic war logs of ``kind`` through the whole E.2 pipeline, and the true states
    on the preprocessed grid (R, T), 0-based."""
    syn = synthetic_war_logs(kind, seed=seed, n_months=n_months, **kwargs)
    counts = preprocess_war_logs(syn.records, dataset=kind)
    return counts, syn.state_matrix(counts.regions, counts.months)


def heldout_masks(n_regions: int, n_months: int, *, fraction: float = 0.1, n_splits: int = 1,
                  seed: Any = None) -> list[np.ndarray]:
    """``n_splits`` masks (R, T) each holding out a uniformly random ``fraction`` of the
    region/month cells (at least one), never all cells of a region."""
    n_regions = check_int(n_regions, "n_regions", minimum=1)
    n_months = check_int(n_months, "n_months", minimum=2)
    fraction = check_real(fraction, "fraction")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    rng = check_random_state(seed)
    n_cells = n_regions * n_months
    n_out = max(1, int(round(fraction * n_cells)))
    masks = []
    while len(masks) < check_int(n_splits, "n_splits", minimum=1):
        mask = np.zeros(n_cells, dtype=bool)
        mask[rng.choice(n_cells, size=n_out, replace=False)] = True
        mask = mask.reshape(n_regions, n_months)
        if not mask.all(axis=1).any():
            masks.append(mask)
    return masks


# ------------------------------------------------------------------ Figures 3-5
def _display_order(modal: np.ndarray, truth: np.ndarray | None, n_states: int) -> np.ndarray:
    """perm with new label k = old label perm[k]: matched to the truth when known, else by
    decreasing occupancy."""
    if truth is not None:
        to_truth = match_states(modal, truth, n_states)[:n_states]  # old -> truth label
        return np.argsort(to_truth, kind="stable")
    occupancy = np.bincount(modal.ravel(), minlength=n_states)
    return np.argsort(-occupancy, kind="stable")


@STUDY.task(programs=("foulds2016/nb_hmm", "foulds2016/nb_hmm_ops"))
def state_task(
    *,
    counts: WarLogCounts,
    truth: np.ndarray | None,
    dataset: str,
    method: str,
    n_states: int,
    epsilon: float,
    multiplier: float | None,
    sampler: Mapping[str, int],
    seed: Any = None,
) -> pd.DataFrame:
    """One state-assignment fit (Figures 3-5): rows ``part="cell"`` (the most frequent
    state per region/month, the mean probability of that state, the true state when known)
    and ``part="parameter"`` (per state, feature and value: the emission probability;
    posterior mean for non-private/Laplace, the released draw for OPS). Every row carries
    the fit's agreement with the truth, convergence verdicts and time: ``converged`` on
    label-aligned theta and A plus the label-invariant quantities (the OPS gate),
    ``converged_invariant`` on the label-invariant quantities only (log_lik, sorted state
    occupancy: did the chains find the same mode?)."""
    _check_method(method, multiplier)
    sampler = check_sampler(sampler, FULL["states_sampler"], optional=_OPTIONAL_SAMPLER_KEYS)
    rng = check_random_state(seed)
    start = time.perf_counter()
    problems: list[str] = []
    prob = None
    if method == "ops":
        ops = NaiveBayesHMMOPS(n_states, multiplier=multiplier)
        res = ops.sample(counts, epsilon=epsilon, seed=rng, allow_unconverged=True, keep_posterior=True, **sampler)
        modal, theta, problems = res.params["z"], res.params["theta"], res.problems
        invariant = convergence_problems(res.posterior, quantities="invariant")
    else:
        model = NaiveBayesHMM(n_states)
        if method == "non-private":
            post = model.fit_nonprivate(counts, seed=rng, **sampler)
        else:
            post = model.fit(model.release(counts, epsilon=epsilon, seed=rng), seed=rng, **sampler)
        draws = align_states(post)
        problems = convergence_problems(post, draws)
        invariant = convergence_problems(post, draws, quantities="invariant")
        modal, theta, prob = draws.modal_states(), draws.mean_theta(), draws.mean_state_prob()
    seconds = time.perf_counter() - start
    perm = _display_order(modal, truth, n_states)
    inverse = np.argsort(perm)
    modal = inverse[modal]
    theta = theta[perm]
    agreement = state_agreement(modal, truth) if truth is not None else np.nan
    common = dict(dataset=dataset, method=method, n_states=n_states,
                  epsilon=np.inf if method == "non-private" else epsilon,
                  multiplier=multiplier if method == "ops" else np.nan, agreement=agreement,
                  converged=not problems, converged_invariant=not invariant, problems="; ".join(problems),
                  seconds=seconds)
    R, T = modal.shape
    cells = pd.DataFrame({
        "part": "cell",
        "region": np.repeat(counts.regions, T),
        "month": np.tile(counts.months, R),
        "state": modal.ravel() + 1,
        "state_prob": (np.take_along_axis(prob[..., perm], modal[..., None], axis=2).ravel()
                       if prob is not None else np.nan),
        "true_state": truth.ravel() + 1 if truth is not None else np.nan,
        "n_entries": counts.cell_totals.ravel(),
        **common,
    })
    rows = []
    for k in range(n_states):
        for name, sl, vocab in zip(counts.features, counts.feature_slices.values(), counts.vocabularies):
            for value, p in zip(vocab, theta[k, sl]):
                rows.append({"part": "parameter", "state": k + 1, "feature": name, "value": value, "probability": p})
    params = pd.DataFrame(rows).assign(**common)
    return pd.concat([cells, params], ignore_index=True)


def state_study(
    datasets: Mapping[str, tuple[WarLogCounts, np.ndarray | None]],
    *,
    epsilon: float = 5.0,
    methods: Sequence[str] = METHODS,
    ops_multiplier: float = 100.0,
    n_states: Mapping[str, int] | None = None,
    sampler: Mapping[str, int] = FULL["states_sampler"],
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Figures 3-5: one :func:`state_task` per data set × method (total ε = ``epsilon``,
    the paper's 5; ``n_states`` per data set label, default :data:`STATES_PER_DATASET` by
    the data set's country). Returns the concatenated rows (``part`` cell / parameter)."""
    epsilon = check_epsilon(epsilon)
    sampler = check_sampler(sampler, FULL["states_sampler"], optional=_OPTIONAL_SAMPLER_KEYS)
    tasks = []
    for label, (counts, truth) in datasets.items():
        k = (n_states or {}).get(label, STATES_PER_DATASET.get(counts.dataset, 3))
        for m in methods:
            _check_method(m, ops_multiplier)
            tasks.append(Task(state_task, dict(counts=counts, truth=truth, dataset=label, method=m, n_states=k,
                                               epsilon=epsilon, multiplier=ops_multiplier if m == "ops" else None,
                                               sampler=sampler), label=f"states {label} {m}"))
    return run_tasks(tasks, seed=seed, stream=f"{NAME}/states", workers=workers, executor=executor,
                     progress=progress, desc="Foulds 2016 HMM states")


def summarise_states(table: pd.DataFrame) -> pd.DataFrame:
    """One row per data set × method: agreement with the truth, convergence, time."""
    cols = ["dataset", "method", "n_states", "epsilon", "multiplier", "agreement", "converged", "converged_invariant",
            "seconds", "problems"]
    return table.loc[table["part"] == "cell", cols].drop_duplicates(["dataset", "method"]).reset_index(drop=True)


# ------------------------------------------------------------------------ Figure 6
@STUDY.task(programs=("foulds2016/nb_hmm", "foulds2016/nb_hmm_ops"))
def heldout_task(
    *,
    counts: WarLogCounts,
    dataset: str,
    split: int,
    heldout: np.ndarray,
    n_states: int,
    method: str,
    epsilon: float,
    multiplier: float | None,
    sampler: Mapping[str, int],
    seed: Any = None,
) -> pd.DataFrame:
    """One fit with the ``heldout`` cells masked and its held-out log-likelihood on the
    TRUE counts of those cells (one row).

    non-private / Laplace: the mean over posterior draws of
    ``sum_c log sum_k p(z_c = k | A, theta, training cells) p(n_c | theta_k)``; OPS: the same
    for the one released draw, with the weights from its released neighbouring states.
    Laplace with ``n_states=1`` (naive Bayes) releases only the corpus-wide counts of the
    training cells, the statistics naive Bayes needs (the paper's "corpus-wide counts")."""
    _check_method(method, multiplier)
    sampler = check_sampler(sampler, FULL["heldout_sampler"], optional=_OPTIONAL_SAMPLER_KEYS)
    rng = check_random_state(seed)
    mask = np.asarray(heldout, dtype=bool)
    start = time.perf_counter()
    temperature = np.nan
    if method == "ops":
        ops = NaiveBayesHMMOPS(n_states, multiplier=multiplier)
        res = ops.sample(counts, epsilon=epsilon, heldout=mask, seed=rng, allow_unconverged=True, **sampler)
        draw = res.params
        weights = neighbour_state_log_weights(draw["A"], draw["z"], mask)
        ll = float(heldout_log_likelihood(draw["theta"], weights, counts.counts, mask))
        problems, temperature = res.problems, res.details["temperature"]
    else:
        model = NaiveBayesHMM(n_states)
        if method == "non-private":
            post = model.fit_nonprivate(counts, heldout=mask, seed=rng, **sampler)
        elif n_states == 1:
            # naive Bayes needs only the corpus-wide counts of the training cells (Sec. 5)
            release = model.release(counts, epsilon=epsilon, seed=rng, aggregate=True, cells=~mask)
            post = model.fit(release, seed=rng, **sampler)
        else:
            post = model.fit(model.release(counts, epsilon=epsilon, seed=rng), heldout=mask, seed=rng, **sampler)
        theta = post.draws("theta")
        if n_states == 1:
            weights = np.zeros((theta.shape[0], *mask.shape, 1))
        else:
            with np.errstate(divide="ignore"):
                weights = np.log(post.draws("state_prob"))
        ll = float(np.mean(heldout_log_likelihood(theta, weights, counts.counts, mask)))
        problems = convergence_problems(post)
    n_entries = int(counts.cell_totals[mask].sum())
    return pd.DataFrame([{
        "dataset": dataset,
        "model": "naive Bayes" if n_states == 1 else f"HMM (K={n_states})",
        "n_states": n_states,
        "method": method,
        "multiplier": multiplier if method == "ops" else np.nan,
        "epsilon": np.inf if method == "non-private" else epsilon,
        "split": split,
        "heldout_cells": int(mask.sum()),
        "heldout_entries": n_entries,
        "heldout_loglik": ll,
        "heldout_loglik_per_entry": ll / max(n_entries, 1),
        "temperature": temperature,
        "converged": not problems,
        "problems": "; ".join(problems),
        "seconds": time.perf_counter() - start,
    }])


def heldout_study(
    datasets: Mapping[str, WarLogCounts],
    *,
    epsilons: Sequence[float] = FULL["epsilons"],
    n_states: Sequence[int] = FULL["n_states"],
    multipliers: Sequence[float] = FULL["multipliers"],
    splits: int = 10,
    fraction: float = 0.1,
    methods: Sequence[str] = METHODS,
    sampler: Mapping[str, int] = FULL["heldout_sampler"],
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Figure 6: for every data set, split (a random ``fraction`` of cells held out), model
    (``n_states``) and method: the non-private fit once, Laplace and OPS (each multiplier)
    at every total ε. One row per fit (:func:`heldout_task`)."""
    sampler = check_sampler(sampler, FULL["heldout_sampler"], optional=_OPTIONAL_SAMPLER_KEYS)
    epsilons = [check_epsilon(e, "epsilons[i]") for e in epsilons]
    tasks = []
    for label, counts in datasets.items():
        R, T = counts.cell_totals.shape
        masks = heldout_masks(R, T, fraction=fraction, n_splits=splits,
                              seed=np.random.default_rng(root_sequence(seed, f"{NAME}/splits/{label}")))
        for split, mask in enumerate(masks):
            for k in n_states:
                common = dict(counts=counts, dataset=label, split=split, heldout=mask, n_states=int(k), sampler=sampler)
                for m in methods:
                    _check_method(m, 1.0)
                    if m == "non-private":
                        tasks.append(Task(heldout_task, dict(common, method=m, epsilon=np.inf, multiplier=None),
                                          label=f"heldout {label} split {split} K={k} {m}"))
                        continue
                    for eps in epsilons:
                        for mult in (multipliers if m == "ops" else (None,)):
                            tasks.append(Task(heldout_task, dict(common, method=m, epsilon=eps, multiplier=mult),
                                              label=f"heldout {label} split {split} K={k} {m} eps={eps} M={mult}"))
    return run_tasks(tasks, seed=seed, stream=f"{NAME}/heldout", workers=workers, executor=executor,
                     progress=progress, desc="Foulds 2016 HMM held-out")


def summarise_heldout(table: pd.DataFrame) -> pd.DataFrame:
    """Mean (and standard deviation over splits) of the held-out log-likelihood per data
    set × model × method × M × ε, with the number of OPS draws that passed the checks."""
    keys = ["dataset", "model", "n_states", "method", "multiplier", "epsilon"]
    g = table.groupby(keys, dropna=False)
    out = g.agg(
        heldout_loglik=("heldout_loglik", "mean"),
        heldout_loglik_sd=("heldout_loglik", "std"),
        heldout_loglik_per_entry=("heldout_loglik_per_entry", "mean"),
        heldout_loglik_per_entry_sd=("heldout_loglik_per_entry", "std"),
        splits=("split", "nunique"),
        converged=("converged", "sum"),
        seconds=("seconds", "mean"),
    ).reset_index()
    return out


# ------------------------------------------------------------------------ reproduce
def reproduce(
    out_dir: str | Path,
    *,
    quick: bool = True,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    data_path: str | Path | None = None,
) -> dict[str, pd.DataFrame]:
    """Run the war-logs case study and write ``<out_dir>/foulds2016_hmm_<name>.csv`` (+ JSON
    sidecars) and the figures ``foulds2016_hmm_states_<data>.png``,
    ``foulds2016_hmm_parameters_<data>.png`` and ``foulds2016_hmm_heldout.png``.

    Data (:mod:`.logs`): ``quick=False`` runs every Afghanistan item on the shipped Afghan War
    Diary (``data/afg_war_diary.csv.gz``, label ``"afghanistan"``) and the Iraq items on
    synthetic Iraq-style logs (no public copy of the Iraq logs is available here);
    ``quick=True`` runs both on synthetic logs (:func:`synthetic_dataset`); with
    ``data_path``, everything runs on that one war-logs file (country from its region codes).
    Every sidecar says which (``data``: per label "real" with the file's name and sha256, or
    "synthetic"). Without ``data_path`` the diary's preprocessing counts against the paper's
    are written too (``foulds2016_warlogs_afghanistan_preprocessing.csv``,
    :func:`~.warlogs.preprocessing_counts`).
    ``quick=True``: Figures 3-5 on both data sets with short chains; Figure 6 on one data
    set (36 months) with ε in {0.5, 5}, one split (about 3 minutes on 2 cores).
    ``quick=False``: the paper's grids (:data:`FULL`: 7 values of ε in [0.1, 10], 10 splits,
    both data sets; 880 held-out fits, 440 of them 10-state HMMs at ~1 minute each) -- an
    estimated 8-9 hours on 2 cores (not run end to end here).

    Returns the tables by name (``preprocessing``, ``warlogs_afghanistan_preprocessing``,
    ``states``, ``parameters``, ``states_summary``, ``heldout``, ``heldout_summary``).
    """
    from . import hmm_figures as plots_hmm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    size = QUICK if quick else FULL
    common = dict(seed=seed, quick=quick, workers=workers, data_path=None if data_path is None else str(data_path))
    tables: dict[str, pd.DataFrame] = {}

    # ---- data (logs.py: the diary for Afghanistan with quick=False, synthetic Iraq)
    from .logs import provenance, study_logs, write_diary_preprocessing

    states_data: dict[str, tuple[WarLogCounts, np.ndarray | None]] = {}
    heldout_data: dict[str, WarLogCounts] = {}
    if data_path is not None:
        counts = load_war_logs(data_path)
        label = counts.dataset
        states_data[label] = (counts, None)
        heldout_data[label] = counts
    else:
        states_data = study_logs(size, seed, real=not quick)
        held = study_logs(size, seed, real=not quick, heldout=True, reuse=states_data)
        heldout_data = {label: c for label, (c, _) in held.items()}
    common["data"] = provenance(list(dict.fromkeys([*states_data, *heldout_data])), data_path=data_path, seed=seed)
    if data_path is None:  # the diary's preprocessing counts against the paper's (a few seconds)
        diary_counts = write_diary_preprocessing(out, seed=seed, quick=quick)
        if diary_counts is not None:
            tables["warlogs_afghanistan_preprocessing"] = diary_counts
    reports = [c.report.assign(dataset=label, purpose="states") for label, (c, _) in states_data.items()]
    reports += [c.report.assign(dataset=label, purpose="heldout") for label, c in heldout_data.items()
                if c is not states_data.get(label, (None,))[0]]
    tables["preprocessing"] = pd.concat(reports, ignore_index=True)
    write_results(out, f"{NAME}_preprocessing", tables["preprocessing"], common)

    with make_executor(workers) as ex:
        run = dict(seed=seed, workers=workers, executor=ex, progress=progress)
        t = time.perf_counter()
        st_args = dict(epsilon=5.0, methods=list(METHODS), ops_multiplier=100.0, sampler=dict(size["states_sampler"]))
        table = state_study(states_data, **st_args, **run)
        tables["states"] = table.loc[table["part"] == "cell"].dropna(axis=1, how="all").reset_index(drop=True)
        tables["parameters"] = table.loc[table["part"] == "parameter"].dropna(axis=1, how="all").reset_index(drop=True)
        tables["states_summary"] = summarise_states(table)
        meta = {**st_args, **common, "stream": f"{NAME}/states", "seconds": time.perf_counter() - t}
        for name in ("states", "parameters", "states_summary"):
            write_results(out, f"{NAME}_{name}", tables[name], meta)
        for label in states_data:
            if not (tables["states"]["dataset"] == label).any():  # its tasks not saved (run_context(saved_only=True))
                continue
            slug = label.replace(" ", "_")
            plots_hmm.state_assignments(tables["states"], label, out / f"{NAME}_states_{slug}.png")
            plots_hmm.state_parameters(tables["parameters"], label, out / f"{NAME}_parameters_{slug}.png")

        t = time.perf_counter()
        ho_args = dict(epsilons=list(size["epsilons"]), n_states=list(size["n_states"]),
                       multipliers=list(size["multipliers"]), splits=size["splits"], fraction=0.1,
                       methods=list(METHODS), sampler=dict(size["heldout_sampler"]))
        tables["heldout"] = heldout_study(heldout_data, **ho_args, **run)
        tables["heldout_summary"] = summarise_heldout(tables["heldout"])
        meta = {**ho_args, **common, "stream": f"{NAME}/heldout", "seconds": time.perf_counter() - t}
        write_results(out, f"{NAME}_heldout", tables["heldout"], meta)
        write_results(out, f"{NAME}_heldout_summary", tables["heldout_summary"], meta)
        plots_hmm.heldout(tables["heldout_summary"], out / f"{NAME}_heldout.png")
    return tables


__all__ = [
    "PAPER",
    "NAME",
    "METHODS",
    "QUICK",
    "FULL",
    "STATES_PER_DATASET",
    "synthetic_dataset",
    "heldout_masks",
    "state_task",
    "state_study",
    "summarise_states",
    "heldout_task",
    "heldout_study",
    "summarise_heldout",
    "reproduce",
]
