"""Figure 7 of Foulds et al. (2016) and supplement Figures 4 and 6: the OPS HMM's state
assignments estimated from the last 100 samples against those of the last sample alone.

The paper (Sec. 5) ran one Gibbs chain and released its final sample; its Figure 7 shows that
sample's latent states beside the most frequent state of every region/month over "all 100 post
burn-in samples", and says the one sample's states "were noisy relative to" the 100-sample
estimate. The 100-sample estimate is not private: OPS releases one draw (Wang et al. 2015;
Foulds et al. 2016, Sec. 3.2); the panel shows what the release gives up.

:func:`ops_states_task` runs the OPS HMM sampler (:class:`~pystanprivacy.models.foulds2016_hmm.
NaiveBayesHMMOPS`, NUTS, chains from the EM start) on one data set and, for every chain, scores
against the true states

* ``last 100``: the most frequent state of every cell over the chain's last 100 draws;
* ``last one``: the chain's final draw (the paper's released sample);
* ``released``: the draw the library releases (a uniformly random draw of all chains, then a
  random relabelling; one per fit).

Labels are aligned across chains and matched to the truth before scoring, as for Figures 3-5
(:mod:`.hmm`). Real logs (the Afghan War Diary, :mod:`.logs`) have no true states: there every
estimate's ``agreement`` is NaN, and the scores that need no truth carry the comparison: its
``switches`` (how often a region's state changes from one month to the next: the paper's
"noisy") and, for the last draw, its agreement with the same chain's last-100 estimate
(``agreement_last100``). Both are computed on synthetic logs too. Every repeat is a new sampler run on the same data set (the data sets of Figures
3-5, drawn from the same seed streams), so the spread over repeats is the sampler's, as in the
paper's one data set. Part ``ops_states`` of ``pystanprivacy reproduce foulds2016`` runs it
(:func:`.supplementary.reproduce_ops_states`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import check_epsilon, check_int, check_random_state, check_sampler
from ...models.foulds2016_hmm import NaiveBayesHMMOPS
from ...models.foulds2016_hmm.labels import align_states, convergence_problems, match_states, state_agreement
from ...run.runner import Task, run_tasks
from ...run.study import Study
from .hmm import FULL, NAME, STATES_PER_DATASET
from .warlogs import WarLogCounts

#: the study of this module's tasks: its name and version key their saved results (a change of
#: what they compute for the same arguments and seeds bumps the version; :mod:`pystanprivacy.run.study`)
#: version 2: every score row gains ``switches`` and ``agreement_last100`` (the runs saved as version 1 lack them)
STUDY = Study(name="foulds2016/ops_states", version=2)

#: the paper's number of post burn-in samples behind its summary (Sec. 5, Figure 7)
LAST = 100
#: the estimates scored, in the order of Figure 7's panels
ESTIMATES = ("last 100", "last one", "released")


def state_switches(states: np.ndarray) -> int:
    """Number of month-to-month state changes, summed over the regions of an (R, T) state
    grid: how noisy an assignment is (Foulds et al. 2016, Sec. 5: the last sample's states
    "were noisy relative to" the 100-sample estimate). Label-free: relabelling the states
    leaves it unchanged."""
    states = np.asarray(states)
    if states.ndim != 2:
        raise ValueError(f"states must be (regions, months), got shape {states.shape}")
    return int(np.count_nonzero(states[:, 1:] != states[:, :-1]))


def last_draws_modal(z: np.ndarray, n_states: int, last: int = LAST) -> np.ndarray:
    """Most frequent state of every cell over the last ``last`` draws of one chain.

    Parameters
    ----------
    z : int array (draws, R, T), one chain's state draws in sampling order, 0-based
    n_states : int
    last : int, the number of final draws (the paper: 100)

    Returns
    -------
    int array (R, T); ties go to the lower state (``argmax``)
    """
    z = np.asarray(z)
    last = check_int(last, "last", minimum=1)
    if z.ndim != 3:
        raise ValueError(f"z must be (draws, regions, months), got shape {z.shape}")
    if last > z.shape[0]:
        raise ValueError(f"last must be at most the chain's {z.shape[0]} draws, got {last}")
    tail = z[-last:]
    return np.stack([(tail == k).sum(axis=0) for k in range(n_states)], axis=-1).argmax(axis=-1)


@STUDY.task(programs=("foulds2016/nb_hmm", "foulds2016/nb_hmm_ops"))
def ops_states_task(
    *,
    counts: WarLogCounts,
    truth: np.ndarray | None,
    dataset: str,
    n_states: int,
    epsilon: float,
    multiplier: float,
    repeat: int,
    sampler: Mapping[str, int],
    last: int = LAST,
    cells: bool = False,
    seed: Any = None,
) -> pd.DataFrame:
    """One OPS sampler run: rows ``part="score"`` (per chain and estimate: agreement with the
    true states, NaN when ``truth`` is None (real logs); ``switches`` (:func:`state_switches`);
    for the last draw, ``agreement_last100`` with its chain's last-100 estimate) and, with
    ``cells=True``, ``part="cell"`` (chain 1's last-100 and last-one states and the released
    draw's, every region/month, labels matched to the truth, or without one to chain 1's
    last-100 estimate)."""
    epsilon = check_epsilon(epsilon)
    sampler = check_sampler(sampler, FULL["states_sampler"], optional=("max_treedepth", "adapt_delta"))
    rng = check_random_state(seed)
    start = time.perf_counter()
    ops = NaiveBayesHMMOPS(n_states, multiplier=multiplier)
    res = ops.sample(counts, epsilon=epsilon, seed=rng, allow_unconverged=True, keep_posterior=True, **sampler)
    seconds = time.perf_counter() - start
    draws = align_states(res.posterior)
    invariant = convergence_problems(res.posterior, quantities="invariant")
    common = dict(
        dataset=dataset,
        n_states=n_states,
        epsilon=epsilon,
        multiplier=multiplier,
        repeat=repeat,
        last=last,
        converged=not res.problems,
        converged_invariant=not invariant,
        seconds=seconds,
    )
    estimates: dict[tuple[int, str], np.ndarray] = {}
    for c in range(draws.permutations.shape[0]):
        z = draws.z[draws.chain == c]
        estimates[(c + 1, "last 100")] = last_draws_modal(z, n_states, last)
        estimates[(c + 1, "last one")] = z[-1]
    estimates[(0, "released")] = res.params["z"]
    rows = [
        dict(
            part="score",
            chain=c,
            estimate=name,
            agreement=state_agreement(est, truth) if truth is not None else np.nan,
            switches=state_switches(est),
            agreement_last100=state_agreement(est, estimates[(c, "last 100")]) if name == "last one" else np.nan,
            **common,
        )
        for (c, name), est in estimates.items()
    ]
    out = [pd.DataFrame(rows)]
    if cells:
        reference = truth if truth is not None else estimates[(1, "last 100")]
        R, T = reference.shape
        for (c, name), est in estimates.items():
            if c > 1:
                continue
            perm = match_states(est, reference, n_states)  # display labels matched to the truth (or chain 1's last 100)
            out.append(
                pd.DataFrame(
                    {
                        "part": "cell",
                        "chain": c,
                        "estimate": name,
                        "method": f"OPS, {name}" + (f" (chain {c})" if c else ""),
                        "region": np.repeat(counts.regions, T),
                        "month": np.tile(counts.months, R),
                        "state": perm[est].ravel() + 1,
                        "true_state": truth.ravel() + 1 if truth is not None else np.nan,
                        "agreement": state_agreement(est, truth) if truth is not None else np.nan,
                        **common,
                    }
                )
            )
    return pd.concat(out, ignore_index=True)


def ops_states_study(
    datasets: Mapping[str, tuple[WarLogCounts, np.ndarray | None]],
    *,
    repeats: int,
    epsilon: float = 5.0,
    multiplier: float = 100.0,
    n_states: Mapping[str, int] | None = None,
    sampler: Mapping[str, int] = FULL["states_sampler"],
    last: int = LAST,
    seed: int = 0,
    workers: int = 1,
    executor: Any = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """``repeats`` :func:`ops_states_task` runs per data set (the paper's ε = 5 and M = 100;
    ``n_states`` per label, default :data:`~.hmm.STATES_PER_DATASET` by country); repeat 0
    keeps its cells for the figure."""
    repeats = check_int(repeats, "repeats", minimum=1)
    epsilon = check_epsilon(epsilon)
    tasks = []
    for label, (counts, truth) in datasets.items():
        k = (n_states or {}).get(label, STATES_PER_DATASET.get(counts.dataset, 3))
        for r in range(repeats):
            tasks.append(
                Task(
                    ops_states_task,
                    dict(
                        counts=counts,
                        truth=truth,
                        dataset=label,
                        n_states=k,
                        epsilon=epsilon,
                        multiplier=multiplier,
                        repeat=r,
                        sampler=dict(sampler),
                        last=last,
                        cells=r == 0,
                    ),
                    label=f"OPS states {label} repeat {r}",
                )
            )
    return run_tasks(
        tasks,
        seed=seed,
        stream=f"{NAME}/ops-states",
        workers=workers,
        executor=executor,
        progress=progress,
        desc="Foulds 2016 OPS states (Figure 7)",
    )


def _paired(part: pd.DataFrame, value: str) -> pd.DataFrame:
    """``value`` of the last-100 and last-one estimates side by side, one row per (repeat,
    chain); NaN values are kept (real logs have no agreement with a truth)."""
    both = part.loc[part["estimate"].isin(["last 100", "last one"])]
    return both.set_index(["repeat", "chain", "estimate"])[value].unstack("estimate")


def summarise_ops_states(table: pd.DataFrame) -> pd.DataFrame:
    """Per data set: mean agreement of every estimate over repeats and chains, and the paired
    difference last 100 − last one over the (repeat, chain) pairs with its standard error
    (NaN without true states); the same for the month-to-month state switches (last one −
    last 100: > 0 where the one draw is noisier) and the last draw's mean agreement with its
    chain's last-100 estimate, which need no truth."""
    scores = table.loc[table["part"] == "score"]
    rows = []
    for dataset, part in scores.groupby("dataset", sort=False):
        row: dict[str, Any] = {
            "dataset": dataset,
            "repeats": part["repeat"].nunique(),
            "fits_converged": int(part.groupby("repeat")["converged"].first().sum()),
        }
        for name in ESTIMATES:
            vals = part.loc[part["estimate"] == name, "agreement"]
            row[f"agreement {name}"] = vals.mean()
        pair = _paired(part, "agreement")
        diff = pair["last 100"] - pair["last one"]
        row.update(
            {
                "pairs": len(diff),
                "last 100 - last one": diff.mean(),
                "se": diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.nan,
                "pairs last 100 better": int((diff > 0).sum()),
                "pairs equal": int((diff == 0).sum()),
            }
        )
        if "switches" in part:
            sw = _paired(part, "switches")
            noisier = sw["last one"] - sw["last 100"]
            row.update(
                {f"switches {name}": part.loc[part["estimate"] == name, "switches"].mean() for name in ESTIMATES}
            )
            row.update(
                {
                    "switches last one - last 100": noisier.mean(),
                    "switches se": noisier.std(ddof=1) / np.sqrt(len(noisier)) if len(noisier) > 1 else np.nan,
                    "pairs last one noisier": int((noisier > 0).sum()),
                    "agreement last one with last 100": part.loc[
                        part["estimate"] == "last one", "agreement_last100"
                    ].mean(),
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = [
    "ESTIMATES",
    "LAST",
    "last_draws_modal",
    "ops_states_study",
    "ops_states_task",
    "state_switches",
    "summarise_ops_states",
]
