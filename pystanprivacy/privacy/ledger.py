"""A privacy budget that outlives the process: a ledger stored in a database.

:class:`PrivacyLedger` is a :class:`~pystanprivacy.privacy.records.PrivacyAccountant` whose
spends are stored in an SQLite file (the standard library's :mod:`sqlite3`; one file, no
server) or, given a ``postgresql://`` URL, on a PostgreSQL server (:class:`PostgreSQLDialect`,
extra ``pystanprivacy[postgres]``). Every process that opens the same ledger shares one budget::

    ledger = PrivacyAccountant.open("budget.db", dataset="clinic-2026", epsilon=1.0,
                                    delta=1e-6, composition="zcdp")
    release = Laplace(epsilon=0.1, sensitivity=1.0).release(x, accountant=ledger)
    release.record.details["ledger"]   # the budget and entry this release was charged to

What it guarantees:

* **A spend is one transaction, synced before the mechanism runs.** :meth:`PrivacyLedger.spend`
  takes the database's write lock (``BEGIN IMMEDIATE``), reads every entry other processes
  stored since this one last looked, replays them through the in-memory accountant, decides
  whether the new spend fits, stores the entry (its records, the composed total after it, the
  time and the label) and commits with ``synchronous = FULL``; it returns only after the
  commit is on disk. A process killed after the commit has its spend charged; killed before
  it, nothing is stored (SQLite rolls the unfinished transaction back on the next open).
* **No overspend across processes.** The write lock serialises spends; each is decided on the
  database's state inside its own transaction, never on a copy read earlier.
* **Composition over the stored records.** Opening a ledger replays its entries, in order,
  through the same in-memory :class:`~pystanprivacy.privacy.records.PrivacyAccountant` logic
  (exact rational sums for ``"basic"``; :mod:`pystanprivacy.privacy.accounting` for ``"zcdp"``,
  ``"rdp"``, ``"pld"``), so ``spent`` is what an in-memory accountant given the same spends
  reports, to the last bit; the composed total each entry stored must be that replay's.
* **Tamper evidence.** Each entry stores the SHA-256 hash of its canonical JSON, which includes
  the hash of the entry before it (the first: of the ledger's header: its id, data set, budget
  and rule), and a head row names the last entry and its hash. An edited, deleted, inserted or
  reordered entry, an edited budget, a file that is not a ledger, a ledger of a newer format
  and a damaged (e.g. truncated) file are refused on open (:class:`LedgerIntegrityError`,
  :class:`LedgerFileError`, both ``ValueError``), before anything can be spent.

It does **not** protect against someone with write access to the file who rewrites it
whole, recomputing the hashes, or deletes it: the hashes are not signed (``SECURITY.md``).

Journal mode: the rollback journal (``journal_mode = DELETE``), not WAL. At rest the ledger is
one file (WAL keeps ``-wal`` and ``-shm`` files beside it, and needs shared memory, so not on a
network file system); spends are rare, so WAL's concurrent readers during a write are not
needed; with ``synchronous = FULL`` a commit is durable when it returns in both modes.

The SQL is the same for both databases (:class:`SQLiteDialect`): a dialect adds only the
placeholder style, how a write transaction takes the lock (SQLite's ``BEGIN IMMEDIATE``,
PostgreSQL's ``SELECT ... FOR UPDATE`` of the head row), how a new ledger is made atomically
and how a database is recognised as a ledger. Both are tested with real processes
(``tests/privacy/test_ledger.py``, ``tests/privacy/test_ledger_postgres.py``, which starts its
own PostgreSQL server).

References
----------
.. [1] SQLite, "Atomic Commit In SQLite" (https://www.sqlite.org/atomiccommit.html) and
   "File Locking And Concurrency In SQLite Version 3" (https://www.sqlite.org/lockingv3.html).
.. [2] S. Haber and W. S. Stornetta, "How to Time-Stamp a Digital Document", Journal of
   Cryptology 3(2), 1991 (hash-linked records).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import json
import os
import sqlite3
import stat
import tempfile
import threading
import urllib.parse
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Self

from .._validation import check_choice, check_delta, check_epsilon, check_label, check_positive
from .records import (
    COMPOSITION_RULES,
    BudgetExceededError,
    PrivacyAccountant,
    PrivacyRecord,
    Release,
    _check_records,
)

__all__ = [
    "LEDGER_FORMAT",
    "LEDGER_FORMAT_VERSION",
    "LedgerFileError",
    "LedgerIntegrityError",
    "LedgerReference",
    "StoredEntry",
    "SQLiteDialect",
    "PostgreSQLDialect",
    "PrivacyLedger",
]

#: the ``format`` a ledger's header states
LEDGER_FORMAT = "pystanprivacy.PrivacyLedger"
#: the ledger format's version; this library reads this version only
LEDGER_FORMAT_VERSION = 1
#: SQLite ``PRAGMA application_id`` of a ledger file ("PSPL")
APPLICATION_ID = 0x5053504C
_SQLITE_MAGIC = b"SQLite format 3\x00"
_META_KEYS = ("format", "version", "ledger", "dataset", "epsilon", "delta", "composition", "created")
_TABLES = {"ledger_meta", "ledger_head", "ledger_entries"}
_ENTRY_COLUMNS = (
    "seq",
    "time",
    "label",
    "epsilon",
    "delta",
    "records",
    "composed_epsilon",
    "composed_delta",
    "prev_hash",
    "hash",
)


class LedgerFileError(ValueError):
    """A ledger :class:`PrivacyLedger` cannot use: an empty file, one that is not a ledger,
    a ledger of a newer format version, a damaged (e.g. truncated) database, or one that cannot
    be reached or written. The message names the file (or the URL, without its password)."""


class LedgerIntegrityError(LedgerFileError):
    """A ledger whose entries are not the ones it stored: an entry edited, deleted, inserted
    or reordered (its hash, or the hash chain, does not match), an edited header or head, or a
    stored composed total that the replay of the records does not reproduce. Nothing is
    spent from such a ledger."""


def _canonical(value: Any) -> str:
    """The canonical JSON text that is hashed: sorted keys, no spaces, ASCII, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _sha256(value: Any) -> str:
    return hashlib.sha256(_canonical(value).encode("ascii")).hexdigest()


# --------------------------------------------------------------------------- public values
@dataclasses.dataclass(frozen=True)
class LedgerReference:
    """Which budget a release was charged to: the ledger's id and data set, the entry's
    sequence number (1, 2, ...) and its hash. :meth:`stamp` writes it into a record's
    ``details["ledger"]``, so a published release (:meth:`Release.save
    <pystanprivacy.privacy.records.Release.save>`) names its budget, and
    :meth:`PrivacyLedger.entry_of` finds and checks the entry again."""

    ledger: str
    dataset: str
    entry: int
    hash: str

    def to_dict(self) -> dict[str, Any]:
        """``{"ledger", "dataset", "entry", "hash"}``, as stored in a record's details."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LedgerReference:
        """Inverse of :meth:`to_dict` (``ValueError`` naming what is missing or wrong)."""
        if not isinstance(d, Mapping) or set(d) != {"ledger", "dataset", "entry", "hash"}:
            raise ValueError(
                "a ledger reference must be a mapping with exactly the keys 'ledger', 'dataset', 'entry', 'hash'"
            )
        entry = d["entry"]
        if isinstance(entry, bool) or not isinstance(entry, int) or entry < 1:
            raise ValueError(f"a ledger reference's 'entry' must be an int >= 1, got {entry!r}")
        if not all(isinstance(d[k], str) for k in ("ledger", "dataset", "hash")):
            raise ValueError("a ledger reference's 'ledger', 'dataset' and 'hash' must be str")
        return cls(ledger=d["ledger"], dataset=d["dataset"], entry=entry, hash=d["hash"])

    def stamp(self, record: PrivacyRecord) -> PrivacyRecord:
        """``record`` with ``details["ledger"]`` set to this reference."""
        if not isinstance(record, PrivacyRecord):
            raise TypeError(f"record must be a PrivacyRecord, got {type(record).__name__}")
        return dataclasses.replace(record, details={**record.details, "ledger": self.to_dict()})


@dataclasses.dataclass(frozen=True)
class StoredEntry:
    """One entry as stored: sequence number, UTC time (ISO 8601), label, the spend's
    (ε, δ), its records, the composed (ε, δ) after it, and the hash chain."""

    seq: int
    time: str
    label: str | None
    epsilon: float
    delta: float
    records: tuple[PrivacyRecord, ...]
    composed_epsilon: float
    composed_delta: float
    prev_hash: str
    hash: str


# --------------------------------------------------------------------------- SQL
_CREATE_STATEMENTS = (
    "CREATE TABLE ledger_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
    "CREATE TABLE ledger_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL)",
    (
        "CREATE TABLE ledger_entries (seq INTEGER PRIMARY KEY NOT NULL, time TEXT NOT NULL, label TEXT, "
        "epsilon DOUBLE PRECISION NOT NULL, delta DOUBLE PRECISION NOT NULL, records TEXT NOT NULL, "
        "composed_epsilon DOUBLE PRECISION NOT NULL, composed_delta DOUBLE PRECISION NOT NULL, "
        "prev_hash TEXT NOT NULL, hash TEXT NOT NULL)"
    ),
)


class SQLiteDialect:
    """The ledger's SQL and connection handling for SQLite (a file): the seam where another
    database plugs in (:class:`PostgreSQLDialect`).

    Every statement is plain SQL with ``?`` placeholders (a dialect rewrites them with
    :meth:`sql`), the same for every database; a dialect says how to connect, how a write
    transaction takes the lock, how a new ledger is made atomically and how a database is
    recognised as a ledger.
    """

    create_statements = _CREATE_STATEMENTS
    insert_meta = "INSERT INTO ledger_meta (key, value) VALUES (?, ?)"
    insert_head = "INSERT INTO ledger_head (id, seq, hash) VALUES (1, ?, ?)"
    select_meta = "SELECT key, value FROM ledger_meta"
    select_head = "SELECT seq, hash FROM ledger_head"
    select_entries = f"SELECT {', '.join(_ENTRY_COLUMNS)} FROM ledger_entries WHERE seq > ? ORDER BY seq"
    select_hash = "SELECT hash FROM ledger_entries WHERE seq = ?"
    insert_entry = (
        f"INSERT INTO ledger_entries ({', '.join(_ENTRY_COLUMNS)}) VALUES ({', '.join('?' * len(_ENTRY_COLUMNS))})"
    )
    update_head = "UPDATE ledger_head SET seq = ?, hash = ? WHERE id = 1"
    #: the driver's errors, reported as :class:`LedgerFileError`
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    # ---- naming
    def target(self, where: str | os.PathLike) -> Any:
        """The ledger's address as this dialect keeps it (a ``Path``)."""
        return Path(where)

    def describe(self, target: Any) -> str:
        """How messages name the ledger."""
        return repr(str(target))

    def sql(self, statement: str) -> str:
        """``statement`` in this driver's placeholder style."""
        return statement

    # ---- connections and transactions
    def connect(self, target: Path, *, timeout: float) -> Any:
        """A connection in autocommit mode (transactions are explicit), synced commits
        (``synchronous = FULL``), the rollback journal, and a busy wait of ``timeout`` s."""
        conn = sqlite3.connect(os.fspath(target), timeout=timeout, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA trusted_schema = OFF")
            conn.execute("PRAGMA synchronous = FULL")
            mode = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
            if str(mode).lower() != "delete":
                raise LedgerFileError(f"{self.describe(target)}: cannot use the rollback journal (mode {mode!r})")
        except BaseException:
            conn.close()
            raise
        return conn

    def begin_write(self, conn: Any) -> None:
        """Start a transaction holding the database's write lock (other writers wait)."""
        conn.execute("BEGIN IMMEDIATE")

    def begin_read(self, conn: Any) -> None:
        """Start a transaction that reads one consistent state."""
        conn.execute("BEGIN")

    def in_transaction(self, conn: Any) -> bool:
        """Whether ``conn`` is inside a transaction."""
        return bool(conn.in_transaction)

    def is_timeout(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the lock was not had within the timeout (``TimeoutError``)."""
        return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))

    # ---- making and recognising a ledger
    def exists(self, target: Path, *, timeout: float) -> bool:
        """Whether something is at ``target`` (:meth:`PrivacyLedger.open` creates a ledger
        only where nothing is)."""
        return os.path.lexists(target)

    def create(self, target: Path, meta: Mapping[str, str], head_hash: str, *, timeout: float) -> None:
        """Write the new ledger in full under a temporary name in the same folder (mode
        0600), sync it, and link it to ``target``: atomic, and never over an existing file
        (``FileExistsError``)."""
        if os.path.lexists(target):
            raise FileExistsError(f"{self.describe(target)} already exists; open it with PrivacyLedger.open")
        folder = target.parent if str(target.parent) else Path(".")
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".new")
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            conn = self.connect(tmp, timeout=timeout)
            try:
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {LEDGER_FORMAT_VERSION}")
                self.begin_write(conn)
                _fill(self, conn, meta, head_hash)
                conn.execute("COMMIT")
            finally:
                conn.close()
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, target)  # atomic, and fails when target exists: never overwrites a ledger
            except FileExistsError:
                raise FileExistsError(
                    f"{self.describe(target)} already exists; open it with PrivacyLedger.open"
                ) from None
            _fsync_dir(folder)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    def preflight(self, target: Path) -> None:
        """Refuse, before connecting, what is not an SQLite file (SQLite would make an empty
        file a new database)."""
        try:
            info = os.stat(target)
        except FileNotFoundError:
            raise FileNotFoundError(f"no ledger at {self.describe(target)}") from None
        if not stat.S_ISREG(info.st_mode):
            raise LedgerFileError(f"{self.describe(target)} is not a regular file, so not a ledger")
        if info.st_size == 0:
            raise LedgerFileError(f"{self.describe(target)} is empty: not a ledger (a truncated one?)")
        with open(target, "rb") as handle:
            if handle.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
                raise LedgerFileError(f"{self.describe(target)} is not a ledger: not an SQLite database")

    def check_mark(self, conn: Any, target: Path) -> None:
        """Refuse a database that is not a ledger, is of a newer version or is damaged."""
        where = self.describe(target)
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app != APPLICATION_ID:
            raise LedgerFileError(
                f"{where} is an SQLite database but not a pystanprivacy ledger "
                f"(application_id {app:#x}, a ledger has {APPLICATION_ID:#x})"
            )
        _check_version(version, where)
        check = conn.execute("PRAGMA quick_check").fetchall()
        if check != [("ok",)]:
            raise LedgerFileError(f"{where} is a damaged database (SQLite quick_check: {len(check)} problem(s))")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        others = {row[0] for row in conn.execute("SELECT type FROM sqlite_master WHERE type NOT IN ('table', 'index')")}
        if tables != _TABLES or others:
            raise LedgerFileError(
                f"{where} does not hold exactly the ledger's tables {sorted(_TABLES)}: "
                f"tables {sorted(tables)}{', and ' + ', '.join(sorted(others)) if others else ''}"
            )


class PostgreSQLDialect(SQLiteDialect):
    """The same SQL on a PostgreSQL server, for a ledger many users share
    (``PrivacyLedger.open("postgresql://user@host/dbname", ...)``; the driver is ``psycopg``,
    the extra ``pystanprivacy[postgres]``).

    One ledger per schema: its three tables live in the connection's current schema (choose
    one with ``?options=-csearch_path%3Dmyschema`` in the URL); other tables may share the
    database. A write transaction locks the head row (``SELECT ... FOR UPDATE``) before it
    reads what others stored, so writers queue as they do on SQLite's lock; reads use one
    ``REPEATABLE READ`` snapshot. Commits are durable when they return
    (``synchronous_commit = on``); a client killed before its commit leaves nothing (the
    server rolls the transaction back). A new ledger is made in one transaction under an
    advisory lock, so two processes creating it get one. Messages name the URL without its
    password.
    """

    def __init__(self) -> None:
        self.errors = ()

    def _driver(self) -> Any:
        try:
            import psycopg
        except ImportError:
            raise ImportError(
                "a PostgreSQL ledger needs the driver psycopg: pip install 'pystanprivacy[postgres]'"
            ) from None
        self.errors = (psycopg.Error,)
        return psycopg

    def is_timeout(self, exc: BaseException) -> bool:
        import psycopg

        return isinstance(exc, psycopg.errors.LockNotAvailable)

    def target(self, where: str | os.PathLike) -> Any:
        return os.fspath(where)

    def describe(self, target: Any) -> str:
        parts = urllib.parse.urlsplit(target)
        netloc = parts.netloc.rsplit("@", 1)
        if len(netloc) == 2:
            netloc[0] = netloc[0].split(":", 1)[0]  # the user, without a password
        query = urllib.parse.urlencode(
            [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k.lower() != "password"]
        )
        return repr(urllib.parse.urlunsplit((parts.scheme, "@".join(netloc), parts.path, query, "")))

    def sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    def connect(self, target: str, *, timeout: float) -> Any:
        psycopg = self._driver()
        try:
            conn = psycopg.connect(target, autocommit=True, connect_timeout=max(1, int(timeout)))
        except psycopg.Error as exc:
            raise LedgerFileError(
                f"cannot connect to {self.describe(target)} ({type(exc).__name__}); check the server and the URL"
            ) from None
        try:
            conn.execute(f"SET lock_timeout = {int(timeout * 1000)}")
            conn.execute("SET synchronous_commit = on")
        except BaseException:
            conn.close()
            raise
        return conn

    def begin_write(self, conn: Any) -> None:
        conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        conn.execute("SELECT seq FROM ledger_head WHERE id = 1 FOR UPDATE")

    def begin_read(self, conn: Any) -> None:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def in_transaction(self, conn: Any) -> bool:
        from psycopg.pq import TransactionStatus

        return conn.info.transaction_status != TransactionStatus.IDLE

    def _tables(self, conn: Any) -> set[str]:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name IN ('ledger_meta', 'ledger_head', 'ledger_entries')"
        ).fetchall()
        return {r[0] for r in rows}

    def exists(self, target: str, *, timeout: float) -> bool:
        conn = self.connect(target, timeout=timeout)
        try:
            return bool(self._tables(conn))
        finally:
            conn.close()

    def create(self, target: str, meta: Mapping[str, str], head_hash: str, *, timeout: float) -> None:
        conn = self.connect(target, timeout=timeout)
        try:
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPLICATION_ID,))
                if self._tables(conn):
                    raise FileExistsError(
                        f"{self.describe(target)} already holds a ledger; open it with PrivacyLedger.open"
                    )
                _fill(self, conn, meta, head_hash)
                conn.execute("COMMIT")
            except BaseException:
                if self.in_transaction(conn):
                    conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()

    def preflight(self, target: str) -> None:
        if not urllib.parse.urlsplit(target).scheme.startswith("postgres"):
            raise ValueError(f"{self.describe(target)} is not a postgresql:// URL")

    def check_mark(self, conn: Any, target: str) -> None:
        where = self.describe(target)
        tables = self._tables(conn)
        if not tables:
            raise FileNotFoundError(f"no ledger at {where} (its current schema holds no ledger tables)")
        if tables != _TABLES:
            raise LedgerFileError(f"{where} holds only the ledger tables {sorted(tables)} of {sorted(_TABLES)}")
        triggers = conn.execute(
            "SELECT count(*) FROM information_schema.triggers WHERE event_object_schema = current_schema() "
            "AND event_object_table IN ('ledger_meta', 'ledger_head', 'ledger_entries')"
        ).fetchone()[0]
        if triggers:
            raise LedgerFileError(f"{where}: the ledger's tables have {triggers} trigger(s); a ledger has none")


def _fill(dialect: SQLiteDialect, conn: Any, meta: Mapping[str, str], head_hash: str) -> None:
    """Inside the creating transaction: the tables, the header and the head."""
    for statement in dialect.create_statements:
        conn.execute(statement)
    for key in _META_KEYS:
        conn.execute(dialect.sql(dialect.insert_meta), (key, meta[key]))
    conn.execute(dialect.sql(dialect.insert_head), (0, head_hash))


def _check_version(version: Any, where: str) -> None:
    try:
        number = int(version)
    except (TypeError, ValueError):
        raise LedgerFileError(f"{where} states no ledger format version ({version!r})"[:300]) from None
    if number > LEDGER_FORMAT_VERSION:
        raise LedgerFileError(
            f"{where} is a ledger of format version {number}, written by a newer pystanprivacy; "
            f"this library reads version {LEDGER_FORMAT_VERSION} only"
        )
    if number != LEDGER_FORMAT_VERSION:
        raise LedgerFileError(f"{where} states ledger format version {number}; version 1 is the first")


# --------------------------------------------------------------------------- the ledger
def _header_hash(meta: Mapping[str, str]) -> str:
    return _sha256({"header": {key: meta[key] for key in _META_KEYS}})


def _entry_hash(ledger: str, row: Mapping[str, Any], records: Any) -> str:
    return _sha256(
        {
            "ledger": ledger,
            "seq": row["seq"],
            "time": row["time"],
            "label": row["label"],
            "epsilon": row["epsilon"],
            "delta": row["delta"],
            "records": records,
            "composed": [row["composed_epsilon"], row["composed_delta"]],
            "prev": row["prev_hash"],
        }
    )


def _check_path(path: Any) -> str | os.PathLike:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    if not os.fspath(path):
        raise ValueError("path is empty; give the ledger file's name, e.g. 'budget.db', or a postgresql:// URL")
    return path


def _is_server(path: str | os.PathLike) -> bool:
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


def _check_dataset(dataset: Any) -> str:
    if not isinstance(dataset, str) or not dataset.strip():
        raise TypeError(f"dataset must be a non-empty str naming the data set, got {dataset!r}"[:200])
    return dataset


def _check_timeout(timeout: Any) -> float:
    return check_positive(timeout, "timeout")


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform opens folders
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class PrivacyLedger(PrivacyAccountant):
    """A :class:`~pystanprivacy.privacy.records.PrivacyAccountant` stored in an SQLite file or
    on a PostgreSQL server.

    Make one with :meth:`open` (or :meth:`create`), never with the constructor. It is an
    accountant: pass it as ``accountant=`` to any mechanism or model. ``spent``,
    ``remaining``, ``check``, ``ledger``, ``entries`` and ``ledger_table()`` first read what
    other processes stored; :meth:`spend` decides and stores within one locked transaction and
    returns a :class:`LedgerReference`. See the module docstring for what is guaranteed.

    Attributes
    ----------
    path : pathlib.Path or str
        The ledger file, or the ``postgresql://`` URL.
    dataset : str
        The data set whose budget it holds.
    ledger_id : str
        A random id given at creation (``uuid4``), in every entry's hash.
    """

    #: the dialect of a file path
    dialect: SQLiteDialect = SQLiteDialect()
    #: the dialect of a ``postgresql://`` URL
    server_dialect: SQLiteDialect = PostgreSQLDialect()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("make a PrivacyLedger with PrivacyLedger.open(path, ...) or PrivacyLedger.create(path, ...)")

    @classmethod
    def _dialect_for(cls, path: str | os.PathLike) -> SQLiteDialect:
        return cls.server_dialect if _is_server(path) else cls.dialect

    # ------------------------------------------------------------------ making and opening
    @classmethod
    def create(
        cls,
        path: str | os.PathLike,
        *,
        dataset: str,
        epsilon: float,
        delta: float = 0.0,
        composition: str = "basic",
        timeout: float = 60.0,
    ) -> PrivacyLedger:
        """Create a new ledger holding the budget ``(epsilon, delta)`` of ``dataset``.

        A file is written in full under a temporary name in the same folder, synced, and then
        linked to ``path``, which must not exist (``FileExistsError`` otherwise, also when
        another process created it first): a ledger is never half made. It is readable and
        writable by its owner only (mode 0600). A ``postgresql://`` URL makes the ledger's
        tables in one transaction (:class:`PostgreSQLDialect`).

        Parameters
        ----------
        path : str or os.PathLike
            A file, or a ``postgresql://`` URL.
        dataset : str
            Names the data set; :meth:`open` checks it, so one data set's budget is never
            spent on another's.
        epsilon, delta : float
            The total budget (ε finite > 0, δ in [0, 1)).
        composition : {"basic", "zcdp", "rdp", "pld"}
            The composition rule (:class:`~pystanprivacy.privacy.records.PrivacyAccountant`).
        timeout : float, default 60
            Seconds a spend waits for another process's write lock.
        """
        path = _check_path(path)
        dataset = _check_dataset(dataset)
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        composition = check_choice(composition, "composition", COMPOSITION_RULES)
        timeout = _check_timeout(timeout)
        dialect = cls._dialect_for(path)
        target = dialect.target(path)
        meta = {
            "format": LEDGER_FORMAT,
            "version": str(LEDGER_FORMAT_VERSION),
            "ledger": str(uuid.uuid4()),
            "dataset": dataset,
            "epsilon": repr(float(epsilon)),
            "delta": repr(float(delta)),
            "composition": composition,
            "created": _now(),
        }
        try:
            dialect.create(target, meta, _header_hash(meta), timeout=timeout)
        except dialect.errors as exc:
            raise LedgerFileError(f"{dialect.describe(target)}: the ledger could not be created ({exc})") from None
        return cls._load(path, timeout=timeout)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        *,
        dataset: str | None = None,
        epsilon: float | None = None,
        delta: float | None = None,
        composition: str | None = None,
        timeout: float = 60.0,
    ) -> PrivacyLedger:
        """Open the ledger at ``path`` (a file or a ``postgresql://`` URL), creating it when
        it does not exist.

        When it exists, every argument given must equal what the ledger stores (a
        ``ValueError`` names the first that differs; leave one out to accept the stored
        value), and the whole ledger is checked (hash chain, head, replay of the records:
        :class:`LedgerIntegrityError`, :class:`LedgerFileError`). When it does not exist,
        ``dataset`` and ``epsilon`` are required and :meth:`create` makes it (``delta``
        default 0, ``composition`` default ``"basic"``).
        """
        path = _check_path(path)
        timeout = _check_timeout(timeout)
        if dataset is not None:
            dataset = _check_dataset(dataset)
        if epsilon is not None:
            epsilon = check_epsilon(epsilon)
        if delta is not None:
            delta = check_delta(delta)
        if composition is not None:
            composition = check_choice(composition, "composition", COMPOSITION_RULES)
        dialect = cls._dialect_for(path)
        target = dialect.target(path)
        try:
            missing = not dialect.exists(target, timeout=timeout)
        except dialect.errors as exc:
            raise LedgerFileError(f"{dialect.describe(target)}: cannot be read ({exc})") from None
        if missing:
            if dataset is None or epsilon is None:
                raise FileNotFoundError(
                    f"no ledger at {dialect.describe(target)}; give dataset= and epsilon= to create one "
                    "(or run 'pystanprivacy budget create')"
                )
            with contextlib.suppress(FileExistsError):  # another process made it first: open theirs
                return cls.create(
                    path,
                    dataset=dataset,
                    epsilon=epsilon,
                    delta=0.0 if delta is None else delta,
                    composition="basic" if composition is None else composition,
                    timeout=timeout,
                )
        ledger = cls._load(path, timeout=timeout)
        try:
            for name, given, stored in (
                ("dataset", dataset, ledger.dataset),
                ("epsilon", epsilon, ledger.total[0]),
                ("delta", delta, ledger.total[1]),
                ("composition", composition, ledger.composition),
            ):
                if given is not None and given != stored:
                    of = "" if name == "dataset" else f" (dataset {ledger.dataset!r})"
                    raise ValueError(
                        f"{name}={given!r}, but the ledger {ledger.location} holds {name} {stored!r}{of}; "
                        f"leave {name} out to use the stored value"
                    )
        except BaseException:
            ledger.close()
            raise
        return ledger

    @classmethod
    def _load(cls, path: str | os.PathLike, *, timeout: float) -> PrivacyLedger:
        dialect = cls._dialect_for(path)
        target = dialect.target(path)
        dialect.preflight(target)
        self = cls.__new__(cls)
        self._dialect = dialect
        self._target = target
        self._where = dialect.describe(target)
        self._timeout = timeout
        self._lock = threading.Lock()
        self._conn = None
        self._pid = os.getpid()
        try:
            conn = self._connection()
            dialect.check_mark(conn, target)
            with self._transaction(write=False) as conn:
                meta = dict(self._rows(conn, dialect.select_meta))
                head = self._rows(conn, dialect.select_head)
                rows = self._rows(conn, dialect.select_entries, (0,))
            self._setup(meta)
            self._seq, self._hash = 0, self._genesis
            self._add_rows(rows, head)
        except dialect.errors as exc:
            self.close()
            raise LedgerFileError(f"{self._where} is not a readable ledger ({type(exc).__name__}: {exc})") from None
        except BaseException:
            self.close()
            raise
        return self

    def _setup(self, meta: Mapping[str, str]) -> None:
        where = self._where
        if "version" in meta:
            _check_version(meta["version"], where)
        if set(meta) != set(_META_KEYS) or meta.get("format") != LEDGER_FORMAT:
            raise LedgerIntegrityError(f"{where}: its header is not a ledger header (keys {sorted(meta)})")
        try:
            epsilon, delta = float(meta["epsilon"]), float(meta["delta"])
            PrivacyAccountant.__init__(self, epsilon, delta, composition=meta["composition"])
        except (TypeError, ValueError):
            raise LedgerIntegrityError(f"{where}: its header states no valid budget") from None
        self._meta = dict(meta)
        self._genesis = _header_hash(meta)
        self._stored: list[StoredEntry] = []
        self._broken: LedgerFileError | None = None

    # ------------------------------------------------------------------ connection
    def _connection(self) -> Any:
        """This process's connection (a forked child opens its own)."""
        if self._conn is None or self._pid != os.getpid():
            self._conn = self._dialect.connect(self._target, timeout=self._timeout)
            self._pid = os.getpid()
        return self._conn

    def _rows(self, conn: Any, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in conn.execute(self._dialect.sql(statement), params).fetchall()]

    def _run(self, conn: Any, statement: str, params: tuple[Any, ...] = ()) -> None:
        conn.execute(self._dialect.sql(statement), params)

    def close(self) -> None:
        """Close the database connection (a later call reopens it)."""
        conn, self._conn = self._conn, None
        if conn is not None and self._pid == os.getpid():
            conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self, write: bool) -> Iterator[Any]:
        conn = self._connection()
        dialect = self._dialect
        try:
            (dialect.begin_write if write else dialect.begin_read)(conn)
        except dialect.errors as exc:
            if not dialect.is_timeout(exc):
                raise
            # another process held the lock past the timeout
            if dialect.in_transaction(conn):
                with contextlib.suppress(*dialect.errors):
                    conn.execute("ROLLBACK")
            raise TimeoutError(
                f"{self._where}: could not {'lock' if write else 'read'} the ledger within "
                f"timeout={self._timeout:g} s ({exc}); nothing was charged"
            ) from None
        try:
            yield conn
            conn.execute("COMMIT")  # synced: on disk when this returns
        except BaseException:
            if dialect.in_transaction(conn):
                with contextlib.suppress(*dialect.errors):
                    conn.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ reading entries
    def _fail(self, what: str) -> LedgerIntegrityError:
        error = LedgerIntegrityError(f"{self._where}: {what}; nothing is spent from this ledger")
        self._broken = error
        return error

    def _add_rows(self, rows: list[tuple[Any, ...]], head: list[tuple[Any, ...]]) -> None:
        """Under the lock: check ``rows`` (the entries after ``self._seq``) against the hash
        chain and ``head``, and replay them through the in-memory accountant."""
        if len(head) != 1:
            raise self._fail(f"its head table holds {len(head)} rows, not 1")
        head_seq, head_hash = head[0]
        expected_last = rows[-1][0] if rows else self._seq
        if head_seq != expected_last:
            raise self._fail(
                f"its head names entry {head_seq}, but the last stored entry is {expected_last} "
                "(an entry was deleted or added)"
            )
        for values in rows:
            row = dict(zip(_ENTRY_COLUMNS, values, strict=True))
            seq = self._seq + 1
            if row["seq"] != seq:
                raise self._fail(f"entry {seq} is missing (the next stored entry is {row['seq']})")
            if row["prev_hash"] != self._hash:
                raise self._fail(f"entry {seq} does not link to entry {seq - 1} (reordered, deleted or edited)")
            try:
                for key in ("epsilon", "delta", "composed_epsilon", "composed_delta"):
                    row[key] = float(row[key])
                raw = json.loads(row["records"])
                digest = _entry_hash(self._meta["ledger"], row, raw)
            except (TypeError, ValueError):
                raise self._fail(f"entry {seq} is not readable (a column holds a value of the wrong type)") from None
            if digest != row["hash"]:
                raise self._fail(f"entry {seq} was changed after it was written (its hash does not match)")
            try:
                records = tuple(PrivacyRecord.from_dict(r) for r in raw)
                self._replay(row, records)
            except (TypeError, ValueError, ArithmeticError) as exc:
                raise self._fail(f"entry {seq} cannot be replayed ({type(exc).__name__}: {exc})") from None
            self._stored.append(StoredEntry(**{**row, "records": records}))
            self._seq, self._hash = seq, row["hash"]
        if head_hash != self._hash:
            raise self._fail(f"its head's hash is not that of entry {self._seq}")

    def _replay(self, row: Mapping[str, Any], records: tuple[PrivacyRecord, ...]) -> None:
        label = check_label(row["label"])
        eps, dlt = self._request(row["epsilon"], row["delta"])
        checked = _check_records(records or None, eps, dlt)
        fits, composed, parts, said = self._candidate(eps, dlt, checked)
        if not fits:
            raise ValueError("it does not fit the budget")
        if composed != (row["composed_epsilon"], row["composed_delta"]):
            raise ValueError(
                f"it stores the composed total {(row['composed_epsilon'], row['composed_delta'])!r}, "
                f"but its records compose to {composed!r} ({self._rule} composition)"
            )
        self._apply(eps, dlt, label, row["epsilon"], row["delta"], composed, parts, said)

    def _catch_up(self, conn: Any) -> None:
        """Under the lock, inside a transaction: read and replay what others stored."""
        if self._broken is not None:
            raise self._broken
        head = self._rows(conn, self._dialect.select_head)
        if head == [(self._seq, self._hash)]:
            return
        if self._seq:
            mine = self._rows(conn, self._dialect.select_hash, (self._seq,))
            if mine != [(self._hash,)]:
                raise self._fail(f"entry {self._seq} changed or vanished while the ledger was open")
        self._add_rows(self._rows(conn, self._dialect.select_entries, (self._seq,)), head)

    def refresh(self) -> None:
        """Read the entries other processes stored since this one last looked."""
        with self._lock:
            if self._broken is not None:
                raise self._broken
            try:
                with self._transaction(write=False) as conn:
                    self._catch_up(conn)
            except self._dialect.errors as exc:
                raise LedgerFileError(f"{self._where}: cannot read the ledger ({exc})") from None

    # ------------------------------------------------------------------ the accountant
    def spend(
        self, epsilon: float, delta: float = 0.0, *, label: str | None = None, record: Any = None
    ) -> LedgerReference:
        """Charge ``(epsilon, delta)``: one transaction, on disk before this returns.

        Arguments and refusals as :meth:`PrivacyAccountant.spend
        <pystanprivacy.privacy.records.PrivacyAccountant.spend>`; the decision is made on the
        ledger as stored (other processes' spends included), under its write lock.

        Returns
        -------
        LedgerReference
            The stored entry; the mechanisms stamp it on the release's record
            (``details["ledger"]``).

        Raises
        ------
        BudgetExceededError
            The spend does not fit what is left; nothing is stored.
        LedgerIntegrityError, LedgerFileError
            The ledger was tampered with or cannot be written; nothing is stored.
        TimeoutError
            Another process held the write lock for longer than ``timeout``; nothing is stored.
        """
        eps, dlt = self._request(epsilon, delta)
        label = check_label(label)
        records = _check_records(record, eps, dlt)
        stored = [r.to_dict() for r in records]
        _canonical(stored)  # every record is JSON: refused here, before any transaction
        with self._lock:
            if self._broken is not None:
                raise self._broken
            try:
                with self._transaction(write=True) as conn:
                    self._catch_up(conn)
                    fits, composed, parts, said = self._candidate(eps, dlt, records)
                    if not fits:
                        raise BudgetExceededError(
                            f"{self._refusal(eps, dlt, composed)}; ledger {self._where} of dataset "
                            f"{self.dataset!r}, {self._seq} entries; nothing was charged"
                        )
                    row = {
                        "seq": self._seq + 1,
                        "time": _now(),
                        "label": label,
                        "epsilon": float(epsilon),
                        "delta": float(delta),
                        "composed_epsilon": composed[0],
                        "composed_delta": composed[1],
                        "prev_hash": self._hash,
                    }
                    row["hash"] = _entry_hash(self._meta["ledger"], row, stored)
                    row["records"] = _canonical(stored)
                    self._run(conn, self._dialect.insert_entry, tuple(row[c] for c in _ENTRY_COLUMNS))
                    self._run(conn, self._dialect.update_head, (row["seq"], row["hash"]))
            except self._dialect.errors as exc:
                raise LedgerFileError(f"{self._where}: the spend was not stored ({exc})") from None
            # committed and synced: now in memory too
            self._apply(eps, dlt, label, float(epsilon), float(delta), composed, parts, said)
            self._stored.append(StoredEntry(**{**row, "records": records}))
            self._seq, self._hash = row["seq"], row["hash"]
            return LedgerReference(ledger=self.ledger_id, dataset=self.dataset, entry=row["seq"], hash=row["hash"])

    def check(self, epsilon: float, delta: float = 0.0, *, record: Any = None) -> bool:
        """Whether the spend would fit the ledger as stored now (another process may spend
        before this one does: only :meth:`spend` decides)."""
        self.refresh()
        return super().check(epsilon, delta, record=record)

    @property
    def spent(self) -> tuple[float, float]:
        """(ε, δ) spent, by every process, as stored now (see ``PrivacyAccountant.spent``)."""
        self.refresh()
        return super().spent

    @property
    def remaining(self) -> tuple[float, float]:
        """The budget less :attr:`spent`, as stored now."""
        self.refresh()
        return super().remaining

    @property
    def ledger(self) -> list[tuple[str | None, float, float]]:
        """Every stored ``(label, epsilon, delta)``, in order."""
        self.refresh()
        return super().ledger

    @property
    def entries(self) -> list[Any]:
        """Every stored spend as a :class:`~pystanprivacy.privacy.accounting.LedgerEntry`."""
        self.refresh()
        return super().entries

    @property
    def history(self) -> list[StoredEntry]:
        """Every stored entry with its time and hashes (:class:`StoredEntry`), in order."""
        self.refresh()
        with self._lock:
            return list(self._stored)

    @property
    def path(self) -> Path | str:
        """The ledger file (a ``Path``), or the ``postgresql://`` URL."""
        return self._target

    @property
    def location(self) -> str:
        """How messages name the ledger: the quoted path, or the URL without its password."""
        return self._where

    @property
    def dataset(self) -> str:
        """The data set whose budget this is."""
        return self._meta["dataset"]

    @property
    def ledger_id(self) -> str:
        """The ledger's random id (given at creation)."""
        return self._meta["ledger"]

    @property
    def created(self) -> str:
        """When the ledger was created (UTC, ISO 8601)."""
        return self._meta["created"]

    @property
    def head_hash(self) -> str:
        """The hash of the last entry (of the header when there is none): quote it to pin the
        ledger's state; any later change to an earlier entry changes every hash after it."""
        self.refresh()
        with self._lock:
            return self._hash

    def entry_of(self, release: Release | PrivacyRecord) -> StoredEntry:
        """The stored entry a release (or its record) names in ``details["ledger"]``.

        Checked: the reference names this ledger, its entry exists with the stated hash, and
        the entry stored this record as it was charged: every field equal, and every detail
        the stored record has present with the same value (post-processing may add details
        after the charge, e.g. ``local`` for the per-user reports, and the stamp adds
        ``"ledger"``).

        Raises
        ------
        ValueError
            Naming what does not match.
        """
        record = release.record if isinstance(release, Release) else release
        if not isinstance(record, PrivacyRecord):
            raise TypeError(f"release must be a Release or PrivacyRecord, got {type(release).__name__}")
        if "ledger" not in record.details:
            raise ValueError("the record names no ledger (details['ledger'] is missing)")
        ref = LedgerReference.from_dict(record.details["ledger"])
        if ref.ledger != self.ledger_id:
            raise ValueError(
                f"the record names ledger {ref.ledger!r} (dataset {ref.dataset!r}), not this one "
                f"({self.ledger_id!r}, dataset {self.dataset!r})"
            )
        history = self.history
        if ref.entry > len(history) or history[ref.entry - 1].hash != ref.hash:
            raise ValueError(f"the record names entry {ref.entry} with a hash this ledger does not hold")
        entry = history[ref.entry - 1]
        if not any(_charged_as(record, stored) for stored in entry.records):
            raise ValueError(
                f"entry {ref.entry} of the ledger stored no record with this record's mechanism, epsilon, "
                "delta, sensitivity, scale, bounds, n and neighbouring and the details it was charged with"
            )
        return entry

    def __repr__(self) -> str:
        eps, delta = self.total
        s_eps, s_delta = super().spent
        return (
            f"PrivacyLedger({self._where}, dataset={self.dataset!r}, epsilon={eps!r}, "
            f"delta={delta!r}, composition={self._rule!r}, entries={self._seq}, spent=({s_eps!r}, {s_delta!r}))"
        )


def _charged_as(record: PrivacyRecord, stored: PrivacyRecord) -> bool:
    """Whether ``record`` is ``stored`` with (at most) details added after the charge."""
    same = all(
        getattr(record, f.name) == getattr(stored, f.name) for f in dataclasses.fields(stored) if f.name != "details"
    )
    return same and all(key in record.details and record.details[key] == v for key, v in stored.details.items())


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")
