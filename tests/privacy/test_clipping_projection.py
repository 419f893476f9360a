"""Tests for clipping helpers and projections."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize

from pystanprivacy.privacy.mechanisms import Clip, ClipL2, project_nonnegative, project_simplex

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
matrices = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=8), elements=finite)


# ------------------------------------------------------------------ Clip


def test_clip_interval():
    clip = Clip(-1.0, 2.0)
    np.testing.assert_array_equal(clip([-5, -1, 0.5, 2, 7]), [-1, -1, 0.5, 2, 2])
    assert clip(np.zeros((2, 3))).shape == (2, 3)
    assert clip.details() == {"clipping": {"type": "interval", "lower": -1.0, "upper": 2.0}}


def test_clip_does_not_modify_input_and_rejects_nan():
    x = np.array([5.0, -5.0])
    Clip(0, 1)(x)
    np.testing.assert_array_equal(x, [5.0, -5.0])
    with pytest.raises(ValueError, match="x contains NaN"):
        Clip(0, 1)([np.nan])


@pytest.mark.parametrize(
    "lower, upper, exc",
    [(1, 0, ValueError), (0, 0, ValueError), (0, np.inf, ValueError), ("0", 1, TypeError), (None, 1, TypeError)],
)
def test_clip_validates_bounds(lower, upper, exc):
    with pytest.raises(exc, match="lower, upper"):
        Clip(lower, upper)


# ---------------------------------------------------------------- ClipL2


def test_clip_l2_rows():
    x = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [-6.0, 8.0]])
    out = ClipL2(1.0)(x)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0, 0], [-0.6, 0.8]], rtol=1e-15)
    assert ClipL2(1.0)(np.array([3.0, 4.0])).shape == (2,)
    assert ClipL2(2.5).details() == {"clipping": {"type": "l2", "radius": 2.5}}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(x=matrices, radius=st.floats(1e-3, 1e3))
def test_clip_l2_properties(x, radius):
    out = ClipL2(radius)(x)
    norms_in = np.linalg.norm(x, axis=1)
    norms_out = np.linalg.norm(out, axis=1)
    assert np.all(norms_out <= radius)  # exact, no tolerance
    small = norms_in <= radius
    np.testing.assert_array_equal(out[small], x[small])  # untouched
    big = ~small
    np.testing.assert_allclose(norms_out[big], radius, rtol=1e-12)
    # Same direction: out = c * x with c in (0, 1].
    np.testing.assert_allclose(
        out[big] * norms_in[big, None],
        x[big] * norms_out[big, None],
        rtol=1e-9,
        atol=1e-9 * radius * np.abs(x[big]).max(initial=0),
    )


def test_clip_l2_no_overflow():
    out = ClipL2(1.0)(np.array([[1e200, 1e200], [1e-200, 0.0]]))
    np.testing.assert_allclose(out[0], [2**-0.5, 2**-0.5], rtol=1e-14)
    assert out[1, 0] == 1e-200


@pytest.mark.parametrize(
    "radius, exc", [(0, ValueError), (-1, ValueError), (np.nan, ValueError), (True, TypeError), ("1", TypeError)]
)
def test_clip_l2_validates(radius, exc):
    with pytest.raises(exc, match="radius"):
        ClipL2(radius)


def test_clip_l2_rejects_3d():
    with pytest.raises(ValueError, match="x must have 1 or 2 dimension"):
        ClipL2(1.0)(np.zeros((2, 2, 2)))


# ------------------------------------------------------------ projections


def test_project_nonnegative():
    np.testing.assert_array_equal(project_nonnegative([-1.0, 0.0, 2.5]), [0.0, 0.0, 2.5])
    with pytest.raises(ValueError, match="x contains NaN"):
        project_nonnegative([np.nan])


def _kkt_ok(x, w, total, tol):
    """KKT for min 0.5||w - x||^2 s.t. w >= 0, sum w = total.

    Stationarity: w - x + theta - mu = 0 with mu >= 0, mu_i w_i = 0; i.e.
    theta = x_i - w_i on the support and x_i <= theta off it.
    """
    if np.any(w < 0) or abs(w.sum() - total) > tol:
        return False
    support = w > 0
    theta = np.mean(x[support] - w[support])
    return np.allclose(x[support] - w[support], theta, atol=tol) and np.all(x[~support] <= theta + tol)


def test_project_simplex_known():
    np.testing.assert_allclose(project_simplex([0.5, 0.5]), [0.5, 0.5])
    np.testing.assert_allclose(project_simplex([2.0, 0.0]), [1.0, 0.0])
    np.testing.assert_allclose(project_simplex([1.0, 1.0, 1.0], total=3.0), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(project_simplex([0.0, 0.0, 0.0, 0.0]), [0.25] * 4)
    np.testing.assert_allclose(project_simplex([-3.0, 2.0, 0.5], total=2.0), [0.0, 1.75, 0.25])


def _brute_force_simplex(x, total):
    """Exact projection by enumerating supports (feasible + KKT)."""
    d = x.size
    for k in range(1, d + 1):
        for support in itertools.combinations(range(d), k):
            s = list(support)
            theta = (x[s].sum() - total) / k
            w = np.zeros(d)
            w[s] = x[s] - theta
            if np.all(w[s] > 0) and np.all(np.delete(x, s) <= theta):
                return w
    raise AssertionError("no support found")


def test_project_simplex_matches_slsqp_and_brute_force():
    rng = np.random.default_rng(0)
    x = rng.normal(scale=2.0, size=(40, 5))
    total = 1.5
    proj = project_simplex(x, total=total)
    for xi, wi in zip(x, proj):
        np.testing.assert_allclose(wi, _brute_force_simplex(xi, total), atol=1e-12)
        res = optimize.minimize(
            lambda w, xi=xi: 0.5 * np.sum((w - xi) ** 2),
            x0=np.full(5, total / 5),
            jac=lambda w, xi=xi: w - xi,
            method="SLSQP",
            bounds=[(0, None)] * 5,
            constraints=[{"type": "eq", "fun": lambda w: w.sum() - total, "jac": lambda w: np.ones_like(w)}],
            options={"ftol": 1e-14, "maxiter": 500},
        )
        assert res.success
        np.testing.assert_allclose(wi, res.x, atol=1e-6)
        assert 0.5 * np.sum((wi - xi) ** 2) <= res.fun + 1e-12
        assert _kkt_ok(xi, wi, total, 1e-12)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(x=matrices, total=st.floats(1e-3, 1e3))
def test_project_simplex_properties(x, total):
    w = project_simplex(x, total=total)
    assert w.shape == x.shape
    scale = max(total, np.abs(x).max())
    for xi, wi in zip(x, w):
        assert _kkt_ok(xi, wi, total, 1e-9 * scale)
    # Idempotent (up to rounding) and invariant to shifting x by a constant.
    np.testing.assert_allclose(project_simplex(w, total=total), w, atol=1e-9 * scale)
    np.testing.assert_allclose(project_simplex(x + 3.0, total=total), w, atol=1e-9 * scale)


def test_project_simplex_validates():
    with pytest.raises(ValueError, match="total"):
        project_simplex([1.0, 2.0], total=0.0)
    with pytest.raises(ValueError, match="x must have 1 or 2 dimension"):
        project_simplex(np.zeros((1, 1, 1)))
    with pytest.raises(ValueError, match="at least one column"):
        project_simplex(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="x contains NaN"):
        project_simplex([np.nan, 1.0])
