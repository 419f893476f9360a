"""Bernstein & Sheldon's claims (pystanprivacy.experiments.bernstein2018.claims) against
recomputations from the raw per-trial table and the mode study, written independently of the
claims module (the KS statistic from the sorted quantiles by hand, the shares by histogram, the
paired SE from the covariance). Deterministic: the committed tables, no sampling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pystanprivacy.experiments.bernstein2018.claims import CLAIMS
from pystanprivacy.report.render import evaluate
from pystanprivacy.report.rule import NOT_REPRODUCED, PARTLY, REPRODUCED
from pystanprivacy.run.runner import saved_results

RESULTS = Path(__file__).resolve().parents[2] / "results"
DIR = RESULTS / "bernstein2018"


@pytest.fixture(scope="module")
def trials():
    # the per-trial table's rows, from the committed task results (the CSV itself is not committed)
    return saved_results(DIR / ".tasks")


@pytest.fixture(scope="module")
def judged():
    return {c.key: evaluate(c, results_dir=RESULTS) for c in CLAIMS}


def _ks(u: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance of the sample to Uniform(0, 1), from the order statistics."""
    u = np.sort(u)
    n = u.size
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - u), np.max(u - (i - 1) / n)))


def _setting(label: str) -> tuple[str, int, float]:
    """'binomial, n = 10, ε = 0.01' (optionally after 'method: ') -> its key."""
    text = label.split(": ", 1)[-1]
    model, n, eps = (s.strip() for s in text.split(","))
    return model, int(n.split("=")[1]), float(eps.split("=")[1])


def _u(trials, method, setting):
    model, n, eps = setting
    rows = trials[
        (trials.method == method) & (trials.model == model) & (trials.n == n) & np.isclose(trials.epsilon, eps)
    ]
    return rows["u"].to_numpy(dtype=float)


def test_b1a_ks_cells_are_the_ks_tests_of_the_raw_quantiles(trials, judged):
    r = judged["B1a"]
    gibbs, _, naive_small, naive_large, ops = r.parts
    for part, method in ((gibbs, "noise-aware (Gibbs)"), (naive_small, "naive"), (naive_large, "naive"), (ops, "OPS")):
        for cell in part.cells:
            u = _u(trials, method, _setting(cell.label))
            assert u.size == cell.n == 500
            d = _ks(u)
            assert cell.estimate == pytest.approx(d, rel=1e-6), cell.label
            assert cell.p_value == pytest.approx(stats.kstwo.sf(d, u.size), rel=1e-3, abs=1e-300), cell.label
    # every setting of the grid, none chosen after the fact: 24 for Gibbs, 21 + 3 for naive, 8 for OPS
    assert [len(p.cells) for p in r.parts] == [24, 1, 21, 3, 8]


def test_b1a_carries_the_authors_driver_problem_into_its_verdict(judged):
    r = judged["B1a"]
    driver_part = r.judgement.parts[1]
    (cell,) = r.parts[1].cells
    assert cell.n == 200
    # the KS p-value of D = 0.220 with 200 trials, from the exact distribution of the KS statistic
    assert cell.p_value == pytest.approx(stats.kstwo.sf(cell.estimate, 200), rel=1e-3)
    assert stats.kstwo.isf(0.01, 200) == pytest.approx(0.114, abs=5e-4)  # the 1 % critical value quoted
    assert driver_part.verdict == NOT_REPRODUCED and r.judgement.verdict == PARTLY
    modes = pd.read_csv(DIR / "bernstein2018_exponential_modes.csv")
    driver = modes[modes.problem == "driver"]
    grid = driver[driver.method == "grid"].set_index("seed").minor_mass
    heavy = grid[grid > 0.05]
    samplers = driver[driver.method.isin(["library Gibbs", "authors' Gibbs"]) & driver.seed.isin(heavy.index)]
    assert len(heavy) == 3 and samplers.minor_mass.max() < 0.01  # Gibbs misses a mode holding 19-25 %
    assert f"{round(heavy.min() * 100)}–{round(heavy.max() * 100)}% mode" in r.number
    assert "KS 0.220 > 0.114" in r.number


def test_b1b_shares_by_histogram(trials, judged):
    r = judged["B1b"]
    naive, ops, calibrated = r.parts
    for part, method, edges, inside, stated in (
        (naive, "naive", [0, 0.05, 0.95, 1], [0, 2], 0.10),
        (ops, "OPS", [0, 0.25, 0.75 + 1e-12, 1], [1], 0.50),
    ):
        for cell in part.cells:
            u = _u(trials, method, _setting(cell.label))
            counts, _ = np.histogram(u, bins=edges)
            share = counts[inside].sum() / u.size
            assert cell.estimate == pytest.approx(share - stated, abs=1e-12), cell.label
            assert cell.se == pytest.approx(np.sqrt(stated * (1 - stated) / 500), rel=1e-12)
    assert r.judgement.verdict == REPRODUCED
    assert len(calibrated.cells) == 6


def test_b1c_cells_are_paired_differences_of_the_trials(trials, judged):
    r = judged["B1c"]
    (part,) = r.parts
    summary = pd.read_csv(DIR / "bernstein2018_mmd_summary.csv")
    assert len(part.cells) == 16 == len(summary) // 3
    for cell in part.cells:
        model, n, eps = _setting(cell.label)
        at = summary[(summary.model == model) & (summary.n == n) & np.isclose(summary.epsilon, eps)].set_index("method")
        # mean of the paired differences = difference of the means over the same 500 trials
        assert cell.estimate == pytest.approx(at.mmd2_mean["naive"] - at.mmd2_mean["noise-aware (Gibbs)"], rel=1e-9)
        rows = trials[(trials.model == model) & (trials.n == n) & np.isclose(trials.epsilon, eps)]
        a = rows[rows.method == "naive"].sort_values("trial").mmd2.to_numpy()
        b = rows[rows.method == "noise-aware (Gibbs)"].sort_values("trial").mmd2.to_numpy()
        cov = np.cov(a, b)
        assert cell.se == pytest.approx(np.sqrt((cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]) / a.size), rel=1e-9)
    assert r.judgement.verdict == REPRODUCED
