"""Connections of the SQLite store: one writer, a reader per thread, atomic transactions.

Every transaction names the scope it serves, and a scope naming a session and a user is
checked against the session's owner inside the transaction: another user's session id answers
:class:`~kenning.errors.ScopeConflict` on every read and write path. A write that puts
working-context state into a session claims it for its user when it is new.

A database file is opened in WAL mode. Writes go through one connection, one transaction at a
time (``BEGIN IMMEDIATE``, committed whole or rolled back). Each thread reads through its own
connection, inside a read transaction that sees one committed state: a writer waiting for the
file lock (another process is writing) never blocks a search, and searches of several threads
run at once. An in-memory database has no other process and one connection: reads and writes
share it under one lock.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from kenning.errors import InvalidInput, StoreError
from kenning.records import Scope
from kenning.store.records import ModelInfo
from kenning.store.sql.database import SqlDatabase, check_owner, check_owner_once, traced_tx
from kenning.store.sql.dialect import Tx
from kenning.store.sql.vectors import stored_model
from kenning.store.sqlite.cross import CROSS_TENANT
from kenning.store.sqlite.failures import write_failure
from kenning.store.sqlite.fts import purge_fts, scope_terms
from kenning.store.sqlite.schema import PAGE_SIZE, check_owned, migrate
from kenning.store.sqlite.sql import DIALECT

__all__ = ["Database"]


def _connect(path: str, timeout_s: float, *, first: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=timeout_s)
    if first and path != ":memory:":
        try:
            check_owned(conn, path)
        except BaseException:
            conn.close()
            raise
    if path != ":memory:":
        if first and int(conn.execute("PRAGMA page_count").fetchone()[0]) == 0:
            # A new file: its page size is fixed once the first page is written.
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Erased rows are overwritten on disk, not just unlinked.
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
    return conn


def _open_migrated(path: str, timeout_s: float) -> sqlite3.Connection:
    """The store's write connection, its file migrated. Two processes opening one new file at
    once can see "database is locked" without SQLite's busy handler running (the switch to
    WAL and the first reads of the new log): the open is tried again until *timeout_s*; each
    migration is its own checked transaction, so a retry applies only what is missing."""
    deadline = time.monotonic() + timeout_s
    while True:
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path, timeout_s, first=True)
            migrate(conn)
            return conn
        except sqlite3.OperationalError as exc:
            if conn is not None:
                conn.close()
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise StoreError(f"cannot open SQLite database {path!r}: {exc}") from exc
            time.sleep(0.05)
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise StoreError(f"cannot open SQLite database {path!r}: {exc}") from exc
        except BaseException:
            if conn is not None:
                conn.close()
            raise


class Database(SqlDatabase):
    """The connections of one SQLite store and the transactions over them."""

    _d = DIALECT
    _cross = CROSS_TENANT
    # The scope's tokens, so an FTS5 query can carry its scope inside MATCH.
    _extra_item_columns = ("scope_terms",)

    def __init__(self, path: str | Path, *, timeout_s: float) -> None:
        self._path = str(path)
        if self._path != ":memory:" and Path(self._path).is_dir():
            raise InvalidInput(f"{self._path} is a directory, not a database file")
        self._timeout_s = timeout_s
        self._wlock = threading.RLock()
        self._closed = False
        self._local = threading.local()
        # Each reading thread's connection, keyed by its thread: a pool that starts a thread
        # per burst of work (the fact workers) would otherwise leave one open connection, its
        # file handles and its page cache behind per burst.
        self._readers: dict[threading.Thread, sqlite3.Connection] = {}
        self._readers_lock = threading.Lock()
        self._known_model: ModelInfo | None = None
        self._conn = _open_migrated(self._path, timeout_s)

    @property
    def path(self) -> str:
        return self._path

    def _item_extras(self, scope: Scope, role: str, kind: str) -> tuple[object, ...]:
        return (scope_terms(scope.tenant, scope.user, scope.session, role, kind),)

    def _after_erase(self, tenant: str, erased: int) -> None:
        if erased:
            # An FTS5 delete only records a tombstone: merging drops the erased words.
            with self._write(None) as conn:
                purge_fts(conn)
        # Erased text (events, or the pins and summaries of an emptied session) must not
        # linger in the write-ahead log either.
        self._checkpoint()

    @property
    def in_memory(self) -> bool:
        return self._path == ":memory:"

    def _reader_conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self._path, self._timeout_s)
            conn.execute("PRAGMA query_only = ON")
            with self._readers_lock:
                if self._closed:
                    conn.close()
                    raise StoreError("the store is closed")
                self._close_finished_readers()
                self._readers[threading.current_thread()] = conn
            self._local.conn = conn
        return conn

    @contextmanager
    @traced_tx("kenning.store.read")
    def _read(self, scope: Scope | None) -> Iterator[sqlite3.Connection]:
        """A read transaction for *scope* (None: the store's own bookkeeping, no tenant data):
        every statement inside sees the same committed state, and the scope's session
        belongs to the scope's user."""
        if self._closed:
            raise StoreError("the store is closed")
        nested: sqlite3.Connection | None = getattr(self._local, "open_read", None)
        if nested is not None:
            check_owner_once(nested, DIALECT, scope, self._local.checked)
            yield nested  # already inside this thread's read transaction
            return
        if self.in_memory:
            with self._wlock:
                if self._closed:
                    raise StoreError("the store is closed")
                try:
                    check_owner(self._conn, DIALECT, scope)
                    yield self._conn
                except sqlite3.Error as exc:
                    raise StoreError(f"SQLite read failed: {exc}") from exc
            return
        try:
            conn = self._reader_conn()
            conn.execute("BEGIN")
            # Read before the snapshot is taken, so it is never newer than what is seen.
            self._local.version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite read failed: {exc}") from exc
        self._local.open_read = conn
        self._local.checked = set()
        try:
            check_owner_once(conn, DIALECT, scope, self._local.checked)
            yield conn
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite read failed: {exc}") from exc
        finally:
            self._local.open_read = None
            try:
                conn.execute("COMMIT")
            except sqlite3.Error:  # pragma: no cover - ending a read transaction rarely fails
                conn.rollback()

    @contextmanager
    @traced_tx("kenning.store.write")
    def _write(
        self, scope: Scope | None, *, claim: bool = False, exclusive: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """One atomic transaction for *scope*: commit on success, roll back on any exception.

        The scope's session must belong to its user; with *claim* a new session becomes the
        user's (see :func:`~kenning.store.sql.database.check_owner`). Every write is
        *exclusive*: one writer at a time.
        """
        with self._wlock:
            if self._closed:
                raise StoreError("the store is closed")
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite could not start a transaction: {exc}") from exc
            try:
                check_owner(conn, DIALECT, scope, claim=claim)
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                # SQLite may have rolled back already (a full disk, an I/O error): a ROLLBACK
                # then fails, and must not hide why the write failed.
                if conn.in_transaction:
                    with suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise write_failure(exc, self._path) from exc
                raise

    def _read_version(self, conn: Tx) -> int:
        """A number that changes whenever another connection commits (PRAGMA data_version),
        taken at the start of this thread's current read transaction."""
        if conn is self._conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])
        return int(self._local.version)

    def _model_in(self, conn: Tx) -> ModelInfo | None:
        """The stored embedding model as *conn* sees it. The row is written once and never
        changed, so once a reader connection (query-only: what it sees is committed) has seen
        it, it is remembered: searches then skip a statement per call."""
        known = self._known_model
        if known is None:
            known = stored_model(conn)
            if conn is not self._conn:
                self._known_model = known
        return known

    def _checkpoint(self) -> None:
        """Fold the write-ahead log into the file and truncate it (erased text must not
        linger there)."""
        if self.in_memory:
            return
        with self._wlock:
            try:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite checkpoint failed: {exc}") from exc

    def _close_finished_readers(self) -> None:
        """Close the connections of threads that have ended (under ``_readers_lock``)."""
        for thread in [t for t in self._readers if not t.is_alive()]:
            self._readers.pop(thread).close()

    def _close_connections(self) -> None:
        with self._wlock, self._readers_lock:
            self._closed = True
            try:
                for conn in self._readers.values():
                    conn.close()
                self._readers.clear()
                self._conn.close()
            except sqlite3.Error as exc:  # pragma: no cover - close rarely fails
                raise StoreError(f"closing SQLite failed: {exc}") from exc
