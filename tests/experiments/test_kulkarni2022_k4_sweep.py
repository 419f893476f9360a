"""pystanprivacy.experiments.kulkarni2022.k4_sweep (part ``k4_sweep`` of ``reproduce kulkarni2022``;
REPRODUCTION.md, K4): the one-factor-at-a-time grid and its
tasks, the "opt" noise-sd ratios against a brute-force search of Lemma 3.1 written out here, the
paired summary against hand-computed numbers, and one real cell (the cached SS model, a short
chain) whose RMSEs and least-squares fit are recomputed with scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.metrics import root_mean_squared_error

from pystanprivacy.experiments.kulkarni2022.data import load_wine_regression


@pytest.fixture(scope="module")
def sweep():
    from pystanprivacy.experiments.kulkarni2022 import k4_sweep

    return k4_sweep


def test_grid_varies_one_factor_at_a_time(sweep):
    grid = sweep.one_factor_grid(sweep.BASE, sweep.ALTERNATIVES, sweep.COMBINED)
    factors = list(sweep.BASE)
    assert grid[0] == {"setting": "base", "factor": "base", **sweep.BASE}
    singles = [s for s in grid if s["factor"] in factors]
    # every alternative level appears once, alone, with every other factor at the base level
    expected = {(f, lv) for f, levels in sweep.ALTERNATIVES.items() for lv in levels}
    assert {(s["factor"], s[s["factor"]]) for s in singles} == expected
    assert len(singles) == len(expected) == 7
    for s in singles:
        changed = [f for f in factors if s[f] != sweep.BASE[f]]
        assert changed == [s["factor"]]
    combined = [s for s in grid if s["factor"] == "combined"]
    assert combined == [{"setting": "favourable", "factor": "combined", **sweep.COMBINED["favourable"]}]
    assert len(grid) == 9 and len({s["setting"] for s in grid}) == 9
    # the committed K4 setting: d = 4, equal sds, delta 1e-5, theta ~ N(0, 5 I)
    assert sweep.BASE == {"d": 4, "ratios": "equal", "delta": 1e-5, "prior_theta_sd": math.sqrt(5.0)}


def test_grid_refuses_what_would_not_be_one_factor_at_a_time(sweep):
    with pytest.raises(ValueError, match="repeats the base level"):
        sweep.one_factor_grid({"d": 4, "delta": 1e-5}, {"d": (2, 4)})
    with pytest.raises(ValueError, match="not one of base's"):
        sweep.one_factor_grid({"d": 4}, {"R": (2.0,)})
    with pytest.raises(ValueError, match="must set exactly the factors"):
        sweep.one_factor_grid({"d": 4, "delta": 1e-5}, {}, {"x": {"d": 2}})


def test_tasks_cover_every_setting_epsilon_and_split(sweep):
    grid = sweep.one_factor_grid(sweep.BASE, sweep.ALTERNATIVES, sweep.COMBINED)
    tasks = sweep.build_tasks(grid, epsilons=(0.5, 2.0, 8.0), repeats=3, sampler=sweep.SAMPLER)
    assert len(tasks) == 9 * 3 * 3
    seen = {(t.kwargs["setting"], t.kwargs["epsilon"], t.kwargs["split"]) for t in tasks}
    assert seen == {(s["setting"], e, r) for s in grid for e in (0.5, 2.0, 8.0) for r in range(3)}
    by_name = {s["setting"]: s for s in grid}
    for t in tasks:
        s = by_name[t.kwargs["setting"]]
        assert all(t.kwargs[f] == s[f] for f in ("d", "ratios", "delta", "prior_theta_sd", "factor"))
    short = {"chains": 2, "warmup": 300, "draws": 300}
    fewer = sweep.build_tasks(
        grid, epsilons=(2.0,), repeats=3, sampler=sweep.SAMPLER, repeats_by={"d=12": 1}, sampler_by={"d=12": short}
    )
    assert [t.kwargs["split"] for t in fewer if t.kwargs["setting"] == "d=12"] == [0]
    assert len(fewer) == 8 * 3 + 1
    assert all(t.kwargs["sampler"] == (short if t.kwargs["setting"] == "d=12" else sweep.SAMPLER) for t in fewer)
    with pytest.raises(ValueError, match="not in settings"):
        sweep.build_tasks(grid, epsilons=(2.0,), repeats=3, sampler=sweep.SAMPLER, repeats_by={"d=7": 1})


def _lemma_3_1_squared(R, R_y, r2, r3):
    """Delta^2 of Lemma 3.1 (supplement Eq. 17) with sigma_1 = 1, sigma_2 = r2, sigma_3 = r3."""
    return R_y**4 / (2 * r2**4) + 2 * R**4 + 2 * R_y**2 * R**2 / r2**2 + R_y**4 / r3**2


@pytest.mark.parametrize("d", [2, 4, 12])
def test_opt_ratios_minimise_the_total_noise_variance(sweep, d):
    m2 = d * (d + 1) // 2
    r2, r3 = sweep.optimal_ratios(d)
    logs = np.linspace(math.log(0.2), math.log(20.0), 801)
    G2, G3 = np.meshgrid(np.exp(logs), np.exp(logs), indexing="ij")
    total = _lemma_3_1_squared(1.0, 2.0, G2, G3) * (m2 + d * G2**2 + G3**2)
    i, j = np.unravel_index(np.argmin(total), total.shape)
    found = _lemma_3_1_squared(1.0, 2.0, r2, r3) * (m2 + d * r2**2 + r3**2)
    assert found <= total.min() * (1 + 1e-6)
    # the grid step is 0.6 %; the minimum is flat, so the arguments agree to a few steps
    assert r2 == pytest.approx(G2[i, j], rel=0.03) and r3 == pytest.approx(G3[i, j], rel=0.03)
    # a real change from Corollary 3.1's equal sds: less total noise
    assert found < 0.7 * _lemma_3_1_squared(1.0, 2.0, 1.0, 1.0) * (m2 + d + 1)
    assert sweep.ratio_values("equal", d) == (1.0, 1.0)
    with pytest.raises(ValueError, match="ratios must be one of"):
        sweep.ratio_values("paper", d)


def test_summary_pairs_by_split(sweep):
    rows = []
    values = {"ss": [0.90, 0.80, 0.85], "ldp-sgd": [0.86, 0.84, 0.83], "zero": [0.87, 0.87, 0.88]}
    for method, v in values.items():
        for split, r in enumerate(v):
            rows.append(
                {"setting": "base", "factor": "base", "epsilon": 2.0, "split": split, "method": method, "rmse": r}
            )
    # shuffled rows: the pairing must follow the split, not the row order
    table = pd.DataFrame(rows).sample(frac=1.0, random_state=3)
    out = sweep.summarise(table).set_index("method")
    ss = out.loc["ss"]
    assert ss["rmse_mean"] == pytest.approx(0.85)
    assert ss["rmse_sd"] == pytest.approx(0.05)
    assert ss["rmse_se"] == pytest.approx(0.05 / math.sqrt(3))
    # ss - ldp-sgd by split: 0.04, -0.04, 0.02 -> mean 0.00667, sd 0.04163
    assert ss["minus_ldp-sgd"] == pytest.approx(0.02 / 3)
    assert ss["minus_ldp-sgd_se"] == pytest.approx(np.std([0.04, -0.04, 0.02], ddof=1) / math.sqrt(3))
    assert ss["minus_zero"] == pytest.approx((0.03 - 0.07 - 0.03) / 3)
    assert out.loc["zero", "minus_zero"] == 0.0
    assert sweep.rmse(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 5.0])) == pytest.approx(math.sqrt(4 / 3))


def test_one_cell_reports_rmses_that_scikit_learn_recomputes(sweep):
    """A real cell (d = 2, "opt" ratios, the cached SS program, 2 short chains): each method's
    RMSE is that of its reported coefficients on the split's test data, least squares is
    scikit-learn's, and the release's noise sds are the opt ratios of sigma_1."""
    seed = np.random.SeedSequence(11)
    table = sweep.sweep_task(
        setting="t",
        factor="combined",
        d=2,
        ratios="opt",
        delta=1e-3,
        prior_theta_sd=0.5,
        epsilon=8.0,
        split=1,
        sampler={"chains": 2, "warmup": 150, "draws": 150},
        data_dir=None,
        seed=seed,
    ).set_index("method")
    assert list(table.index) == ["ss", "ldp-sgd", "ols", "zero"]
    data = load_wine_regression(None, d=2, R=1.0, R_y=2.0, seed=1)
    for method, row in table.iterrows():
        theta = sweep.parse_theta(row["theta"])
        assert theta.shape == (2,)
        assert row["rmse"] == pytest.approx(root_mean_squared_error(data.y_test, data.x_test @ theta), rel=1e-12)
    ols = LinearRegression(fit_intercept=False).fit(data.x_train, data.y_train).coef_
    np.testing.assert_allclose(sweep.parse_theta(table.loc["ols", "theta"]), ols, rtol=1e-8)
    assert table.loc["zero", "rmse"] == pytest.approx(np.sqrt(np.mean(data.y_test**2)))
    r2, r3 = sweep.optimal_ratios(2)
    ss = table.loc["ss"]
    assert ss["sigma_2"] == pytest.approx(r2 * ss["sigma_1"], rel=1e-12)
    assert (ss["ratio_xy"], ss["ratio_yy"]) == (r2, r3)
    assert ss["n_train"] == data.x_train.shape[0] == 5198
