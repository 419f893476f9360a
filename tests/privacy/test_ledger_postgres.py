"""The ledger on a real PostgreSQL server (:class:`pystanprivacy.privacy.ledger.PostgreSQLDialect`):
the same SQL and checks as the SQLite file, under a server started for these tests (initdb in a
temporary folder, a Unix socket only, no TCP port). Skipped only where the PostgreSQL server
programs (``initdb``, ``pg_ctl``) are not installed."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from pystanprivacy import PrivacyAccountant, cli
from pystanprivacy.privacy.ledger import LedgerIntegrityError, PostgreSQLDialect, PrivacyLedger
from pystanprivacy.privacy.records import PrivacyRecord

psycopg = pytest.importorskip("psycopg", reason="the [test] extra installs psycopg")


def _server_bin() -> Path | None:
    for candidate in [shutil.which("pg_ctl"), *sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)]:
        if candidate and (Path(candidate).resolve().parent / "initdb").exists():
            return Path(candidate).resolve().parent
    return None


@pytest.fixture(scope="module")
def server():
    """A PostgreSQL server of this module's own: a fresh cluster in a temporary folder (mode
    0700), listening on a Unix socket in it only; stopped and removed at the end."""
    bin_dir = _server_bin()
    if bin_dir is None:
        pytest.skip("the PostgreSQL server programs (initdb, pg_ctl) are not installed")
    # as root the server runs as the postgres account, which cannot enter a pytest-xdist worker's
    # own TMPDIR (mode 0700, root's: tests/conftest.py); its folder (0700, then the account's) is
    # made in the system's /tmp instead
    root = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="pystanprivacy-pg-", dir="/tmp" if root else None))
    as_user: list[str] = []
    if root:  # initdb refuses root: run the server as the postgres account
        shutil.chown(folder, user="postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = folder / "data"
    run = lambda *args: subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=120)
    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        options = f"-c listen_addresses='' -k {folder} -c fsync=on -c synchronous_commit=on"
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start")
        yield folder
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def url(server):
    """A URL whose connections use a schema of their own: one fresh ledger per test."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"postgresql://postgres@/postgres?host={server}", autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"postgresql://postgres@/postgres?host={server}&options=-csearch_path%3D{schema}"


def _sql(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for s in statements:
            conn.execute(s)


def _gaussian(epsilon: float, delta: float) -> PrivacyRecord:
    from pystanprivacy.privacy.mechanisms import Gaussian

    scale = Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0, seed=0).scale
    return PrivacyRecord(
        mechanism="gaussian", epsilon=epsilon, delta=delta, sensitivity=1.0, sensitivity_norm="l2", scale=scale
    )


@pytest.mark.parametrize("rule", ["basic", "zcdp", "pld"])
def test_a_server_ledger_reopens_with_the_in_memory_accountants_spent(url, rule):
    memory = PrivacyAccountant(3.0, 1e-5, composition=rule)
    with PrivacyAccountant.open(url, dataset="clinic", epsilon=3.0, delta=1e-5, composition=rule) as ledger:
        assert ledger.location.startswith("'postgresql://postgres@/postgres?")
        for eps, delta, record in ((0.1, 0.0, None), (0.5, 1e-7, _gaussian(0.5, 1e-7)), (0.2, 0.0, None)):
            ledger.spend(eps, delta, label="x", record=record)
            memory.spend(eps, delta, label="x", record=record)
    with PrivacyLedger.open(url, dataset="clinic") as again:
        assert again.spent == memory.spent
        assert again.entries == memory.entries
        assert again.ledger_table() == memory.ledger_table()
    with pytest.raises(FileExistsError, match="already holds a ledger"):
        PrivacyLedger.create(url, dataset="clinic", epsilon=1.0)


_RACE = r"""
import sys, time
from pathlib import Path
from pystanprivacy.privacy.ledger import PrivacyLedger
from pystanprivacy.privacy.records import BudgetExceededError
ledger = PrivacyLedger.open(sys.argv[1])
print("ready", flush=True)
while not Path(sys.argv[2]).exists():
    time.sleep(0.002)
for _ in range(5):
    try:
        print("ok", ledger.spend(0.1).entry, flush=True)
    except BudgetExceededError as exc:
        print("refused", exc, flush=True)
"""


def test_eight_processes_racing_on_the_server_never_overspend(url, tmp_path):
    PrivacyLedger.create(url, dataset="race", epsilon=1.0).close()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", _RACE, url, str(go)], stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        go.touch()
        lines = [line for p in procs for line in p.communicate(timeout=180)[0].splitlines()]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    ok = sorted(int(x.split()[1]) for x in lines if x.startswith("ok"))
    assert ok == list(range(1, 11))
    assert sum(x.startswith("refused") for x in lines) == 30
    with PrivacyLedger.open(url) as ledger:
        assert ledger.spent == (1.0, 0.0)


_DIE_BEFORE_COMMIT = r"""
import os, signal, sys
from pystanprivacy.privacy import ledger as L

class Dying(L.PostgreSQLDialect):
    @property
    def update_head(self):  # read after the entry is inserted, before the commit
        os.kill(os.getpid(), signal.SIGKILL)

L.PrivacyLedger.server_dialect = Dying()
L.PrivacyLedger.open(sys.argv[1]).spend(0.25, label="never stored")
"""

_LOOP = r"""
import sys
from pystanprivacy.privacy.ledger import PrivacyLedger
ledger = PrivacyLedger.open(sys.argv[1])
print("ready", flush=True)
while True:
    print(ledger.spend(0.001, label="loop").entry, flush=True)
"""


def test_a_client_killed_inside_or_between_transactions_leaves_a_consistent_ledger(url):
    """Killed with its entry inserted but not committed: nothing stored (the server rolls
    back), and the lock is released for the next spender. Killed at random times (fixed seed)
    in a loop of spends: every spend it saw returned is stored, at most one more."""
    import random

    with PrivacyLedger.create(url, dataset="d", epsilon=100.0, timeout=20) as ledger:
        ledger.spend(0.5, label="first")
    proc = subprocess.Popen([sys.executable, "-c", _DIE_BEFORE_COMMIT, url])
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    with PrivacyLedger.open(url, timeout=20) as ledger:
        assert ledger.ledger == [("first", 0.5, 0.0)]
        assert ledger.spend(0.5, label="second").entry == 2  # the dead client's lock is gone
    rng = random.Random(68)
    stored = 2
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", _LOOP, url], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.3))
        proc.send_signal(signal.SIGKILL)
        seen = [int(x) for x in proc.communicate(timeout=60)[0].split()]
        with PrivacyLedger.open(url, timeout=20) as ledger:
            n = len(ledger.history)
            last = seen[-1] if seen else stored
            assert last <= n <= last + 1
            memory = PrivacyAccountant(100.0)
            for e in ledger.history:
                memory.spend(e.epsilon, e.delta, label=e.label)
            assert ledger.spent == memory.spent
        stored = n


@pytest.mark.parametrize(
    ("statements", "message"),
    [
        (["UPDATE ledger_entries SET epsilon = 0.01 WHERE seq = 2"], "entry 2 was changed"),
        (["DELETE FROM ledger_entries WHERE seq = 3"], "head names entry 3, but the last stored entry is 2"),
        (["UPDATE ledger_meta SET value = '100.0' WHERE key = 'epsilon'"], "entry 1 does not link"),
        (["UPDATE ledger_meta SET value = '2' WHERE key = 'version'"], "format version 2, written by a newer"),
        (
            [
                "CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RETURN NEW; END $$ LANGUAGE plpgsql",
                "CREATE TRIGGER t BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION f()",
            ],
            "trigger",
        ),
    ],
)
def test_a_tampered_server_ledger_is_refused(url, statements, message):
    with PrivacyLedger.create(url, dataset="d", epsilon=2.0) as ledger:
        for eps in (0.1, 0.2, 0.3):
            ledger.spend(eps)
    _sql(url, *statements)
    with pytest.raises(ValueError, match=message):
        PrivacyLedger.open(url)


def test_server_messages_never_show_the_password_and_the_cli_reads_a_server_ledger(url, capsys):
    shown = PostgreSQLDialect().describe("postgresql://alice:s3cret@db.example/budget?sslmode=require&password=x")
    assert "s3cret" not in shown and "password" not in shown and "alice@db.example/budget" in shown
    PrivacyLedger.create(url, dataset="d", epsilon=1.0).close()
    with PrivacyLedger.open(url) as ledger:
        ledger.spend(0.25, label="counts")
    assert cli.main(["budget", "history", url]) == 0
    out = capsys.readouterr().out
    assert "  1  counts  |  (0.25, 0)  |  (0.25, 0)" in out
    _sql(url, "UPDATE ledger_entries SET label = 'x'")
    assert cli.main(["budget", "show", url]) == 1
    assert "entry 1 was changed" in capsys.readouterr().err
    with pytest.raises(LedgerIntegrityError, match="nothing is spent from this ledger"):
        PrivacyLedger.open(url)


def test_a_spender_with_insert_only_on_the_entries_can_spend_but_not_rewrite(url):
    """The grants SECURITY.md names are enough to spend, and too few to change or delete a
    stored entry (the server refuses), so such an account cannot roll the budget back."""
    role = f"spender_{uuid.uuid4().hex[:8]}"
    schema = url.rsplit("%3D", 1)[1]
    PrivacyLedger.create(url, dataset="d", epsilon=1.0).close()
    _sql(
        url,
        f"CREATE ROLE {role} LOGIN",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT ON ledger_meta TO {role}",
        f"GRANT SELECT, INSERT ON ledger_entries TO {role}",
        f"GRANT SELECT, UPDATE ON ledger_head TO {role}",
    )
    as_spender = url.replace("postgresql://postgres@", f"postgresql://{role}@")
    with PrivacyLedger.open(as_spender) as ledger:
        ledger.spend(0.4, label="a")
        ledger.spend(0.4, label="b")
        assert ledger.spent == (0.8, 0.0)
    for statement in ("UPDATE ledger_entries SET epsilon = 0.0", "DELETE FROM ledger_entries WHERE seq = 2"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _sql(as_spender, statement)
    with PrivacyLedger.open(url) as ledger:
        assert ledger.ledger == [("a", 0.4, 0.0), ("b", 0.4, 0.0)]
