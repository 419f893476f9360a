"""Redraw the committed figures of a full run from its saved tables: nothing is sampled and no
table or sidecar is written, only the PNGs below. Each figure shows the statistic its verdict
(REPRODUCTION.md) rests on, for the design it is judged on.

``pystanprivacy reproduce <paper> --full`` also redraws every figure from the saved tasks, but
it rewrites every table's JSON sidecar (time stamps, seconds) and its network parts need the
``[dpsgd]`` extra; this script reads the CSV tables a run wrote and calls the figure functions
on them, with the per-repeat rows the paired panels need:

* foulds2016: ``foulds2016_figure2.png`` (F2: OPS − Laplace paired per N, a refused OPS draw
  scored as the verdict scores it; the per-repeat rows from the committed saved tasks ``figure 2
  ...``, read without running anything, checked against the committed summary),
  ``foulds2016_hmm_heldout.png`` (unconverged fits hollow for every method; Laplace − OPS paired
  by split with 95 % t-intervals) and ``heldout_dispersed/foulds2016_hmm_heldout_dispersed.png``
  (F6 refitted from dispersed starts, every epsilon labelled);
* kulkarni2022: ``kulkarni2022_regression_figure4.png`` with the zero predictor's test RMSE
  (the RMSE of predicting the centred training mean, 0, on the same Wine test split, rebuilt
  from the public preprocessing the sidecar records and checked against it);
  ``kulkarni2022_figure{4,5}_ldp_sgd_tuned.png`` (K4, K5: SS − each LDP-SGD paired by repeat
  with a zero line; K4 with the predicting-0 line);
* jewson2023: Figures 2, 3, 4, 6, 7, 9, 10 and 11 (βD points on fewer released draws marked;
  Figures 3, 9 and 10's network rows with βD − DP-SGD paired by data set, 95 % t-intervals, the
  tuned DP-SGD labelled "tuned non-privately" and paired as the verdicts count refusals; Figure 6
  as J6's statistics), and the paper's simulated design, which J2 and J10's logistic row are
  judged on: ``jewson2023_paper_design_figure2.png`` (with the UCI panels) and
  ``jewson2023_paper_design_figure10.png``.

Usage: ``python scripts/redraw_figures.py --results results [--papers foulds2016,jewson2023]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

PAPERS = ("foulds2016", "kulkarni2022", "jewson2023")


def _csv(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / f"{name}.csv")


def figure2_repeats(folder: Path, summary: pd.DataFrame) -> pd.DataFrame | None:
    """Foulds' Figure 2 per-repeat rows: ``foulds2016_figure2.csv`` when a run left it (it is over
    1 MB and not committed), else the rows of the committed saved tasks labelled ``figure 2 ...``
    in ``folder/.tasks``, read without running or changing anything; refused unless they give the
    committed summary's means and counts again. ``None`` when neither is there."""
    from pystanprivacy.experiments.foulds2016.beta_bernoulli import summarise_figure2
    from pystanprivacy.run.runner import saved_results

    if (folder / "foulds2016_figure2.csv").is_file():
        rows = _csv(folder, "foulds2016_figure2")
    elif (folder / ".tasks").is_dir():
        rows = saved_results(folder / ".tasks", "figure 2 ")
        if rows.empty:
            return None
    else:
        return None
    again = summarise_figure2(rows).set_index(["method", "n_obs"]).sort_index()
    want = summary.set_index(["method", "n_obs"]).sort_index()
    if not (
        again.index.equals(want.index)
        and np.allclose(again["mean_abs_error"], want["mean_abs_error"], rtol=1e-12)
        and (again["n_refused"] == want["n_refused"]).all()
    ):
        raise ValueError("Figure 2's per-repeat rows do not give the committed foulds2016_figure2_summary.csv")
    return rows


def foulds2016(folder: Path) -> list[Path]:
    from pystanprivacy.experiments.foulds2016 import figures, hmm_figures
    from pystanprivacy.experiments.foulds2016.heldout_dispersed import MULTIPLIER, N_STATES

    summary = _csv(folder, "foulds2016_figure2_summary")
    figures.figure2(summary, folder / "foulds2016_figure2.png", repeats=figure2_repeats(folder, summary))
    heldout = _csv(folder, "foulds2016_hmm_heldout")
    hmm_figures.heldout(
        _csv(folder, "foulds2016_hmm_heldout_summary"),
        folder / "foulds2016_hmm_heldout.png",
        splits=heldout,
    )
    out = [folder / "foulds2016_figure2.png", folder / "foulds2016_hmm_heldout.png"]
    dispersed = folder / "heldout_dispersed"
    if (dispersed / "foulds2016_hmm_heldout_dispersed_summary.csv").is_file():  # F6 from dispersed starts
        path = dispersed / "foulds2016_hmm_heldout_dispersed.png"
        hmm_figures.heldout_dispersed(
            _csv(dispersed, "foulds2016_hmm_heldout_dispersed_summary"),
            hmm_figures.heldout_dispersed_reference(heldout, n_states=N_STATES, multiplier=MULTIPLIER),
            path,
        )
        out.append(path)
    return out


def zero_predictor_rmse(sidecar: dict) -> float:
    """Test RMSE of predicting 0 (the centred training mean) on the Wine split that the run
    of ``sidecar`` (``kulkarni2022_regression_figure4.json``) used: the split rebuilt with the
    run's seed, data folder and d, refused unless its public preprocessing facts match the
    sidecar's."""
    from pystanprivacy.experiments.kulkarni2022.data import regression_data

    args = sidecar["args"]
    pre = args["preprocessing"]
    data = regression_data(args["data"], args["data_dir"], d=int(pre["d"]), seed=args["seed"], R_y=2.0)
    if data.synthetic != args["synthetic"]:
        raise ValueError("the Wine data found here are not the kind the run used (synthetic differs)")
    for key in ("n_train", "n_test", "d", "clipped_train_targets"):
        if data.info[key] != pre[key]:
            raise ValueError(f"the rebuilt split differs from the run's: {key} {data.info[key]} vs {pre[key]}")
    return float(np.sqrt(np.mean(np.square(data.y_test))))


def kulkarni2022(folder: Path) -> list[Path]:
    from pystanprivacy.experiments.kulkarni2022 import figures, tuned_figures

    sidecar = json.loads((folder / "kulkarni2022_regression_figure4.json").read_text())
    pre = sidecar["args"]["preprocessing"]
    path = folder / "kulkarni2022_regression_figure4.png"
    figures.regression(
        _csv(folder, "kulkarni2022_regression_figure4_summary"),
        "rmse",
        f"Linear regression, {sidecar['args']['data']} (n = {pre['n_train']}, d = {pre['d']})",
        path,
        references={"predicting 0 (the centred mean)": zero_predictor_rmse(sidecar)},
    )
    out = [path]
    for figure, metric, refs in (
        ("figure4", "rmse", {"predicting 0 (the centred mean)": zero_predictor_rmse(sidecar)}),
        ("figure5", "auc", {}),
    ):
        stem = f"kulkarni2022_{figure}_ldp_sgd_tuned"
        if not (folder / f"{stem}_summary.csv").is_file():  # the tuned study (scripts/kulkarni2022_ldp_sgd_tuned.py)
            continue
        meta = json.loads((folder / f"kulkarni2022_regression_{figure}.json").read_text())["args"]
        pre = meta["preprocessing"]
        data = "Wine" if figure == "figure4" else "Adult"
        tuned_figures.tuned_comparison(
            _csv(folder, f"{stem}_summary"),
            _csv(folder, f"kulkarni2022_regression_{figure}_summary"),
            metric,
            f"Kulkarni et al. {figure.replace('figure', 'Figure ')}: {data} (n = {pre['n_train']}, d = {pre['d']})",
            folder / f"{stem}.png",
            committed=_csv(folder, f"kulkarni2022_regression_{figure}"),
            references=refs,
        )
        out.append(folder / f"{stem}.png")
    return out


def with_banknote(folder: Path, summary: pd.DataFrame, repeats: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 9's tables with the banknote rows of ``folder/banknote`` added when its network table
    is there (``scripts/jewson2023_banknote.py``, run beside Abalone, and the tuned DP-SGD of
    ``scripts/jewson2023_dpsgd_tuned.py --uci abalone banknote``); the Abalone rows of that folder are
    the study's own and are not added twice. Its mean rows are those of the study's methods; the tuned
    DP-SGD's come from :func:`with_tuned`, as for every data set."""
    from pystanprivacy.experiments.jewson2023.paired import network_table
    from pystanprivacy.experiments.jewson2023.study import summarise

    run = folder / "banknote"
    if not (run / "jewson2023_nn_classification.csv").is_file():
        return summary, repeats
    rows = network_table(run, "classification")[0]
    rows = rows[rows["dataset"] == "banknote"]
    means = rows[rows["method"].isin(summary["method"])]
    return (
        pd.concat([summary, summarise(means, ["auc"])], ignore_index=True),
        pd.concat([repeats, rows], ignore_index=True),
    )


def with_tuned(summary: pd.DataFrame, repeats: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The network figures' mean rows with DP-SGD tuned as App. B describes
    (``scripts/jewson2023_dpsgd_tuned.py``; its rows are in ``repeats`` when that script's table is in
    the folder) for each data set ``summary`` lacks it for, so every data set's panels show the
    baseline its paired row is judged against. The tuned non-private SGD is left out of every panel:
    it is a reference of the tuning table, not a baseline of the verdicts (on Wine its ε = 1 learning
    rate without clipping diverges in every run)."""
    from pystanprivacy.experiments.jewson2023.paired import TUNED_DPSGD
    from pystanprivacy.experiments.jewson2023.study import summarise

    rows = repeats[repeats["method"] == TUNED_DPSGD]
    rows = rows[~rows["dataset"].isin(summary.loc[summary["method"] == TUNED_DPSGD, "dataset"])]
    if rows.empty:
        return summary
    return pd.concat([summary, summarise(rows, [metric])], ignore_index=True)


def jewson2023(folder: Path) -> list[Path]:
    from pystanprivacy.experiments.jewson2023 import figures
    from pystanprivacy.experiments.jewson2023.paired import METRICS, network_table

    out = []
    logistic = _csv(folder, "jewson2023_logistic_summary")
    for name in ("figure2", "figure7"):
        getattr(figures, name)(logistic, folder / f"jewson2023_{name}.png")
        out.append(folder / f"jewson2023_{name}.png")
    if (folder / "jewson2023_counterparts_summary.csv").is_file():  # scripts/jewson2023_counterparts.py
        figures.figure6(logistic, _csv(folder, "jewson2023_counterparts_summary"), folder / "jewson2023_figure6.png")
        out.append(folder / "jewson2023_figure6.png")
    attack, rmse = _csv(folder, "jewson2023_attack"), _csv(folder, "jewson2023_attack_rmse")
    for name in ("figure4", "figure11"):
        getattr(figures, name)(attack, folder / f"jewson2023_{name}.png", rmse_repeats=rmse)
        out.append(folder / f"jewson2023_{name}.png")
    for task, name in (("regression", "figure3"), ("classification", "figure9")):
        summary, repeats = _csv(folder, f"jewson2023_nn_{task}_summary"), network_table(folder, task)[0]
        if task == "classification":
            summary, repeats = with_banknote(folder, summary, repeats)
        summary = with_tuned(summary, repeats, METRICS[task][0])
        getattr(figures, name)(summary, folder / f"jewson2023_{name}.png", repeats=repeats)
        out.append(folder / f"jewson2023_{name}.png")
    figures.figure10(
        _csv(folder, "jewson2023_features_summary"),
        folder / "jewson2023_figure10.png",
        networks=_csv(folder, "jewson2023_nn_features_summary"),
        network_repeats=_csv(folder, "jewson2023_nn_features"),
    )
    return out + [folder / "jewson2023_figure10.png"] + paper_design(folder)


def paper_design(folder: Path) -> list[Path]:
    """The paper's simulated design (``scripts/jewson2023_paper_design.py``), which J2 and J10's
    logistic row are judged on: Figure 2 with the study's UCI panels, Figure 10's logistic row beside
    the study's design (its simulated rows of ``jewson2023_features.csv``)."""
    from pystanprivacy.experiments.jewson2023.paper_design_figures import (
        design_figure2,
        design_figure10,
        summarise_design,
    )

    out = []
    if (folder / "jewson2023_logistic_paper_design_summary.csv").is_file():
        path = folder / "jewson2023_paper_design_figure2.png"
        design_figure2(
            _csv(folder, "jewson2023_logistic_paper_design_summary"),
            None,
            path,
            uci=_csv(folder, "jewson2023_logistic_summary"),
        )
        out.append(path)
    if (folder / "jewson2023_features_paper_design_summary.csv").is_file():
        path = folder / "jewson2023_paper_design_figure10.png"
        study = _csv(folder, "jewson2023_features")
        study = summarise_design(study[study["dataset"] == "simulated"], ("dataset", "method", "epsilon", "d"))
        design_figure10(_csv(folder, "jewson2023_features_paper_design_summary"), study, path)
        out.append(path)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="results", help="folder holding one folder per paper (default: results)")
    parser.add_argument("--papers", default=",".join(PAPERS), help=f"comma-separated subset of {', '.join(PAPERS)}")
    args = parser.parse_args(argv)
    papers = [p for p in args.papers.split(",") if p]
    unknown = sorted(set(papers) - set(PAPERS))
    if unknown:
        parser.error(f"--papers: unknown {unknown}; allowed: {list(PAPERS)}")
    for paper in papers:
        for path in globals()[paper](Path(args.results) / paper):
            print(path)


if __name__ == "__main__":
    main()
