"""The compaction queue on every SQL backend: persisted, at most one open job per session,
leased.

A claim writes a fresh lease token; renewing or finishing names it, so once a job was taken
over (its lease ran out) the old holder's calls change nothing. Claiming, renewing and
finishing reach across tenants (the queue is the store's own machinery, not a read of tenant
data): each backend gives those statements (:mod:`kenning.store.sql.cross`).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import CompactionJob, JobStatus, QueueStats, Scope
from kenning.store.sql.cross import JOB_COLUMNS
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.query import scope_sql

__all__ = ["JobTables"]


class JobTables(SqlDatabase):
    """Compaction jobs: enqueue, claim with a lease, renew, finish."""

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
        rows = self._read_all(
            scope, f"SELECT {JOB_COLUMNS} FROM compaction_jobs WHERE {where} ORDER BY rowid", params
        )
        return [self._job(r) for r in rows]

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        """Take the oldest pending job (or one whose worker died: its lease ran out) under a
        fresh lease token."""
        with self._write(None) as tx:
            row = tx.execute(
                self._cross.jobs.claim,
                (self._d.time(at), float(lease_s), secrets.token_hex(8)),
            ).fetchone()
        return None if row is None else self._job(row)

    def renew_compaction(self, job_id: int, *, lease: str, at: datetime, lease_s: float) -> bool:
        with self._write(None) as tx:
            row = tx.execute(
                self._cross.jobs.renew, (job_id, lease, self._d.time(at), float(lease_s))
            ).fetchone()
        return bool(row and row[0])

    def finish_compaction(
        self, job_id: int, *, status: JobStatus, at: datetime, error: str | None = None,
        lease: str | None = None,
    ) -> bool:  # fmt: skip
        with self._write(None) as tx:
            row = tx.execute(
                self._cross.jobs.finish,
                (job_id, status.value, self._d.time(at), error, lease),
            ).fetchone()
        return bool(row and row[0])

    def pending_compactions(self) -> int:
        with self._read(None) as tx:
            row = tx.execute(self._cross.jobs.pending).fetchone()
        return 0 if row is None else int(row[0])

    def queue_stats(self) -> QueueStats:
        with self._read(None) as tx:
            row = tx.execute(self._cross.jobs.stats).fetchone()
        return QueueStats(
            pending=int(row[0]), running=int(row[1]), oldest_pending=self._d.read_opt_time(row[2])
        )
