"""The compaction queue of the SQLite store: persisted, one open job per session, leased.

A mixin of :class:`~kenning.store.sqlite.store.SQLiteStore`. A claim writes a fresh lease
token with the lease's end; renewing or finishing names that token, so once a job was taken
over (its lease ran out) the old holder's calls change nothing. Claims run inside
``BEGIN IMMEDIATE``, so two processes on one file never claim the same job.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import CompactionJob, JobStatus, QueueStats, Scope
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.sql import scope_sql, ts

__all__ = ["JobTables"]

_JOB_COLUMNS = (
    "rowid, tenant, user_id, session, model, budget, reason, status, attempts, created_at, error,"
    " lease"
)


def _job(row: Sequence[Any]) -> CompactionJob:
    return CompactionJob(
        id=int(row[0]), scope=Scope(row[1], row[2], row[3]), model=row[4], budget=int(row[5]),
        reason=row[6], status=JobStatus(row[7]), attempts=int(row[8]), created_at=ts(row[9]),
        error=row[10], lease=row[11],
    )  # fmt: skip


class JobTables(Database):
    """Compaction jobs: enqueue, claim with a lease, renew, finish."""

    def enqueue_compaction(
        self, scope: Scope, *, model: str, budget: int, reason: str, at: datetime
    ) -> CompactionJob | None:
        scope = scope.require_session()
        with self._write(scope, claim=True) as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO compaction_jobs (tenant, user_id, session, model, budget,"
                " reason, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scope.tenant, scope.user, scope.session, model, budget, reason,
                    JobStatus.PENDING.value, at.timestamp(), at.timestamp(),
                ),
            )  # fmt: skip
            if not cur.rowcount:
                return None
            row = conn.execute(
                f"SELECT {_JOB_COLUMNS} FROM compaction_jobs WHERE rowid = ?", (cur.lastrowid,)
            ).fetchone()
        return _job(row)

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        """Take the oldest pending job (or one whose worker died: its lease ran out)."""
        now = at.timestamp()
        lease = secrets.token_hex(8)
        with self._write(None) as conn:
            row = conn.execute(
                f"SELECT {_JOB_COLUMNS} FROM compaction_jobs WHERE status = 'pending'"
                " OR (status = 'running' AND lease_until < ?) ORDER BY rowid LIMIT 1",
                (now,),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE compaction_jobs SET status = 'running', attempts = attempts + 1,"
                " lease_until = ?, lease = ?, updated_at = ? WHERE rowid = ?",
                (now + lease_s, lease, now, row[0]),
            )
        job = _job(row)
        return CompactionJob(
            id=job.id, scope=job.scope, model=job.model, budget=job.budget, reason=job.reason,
            status=JobStatus.RUNNING, attempts=job.attempts + 1, created_at=job.created_at,
            lease=lease,
        )  # fmt: skip

    def renew_compaction(self, job_id: int, *, lease: str, at: datetime, lease_s: float) -> bool:
        with self._write(None) as conn:
            cur = conn.execute(
                "UPDATE compaction_jobs SET lease_until = ?, updated_at = ?"
                " WHERE rowid = ? AND status = 'running' AND lease = ?",
                (at.timestamp() + lease_s, at.timestamp(), job_id, lease),
            )
        return bool(cur.rowcount)

    def finish_compaction(
        self,
        job_id: int,
        *,
        status: JobStatus,
        at: datetime,
        error: str | None = None,
        lease: str | None = None,
    ) -> bool:
        fence = "" if lease is None else " AND status = 'running' AND lease = ?"
        params: tuple[Any, ...] = (status.value, error, at.timestamp(), job_id)
        with self._write(None) as conn:
            cur = conn.execute(
                "UPDATE compaction_jobs SET status = ?, error = ?, lease_until = NULL,"
                f" lease = NULL, updated_at = ? WHERE rowid = ?{fence}",
                params if lease is None else (*params, lease),
            )
        return bool(cur.rowcount)

    def compaction_jobs(self, scope: Scope) -> list[CompactionJob]:
        where, params = scope_sql(scope)
        with self._read(scope) as conn:
            rows = conn.execute(
                f"SELECT {_JOB_COLUMNS} FROM compaction_jobs WHERE {where} ORDER BY rowid", params
            ).fetchall()
        return [_job(r) for r in rows]

    def pending_compactions(self) -> int:
        with self._read(None) as conn:
            row = conn.execute(
                "SELECT count(*) FROM compaction_jobs WHERE status IN ('pending', 'running')"
            ).fetchone()
        return int(row[0])

    def queue_stats(self) -> QueueStats:
        with self._read(None) as conn:
            row = conn.execute(
                "SELECT coalesce(sum(status = 'pending'), 0), coalesce(sum(status = 'running'), 0),"
                " min(CASE WHEN status = 'pending' THEN created_at END)"
                " FROM compaction_jobs WHERE status IN ('pending', 'running')"
            ).fetchone()
        return QueueStats(
            pending=int(row[0]),
            running=int(row[1]),
            oldest_pending=None if row[2] is None else ts(row[2]),
        )
