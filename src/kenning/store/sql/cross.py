"""Statements that reach across tenants: the store's own machinery (the compaction and fact
extraction queues, API keys looked up before the tenant is known), not reads of tenant data.

The rules around them are written once (:mod:`kenning.store.sql.jobs`, ``facts``, ``keys``);
each backend gives the statements: SQLite runs them on its tables, PostgreSQL calls
``SECURITY DEFINER`` functions, the only way row-level security lets them through, which
return queue and key fields only. Parameters are listed in the order each statement takes
them; times are the dialect's (:meth:`~kenning.store.sql.dialect.Dialect.time`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["JOB_COLUMNS", "KEY_COLUMNS", "CrossTenant"]

JOB_COLUMNS = (
    "rowid, tenant, user_id, session, model, budget, reason, status, attempts, created_at, error,"
    " lease"
)
KEY_COLUMNS = "id, tenant, name, scopes, created_at, revoked_at, secret_hash"


@dataclass(frozen=True, slots=True)
class JobSql:
    """The compaction queue."""

    claim: str
    """(at, lease seconds, lease token): the claimed job's :data:`JOB_COLUMNS`, or no row."""
    renew: str
    """(job id, lease token, at, lease seconds): a row whose first value is true if renewed."""
    finish: str
    """(job id, status, at, error, lease token or NULL): a row, first value true if recorded."""
    pending: str
    """(): one row, the number of pending and running jobs."""
    stats: str
    """(): one row, (pending, running, when the oldest pending job was queued)."""


@dataclass(frozen=True, slots=True)
class ExtractionSql:
    """The queue of sessions with events not yet read for facts."""

    pending: str
    """(limit): rows of (tenant, user, session, events read, last event)."""
    claim: str
    """(at, lease seconds, lease token): the claimed session as a row like :attr:`pending`, or
    no row."""
    stats: str
    """(): one row, (sessions waiting, sessions held, when the oldest unread event came)."""


@dataclass(frozen=True, slots=True)
class KeySql:
    """API keys, looked up before the tenant is known."""

    by_id: str
    """(key id): the key's :data:`KEY_COLUMNS`, or no row."""
    of_tenant: str
    """(tenant or NULL for all): every key's :data:`KEY_COLUMNS`, oldest first."""
    revoke: str
    """(key id, at): the key's :data:`KEY_COLUMNS` once revoked (the first revocation's time
    stays), or no row."""


@dataclass(frozen=True, slots=True)
class CrossTenant:
    """One backend's statements across tenants."""

    jobs: JobSql
    extraction: ExtractionSql
    keys: KeySql
