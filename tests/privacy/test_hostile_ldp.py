"""Hostile input to the local-DP release functions (pystanprivacy.privacy.ldp), issue 8: bad data
or parameters give a TypeError/ValueError naming the argument, no private value in the
message and no charge to the accountant; a returned release is finite.

The ``test_regression_*`` cases are bugs found this way, kept as regression tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _hostile import (
    NON_POSITIVE_OR_NON_FINITE,
    NOT_A_NUMBER,
    SENTINEL,
    SETTINGS,
    assert_finite_release,
    bad_float_arrays,
    raises_clear,
    wrong_dtype_arrays,
)
from hypothesis import given
from hypothesis import strategies as st

from pystanprivacy.privacy import ldp
from pystanprivacy.privacy.records import PrivacyAccountant

CALLS = {
    "clipped_laplace_reports": (ldp.clipped_laplace_reports, "x", dict(epsilon=1.0, bounds=(0.0, 1.0)), [0.2, 0.7]),
    "gaussian_reports": (
        ldp.gaussian_reports,
        "values",
        dict(epsilon=1.0, delta=1e-5, sensitivity=2.0),
        [[0.2, 0.1], [0.3, 0.4]],
    ),
    "randomized_response_reports": (ldp.randomized_response_reports, "bits", dict(epsilon=1.0), [0, 1, 1]),
    "oue_reports": (ldp.oue_reports, "x", dict(epsilon=1.0, d=3), [0, 2, 1]),
}
NAMES = sorted(CALLS)
BAD_SCALAR = st.one_of(NOT_A_NUMBER, NON_POSITIVE_OR_NON_FINITE)


def _call(name, data, acc, **kw):
    fn, arg, base, _ = CALLS[name]
    return fn(**{arg: data}, **{**base, **kw}, accountant=acc)


@SETTINGS
@given(name=st.sampled_from(NAMES), data=st.data())
def test_bad_data_is_refused_before_any_charge(name, data):
    _, arg, _, good = CALLS[name]
    shape = np.shape(good)
    extra = {
        "randomized_response_reports": [[0, 2], [0.5, 1], [SENTINEL], [], [[0, 1]]],
        "oue_reports": [[0, 3], [-1], [1.5], [SENTINEL], [], np.zeros((2, 2, 2), int)],
        "clipped_laplace_reports": [[], np.zeros((2, 2, 2)), np.zeros((2, 0))],
        "gaussian_reports": [np.zeros((0, 2)), np.zeros((2, 2, 2))],
    }[name]
    bad = data.draw(st.one_of(bad_float_arrays(shape), wrong_dtype_arrays(), st.sampled_from(extra)))
    acc = PrivacyAccountant(10.0, 0.5)
    with raises_clear(arg, accountant=acc):
        _call(name, bad, acc)


@SETTINGS
@given(
    name=st.sampled_from(NAMES),
    bad=BAD_SCALAR,
    which=st.sampled_from(["epsilon", "delta", "sensitivity", "d", "bounds"]),
)
def test_bad_parameters_are_refused_before_any_charge(name, bad, which):
    _, _, base, good = CALLS[name]
    if which not in base:
        which = "epsilon"
    acc = PrivacyAccountant(10.0, 0.5)
    with raises_clear(which, accountant=acc):
        _call(name, good, acc, **{which: bad})


@SETTINGS
@given(
    name=st.sampled_from(NAMES),
    kw=st.sampled_from([{"label": 3}, {"seed": -1}, {"seed": "1"}, {"details": "x"}, {"details": [1]}]),
)
def test_bad_options_are_refused_before_any_charge(name, kw):
    acc = PrivacyAccountant(10.0, 0.5)
    with raises_clear(next(iter(kw)), accountant=acc):
        _call(name, CALLS[name][3], acc, **kw)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kw", [{"details": {"a": np.array([1.0])}}, {"details": {"a": math.nan}}, {"details": {1: 2}}])
def test_regression_unserialisable_details_charge_nothing(name, kw):
    acc = PrivacyAccountant(10.0, 0.5)
    with raises_clear("details", accountant=acc):
        _call(name, CALLS[name][3], acc, **kw)


@pytest.mark.parametrize("kw", [dict(epsilon=0.01, sensitivity=1e306), dict(scale_ratios=[1.0, 1e308])])
def test_regression_gaussian_reports_infinite_noise_charges_nothing(kw):
    acc = PrivacyAccountant(10.0, 0.5)
    with raises_clear("scale", "sensitivity", "noise", "scale_ratios", accountant=acc):
        _call("gaussian_reports", [[0.2, 0.1], [0.3, 0.4]], acc, **kw)


@SETTINGS
@given(
    ratios=st.one_of(
        bad_float_arrays((2,)), wrong_dtype_arrays(2), st.sampled_from([[1.0], [1.0, 0.0], [1.0, -1.0], [[1.0, 1.0]]])
    ),
    max_norm=st.one_of(st.none(), BAD_SCALAR),
)
def test_bad_gaussian_ratios_and_norms(ratios, max_norm):
    if ratios is None and max_norm is None:
        return  # both defaults: a valid call
    acc = PrivacyAccountant(10.0, 0.5)
    with raises_clear("scale_ratios", "max_norm", accountant=acc):
        _call("gaussian_reports", [[0.2, 0.1], [0.3, 0.4]], acc, scale_ratios=ratios, max_norm=max_norm)


def test_rows_over_max_norm_are_clipped_not_refused():
    # issue 17: refusing the row (the old behaviour) revealed it was out of bounds, for free
    acc = PrivacyAccountant(10.0, 0.5)
    rel = _call("gaussian_reports", [[SENTINEL, 0.0], [0.3, 0.4]], acc, max_norm=1.0, seed=0)
    assert_finite_release(rel)
    assert acc.spent == (1.0, 1e-5) and len(acc.ledger) == 1
    assert rel.record.details["clipping"]["radius"] == 1.0


@SETTINGS
@given(name=st.sampled_from(NAMES), eps=st.floats(1e-3, 50), seed=st.integers(0, 2**32))
def test_valid_releases_are_finite_and_charge_exactly_once(name, eps, seed):
    acc = PrivacyAccountant(100.0, 0.5)
    rel = _call(name, CALLS[name][3], acc, epsilon=eps, seed=seed)
    assert_finite_release(rel)
    assert acc.spent[0] == pytest.approx(eps, rel=1e-15) and len(acc.ledger) == 1


@SETTINGS
@given(c=st.one_of(NOT_A_NUMBER, st.sampled_from([0.0, 1.0, -0.5, 1.5, math.nan, math.inf])))
def test_bad_budget_split(c):
    with raises_clear("c"):
        ldp.split_budget(1.0, c)
    with raises_clear("c"):
        ldp.budget_split_details(1.0, c)


@SETTINGS
@given(
    bad=st.one_of(
        bad_float_arrays((2, 3)),
        wrong_dtype_arrays(),
        st.sampled_from([np.zeros(3), np.full((2, 2), 2), np.zeros((0, 3)), [[0.5, 1.0]]]),
    )
)
def test_bad_report_matrices_to_aggregate(bad):
    with raises_clear("reports"):
        ldp.aggregate_reports(bad)


def test_check_ldp_release_rejects_non_releases():
    with raises_clear("release"):
        ldp.check_ldp_release([0, 1], mechanism="oue", what="oue_reports")
    rel = ldp.randomized_response_reports([0, 1], epsilon=1.0)
    with raises_clear("release"):
        ldp.check_ldp_release(rel, mechanism="oue", what="oue_reports")


@SETTINGS
@given(name=st.sampled_from(NAMES), data=st.data())
def test_private_values_never_reach_messages_logs_or_warnings(name, data, caplog):
    from _hostile import check_call_quotes_no_sentinel, with_sentinel

    x = data.draw(with_sentinel(CALLS[name][3]))
    check_call_quotes_no_sentinel(lambda: _call(name, x, PrivacyAccountant(10.0, 0.5)), caplog)


@pytest.mark.parametrize("shape", [(3, 0), (3, 1)])
def test_regression_aggregate_reports_needs_two_columns(shape):
    # hostile census: (N, 0) reports were aggregated into N empty patterns; an OUE report has
    # one bit per category and oue_reports needs d >= 2
    with pytest.raises(ValueError, match=r"^reports must have d >= 2 columns .*got shape"):
        ldp.aggregate_reports(np.zeros(shape, dtype=int))
    patterns, counts = ldp.aggregate_reports(np.array([[0, 1], [0, 1], [1, 0]]))
    assert patterns.tolist() == [[0, 1], [1, 0]] and counts.tolist() == [2, 1]
