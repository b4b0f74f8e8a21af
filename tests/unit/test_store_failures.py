"""Driver errors become kenning's: an unreachable database is StoreUnavailable (503, with
Retry-After), a full disk StorageFull (507), anything else a StoreError. Every error here is
a real one, raised by SQLite or by PostgreSQL (the shared test cluster)."""

from __future__ import annotations

import resource
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kenning.errors import InvalidInput, StorageFull, StoreError, StoreUnavailable
from kenning.store.sqlite.failures import LOW_ROOM_BYTES, write_failure

if TYPE_CHECKING:
    import psycopg

# The PostgreSQL tests import the driver inside: the fast lane (no PostgreSQL) loads none of it.


def _raised(action: Callable[[], object]) -> Exception:
    try:
        action()
    except Exception as exc:
        return exc
    raise AssertionError("nothing was raised")


def _filler(conn: sqlite3.Connection) -> Callable[[], object]:
    def fill() -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS t (x BLOB)")
        for _ in range(10_000):
            conn.execute("INSERT INTO t VALUES (zeroblob(65536))")

    return fill


def test_sqlite_full_is_storage_full(tmp_path: Path) -> None:
    path = str(tmp_path / "full.db")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA max_page_count = 64")  # SQLite's own "database or disk is full"
    exc = _raised(_filler(conn))
    assert isinstance(exc, sqlite3.OperationalError)
    assert exc.sqlite_errorcode == sqlite3.SQLITE_FULL
    err = write_failure(exc, path)
    assert isinstance(err, StorageFull) and err.http_status == 507
    assert err.code == "storage_full" and "intact" in err.message


def test_an_io_error_at_the_file_size_limit_is_storage_full(tmp_path: Path) -> None:
    path = str(tmp_path / "limited.db")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x BLOB)")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    # Python ignores SIGXFSZ: past the limit a write fails with EFBIG, which SQLite reports as
    # SQLITE_IOERR, not SQLITE_FULL.
    resource.setrlimit(resource.RLIMIT_FSIZE, (2 * LOW_ROOM_BYTES, hard))
    try:
        exc = _raised(_filler(conn))
        assert isinstance(exc, sqlite3.OperationalError)
        assert exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_IOERR
        assert isinstance(write_failure(exc, path), StorageFull)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    # The same I/O error with room to spare is a failed store, not a full one.
    plain = write_failure(exc, path)
    assert type(plain) is StoreError and plain.http_status == 500


def test_other_sqlite_errors_stay_store_errors(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE t (x PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    exc = _raised(lambda: conn.execute("INSERT INTO t VALUES (1)"))
    assert isinstance(exc, sqlite3.IntegrityError)
    assert type(write_failure(exc, str(tmp_path / "x.db"))) is StoreError


@pytest.mark.postgres
def test_a_refused_connection_is_store_unavailable() -> None:
    import psycopg

    from kenning.store.postgres.failures import connection_lost, translate

    with socket.socket() as bound:  # bound, never listening: connecting is refused
        bound.bind(("127.0.0.1", 0))
        url = f"postgresql://k:k@127.0.0.1:{bound.getsockname()[1]}/k"
        exc = _raised(lambda: psycopg.connect(url, connect_timeout=5))
    assert isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None
    assert connection_lost(exc)
    err = translate(exc, "reading")
    assert isinstance(err, StoreUnavailable) and err.http_status == 503
    assert err.retry_after is not None and 1 <= err.retry_after <= 5


def test_a_terminated_session_is_store_unavailable(pg_url: str) -> None:
    import psycopg

    from kenning.store.postgres.failures import translate

    with (
        psycopg.connect(pg_url, autocommit=True) as victim,
        psycopg.connect(pg_url, autocommit=True) as admin,
    ):
        admin.execute("SELECT pg_terminate_backend(%s)", (victim.info.backend_pid,))
        ended = _raised(lambda: victim.execute("SELECT 1"))
        closed = _raised(lambda: victim.execute("SELECT 1"))
    assert isinstance(ended, psycopg.errors.AdminShutdown)  # 57P01
    assert isinstance(closed, psycopg.OperationalError) and closed.sqlstate is None
    for exc in (ended, closed):
        assert isinstance(exc, psycopg.Error)
        assert isinstance(translate(exc, "writing"), StoreUnavailable)


def _server_error(pg_url: str, errcode: str) -> psycopg.Error:
    """The error PostgreSQL itself sends for condition *errcode*."""
    import psycopg

    statement = f"DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '{errcode}'; END $$"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        exc = _raised(lambda: conn.execute(statement))
    assert isinstance(exc, psycopg.Error)
    return exc


@pytest.mark.parametrize(
    ("errcode", "expected"),
    [
        ("admin_shutdown", StoreUnavailable),
        ("crash_shutdown", StoreUnavailable),
        ("cannot_connect_now", StoreUnavailable),
        ("too_many_connections", StoreUnavailable),
        ("connection_failure", StoreUnavailable),
        ("disk_full", StorageFull),
        ("invalid_text_representation", InvalidInput),
        ("unique_violation", StoreError),
        ("query_canceled", StoreError),
        ("out_of_memory", StoreError),
    ],
)
def test_postgresql_conditions_translate(pg_url: str, errcode: str, expected: type) -> None:
    from kenning.store.postgres.failures import connection_lost, translate

    err = translate(_server_error(pg_url, errcode), "writing")
    assert type(err) is expected, (errcode, err)
    assert connection_lost(_server_error(pg_url, errcode)) is (expected is StoreUnavailable)
