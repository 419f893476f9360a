"""The parts of ``pystanprivacy reproduce foulds2016`` beyond the paper's own figures: the studies
that REPRODUCTION.md's verdicts F5-F8 rest on.

* ``ops_states`` (:func:`reproduce_ops_states`): Figure 7, the OPS HMM's last draw against its
  last 100 (:mod:`.ops_states`), on the logs of Figures 3-5 (at full scale the Afghan War Diary
  for Afghanistan, synthetic Iraq); tasks in ``OUT/.tasks``;
* ``dispersed`` (:func:`reproduce_dispersed`): F5 and F8 refitted with every chain from its own
  start, each mode weighed by its posterior mass (:mod:`.dispersed`), on part ``hmm``'s logs (at
  full scale the Afghan War Diary and synthetic Iraq), in ``OUT/dispersed``;
* ``heldout_dispersed`` (:func:`reproduce_heldout_dispersed`): F6 refitted from dispersed starts
  on a reduced grid, each mode weighed by its posterior mass (:mod:`.heldout_dispersed`), on the
  same logs, in ``OUT/heldout_dispersed``;
* ``ops_gate`` (:func:`reproduce_ops_gate`): the OPS HMM's convergence gate on non-mixing chains
  (:mod:`.ops_gate`), in ``OUT/ops_gate``.

Each calls its study with the arguments, seeds and folders of the committed full runs, so their
saved tasks are read back, not run again. They run on the study's own logs: ``--data`` (a war-logs
file) is read by parts ``hmm`` and ``hmm_occupancy`` only.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from ...run.runner import part_folder, write_results
from . import occupancy
from .hmm import FULL, NAME, QUICK, STATES_PER_DATASET

#: sampler runs per data set of part ``ops_states``
OPS_STATES_REPEATS = {"quick": 2, "full": 10}
#: the data sets of part ``heldout_dispersed``, in the order they run (each its own stream): the
#: diary first (at full scale), so that a partial run has its fits
HELDOUT_KINDS = ("afghanistan", "iraq")
#: the short sampler of the quick runs of parts ``heldout_dispersed`` and ``ops_gate`` (10-state HMMs)
QUICK_SAMPLER = {"chains": 2, "warmup": 150, "draws": 100, "max_treedepth": 6}


# ----------------------------------------------------------------------------------- ops_states
def reproduce_ops_states(out: Path, *, quick: bool, seed: int, workers: int, progress: bool) -> dict[str, pd.DataFrame]:
    """Part ``ops_states`` (REPRODUCTION.md, F7): :func:`~.ops_states.ops_states_study` on the
    logs of Figures 3-5 as part ``hmm`` makes them (``quick=False``: the shipped Afghan War
    Diary for Afghanistan, :mod:`.logs`; ``quick=True``: synthetic logs), ε = 5, M = 100, part
    ``hmm``'s states sampler, :data:`OPS_STATES_REPEATS` sampler runs per data set. Writes
    ``foulds2016_hmm_ops_states{,_summary}`` and ``foulds2016_figure7{,_iraq}.png``."""
    from . import hmm_figures
    from .logs import provenance
    from .ops_states import LAST, ops_states_study, summarise_ops_states

    grid = QUICK if quick else FULL
    repeats = OPS_STATES_REPEATS["quick" if quick else "full"]
    datasets = occupancy._datasets(grid, seed, None, real=not quick)
    start = time.perf_counter()
    table = ops_states_study(
        datasets, repeats=repeats, sampler=grid["states_sampler"], seed=seed, workers=workers, progress=progress
    )
    if table.empty:  # none of its tasks saved (a read-back under saved_only)
        return {}
    summary = summarise_ops_states(table)
    meta = {
        "seed": seed,
        "full": not quick,
        "repeats": repeats,
        "last": LAST,
        "epsilon": 5.0,
        "multiplier": 100.0,
        "sampler": dict(grid["states_sampler"]),
        "datasets": list(datasets),
        "data": provenance(list(datasets), seed=seed),
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{NAME}_ops_states", table, meta)
    write_results(out, f"{NAME}_ops_states_summary", summary, meta)
    for label in datasets:
        if (table["dataset"] == label).any():
            slug = "" if "afghanistan" in label else "_" + label.split()[-1]
            hmm_figures.ops_last_samples(table, label, out / f"foulds2016_figure7{slug}.png")
    return {"hmm_ops_states": table, "hmm_ops_states_summary": summary}


# ------------------------------------------------------------------------------------ dispersed
def reproduce_dispersed(out: Path, *, quick: bool, seed: int, workers: int, progress: bool) -> dict[str, pd.DataFrame]:
    """Part ``dispersed`` (REPRODUCTION.md, F5 and F8): :func:`~.dispersed.dispersed_study` with
    every chain from its own start on part ``hmm``'s logs (``quick=False``: the Afghan War Diary
    and synthetic Iraq, :mod:`.logs`; ``quick=True``: synthetic logs; same data seeds), with the
    states items' numbers of states and sampler (``states``) and the 10-state occupancy claim's
    (``occupancy``), Afghanistan first. Writes ``foulds2016_hmm_dispersed_{states,occupancy}{,_summary}``
    into ``OUT/dispersed`` (their sidecars' ``data`` say which logs), tasks in
    ``OUT/dispersed/.tasks``."""
    from .dispersed import MODE_SDS, THRESHOLD, dispersed_study, summarise_dispersed
    from .logs import provenance

    grid = QUICK if quick else FULL
    occ = occupancy.QUICK if quick else occupancy.FULL
    folder = out / "dispersed"
    # Figures 3-5's logs as part hmm makes them, Afghanistan first (a partial run has the diary's fits)
    logs = occupancy._datasets(grid, seed, None, real=not quick)
    datasets = dict(sorted(logs.items(), key=lambda item: "iraq" in item[0]))
    runs = {
        "states": ({label: STATES_PER_DATASET[label.split()[-1]] for label in datasets}, grid["states_sampler"]),
        "occupancy": ({label: occupancy.N_STATES for label in datasets}, occ["sampler"]),
    }
    tables = {}
    with part_folder("dispersed"):
        for stream, (n_states, sampler) in runs.items():
            start = time.perf_counter()
            table = dispersed_study(
                datasets,
                n_states=n_states,
                sampler=sampler,
                stream=stream,
                seed=seed,
                workers=workers,
                progress=progress,
            )
            if table.empty:
                continue
            summary = summarise_dispersed(table)
            meta = {
                "seed": seed,
                "full": not quick,
                "part": stream,
                "n_states": n_states,
                "sampler": dict(sampler),
                "epsilon": 5.0,
                "ops_multiplier": 100.0,
                "init": "dispersed",
                "mode_tolerance_sds": MODE_SDS,
                "threshold": THRESHOLD,
                "mode_masses": "bridge sampling per mode (foulds2016_hmm.modes); OPS: its tempered target",
                "datasets": list(datasets),
                "data": provenance(list(datasets), seed=seed),
                "seconds": time.perf_counter() - start,
            }
            write_results(folder, f"{NAME}_dispersed_{stream}", table, meta)
            write_results(folder, f"{NAME}_dispersed_{stream}_summary", summary, meta)
            tables[f"hmm_dispersed_{stream}"] = table
    return tables


# ---------------------------------------------------------------------------- heldout_dispersed
def reproduce_heldout_dispersed(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool
) -> dict[str, pd.DataFrame]:
    """Part ``heldout_dispersed`` (REPRODUCTION.md, F6): :func:`~.heldout_dispersed.
    heldout_dispersed_study` on part ``hmm``'s full-size logs (``quick=False``: the Afghan War
    Diary and synthetic Iraq; ``quick=True``: synthetic; its held-out masks: the first splits of
    its stream), the 10-state HMM, Laplace and OPS (M = 10); ``quick=False``: both data sets
    (the diary first), ε in {0.2, 1, 5}, 3 splits; ``quick=True``: Afghanistan, ε = 1, one
    split, a short sampler. Where a full part ``hmm``'s held-out table is in ``out`` and ran on
    the same data set, its held-out entries per split must be these (else ``RuntimeError``) and its
    mean difference is drawn beside (a quick part ``hmm`` holds out of shorter logs: not compared). Writes ``foulds2016_hmm_heldout_dispersed{,_summary}`` and
    its figure into ``OUT/heldout_dispersed``, tasks in ``OUT/heldout_dispersed/.tasks``."""
    from . import hmm_figures
    from .heldout_dispersed import EPSILONS, MODE_SDS, MULTIPLIER, N_STATES, SAMPLER, SPLITS, heldout_dispersed_study
    from .heldout_dispersed_summary import summarise_heldout_dispersed
    from .logs import provenance

    kinds = ("afghanistan",) if quick else HELDOUT_KINDS
    splits, epsilons = (1, (1.0,)) if quick else (SPLITS, EPSILONS)
    sampler = QUICK_SAMPLER if quick else SAMPLER
    folder = out / "heldout_dispersed"
    study_path = out / f"{NAME}_heldout.csv"
    # a quick part hmm holds its held-out panels out of shorter logs (QUICK["heldout_months"]) than
    # these, so only a full run's table has the same masks to check and to draw beside
    study = pd.read_csv(study_path) if study_path.is_file() and not quick else None
    # part hmm's logs (its full held-out data too: 72 months): the diary for Afghanistan at full scale
    logs = occupancy._datasets(QUICK if quick else FULL, seed, None, real=not quick)
    labels = {kind: next(label for label in logs if label.split()[-1] == kind) for kind in kinds}
    tables = []
    start = time.perf_counter()
    with part_folder("heldout_dispersed"):
        for kind in kinds:
            label = labels[kind]
            table = heldout_dispersed_study(
                logs[label][0],
                label=label,
                splits=splits,
                epsilons=epsilons,
                sampler=sampler,
                seed=seed,
                workers=workers,
                progress=progress,
            )
            if table.empty:
                continue
            ref = None if study is None else study.loc[study["dataset"] == label]
            if ref is not None and not ref.empty:  # the masks are part hmm's: same entries per split
                ref = ref.groupby("split")["heldout_entries"].first()
                got = table.groupby("split")["heldout_entries"].first()
                if not (ref.reindex(got.index) == got).all():
                    raise RuntimeError(f"{label}: the held-out masks differ from part hmm's ({study_path.name})")
            tables.append(table)
    if not tables:
        return {}
    table = pd.concat(tables, ignore_index=True)
    summary = summarise_heldout_dispersed(table)
    meta = {
        "seed": seed,
        "datasets": sorted(table["dataset"].unique()),
        "splits": splits,
        "epsilons": list(epsilons),
        "n_states": N_STATES,
        "ops_multiplier": MULTIPLIER,
        "sampler": dict(sampler),
        "init": "dispersed",
        "mode_tolerance_sds": MODE_SDS,
        "mode_masses": "bridge sampling per mode (foulds2016_hmm.modes); OPS: its tempered target",
        "data": provenance([labels[k] for k in kinds], seed=seed),
        "masks": "the first splits of part hmm's held-out study (same stream)",
        "seconds": time.perf_counter() - start,
    }
    folder.mkdir(parents=True, exist_ok=True)
    write_results(folder, f"{NAME}_heldout_dispersed", table, meta)
    write_results(folder, f"{NAME}_heldout_dispersed_summary", summary, meta)
    reference = (
        None
        if study is None
        else hmm_figures.heldout_dispersed_reference(study, n_states=N_STATES, multiplier=MULTIPLIER)
    )
    hmm_figures.heldout_dispersed(summary, reference, folder / f"{NAME}_heldout_dispersed.png")
    return {"hmm_heldout_dispersed": table, "hmm_heldout_dispersed_summary": summary}


# ------------------------------------------------------------------------------------- ops_gate
#: part ``ops_gate``'s sampler runs per (ε, start), its epsilons and sampler (``None``: the study's)
OPS_GATE_RUN = {
    "full": {"repeats": 3, "epsilons": (1.0, 5.0, 10.0), "sampler": None},
    "quick": {"repeats": 1, "epsilons": (5.0,), "sampler": QUICK_SAMPLER},
}


def reproduce_ops_gate(out: Path, *, quick: bool, seed: int, workers: int, progress: bool) -> dict[str, pd.DataFrame]:
    """Part ``ops_gate`` (REPRODUCTION.md, F5-F8, the gate): :func:`~.ops_gate.ops_gate_study`,
    the 10-state OPS HMM on the synthetic war logs whose chains settle in different modes
    (:func:`~.warlogs.non_mixing_war_logs`), from the EM start and from dispersed starts
    (:data:`OPS_GATE_RUN`). Writes ``foulds2016_hmm_ops_gate{,_summary}`` into ``OUT/ops_gate``,
    tasks in ``OUT/ops_gate/.tasks``."""
    from .ops_gate import MODE_SDS, SAMPLER, ops_gate_study, summarise_ops_gate
    from .warlogs import NON_MIXING_STATES, non_mixing_war_logs, preprocess_war_logs

    run = OPS_GATE_RUN["quick" if quick else "full"]
    folder = out / "ops_gate"
    counts = preprocess_war_logs(non_mixing_war_logs().records)
    start = time.perf_counter()
    with part_folder("ops_gate"):
        table = ops_gate_study(
            counts,
            epsilons=list(run["epsilons"]),
            repeats=run["repeats"],
            sampler=run["sampler"] or SAMPLER,
            seed=seed,
            workers=workers,
            progress=progress,
        )
    if table.empty:
        return {}
    summary = summarise_ops_gate(table)
    meta = {
        "seed": seed,
        "repeats": run["repeats"],
        "epsilons": list(run["epsilons"]),
        "n_states": NON_MIXING_STATES,
        "multiplier": 10.0,
        "sampler": run["sampler"] or SAMPLER,
        "mode_tolerance_sds": MODE_SDS,
        "data": "non_mixing_war_logs() (seed 1), preprocessed",
        "seconds": time.perf_counter() - start,
    }
    folder.mkdir(parents=True, exist_ok=True)
    write_results(folder, f"{NAME}_ops_gate", table, meta)
    write_results(folder, f"{NAME}_ops_gate_summary", summary, meta)
    return {"hmm_ops_gate": table, "hmm_ops_gate_summary": summary}


#: part name -> its function, in the order :func:`.beta_bernoulli.reproduce` runs them (after the paper's parts)
SUPPLEMENTARY_PARTS = {
    "ops_states": reproduce_ops_states,
    "dispersed": reproduce_dispersed,
    "heldout_dispersed": reproduce_heldout_dispersed,
    "ops_gate": reproduce_ops_gate,
}

__all__ = [
    "HELDOUT_KINDS",
    "OPS_GATE_RUN",
    "OPS_STATES_REPEATS",
    "SUPPLEMENTARY_PARTS",
    "reproduce_dispersed",
    "reproduce_heldout_dispersed",
    "reproduce_ops_gate",
    "reproduce_ops_states",
]
