"""The compaction queue of the SQLite store: persisted, one open job per session, leased.

A mixin of :class:`~kenning.store.sqlite.store.SQLiteStore`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import CompactionJob, JobStatus, Scope
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.sql import scope_sql, ts

__all__ = ["JobTables"]

_JOB_COLUMNS = (
    "rowid, tenant, user, session, model, budget, reason, status, attempts, created_at, error"
)


def _job(row: Sequence[Any]) -> CompactionJob:
    return CompactionJob(
        id=int(row[0]), scope=Scope(row[1], row[2], row[3]), model=row[4], budget=int(row[5]),
        reason=row[6], status=JobStatus(row[7]), attempts=int(row[8]), created_at=ts(row[9]),
        error=row[10],
    )  # fmt: skip


class JobTables(Database):
    """Compaction jobs: enqueue, claim with a lease, finish."""

    def enqueue_compaction(
        self, scope: Scope, *, model: str, budget: int, reason: str, at: datetime
    ) -> CompactionJob | None:
        scope = scope.require_session()
        with self._write(scope, claim=True) as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO compaction_jobs (tenant, user, session, model, budget,"
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
                " lease_until = ?, updated_at = ? WHERE rowid = ?",
                (now + lease_s, now, row[0]),
            )
        job = _job(row)
        return CompactionJob(
            id=job.id, scope=job.scope, model=job.model, budget=job.budget, reason=job.reason,
            status=JobStatus.RUNNING, attempts=job.attempts + 1, created_at=job.created_at,
        )  # fmt: skip

    def finish_compaction(
        self, job_id: int, *, status: JobStatus, at: datetime, error: str | None = None
    ) -> None:
        with self._write(None) as conn:
            conn.execute(
                "UPDATE compaction_jobs SET status = ?, error = ?, lease_until = NULL,"
                " updated_at = ? WHERE rowid = ?",
                (status.value, error, at.timestamp(), job_id),
            )

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
