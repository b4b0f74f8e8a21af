"""The PostgreSQL database the tests use: its URLs and a way to empty it between tests.

``make test`` prepares it with ``scripts/postgres-ci.sh``. Nothing here skips: a test that
cannot reach PostgreSQL fails, naming the URL.
"""

from __future__ import annotations

import os

import psycopg

from kenning.store.postgres.schema import TENANT_TABLES
from kenning.store.postgres.store import PostgresStore

__all__ = ["PG_APP_URL", "PG_URL", "fresh_postgres"]

PG_URL = os.environ.get(
    "KENNING_TEST_PG_URL", "postgresql://kenning:kenning@127.0.0.1:5432/kenning_test"
)
PG_APP_URL = os.environ.get(
    "KENNING_TEST_PG_APP_URL", "postgresql://kenning_app:kenning_app@127.0.0.1:5432/kenning_test"
)

_migrated = False


def fresh_postgres() -> None:
    """Migrate the test database once, then empty every kenning table (as the tables' owner,
    which row-level security does not confine)."""
    global _migrated
    if not _migrated:
        PostgresStore(PG_URL).close()
        _migrated = True
    tables = ", ".join((*TENANT_TABLES, "embedding_model"))
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {tables}")
