"""The hostile-input census of tests/security/hostile_census.py (issues 17 and 53): every
documented-invalid input to a public entry point that takes private data or privacy parameters
is rejected clearly (TypeError/ValueError naming the argument, no private value in the message,
no warning, no charge, nothing reaching Stan); every documented-valid extreme (5e-324, 1e-310,
1e300, the largest float) is refused clearly or answered soundly; two Python-int lists that
differ in one record are treated alike; corrupted and non-regular files are refused clearly; the
command line refuses bad paths with exit code 2 before any work. None is accepted silently,
crashes unclearly, is charged then fails, or is told apart. The census never compiles or samples
a Stan model, and never runs an experiment or an audit.

The classifier is tested too: broken entry points must be classified as the failure they are,
so that the census cannot pass by classifying everything as clear."""

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

SCRIPT = Path(__file__).resolve().parent / "hostile_census.py"


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
    "mechanisms": 920,
    "ldp": 520,
    "privacy": 290,
    "models.release": 1490,
    "models.ops": 1200,
    "models.fit": 175,
    "files": 26,
    "cli": 40,
}
#: documented-valid extremes and neighbouring pairs that must run (they may grow, not shrink)
MIN_VALID_CASES = 390
MIN_PAIRS = 290
MIN_ENTRY_POINTS = 90
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


def test_no_input_is_charged_then_fails(rows):
    bad = [r for r in rows if r.outcome == hc.CHARGED]
    assert not bad, f"{len(bad)} of {len(rows)} inputs were charged, then failed:\n{_listing(bad)}"


def test_no_pair_of_neighbouring_inputs_is_told_apart(rows):
    bad = [r for r in rows if r.outcome == hc.TOLD_APART]
    assert not bad, f"{len(bad)} neighbouring pairs were told apart:\n{_listing(bad)}"


def test_the_census_covers_every_family_and_cannot_shrink_unnoticed(rows):
    per_family = Counter(r.family for r in rows)
    assert set(per_family) == set(hc.FAMILIES)
    short = {f: (per_family[f], m) for f, m in MIN_CASES.items() if per_family[f] < m}
    assert not short, f"families with fewer cases than their minimum (ran, minimum): {short}"
    per_entry = Counter(r.entry for r in rows)
    assert len(per_entry) >= MIN_ENTRY_POINTS
    thin = {e: n for e, n in per_entry.items() if n < MIN_CASES_PER_ENTRY_POINT}
    assert not thin, f"entry points with fewer than {MIN_CASES_PER_ENTRY_POINT} cases: {thin}"
    assert all(r.outcome in hc.OUTCOMES for r in rows)
    valid = [r for r in rows if r.label.endswith("(valid)")]
    pairs = [r for r in rows if r.label.startswith("pair ")]
    assert len(valid) >= MIN_VALID_CASES and len(pairs) >= MIN_PAIRS, (len(valid), len(pairs))
    # every class of issue 53 is there: int64/uint64 edges, subnormal and huge parameters,
    # corrupted and non-regular files, bad command-line paths
    labels = " ".join(r.label for r in rows)
    for needed in (
        "2**64",
        "2**63",
        "subnormal (1e-310)",
        "tiny (5e-324)",
        "huge (1e300)",
        "float max",
        "a FIFO",
        "random bytes",
        "truncated",
        "an existing file",
        "a path under a file",
    ):
        assert needed in labels, needed
    assert {r.entry for r in rows if r.family == "cli"} >= {
        "cli: reproduce --data",
        "cli: reproduce --out",
        "cli: audit --out",
    }


def test_the_census_is_deterministic(rows):
    again = hc.census()
    assert [(r.entry, r.argument, r.label, r.outcome) for r in again] == [
        (r.entry, r.argument, r.label, r.outcome) for r in rows
    ]


def test_main_prints_the_table_and_fails_on_any_unclear_case(capsys, monkeypatch):
    ok = hc.Row("ldp", "ldp.f", "x", "NaN", hc.REJECTED, "ValueError: x contains NaN")
    sound = hc.Row("ldp", "ldp.f", "epsilon", "tiny (valid)", hc.SOUND, "returned a finite, sound result")
    bad = hc.Row("ldp", "ldp.f", "x", "inf", hc.CRASHED, "KeyError is not a TypeError/ValueError")
    monkeypatch.setattr(hc, "census", lambda: [ok, ok, sound])
    assert hc.main([]) == 0
    out = capsys.readouterr().out
    assert (
        "| entry point | tried | rejected clearly | handled soundly | accepted silently | crashed unclearly "
        "| charged then failed | told apart |"
    ) in out
    assert "| `ldp.f` | 3 | 2 | 1 | 0 | 0 | 0 | 0 |" in out
    assert (
        "**3 cases tried over 1 entry points: 2 rejected clearly, 1 handled soundly, 0 accepted silently, "
        "0 crashed unclearly, 0 charged then failed, 0 told apart.**"
    ) in out
    for failure in (hc.CRASHED, hc.ACCEPTED, hc.CHARGED, hc.TOLD_APART):
        monkeypatch.setattr(hc, "census", lambda f=failure: [ok, hc.Row("ldp", "ldp.f", "x", "inf", f, "why")])
        assert hc.main([]) == 1, failure
        out = capsys.readouterr().out
        assert f"`ldp.f` x = inf: **{failure}**: why" in out
    monkeypatch.setattr(hc, "census", lambda: [ok, bad])
    assert hc.main([]) == 1
    out = capsys.readouterr().out
    assert "| `ldp.f` | 2 | 1 | 0 | 0 | 1 | 0 | 0 |" in out
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


_BB_DATA = {"R": 1, "successes": [2.0], "failures": [1.0], "prior_alpha": 1.0, "prior_beta": 1.0}


def _samples_before_validating(acc, kw):
    return StanModel.get("foulds2016/beta_bernoulli").sample(_BB_DATA)  # x never looked at


def _charges_then_hands_stan_nan(acc, kw):
    kw["accountant"].spend(1.0)  # as an OPS attempt is charged, then a temperature of inf reaches Stan's data check
    return StanModel.get("foulds2016/beta_bernoulli").sample({**_BB_DATA, "prior_alpha": math.inf})


def _rejects_clearly(acc, kw):
    raise ValueError("x contains NaN (1 value(s)); NaN is not allowed")


BROKEN = {
    "accepts NaN silently": (_accepts_nan, hc.ACCEPTED, "returned normally"),
    "raises KeyError": (_raises_key_error, hc.CRASHED, "KeyError is not a TypeError/ValueError"),
    "quotes the sentinel": (_quotes_the_sentinel, hc.CRASHED, "quotes the private sentinel"),
    "quotes the sentinel in its cause": (_quotes_the_sentinel_in_its_cause, hc.CRASHED, "quotes the private sentinel"),
    "charges the accountant before failing": (_charges_before_failing, hc.CHARGED, "charged the accountant"),
    "charges, then Stan's data check refuses": (_charges_then_hands_stan_nan, hc.CHARGED, "charged the accountant"),
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

    assert hc.classify(charge_then_fail, ("x",), accountant=acc)[0] == hc.CHARGED
    assert hc.classify(lambda: None, ("x",))[0] == hc.ACCEPTED
    assert hc.classify(lambda: float("abc"), ("value",))[0] == hc.CRASHED  # numpy/Python's own message
    small = PrivacyAccountant(0.5)
    # a documented subclass of ValueError (BudgetExceededError) naming the argument is clear
    assert hc.classify(lambda: small.spend(1.0), ("epsilon",), accountant=small)[0] == hc.REJECTED


def test_a_valid_call_that_fails_is_reported():
    entry = hc.Entry(
        "test", "test.broken_baseline", _rejects_clearly, {"x": np.array([0.5])}, {"x": [("NaN", [math.nan])]}
    )
    rows = hc.run_entry(entry)
    assert rows[0].argument == "(valid call)" and rows[0].outcome == hc.CRASHED


def test_the_stan_trap_compiles_nothing_and_is_undone():
    get, init = StanModel.__dict__["get"], StanModel.__dict__["__init__"]
    with hc.stan_trap():
        model = StanModel.get("foulds2016/beta_bernoulli")
        with pytest.raises(hc._WouldRunStan):
            model.sample(_BB_DATA)
        # the real settings and data checks run first, as they would before a real run
        with pytest.raises(ValueError, match="prior_alpha"):
            model.sample({**_BB_DATA, "prior_alpha": math.nan})
        with pytest.raises(ValueError, match="chains"):
            model.sample(_BB_DATA, chains=0)
        with pytest.raises(hc._WouldRunStan):
            StanModel("foulds2016/beta_bernoulli")
    assert StanModel.__dict__["get"] is get and StanModel.__dict__["__init__"] is init


def test_security_md_states_the_census_as_it_is(rows):
    """SECURITY.md's hostile-input count is the census's: a change of the census (more cases,
    a new entry point) must be reflected there."""
    import re
    from collections import Counter

    text = (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text()
    found = re.search(
        r"\*\*(\d+) cases tried over (\d+) entry points: (\d+) rejected clearly,\s+(\d+) handled "
        r"soundly,\s+(\d+) accepted silently,\s+(\d+) crashed unclearly,\s+(\d+) charged then "
        r"failed,\s+(\d+) told apart\.\*\*",
        text,
    )
    assert found, "SECURITY.md must state the census totals"
    outcomes = Counter(r.outcome for r in rows)
    stated = tuple(int(g) for g in found.groups())
    assert stated == (len(rows), len({r.entry for r in rows}), *(outcomes[o] for o in hc.OUTCOMES))


# ----------------------------------------------------------------------------- valid extremes, pairs
def _entry_with(call, *, valid=None, pairs=None, expect="returns"):
    return hc.Entry(
        "test",
        "test.f",
        call,
        {"x": np.array([0.5, 1.0]), "epsilon": 1.0, "accountant": hc.ACC},
        {},
        valid=valid or {},
        pairs=pairs or {},
        expect=expect,
    )


def _release(acc, kw):
    from pystanprivacy.privacy.mechanisms import Laplace

    return Laplace(epsilon=kw["epsilon"], sensitivity=1.0).release(
        np.asarray(kw["x"], dtype=float), accountant=kw["accountant"]
    )


def _valid_rows(call, values, *, expect="returns"):
    entry = _entry_with(call, valid={"epsilon": values}, expect=expect)
    with hc.stan_trap():
        return [r for r in hc.run_entry(entry) if r.argument == "epsilon"]


def test_a_valid_extreme_answered_soundly_or_refused_clearly_passes():
    def refuses_tiny(acc, kw):
        if kw["epsilon"] < 1e-300:
            raise ValueError(f"epsilon={kw['epsilon']} is too small: the noise would overflow")
        return _release(acc, kw)

    rows = _valid_rows(refuses_tiny, [("tiny", 5e-324), ("moderate", 2.0)])
    assert [r.outcome for r in rows] == [hc.REJECTED, hc.SOUND], rows


def test_a_valid_extreme_that_returns_nan_or_crashes_or_charges_then_fails_is_caught():
    def nan_scale(acc, kw):
        kw["accountant"].spend(kw["epsilon"])
        return hc.Release(
            values=np.array([0.5]),
            record=hc.PrivacyRecord(
                mechanism="laplace", epsilon=1.0, sensitivity=1.0, sensitivity_norm="l1", scale=1.0
            ),
        ), np.array([np.nan])

    def overflow(acc, kw):
        raise OverflowError(34, "Numerical result out of range")

    def charges_then_fails(acc, kw):
        kw["accountant"].spend(kw["epsilon"])
        raise ValueError("epsilon is too large for the noise grid")

    def warns(acc, kw):
        np.exp(np.array([1000.0]))  # RuntimeWarning: overflow
        return _release(acc, {**kw, "epsilon": 1.0})

    cases = {
        nan_scale: (hc.ACCEPTED, "not finite"),
        overflow: (hc.CRASHED, "OverflowError is not"),
        charges_then_fails: (hc.CHARGED, "charged the accountant"),
        warns: (hc.ACCEPTED, "RuntimeWarning"),
    }
    for call, (outcome, detail) in cases.items():
        (row,) = _valid_rows(call, [("huge", 1e300)])
        assert row.outcome == outcome and detail in row.detail, (call.__name__, row)


def test_a_valid_extreme_reaching_stan_is_sound_only_for_a_sampler_with_finite_data():
    def ops(acc, kw):
        kw["accountant"].spend(kw["epsilon"])
        temperature = 2.0 / kw["epsilon"]  # inf for epsilon = 5e-324: the data check must refuse it
        return StanModel.get("foulds2016/beta_bernoulli").sample({**_BB_DATA, "prior_beta": temperature})

    rows = _valid_rows(ops, [("tiny", 5e-324), ("moderate", 2.0)], expect="stan")
    assert [r.outcome for r in rows] == [hc.CHARGED, hc.SOUND], rows
    (row,) = _valid_rows(ops, [("moderate", 2.0)])  # a release entry point must not reach Stan at all
    assert row.outcome == hc.CRASHED and "reached Stan" in row.detail


def test_a_silent_clamp_at_negligible_noise_is_caught():
    check = hc._lossless(0, 3e5)
    clamped = hc.Release(
        values=np.array([262144.0, 1.0]),
        record=hc.PrivacyRecord(
            mechanism="laplace", epsilon=1e300, sensitivity=1.0, sensitivity_norm="l1", scale=1e-300
        ),
    )
    assert check(clamped) and "clamped without a word" in check(clamped)[0]
    exact = hc.Release(values=np.array([3e5, 1.0]), record=clamped.record)
    assert check(exact) == []


def test_a_pair_of_neighbours_told_apart_is_caught():
    def by_dtype(acc, kw):  # the old rule: the grid follows NumPy's inferred dtype, so one record decides it
        from pystanprivacy.privacy.mechanisms import Laplace

        x = np.asarray(kw["x"])
        if x.dtype == object:
            raise TypeError("x must have a numeric dtype")
        return Laplace(epsilon=1.0, sensitivity=1.0 if x.dtype.kind in "iu" else 2.0).release(
            np.clip(x.astype(float), -1e6, 1e6), accountant=kw["accountant"]
        )

    def alike(acc, kw):
        return _release(acc, {**kw, "x": [float(min(max(v, -1e6), 1e6)) for v in kw["x"]]})

    pairs = {"x": hc.int_pairs()}
    for call, expected in ((by_dtype, hc.TOLD_APART), (alike, hc.SOUND)):
        with hc.stan_trap():
            rows = [r for r in hc.run_entry(_entry_with(call, pairs=pairs)) if r.argument == "x"]
        by_label = {r.label: r for r in rows}
        assert len(rows) == 8
        if expected == hc.TOLD_APART:
            # object vs uint64: refused vs released; int64 vs float64 element: different records
            assert by_label["pair [.., 2**64] vs [.., 2**64 - 1] (object vs uint64)"].outcome == hc.TOLD_APART
            row = by_label["pair [.., 1] vs [.., 1.5] (int64 vs float64)"]
            assert row.outcome == hc.TOLD_APART and "records differ" in row.detail, row
        else:
            assert all(r.outcome == hc.SOUND for r in rows), rows


def test_pairs_keep_to_the_declared_domain():
    bits = hc.int_pairs(hc._bits)
    # the two records of a bits pair are both outside {0, 1} (both must be refused alike) or both inside
    assert bits and all(hc._bits(p.first[-1]) == hc._bits(p.second[-1]) for _, p in bits)
    assert sum(hc._bits(p.first[-1]) for _, p in bits) == 1  # 0 vs 0.0
    assert len(hc.int_pairs()) == 8 and len(hc.int_pairs(hc._nonnegative)) < 8
    assert hc._bits(0.0) and hc._bits(1) and not hc._bits(1.5) and not hc._bits(2**64)


# ----------------------------------------------------------------------------- files and the command line
def test_a_reader_that_hangs_on_a_fifo_is_released_and_counted(tmp_path):
    import os
    import time

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def reads(acc, kw):
        with open(kw["path"], "rb") as f:  # blocks until a writer opens the FIFO
            return f.read()

    def refuses(acc, kw):
        import stat

        if not stat.S_ISREG(os.stat(kw["path"]).st_mode):
            raise ValueError(f"path {kw['path']!r} is not a regular file")
        return reads(acc, kw)

    regular = tmp_path / "file"
    regular.write_bytes(b"x")
    start = time.monotonic()
    for call, outcome in ((reads, hc.CRASHED), (refuses, hc.REJECTED)):
        entry = hc.Entry("files", "test.load", call, {"path": str(regular)}, {"path": [("a FIFO", str(fifo))]})
        (row,) = [r for r in hc.run_entry(entry) if r.argument == "path"]
        assert row.outcome == outcome, row
        if outcome == hc.CRASHED:
            assert "hung" in row.detail
    assert time.monotonic() - start < 60


def test_the_command_line_classifier(tmp_path, monkeypatch):
    from pystanprivacy import cli

    def fake_main(argv):
        where = argv[argv.index("--out") + 1]
        if where == "traceback":
            raise FileExistsError(where)
        if where == "exit 1":
            raise SystemExit("pystanprivacy: error: --out is bad")
        if where == "clear":
            cli.build_parser().error(f"--out {where!r}: exists and is not a folder")
        if where == "unnamed":
            cli.build_parser().error("that will not do")
        if where == "work":
            from pystanprivacy.run import runner

            with runner.make_executor(1):
                pass
        return 0

    monkeypatch.setattr(cli, "main", fake_main)
    hostile = [(label, label) for label in ("traceback", "exit 1", "clear", "unnamed", "work", "accepted")]
    entry = hc._cli_entry("cli", "cli: test", ["audit"], {"--out": "work"}, {"--out": hostile})
    with hc.work_trap():
        rows = hc.run_entry(entry)
    got = {r.label: r.outcome for r in rows}
    assert got == {
        "traceback": hc.CRASHED,
        "exit 1": hc.CRASHED,
        "clear": hc.REJECTED,
        "unnamed": hc.CRASHED,
        "work": hc.CRASHED,
        "accepted": hc.ACCEPTED,
    }, rows
    assert "(valid call)" not in got  # the valid call reached the work trap, as it should
    from pystanprivacy.run import runner

    assert getattr(runner.make_executor, "__name__", "") != "trap"  # the trap is undone
