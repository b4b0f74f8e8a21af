"""The SQLite store's statements across tenants (:class:`~kenning.store.sql.cross.CrossTenant`):
on its own tables, inside the single writer's transaction, so two processes on one file never
claim the same job or session. Numbered parameters (``?1``) take them in the shared order."""

from __future__ import annotations

from kenning.store.sql import cross

__all__ = ["CROSS_TENANT"]

# A session with events not yet read for facts, and its progress row if any.
_UNREAD = (
    "FROM sessions s LEFT JOIN extraction_progress p"
    " ON p.tenant = s.tenant AND p.session = s.session"
    " WHERE s.last_seq > coalesce(p.done_seq, 0)"
)

CROSS_TENANT = cross.CrossTenant(
    jobs=cross.JobSql(
        claim=(
            "UPDATE compaction_jobs SET status = 'running', attempts = attempts + 1,"
            " lease_until = ?1 + ?2, lease = ?3, updated_at = ?1 WHERE rowid = (SELECT rowid"
            " FROM compaction_jobs WHERE status = 'pending'"
            " OR (status = 'running' AND lease_until < ?1) ORDER BY rowid LIMIT 1)"
            f" RETURNING {cross.JOB_COLUMNS}"
        ),
        renew=(
            "UPDATE compaction_jobs SET lease_until = ?3 + ?4, updated_at = ?3"
            " WHERE rowid = ?1 AND status = 'running' AND lease = ?2 RETURNING 1"
        ),
        finish=(
            "UPDATE compaction_jobs SET status = ?2, error = ?4, lease_until = NULL, lease = NULL,"
            " updated_at = ?3 WHERE rowid = ?1"
            " AND (?5 IS NULL OR (status = 'running' AND lease = ?5)) RETURNING 1"
        ),
        pending=("SELECT count(*) FROM compaction_jobs WHERE status IN ('pending', 'running')"),
        stats=(
            "SELECT coalesce(sum(status = 'pending'), 0), coalesce(sum(status = 'running'), 0),"
            " min(CASE WHEN status = 'pending' THEN created_at END)"
            " FROM compaction_jobs WHERE status IN ('pending', 'running')"
        ),
    ),
    extraction=cross.ExtractionSql(
        pending=(
            "SELECT s.tenant, s.user_id, s.session, coalesce(p.done_seq, 0), s.last_seq"
            f" {_UNREAD} LIMIT ?1"
        ),
        claim=(
            "INSERT INTO extraction_progress (tenant, session, user_id, done_seq, lease_until,"
            " attempts, lease) SELECT s.tenant, s.session, s.user_id, coalesce(p.done_seq, 0),"
            f" ?1 + ?2, 1, ?3 {_UNREAD} AND (p.lease_until IS NULL OR p.lease_until < ?1)"
            " ORDER BY s.created_at LIMIT 1 ON CONFLICT (tenant, session) DO UPDATE"
            " SET lease_until = excluded.lease_until, attempts = attempts + 1,"
            " lease = excluded.lease RETURNING tenant, user_id, session, done_seq,"
            " (SELECT last_seq FROM sessions s WHERE s.tenant = extraction_progress.tenant"
            " AND s.session = extraction_progress.session)"
        ),
        stats=(
            "SELECT coalesce(sum(p.lease IS NULL), 0), coalesce(sum(p.lease IS NOT NULL), 0),"
            " min(i.created_at) FROM sessions s LEFT JOIN extraction_progress p"
            " ON p.tenant = s.tenant AND p.session = s.session"
            " LEFT JOIN items i ON i.kind = 'event' AND i.tenant = s.tenant"
            " AND i.session = s.session AND i.seq = coalesce(p.done_seq, 0) + 1"
            " WHERE s.last_seq > coalesce(p.done_seq, 0)"
        ),
    ),
    keys=cross.KeySql(
        by_id=f"SELECT {cross.KEY_COLUMNS} FROM api_keys WHERE id = ?1",
        of_tenant=(
            f"SELECT {cross.KEY_COLUMNS} FROM api_keys WHERE ?1 IS NULL OR tenant = ?1"
            " ORDER BY created_at, id"
        ),
        revoke=(
            "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1"
            f" RETURNING {cross.KEY_COLUMNS}"
        ),
    ),
)
