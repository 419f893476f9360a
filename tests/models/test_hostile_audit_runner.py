"""Hostile input to the audit helper (pystanprivacy.privacy.audit.epsilon_lower_bound and the
Clopper-Pearson bounds) and to the task runner (runner.Task, runner.run_tasks), issue 8:
clear TypeError/ValueError naming the argument, never a silent NaN bound, and no private
value (here: a task argument) in an error message.

The ``test_regression_*`` cases are bugs found this way, kept as regression tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _hostile import (
    NON_POSITIVE_OR_NON_FINITE,
    NOT_A_NUMBER,
    SENTINEL,
    SETTINGS,
    assert_no_sentinel,
    bad_float_arrays,
    raises_clear,
    wrong_dtype_arrays,
)
from hypothesis import given
from hypothesis import strategies as st

from pystanprivacy.privacy import audit
from pystanprivacy.run import runner
from pystanprivacy.run.study import Study

#: the study of this file's task functions (every task function declares one: pystanprivacy.run.study)
STUDY = Study(name="tests/models/hostile_audit_runner", version=1)


def _normal(n):
    return np.random.default_rng(n).normal(size=n)


@STUDY.task()
def _ok_task(seed, x=1.0):
    return pd.DataFrame({"x": [float(np.sum(x))]})


@STUDY.task()
def _failing_task(seed, x):
    raise ValueError("the fit failed")


# ---------------------------------------------------------------- audit
@SETTINGS
@given(
    which=st.sampled_from(["n_draws", "n_thresholds", "pilot_draws"]),
    bad=st.one_of(NOT_A_NUMBER, st.sampled_from([0, -1, 2.5, math.nan])),
)
def test_bad_audit_counts(which, bad):
    with raises_clear(which):
        audit.epsilon_lower_bound(_normal, _normal, **{"n_draws": 50, "pilot_draws": 50, which: bad})


@SETTINGS
@given(
    which=st.sampled_from(["alpha", "delta"]),
    bad=st.one_of(NOT_A_NUMBER, NON_POSITIVE_OR_NON_FINITE, st.sampled_from([1.0, 1.5])),
)
def test_bad_audit_levels(which, bad):
    if which == "delta" and bad in (0, 0.0, -0.0):
        return  # delta = 0 is valid
    with raises_clear(which):
        audit.epsilon_lower_bound(_normal, _normal, n_draws=50, pilot_draws=50, **{which: bad})


@SETTINGS
@given(
    out=st.one_of(bad_float_arrays((50,)), wrong_dtype_arrays(50), st.sampled_from([np.zeros(49), np.zeros(51)])),
    first=st.booleans(),
)
def test_bad_sampler_outputs(out, first):
    bad = lambda n: out
    a, b = (bad, _normal) if first else (_normal, bad)
    with raises_clear("sample_d"):
        audit.epsilon_lower_bound(a, b, n_draws=50, thresholds=[0.0])


@SETTINGS
@given(thresholds=st.one_of(bad_float_arrays((3,)), wrong_dtype_arrays(3), st.sampled_from([np.zeros((2, 2)), 0.5])))
def test_bad_thresholds(thresholds):
    if thresholds is None:
        return  # None: thresholds from a pilot sample
    with raises_clear("thresholds"):
        audit.epsilon_lower_bound(_normal, _normal, n_draws=50, thresholds=thresholds)


@SETTINGS
@given(
    out=st.sampled_from(
        [np.full((50, 2), 2), np.full((50, 2), np.nan), np.ones(50), np.full((50, 2), -1), np.array([["1", "0"]] * 50)]
    )
)
def test_bad_event_outputs(out):
    with raises_clear("events"):
        audit.epsilon_lower_bound(_normal, _normal, n_draws=50, events=lambda x: out)


@pytest.mark.parametrize("kw", [{"thresholds": []}, {"events": lambda x: np.ones((len(x), 0))}])
def test_regression_no_events(kw):
    with raises_clear("thresholds", "events"):
        audit.epsilon_lower_bound(_normal, _normal, n_draws=50, **kw)


@pytest.mark.parametrize("args", [(5, 10, 2.0), (15, 10, 0.05), (math.nan, 10, 0.05), (5, 0, 0.05), (-1, 10, 0.05)])
def test_regression_clopper_pearson_validates(args):
    for f in (audit.clopper_pearson_lower, audit.clopper_pearson_upper):
        with raises_clear("alpha", "k", "n"):
            f(*args)


@SETTINGS
@given(k=st.integers(0, 100), n=st.integers(1, 100), alpha=st.floats(1e-9, 0.5))
def test_clopper_pearson_bounds_are_probabilities(k, n, alpha):
    k = min(k, n)
    lo, up = audit.clopper_pearson_lower(k, n, alpha), audit.clopper_pearson_upper(k, n, alpha)
    assert 0.0 <= lo <= k / n <= up <= 1.0


# ---------------------------------------------------------------- runner
@SETTINGS
@given(fn=st.sampled_from([None, 1, "f", lambda seed: None]), kwargs=st.sampled_from([[1], "x", {"seed": 1}, None]))
def test_bad_tasks(fn, kwargs):
    with raises_clear("Task.fn"):
        runner.Task(fn=fn)
    with raises_clear("Task.kwargs"):
        runner.Task(fn=_ok_task, kwargs=kwargs)


@SETTINGS
@given(
    kw=st.sampled_from(
        [
            {"seed": -1},
            {"seed": 1.5},
            {"seed": "0"},
            {"seed": True},
            {"seed": None},
            {"workers": 0},
            {"workers": 1.5},
            {"workers": "2"},
            {"tasks": [_ok_task]},
            {"tasks": [1]},
        ]
    )
)
def test_bad_run_tasks_arguments(kw):
    args = {"tasks": [runner.Task(fn=_ok_task)], "seed": 0, **kw}
    with raises_clear(next(iter(kw))):
        runner.run_tasks(args.pop("tasks"), **args, progress=False)


def test_regression_run_tasks_stream_and_label():
    with raises_clear("stream"):
        runner.run_tasks([runner.Task(fn=_ok_task)], seed=0, stream=3, progress=False)
    with raises_clear("label"):
        runner.Task(fn=_ok_task, label=3)


def test_regression_failed_task_message_holds_no_argument_values():
    with pytest.raises(RuntimeError, match="task 0 .* failed: ValueError: the fit failed") as info:
        runner.run_tasks([runner.Task(fn=_failing_task, kwargs={"x": np.array([SENTINEL])})], seed=0, progress=False)
    assert_no_sentinel(str(info.value))
