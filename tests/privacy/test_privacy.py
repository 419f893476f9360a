"""Tests for PrivacyRecord, Release, PrivacyAccountant and Mechanism.release."""

from __future__ import annotations

import dataclasses
import json
import re
import threading

import numpy as np
import pytest

from pystanprivacy.privacy.mechanisms import (
    AnalyticGaussian,
    Gaussian,
    Laplace,
    OptimalUnaryEncoding,
    RandomizedResponse,
)
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyAccountant, PrivacyRecord, Release


def _record(**kw):
    base = dict(
        mechanism="laplace",
        epsilon=1.0,
        sensitivity=2.0,
        sensitivity_norm="l1",
        scale=2.0,
        bounds=(0.0, 2.0),
        n=10,
        details={"seeded": True, "split": [0.5, 0.5]},
    )
    return PrivacyRecord(**{**base, **kw})


# ----------------------------------------------------------- PrivacyRecord


def test_record_json_round_trip():
    rec = _record(
        details={
            "seeded": False,
            "clip": {"lower": 0, "upper": 1.5},
            "weights": (np.float64(0.25), np.int64(3)),
            "note": None,
        }
    )
    text = json.dumps(rec.to_dict(), allow_nan=False)
    d = json.loads(text)
    assert d["bounds"] == [0.0, 2.0]
    assert d["details"]["weights"] == [0.25, 3]
    assert PrivacyRecord.from_dict(d) == rec


def test_record_defaults():
    rec = PrivacyRecord(mechanism="ops", epsilon=0.5)
    assert (rec.delta, rec.sensitivity, rec.bounds, rec.n) == (0.0, None, None, None)
    assert rec.neighbouring == "replace-one" and dict(rec.details) == {}


def test_record_is_immutable():
    rec = _record()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.epsilon = 2.0
    with pytest.raises(TypeError):
        rec.details["seeded"] = False
    with pytest.raises((TypeError, AttributeError)):
        rec.details["split"].append(1.0)


def test_record_details_copied_from_caller():
    details = {"a": [1, 2]}
    rec = PrivacyRecord(mechanism="ops", epsilon=1.0, details=details)
    details["a"].append(3)
    details["b"] = 1
    assert rec.to_dict()["details"] == {"a": [1, 2]}


@pytest.mark.parametrize(
    "kw, exc, name",
    [
        (dict(epsilon=0.0), ValueError, "epsilon"),
        (dict(epsilon="1"), TypeError, "epsilon"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(sensitivity=-1.0), ValueError, "sensitivity"),
        (dict(sensitivity_norm="l3"), ValueError, "sensitivity_norm"),
        (dict(scale=0.0), ValueError, "scale"),
        (dict(bounds=(1.0, 0.0)), ValueError, "bounds"),
        (dict(n=0), ValueError, "n must be"),
        (dict(n=2.5), TypeError, "n must be"),
        (dict(neighbouring="swap"), ValueError, "neighbouring"),
        (dict(mechanism=""), TypeError, "mechanism"),
        (dict(details={"x": object()}), TypeError, "details"),
        (dict(details={"x": float("nan")}), ValueError, "details"),
        (dict(details={1: 2}), TypeError, "details"),
        (dict(details=[1]), TypeError, "details"),
    ],
)
def test_record_validates(kw, exc, name):
    with pytest.raises(exc, match=name):
        _record(**kw)


def test_record_from_dict_rejects_unknown_keys():
    d = _record().to_dict()
    d["epsilon_total"] = 3
    with pytest.raises(ValueError, match="epsilon_total"):
        PrivacyRecord.from_dict(d)


# ----------------------------------------------------------------- Release


def test_release_values_read_only_copy():
    values = np.array([1.0, 2.0])
    rel = Release(values, _record())
    values[0] = 100.0
    assert rel.values[0] == 1.0
    with pytest.raises(ValueError):
        rel.values[0] = 5.0


def test_release_to_dict_json_and_back():
    rel = Release(np.arange(6.0).reshape(2, 3), _record())
    d = json.loads(json.dumps(rel.to_dict()))
    assert d["values"] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and d["shape"] == [2, 3]
    assert Release.from_dict(d) == rel
    scalar = Release(np.float64(2.5), _record())
    assert Release.from_dict(json.loads(json.dumps(scalar.to_dict()))) == scalar
    assert Release(np.array([1.0, 2.5]), _record()) != rel


def test_release_repr_shows_shape_and_record():
    text = repr(Release(np.zeros((2, 3)), _record()))
    assert "shape=(2, 3)" in text and "mechanism='laplace'" in text


def test_release_rejects_bad_inputs():
    with pytest.raises(TypeError, match="record"):
        Release(np.zeros(2), {"mechanism": "laplace"})
    with pytest.raises(TypeError, match="values"):
        Release(np.array(["a"]), _record())


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (0, 0, 2)])
def test_release_refuses_empty_values(shape):
    # no mechanism releases nothing: an empty release is forged or truncated
    with pytest.raises(ValueError, match=r"values must hold at least one value.*got shape " + re.escape(str(shape))):
        Release(np.zeros(shape), _record())
    d = Release(np.ones(3), _record()).to_dict()
    d.update(values=np.zeros(shape).tolist(), shape=list(shape))
    with pytest.raises(ValueError, match=r"values must hold at least one value"):
        Release.from_dict(d)
    # a 0-d value is one value, not an empty release
    assert Release(np.float64(1.5), _record()).values.shape == ()


# -------------------------------------------------------------- Accountant


def test_ten_spends_of_point_one_fit_exactly():
    acc = PrivacyAccountant(1.0)
    for i in range(10):
        acc.spend(0.1, label=f"q{i}")
    assert acc.spent == (1.0, 0.0) and acc.remaining == (0.0, 0.0)
    assert not acc.check(1e-12)
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-12)
    assert len(acc.ledger) == 10 and acc.ledger[3] == ("q3", 0.1, 0.0)


def test_exact_arithmetic_where_float_sum_overshoots():
    # In floats 0.1 + 0.2 == 0.30000000000000004 > 0.3, so a naive float
    # accountant would refuse the second spend; exact fractions accept it.
    assert 0.1 + 0.2 > 0.3
    acc = PrivacyAccountant(0.3)
    for eps in (0.1, 0.2):
        acc.spend(eps)
    assert acc.remaining == (0.0, 0.0)


def test_overspend_raises_and_leaves_state_unchanged():
    acc = PrivacyAccountant(1.0, 1e-5)
    acc.spend(0.7, 4e-6, label="a")
    before = (acc.spent, acc.remaining, acc.ledger)
    with pytest.raises(BudgetExceededError) as info:
        acc.spend(0.5, label="b")
    msg = str(info.value)
    assert "epsilon=0.5" in msg and "remaining" in msg and "0.3" in msg
    with pytest.raises(BudgetExceededError, match="delta"):
        acc.spend(0.1, 7e-6)
    assert (acc.spent, acc.remaining, acc.ledger) == before
    assert isinstance(info.value, ValueError)


def test_delta_composes_and_check_does_not_spend():
    acc = PrivacyAccountant(2.0, 1e-6)
    assert acc.check(1.0, 5e-7)
    assert acc.spent == (0.0, 0.0)
    acc.spend(1.0, 5e-7)
    acc.spend(1.0, 5e-7)
    assert acc.spent == (2.0, 1e-6)
    assert not acc.check(1e-9, 0.0) and acc.total == (2.0, 1e-6)


def test_pure_budget_refuses_any_delta():
    acc = PrivacyAccountant(1.0)
    assert not acc.check(0.1, 1e-9)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.1, 1e-9)


@pytest.mark.parametrize(
    "args, exc, name",
    [
        ((0.0,), ValueError, "epsilon"),
        ((np.nan,), ValueError, "epsilon"),
        (("1",), TypeError, "epsilon"),
        ((1.0, 1.0), ValueError, "delta"),
        ((1.0, -1e-3), ValueError, "delta"),
        ((True,), TypeError, "epsilon"),
    ],
)
def test_accountant_validates(args, exc, name):
    with pytest.raises(exc, match=name):
        PrivacyAccountant(*args)
    acc = PrivacyAccountant(5.0, 0.5)
    with pytest.raises(exc, match=name):
        acc.spend(*args)
    with pytest.raises(exc, match=name):
        acc.check(*args)
    assert acc.spent == (0.0, 0.0)


def test_spend_validates_label():
    acc = PrivacyAccountant(1.0)
    with pytest.raises(TypeError, match="label"):
        acc.spend(0.1, label=3)
    assert acc.spent == (0.0, 0.0)


def test_concurrent_spending_never_overspends():
    # 16 threads race (released together by a barrier) to spend 0.01 each
    # from a budget of 1.0, 20 attempts each (320 attempts, 100 can succeed).
    acc = PrivacyAccountant(1.0)
    successes = []
    lock = threading.Lock()
    barrier = threading.Barrier(16)

    def worker():
        barrier.wait()
        mine = 0
        for _ in range(20):
            try:
                acc.spend(0.01)
                mine += 1
            except BudgetExceededError:
                pass
        with lock:
            successes.append(mine)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(successes) == 100
    assert acc.spent == (1.0, 0.0) and len(acc.ledger) == 100


# ------------------------------------------------------ Mechanism.release


def test_release_records_everything():
    acc = PrivacyAccountant(1.0, 1e-5)
    mech = AnalyticGaussian(epsilon=0.5, delta=1e-6, sensitivity=0.1, seed=3)
    rel = mech.release(
        np.array([0.2, 0.4]), accountant=acc, n=50, bounds=(0, 1), neighbouring="add-remove", label="means"
    )
    rec = rel.record
    assert rec.mechanism == "analytic_gaussian"
    assert (rec.epsilon, rec.delta, rec.sensitivity) == (0.5, 1e-6, 0.1)
    assert rec.sensitivity_norm == "l2" and rec.scale == mech.scale
    assert rec.bounds == (0.0, 1.0) and rec.n == 50 and rec.neighbouring == "add-remove"
    assert rec.details["seeded"] is True and rec.details["label"] == "means"
    assert acc.spent == (0.5, 1e-6) and acc.ledger == [("means", 0.5, 1e-6)]
    assert rel.values.shape == (2,) and not rel.values.flags.writeable
    # The released values are exactly what the same seed produces.
    again = AnalyticGaussian(epsilon=0.5, delta=1e-6, sensitivity=0.1, seed=3)
    np.testing.assert_array_equal(rel.values, again.randomise(np.array([0.2, 0.4])))


def test_release_unseeded_flag_and_no_accountant():
    rel = Laplace(epsilon=1.0, sensitivity=1.0).release(3.0)
    assert rel.record.details["seeded"] is False and rel.values.shape == ()
    assert rel.record.n is None and rel.record.bounds is None


@pytest.mark.parametrize(
    "mech, bad",
    [
        (Laplace(epsilon=0.5, sensitivity=1.0), np.array([1.0, np.nan])),
        (Laplace(epsilon=0.5, sensitivity=1.0), [[1.0], [2.0, 3.0]]),
        (Gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0), "abc"),
        (RandomizedResponse(epsilon=0.5), np.array([0, 2])),
        (OptimalUnaryEncoding(epsilon=0.5, d=3), np.array([[0, 3]])),
    ],
)
def test_failed_validation_does_not_charge(mech, bad):
    acc = PrivacyAccountant(1.0, 1e-5)
    with pytest.raises((TypeError, ValueError)):
        mech.release(bad, accountant=acc)
    assert acc.spent == (0.0, 0.0) and acc.ledger == []


@pytest.mark.parametrize(
    "kw, exc",
    [
        (dict(n=0), ValueError),
        (dict(bounds=(1, 0)), ValueError),
        (dict(neighbouring="bogus"), ValueError),
        (dict(label=5), TypeError),
        (dict(accountant="acc"), TypeError),
    ],
)
def test_bad_release_arguments_do_not_charge(kw, exc):
    acc = PrivacyAccountant(1.0)
    mech = Laplace(epsilon=0.5, sensitivity=1.0)
    with pytest.raises(exc):
        mech.release(1.0, **{"accountant": acc, **kw})
    assert acc.spent == (0.0, 0.0)


def test_over_budget_releases_nothing_and_draws_no_noise():
    acc = PrivacyAccountant(0.6)
    mech = Laplace(epsilon=0.5, sensitivity=1.0, seed=np.random.default_rng(9))
    first = mech.release(np.zeros(3), accountant=acc)
    with pytest.raises(BudgetExceededError):
        mech.release(np.zeros(3), accountant=acc)
    # The generator was not advanced by the refused release.
    reference = np.random.default_rng(9)
    np.testing.assert_array_equal(first.values, reference.laplace(0, 2.0, 3))
    np.testing.assert_array_equal(mech.randomise(np.zeros(3)), reference.laplace(0, 2.0, 3))
    assert acc.spent == (0.5, 0.0)


def test_local_mechanism_release():
    rel = OptimalUnaryEncoding(epsilon=1.0, d=3, seed=1).release(np.array([0, 2, 1]), n=3)
    assert rel.values.shape == (3, 3) and rel.record.mechanism == "oue"
    assert json.loads(json.dumps(rel.to_dict()))["record"]["details"]["d"] == 3
