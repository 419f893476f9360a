"""Hostile input to the mechanisms (pystanprivacy.privacy.mechanisms) and the privacy records
(issue 8). Every bad parameter or data array gives a TypeError/ValueError naming the
argument, with no private value in the message, no numpy warning on the way (a warning
is how a silent NaN shows up), no charge to the accountant and never a non-finite release.

The ``test_regression_*`` cases are bugs found this way, kept as regression tests."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _hostile import (
    MODERATE,
    NON_POSITIVE_OR_NON_FINITE,
    NOT_A_NUMBER,
    POSITIVE,
    SENTINEL,
    SETTINGS,
    assert_finite_release,
    assert_no_sentinel,
    bad_float_arrays,
    raises_clear,
    wrong_dtype_arrays,
)
from hypothesis import given
from hypothesis import strategies as st

from pystanprivacy.privacy.mechanisms import (
    AnalyticGaussian,
    Clip,
    ClipL2,
    Gaussian,
    Laplace,
    OptimalUnaryEncoding,
    RandomizedResponse,
    analytic_gaussian_sigma,
    project_nonnegative,
    project_simplex,
)
from pystanprivacy.privacy.records import PrivacyAccountant, PrivacyRecord, Release

BAD_SCALAR = st.one_of(NOT_A_NUMBER, NON_POSITIVE_OR_NON_FINITE)


def _mechanisms():
    return [
        Laplace(epsilon=1.0, sensitivity=1.0, seed=0),
        Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0, seed=0),
        AnalyticGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=0),
        RandomizedResponse(epsilon=1.0, seed=0),
        OptimalUnaryEncoding(epsilon=1.0, d=4, seed=0),
    ]


MECHANISMS = _mechanisms()
CONSTRUCTORS = {
    "Laplace": lambda eps, sens: Laplace(epsilon=eps, sensitivity=sens),
    "Gaussian": lambda eps, sens: Gaussian(epsilon=eps, delta=1e-5, sensitivity=sens),
    "AnalyticGaussian": lambda eps, sens: AnalyticGaussian(epsilon=eps, delta=1e-5, sensitivity=sens),
}


# ---------------------------------------------------------------- constructor parameters
@SETTINGS
@given(
    bad=BAD_SCALAR,
    which=st.sampled_from(["epsilon", "sensitivity", "delta"]),
    kind=st.sampled_from(["Laplace", "Gaussian", "AnalyticGaussian"]),
)
def test_bad_parameters_of_additive_mechanisms(bad, which, kind):
    kw = {"epsilon": 0.5, "sensitivity": 1.0}
    if kind != "Laplace":
        kw["delta"] = 1e-5
    elif which == "delta":
        which = "epsilon"
    kw[which] = bad
    cls = {"Laplace": Laplace, "Gaussian": Gaussian, "AnalyticGaussian": AnalyticGaussian}[kind]
    with raises_clear(which):
        cls(**kw)


@SETTINGS
@given(bad=BAD_SCALAR)
def test_bad_epsilon_of_local_mechanisms_and_calibration(bad):
    with raises_clear("epsilon"):
        RandomizedResponse(epsilon=bad)
    with raises_clear("epsilon"):
        OptimalUnaryEncoding(epsilon=bad, d=3)
    with raises_clear("epsilon"):
        analytic_gaussian_sigma(bad, 1e-5, 1.0)
    with raises_clear("sensitivity"):
        analytic_gaussian_sigma(1.0, 1e-5, bad)


@SETTINGS
@given(d=st.one_of(NOT_A_NUMBER, st.sampled_from([1, 0, -1, 2.0, 3.5, math.nan])))
def test_bad_oue_d(d):
    with raises_clear("d"):
        OptimalUnaryEncoding(epsilon=1.0, d=d)


@SETTINGS
@given(seed=st.sampled_from([-1, 1.5, "0", True, [1], np.random.RandomState(0), math.nan]))
def test_bad_seed(seed):
    for make in (
        lambda: Laplace(epsilon=1.0, sensitivity=1.0, seed=seed),
        lambda: RandomizedResponse(epsilon=1.0, seed=seed),
    ):
        with raises_clear("seed"):
            make()


@SETTINGS
@given(eps=POSITIVE, sens=POSITIVE, kind=st.sampled_from(sorted(CONSTRUCTORS)))
def test_any_positive_parameters_give_a_finite_scale_or_a_clear_error(eps, sens, kind):
    """Huge or tiny epsilon / sensitivity: either a mechanism whose noise scale is finite
    and > 0, or a ValueError naming a parameter; never an inf scale or an OverflowError."""
    if kind == "Gaussian":
        eps = min(eps, 0.99)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            mech = CONSTRUCTORS[kind](eps, sens)
        except ValueError as exc:
            assert "epsilon" in str(exc) or "sensitivity" in str(exc) or "delta" in str(exc)
            return
    assert math.isfinite(mech.scale) and mech.scale > 0


@pytest.mark.parametrize(
    "make",
    [
        lambda: Laplace(epsilon=1e-300, sensitivity=1e300),
        lambda: Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1e308),
        lambda: Laplace(epsilon=1e300, sensitivity=5e-324),
    ],
)
def test_regression_infinite_or_zero_scale_is_refused(make):
    with raises_clear("epsilon", "sensitivity", "scale"):
        make()


@pytest.mark.parametrize("eps, delta", [(1e300, 0.5), (1.0, 5e-324)])
def test_regression_analytic_gaussian_extreme_parameters(eps, delta):
    """Either a finite, positive sigma or a ValueError naming the parameters."""
    try:
        mech = AnalyticGaussian(epsilon=eps, delta=delta, sensitivity=1.0)
    except ValueError as exc:
        assert "epsilon" in str(exc) or "delta" in str(exc)
    else:
        assert math.isfinite(mech.scale) and mech.scale > 0


# ---------------------------------------------------------------- data arrays
def _bad_data_for(mech):
    if isinstance(mech, (RandomizedResponse, OptimalUnaryEncoding)):
        top = 1 if isinstance(mech, RandomizedResponse) else mech.d - 1
        return st.one_of(
            bad_float_arrays(),
            wrong_dtype_arrays(),
            st.sampled_from([[0, top + 1], [-1, 0], [0.5, 1], [SENTINEL], [1e308], [2**63]]),
        )
    return st.one_of(bad_float_arrays(), wrong_dtype_arrays(), st.sampled_from([[True, False], np.array([1j])]))


@SETTINGS
@given(data=st.data(), index=st.integers(0, len(MECHANISMS) - 1))
def test_bad_data_is_refused_before_any_charge(data, index):
    mech = MECHANISMS[index]
    bad = data.draw(_bad_data_for(mech))
    acc = PrivacyAccountant(10.0, 0.5)
    with raises_clear("value", accountant=acc):
        mech.release(bad, accountant=acc)
    with raises_clear("value"):
        mech.randomise(bad)
    with raises_clear("input", "value"):
        mech.log_prob(np.zeros(4) if not isinstance(mech, OptimalUnaryEncoding) else np.zeros((2, 4), int), bad)


@SETTINGS
@given(
    index=st.integers(0, len(MECHANISMS) - 1),
    kw=st.sampled_from(
        [
            {"n": 0},
            {"n": -1},
            {"n": 1.5},
            {"n": "3"},
            {"bounds": (1.0, 0.0)},
            {"bounds": (0.0, math.inf)},
            {"bounds": "01"},
            {"bounds": (0, 1, 2)},
            {"neighbouring": "nope"},
            {"neighbouring": None},
            {"label": 3},
            {"accountant": "acc"},
            {"accountant": 1.0},
        ]
    ),
)
def test_bad_release_arguments_do_not_charge(index, kw):
    mech = MECHANISMS[index]
    acc = PrivacyAccountant(10.0, 0.5)
    good = [0, 1] if isinstance(mech, (RandomizedResponse, OptimalUnaryEncoding)) else [0.5, 1.5]
    name = next(iter(kw))
    call_kw = {"accountant": acc, **kw}
    with raises_clear(name, "bounds", accountant=acc):
        mech.release(good, **call_kw)


@SETTINGS
@given(
    x=st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=20),
    kind=st.sampled_from(["Laplace", "Gaussian", "AnalyticGaussian"]),
    sens=MODERATE,
)
def test_release_of_finite_data_is_finite(x, kind, sens):
    """Finite data (up to 1e300 in magnitude) and a moderate scale: the release is finite
    and charges exactly its (epsilon, delta). Issue 17: values beyond 2^52 steps of the
    noise grid are clamped to the recorded range, no longer refused (a data-dependent
    refusal distinguishes neighbours)."""
    mech = CONSTRUCTORS[kind](0.5, sens)
    acc = PrivacyAccountant(1.0, 0.5)
    rel = mech.release(np.asarray(x), accountant=acc)
    assert_finite_release(rel)
    assert acc.spent == (0.5, mech.delta) and rel.values.shape == (len(x),)


def test_regression_release_never_overflows():
    acc = PrivacyAccountant(10.0)
    try:
        mech = Laplace(epsilon=1.0, sensitivity=1e307, seed=0)
        rel = mech.release(np.full(64, 1.79e308), accountant=acc)
    except ValueError as exc:
        assert ("value" in str(exc) or "sensitivity" in str(exc)) and acc.spent == (0.0, 0.0)
    else:
        assert_finite_release(rel)


def test_messages_about_data_never_quote_it():
    mech = Laplace(epsilon=1.0, sensitivity=1.0, seed=0)
    rr = RandomizedResponse(epsilon=1.0, seed=0)
    for call in (
        lambda: mech.release([SENTINEL, math.nan]),
        lambda: rr.release([SENTINEL]),
        lambda: rr.release([0, 1, SENTINEL]),
        lambda: Clip(0, 1)(np.array([SENTINEL, math.inf])),
        lambda: mech.randomise(np.array([SENTINEL, "x"], dtype=object)),
    ):
        with pytest.raises((TypeError, ValueError)) as info:
            call()
        assert_no_sentinel(str(info.value))
        assert (
            info.value.__cause__ is None
            and info.value.__context__ is None
            or "12345" not in repr(info.value.__context__)
        )


# ---------------------------------------------------------------- local estimators
@pytest.mark.parametrize("eps", [1e-300, 5e-324, 1e-17])
def test_regression_estimators_never_return_nan(eps):
    """A tiny epsilon gives either a finite (huge) estimate or a ValueError naming epsilon;
    never NaN, inf or a numpy warning."""
    for estimate in (
        lambda: RandomizedResponse(epsilon=eps, seed=0).estimate_mean([0, 1, 1]),
        lambda: OptimalUnaryEncoding(epsilon=eps, d=3, seed=0).estimate_counts([[0, 1, 0]]),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                out = estimate()
            except ValueError as exc:
                assert "epsilon" in str(exc)
            else:
                assert np.all(np.isfinite(out))


@SETTINGS
@given(eps=st.floats(1e-6, 700), reports=st.lists(st.integers(0, 1), min_size=1, max_size=30))
def test_randomized_response_estimate_is_finite(eps, reports):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isfinite(RandomizedResponse(epsilon=eps).estimate_mean(reports))


@SETTINGS
@given(
    bad=st.one_of(
        bad_float_arrays((2, 3)),
        wrong_dtype_arrays(),
        st.sampled_from([np.zeros((2, 4)), np.zeros(3), np.full((1, 3), 2), np.full((2, 3), 0.5)]),
    )
)
def test_bad_report_matrices(bad):
    with raises_clear("reports"):
        OptimalUnaryEncoding(epsilon=1.0, d=3).estimate_counts(bad)


@SETTINGS
@given(bad=st.one_of(bad_float_arrays(), wrong_dtype_arrays(), st.sampled_from([[], [2, 0], [0.5], [-1]])))
def test_bad_randomized_response_reports(bad):
    with raises_clear("reports"):
        RandomizedResponse(epsilon=1.0).estimate_mean(bad)


# ---------------------------------------------------------------- clipping, projections
@SETTINGS
@given(
    lower=st.one_of(NOT_A_NUMBER, st.sampled_from([math.nan, math.inf, 2.0])), upper=st.sampled_from([1.0, -math.inf])
)
def test_bad_clip_bounds(lower, upper):
    with raises_clear("lower", "upper"):
        Clip(lower, upper)


@SETTINGS
@given(radius=BAD_SCALAR)
def test_bad_clip_radius_and_simplex_total(radius):
    with raises_clear("radius"):
        ClipL2(radius)
    with raises_clear("total"):
        project_simplex([0.2, 0.8], total=radius)


@SETTINGS
@given(
    bad=st.one_of(bad_float_arrays(), bad_float_arrays((2, 3)), wrong_dtype_arrays()),
    which=st.sampled_from(["clip", "clipl2", "nonneg", "simplex"]),
)
def test_bad_arrays_to_clipping_and_projections(bad, which):
    f = {"clip": Clip(0.0, 1.0), "clipl2": ClipL2(1.0), "nonneg": project_nonnegative, "simplex": project_simplex}[
        which
    ]
    with raises_clear("x"):
        f(bad)


@SETTINGS
@given(
    rows=st.lists(st.lists(st.floats(-1e300, 1e300), min_size=3, max_size=3), min_size=1, max_size=5),
    radius=st.floats(1e-100, 1e100),
)
def test_clip_l2_output_is_finite_and_within_radius(rows, radius):
    out = ClipL2(radius)(np.asarray(rows))
    assert np.all(np.isfinite(out))
    assert np.all(np.linalg.norm(out, axis=1) <= radius * (1 + 1e-12))


@SETTINGS
@given(
    rows=st.lists(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3), min_size=1, max_size=5),
    total=st.floats(1e-3, 1e3),
)
def test_project_simplex_output_is_on_the_simplex(rows, total):
    out = project_simplex(np.asarray(rows), total=total)
    assert np.all(out >= 0) and np.allclose(out.sum(axis=1), total, rtol=1e-9)


def test_regression_clip_l2_far_above_a_tiny_radius():
    out = ClipL2(1e-100)(np.array([[0.0, 0.0, 6.093700235059873e218]]))
    assert np.linalg.norm(out, axis=1)[0] <= 1e-100


def test_regression_projections_of_huge_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(project_simplex(np.array([1.7e308, 1.7e308])), [0.5, 0.5])
        np.testing.assert_allclose(ClipL2(1.0)(np.array([1.7e308, 1.7e308, 0.0])), [2**-0.5, 2**-0.5, 0.0])


# ---------------------------------------------------------------- records and releases
@SETTINGS
@given(
    field=st.sampled_from(
        [
            "epsilon",
            "delta",
            "sensitivity",
            "scale",
            "n",
            "bounds",
            "neighbouring",
            "sensitivity_norm",
            "details",
            "mechanism",
        ]
    ),
    bad=st.one_of(
        NOT_A_NUMBER,
        NON_POSITIVE_OR_NON_FINITE,
        st.sampled_from([{"a": math.nan}, {"a": np.array([1.0])}, {1: 2}, "", (1.0, 0.0)]),
    ),
)
def test_privacy_record_rejects_bad_fields(field, bad):
    kw = {"mechanism": "laplace", "epsilon": 1.0, field: bad}
    try:
        with raises_clear(field, "details"):
            PrivacyRecord(**kw)
    except AssertionError:
        # a few values are valid for some fields (a mapping of details, 0 for delta,
        # a string mechanism); anything accepted must round-trip through JSON.
        rec = PrivacyRecord(**kw)
        assert PrivacyRecord.from_dict(rec.to_dict()) == rec


@SETTINGS
@given(values=wrong_dtype_arrays())
def test_release_values_must_be_numeric(values):
    rec = PrivacyRecord(mechanism="laplace", epsilon=1.0)
    try:
        with raises_clear("values"):
            Release(values=values, record=rec)
    except AssertionError:
        pytest.fail(f"Release accepted {values!r}")


@SETTINGS
@given(index=st.integers(0, len(MECHANISMS) - 1), data=st.data())
def test_private_values_never_reach_messages_logs_or_warnings(index, data, caplog):
    from _hostile import check_call_quotes_no_sentinel, with_sentinel

    x = data.draw(with_sentinel([0.0, 1.0, 1.0]))
    check_call_quotes_no_sentinel(lambda: MECHANISMS[index].release(x, accountant=PrivacyAccountant(10.0, 0.5)), caplog)
