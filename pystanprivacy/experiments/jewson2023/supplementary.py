"""The parts of ``pystanprivacy reproduce jewson2023`` beyond the paper's own figures: the studies
that REPRODUCTION.md's verdicts J2, J3, J6, J7, J9, J10 and J11 rest on.

* ``dpsgd_settings`` (:func:`reproduce_dpsgd_settings`): DP-SGD under the settings of the
  authors' public code on the network parts' data sets (:mod:`.dpsgd_settings`);
* ``dpsgd_tuned`` (:func:`reproduce_dpsgd_tuned`): DP-SGD tuned as App. B describes, on the
  data sets of Figures 3, 9 and 10's network rows (:mod:`.dpsgd_tuning`);
* ``paired`` (:func:`reproduce_paired`): Figures 3, 9 and 10's network rows compared data set by
  data set (:mod:`.paired`), from the tables the parts above wrote;
* ``banknote`` (:func:`reproduce_banknote`): Figure 9 on UCI banknote authentication beside
  Abalone, with its tuned DP-SGD and paired table, in ``OUT/banknote``;
* ``counterparts`` (:func:`reproduce_counterparts`): Figure 6's Chaudhuri half and Figure 11 at
  the paper's 10,000 attack rounds (:mod:`.counterparts`), tasks in ``OUT/supplements/.tasks``;
* ``paper_design`` (:func:`reproduce_paper_design`): the simulated logistic experiments on the
  design Sec. 5 states (:mod:`.paper_design`), tasks in ``OUT/paper_design/.tasks``.

Each calls its study with the arguments, seeds and folders of the committed full runs, so their
saved tasks (``results/jewson2023``) are read back, not run again. Parts that keep their tasks
apart from ``OUT/.tasks`` do so through :func:`~pystanprivacy.run.runner.part_folder`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...run.runner import current_context, make_executor, part_folder, write_results
from .common import PAPER

#: the DP-SGD settings trained by part ``dpsgd_settings`` (the paper text's are the network parts' own rows)
DPSGD_SETTINGS = ("authors' code",)
#: tuning data sets per tuning unit of part ``dpsgd_tuned`` (R of :mod:`.dpsgd_tuning`)
TUNING_REPLICATES = 1
#: the UCI data sets of part ``banknote``, Abalone first (its tasks are part ``nn_classification``'s)
BANKNOTE_DATASETS = ("abalone", "banknote")
#: the folders (inside OUT) of the parts that keep their tasks and tables apart
BANKNOTE_FOLDER = "banknote"
SUPPLEMENTS_FOLDER = "supplements"
PAPER_DESIGN_FOLDER = "paper_design"

_UNIT = ["task", "dataset", "n_obs", "d"]
_SETTING = ["stage", "epochs_at_one", "batch_size", "lr", "clip_norm", "slope", "epsilon", "epochs"]


def _size(quick: bool) -> Mapping[str, Any]:
    from .study import FULL, QUICK

    return QUICK if quick else FULL


def _dpsgd_runnable(part: str) -> bool:
    """Whether part ``part``'s DP-SGD can run: the extra [dpsgd] is installed, or nothing runs
    (a read-back under ``saved_only``); otherwise a warning says the part is left out."""
    from .baselines import DPSGD_EXTRA_MESSAGE, dpsgd_available

    if dpsgd_available() or current_context().saved_only:
        return True
    warnings.warn(f"part {part!r} of {PAPER} left out: {DPSGD_EXTRA_MESSAGE}", stacklevel=3)
    return False


def _one_torch_thread() -> None:
    """One torch thread per process, as the committed runs had (the runs are sized for one core)."""
    try:
        import torch
    except ImportError:  # a read-back under saved_only runs nothing
        return
    torch.set_num_threads(1)


def _network_groups(size: Mapping[str, Any], task: str, data_path: Any) -> tuple[list[list[str]], list[str]]:
    """The data sets of part ``nn_<task>``'s two calls (simulated, then its UCI sets found), whose
    order fixes their data seeds, and the notes on UCI sets skipped."""
    from .study import uci_available

    part = f"nn_{task}"
    have_uci, notes = uci_available(size, data_path, (part,))
    uci = [ds for ds in size[f"{part}_uci"] if ds in have_uci]
    return [["simulated"]] + ([uci] if uci else []), notes


# ------------------------------------------------------------------------------ dpsgd_settings
def reproduce_dpsgd_settings(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool, data_path: Any = None
) -> dict[str, pd.DataFrame]:
    """Part ``dpsgd_settings``: :func:`~.dpsgd_settings.dpsgd_settings` with the settings of
    :data:`DPSGD_SETTINGS` on the data sets of parts ``nn_regression`` and ``nn_classification``
    (their seeds: rows pair by data set, n and repeat; REPRODUCTION.md, J3). Writes
    ``jewson2023_nn_<task>_dpsgd_settings.{csv,json}``; tasks in ``OUT/.tasks``."""
    from .dpsgd_settings import SETTINGS, dpsgd_settings

    if not _dpsgd_runnable("dpsgd_settings"):
        return {}
    size = _size(quick)
    tables = {}
    for task in ("regression", "classification"):
        groups, notes = _network_groups(size, task, data_path)
        start = time.perf_counter()
        table = pd.concat(
            [
                dpsgd_settings(
                    task=task,
                    datasets=ds,
                    ns=size["nn_ns"],
                    epsilons=size["nn_epsilons"],
                    repeats=size["nn_repeats"],
                    data_path=data_path,
                    settings=list(DPSGD_SETTINGS),
                    seed=seed,
                    workers=workers,
                    progress=progress,
                )
                for ds in groups
            ],
            ignore_index=True,
        )
        meta = {
            "seed": seed,
            "task": task,
            "full": not quick,
            "ns": size["nn_ns"],
            "epsilons": size["nn_epsilons"],
            "repeats": size["nn_repeats"],
            "datasets": groups,
            "settings": {
                k: {
                    **{n: v for n, v in cfg.items() if n != "epochs"},
                    "epochs": {"paper text": "14 + floor(epsilon)", "authors' code": "15 + int(epsilon)"}[k],
                }
                for k, cfg in SETTINGS.items()
                if k in DPSGD_SETTINGS
            },
            "notes": notes,
            "seconds": time.perf_counter() - start,
        }
        write_results(out, f"{PAPER}_nn_{task}_dpsgd_settings", table, meta)
        tables[f"nn_{task}_dpsgd_settings"] = table
    return tables


# --------------------------------------------------------------------------------- dpsgd_tuned
def tuning_summary(tuning: pd.DataFrame, epsilons: Sequence[float]) -> list[dict[str, Any]]:
    """Per tuning unit of :mod:`.dpsgd_tuning`: the chosen settings, R, the privacy cost and
    every candidate's mean validation score over the R replicates (``None`` where a run diverged)."""
    from .dpsgd_tuning import tuning_privacy_cost

    units = []
    for key, g in tuning.groupby(_UNIT, sort=False):
        scores = g.groupby(_SETTING, dropna=False, sort=False).agg(score=("score", "mean"), chosen=("chosen", "all"))
        scores = scores.reset_index()
        win1 = scores[(scores["stage"] == 1) & scores["chosen"]].iloc[0]
        win2 = scores[(scores["stage"] == 2) & scores["chosen"]]
        unit = dict(zip(_UNIT, key))
        unit.update(
            chosen={
                "epochs_at_one": int(win1["epochs_at_one"]),
                "batch_size": int(win1["batch_size"]),
                "lr": float(win1["lr"]),
                "clip_norm": float(win1["clip_norm"]),
                "slope": float(g["chosen_slope"].iloc[0]),
                "stage1_validation_score": float(win1["score"]),
                "stage2_validation_score": float(win2["score"].mean()) if len(win2) else None,
            },
            replicates=int(g["replicates"].iloc[0]),
            unit_seconds=float(g["unit_seconds"].iloc[0]),
            privacy_cost=tuning_privacy_cost(
                epsilons=list(epsilons), replicates=int(g["replicates"].iloc[0]), private=key[1] != "simulated"
            ),
            candidates=[
                {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in c.items()}
                for c in scores.drop(columns="chosen").to_dict(orient="records")
            ],
        )
        units.append(unit)
    return units


def _tuned_common(quick: bool, seed: int) -> dict[str, Any]:
    from .dpsgd_tuning import PAPER_GRID, PAPER_SLOPES, VALIDATION_FRACTION

    return {
        "seed": seed,
        "full": not quick,
        "replicates": TUNING_REPLICATES,
        "grid": {k: list(v) for k, v in PAPER_GRID.items()},
        "slopes": list(PAPER_SLOPES),
        "epoch_rule": "max(1, round(E1 + s (floor(eps) - 1))), halves rounded up; E1 = 15, s = 1 is 14 + floor(eps)",
        "validation_fraction": VALIDATION_FRACTION,
        "network": "one hidden layer of 10 tanh units, plain SGD (the paper text's); non-private SGD: the tuned "
        "batch size and learning rate, the epochs of eps = 1, no clipping",
    }


def _tuned_figures(
    out: Path,
    task: str,
    groups: list[list[str]],
    notes: list[str],
    *,
    quick: bool,
    seed: int,
    workers: int,
    progress: bool,
    data_path: Any,
) -> pd.DataFrame:
    """DP-SGD tuned on the data sets ``groups`` of part ``nn_<task>`` (one call per group, as
    the part's calls): ``jewson2023_nn_<task>_dpsgd_{tuned,tuning}`` in ``out``."""
    from .dpsgd_tuning import dpsgd_tuned

    size = _size(quick)
    start = time.perf_counter()
    runs = [
        dpsgd_tuned(
            task=task,
            datasets=ds,
            ns=size["nn_ns"],
            epsilons=size["nn_epsilons"],
            repeats=size["nn_repeats"],
            replicates=TUNING_REPLICATES,
            data_path=data_path,
            seed=seed,
            workers=workers,
            progress=progress,
        )
        for ds in groups
    ]
    rows = pd.concat([r for r, _ in runs], ignore_index=True)
    tuning = pd.concat([t for _, t in runs], ignore_index=True)
    epsilons = list(size["nn_epsilons"])
    meta = {
        **_tuned_common(quick, seed),
        "task": task,
        "epsilons": epsilons,
        "ns": size["nn_ns"],
        "repeats": size["nn_repeats"],
        "datasets": groups,
        "notes": notes,
        "tuning": tuning_summary(tuning, epsilons),
        "seconds": time.perf_counter() - start,
    }
    write_results(out, f"{PAPER}_nn_{task}_dpsgd_tuned", rows, meta)
    write_results(out, f"{PAPER}_nn_{task}_dpsgd_tuning", tuning, {k: v for k, v in meta.items() if k != "tuning"})
    return rows


def reproduce_dpsgd_tuned(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool, data_path: Any = None
) -> dict[str, pd.DataFrame]:
    """Part ``dpsgd_tuned``: DP-SGD tuned as App. B describes (:func:`~.dpsgd_tuning.dpsgd_tuned`,
    R = :data:`TUNING_REPLICATES`) on the data sets of parts ``nn_regression`` and
    ``nn_classification`` (``jewson2023_nn_<task>_dpsgd_{tuned,tuning}``) and of part
    ``nn_features`` (:func:`~.dpsgd_tuning.dpsgd_tuned_features`, both tasks:
    ``jewson2023_nn_features_dpsgd_{tuned,tuning}``), with their seeds (REPRODUCTION.md, J3, J9,
    J10). Tasks in ``OUT/.tasks``. Not private: the tuning reads exact validation scores."""
    from .dpsgd_tuning import dpsgd_tuned_features
    from .study import nn_figure_grid

    if not _dpsgd_runnable("dpsgd_tuned"):
        return {}
    _one_torch_thread()
    size = _size(quick)
    tables = {}
    for task in ("regression", "classification"):
        groups, notes = _network_groups(size, task, data_path)
        tables[f"nn_{task}_dpsgd_tuned"] = _tuned_figures(
            out, task, groups, notes, quick=quick, seed=seed, workers=workers, progress=progress, data_path=data_path
        )
    runs, seconds = {}, {}
    for task in ("regression", "classification"):
        start = time.perf_counter()
        runs[task] = dpsgd_tuned_features(
            task=task,
            ds=size["nn_features_ds"],
            n_obs=size["nn_features_n"],
            epsilons=size["nn_features_epsilons"],
            repeats=size["nn_features_repeats"],
            replicates=TUNING_REPLICATES,
            figure=nn_figure_grid(size),
            seed=seed,
            workers=workers,
            progress=progress,
        )
        seconds[task] = time.perf_counter() - start
    rows = pd.concat([r for r, _ in runs.values()], ignore_index=True)
    tuning = pd.concat([t for _, t in runs.values()], ignore_index=True)
    epsilons = list(size["nn_features_epsilons"])
    meta = {
        **_tuned_common(quick, seed),
        "tasks": list(runs),
        "epsilons": epsilons,
        "ds": size["nn_features_ds"],
        "n_obs": size["nn_features_n"],
        "repeats": size["nn_features_repeats"],
        "tuning": [u for _, t in runs.values() for u in tuning_summary(t, epsilons)],
        "seconds": seconds,
    }
    write_results(out, f"{PAPER}_nn_features_dpsgd_tuned", rows, meta)
    write_results(out, f"{PAPER}_nn_features_dpsgd_tuning", tuning, {k: v for k, v in meta.items() if k != "tuning"})
    tables["nn_features_dpsgd_tuned"] = rows
    return tables


# -------------------------------------------------------------------------------------- paired
def paired_tables(
    out: Path,
    *,
    quick: bool,
    seed: int,
    data_path: Any = None,
    features: bool = True,
    tasks: Sequence[str] = ("regression", "classification"),
) -> dict[str, pd.DataFrame]:
    """Part ``paired``'s tables in ``out``: per network task, βD-Bayes minus each baseline data set
    by data set (:func:`~.paired.network_comparisons`) from the tables there (the network part's,
    the authors'-code DP-SGD's and the tuned DP-SGD's, when written), written as
    ``jewson2023_nn_<task>_paired`` and, with ``features``, ``jewson2023_nn_features_<task>_paired``.
    A network part whose rows are neither written nor saved in ``out`` is left out."""
    from .paired import AUTHORS_SUFFIX, AXIS, METRICS, features_table, network_comparisons, network_table

    tables = {}
    for task in tasks:
        for by in ("n_obs", "d") if features else ("n_obs",):
            try:
                if by == "d":
                    table, source = features_table(out, task, quick=quick, seed=seed)
                else:
                    table, source = network_table(out, task, quick=quick, seed=seed, data_path=data_path)
            except FileNotFoundError:
                continue
            paired = network_comparisons(table, task, by=by)
            counts = (
                table[~table["method"].str.endswith(AUTHORS_SUFFIX)]
                .drop_duplicates(["dataset", by, "repeat"])
                .groupby(["dataset", by])
                .size()
            )
            metric = METRICS[task][0]
            meta = {
                "task": task,
                "part": "nn_features" if by == "d" else f"nn_{task}",
                "metric": "log " + metric if task == "regression" else metric,
                "source": source,
                "data_sets": {f"{ds} {AXIS[by]}={n}": int(c) for (ds, n), c in counts.items()},
            }
            name = f"nn_features_{task}_paired" if by == "d" else f"nn_{task}_paired"
            write_results(out, f"{PAPER}_{name}", paired, meta)
            tables[name] = paired
    return tables


def reproduce_paired(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool, data_path: Any = None
) -> dict[str, pd.DataFrame]:
    """Part ``paired`` (REPRODUCTION.md, J3, J9, J10): :func:`paired_tables` of ``out``. Fits nothing."""
    del workers, progress  # nothing runs
    return paired_tables(out, quick=quick, seed=seed, data_path=data_path)


# ------------------------------------------------------------------------------------ banknote
def reproduce_banknote(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool, data_path: Any = None
) -> dict[str, pd.DataFrame]:
    """Part ``banknote``: Figure 9 on UCI banknote authentication, the paper's "bank -
    authenticity", beside Abalone (REPRODUCTION.md, J9), in ``OUT/banknote`` (tables and tasks).

    The network part's UCI call with the data sets :data:`BANKNOTE_DATASETS`, Abalone first: its
    data seeds and task indices are part ``nn_classification``'s, so those tasks are the part's
    own (``OUT/banknote/.tasks`` holds copies). Writes ``jewson2023_nn_classification{,_summary}``
    there (the part's table names, both data sets' rows), then, with the extra [dpsgd], the tuned
    DP-SGD of both data sets (``..._dpsgd_{tuned,tuning}``) and the paired table."""
    from .networks import neural
    from .study import summarise

    size = _size(quick)
    folder = out / BANKNOTE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    tables: dict[str, pd.DataFrame] = {}
    with part_folder(BANKNOTE_FOLDER):
        start = time.perf_counter()
        table = neural(
            task="classification",
            datasets=list(BANKNOTE_DATASETS),
            ns=size["nn_ns"],
            epsilons=size["nn_epsilons"],
            repeats=size["nn_repeats"],
            data_path=data_path,
            sampler=size["nn_sampler"],
            seed=seed,
            workers=workers,
            progress=progress,
        )
        summary = summarise(table, ["auc"])
        meta = {
            "seed": seed,
            "full": not quick,
            "ns": size["nn_ns"],
            "epsilons": size["nn_epsilons"],
            "repeats": size["nn_repeats"],
            "sampler": dict(size["nn_sampler"]),
            "datasets": list(BANKNOTE_DATASETS),
            "seconds": time.perf_counter() - start,
        }
        write_results(folder, f"{PAPER}_nn_classification", table, meta)
        write_results(folder, f"{PAPER}_nn_classification_summary", summary, meta)
        tables["banknote_nn_classification"] = table
        if _dpsgd_runnable("banknote"):
            _one_torch_thread()
            tables["banknote_nn_classification_dpsgd_tuned"] = _tuned_figures(
                folder,
                "classification",
                [list(BANKNOTE_DATASETS)],
                [],
                quick=quick,
                seed=seed,
                workers=workers,
                progress=progress,
                data_path=data_path,
            )
        paired = paired_tables(
            folder, quick=quick, seed=seed, data_path=data_path, features=False, tasks=("classification",)
        )
        tables.update({f"banknote_{k}": v for k, v in paired.items()})
    return tables


# -------------------------------------------------------------------------------- counterparts
def _study_table(out: Path, name: str, part: str) -> pd.DataFrame:
    """The study's table ``name`` in ``out``; ``FileNotFoundError`` naming the part that writes it."""
    path = out / f"{PAPER}_{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: part {part!r} of {PAPER} writes it (run it into the same --out first)"
        )
    return pd.read_csv(path)


def reproduce_counterparts(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool, data_path: Any = None
) -> dict[str, pd.DataFrame]:
    """Part ``counterparts`` (REPRODUCTION.md, J6, J11), tasks in ``OUT/supplements/.tasks``:

    * Figure 6's Chaudhuri half: :func:`~.counterparts.counterparts` on the data sets of part
      ``logistic`` (same grid, data seeds and repeats), ``jewson2023_counterparts{,_summary}``,
      and ``jewson2023_figure6.png`` with part ``logistic``'s βD and PM rows (its summary must be
      in ``out``);
    * Figure 11 at the paper's 10,000 rounds: :func:`~.counterparts.attack_paper_rounds` at part
      ``attack``'s epsilons, ``jewson2023_attack_paper_rounds`` with the log RMSE of part
      ``attack``'s table, and Figure 11 redrawn with both round counts.
    """
    from . import figures
    from .counterparts import PAPER_ATTACK_ROUNDS, attack_paper_rounds, counterparts
    from .study import merge_attack_rmse, summarise, uci_available

    size = _size(quick)
    logistic_summary = _study_table(out, "logistic_summary", "logistic")
    rmse = _study_table(out, "attack_rmse", "attack")
    study_attack = _study_table(out, "attack", "attack")
    common = {"seed": seed, "full": not quick, "workers": workers}
    tables: dict[str, pd.DataFrame] = {}
    with part_folder(SUPPLEMENTS_FOLDER), make_executor(workers) as ex:
        have_uci, notes = uci_available(size, data_path, ("logistic",))
        uci = [ds for ds in size["logistic_uci"] if ds in have_uci]
        run = dict(seed=seed, workers=workers, progress=progress, executor=ex)
        start = time.perf_counter()
        fits = [
            counterparts(
                datasets=["simulated"],
                ns=size["logistic_sim_ns"],
                epsilons=size["logistic_sim_epsilons"],
                repeats=size["logistic_repeats"],
                stream="logistic-sim",
                **run,
            )
        ]
        if uci:
            fits.append(
                counterparts(
                    datasets=uci,
                    ns=size["logistic_uci_ns"],
                    epsilons=size["logistic_uci_epsilons"],
                    repeats=size["logistic_repeats"],
                    data_path=data_path,
                    stream="logistic-uci",
                    **run,
                )
            )
        table = pd.concat(fits, ignore_index=True)
        summary = summarise(table, ["rmse", "auc", "csa", "distance"])
        meta = {
            **common,
            **{k: size[k] for k in size if k.startswith("logistic") and k != "logistic_repeats"},
            "repeats": size["logistic_repeats"],
            "calibration": "paper (2 / (n lambda epsilon) per coefficient)",
            "data": "the study's logistic part's data sets: its data seeds (streams logistic-sim, logistic-uci)",
            "noise_streams": ["jewson2023/counterparts-logistic-sim", "jewson2023/counterparts-logistic-uci"],
            "notes": notes,
            "seconds": time.perf_counter() - start,
        }
        write_results(out, f"{PAPER}_counterparts", table, meta)
        write_results(out, f"{PAPER}_counterparts_summary", summary, meta)
        figures.figure6(logistic_summary, summary, out / f"{PAPER}_figure6.png")
        tables.update(counterparts=table, counterparts_summary=summary)

        start = time.perf_counter()
        att = attack_paper_rounds(epsilons=size["attack_epsilons"], rounds=PAPER_ATTACK_ROUNDS, **run)
        rounds = merge_attack_rmse(att, rmse)
        meta = {
            **common,
            "epsilons": size["attack_epsilons"],
            "rounds_in_all": PAPER_ATTACK_ROUNDS,
            "rounds_per_dataset": PAPER_ATTACK_ROUNDS // 2,
            "D": "{(1, 1), (0, 0)}",
            "D_prime": "{(-1, 1), (0, 0)}",
            "coin": "the paper's fair coin per round at its expected split: half the rounds from D, half from D'",
            "seed_stream": "jewson2023/attack-paper-rounds (independent of the study's attack part)",
            "log_rmse_from": f"{PAPER}_attack_rmse.csv",
            "seconds": time.perf_counter() - start,
        }
        write_results(out, f"{PAPER}_attack_paper_rounds", rounds, meta)
        figures.figure11(study_attack, out / f"{PAPER}_figure11.png", rmse_repeats=rmse, paper_rounds=rounds)
        tables["attack_paper_rounds"] = rounds
    return tables


# -------------------------------------------------------------------------------- paper_design
def class_balance(table: pd.DataFrame, by: str) -> dict[str, dict[str, Any]]:
    """Per value of ``by``: over the data sets (one per (``by``, repeat)), the quartiles of the
    training share of y = 1 and how many test sets hold one class only (``auc`` NaN there)."""
    out = {}
    for key, g in table.drop_duplicates([by, "repeat"]).groupby(by):
        q = np.quantile(g["y1_share"], [0.0, 0.25, 0.5, 0.75, 1.0])
        one_class = int(((g["y1_share_test"] == 0) | (g["y1_share_test"] == 1)).sum())
        out[str(key)] = {
            "data_sets": len(g),
            "y1_share_min_q25_median_q75_max": [round(float(v), 4) for v in q],
            "one_class_test_sets": one_class,
        }
    return out


def _study_design_rows(out: Path, name: str, by: tuple[str, ...]) -> pd.DataFrame | None:
    """:func:`~.paper_design_figures.summarise_design` of the study's simulated rows of
    ``jewson2023_<name>.csv`` in ``out``, or ``None`` when the study has not written it there."""
    from .paper_design_figures import summarise_design

    path = out / f"{PAPER}_{name}.csv"
    if not path.is_file():
        return None
    table = pd.read_csv(path)
    return summarise_design(table[table["dataset"] == "simulated"], by)


def reproduce_paper_design(
    out: Path, *, quick: bool, seed: int, workers: int, progress: bool, data_path: Any = None
) -> dict[str, pd.DataFrame]:
    """Part ``paper_design`` (REPRODUCTION.md, J2, J7, J10), tasks in ``OUT/paper_design/.tasks``:
    :func:`~.paper_design.logistic_paper` on part ``logistic``'s simulated grid (d = 2,
    ``jewson2023_logistic_paper_design{,_summary}``, ``jewson2023_paper_design_figure2.png`` with
    part ``logistic``'s UCI panels where its summary is in ``out``) and
    :func:`~.paper_design.features_paper` on part ``features``' grid
    (``jewson2023_features_paper_design{,_summary}``, ``jewson2023_paper_design_figure10.png``),
    drawn beside the study's own design where its table is in ``out``. Simulated data only."""
    del data_path  # simulated data only
    from .paper_design import DESIGN, FEATURES_STREAM, LOGISTIC_STREAM, features_paper, logistic_paper
    from .paper_design_figures import design_figure2, design_figure10, summarise_design

    size = _size(quick)
    common = {"seed": seed, "full": not quick, "workers": workers}
    tables: dict[str, pd.DataFrame] = {}
    with part_folder(PAPER_DESIGN_FOLDER), make_executor(workers) as ex:
        run = dict(sampler=size["sampler"], seed=seed, workers=workers, executor=ex, progress=progress)
        start = time.perf_counter()
        table = logistic_paper(
            ns=size["logistic_sim_ns"],
            epsilons=size["logistic_sim_epsilons"],
            repeats=size["logistic_repeats"],
            d=2,
            **run,
        )
        by = ("dataset", "method", "epsilon", "n_obs")
        summary = summarise_design(table, by)
        meta = {
            **common,
            "design": DESIGN,
            "d": 2,
            "ns": size["logistic_sim_ns"],
            "epsilons": size["logistic_sim_epsilons"],
            "repeats": size["logistic_repeats"],
            "sampler": dict(size["sampler"]),
            "seed_stream": f"{PAPER}/{LOGISTIC_STREAM} (data: its /data child)",
            "class_balance_by_n": class_balance(table, "n_obs"),
            "seconds": time.perf_counter() - start,
        }
        write_results(out, f"{PAPER}_logistic_paper_design", table, meta)
        write_results(out, f"{PAPER}_logistic_paper_design_summary", summary, meta)
        uci = out / f"{PAPER}_logistic_summary.csv"  # J2's UCI half, part logistic's
        design_figure2(
            summary, None, out / f"{PAPER}_paper_design_figure2.png", uci=pd.read_csv(uci) if uci.is_file() else None
        )
        tables.update(logistic_paper_design=table, logistic_paper_design_summary=summary)

        start = time.perf_counter()
        table = features_paper(
            ds=size["features_ds"],
            n_obs=size["features_n"],
            epsilons=size["features_epsilons"],
            repeats=size["features_repeats"],
            **run,
        )
        by = ("dataset", "method", "epsilon", "d")
        summary = summarise_design(table, by)
        meta = {
            **common,
            "design": DESIGN,
            **{k: size[k] for k in size if k.startswith("features")},
            "sampler": dict(size["sampler"]),
            "seed_streams": [f"{PAPER}/{FEATURES_STREAM.format(d=d)}" for d in size["features_ds"]],
            "class_balance_by_d": class_balance(table, "d"),
            "seconds": time.perf_counter() - start,
        }
        write_results(out, f"{PAPER}_features_paper_design", table, meta)
        write_results(out, f"{PAPER}_features_paper_design_summary", summary, meta)
        design_figure10(summary, _study_design_rows(out, "features", by), out / f"{PAPER}_paper_design_figure10.png")
        tables.update(features_paper_design=table, features_paper_design_summary=summary)
    return tables


#: part name -> its function, in the order :func:`.study.reproduce` runs them (after the paper's parts)
SUPPLEMENTARY_PARTS = {
    "dpsgd_settings": reproduce_dpsgd_settings,
    "dpsgd_tuned": reproduce_dpsgd_tuned,
    "paired": reproduce_paired,
    "banknote": reproduce_banknote,
    "counterparts": reproduce_counterparts,
    "paper_design": reproduce_paper_design,
}

__all__ = [
    "BANKNOTE_DATASETS",
    "DPSGD_SETTINGS",
    "SUPPLEMENTARY_PARTS",
    "TUNING_REPLICATES",
    "class_balance",
    "paired_tables",
    "reproduce_banknote",
    "reproduce_counterparts",
    "reproduce_dpsgd_settings",
    "reproduce_dpsgd_tuned",
    "reproduce_paired",
    "reproduce_paper_design",
    "tuning_summary",
]
