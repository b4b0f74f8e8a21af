"""The Citus cluster the tests use: its URLs, a way to empty it, and a superuser connection.

``make test`` starts the cluster (``scripts/citus-ci.sh``: a coordinator and two workers) and
sets ``KENNING_TEST_CITUS_URL`` (the coordinator, as the role that owns kenning's tables) and
``KENNING_REQUIRE_CITUS``: there a test that cannot reach the cluster fails. Elsewhere, without
the URL, the Citus tests skip (the cluster takes a 13-minute build to set up).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from kenning.store.postgres.schema import TENANT_TABLES
from kenning.store.postgres.store import PostgresStore

__all__ = ["citus_admin_url", "citus_app_url", "citus_url", "fresh_citus"]

_migrated: set[str] = set()


def citus_url() -> str:
    """The coordinator's URL (the tables' owner), or a skip/failure when none is set."""
    url = os.environ.get("KENNING_TEST_CITUS_URL", "")
    if url:
        return url
    why = "KENNING_TEST_CITUS_URL is not set (scripts/citus-ci.sh starts the cluster)"
    if os.environ.get("KENNING_REQUIRE_CITUS"):
        pytest.fail(why)
    pytest.skip(why)


def _as_user(url: str, user: str, password: str | None) -> str:
    parts = urlsplit(url)
    auth = user if password is None else f"{user}:{password}"
    return urlunsplit(parts._replace(netloc=f"{auth}@{parts.hostname}:{parts.port or 5432}"))


def citus_app_url() -> str:
    """The coordinator logged in as the application role (row-level security applies)."""
    return os.environ.get("KENNING_TEST_CITUS_APP_URL") or _as_user(
        citus_url(), "kenning_app", "kenning_app"
    )


def citus_admin_url() -> str:
    """The coordinator as the superuser (moving shards), trusted on 127.0.0.1 there."""
    return _as_user(citus_url(), "postgres", None)


def fresh_citus() -> str:
    """Migrate the cluster's database once (which distributes the tables), then empty every
    kenning table as their owner; return the owner's URL."""
    url = citus_url()
    if url not in _migrated:
        PostgresStore(url).close()
        _migrated.add(url)
    tables = ", ".join((*TENANT_TABLES, "embedding_model"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"TRUNCATE {tables}")
    return url
