"""The accountant under hostile use (issue 8): exact rational arithmetic (sums of many
small float spends compare exactly with the sum of the fractions they stand for) and safe
sharing between threads (the budget is never exceeded under contention and the total is
exact)."""

from __future__ import annotations

import sys
import threading
from fractions import Fraction

import pytest
from _hostile import NON_POSITIVE_OR_NON_FINITE, NOT_A_NUMBER, SETTINGS, raises_clear
from hypothesis import given
from hypothesis import strategies as st

from pystanprivacy.privacy.records import BudgetExceededError, PrivacyAccountant

#: spends with up to 4 decimals, as a user would type them (0.1, 0.05, 0.0125, ...)
DECIMAL_SPENDS = st.lists(st.integers(1, 10_000).map(lambda k: k / 10_000), min_size=1, max_size=60)


def _exact(x: float) -> Fraction:
    return Fraction(repr(x))


@SETTINGS
@given(spends=DECIMAL_SPENDS)
def test_a_budget_equal_to_the_exact_sum_is_used_up_exactly(spends):
    """Spending k/10000 amounts whose exact sum is the budget succeeds for every spend
    (a float accountant fails some of these: 0.1 + 0.2 > 0.3), leaves exactly nothing,
    and refuses the smallest positive float afterwards."""
    total = sum(map(_exact, spends))
    acc = PrivacyAccountant(float(total))
    assert _exact(float(total)) == total  # 4-decimal sums are exact as shortest reprs
    for eps in spends:
        acc.spend(eps)
    assert acc.remaining == (0.0, 0.0) and acc.spent == (float(total), 0.0)
    assert not acc.check(5e-324)
    with pytest.raises(BudgetExceededError):
        acc.spend(5e-324)
    assert len(acc.ledger) == len(spends)


@SETTINGS
@given(spends=DECIMAL_SPENDS, budget=st.integers(1, 100_000).map(lambda k: k / 10_000))
def test_exactly_the_spends_that_fit_are_accepted(spends, budget):
    """Each spend is accepted if and only if the exact running sum stays within the budget."""
    acc = PrivacyAccountant(budget)
    running = Fraction(0)
    for eps in spends:
        fits = running + _exact(eps) <= _exact(budget)
        assert acc.check(eps) == fits
        if fits:
            acc.spend(eps)
            running += _exact(eps)
        else:
            with pytest.raises(BudgetExceededError):
                acc.spend(eps)
    assert acc.spent[0] == float(running)
    assert acc.remaining[0] == float(_exact(budget) - running)


@SETTINGS
@given(eps=st.floats(5e-324, 8e307), delta=st.floats(0, 0.999))
def test_spent_equals_the_fraction_of_the_shortest_repr(eps, delta):
    acc = PrivacyAccountant(1.7e308, 0.9999)
    acc.spend(eps, delta)
    acc.spend(eps, 0.0)
    assert acc.spent == (float(2 * _exact(eps)), float(_exact(delta)))


@SETTINGS
@given(bad=st.one_of(NOT_A_NUMBER, NON_POSITIVE_OR_NON_FINITE), which=st.sampled_from(["epsilon", "delta", "label"]))
def test_bad_spends_change_nothing(bad, which):
    acc = PrivacyAccountant(1.0, 1e-3)
    acc.spend(0.25, 1e-4, label="first")
    kw = {"epsilon": 0.1, "delta": 0.0, "label": None, which: bad}
    if which == "delta" and bad in (0, 0.0, -0.0):
        return  # a zero delta is valid
    if which == "label" and (bad is None or isinstance(bad, str)):
        return  # no label, or a text label, is valid
    with raises_clear(which, accountant=acc):
        acc.spend(**kw)
    if which != "label":
        with raises_clear(which, accountant=acc):
            acc.check(kw["epsilon"], kw["delta"])


def test_concurrent_mixed_spends_never_exceed_the_budget_and_sum_exactly():
    """32 threads released together spend a mix of 0.1, 0.2, 0.05 and 0.3 (with deltas)
    from a budget of (10, 1e-3), with the interpreter switching threads every microsecond,
    while a reader thread checks that spent + remaining == total and spent <= total at
    every moment. At the end the ledger's exact sum is the spent amount, which is the
    budget minus less than the smallest spend that was refused."""
    acc = PrivacyAccountant(10.0, 1e-3)
    amounts = [(0.1, 1e-6), (0.2, 0.0), (0.05, 2e-6), (0.3, 1e-5)]
    barrier = threading.Barrier(33)
    stop = threading.Event()
    violations = []
    refused = []

    def spender(k):
        barrier.wait()
        for j in range(40):
            eps, dlt = amounts[(k + j) % len(amounts)]
            try:
                acc.spend(eps, dlt, label=f"t{k}")
            except BudgetExceededError:
                refused.append((eps, dlt))

    def reader():
        barrier.wait()
        while not stop.is_set():
            (se, sd), _ = acc.spent, acc.remaining
            if se > 10.0 or sd > 1e-3:
                violations.append((se, sd))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=spender, args=(k,)) for k in range(32)]
        watcher = threading.Thread(target=reader)
        for t in (*threads, watcher):
            t.start()
        for t in threads:
            t.join()
        stop.set()
        watcher.join()
    finally:
        sys.setswitchinterval(old)
    assert violations == []
    ledger = acc.ledger
    eps_sum = sum(_exact(e) for _, e, _ in ledger)
    delta_sum = sum(_exact(d) for _, _, d in ledger)
    assert eps_sum <= 10 and delta_sum <= Fraction("1e-3")
    assert acc.spent == (float(eps_sum), float(delta_sum))
    assert len(ledger) + len(refused) == 32 * 40
    assert refused, "the budget ran out under contention"
    # every refusal was justified when it happened; at the end none of the refused
    # amounts fits any more (the budget only shrinks)
    assert not any(acc.check(e, d) for e, d in set(refused))


def test_racing_for_the_last_spends_admits_exactly_as_many_as_fit():
    """200 rounds: 8 threads released together each try to spend 0.1 from a fresh budget
    of 0.3. Exactly 3 succeed in every round and the spent total is exactly 0.3 (without the
    lock, check-then-spend races admit a 4th spend or lose an update)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(200):
            acc = PrivacyAccountant(0.3)
            barrier = threading.Barrier(8)
            ok = []

            def spender(barrier=barrier, acc=acc, ok=ok):
                barrier.wait()
                try:
                    acc.spend(0.1)
                    ok.append(1)
                except BudgetExceededError:
                    pass

            threads = [threading.Thread(target=spender) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(ok) == 3 and acc.spent == (0.3, 0.0) and len(acc.ledger) == 3
    finally:
        sys.setswitchinterval(old)
