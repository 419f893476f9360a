"""Kulkarni et al. (2022), Figures 4 and 5 (REPRODUCTION.md, K4 and K5) with LDP-SGD tuned on a
validation split of the training users (issue 49, item 2): the committed regression part's splits,
epsilon grids and 30 repeats; the protocol, grid and privacy cost are those of
:mod:`pystanprivacy.experiments.kulkarni2022.ldp_sgd_tuning` (the tuning is ours: the paper describes
none).

Part ``ldp_sgd_tuned`` of ``pystanprivacy reproduce kulkarni2022`` (:func:`reproduce_ldp_sgd_tuned`,
after part ``regression``, whose tables it reads from the same folder) writes, per figure N in {4, 5}:

* ``kulkarni2022_figureN_ldp_sgd_tuned.csv``: one row per (users, epsilon, repeat, method) with
  ``method`` ``ldp-sgd-tuned`` (the chosen settings, their validation score and the privacy cost of
  tuning in the row) or ``ldp-sgd-untuned`` (the committed settings on the same users, own stream);
* ``kulkarni2022_figureN_ldp_sgd_tuned_candidates.csv``: every candidate's validation score in every unit;
* ``kulkarni2022_figureN_ldp_sgd_tuned_summary.csv`` and the JSON sidecars (the grid, the protocol,
  every unit's chosen settings, the privacy cost, the summary against the committed SS and LDP-SGD);
* ``kulkarni2022_figureN_ldp_sgd_tuned.png``: :func:`~.tuned_figures.tuned_comparison` (SS, the
  untuned and the tuned LDP-SGD, the non-private fit and, for Wine, predicting 0; SS minus each
  LDP-SGD paired by repeat).

The task results are saved in ``<out>/ldp_sgd_tuned/.tasks`` (resumable), apart from the study's
``<out>/.tasks``, which holds the regression part's own tasks only. Seeds give
reproducibility, not security.

References
----------
.. [1] T. Kulkarni, J. Jälkö, S. Kaski and A. Honkela, "Locally Differentially Private Bayesian
   Inference", arXiv:2110.14426 (2022), Sec. 4.2, 4.6, Figures 4-5.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...models.kulkarni2022_regression import DEFAULT_DELTA
from ...run.runner import part_folder, write_results
from . import ldp_sgd_tuning as tun
from . import regression as reg
from .data import regression_data
from .tuned_figures import tuned_comparison

METRIC = {"figure4": "rmse", "figure5": "auc"}
DATA = {"figure4": ("wine", 4), "figure5": ("adult", 5)}
KEYS = ("users", "epsilon", "repeat")


def name(figure: str, part: str = "") -> str:
    """File stem of a figure's table: ``kulkarni2022_<figure>_ldp_sgd_tuned[_<part>]``."""
    return f"kulkarni2022_{figure}_ldp_sgd_tuned" + (f"_{part}" if part else "")


def load_data(figure: str, data_dir: str | None, seed: int):
    """The figure's data exactly as :func:`regression.reproduce` builds it."""
    which, d = DATA[figure]
    if which == "wine":
        return regression_data("wine", data_dir, d=d, seed=seed, R_y=2.0)
    return regression_data("adult", data_dir, d=d, seed=seed)


def check_against_committed(data, committed_meta: dict[str, Any]) -> None:
    """The public preprocessing facts of ``data`` equal those of the committed regression run (so
    the split and the feature map are the same); ``ValueError`` naming the first that differs."""
    theirs = committed_meta["args"]["preprocessing"]
    for key in ("n_train", "n_test", "p", "d"):
        if data.info[key] != theirs[key]:
            raise ValueError(f"preprocessing {key} is {data.info[key]}, the committed run's is {theirs[key]}")
    for key in ("explained_variance", "feature_scale"):
        if not math.isclose(data.info[key], theirs[key], rel_tol=1e-9):
            raise ValueError(f"preprocessing {key} is {data.info[key]!r}, the committed run's is {theirs[key]!r}")


def summarise(table: pd.DataFrame, committed: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per users and epsilon: the tuned and untuned LDP-SGD (this run) and the committed SS and
    LDP-SGD, mean, sd and SE over the repeats; the paired differences SS - tuned (committed SS of
    repeat r against this run's tuned of repeat r: same split, independent noise) and tuned - untuned
    (this run, same users) with their SEs; how often each setting was chosen."""
    rows = []
    ss = committed[committed["method"] == "ss"].set_index(["epsilon", "repeat"])[metric]
    old = committed[committed["method"] == "ldp-sgd"].set_index(["epsilon", "repeat"])[metric]
    for (users, eps), g in table.groupby(["users", "epsilon"], sort=True):
        tuned = g[g["method"] == "ldp-sgd-tuned"].set_index("repeat")
        untuned = g[g["method"] == "ldp-sgd-untuned"].set_index("repeat")[metric]
        t = tuned[metric]
        row: dict[str, Any] = {"users": users, "epsilon": eps, "repeats": len(t)}
        for label, s in (
            ("tuned", t),
            ("untuned", untuned),
            ("committed_ss", ss.xs(eps, level="epsilon")),
            ("committed_ldp_sgd", old.xs(eps, level="epsilon")),
        ):
            row[f"{label}_mean"] = s.mean()
            row[f"{label}_sd"] = s.std()
            row[f"{label}_se"] = s.std() / math.sqrt(len(s))
        for label, diff in (
            ("ss_minus_tuned", ss.xs(eps, level="epsilon").reindex(t.index) - t),
            ("tuned_minus_untuned", t - untuned.reindex(t.index)),
        ):
            diff = diff.dropna()
            row[label] = diff.mean()
            row[f"{label}_se"] = diff.std() / math.sqrt(len(diff))
        if metric == "auc":
            row["tuned_below_half"] = int((t < 0.5).sum())
            row["committed_ldp_sgd_below_half"] = int((old.xs(eps, level="epsilon") < 0.5).sum())
        chosen = tuned[["learning_rate", "group_constant", "estimate"]].astype(str).agg(" / ".join, axis=1)
        counts = chosen.value_counts()
        row["modal_setting"] = counts.index[0]
        row["modal_count"] = int(counts.iloc[0])
        row["distinct_settings"] = int(counts.size)
        row["median_learning_rate"] = float(tuned["learning_rate"].median())
        row["median_group_constant"] = float(tuned["group_constant"].median())
        row["share_last_iterate"] = float((tuned["estimate"] == "last").mean())
        row["cost_epsilon_fit_user"] = float(tuned["cost_epsilon_fit_user"].iloc[0])
        rows.append(row)
    return pd.DataFrame(rows)


#: the folder (inside OUT) of the part's saved tasks
FOLDER = "ldp_sgd_tuned"


def run_figure(
    figure: str,
    out: Path,
    *,
    epsilons: list[float],
    repeats: int,
    runs: int,
    seed: int,
    workers: int,
    progress: bool,
    data_dir: str | None = None,
) -> pd.DataFrame:
    """One figure's tuned LDP-SGD (``figure4`` or ``figure5``) on the regression part's data and
    split (its table and sidecar in ``out``), written into ``out``; returns the summary."""
    if not (out / f"{reg.PREFIX}_{figure}.json").is_file():
        raise FileNotFoundError(
            f"{out / f'{reg.PREFIX}_{figure}.json'} not found: part 'regression' of kulkarni2022 writes it "
            "(run it into the same --out first)"
        )
    committed_meta = json.loads((out / f"{reg.PREFIX}_{figure}.json").read_text())
    committed = pd.read_csv(out / f"{reg.PREFIX}_{figure}.csv")
    data = load_data(figure, data_dir, seed)
    check_against_committed(data, committed_meta)
    common = dict(
        epsilons=epsilons,
        repeats=repeats,
        delta=DEFAULT_DELTA,
        grid=tun.GRID,
        runs=runs,
        seed=seed,
        workers=workers,
        progress=progress,
    )
    start = time.perf_counter()
    if figure == "figure4":
        table = tun.figure4_tuned(data, **common)
    else:
        table = tun.figure5_tuned(data, subsample=committed_meta["args"]["subsample"], **common)
    seconds = time.perf_counter() - start
    metric = METRIC[figure]
    results = table[table["method"] != "candidate"].dropna(axis=1, how="all").reset_index(drop=True)
    candidates = table[table["method"] == "candidate"].dropna(axis=1, how="all").reset_index(drop=True)
    summary = summarise(results, committed, metric)
    tuned = results[results["method"] == "ldp-sgd-tuned"]
    meta = {
        "figure": figure,
        "data": data.name,
        "synthetic": data.synthetic,
        "preprocessing": data.info,
        "epsilons": epsilons,
        "repeats": repeats,
        "delta": DEFAULT_DELTA,
        "grid": tun.GRID,
        "theta_bound": tun.THETA_BOUND,
        "runs_per_candidate": runs,
        "validation_fraction": tun.VALIDATION_FRACTION,
        "untuned": tun.UNTUNED,
        "seed": seed,
        "stream": f"{tun.STREAM}/{figure}",
        "workers": workers,
        "seconds": seconds,
        "committed_regression_run": f"{reg.PREFIX}_{figure}.csv",
    }
    cost = tun.tuning_cost(epsilon=1.0, delta=DEFAULT_DELTA, grid=tun.GRID, runs=runs)
    extra = {
        "protocol": (
            "per (users, epsilon, repeat): the users are split 80/20 (tuning-fit / validation) from the "
            "unit's own stream; every learning rate x group constant runs runs_per_candidate times on the "
            "tuning-fit users, both estimates (iterate average, last iterate) are scored on the validation "
            "users (Wine: RMSE, Adult: ROC-AUC) and averaged over the runs; the best mean wins (ties: the "
            "first in grid order); LDP-SGD with it runs once on all the users and is scored on the test "
            "rows, never seen by the tuner. The tuning is ours: Kulkarni et al. describe none."
        ),
        "privacy_cost": {
            "rule": "basic composition (Dwork & Roth 2014, Thm 3.16), no amplification, no shuffling",
            "tuning_runs_per_fit_user": cost["tuning_runs"],
            "epsilon_fit_user_per_unit_epsilon": cost["epsilon_fit_user"],
            "delta_fit_user": cost["delta_fit_user"],
            "per_epsilon": {
                f"{e:g}": tun.tuning_cost(epsilon=e, delta=DEFAULT_DELTA, grid=tun.GRID, runs=runs) for e in epsilons
            },
            "validation_users": (
                "pay (epsilon, delta) for the reported run; their data are read in the clear to "
                "score the candidates (not part of any charged mechanism: the tuned protocol is "
                "not LDP for them)"
            ),
            "paper": "Kulkarni et al. report no tuning and no such cost",
        },
        "chosen": tuned[
            [
                "users",
                "epsilon",
                "repeat",
                "learning_rate",
                "group_constant",
                "estimate",
                "group_size",
                "steps",
                "validation_score",
            ]
        ].to_dict(orient="records"),
        "summary": summary.to_dict(orient="records"),
    }
    out.mkdir(parents=True, exist_ok=True)
    write_results(out, name(figure), results, meta, extra=extra)
    write_results(out, name(figure, "candidates"), candidates, meta)
    write_results(out, name(figure, "summary"), summary, meta)
    pre = data.info
    references = {"predicting 0 (the centred mean)": float(np.sqrt(np.mean(np.square(data.y_test))))}
    tuned_comparison(
        summary,
        reg.summarise(committed, metric),
        metric,
        f"Kulkarni et al. {figure.replace('figure', 'Figure ')}: {'Wine' if figure == 'figure4' else 'Adult'} "
        f"(n = {pre['n_train']}, d = {pre['d']})",
        out / f"{name(figure)}.png",
        committed=committed,
        references=references if figure == "figure4" else {},
    )
    return summary


def reproduce_ldp_sgd_tuned(
    out: str | Path, *, quick: bool = True, seed: int = 0, workers: int = 1, progress: bool = True
) -> dict[str, pd.DataFrame]:
    """Part ``ldp_sgd_tuned`` of ``pystanprivacy reproduce kulkarni2022`` (REPRODUCTION.md, K4,
    K5): both figures at the regression part's epsilons and repeats (``regression.QUICK`` or
    ``regression.FULL``), :data:`~.ldp_sgd_tuning.RUNS_PER_CANDIDATE` runs per candidate, tasks in
    ``out/ldp_sgd_tuned/.tasks``. Reads part ``regression``'s tables from ``out``."""
    size = reg.QUICK if quick else reg.FULL
    out = Path(out)
    tables = {}
    with part_folder(FOLDER):
        for figure in ("figure4", "figure5"):
            tables[name(figure, "summary")] = run_figure(
                figure,
                out,
                epsilons=list(size[f"{'fig4' if figure == 'figure4' else 'fig5'}_epsilons"]),
                repeats=size["repeats"],
                runs=tun.RUNS_PER_CANDIDATE,
                seed=seed,
                workers=workers,
                progress=progress,
            )
    return tables


__all__ = [
    "FOLDER",
    "check_against_committed",
    "load_data",
    "name",
    "reproduce_ldp_sgd_tuned",
    "run_figure",
    "summarise",
]
