"""The hostile-input census of scripts/hostile_census.py (issue 17, "close the side channels"):
every documented-invalid input to a public entry point that takes private data or privacy
parameters is rejected clearly (TypeError/ValueError naming the argument, no private value in
the message, no warning, no charge, nothing reaching Stan); none is accepted silently and none
crashes unclearly. The census never compiles or samples a Stan model.

The classifier is tested too: broken entry points must be classified as accepted silently or
crashed unclearly, so that the census cannot pass by classifying everything as clear."""
from __future__ import annotations

import importlib.util
import logging
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy.privacy.records import PrivacyAccountant
from pystanprivacy.sampling.stan import StanModel

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "hostile_census.py"


def _load():
    name = "_hostile_census_script"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPT)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses resolve annotations through sys.modules
        spec.loader.exec_module(module)
    return sys.modules[name]


hc = _load()

#: cases per family that must run (the census as written runs more; it may grow, not shrink)
MIN_CASES = {
    "mechanisms": 700,
    "ldp": 400,
    "privacy": 230,
    "models.release": 1100,
    "models.ops": 950,
    "models.fit": 150,
}
MIN_ENTRY_POINTS = 80
MIN_CASES_PER_ENTRY_POINT = 10


@pytest.fixture(scope="module")
def rows():
    return hc.census()


def _listing(bad) -> str:
    return "\n".join(f"  {r.entry} {r.argument} = {r.label}: {r.outcome}: {r.detail}" for r in bad)


def test_no_hostile_input_is_accepted_silently(rows):
    bad = [r for r in rows if r.outcome == hc.ACCEPTED]
    assert not bad, f"{len(bad)} of {len(rows)} hostile inputs were accepted silently:\n{_listing(bad)}"


def test_no_hostile_input_crashes_unclearly(rows):
    bad = [r for r in rows if r.outcome == hc.CRASHED]
    assert not bad, f"{len(bad)} of {len(rows)} hostile inputs crashed unclearly:\n{_listing(bad)}"


def test_the_census_covers_every_family_and_cannot_shrink_unnoticed(rows):
    per_family = Counter(r.family for r in rows)
    assert set(per_family) == set(hc.FAMILIES)
    short = {f: (per_family[f], m) for f, m in MIN_CASES.items() if per_family[f] < m}
    assert not short, f"families with fewer cases than their minimum (ran, minimum): {short}"
    per_entry = Counter(r.entry for r in rows)
    assert len(per_entry) >= MIN_ENTRY_POINTS
    thin = {e: n for e, n in per_entry.items() if n < MIN_CASES_PER_ENTRY_POINT}
    assert not thin, f"entry points with fewer than {MIN_CASES_PER_ENTRY_POINT} cases: {thin}"
    assert all(r.outcome in (hc.REJECTED, hc.ACCEPTED, hc.CRASHED) for r in rows)


def test_the_census_is_deterministic(rows):
    again = hc.census()
    assert [(r.entry, r.argument, r.label, r.outcome) for r in again] == \
        [(r.entry, r.argument, r.label, r.outcome) for r in rows]


def test_main_prints_the_table_and_fails_on_any_unclear_case(capsys, monkeypatch):
    ok = hc.Row("ldp", "ldp.f", "x", "NaN", hc.REJECTED, "ValueError: x contains NaN")
    bad = hc.Row("ldp", "ldp.f", "x", "inf", hc.CRASHED, "KeyError is not a TypeError/ValueError")
    monkeypatch.setattr(hc, "census", lambda: [ok, ok])
    assert hc.main([]) == 0
    out = capsys.readouterr().out
    assert "| entry point | tried | rejected clearly | accepted silently | crashed unclearly |" in out
    assert "| `ldp.f` | 2 | 2 | 0 | 0 |" in out
    assert "2 hostile inputs tried" in out and "0 accepted silently" in out and "0 crashed unclearly" in out
    monkeypatch.setattr(hc, "census", lambda: [ok, bad])
    assert hc.main([]) == 1
    out = capsys.readouterr().out
    assert "| `ldp.f` | 2 | 1 | 0 | 1 |" in out
    assert "`ldp.f` x = inf: **crashed unclearly**: KeyError" in out


# ----------------------------------------------------------------------------- the classifier
def _accepts_nan(acc, kw):
    return float(np.sum(np.asarray(kw["x"], dtype=float)))  # NaN in, NaN out: no error


def _raises_key_error(acc, kw):
    raise KeyError("x")


def _quotes_the_sentinel(acc, kw):
    raise ValueError(f"x contains a bad value: {np.asarray(kw['x']).tolist()!r}")


def _quotes_the_sentinel_in_its_cause(acc, kw):
    try:
        float(f"{hc.SENTINEL}?")
    except ValueError as exc:
        raise ValueError("x is not a number") from exc


def _hides_the_cause(acc, kw):
    try:
        float(f"{hc.SENTINEL}?")
    except ValueError:
        raise ValueError("x is not a number") from None


def _charges_before_failing(acc, kw):
    kw["accountant"].spend(1.0)
    raise ValueError("x contains NaN")


def _warns_before_failing(acc, kw):
    np.log(np.array([-1.0]))  # RuntimeWarning: invalid value encountered in log
    raise ValueError("x contains NaN")


def _does_not_name_the_argument(acc, kw):
    raise ValueError("index out of range")  # "index" holds an x, but not the word x


def _logs_the_sentinel(acc, kw):
    logging.getLogger("pystanprivacy.hostile_census_test").debug("got %r", list(np.asarray(kw["x"])))
    raise ValueError("x contains NaN")


def _samples_before_validating(acc, kw):
    return StanModel.get("foulds2016/beta_bernoulli").sample({"x": kw["x"]})


def _rejects_clearly(acc, kw):
    raise ValueError("x contains NaN (1 value(s)); NaN is not allowed")


BROKEN = {
    "accepts NaN silently": (_accepts_nan, hc.ACCEPTED, "returned normally"),
    "raises KeyError": (_raises_key_error, hc.CRASHED, "KeyError is not a TypeError/ValueError"),
    "quotes the sentinel": (_quotes_the_sentinel, hc.CRASHED, "quotes the private sentinel"),
    "quotes the sentinel in its cause": (_quotes_the_sentinel_in_its_cause, hc.CRASHED, "quotes the private sentinel"),
    "charges the accountant before failing": (_charges_before_failing, hc.CRASHED, "charged the accountant"),
    "warns before failing": (_warns_before_failing, hc.CRASHED, "warned (RuntimeWarning"),
    "does not name the argument": (_does_not_name_the_argument, hc.CRASHED, "message does not name x"),
    "logs the sentinel": (_logs_the_sentinel, hc.CRASHED, "a log record quotes the private sentinel"),
    "samples before validating": (_samples_before_validating, hc.CRASHED, "reached Stan"),
    "hides the cause (raise ... from None)": (_hides_the_cause, hc.REJECTED, "ValueError: x is not a number"),
    "rejects clearly": (_rejects_clearly, hc.REJECTED, "ValueError: x contains NaN"),
}


@pytest.mark.parametrize("what", sorted(BROKEN))
def test_the_classifier_tells_broken_entry_points_apart(what):
    call, outcome, detail = BROKEN[what]
    good = np.array([0.5, hc.SENTINEL, 2.0])
    nan = good.copy()
    nan[0] = math.nan
    entry = hc.Entry("test", f"test.{what}", call, {"x": good, "accountant": hc.ACC}, {"x": [("NaN", nan)]})
    with hc.stan_trap():
        rows = [r for r in hc.run_entry(entry) if r.argument == "x"]  # the valid call's row aside
    assert len(rows) == 1
    assert rows[0].outcome == outcome, rows[0]
    assert detail in rows[0].detail, rows[0]


def test_classify_directly():
    acc = PrivacyAccountant(10.0)

    def charge_then_fail():
        acc.spend(1.0)
        raise ValueError("x is bad")

    assert hc.classify(charge_then_fail, ("x",), accountant=acc)[0] == hc.CRASHED
    assert hc.classify(lambda: None, ("x",))[0] == hc.ACCEPTED
    assert hc.classify(lambda: float("abc"), ("value",))[0] == hc.CRASHED  # numpy/Python's own message
    small = PrivacyAccountant(0.5)
    # a documented subclass of ValueError (BudgetExceededError) naming the argument is clear
    assert hc.classify(lambda: small.spend(1.0), ("epsilon",), accountant=small)[0] == hc.REJECTED


def test_a_valid_call_that_fails_is_reported():
    entry = hc.Entry("test", "test.broken_baseline", _rejects_clearly, {"x": np.array([0.5])},
                     {"x": [("NaN", [math.nan])]})
    rows = hc.run_entry(entry)
    assert rows[0].argument == "(valid call)" and rows[0].outcome == hc.CRASHED


def test_the_stan_trap_compiles_nothing_and_is_undone():
    get, init = StanModel.__dict__["get"], StanModel.__dict__["__init__"]
    with hc.stan_trap():
        model = StanModel.get("foulds2016/beta_bernoulli")
        with pytest.raises(hc._WouldRunStan):
            model.sample({})
        with pytest.raises(hc._WouldRunStan):
            StanModel("foulds2016/beta_bernoulli")
    assert StanModel.__dict__["get"] is get and StanModel.__dict__["__init__"] is init


def test_security_md_states_the_census_as_it_is(rows):
    """SECURITY.md's hostile-input count is the census's: a change of the census (more cases,
    a new entry point) must be reflected there."""
    import re
    from collections import Counter

    text = (Path(__file__).resolve().parents[1] / "SECURITY.md").read_text()
    found = re.search(r"\*\*(\d+) hostile inputs tried over (\d+) entry points: (\d+) rejected clearly, "
                      r"(\d+) accepted silently,\s+(\d+) crashed unclearly\.\*\*", text)
    assert found, "SECURITY.md must state the census totals"
    outcomes = Counter(r.outcome for r in rows)
    stated = tuple(int(g) for g in found.groups())
    assert stated == (len(rows), len({r.entry for r in rows}), outcomes[hc.REJECTED],
                      outcomes[hc.ACCEPTED], outcomes[hc.CRASHED])
