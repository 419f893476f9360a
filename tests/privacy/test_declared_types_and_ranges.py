"""Issue 53, items 1, 2, 5 and two messages of item 8: types, grids and ranges come from public
declarations, never from the values.

1. Python-int lists: NumPy infers a list's dtype from its values (int64 below 2**63, float64 up
   to 2**64 - 1, object beyond), so one record chose between an integer grid, a real grid and a
   TypeError. A sequence now declares no dtype: it is always real data (float64), converted
   without a value-dependent failure; only an ndarray (or NumPy scalar) of integer dtype declares
   integer data.
2. A subnormal clipping radius made ClipL2 raise RuntimeError for some rows and not others.
5. A count of 300,000 in a 10,000-bin histogram at epsilon = 1e300 came back as 262,144 (the
   input was clamped to 2^52 grid steps); every finite value is now represented.
8. Jewson models at epsilon = 1e300 / 5e-324 said "beta must be ... > 1" (after charging), and
   AnalyticGaussian at the largest float epsilon raised ArithmeticError.

Each item's tests fail on the code before the change (the docstring of each says how it
failed); the [1, 2**63] pair of the Jewson checks and epsilon = 5e-324 with M > 1 passed
before too and are kept as coverage of the same rule."""

from __future__ import annotations

import math
import re
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest

from pystanprivacy._validation import check_array, declares_integer
from pystanprivacy.models.bernstein2018 import ExponentialGamma
from pystanprivacy.models.jewson2023 import (
    LinearRegressionBetaD,
    LogisticRegressionBetaD,
    NNClassifierBetaD,
    NNRegressionBetaD,
)
from pystanprivacy.models.kulkarni2022_regression import LinearRegressionInputs, LinearRegressionSS
from pystanprivacy.privacy import ldp, noise
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, ClipL2, Laplace
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyAccountant

FLOAT_MAX = sys.float_info.max

#: the neighbouring pairs of the issue: each differs in one record of a Python-int list
PAIRS = [([1, 2**64], [1, 2**64 - 1]), ([1, 2**63 - 1], [1, 2**63])]


@pytest.fixture(autouse=True)
def _quiet_seeded_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _outcome(call):
    """``(kind, public record or error type, (epsilon, delta) spent)`` of ``call(accountant)``."""
    acc = PrivacyAccountant(10.0, 0.5)
    try:
        rel = call(acc)
    except Exception as exc:  # noqa: BLE001 - the outcome class is what is compared
        return "refused", type(exc).__name__, acc.spent
    return "released", rel.record.to_dict(), acc.spent


# =============================================================== 1. sequences declare no dtype
RELEASES = {
    "laplace": lambda v, acc: Laplace(epsilon=1.0, sensitivity=1.0).release(v, accountant=acc),
    "analytic_gaussian": lambda v, acc: AnalyticGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0).release(
        v, accountant=acc
    ),
    "clipped_laplace_reports": lambda v, acc: ldp.clipped_laplace_reports(
        v, epsilon=1.0, bounds=(0.0, 1.0), accountant=acc
    ),
    "exponential_gamma": lambda v, acc: ExponentialGamma.release(v, epsilon=1.0, bounds=(0.0, 5.0), accountant=acc),
}


@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize("pair", PAIRS, ids=["2^64", "2^63"])
def test_python_int_neighbours_get_the_same_record_and_charge(name, pair):
    """Old code: [1, 2**64] raised TypeError with nothing charged while [1, 2**64 - 1] was
    released and charged; [1, 2**63 - 1] got grid 1.0 and [1, 2**63] grid 2^-21."""
    first, second = (_outcome(lambda acc, v=v: RELEASES[name](v, acc)) for v in pair)
    assert first[0] == second[0] == "released"
    assert first == second  # the same public record (grid, sensitivity, scale) and the same charge
    assert first[2] == ((1.0, 0.0) if name != "analytic_gaussian" else (1.0, 1e-6))


def test_a_python_scalar_declares_no_integer_grid():
    """Old code: 3 (an int) got the integer grid and 3.5 a grid of 2^-20: told apart."""
    a, b = (Laplace(epsilon=1.0, sensitivity=1.0).release(v) for v in (3, 3.5))
    assert a.record.to_dict() == b.record.to_dict() and a.record.details["grid_exponent"] == -20


def test_an_integer_ndarray_declares_the_integer_grid():
    rel = Laplace(epsilon=0.5, sensitivity=1.0).release(np.array([3, 2**62], dtype=np.int64))
    assert rel.record.details["grid"] == 1.0 and rel.record.scale == 2.0
    assert declares_integer(np.array([1], dtype=np.uint8)) and declares_integer(np.int64(3))
    for undeclared in ([1, 2], (1, 2), 3, 2**70, np.array([1.0]), np.array([True]), True):
        assert not declares_integer(undeclared)


def test_declared_integers_beyond_2_53_reach_the_grid_exactly():
    """Found with issue 53 item 1: integer input went through float64, so 2^53 + 1 and 2^53 + 2
    (neighbours at sensitivity 1) became 2^53 and 2^53 + 2, two steps apart on the integer grid
    whose noise is calibrated for one. The grid index is now the exact integer."""
    x = np.array([2**53 + 1, 2**53 + 2, 2**63 - 1, -(2**63)], dtype=np.int64)
    mech = Laplace(epsilon=1.0, sensitivity=1.0)
    assert noise.to_grid(mech._check_value(x), 0).tolist() == x.tolist()
    assert noise.to_grid(np.array([2**64 - 1], dtype=np.uint64), -3).tolist() == [(2**64 - 1) * 8]
    assert noise.to_grid(np.array([5, -5, 7], dtype=np.int64), 1).tolist() == [2, -2, 4]  # half to even
    rel = mech.release(x[:2])
    assert rel.record.details["grid"] == 1.0


def test_python_ints_beyond_float64_saturate_instead_of_failing():
    """Old code: TypeError (dtype object). A Python int is converted like float() does, except
    that beyond the float64 range it is the largest float instead of an OverflowError."""
    out = check_array([1, 2**64, -(10**400), 10**400, 2**63], "x")
    assert out.dtype == np.float64
    assert out.tolist() == [1.0, 2.0**64, -FLOAT_MAX, FLOAT_MAX, 2.0**63]
    # what is not a real number is still refused, by type, without the values
    for bad in ([1, 2**64, "3"], [1, 2**64, None], [1, 2**64, 1j], np.array([1, 2**64], dtype=object)):
        with pytest.raises(TypeError, match="x must have a numeric dtype"):
            check_array(bad, "x")


JEWSON = {
    "logistic": (LogisticRegressionBetaD, True),
    "nn_classifier": (NNClassifierBetaD, True),
    "linear": (LinearRegressionBetaD, False),
    "nn_regression": (NNRegressionBetaD, False),
}


@pytest.mark.parametrize("name", sorted(JEWSON))
@pytest.mark.parametrize("pair", PAIRS, ids=["2^64", "2^63"])
def test_jewson_checks_before_the_charge_do_not_tell_python_ints_apart(name, pair):
    """The budget (1e-9) cannot cover epsilon = 20, so a data set that passes every check
    before the charge ends in BudgetExceededError with nothing charged or run. Old code: the
    X (and, for the regressions, y) with 2**64 raised TypeError instead."""
    cls, classification = JEWSON[name]
    y = [0, 1] if classification else [0.5, -0.5]

    def attempt(X, y):
        acc = PrivacyAccountant(1e-9)
        with pytest.raises(BudgetExceededError):
            cls().sample_one(X, y, epsilon=20.0, accountant=acc)
        assert acc.spent == (0.0, 0.0)

    for v in pair:
        attempt([[x] for x in v], y)  # a huge feature
        attempt([[x, 0.5] for x in v], y)  # in the first of two columns
        if not classification:
            attempt([[0.5], [0.25]], v)  # a huge response


# =============================================================== 2. subnormal radius
@pytest.mark.parametrize("rows", [[[0.3, 0.3]], [[0.3, 0.0]]])
def test_gaussian_reports_refuse_a_subnormal_radius_by_name_for_every_row(rows):
    """Old code: [[.3, .3]] raised RuntimeError (ClipL2 could not bring every row within the
    radius) and [[.3, 0]] was released."""
    acc = PrivacyAccountant(5.0, 0.5)
    with pytest.raises(ValueError, match="max_norm must be .* got 1e-310"):
        ldp.gaussian_reports(rows, epsilon=1.0, delta=1e-6, sensitivity=1.0, max_norm=1e-310, accountant=acc)
    assert acc.spent == (0.0, 0.0)


def test_gaussian_reports_refuse_a_subnormal_derived_radius_by_the_sensitivity():
    # no max_norm: the rows are clipped to sensitivity / 2, here subnormal
    with pytest.raises(ValueError, match="sensitivity"):
        ldp.gaussian_reports([[0.3, 0.3]], epsilon=1.0, delta=1e-6, sensitivity=2e-310)


@pytest.mark.parametrize("cls", [LinearRegressionSS, LinearRegressionInputs])
@pytest.mark.parametrize("x", [[[0.3, 0.3]], [[0.3, 0.0]]])
def test_linear_regressions_refuse_a_subnormal_R_before_the_charge(cls, x):
    """Old code: RuntimeError from ClipL2 for [[.3, .3]], a release for [[.3, 0]]."""
    acc = PrivacyAccountant(5.0, 0.5)
    with pytest.raises(ValueError, match="R must be"):
        cls.release(x, [0.1], epsilon=1.0, R=1e-310, accountant=acc)
    assert acc.spent == (0.0, 0.0)


def test_clipl2_refuses_a_subnormal_radius_and_clips_every_row_at_the_smallest_normal_one():
    with pytest.raises(ValueError, match="radius must be"):
        ClipL2(1e-310)
    tiny = sys.float_info.min  # 2^-1022: the smallest radius accepted
    rng = np.random.default_rng(53)
    rows = np.concatenate(
        [
            rng.normal(size=(200, 7)),
            rng.normal(size=(200, 7)) * 1e300,
            np.full((1, 1000), 0.3)[:, :7],
            np.array([[0.3] * 7, [1e-300] * 7]),
        ]
    )
    out = ClipL2(tiny)(rows)
    norms = np.sqrt(np.sum((out.astype(object) * 2**600) ** 2, axis=1).astype(float)) / 2.0**600  # no underflow
    assert np.all(norms <= tiny * (1 + 1e-12))
    wide = ClipL2(tiny)(np.full((1, 1000), 0.3))  # 1000 subnormal coordinates
    assert np.linalg.norm(wide * 2.0**600) <= tiny * 2.0**600


# =============================================================== 5. no clamp of any finite value
def test_a_count_of_300000_comes_back_at_epsilon_1e300():
    """The issue's example. Old code: values[0] was 262144.0 (clamped to 2^52 steps of 2^-34)."""
    h = np.full(10000, 262144.0)
    h[0] = 3e5
    rel = Laplace(epsilon=1e300, sensitivity=1.0).release(h)
    # the grid is 2^-34 and the noise scale far below it: the value comes back to within a step
    g = rel.record.details["grid"]
    assert abs(rel.values[0] - 3e5) <= g and np.all(np.abs(rel.values[1:] - 262144.0) <= g)


@pytest.mark.parametrize("value", [1e12, 1e100, 1e300, FLOAT_MAX, -FLOAT_MAX])
def test_values_up_to_the_float_maximum_come_back_near_themselves(value):
    """Old code: clamped to 2^52 grid steps (secure path) or 2^1000 (seeded path). Within 50
    noise scales or 1e-12 relative (float64 rounding): the noise passes 50 scales with
    probability below e^-50 (Laplace) per release, the false-rejection rate of this test."""
    mechs = (Laplace(epsilon=1.0, sensitivity=1.0), AnalyticGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0))
    for seed in (None, 3):
        for mech in mechs:
            mech = type(mech)(**{**mech._repr_params(), "seed": seed})
            rel = mech.release(np.array([value, 0.0]))
            assert abs(rel.values[0] - value) <= max(1e-12 * abs(value), 50 * rel.record.scale)
            assert rel.record.details["representable_range"] == (-FLOAT_MAX, FLOAT_MAX)


def test_to_grid_is_exact_for_every_finite_value():
    """m = rint(x / 2^k) exactly, as Python ints, also where x / 2^k overflows float64 (old
    code: clamped to 2^52)."""
    x = np.array([3e5, FLOAT_MAX, -FLOAT_MAX, 1e-300, 2.5 * 2.0**-34, 5e-324])
    m = noise.to_grid(x, -34)
    for xi, mi in zip(x, m):
        assert isinstance(mi, int)
        assert mi == round(Fraction(float(xi)) * 2**34)  # round() of a Fraction: half to even
    assert noise.to_grid(np.array([1e300]), -1100)[0] == round(Fraction(1e300) * 2**1100)


def test_from_grid_is_the_nearest_float_and_saturates():
    k = -34
    for m in (0, 7, -(2**53), 2**53 + 1, 3 * 2**80 + 1):
        assert noise.from_grid([m], k)[0] == float(Fraction(m) * Fraction(2) ** k)  # correctly rounded
    assert noise.from_grid([2**2000, -(2**2000)], k).tolist() == [FLOAT_MAX, -FLOAT_MAX]


def test_an_extreme_draw_is_added_exactly_and_saturates_at_the_float_maximum():
    """A draw of 2^70 grid steps (forced) lands at value + 2^70 g; one of 2^2000 steps at the
    largest float (post-processing of the noisy value; old code: clamped to 2^53 steps)."""
    for draw, expect in ((2**70, None), (2**2000, FLOAT_MAX)):
        mech = Laplace(epsilon=1.0, sensitivity=1.0)
        mech._draw = lambda param, draw=draw: lambda: draw
        acc = PrivacyAccountant(5.0)
        rel = mech.release(np.array([0.5, -0.5]), accountant=acc)
        k = rel.record.details["grid_exponent"]
        want = expect if expect is not None else math.ldexp(float(2**70 + 2 ** (-k - 1)), k)
        assert rel.values[0] == want and acc.spent == (1.0, 0.0)


# =============================================================== 8. messages naming epsilon
@pytest.mark.parametrize("cls", [LogisticRegressionBetaD, LinearRegressionBetaD])
@pytest.mark.parametrize("epsilon", [1e300, 1e17, 5e-324])
def test_jewson_epsilon_out_of_the_loss_range_is_refused_by_name_before_the_charge(cls, epsilon):
    """Old code: "beta must be a finite number > 1, got 1.0", after epsilon was charged."""
    acc = PrivacyAccountant(1e308)
    y = [0, 1] if cls is LogisticRegressionBetaD else [0.5, -0.5]
    with pytest.raises(ValueError, match=re.escape(f"epsilon={epsilon!r}")) as info:
        cls().sample_one([[0.5], [0.25]], y, epsilon=epsilon, accountant=acc)
    assert "beta must be" not in str(info.value) and acc.spent == (0.0, 0.0)


def test_analytic_gaussian_at_the_largest_epsilon_is_a_value_error_naming_epsilon():
    """Old code: ArithmeticError("could not calibrate the discrete Gaussian sigma") for two
    coordinates (the zCDP calibration); the continuous sigma came from a NaN comparison."""
    acc = PrivacyAccountant(FLOAT_MAX, 0.5)
    for x in (np.array([0.5, 1.0]), np.array([0.5])):
        with pytest.raises(ValueError, match="epsilon=1.7976931348623157e\\+308"):
            AnalyticGaussian(epsilon=FLOAT_MAX, delta=1e-6, sensitivity=1.0).release(x, accountant=acc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy NaN on the way
        with pytest.raises(ValueError, match="analytic Gaussian sigma cannot be computed for epsilon=1.79"):
            AnalyticGaussian(epsilon=FLOAT_MAX, delta=1e-6, sensitivity=1.0)
    assert acc.spent == (0.0, 0.0)
