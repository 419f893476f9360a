"""Tests for pystanprivacy._validation and parameter validation of mechanisms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pystanprivacy import _validation as v
from pystanprivacy.privacy.mechanisms import (
    AnalyticGaussian,
    Gaussian,
    Laplace,
    OptimalUnaryEncoding,
    RandomizedResponse,
)

# (value, expected exception) for epsilon
BAD_EPSILON = [
    (0, ValueError),
    (-1, ValueError),
    (-1.0, ValueError),
    (float("nan"), ValueError),
    (float("inf"), ValueError),
    (-float("inf"), ValueError),
    (True, TypeError),
    (np.bool_(True), TypeError),
    ("1", TypeError),
    (None, TypeError),
    (complex(1, 0), TypeError),
    (np.complex128(1.0), TypeError),
    ([1.0], TypeError),
    (np.array(1.0), TypeError),
    (np.array([1.0]), TypeError),
]
BAD_DELTA = [
    (-0.1, ValueError),
    (1, ValueError),
    (1.0, ValueError),
    (1.5, ValueError),
    (float("nan"), ValueError),
    (float("inf"), ValueError),
    (False, TypeError),
    ("0.1", TypeError),
    (None, TypeError),
    (complex(0.1, 0), TypeError),
    ([0.1], TypeError),
]
BAD_SENSITIVITY = [
    (0, ValueError),
    (-2.0, ValueError),
    (float("nan"), ValueError),
    (float("inf"), ValueError),
    (True, TypeError),
    ("1", TypeError),
    (None, TypeError),
    (complex(1, 0), TypeError),
    ([1.0], TypeError),
]


# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize("value, exc", BAD_EPSILON)
def test_check_epsilon_rejects(value, exc):
    with pytest.raises(exc, match="epsilon") as info:
        v.check_epsilon(value)
    msg = str(info.value)
    if exc is ValueError:
        assert "finite number > 0" in msg
        assert repr(value) in msg  # public parameter: value is shown


@pytest.mark.parametrize("value", [1e-12, 0.5, 1, 7, np.float32(0.25), np.int64(3), 1e6])
def test_check_epsilon_accepts(value):
    out = v.check_epsilon(value)
    assert isinstance(out, float) and out == float(value)


def test_check_epsilon_message_format():
    with pytest.raises(ValueError) as info:
        v.check_epsilon(-1.0)
    assert str(info.value) == "epsilon must be a finite number > 0, got -1.0"


@pytest.mark.parametrize("value, exc", BAD_DELTA)
def test_check_delta_rejects(value, exc):
    with pytest.raises(exc, match="delta"):
        v.check_delta(value)


@pytest.mark.parametrize("value", [0, 0.0, 1e-300, 0.5, 0.999999])
def test_check_delta_accepts(value):
    assert v.check_delta(value) == float(value)


def test_check_delta_positive_excludes_zero():
    with pytest.raises(ValueError, match=r"delta must be a finite number in \(0, 1\), got 0"):
        v.check_delta(0.0, positive=True)
    assert v.check_delta(1e-9, positive=True) == 1e-9


@pytest.mark.parametrize("value, exc", BAD_SENSITIVITY)
def test_check_positive_rejects(value, exc):
    with pytest.raises(exc, match="sensitivity"):
        v.check_positive(value, "sensitivity")


def test_check_int():
    assert v.check_int(np.int32(4), "d", minimum=2) == 4
    with pytest.raises(TypeError, match="d must be an int"):
        v.check_int(True, "d")
    with pytest.raises(TypeError, match="d must be an int"):
        v.check_int(4.0, "d")
    with pytest.raises(ValueError, match="d must be an int >= 2, got 1"):
        v.check_int(1, "d", minimum=2)


def test_check_bounds():
    assert v.check_bounds((0, 1)) == (0.0, 1.0)
    assert v.check_bounds(np.array([-1.0, 2.0])) == (-1.0, 2.0)
    with pytest.raises(ValueError, match="bounds"):
        v.check_bounds((1, 1))
    with pytest.raises(ValueError, match="bounds"):
        v.check_bounds((0, float("inf")))
    with pytest.raises(ValueError, match="bounds"):
        v.check_bounds((0, 1, 2))
    with pytest.raises(TypeError, match="bounds"):
        v.check_bounds("01")
    with pytest.raises(TypeError, match="bounds"):
        v.check_bounds(1.0)
    with pytest.raises(TypeError, match=r"bounds\[1\]"):
        v.check_bounds((0, "1"))


def test_check_choice_and_label():
    assert v.check_choice("a", "kind", ["a", "b"]) == "a"
    with pytest.raises(ValueError, match="kind must be one of"):
        v.check_choice("c", "kind", ["a", "b"])
    with pytest.raises(TypeError, match="kind"):
        v.check_choice(1, "kind", ["a", "b"])
    assert v.check_label(None) is None
    with pytest.raises(TypeError, match="label"):
        v.check_label(3)


# ---------------------------------------------------------- random state


def test_check_random_state_int_reproducible():
    a = v.check_random_state(42).random(5)
    b = v.check_random_state(np.int64(42)).random(5)
    np.testing.assert_array_equal(a, b)


def test_check_random_state_generator_passthrough():
    g = np.random.default_rng(0)
    assert v.check_random_state(g) is g


def test_check_random_state_seedsequence_and_none():
    ss = np.random.SeedSequence(7)
    np.testing.assert_array_equal(
        v.check_random_state(ss).random(3), np.random.default_rng(np.random.SeedSequence(7)).random(3)
    )
    # None gives fresh OS entropy: two draws of 4 doubles coincide w.p. ~0.
    assert not np.array_equal(v.check_random_state(None).random(4), v.check_random_state(None).random(4))


@pytest.mark.parametrize(
    "seed, exc",
    [
        (True, TypeError),
        (1.5, TypeError),
        ("1", TypeError),
        (np.random.RandomState(0), TypeError),
        ([1], TypeError),
        (-1, ValueError),
    ],
)
def test_check_random_state_rejects(seed, exc):
    with pytest.raises(exc, match="seed"):
        v.check_random_state(seed)


# ------------------------------------------------------------ check_array

SECRET = 123456.789  # a "private" value that must never appear in a message


def _assert_no_secret(excinfo):
    assert "123456" not in str(excinfo.value)
    assert excinfo.value.__cause__ is None


def test_check_array_returns_float_copy():
    x = np.array([1, 2, 3], dtype=np.int32)
    out = v.check_array(x, "x")
    assert out.dtype == np.float64
    out[0] = 99
    assert x[0] == 1


def test_check_array_nan_message_hides_values():
    with pytest.raises(ValueError, match=r"^x contains NaN \(1 value\(s\)\)") as info:
        v.check_array([SECRET, np.nan], "x")
    _assert_no_secret(info)
    out = v.check_array([SECRET, np.nan], "x", allow_nan=True)
    assert np.isnan(out[1])


def test_check_array_inf():
    with pytest.raises(ValueError, match="x contains 2 infinite value") as info:
        v.check_array([SECRET, np.inf, -np.inf], "x")
    _assert_no_secret(info)
    assert np.isinf(v.check_array([np.inf], "x", allow_inf=True)).all()


def test_check_array_bounds_counts_without_values():
    with pytest.raises(ValueError) as info:
        v.check_array([SECRET, -SECRET, 0.5, 2.0], "x", bounds=(0, 1))
    assert str(info.value) == "x contains 3 value(s) outside the declared bounds [0, 1]"


def test_check_array_integer():
    out = v.check_array([0.0, 1.0, 3.0], "x", integer=True)
    assert out.dtype == np.int64 and out.tolist() == [0, 1, 3]
    with pytest.raises(ValueError, match="x contains 1 non-integer value") as info:
        v.check_array([SECRET, 2.0], "x", integer=True)
    _assert_no_secret(info)
    with pytest.raises(ValueError, match="too large"):
        v.check_array([1e300], "x", integer=True)
    with pytest.raises(ValueError, match="too large"):
        v.check_array(np.array([2**63], dtype=np.uint64), "x", integer=True)


@pytest.mark.parametrize(
    "x",
    [
        np.array([1 + 2j]),
        np.array(["a"]),
        np.array([object()], dtype=object),
        "abc",
        None,
    ],
)
def test_check_array_rejects_types(x):
    with pytest.raises(TypeError, match="^x must"):
        v.check_array(x, "x")


def test_check_array_ragged_does_not_leak():
    with pytest.raises(TypeError, match="ragged") as info:
        v.check_array([[SECRET, 1.0], [2.0]], "x")
    _assert_no_secret(info)
    assert info.value.__suppress_context__


def test_check_array_bool_kind_control():
    assert v.check_array([True, False], "x").tolist() == [1.0, 0.0]
    with pytest.raises(TypeError, match="x must have a numeric dtype"):
        v.check_array([True, False], "x", kinds="iuf")


def test_check_array_shape_and_ndim():
    assert v.check_array(np.zeros((3, 2)), "x", shape=(None, 2)).shape == (3, 2)
    with pytest.raises(ValueError, match=r"x must have shape \(any, 2\), got shape \(3, 4\)"):
        v.check_array(np.zeros((3, 4)), "x", shape=(None, 2))
    with pytest.raises(ValueError, match="x must have 1 or 2 dimension"):
        v.check_array(np.zeros((1, 1, 1)), "x", ndim=(1, 2))
    with pytest.raises(ValueError, match="x must have 2 dimension"):
        v.check_array(np.zeros(3), "x", ndim=2)
    assert v.check_array(2.5, "x").shape == ()


# ------------------------------------------------- mechanism constructors


def _laplace(**kw):
    return Laplace(**{"epsilon": 1.0, "sensitivity": 1.0, **kw})


def _gauss(**kw):
    return Gaussian(**{"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0, **kw})


def _agauss(**kw):
    return AnalyticGaussian(**{"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0, **kw})


def _rr(**kw):
    return RandomizedResponse(**{"epsilon": 1.0, **kw})


def _oue(**kw):
    return OptimalUnaryEncoding(**{"epsilon": 1.0, "d": 4, **kw})


ALL = [_laplace, _gauss, _agauss, _rr, _oue]
WITH_SENSITIVITY = [_laplace, _gauss, _agauss]
WITH_DELTA = [_gauss, _agauss]


#: (maker, parameter, bad value, expected exception): every mechanism that takes a parameter
BAD_PARAMETERS = [
    pytest.param(make, name, value, exc, id=f"{make.__name__.lstrip('_')}-{name}={value!r}")
    for makers, name, bad in [
        (ALL, "epsilon", BAD_EPSILON),
        (WITH_DELTA, "delta", BAD_DELTA + [(0.0, ValueError)]),
        (WITH_SENSITIVITY, "sensitivity", BAD_SENSITIVITY),
    ]
    for make in makers
    for value, exc in bad
]


@pytest.mark.parametrize("make, name, value, exc", BAD_PARAMETERS)
def test_mechanisms_reject_bad_parameters(make, name, value, exc):
    with pytest.raises(exc, match=name):
        make(**{name: value})


@pytest.mark.parametrize("make", ALL)
def test_mechanisms_reject_bad_seed(make):
    with pytest.raises(TypeError, match="seed"):
        make(seed=1.5)


@pytest.mark.parametrize("make", ALL)
def test_mechanisms_are_keyword_only(make):
    cls = type(make())
    with pytest.raises(TypeError):
        cls(1.0)


@pytest.mark.parametrize(
    "d, exc", [(1, ValueError), (0, ValueError), (2.0, TypeError), (True, TypeError), ("3", TypeError)]
)
def test_oue_rejects_bad_d(d, exc):
    with pytest.raises(exc, match="d must be an int"):
        _oue(d=d)


def test_value_errors_never_print_data():
    mech = _laplace(seed=0)
    for bad in ([SECRET, np.nan], [[SECRET], [1.0, 2.0]], [SECRET, np.inf]):
        with pytest.raises((TypeError, ValueError), match="value") as info:
            mech.randomise(bad)
        _assert_no_secret(info)
    assert math.isfinite(mech.randomise(SECRET))


def test_check_sampler_merges_defaults_and_names_bad_keys():
    from pystanprivacy._validation import check_sampler

    default = {"chains": 4, "warmup": 100, "draws": 50}
    assert check_sampler(None, default) == default
    assert check_sampler({"draws": np.int64(7)}, default) == {"chains": 4, "warmup": 100, "draws": 7}
    with pytest.raises(ValueError, match=r"unknown keys \['thin'\]; allowed: \['chains', 'warmup', 'draws'\]"):
        check_sampler({"thin": 2}, default)
    with pytest.raises(ValueError, match=r"sampler\['chains'\] must be an int >= 2, got 1"):
        check_sampler({"chains": 1}, default)
    assert check_sampler({"chains": 1}, default, min_chains=1)["chains"] == 1
    with pytest.raises(TypeError, match=r"sampler\['draws'\] must be an int, got float"):
        check_sampler({"draws": 5.0}, default)
    with pytest.raises(TypeError, match="sampler must be a mapping"):
        check_sampler([("chains", 2)], default)


def test_check_bounds_refuses_arrays_that_are_not_one_pair():
    """A 0-d array has no len(): it must be refused naming the argument, not with numpy's
    'len() of unsized object'; a 2-d array is not a pair either."""
    import numpy as np

    from pystanprivacy._validation import check_bounds

    for bad in (np.array(1.0), np.array([[0.0, 1.0]])):
        with pytest.raises(TypeError, match="bounds must be a pair"):
            check_bounds(bad)
    assert check_bounds(np.array([0.0, 1.0])) == (0.0, 1.0)
