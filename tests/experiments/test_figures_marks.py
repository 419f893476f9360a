"""The figures show what the verdicts rest on (issue 50, item 2): paired differences with 95 %
t-intervals (Foulds F6; Jewson J3, J9, J10), points on fewer released or converged fits than
attempted marked, for every method alike, reference lines where the text reads off one (K4's
zero predictor), no empty panels (J2) and no cut title or overlapping labels (J4).

Every check reads the drawn artists and compares them with an independent computation from the
small per-repeat table (numpy means, scipy's t-interval), never with the figure code's own
helpers. No sampling: the tables are made up."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer
from scipy import integrate, stats

from pystanprivacy.experiments import _figures
from pystanprivacy.experiments.foulds2016 import figures as foulds_figures
from pystanprivacy.experiments.foulds2016 import hmm_figures
from pystanprivacy.experiments.jewson2023 import figures as jewson_figures
from pystanprivacy.experiments.jewson2023 import study as J
from pystanprivacy.experiments.kulkarni2022 import figures as kulkarni_figures


# ----------------------------------------------------------------------------- helpers
def _panels(fig) -> dict:
    return {ax.get_title(): ax for ax in fig.axes if ax.get_title()}


def _errorbars(ax) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """(x, y, lower, upper) of every errorbar series on ``ax``."""
    out = []
    for c in ax.containers:
        if not isinstance(c, ErrorbarContainer):
            continue
        line, _, bars = c.lines
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        segs = bars[0].get_segments() if bars else []
        lo = np.array([min(s[0][1], s[1][1]) for s in segs])
        hi = np.array([max(s[0][1], s[1][1]) for s in segs])
        out.append((x, y, lo, hi))
    return out


def _hollow(ax) -> np.ndarray:
    """Offsets of the hollow (white-faced) scatter points on ``ax``."""
    pts = [
        c.get_offsets()
        for c in ax.collections
        if hasattr(c, "get_facecolors")
        and len(c.get_offsets())
        and len(c.get_facecolors())
        and np.allclose(c.get_facecolors()[:, :3], 1.0)
    ]
    return np.concatenate(pts) if pts else np.empty((0, 2))


def _has_zero_line(ax) -> bool:
    return any(
        np.allclose(ln.get_ydata(), 0.0) and len(set(ln.get_xdata())) == 2 and tuple(ln.get_xdata()) == (0, 1)
        for ln in ax.lines
    )


def _t_interval(values: np.ndarray) -> tuple[float, float]:
    return stats.t.interval(0.95, df=len(values) - 1, loc=np.mean(values), scale=stats.sem(values))


def _not_empty(fig) -> None:
    for ax in fig.axes:
        assert ax.lines or ax.collections or ax.patches, f"empty panel {ax.get_title()!r}"


# ----------------------------------------------------------------------------- t interval
def test_t_halfwidth_is_the_student_t_interval():
    rng = np.random.default_rng(1)
    for n in (2, 3, 10, 40):
        v = rng.normal(size=n)
        lo, hi = _t_interval(v)
        half = _figures.t_halfwidth([np.std(v, ddof=1) / math.sqrt(n)], [n])[0]
        assert half == pytest.approx((hi - lo) / 2, rel=1e-12)
    assert np.isnan(_figures.t_halfwidth([0.1], [1])[0])  # one pair: no interval


# ----------------------------------------------------------------------------- Jewson 3 / 9
def _network_rows(task: str, seed: int = 0) -> pd.DataFrame:
    """βD, DP-SGD and PM on one data set, 2 n x 2 eps x 6 repeats; βD refused at n = 100, eps = 1
    in repeats 0 and 1, so that cell pairs 4 of 6."""
    rng = np.random.default_rng(seed)
    metric = "test_rmse" if task == "regression" else "auc"
    rows = []
    for n in (100, 1000):
        for r in range(6):
            base = rng.uniform(0.5, 2.0) if task == "regression" else rng.uniform(0.5, 0.8)
            rows.append(
                dict(
                    task=task,
                    dataset="simulated",
                    n_obs=n,
                    d=2,
                    repeat=r,
                    method="PM (non-private)",
                    epsilon=math.inf,
                    released=True,
                    **{metric: base},
                )
            )
            for e in (1.0, 5.0):
                for m, shift in (("beta-D", rng.normal(0, 0.1)), ("DP-SGD", rng.normal(0.2, 0.1))):
                    refused = m == "beta-D" and n == 100 and e == 1.0 and r < 2
                    value = base * math.exp(shift) if task == "regression" else base + shift / 5
                    rows.append(
                        dict(
                            task=task,
                            dataset="simulated",
                            n_obs=n,
                            d=2,
                            repeat=r,
                            method=m,
                            epsilon=e,
                            released=not refused,
                            **{metric: np.nan if refused else value},
                        )
                    )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("task,draw", [("regression", "figure3"), ("classification", "figure9")])
def test_network_figures_draw_the_paired_difference_with_its_t_interval(task, draw):
    table = _network_rows(task)
    metric = "test_rmse" if task == "regression" else "auc"
    summary = J.summarise(table, [metric])
    fig = getattr(jewson_figures, draw)(summary, repeats=table)
    _not_empty(fig)
    panels = _panels(fig)
    for e in (1.0, 5.0):
        ax = panels[f"simulated, ε = {e:g}: paired by data set"]
        assert _has_zero_line(ax)
        ((x, y, lo, hi),) = _errorbars(ax)
        for n, yi, loi, hii in zip(x, y, lo, hi):
            b = table[(table["method"] == "beta-D") & (table["n_obs"] == round(n)) & (table["epsilon"] == e)]
            s = table[(table["method"] == "DP-SGD") & (table["n_obs"] == round(n)) & (table["epsilon"] == e)]
            both = b.merge(s, on="repeat").dropna(subset=[f"{metric}_x", f"{metric}_y"])
            f = np.log if task == "regression" else (lambda v: v)
            d = f(both[f"{metric}_x"].to_numpy()) - f(both[f"{metric}_y"].to_numpy())
            assert len(d) == (4 if (round(n) == 100 and e == 1.0) else 6)
            assert yi == pytest.approx(d.mean(), abs=1e-12)
            assert (loi, hii) == pytest.approx(_t_interval(d), abs=1e-12)
    # the means rows: the beta-D point resting on 4 of 6 releases is hollow, and only it
    means = panels["simulated, ε = 1"]
    hollow = _hollow(means)
    assert hollow.shape[0] == 1 and hollow[0, 0] == 100
    assert "4/6" in [t.get_text() for t in means.texts]
    assert _hollow(panels["simulated, ε = 5"]).shape[0] == 0


def test_network_figure_reads_the_per_repeat_rows_beside_its_png(tmp_path):
    """As the study calls it (summary and path only): the part's table written beside the PNG
    gives the paired rows; without it, the figure holds the means only."""
    table = _network_rows("regression")
    summary = J.summarise(table, ["test_rmse"])
    alone = jewson_figures.figure3(summary, tmp_path / "a" / "jewson2023_figure3.png")
    assert not any("paired" in t for t in _panels(alone))
    (tmp_path / "b").mkdir()
    table.to_csv(tmp_path / "b" / "jewson2023_nn_regression.csv", index=False)
    fig = jewson_figures.figure3(summary, tmp_path / "b" / "jewson2023_figure3.png")
    assert "simulated, ε = 5: paired by data set" in _panels(fig)
    assert (tmp_path / "b" / "jewson2023_figure3.png").stat().st_size > 1000


def test_figure10_pairs_the_network_rows_by_d():
    rows = []
    rng = np.random.default_rng(4)
    for d in (2, 5):
        for r in range(5):
            for m in ("beta-D", "DP-SGD"):
                rows.append(
                    dict(
                        task="classification",
                        dataset="simulated",
                        n_obs=1000,
                        d=d,
                        repeat=r,
                        method=m,
                        epsilon=5.0,
                        released=True,
                        auc=rng.uniform(0.5, 0.7),
                    )
                )
    table = pd.DataFrame(rows)
    nets = J.summarise(table, ["auc"], by=("task", "dataset", "method", "epsilon", "d"))
    fig = jewson_figures.figure10(None, networks=nets, network_repeats=table)
    _not_empty(fig)
    ax = _panels(fig)["NN classification, ε = 5: paired by data set"]
    assert _has_zero_line(ax)
    ((x, y, lo, hi),) = _errorbars(ax)
    for d, yi, loi, hii in zip(x, y, lo, hi):
        g = table[table["d"] == round(d)].pivot(index="repeat", columns="method", values="auc")
        diff = (g["beta-D"] - g["DP-SGD"]).to_numpy()
        assert yi == pytest.approx(diff.mean(), abs=1e-12)
        assert (loi, hii) == pytest.approx(_t_interval(diff), abs=1e-12)


# ----------------------------------------------------------------------------- Jewson 2
def test_figure2_has_no_empty_panel_and_marks_refused_releases():
    """The UCI grid has fewer epsilons than the simulated one: its rows have only its panels.
    A cell with a refused βD release is hollow, labelled k/m."""
    rows = []
    for ds, eps in (("simulated", (0.5, 2.0)), ("adult", (0.5,))):
        for m in J.LOGISTIC_METHODS:
            for n in (100, 1000):
                for e in (math.inf,) if m.startswith("PM") else eps:
                    for r in range(3):
                        refused = ds == "simulated" and m == "beta-D" and n == 1000 and e == 2.0 and r == 0
                        rows.append(
                            dict(
                                dataset=ds,
                                method=m,
                                epsilon=e,
                                n_obs=n,
                                repeat=r,
                                released=not refused,
                                rmse=np.nan if refused else 0.5 + r / 10,
                                auc=0.7,
                                csa=0.9,
                            )
                        )
    fig = jewson_figures.figure2(J.summarise(pd.DataFrame(rows), ["rmse", "auc", "csa"]))
    _not_empty(fig)
    titles = [ax.get_title() for ax in fig.axes]
    assert "adult, ε = 2" not in titles and "adult, ε = 0.5" in titles
    assert all(ax.axison for ax in fig.axes)
    marked = [(ax.get_title(), _hollow(ax)) for ax in fig.axes]
    marked = [(t, h) for t, h in marked if len(h)]
    # the simulated rows (log RMSE, AUC) both show the 2-of-3 cell, and nothing else is hollow
    assert [t for t, _ in marked] == ["simulated, ε = 2", "simulated, ε = 2"]
    assert all(h.shape == (1, 2) and h[0, 0] == 1000 for _, h in marked)
    assert all("2/3" in [t.get_text() for t in ax.texts] for ax in fig.axes if ax.get_title() == "simulated, ε = 2")


# ----------------------------------------------------------------------------- Jewson 4 / 11
@pytest.mark.parametrize("draw", ["figure4", "figure11"])
def test_attack_figures_have_whole_titles_and_no_overlapping_labels(draw):
    att = pd.DataFrame(
        [
            dict(method=m, epsilon=e, success=0.5 + e / 50 + k / 100, epsilon_lb=e / 10, log_rmse=-0.2 + k / 50)
            for k, m in enumerate(J.ATTACK_METHODS)
            for e in (0.2, 1.0, 2.0, 7.0, 10.0, 20.0)
        ]
    )
    rmse = pd.DataFrame(
        [
            dict(method=m, epsilon=e, repeat=r, released=not (m == "beta-D" and e == 1.0 and r == 0))
            for m in J.ATTACK_METHODS
            for e in (0.2, 1.0, 2.0, 7.0, 10.0, 20.0)
            for r in range(4)
        ]
    )
    fig = getattr(jewson_figures, draw)(att, rmse_repeats=rmse)
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    ax = fig.axes[0]
    box = fig.bbox
    title = ax.title.get_window_extent(renderer)
    assert box.x0 <= title.x0 and title.x1 <= box.x1 and title.y1 <= box.y1  # the title is not cut
    texts = [t for t in ax.texts if t.get_text()]
    extents = [t.get_window_extent(renderer) for t in texts]
    for i in range(len(extents)):
        for j in range(i + 1, len(extents)):
            assert not extents[i].overlaps(extents[j]), (texts[i].get_text(), texts[j].get_text())
    hollow = _hollow(ax)
    beta = att[(att["method"] == "beta-D") & (att["epsilon"] == 1.0)].iloc[0]
    y = "success" if draw == "figure4" else "epsilon_lb"
    assert hollow.shape == (1, 2) and tuple(hollow[0]) == pytest.approx((beta["log_rmse"], beta[y]))
    assert [t.get_text() for t in texts] == ["3/4"]


# ----------------------------------------------------------------------------- Foulds F6
def _heldout_rows() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = []
    for split in range(5):
        base = rng.normal(-7.0, 0.1)
        rows.append(
            dict(
                dataset="d",
                model="HMM (K=3)",
                n_states=3,
                method="non-private",
                multiplier=np.nan,
                epsilon=math.inf,
                split=split,
                heldout_loglik_per_entry=base,
                converged=split > 0,
            )
        )
        for e in (0.5, 5.0):
            rows.append(
                dict(
                    dataset="d",
                    model="HMM (K=3)",
                    n_states=3,
                    method="laplace",
                    multiplier=np.nan,
                    epsilon=e,
                    split=split,
                    heldout_loglik_per_entry=base - 0.1 / e + rng.normal(0, 0.02),
                    converged=not (e == 0.5 and split == 3),
                )
            )
            for mult in (10.0, 100.0):
                rows.append(
                    dict(
                        dataset="d",
                        model="HMM (K=3)",
                        n_states=3,
                        method="ops",
                        multiplier=mult,
                        epsilon=e,
                        split=split,
                        heldout_loglik_per_entry=base - 0.2 / e + rng.normal(0, 0.02),
                        converged=not (mult == 100.0 and e == 5.0),
                    )
                )
    return pd.DataFrame(rows)


def _summarise_heldout(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["dataset", "model", "n_states", "method", "multiplier", "epsilon"]
    return (
        table.groupby(keys, dropna=False)
        .agg(
            heldout_loglik_per_entry=("heldout_loglik_per_entry", "mean"),
            splits=("split", "nunique"),
            converged=("converged", "sum"),
        )
        .reset_index()
    )


def test_heldout_pairs_laplace_with_each_ops_by_split_and_marks_every_unconverged_fit():
    table = _heldout_rows()
    summary = _summarise_heldout(table)
    fig = hmm_figures.heldout(summary, splits=table)
    _not_empty(fig)
    panels = _panels(fig)
    paired = panels["d: HMM (K=3), paired by split"]
    assert _has_zero_line(paired)
    bars = _errorbars(paired)
    assert len(bars) == 2  # M = 10 and M = 100
    for (x, y, lo, hi), mult in zip(bars, (10.0, 100.0)):
        for e, yi, loi, hii in zip((0.5, 5.0), y, lo, hi):
            lap = table[(table["method"] == "laplace") & (table["epsilon"] == e)].set_index("split")
            ops = table[(table["method"] == "ops") & (table["multiplier"] == mult) & (table["epsilon"] == e)].set_index(
                "split"
            )
            d = (lap["heldout_loglik_per_entry"] - ops["heldout_loglik_per_entry"]).to_numpy()
            assert yi == pytest.approx(d.mean(), abs=1e-12)
            assert (loi, hii) == pytest.approx(_t_interval(d), abs=1e-12)
    # hollow: exactly the cells with an unconverged split, whatever the method
    means = panels["d: HMM (K=3)"]
    hollow = {(round(float(x), 6), round(float(y), 6)) for x, y in _hollow(means)}
    bad = summary[summary["converged"] < summary["splits"]]
    inf_x = 5.0 * 2.5
    want = {
        (round(inf_x if math.isinf(r["epsilon"]) else r["epsilon"], 6), round(r["heldout_loglik_per_entry"], 6))
        for _, r in bad.iterrows()
    }
    assert hollow == want and len(want) == 3  # non-private, Laplace 0.5, OPS M=100 at 5
    assert "∞" in [t.get_text() for t in means.get_xticklabels()]


def test_heldout_reads_its_splits_beside_the_png(tmp_path):
    table = _heldout_rows()
    table.to_csv(tmp_path / "foulds2016_hmm_heldout.csv", index=False)
    fig = hmm_figures.heldout(_summarise_heldout(table), tmp_path / "foulds2016_hmm_heldout.png")
    assert "d: HMM (K=3), paired by split" in _panels(fig)


# ----------------------------------------------------------------------------- Foulds F2
def test_foulds_figure2_marks_the_points_with_refused_draws():
    summary = pd.DataFrame(
        [
            dict(
                method=m,
                n_obs=n,
                mean_abs_error=1 / n,
                se_abs_error=0.01 / n,
                n_released=1000 - (3 if (m == "ops" and n == 40) else 0),
                n_refused=3 if (m == "ops" and n == 40) else 0,
            )
            for m in ("laplace", "ops")
            for n in (10, 40, 160)
        ]
    )
    fig = foulds_figures.figure2(summary)
    ax = fig.axes[0]
    assert _hollow(ax).tolist() == [[40.0, 1 / 40]]
    assert "997/1000" in [t.get_text() for t in ax.texts]


# ----------------------------------------------------------------------------- Kulkarni K4
def test_regression_figure_draws_the_reference_lines_it_is_given():
    summary = pd.DataFrame(
        [
            dict(method=m, epsilon=e, rmse_mean=0.8 + e / 100, rmse_sd=0.01, repeats=3)
            for m in ("ss", "ldp-sgd")
            for e in (0.5, 16.0)
        ]
        + [dict(method="non-private", epsilon=math.inf, rmse_mean=0.79, rmse_sd=np.nan, repeats=1)]
    )
    fig = kulkarni_figures.regression(summary, "rmse", "t", references={"predicting 0": 0.873})
    ax = fig.axes[0]
    ref = [ln for ln in ax.lines if ln.get_label() == "predicting 0"]
    assert len(ref) == 1 and np.allclose(ref[0].get_ydata(), 0.873) and ref[0].get_linestyle() == ":"
    assert "predicting 0" in [t.get_text() for t in ax.get_legend().get_texts()]
    plain = kulkarni_figures.regression(summary, "rmse", "t")
    assert not [ln for ln in plain.axes[0].lines if ln.get_linestyle() == ":"]
    with pytest.raises(ValueError, match="references must map str labels to finite numbers"):
        kulkarni_figures.regression(summary, "rmse", "t", references={"zero": float("nan")})


# ----------------------------------------------------------------------------- the redraw script
RESULTS = Path(__file__).resolve().parents[2] / "results"


def _copy_tables(src: Path, dst: Path, subfolders: tuple[str, ...] = ()) -> None:
    """The CSV tables and JSON sidecars of a committed results folder (and of ``subfolders``)."""
    for folder in ("", *subfolders):
        (dst / folder).mkdir(parents=True, exist_ok=True)
        for f in (src / folder).glob("*.csv"):
            shutil.copy(f, dst / folder / f.name)
        for f in (src / folder).glob("*.json"):
            shutil.copy(f, dst / folder / f.name)


def test_redraw_script_draws_each_verdict_figure_from_the_committed_tables(load_script, tmp_path):
    """scripts/redraw_figures.py redraws, from copies of the committed tables (and Figure 2's
    committed saved tasks), every figure a verdict links for Foulds, Kulkarni's tuned LDP-SGD and
    Jewson's paper design, and leaves every table byte for byte as it was; Figure 2 gains its
    paired panel (OPS − Laplace per N from the saved tasks, checked against the committed
    summary)."""
    redraw = load_script("redraw_figures")
    foulds = tmp_path / "foulds2016"
    _copy_tables(RESULTS / "foulds2016", foulds, ("heldout_dispersed",))
    (foulds / ".tasks").mkdir()
    for f in (RESULTS / "foulds2016" / ".tasks").glob("*.json"):  # only Figure 2's saved tasks
        with open(f, encoding="utf-8") as fh:
            if '"label": "figure 2 ' in fh.read(400):
                shutil.copy(f, foulds / ".tasks" / f.name)
    before = {f: f.read_bytes() for f in tmp_path.rglob("*") if f.suffix in (".csv", ".json")}
    written = redraw.foulds2016(foulds)
    assert sorted(p.relative_to(foulds).as_posix() for p in written) == [
        "foulds2016_figure2.png",
        "foulds2016_hmm_heldout.png",
        "heldout_dispersed/foulds2016_hmm_heldout_dispersed.png",
    ]
    summary = pd.read_csv(foulds / "foulds2016_figure2_summary.csv")
    rows = redraw.figure2_repeats(foulds, summary)
    pairs = foulds_figures.figure2_pairs(rows).set_index("n_obs")
    ops = summary[summary["method"] == "ops"].set_index("n_obs")
    assert (pairs["published"] == ops["n_released"]).all() and (pairs["refused_method"] == ops["n_refused"]).all()
    assert (pairs["pairs"] == ops["n_released"] + ops["n_refused"]).all()  # a refusal is scored, never dropped
    # every pair covers every data set, so the paired mean is the difference of the means with each
    # refused OPS draw scored as a draw from the prior, Uniform(a0, 1 - a0): E|U - p| by quadrature
    p0, a0 = float(rows["p_true"].iloc[0]), float(rows.loc[rows["method"] == "ops", "a0"].iloc[0])
    prior_error = integrate.quad(lambda u: abs(u - p0), a0, 1 - a0, points=[p0])[0] / (1 - 2 * a0)
    lap = summary[summary["method"] == "laplace"].set_index("n_obs")["mean_abs_error"]
    for n in ops.index:
        k, r = ops.loc[n, "n_released"], ops.loc[n, "n_refused"]
        scored = (k * ops.loc[n, "mean_abs_error"] + r * prior_error) / (k + r)
        assert pairs.loc[n, "mean_diff"] == pytest.approx(scored - lap.loc[n], rel=1e-9)
    bad = summary.assign(mean_abs_error=summary["mean_abs_error"] * 1.01)
    with pytest.raises(ValueError, match="do not give the committed"):
        redraw.figure2_repeats(foulds, bad)

    kulkarni = tmp_path / "kulkarni2022"
    _copy_tables(RESULTS / "kulkarni2022", kulkarni)
    before.update({f: f.read_bytes() for f in kulkarni.iterdir()})
    written += redraw.kulkarni2022(kulkarni)
    jewson = tmp_path / "jewson2023"
    _copy_tables(RESULTS / "jewson2023", jewson)
    before.update({f: f.read_bytes() for f in jewson.iterdir()})
    written += redraw.paper_design(jewson)
    assert {p.name for p in written} >= {
        "kulkarni2022_figure4_ldp_sgd_tuned.png",
        "kulkarni2022_figure5_ldp_sgd_tuned.png",
        "jewson2023_paper_design_figure2.png",
        "jewson2023_paper_design_figure10.png",
    }
    assert {f: f.read_bytes() for f in before} == before
    for p in (p for p in written if p.name != "foulds2016_hmm_heldout.png"):  # readable: <= ~2100 px wide
        width = int.from_bytes(p.read_bytes()[16:20], "big")  # the PNG IHDR width
        assert 500 < width <= 2100, (p.name, width)
    with pytest.raises(SystemExit):
        redraw.main(["--results", str(tmp_path), "--papers", "nosuch"])


def test_zero_predictor_is_rebuilt_from_the_run_s_split_and_checked(load_script):
    """The zero predictor's RMSE on the committed run's Wine test split: the centred test
    targets' root mean square (REPRODUCTION.md, K4: 0.873); a sidecar whose split facts differ
    is refused."""
    redraw = load_script("redraw_figures")
    sidecar = json.loads((RESULTS / "kulkarni2022" / "kulkarni2022_regression_figure4.json").read_text())
    if sidecar["args"]["synthetic"]:
        pytest.skip("the committed run used synthetic data")
    from pystanprivacy.experiments.kulkarni2022.data import regression_data

    data = regression_data("wine", None, d=4, seed=0, R_y=2.0)
    if data.synthetic:
        pytest.skip("the Wine files are not found here")
    assert redraw.zero_predictor_rmse(sidecar) == pytest.approx(0.873, abs=5e-4)
    bad = json.loads(json.dumps(sidecar))
    bad["args"]["preprocessing"]["n_train"] += 1
    with pytest.raises(ValueError, match="n_train"):
        redraw.zero_predictor_rmse(bad)


def test_network_figure_without_dpsgd_rows_draws_the_means_only():
    """A run without the [dpsgd] extra has no DP-SGD rows: no paired row, and no error."""
    table = _network_rows("regression")
    table = table[table["method"] != "DP-SGD"]
    fig = jewson_figures.figure3(J.summarise(table, ["test_rmse"]), repeats=table)
    assert _panels(fig) and not any("paired" in t for t in _panels(fig))


def test_k_of_m_labels_of_two_methods_at_one_point_do_not_overlap():
    """Two methods with refused releases at the same n and nearly the same mean: both points
    hollow, both labelled, and the labels kept apart."""
    rows = []
    for m in ("beta-D", "Minami"):
        for n in (10, 100):
            for r in range(10):
                refused = n == 10 and r == 0
                rows.append(
                    dict(
                        dataset="simulated",
                        method=m,
                        epsilon=1.0,
                        n_obs=n,
                        repeat=r,
                        released=not refused,
                        rmse=np.nan if refused else 1.0,
                        auc=0.6 + (m == "Minami") * 1e-4,
                        csa=0.5,
                    )
                )
    fig = jewson_figures.figure7(J.summarise(pd.DataFrame(rows), ["rmse", "auc", "csa"]))
    renderer = fig.canvas.get_renderer()
    ax = _panels(fig)["simulated, ε = 1"]
    labels = [t for t in ax.texts if t.get_text() == "9/10"]
    assert len(labels) == 2 and len(_hollow(ax)) == 2
    a, b = (t.get_window_extent(renderer) for t in labels)
    assert not a.overlaps(b)


def test_the_label_of_a_curve_s_last_point_stays_inside_its_axes():
    rows = [
        dict(
            dataset="simulated",
            method="beta-D",
            epsilon=1.0,
            n_obs=n,
            repeat=r,
            released=not (n == 1000 and r == 0),
            rmse=1.0,
            auc=0.6,
            csa=0.5,
        )
        for n in (10, 1000)
        for r in range(10)
    ]
    fig = jewson_figures.figure7(J.summarise(pd.DataFrame(rows), ["rmse", "auc", "csa"]))
    renderer = fig.canvas.get_renderer()
    ax = _panels(fig)["simulated, ε = 1"]
    (label,) = [t for t in ax.texts if t.get_text() == "9/10"]
    box, frame = label.get_window_extent(renderer), ax.get_window_extent(renderer)
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1


def test_cells_with_few_pairs_are_hollow_and_do_not_set_the_axis():
    """A cell resting on 2 pairs with a far-off mean (J3's Wine ε = 1) is drawn hollow, off the
    line, pinned to the edge of an axis set by the cells with at least 5 pairs."""
    rows = pd.DataFrame(
        dict(
            n_obs=[100, 200, 500, 1000], mean_diff=[9.0, -0.4, -0.5, -0.3], se=[1.0, 0.1, 0.1, 0.1], pairs=[2, 8, 9, 10]
        )
    )
    _fig, ax = _figures.new_figure()
    marks = _figures.paired_panel(ax, rows, "n_obs", colour="tab:olive", label="x", few=5)
    assert marks.few_x.tolist() == [100.0] and marks.few_y.tolist() == [9.0]
    reliable = rows.iloc[1:]
    half = stats.t.ppf(0.975, reliable["pairs"] - 1) * reliable["se"]
    assert marks.lo == pytest.approx((reliable["mean_diff"] - half).min())
    assert marks.hi == pytest.approx((reliable["mean_diff"] + half).max())
    assert _figures.limit_to_reliable(ax, [marks]) == 1
    lo, hi = ax.get_ylim()
    assert hi < 1.0 and lo < marks.lo  # zero and the reliable cells inside, the 2-pair cell out
    line = next(ln for ln in ax.lines if len(ln.get_xdata()) == 4)
    assert np.isnan(line.get_ydata()[0])  # the line joins the reliable cells only
    assert "+9" in [t.get_text() for t in ax.texts]
    with pytest.raises(ValueError, match="few must be an int >= 2"):
        _figures.paired_panel(ax, rows, "n_obs", colour="k", label="x", few=1)


def test_figure10_mean_panels_show_the_tuned_dpsgd_labelled_non_private():
    """J10's network rows are judged against the tuned DP-SGD: its means are in the mean panels
    (from its per-repeat rows), labelled as tuned non-privately."""
    rows = []
    for method in ("beta-D", "DP-SGD", "DP-SGD (tuned)"):
        for d in (2, 5):
            for r in range(5):
                rows.append(
                    dict(
                        task="classification",
                        dataset="simulated",
                        n_obs=500,
                        d=d,
                        repeat=r,
                        method=method,
                        epsilon=1.0,
                        released=True,
                        auc=0.5 + d / 100 + r / 1000,
                        test_rmse=np.nan,
                    )
                )
    repeats = pd.DataFrame(rows)
    networks = J.summarise(
        repeats[repeats["method"] != "DP-SGD (tuned)"],
        ["test_rmse", "auc"],
        by=("task", "dataset", "method", "epsilon", "d"),
    )
    fig = jewson_figures.figure10(None, networks=networks, network_repeats=repeats)
    ax = next(a for a in fig.axes if a.get_title() == "NN classification, ε = 1")
    tuned = [ln for ln in ax.lines if ln.get_label() == "DP-SGD (tuned non-privately)"]
    assert len(tuned) == 1
    assert np.allclose(tuned[0].get_ydata(), [0.522, 0.552])  # 0.5 + d / 100 + mean r / 1000 at d = 2, 5


def test_network_pairs_against_the_tuned_dpsgd_score_refused_releases_as_the_verdict_does():
    """J3's Wine, ε = 1, n = 100 cell (2 of 10 βD releases published): the figure's βD − tuned
    DP-SGD is the verdict's, each refused release scored by βD's largest test RMSE released on
    the same data set (any ε), recomputed here from the committed tables; the tick counts are
    the published / attempted releases."""
    folder = RESULTS / "jewson2023"
    table = pd.concat(
        [
            pd.read_csv(folder / "jewson2023_nn_regression.csv"),
            pd.read_csv(folder / "jewson2023_nn_regression_dpsgd_tuned.csv"),
        ],
        ignore_index=True,
    )
    cells = {ds: rows for ds, rows, _ in jewson_figures._network_pairs("regression", table)}["wine"]
    cell = cells[(cells["baseline"] == "DP-SGD (tuned)") & (cells["n_obs"] == 100) & (cells["epsilon"] == 1.0)].iloc[0]
    bd = table[(table["method"] == "beta-D") & (table["dataset"] == "wine") & (table["n_obs"] == 100)]
    worst = bd[bd["released"].astype(bool)].groupby("repeat")["test_rmse"].max()
    mine = bd[bd["epsilon"] == 1.0].set_index("repeat")
    score = mine["test_rmse"].where(mine["released"].astype(bool), worst.reindex(mine.index))
    tuned = table[(table["method"] == "DP-SGD (tuned)") & (table["dataset"] == "wine") & (table["n_obs"] == 100)]
    tuned = tuned[tuned["epsilon"] == 1.0].set_index("repeat")["test_rmse"]
    diff = np.log(score) - np.log(tuned.reindex(score.index))
    assert cell["pairs"] == 10 and cell["published"] == int(mine["released"].sum()) == 2 and cell["refused_method"] == 8
    assert cell["mean_diff"] == pytest.approx(diff.mean(), rel=1e-12)
    assert cell["se"] == pytest.approx(diff.std(ddof=1) / math.sqrt(10), rel=1e-12)
