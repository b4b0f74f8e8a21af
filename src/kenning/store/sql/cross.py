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
class CrossTenant:
    """One backend's statements across tenants."""

    #: (at, lease seconds, lease token): the claimed job's :data:`JOB_COLUMNS`, or no row.
    claim_compaction: str
    #: (job id, lease token, at, lease seconds): a row whose first value is true if renewed.
    renew_compaction: str
    #: (job id, status, at, error, lease token or NULL): a row, first value true if recorded.
    finish_compaction: str
    #: (): one row, the number of pending and running jobs.
    pending_compactions: str
    #: (): one row, (pending, running, when the oldest pending job was queued).
    queue_stats: str
    #: (limit): rows of (tenant, user, session, events read, last event) to read for facts.
    pending_extractions: str
    #: (at, lease seconds, lease token): the claimed session as a row like
    #: :attr:`pending_extractions`, or no row.
    claim_extraction: str
    #: (): one row, (sessions waiting, sessions held, when the oldest unread event came).
    extraction_stats: str
    #: (key id): the key's :data:`KEY_COLUMNS`, or no row.
    api_key: str
    #: (tenant or NULL for all): every key's :data:`KEY_COLUMNS`, oldest first.
    api_keys: str
    #: (key id, at): the key's :data:`KEY_COLUMNS` once revoked (the first revocation's time
    #: stays), or no row.
    revoke_api_key: str
