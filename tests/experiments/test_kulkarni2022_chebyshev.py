"""Supplement Figure 6 of Kulkarni et al. (2022): the degree-2 Chebyshev approximation of
E[sigmoid(x' theta)] (pystanprivacy.experiments.kulkarni2022.chebyshev). Deterministic checks
against scipy quadrature and closed forms; no sampling, no false rejections."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from pystanprivacy.experiments.kulkarni2022 import chebyshev as ch
from pystanprivacy.models.kulkarni2022_regression import chebyshev_sigmoid


def test_error_grid_matches_quadrature_and_closed_forms():
    grid = ch.chebyshev_error_grid(means=[-2.5, 0.0, 0.7, 3.0], sds=[0.0, 0.5, 2.0], radii=[3.0, 4.0])
    assert len(grid) == 2 * 4 * 3
    for row in grid.itertuples():
        b = chebyshev_sigmoid(row.radius, 2)
        approx = np.clip(b[0] + b[1] * row.mean + b[2] * (row.mean**2 + row.sd**2), 0, 1)
        if row.sd == 0:
            exact = expit(row.mean)
        else:
            exact = integrate.quad(
                lambda t, row=row: expit(t) * stats.norm.pdf(t, row.mean, row.sd), -np.inf, np.inf, epsabs=1e-13
            )[0]
        assert row.exact == pytest.approx(exact, abs=1e-10)
        assert row.chebyshev == pytest.approx(approx, abs=1e-15)
        assert row.abs_diff == pytest.approx(abs(exact - approx), abs=1e-10)
    # sigmoid - 1/2 is odd and b_2 = 0 on a symmetric interval: no error at m = 0, whatever s
    assert grid.loc[grid["mean"] == 0.0, "abs_diff"].max() < 1e-12
    # and the error is visible away from 0 (m = 0.7, s = 0, [-4, 4]: sigmoid 0.668 vs 0.5 + 0.7 b_1)
    row = grid[(grid["mean"] == 0.7) & (grid["sd"] == 0.0) & (grid["radius"] == 4.0)].iloc[0]
    assert row.abs_diff > 0.03


def test_quality_follows_the_papers_protocol():
    t1 = ch.chebyshev_quality(dims=[1, 3], radii=[3.0], runs=4, samples=500, seed=5)
    t2 = ch.chebyshev_quality(dims=[1, 3], radii=[3.0], runs=4, samples=500, seed=5)
    t3 = ch.chebyshev_quality(dims=[1, 3], radii=[3.0], runs=4, samples=500, seed=6)
    assert len(t1) == 2 * 4 and t1.equals(t2) and not t1["empirical"].equals(t3["empirical"])
    assert np.allclose(t1["abs_diff"], (t1["empirical"] - t1["chebyshev"]).abs())
    # zero-mean x: both sides are close to 1/2, and the difference is small
    assert t1["empirical"].between(0.3, 0.7).all() and t1["abs_diff"].max() < 0.02
    s = ch.summarise_chebyshev(t1)
    assert list(s["d"]) == [1, 3] and (s["runs"] == 4).all()
    assert s["abs_diff_mean"].iloc[0] == pytest.approx(t1.loc[t1["d"] == 1, "abs_diff"].mean())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dims": [0]}, "dims"),
        ({"runs": 0}, "runs"),
        ({"samples": 0}, "samples"),
        ({"radii": [-1.0]}, "radii"),
        ({"dims": []}, "dims and radii must each hold"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ch.chebyshev_quality(**kwargs)


def test_bad_grid_values_are_refused():
    with pytest.raises(ValueError, match="sds finite and >= 0"):
        ch.chebyshev_error_grid(means=[0.0], sds=[-1.0])
