"""Hypothesis strategies of hostile inputs shared by the tests/test_hostile_*.py files
(issue 8: every public entry point, given NaN, ±inf, huge, negative, zero, empty,
wrong-dtype or wrong-shape arguments, raises a clear TypeError/ValueError naming the
argument, never returns a non-finite release and never charges an accountant)."""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from pystanprivacy.privacy.records import PrivacyAccountant

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

#: a distinctive "private" value: no message, log line or warning may contain it
SENTINEL = 12345.678901
SENTINEL_TEXTS = ("12345.6", "12345.7", "1.23457e+04", "1.234568e+04")

#: not a real number of any kind
NOT_A_NUMBER = st.sampled_from(
    [
        "1",
        b"1",
        None,
        True,
        False,
        np.bool_(True),
        1j,
        complex(1, 0),
        [1.0],
        (1.0,),
        {"x": 1.0},
        object(),
        np.array(1.0),
        np.array([1.0]),
    ]
)
#: real numbers that are never a valid epsilon, sensitivity, scale or radius
NON_POSITIVE_OR_NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, -1.0, -1e308, -5e-324, 0, -3])
#: positive numbers of every magnitude (valid for epsilon / sensitivity in principle)
POSITIVE = st.floats(min_value=5e-324, max_value=1.7e308, allow_nan=False, allow_infinity=False)
#: ordinary positive numbers
MODERATE = st.floats(min_value=1e-3, max_value=1e3)


def _with_bad(values: np.ndarray, bad: float, index: int) -> np.ndarray:
    out = np.array(values, dtype=float, copy=True)
    out.flat[index % out.size] = bad
    return out


@st.composite
def bad_float_arrays(draw, shape=(5,), bad_values=(math.nan, math.inf, -math.inf)):
    """A float array of ``shape`` with one NaN/±inf at a random position."""
    size = int(np.prod(shape))
    base = np.asarray(draw(st.lists(st.floats(-10, 10), min_size=size, max_size=size)), dtype=float).reshape(shape)
    return _with_bad(base, draw(st.sampled_from(bad_values)), draw(st.integers(0, size - 1)))


def wrong_dtype_arrays(n: int = 4):
    """Arrays (and containers) of a non-numeric dtype: strings, objects, complex, ragged."""
    return st.sampled_from(
        [
            np.array(["1"] * n),
            np.array([b"1"] * n),
            np.array([1.0] * n, dtype=object),
            np.array([1 + 0j] * n),
            [[1.0], [1.0, 2.0]],
            "1.0",
            None,
            {"a": 1.0},
            np.array([None] * n),
            [object()] * n,
        ]
    )


def assert_clear(exc: BaseException, *names: str) -> None:
    """The exception is a TypeError/ValueError whose message names one of ``names`` and
    holds no private sentinel."""
    assert isinstance(exc, (TypeError, ValueError)), f"{type(exc).__name__}: {exc}"
    text = str(exc)
    assert any(name in text for name in names), f"message does not name {names}: {text}"
    assert_no_sentinel(text)


def assert_no_sentinel(text: str) -> None:
    for s in SENTINEL_TEXTS:
        assert s not in text, f"private value in {text!r}"


@contextlib.contextmanager
def raises_clear(*names: str, accountant: PrivacyAccountant | None = None):
    """Expect a clear TypeError/ValueError naming one of ``names``; the accountant (if any)
    is not charged and no warning (e.g. a numpy RuntimeWarning from a silent NaN) is raised."""
    before = None if accountant is None else (accountant.spent, accountant.ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            yield
        except (TypeError, ValueError) as exc:
            assert_clear(exc, *names)
        else:
            raise AssertionError(f"no exception naming {names}")
    if accountant is not None:
        assert (accountant.spent, accountant.ledger) == before, "a failed call charged the accountant"


def assert_finite_release(release) -> None:
    values = np.asarray(release.values, dtype=float)
    assert np.all(np.isfinite(values)), "a release with non-finite values"


@st.composite
def with_sentinel(draw, good):
    """``good`` (as floats) with the private sentinel at a random position and, at random,
    a second defect elsewhere (NaN, inf, a wrong dtype, an extra axis) or none."""
    g = np.array(good, dtype=float)
    i = draw(st.integers(0, g.size - 1))
    g.flat[i] = SENTINEL
    defect = draw(st.sampled_from(["none", "nan", "inf", "object", "axis", "string"]))
    if defect in ("nan", "inf") and g.size > 1:
        g.flat[(i + 1) % g.size] = math.nan if defect == "nan" else math.inf
    elif defect == "object":
        return g.astype(object)
    elif defect == "axis":
        return g[None, None]
    elif defect == "string":
        return g.astype(str)
    return g


def assert_nothing_quotes_the_sentinel(exc: BaseException | None, caplog, caught_warnings) -> None:
    """No exception text (with its chain, as a traceback prints it), log record or warning
    holds the private sentinel."""
    import traceback

    if exc is not None:
        assert_no_sentinel(str(exc))
        assert_no_sentinel("".join(traceback.format_exception(exc)))
    assert_no_sentinel(caplog.text)
    for w in caught_warnings:
        assert_no_sentinel(str(w.message))


def check_call_quotes_no_sentinel(call, caplog, *, ignore: tuple[type[BaseException], ...] = ()) -> None:
    """Run ``call()`` capturing every log record (DEBUG and up) and warning, then check that
    neither they nor the exception it raised (if any; ``ignore`` lists exceptions that are
    not failures, e.g. a trapped sampler) quote the private sentinel."""
    import logging
    import warnings

    caplog.clear()
    caplog.set_level(logging.DEBUG)
    exc = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except ignore:
            pass
        except Exception as e:  # noqa: BLE001 - every failure is checked
            exc = e
    assert_nothing_quotes_the_sentinel(exc, caplog, caught)
