"""The persistent ledger (:mod:`pystanprivacy.privacy.ledger`): reopening gives the in-memory
accountant's ``spent`` to the last bit under every rule, real processes racing for the last ε
never overspend, ``kill -9`` at random points never leaves a ledger that opens wrong, and an
edited, deleted, inserted or reordered entry (or a file that is not a ledger) is refused."""

from __future__ import annotations

import dataclasses
import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from pystanprivacy import PrivacyAccountant
from pystanprivacy.privacy import ldp
from pystanprivacy.privacy.ledger import (
    LedgerFileError,
    LedgerIntegrityError,
    LedgerReference,
    PrivacyLedger,
    SQLiteDialect,
)
from pystanprivacy.privacy.mechanisms import AnalyticGaussian, Gaussian, Laplace, RandomizedResponse
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyRecord, Release


def _laplace_record(epsilon: float) -> PrivacyRecord:
    """The record of an ideal Laplace release (a Laplace curve under the tight rules)."""
    mech = Laplace(epsilon=epsilon, sensitivity=1.0, seed=0)
    return PrivacyRecord(mechanism="laplace", epsilon=epsilon, sensitivity=1.0, sensitivity_norm="l1", scale=mech.scale)


def _gaussian_record(epsilon: float, delta: float) -> PrivacyRecord:
    """The record of an ideal Gaussian release (a Gaussian curve under the tight rules)."""
    mech = Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0, seed=0)
    return PrivacyRecord(
        mechanism="gaussian", epsilon=epsilon, delta=delta, sensitivity=1.0, sensitivity_norm="l2", scale=mech.scale
    )


def _run(code: str, *args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
    )


# ----------------------------------------------------------------------------- round trip
@pytest.mark.parametrize("rule", ["basic", "zcdp", "rdp", "pld"])
def test_reopened_ledger_spends_exactly_what_an_in_memory_accountant_spends(tmp_path, rule):
    """Spends of every kind (Laplace and Gaussian curves, a pure ε-DP record, a secure
    release through a mechanism, a spend without record, three records in one spend) are
    charged to a ledger and to an independent in-memory accountant; reopened in a new object,
    the ledger's spent, entries and table equal the accountant's exactly (==, no tolerance)."""
    path = tmp_path / "budget.db"
    ledger = PrivacyAccountant.open(path, dataset="clinic", epsilon=5.0, delta=1e-5, composition=rule)
    memory = PrivacyAccountant(5.0, 1e-5, composition=rule)
    assert isinstance(ledger, PrivacyLedger)
    spends = [
        (0.3, 0.0, "laplace", _laplace_record(0.3)),
        (0.4, 1e-7, "gaussian", _gaussian_record(0.4, 1e-7)),
        (0.2, 0.0, "rr", RandomizedResponse(epsilon=0.2, seed=0).record()),
        (0.05, 0.0, None, None),
        (0.30000000000000004, 0.0, "three", [_laplace_record(0.1)] * 3),
        (0.4, 1e-7, "gaussian again", _gaussian_record(0.4, 1e-7)),
    ]
    for eps, delta, label, record in spends:
        ledger.spend(eps, delta, label=label, record=record)
        memory.spend(eps, delta, label=label, record=record)
    release = Laplace(epsilon=0.1, sensitivity=1.0).release(np.array([4.0, 2.0]), accountant=ledger, label="secure")
    bare = dataclasses.replace(
        release.record, details={k: v for k, v in release.record.details.items() if k != "ledger"}
    )
    memory.spend(0.1, label="secure", record=bare)
    ledger.close()

    again = PrivacyLedger.open(path, dataset="clinic")
    assert again.spent == memory.spent
    assert again.remaining == memory.remaining
    assert again.entries == memory.entries
    assert again.ledger == memory.ledger
    assert again.ledger_table() == memory.ledger_table()
    assert [e.records for e in again.history][-1] == (bare,)
    if rule == "basic":  # exact rational sums of the decimals, computed here by hand
        eps = sum(Fraction(repr(float(s[0]))) for s in spends) + Fraction(1, 10)
        delta = 2 * Fraction(repr(1e-7))
        assert again.spent == (float(eps), float(delta))
    else:  # the stored records were read back as curves, not as their (ε, δ)
        counted = [s for e in again.entries for s in e.counted_as]
        assert sum("Gaussian, sigma/sensitivity" in s for s in counted) == 2
    # the next spend is decided on the same state in both
    big = (again.remaining[0] * 0.999, 0.0)
    assert again.check(*big) == memory.check(*big)


def test_ten_tenths_fit_one_across_reopenings_and_the_eleventh_is_refused(tmp_path):
    """Basic composition stays exact through the file: each 0.1 is spent by a new ledger
    object (as separate processes would), and the 11th is refused with nothing stored."""
    path = tmp_path / "b.db"
    PrivacyLedger.create(path, dataset="d", epsilon=1.0).close()
    for _ in range(10):
        with PrivacyLedger.open(path) as ledger:
            ledger.spend(0.1, label="tenth")
    with PrivacyLedger.open(path) as ledger:
        assert ledger.spent == (1.0, 0.0)
        assert ledger.remaining == (0.0, 0.0)
        with pytest.raises(BudgetExceededError, match="exceeds the remaining budget.*nothing was charged"):
            ledger.spend(1e-12)
        assert len(ledger.history) == 10


# ----------------------------------------------------------------------------- references
def test_a_release_names_its_ledger_entry_and_keeps_it_through_save_and_load(tmp_path):
    ledger = PrivacyLedger.create(tmp_path / "b.db", dataset="clinic-2026", epsilon=1.0)
    release = Laplace(epsilon=0.25, sensitivity=1.0).release(np.array([3, 5]), accountant=ledger, label="counts")
    ref = LedgerReference.from_dict(release.record.details["ledger"])
    stored = ledger.history[0]
    assert (ref.ledger, ref.dataset, ref.entry, ref.hash) == (ledger.ledger_id, "clinic-2026", 1, stored.hash)
    saved = release.save(tmp_path / "release.json")
    loaded = Release.load(saved)  # check_record_consistent accepts the extra detail
    assert loaded == release
    assert ledger.entry_of(loaded) == stored
    # the record the ledger stored is the release's record without the reference
    assert stored.records[0].details.get("ledger") is None
    assert {k: v for k, v in loaded.record.to_dict()["details"].items() if k != "ledger"} == dict(
        stored.records[0].to_dict()["details"]
    )
    # another ledger, or an edited reference, is named in the error
    other = PrivacyLedger.create(tmp_path / "other.db", dataset="clinic-2026", epsilon=1.0)
    with pytest.raises(ValueError, match="not this one"):
        other.entry_of(loaded)
    forged = LedgerReference(ref.ledger, ref.dataset, 1, "0" * 64).stamp(stored.records[0])
    with pytest.raises(ValueError, match="entry 1 with a hash this ledger does not hold"):
        ledger.entry_of(forged)
    # an in-memory accountant's release carries no reference (files as before)
    plain = Laplace(epsilon=0.25, sensitivity=1.0).release(np.array([3, 5]), accountant=PrivacyAccountant(1.0))
    assert "ledger" not in plain.record.details
    with pytest.raises(ValueError, match="names no ledger"):
        ledger.entry_of(plain)


def test_the_ledger_is_the_accountant_of_every_mechanism_unchanged(tmp_path):
    """Mechanisms, local reports and a model's release charge a ledger as they charge an
    in-memory accountant (the same spends, the same composed total), and every release
    names its entry."""
    from pystanprivacy.models.foulds2016 import BetaBernoulli

    ledger = PrivacyLedger.create(tmp_path / "b.db", dataset="d", epsilon=10.0, delta=1e-4, composition="zcdp")
    memory = PrivacyAccountant(10.0, 1e-4, composition="zcdp")
    rng = np.random.default_rng(0)
    makers = [
        lambda acc: Laplace(epsilon=0.5, sensitivity=1.0, seed=1).release(np.array([1.0, 2.0]), accountant=acc),
        lambda acc: Gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0, seed=1).release(np.ones(3), accountant=acc),
        lambda acc: AnalyticGaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0, seed=1).release(1.0, accountant=acc),
        lambda acc: RandomizedResponse(epsilon=0.5, seed=1).release(np.array([0, 1, 1]), accountant=acc),
        lambda acc: ldp.randomized_response_reports(np.array([0, 1, 1, 0]), epsilon=0.5, seed=1, accountant=acc),
        lambda acc: ldp.oue_reports(np.array([0, 2, 1]), epsilon=0.5, d=3, seed=1, accountant=acc),
        lambda acc: BetaBernoulli.release(rng.integers(0, 2, 20), epsilon=0.5, seed=1, accountant=acc),
    ]
    for i, make in enumerate(makers, 1):
        release = make(ledger)
        make(memory)
        assert release.record.details["ledger"]["entry"] == i
        assert ledger.entry_of(release).seq == i
    assert ledger.spent == memory.spent
    assert ledger.ledger_table() == memory.ledger_table()


# ----------------------------------------------------------------------------- concurrency
_RACE = r"""
import os, sys, time
from pathlib import Path
from pystanprivacy.privacy.ledger import PrivacyLedger
from pystanprivacy.privacy.records import BudgetExceededError, PrivacyRecord
path, go, attempts, eps, delta = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
record = None
if len(sys.argv) > 6:
    record = PrivacyRecord(mechanism="gaussian", epsilon=eps, delta=delta, sensitivity=1.0,
                           sensitivity_norm="l2", scale=float(sys.argv[6]))
ledger = PrivacyLedger.open(path)
print("ready", flush=True)
deadline = time.monotonic() + 120
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit(3)
    time.sleep(0.002)
for i in range(attempts):
    try:
        ref = ledger.spend(eps, delta, label=f"pid {os.getpid()} try {i}", record=record)
        print("ok", ref.entry, flush=True)
    except BudgetExceededError as exc:
        print("refused", exc, flush=True)
"""


def _race(tmp_path: Path, path: Path, n_procs: int, attempts: int, *args: str) -> tuple[list[str], list[str]]:
    go = tmp_path / "go"
    procs = [_run(_RACE, str(path), str(go), str(attempts), *args) for _ in range(n_procs)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        go.touch()
        outs = [p.communicate(timeout=180) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    lines = [line for out, _ in outs for line in out.splitlines()]
    return [x for x in lines if x.startswith("ok")], [x for x in lines if x.startswith("refused")]


def test_eight_processes_racing_for_the_last_epsilon_never_overspend(tmp_path):
    """8 processes each try 5 spends of 0.1 on a budget of 1 (40 tries at once): exactly 10
    succeed, with the entries 1..10 each once, and 30 are refused with the budget in the message."""
    path = tmp_path / "b.db"
    PrivacyLedger.create(path, dataset="race", epsilon=1.0).close()
    ok, refused = _race(tmp_path, path, 8, 5, "0.1", "0.0")
    assert sorted(int(x.split()[1]) for x in ok) == list(range(1, 11))
    assert len(refused) == 30
    assert all("exceeds the remaining budget (epsilon=0.0, delta=0.0)" in x for x in refused)
    with PrivacyLedger.open(path) as ledger:
        assert ledger.spent == (1.0, 0.0)
        assert len(ledger.history) == 10


def test_racing_processes_under_zcdp_get_exactly_what_the_in_memory_accountant_allows(tmp_path):
    """The tight rule's limit: an in-memory accountant fed the same Gaussian record until it
    refuses allows k spends; 8 racing processes (3 tries each) get exactly k."""
    sigma = Gaussian(epsilon=0.5, delta=1e-6, sensitivity=1.0, seed=0).scale
    record = _gaussian_record(0.5, 1e-6)
    memory = PrivacyAccountant(1.5, 1e-5, composition="zcdp")
    allowed = 0
    while memory.check(0.5, 1e-6, record=record):
        memory.spend(0.5, 1e-6, record=record)
        allowed += 1
    assert allowed == 14  # basic composition would allow 3; fewer than the 24 tries
    path = tmp_path / "z.db"
    PrivacyLedger.create(path, dataset="race", epsilon=1.5, delta=1e-5, composition="zcdp").close()
    ok, refused = _race(tmp_path, path, 8, 3, "0.5", "1e-06", repr(sigma))
    assert len(ok) == allowed and len(refused) == 24 - allowed
    assert all("zcdp composition" in x and "over the budget" in x for x in refused)
    with PrivacyLedger.open(path) as ledger:
        assert ledger.spent == memory.spent


def test_threads_and_two_ledger_objects_in_one_process_never_overspend(tmp_path):
    path = tmp_path / "b.db"
    first = PrivacyLedger.create(path, dataset="d", epsilon=1.0)
    second = PrivacyLedger.open(path)
    barrier = threading.Barrier(6)
    done: list[int] = []

    def spender(ledger):
        barrier.wait()
        for _ in range(5):
            try:
                done.append(ledger.spend(0.1).entry)
            except BudgetExceededError:
                pass

    threads = [threading.Thread(target=spender, args=(led,)) for led in (first, second) * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(done) == list(range(1, 11))
    assert first.spent == second.spent == (1.0, 0.0)


# ----------------------------------------------------------------------------- crashes
_LOOP = r"""
import sys
from pystanprivacy.privacy.ledger import PrivacyLedger
from pystanprivacy.privacy.records import PrivacyRecord
ledger = PrivacyLedger.open(sys.argv[1])
record = PrivacyRecord(mechanism="gaussian", epsilon=0.001, delta=1e-9, sensitivity=1.0,
                       sensitivity_norm="l2", scale=float(sys.argv[2]))
print("ready", flush=True)
while True:
    print(ledger.spend(0.001, 1e-9, label="loop", record=record).entry, flush=True)
"""


def test_kill_9_at_random_points_while_spending_leaves_a_consistent_ledger(tmp_path):
    """A process spending in a loop (each spend one synced transaction) is killed with
    SIGKILL at a random time, 10 times. Each time the ledger opens (its hash chain and head
    check out), every spend the process saw returned is stored, at most one more (committed,
    killed before it printed), and spent equals an independent in-memory accountant fed the
    stored entries. Random delays from a fixed seed."""
    path = tmp_path / "b.db"
    PrivacyLedger.create(path, dataset="d", epsilon=1e6, delta=1e-3, composition="zcdp").close()
    sigma = Gaussian(epsilon=0.001, delta=1e-9, sensitivity=1.0, seed=0).scale
    rng = random.Random(68)
    stored_before, journals = 0, 0
    for _ in range(10):
        proc = _run(_LOOP, str(path), repr(sigma))
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(rng.uniform(0.0, 0.3))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        journals += Path(f"{path}-journal").exists()
        seen = [int(x) for x in out.splitlines() if x.strip().isdigit()]
        ledger = PrivacyLedger.open(path)
        history = ledger.history
        last_seen = seen[-1] if seen else stored_before
        assert last_seen <= len(history) <= last_seen + 1
        assert [e.seq for e in history] == list(range(1, len(history) + 1))
        memory = PrivacyAccountant(1e6, 1e-3, composition="zcdp")
        for e in history:
            memory.spend(e.epsilon, e.delta, label=e.label, record=e.records)
        assert ledger.spent == memory.spent
        assert [e.composed_epsilon for e in history] == [e.composed_epsilon for e in memory.entries]
        ledger.close()
        stored_before = len(history)
    assert stored_before > 10  # the loops did spend
    print(f"{journals} of 10 kills left a journal (a transaction in progress) behind")
    with PrivacyLedger.open(path) as ledger:  # and the ledger takes the next spend
        assert ledger.spend(0.001, 1e-9, record=history[-1].records).entry == stored_before + 1
    assert not Path(f"{path}-journal").exists()


_DIE_BEFORE_COMMIT = r"""
import os, signal, sys
from pystanprivacy.privacy import ledger as L

class Dying(L.SQLiteDialect):
    @property
    def update_head(self):  # read after the entry is inserted, before the commit
        os.kill(os.getpid(), signal.SIGKILL)

L.PrivacyLedger.dialect = Dying()
L.PrivacyLedger.open(sys.argv[1]).spend(0.25, label="never stored")
"""

_DIE_AFTER_SPEND = r"""
import os, signal, sys
import numpy as np
from pystanprivacy.privacy.ledger import PrivacyLedger
from pystanprivacy.privacy.mechanisms import Laplace

mech = Laplace(epsilon=0.25, sensitivity=1.0)
mech._privatise = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # the noise never runs
mech.release(np.array([1.0, 2.0]), accountant=PrivacyLedger.open(sys.argv[1]), label="charged, not released")
"""


def test_killed_inside_the_transaction_nothing_is_charged_killed_after_it_everything_is(tmp_path):
    path = tmp_path / "b.db"
    with PrivacyLedger.create(path, dataset="d", epsilon=1.0) as ledger:
        ledger.spend(0.5, label="first")
    proc = _run(_DIE_BEFORE_COMMIT, str(path))
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert Path(f"{path}-journal").exists()  # it died with its entry written, uncommitted
    with PrivacyLedger.open(path) as ledger:
        assert ledger.ledger == [("first", 0.5, 0.0)]
        assert ledger.spent == (0.5, 0.0)
    proc = _run(_DIE_AFTER_SPEND, str(path))
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    with PrivacyLedger.open(path) as ledger:
        assert ledger.ledger == [("first", 0.5, 0.0), ("charged, not released", 0.25, 0.0)]
        assert ledger.spent == (0.75, 0.0)


# ----------------------------------------------------------------------------- tampering
def _three_spends(path: Path) -> None:
    with PrivacyLedger.create(path, dataset="d", epsilon=2.0) as ledger:
        for i, eps in enumerate((0.1, 0.2, 0.3), 1):
            ledger.spend(eps, label=f"spend {i}", record=_laplace_record(eps))


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for s in statements:
            conn.execute(s)
    conn.close()


_COLUMNS = "time, label, epsilon, delta, records, composed_epsilon, composed_delta, prev_hash, hash"

TAMPERS = {
    "edited epsilon": (["UPDATE ledger_entries SET epsilon = 0.02 WHERE seq = 2"], "entry 2 was changed"),
    "edited label": (["UPDATE ledger_entries SET label = 'other' WHERE seq = 1"], "entry 1 was changed"),
    "edited record": (
        ["UPDATE ledger_entries SET records = replace(records, '\"epsilon\":0.3', '\"epsilon\":0.03') WHERE seq = 3"],
        "entry 3 was changed",
    ),
    "edited composed total": (
        ["UPDATE ledger_entries SET composed_epsilon = 0.25 WHERE seq = 2"],
        "entry 2 was changed",
    ),
    "deleted middle entry": (["DELETE FROM ledger_entries WHERE seq = 2"], "entry 2 is missing"),
    "deleted last entry": (["DELETE FROM ledger_entries WHERE seq = 3"], "head names entry 3, but the last stored"),
    "deleted last entry, head moved": (
        ["DELETE FROM ledger_entries WHERE seq = 3", "UPDATE ledger_head SET seq = 2"],
        "head's hash is not that of entry 2",
    ),
    "reordered entries": (
        [
            f"CREATE TEMP TABLE t AS SELECT seq, {_COLUMNS} FROM ledger_entries",
            "UPDATE ledger_entries SET seq = -seq",
            f"INSERT INTO ledger_entries SELECT 3 - seq, {_COLUMNS} FROM t WHERE seq IN (1, 2)",
            f"INSERT INTO ledger_entries SELECT seq, {_COLUMNS} FROM t WHERE seq = 3",
            "DELETE FROM ledger_entries WHERE seq < 0",
        ],
        "entry 1 does not link",
    ),
    "inserted entry": (
        [f"INSERT INTO ledger_entries SELECT 4, {_COLUMNS} FROM ledger_entries WHERE seq = 3"],
        "head names entry 3, but the last stored entry is 4",
    ),
    "raised budget": (["UPDATE ledger_meta SET value = '100.0' WHERE key = 'epsilon'"], "entry 1 does not link"),
    "other data set": (["UPDATE ledger_meta SET value = 'x' WHERE key = 'dataset'"], "entry 1 does not link"),
}


@pytest.mark.parametrize("tamper", TAMPERS)
def test_a_tampered_ledger_is_refused_on_open_and_left_as_it_is(tmp_path, tamper):
    path = tmp_path / "b.db"
    _three_spends(path)
    statements, message = TAMPERS[tamper]
    _sql(path, *statements)
    before = path.read_bytes()
    with pytest.raises(LedgerIntegrityError, match=message) as info:
        PrivacyLedger.open(path)
    assert "nothing is spent from this ledger" in str(info.value)
    assert isinstance(info.value, ValueError)
    assert path.read_bytes() == before


def test_a_recomputed_chain_whose_totals_the_records_do_not_give_is_refused(tmp_path):
    """Hashes recomputed over an edited composed total (what a bug, or a careful editor,
    would write): the replay of the records finds it."""
    from pystanprivacy.privacy.ledger import _entry_hash, _header_hash

    path = tmp_path / "b.db"
    _three_spends(path)
    conn = sqlite3.connect(path)
    meta = dict(conn.execute("SELECT key, value FROM ledger_meta"))
    rows = conn.execute(f"SELECT seq, {_COLUMNS} FROM ledger_entries ORDER BY seq").fetchall()
    prev = _header_hash(meta)
    with conn:
        for values in rows:
            row = dict(zip(["seq", *_COLUMNS.split(", ")], values, strict=True))
            row["prev_hash"] = prev
            if row["seq"] == 2:
                row["composed_epsilon"] = 0.25
            row["hash"] = prev = _entry_hash(meta["ledger"], row, json.loads(row["records"]))
            conn.execute(
                "UPDATE ledger_entries SET composed_epsilon = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                (row["composed_epsilon"], row["prev_hash"], row["hash"], row["seq"]),
            )
        conn.execute("UPDATE ledger_head SET hash = ?", (prev,))
    conn.close()
    with pytest.raises(LedgerIntegrityError, match=r"entry 2 cannot be replayed.*composed total \(0\.25, 0\.0\)"):
        PrivacyLedger.open(path)


def test_an_entry_deleted_while_the_ledger_is_open_stops_its_spends(tmp_path):
    path = tmp_path / "b.db"
    _three_spends(path)
    ledger = PrivacyLedger.open(path)
    _sql(path, "DELETE FROM ledger_entries WHERE seq = 3", "UPDATE ledger_head SET seq = 2")
    with pytest.raises(LedgerIntegrityError, match="entry 3 changed or vanished"):
        ledger.spend(0.1)
    with pytest.raises(LedgerIntegrityError):  # and every later call
        _ = ledger.spent
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM ledger_entries").fetchone() == (2,)
    conn.close()


# ----------------------------------------------------------------------------- files refused
def _other_sqlite(path: Path) -> None:
    _sql(path, "CREATE TABLE notes (x TEXT)", "INSERT INTO notes VALUES ('hello')")


def _newer(path: Path) -> None:
    _three_spends(path)
    _sql(path, "PRAGMA user_version = 2")


def _extra_table(path: Path) -> None:
    _three_spends(path)
    _sql(path, "CREATE TABLE extra (x INTEGER)")


def _trigger(path: Path) -> None:
    _three_spends(path)
    _sql(path, "CREATE TRIGGER t AFTER INSERT ON ledger_entries BEGIN DELETE FROM ledger_meta; END")


FILES = {
    "text file": (lambda p: p.write_text("seq,epsilon\n1,0.1\n"), "not an SQLite database"),
    "empty file": (lambda p: p.write_bytes(b""), "is empty"),
    "folder": (lambda p: p.mkdir(), "not a regular file"),
    "another SQLite file": (_other_sqlite, "not a pystanprivacy ledger"),
    "newer format": (_newer, "format version 2, written by a newer pystanprivacy"),
    "extra table": (_extra_table, "does not hold exactly the ledger's tables"),
    "trigger": (_trigger, "does not hold exactly the ledger's tables"),
    "sqlite header only": (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x01" * 84), "not a readable ledger"),
}


@pytest.mark.parametrize("kind", FILES)
def test_a_file_that_is_not_a_usable_ledger_is_refused(tmp_path, kind):
    path = tmp_path / "b.db"
    make, message = FILES[kind]
    make(path)
    with pytest.raises(LedgerFileError, match=message):
        PrivacyLedger.open(path, dataset="d", epsilon=1.0)


def test_a_truncated_ledger_is_refused_at_every_cut(tmp_path):
    """Cut at every page boundary and in the middle of every page: never opens."""
    path = tmp_path / "b.db"
    with PrivacyLedger.create(path, dataset="d", epsilon=100.0) as ledger:
        for _ in range(40):
            ledger.spend(0.1, label="x" * 200, record=_laplace_record(0.1))
    whole = path.read_bytes()
    assert len(whole) >= 8 * 4096
    cuts = sorted({*range(4096, len(whole), 4096), *range(2048, len(whole), 4096), 100})
    for cut in cuts:
        path.write_bytes(whole[:cut])
        with pytest.raises(LedgerFileError):
            PrivacyLedger.open(path)
    path.write_bytes(whole)
    assert len(PrivacyLedger.open(path).history) == 40


# ----------------------------------------------------------------------------- arguments
def test_open_and_create_check_their_arguments(tmp_path):
    path = tmp_path / "b.db"
    with pytest.raises(FileNotFoundError, match="give dataset= and epsilon= to create one"):
        PrivacyLedger.open(path)
    with pytest.raises(FileNotFoundError, match="give dataset= and epsilon="):
        PrivacyLedger.open(path, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        PrivacyLedger.open(path, dataset="d", epsilon=float("nan"))
    with pytest.raises(ValueError, match="composition"):
        PrivacyLedger.create(path, dataset="d", epsilon=1.0, composition="advanced")
    with pytest.raises(TypeError, match="dataset must be a non-empty str"):
        PrivacyLedger.create(path, dataset=" ", epsilon=1.0)
    with pytest.raises(TypeError, match=r"PrivacyLedger\.open"):
        PrivacyLedger(1.0)
    assert not path.exists() and list(tmp_path.iterdir()) == []  # nothing was left behind
    PrivacyLedger.open(path, dataset="d", epsilon=1.0, delta=1e-6, composition="rdp").close()
    assert (path.stat().st_mode & 0o777) == 0o600
    with pytest.raises(FileExistsError, match="already exists"):
        PrivacyLedger.create(path, dataset="d", epsilon=1.0)
    for name, value in (("dataset", "e"), ("epsilon", 2.0), ("delta", 0.0), ("composition", "basic")):
        with pytest.raises(ValueError, match=f"{name}={value!r}, but the ledger .* holds {name}"):
            PrivacyLedger.open(path, **{name: value})
    with PrivacyLedger.open(path, dataset="d", epsilon=1.0, delta=1e-6, composition="rdp") as ledger:
        assert (ledger.total, ledger.composition, ledger.dataset) == ((1.0, 1e-6), "rdp", "d")
        with pytest.raises(ValueError, match="record"):  # the accountant's own checks, nothing stored
            ledger.spend(0.5, record=_laplace_record(0.4))
        assert ledger.history == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.db"]


def test_two_processes_creating_the_same_ledger_share_one(tmp_path):
    """``open`` creates a missing ledger atomically: of processes racing to create it, one
    does, and the others open that one (one ledger id)."""
    path, go = tmp_path / "b.db", tmp_path / "go"
    code = (
        "import sys, time\nfrom pathlib import Path\nfrom pystanprivacy.privacy.ledger import PrivacyLedger\n"
        "print('ready', flush=True)\nwhile not Path(sys.argv[2]).exists(): time.sleep(0.001)\n"
        "print(PrivacyLedger.open(sys.argv[1], dataset='d', epsilon=1.0).ledger_id)\n"
    )
    procs = [_run(code, str(path), str(go)) for _ in range(4)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    ids = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert ids == {PrivacyLedger.open(path).ledger_id}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.db", "go"]


def test_a_ledger_class_takes_every_write_lock_through_its_dialect(tmp_path):
    """The dialect is the seam for another database: a subclass's dialect is the one that
    starts every write transaction (creation and each spend)."""
    seen: list[str] = []

    class Counting(SQLiteDialect):
        def begin_write(self, conn):
            seen.append("write")
            super().begin_write(conn)

    class Ledger(PrivacyLedger):
        dialect = Counting()

    ledger = Ledger.create(tmp_path / "b.db", dataset="d", epsilon=1.0)
    ledger.spend(0.1)
    ledger.spend(0.2)
    assert seen == ["write"] * 3  # the creation and two spends
    assert Ledger.open(tmp_path / "b.db").spent == (0.3, 0.0)  # exact: 1/10 + 2/10
