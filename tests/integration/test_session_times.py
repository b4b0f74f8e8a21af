"""Stores made before sessions recorded their events' times get them from their events."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from kenning.records import NewEvent, Scope
from kenning.store.postgres.store import PostgresStore
from kenning.store.records import EventWrite
from kenning.store.sqlite.store import SQLiteStore
from tests.pg import PG_URL, fresh_postgres

T0 = datetime(2024, 3, 1, tzinfo=UTC)
ANN = Scope("acme", "ann")


def _writes() -> list[EventWrite]:
    return [
        EventWrite(Scope("acme", "ann", session), NewEvent("user", text, at=T0 + timedelta(days=d)))
        for session, text, d in (("s1", "late", 9), ("s1", "early", 2), ("s2", "only", 5))
    ]


def _spans(store: SQLiteStore | PostgresStore) -> dict[str, tuple[datetime | None, ...]]:
    return {s.session: (s.first_at, s.last_at) for s in store.user_sessions(ANN)}


EXPECTED = {
    "s1": (T0 + timedelta(days=2), T0 + timedelta(days=9)),
    "s2": (T0 + timedelta(days=5), T0 + timedelta(days=5)),
}


def test_sqlite_migration_0013_reads_the_times_from_the_events(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        store.append_events(_writes())
    # Back to the schema before 0013: no time columns, the migration not applied.
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN first_at")
        conn.execute("ALTER TABLE sessions DROP COLUMN last_at")
        conn.execute("DELETE FROM migrations WHERE name = '0013_session_times'")
    with SQLiteStore(path) as store:
        assert _spans(store) == EXPECTED


def test_postgres_migration_0007_reads_the_times_from_the_events() -> None:
    fresh_postgres()
    with PostgresStore(PG_URL) as store:
        store.append_events(_writes())
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute("UPDATE sessions SET first_at = NULL, last_at = NULL")
        conn.execute("DELETE FROM kenning_migrations WHERE name = '0007_session_times'")
        conn.execute("ALTER TABLE sessions DROP COLUMN first_at, DROP COLUMN last_at")
    with PostgresStore(PG_URL) as store:  # migrates: the columns are back, filled
        assert _spans(store) == EXPECTED
