"""The compaction queue of the PostgreSQL store: persisted, one open job per session, leased.

Jobs are claimed with ``FOR UPDATE SKIP LOCKED`` inside ``kenning_claim_compaction`` (see
:mod:`~kenning.store.postgres.schema`): any number of workers, in any number of processes and
machines, share one queue, and two workers never take the same job. A claim writes a fresh
lease token; renewing or finishing names it, so once a job was taken over (its lease ran out)
the old holder's calls change nothing. The queue spans tenants, so the application role
reaches it through functions that return queue fields only.

A mixin of :class:`~kenning.store.postgres.store.PostgresStore`.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import CompactionJob, JobStatus, QueueStats, Scope
from kenning.store.postgres.database import Database
from kenning.store.postgres.sql import scope_sql

__all__ = ["JobTables"]

_JOB_COLUMNS = (
    "rowid, tenant, user_id, session, model, budget, reason, status, attempts, created_at, error,"
    " lease"
)


def _job(row: Sequence[Any]) -> CompactionJob:
    return CompactionJob(
        id=int(row[0]), scope=Scope(row[1], row[2], row[3]), model=row[4], budget=int(row[5]),
        reason=row[6], status=JobStatus(row[7]), attempts=int(row[8]), created_at=row[9],
        error=row[10], lease=row[11],
    )  # fmt: skip


class JobTables(Database):
    """Compaction jobs: enqueue, claim with a lease, renew, finish."""

    def enqueue_compaction(
        self, scope: Scope, *, model: str, budget: int, reason: str, at: datetime
    ) -> CompactionJob | None:
        scope = scope.require_session()
        with self._write(scope, claim=True) as conn:
            row = conn.execute(
                "INSERT INTO compaction_jobs (tenant, user_id, session, model, budget, reason,"
                " status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT DO NOTHING RETURNING {_JOB_COLUMNS}",
                (
                    scope.tenant, scope.user, scope.session, model, budget, reason,
                    JobStatus.PENDING.value, at, at,
                ),
            ).fetchone()  # fmt: skip
        return None if row is None else _job(row)

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        """Take the oldest pending job (or one whose worker died: its lease ran out) under a
        fresh lease token; a job another worker is claiming right now is skipped, never
        waited for."""
        with self._write(None) as conn:
            row = conn.execute(
                f"SELECT {_JOB_COLUMNS} FROM kenning_claim_compaction(?, ?, ?)",
                (at, float(lease_s), secrets.token_hex(8)),
            ).fetchone()
        return None if row is None else _job(row)

    def renew_compaction(self, job_id: int, *, lease: str, at: datetime, lease_s: float) -> bool:
        with self._write(None) as conn:
            row = conn.execute(
                "SELECT kenning_renew_compaction(?, ?, ?, ?)",
                (job_id, lease, at, float(lease_s)),
            ).fetchone()
        return bool(row and row[0])

    def finish_compaction(
        self,
        job_id: int,
        *,
        status: JobStatus,
        at: datetime,
        error: str | None = None,
        lease: str | None = None,
    ) -> bool:
        with self._write(None) as conn:
            row = conn.execute(
                "SELECT kenning_finish_compaction(?, ?, ?, ?, ?)",
                (job_id, status.value, at, error, lease),
            ).fetchone()
        return bool(row and row[0])

    def compaction_jobs(self, scope: Scope) -> list[CompactionJob]:
        where, params = scope_sql(scope)
        with self._read(scope) as conn:
            rows = conn.execute(
                f"SELECT {_JOB_COLUMNS} FROM compaction_jobs WHERE {where} ORDER BY rowid", params
            ).fetchall()
        return [_job(r) for r in rows]

    def pending_compactions(self) -> int:
        with self._read(None) as conn:
            row = conn.execute("SELECT kenning_pending_compactions()").fetchone()
        return 0 if row is None else int(row[0])

    def queue_stats(self) -> QueueStats:
        with self._read(None) as conn:
            row = conn.execute(
                "SELECT pending, running, oldest_pending FROM kenning_queue_stats()"
            ).fetchone()
        assert row is not None
        return QueueStats(pending=int(row[0]), running=int(row[1]), oldest_pending=row[2])
