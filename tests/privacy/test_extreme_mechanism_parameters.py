"""Documented-valid extreme public parameters (issue 53, items 3 and 8; hostile census): each is
either served correctly or refused before any charge with a ValueError naming the argument the
user passed.

* ``mechanisms.Gaussian`` with delta = 5e-324 / 1e-310: ``1.25 / delta`` overflowed to inf;
  sigma is finite (about 38.6 sensitivity / epsilon) and is served.
* ``ldp.clipped_laplace_reports`` / ``GaussianLDP.release`` with bounds whose Laplace scale
  ``(b - a) / epsilon`` is beyond 2**1000, and ``ExponentialLDP.release`` with
  ``bound / epsilon`` beyond it: refused naming ``bounds`` / ``bound``.
* ``ldp.gaussian_reports`` with ``scale_ratios = (5e-324, 1)``: ``values / scale_ratios``
  overflowed after the charge; the rescaled rows are now clipped without overflow and served.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from pystanprivacy.models import kulkarni2022 as K
from pystanprivacy.privacy import PrivacyAccountant, ldp
from pystanprivacy.privacy.mechanisms import Gaussian

FLOAT_MAX = float(np.finfo(np.float64).max)
TINY = [5e-324, 1e-310]


def _names(message: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


def _classical_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Dwork & Roth (2014) Theorem A.1's sigma at 60 digits (mpmath), independent of float overflow."""
    with mpmath.workdps(60):
        c = mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / mpmath.mpf(delta)))
        return float(c * mpmath.mpf(sensitivity) / mpmath.mpf(epsilon))


# ------------------------------------------------------------------ classical Gaussian, tiny delta
@pytest.mark.parametrize("delta", TINY)
def test_classical_gaussian_serves_tiny_delta(delta):
    mech = Gaussian(epsilon=0.5, delta=delta, sensitivity=3.0, seed=1)
    # about 38.6 * 3 / 0.5 at delta = 2**-1074; a wrong (overflowed or dropped) log is far off
    assert mech.scale == pytest.approx(_classical_sigma(0.5, delta, 3.0), rel=1e-13)


@pytest.mark.parametrize("delta", TINY)
def test_classical_gaussian_release_with_tiny_delta_is_charged_once(delta):
    acc = PrivacyAccountant(10.0, 0.5)
    rel = Gaussian(epsilon=0.5, delta=delta, sensitivity=1.0).release(np.array([1.0, 2.0]), accountant=acc)
    assert acc.spent == (0.5, delta)
    # the discrete noise's sigma is at least the continuous one (never less noise than calibrated)
    assert rel.record.scale >= _classical_sigma(0.5, delta, 1.0)
    assert np.all(np.isfinite(rel.values))


# ------------------------------------------------------------------ clipped Laplace, far bounds
FAR_BOUNDS = [(-FLOAT_MAX, FLOAT_MAX), (0.0, FLOAT_MAX), (0.0, 2.0**1001)]


@pytest.mark.parametrize("bounds", FAR_BOUNDS)
@pytest.mark.parametrize("call", ["ldp", "GaussianLDP"])
def test_laplace_bounds_too_wide_for_epsilon_are_refused_before_the_charge(bounds, call):
    acc = PrivacyAccountant(10.0, 0.5)
    x = np.array([0.5, 1.0, 2.0])
    with pytest.raises(ValueError) as err:
        if call == "ldp":
            ldp.clipped_laplace_reports(x, epsilon=1.0, bounds=bounds, accountant=acc)
        else:
            K.GaussianLDP.release(x, epsilon=1.0, bounds=bounds, accountant=acc)
    assert _names(str(err.value), "bounds") and _names(str(err.value), "epsilon"), str(err.value)
    assert acc.spent == (0.0, 0.0)
    assert acc.ledger == () or len(acc.ledger) == 0


def test_laplace_bounds_at_the_limit_are_served():
    # (b - a) / epsilon = 2**1000 exactly: the largest scale allowed; 2**1001 / 2 is the same
    for bounds, eps in (((0.0, 2.0**1000), 1.0), ((0.0, 2.0**1001), 2.0), ((-(2.0**999), 2.0**999), 1.0)):
        acc = PrivacyAccountant(10.0, 0.5)
        rel = ldp.clipped_laplace_reports(np.array([0.5, 1.0]), epsilon=eps, bounds=bounds, accountant=acc)
        assert acc.spent == (eps, 0.0)
        assert np.all(np.isfinite(rel.values))


@pytest.mark.parametrize("bound", [FLOAT_MAX, 2.0**1001])
def test_exponential_bound_too_wide_for_epsilon_is_refused_naming_bound(bound):
    acc = PrivacyAccountant(10.0, 0.5)
    with pytest.raises(ValueError) as err:
        K.ExponentialLDP.release(np.array([0.5, 1.0, 2.0]), epsilon=1.0, bound=bound, accountant=acc)
    assert _names(str(err.value), "bound") and _names(str(err.value), "epsilon"), str(err.value)
    assert acc.spent == (0.0, 0.0)


def test_exponential_bound_at_the_limit_is_served():
    acc = PrivacyAccountant(10.0, 0.5)
    rel = K.ExponentialLDP.release(np.array([0.5, 1.0]), epsilon=2.0, bound=2.0**1001, accountant=acc)
    assert acc.spent == (2.0, 0.0)
    assert rel.record.bounds == (0.0, 2.0**1001)


# ------------------------------------------------------------------ gaussian_reports, tiny ratio
def _clipped_exact(row, ratios, radius):
    """The row of ``values / ratios`` scaled to L2 norm ``radius`` (it is far above it), in exact
    rational arithmetic (Fractions): float ratios like 5e-324 are exact dyadic rationals."""
    f = [Fraction(v) / Fraction(r) for v, r in zip(row, ratios)]
    norm = math.sqrt(float(sum(q * q for q in f) / max(q * q for q in f)))  # the norm / peak, in [1, sqrt(k)]
    peak = max(abs(q) for q in f)
    return [float(q / peak) * radius / norm for q in f]


def test_rescaled_rows_that_overflow_are_clipped_exactly():
    ratios = np.array([5e-324, 1.0, 1e-300])
    rows = np.array([[0.2, 0.1, 3.0], [-1e300, 5.0, 0.0], [0.0, 0.0, 1e10], [0.0, -0.25, 1e-300]])
    radius = 2.0
    f_rows, over = ldp._rescale_and_clip(rows, ratios, radius)
    assert over.tolist() == [True, True, True, False]
    assert np.all(np.isfinite(f_rows))
    assert np.all(np.linalg.norm(f_rows[over], axis=1) <= radius)
    for i in range(3):
        np.testing.assert_allclose(f_rows[i], _clipped_exact(rows[i], ratios, radius), rtol=1e-14, atol=1e-300)
    # a row whose quotient is finite and within the radius is kept bit-identically
    np.testing.assert_array_equal(f_rows[3], rows[3] / ratios)


@pytest.mark.parametrize("seed", [None, 7])
def test_gaussian_reports_with_a_tiny_scale_ratio_is_served_after_clipping(seed):
    acc = PrivacyAccountant(10.0, 0.5)
    vals = np.array([[0.2, 0.1], [0.5, 0.4], [-1.0, 0.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no overflow warning either
        rel = ldp.gaussian_reports(
            vals, epsilon=1.0, delta=1e-5, sensitivity=2.0, scale_ratios=[5e-324, 1.0], accountant=acc, seed=seed
        )
    assert acc.spent == (1.0, 1e-5)
    assert np.all(np.isfinite(rel.values))
    # every row's rescaled statistic (|v0| / 5e-324 > 2) is clipped onto the first axis: its
    # report's first coordinate is radius * 5e-324 plus noise sigma * 5e-324, both below 1e-300
    # (unclipped, it would keep 0.2, 0.5, -1.0)
    assert np.all(np.abs(rel.values[:, 0]) < 1e-300)
