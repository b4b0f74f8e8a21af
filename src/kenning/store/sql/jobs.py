"""The compaction queue's writes and reads within a tenant, on every SQL backend: at most one
open job per session.

Claiming, renewing and finishing a job reach across tenants (the queue is the store's own
machinery, not a read of tenant data), which each backend does its own way: SQLite's single
writer, PostgreSQL's ``FOR UPDATE SKIP LOCKED`` behind functions that row-level security lets
through. A claim writes a fresh lease token; renewing or finishing names it, so once a job was
taken over (its lease ran out) the old holder's calls change nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import CompactionJob, JobStatus, Scope
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.query import scope_sql

__all__ = ["JOB_COLUMNS", "JobTables"]

JOB_COLUMNS = (
    "rowid, tenant, user_id, session, model, budget, reason, status, attempts, created_at, error,"
    " lease"
)


class JobTables(SqlDatabase):
    """Compaction jobs: enqueue, and a scope's jobs (claims are the backend's)."""

    def _job(self, row: Sequence[Any]) -> CompactionJob:
        return CompactionJob(
            id=int(row[0]), scope=Scope(row[1], row[2], row[3]), model=row[4],
            budget=int(row[5]), reason=row[6], status=JobStatus(row[7]), attempts=int(row[8]),
            created_at=self._d.read_time(row[9]), error=row[10], lease=row[11],
        )  # fmt: skip

    def enqueue_compaction(
        self, scope: Scope, *, model: str, budget: int, reason: str, at: datetime
    ) -> CompactionJob | None:
        scope = scope.require_session()
        with self._write(scope, claim=True) as tx:
            row = tx.execute(
                "INSERT INTO compaction_jobs (tenant, user_id, session, model, budget, reason,"
                " status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT DO NOTHING RETURNING {JOB_COLUMNS}",
                (
                    scope.tenant, scope.user, scope.session, model, budget, reason,
                    JobStatus.PENDING.value, self._d.time(at), self._d.time(at),
                ),
            ).fetchone()  # fmt: skip
        return None if row is None else self._job(row)

    def compaction_jobs(self, scope: Scope) -> list[CompactionJob]:
        where, params = scope_sql(self._d, scope)
        with self._read(scope) as tx:
            rows = tx.execute(
                f"SELECT {JOB_COLUMNS} FROM compaction_jobs WHERE {where} ORDER BY rowid", params
            ).fetchall()
        return [self._job(r) for r in rows]
