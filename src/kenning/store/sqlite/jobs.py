"""The compaction queue of the SQLite store across tenants: claims, renewals, the queue's size.

Claims run inside the single writer's transaction (``BEGIN IMMEDIATE``), so two processes on
one file never claim the same job. The shared part (:mod:`kenning.store.sql.jobs`) enqueues.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from kenning.records import CompactionJob, JobStatus, QueueStats
from kenning.store.sql import jobs
from kenning.store.sql.jobs import JOB_COLUMNS

__all__ = ["JobTables"]


class JobTables(jobs.JobTables):
    """Compaction jobs: claim with a lease, renew, finish."""

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        """Take the oldest pending job (or one whose worker died: its lease ran out)."""
        now = at.timestamp()
        with self._write(None) as tx:
            row = tx.execute(
                "UPDATE compaction_jobs SET status = 'running', attempts = attempts + 1,"
                " lease_until = ?, lease = ?, updated_at = ? WHERE rowid = (SELECT rowid"
                " FROM compaction_jobs WHERE status = 'pending'"
                " OR (status = 'running' AND lease_until < ?) ORDER BY rowid LIMIT 1)"
                f" RETURNING {JOB_COLUMNS}",
                (now + lease_s, secrets.token_hex(8), now, now),
            ).fetchone()
        return None if row is None else self._job(row)

    def renew_compaction(self, job_id: int, *, lease: str, at: datetime, lease_s: float) -> bool:
        with self._write(None) as tx:
            cur = tx.execute(
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
        with self._write(None) as tx:
            cur = tx.execute(
                "UPDATE compaction_jobs SET status = ?, error = ?, lease_until = NULL,"
                f" lease = NULL, updated_at = ? WHERE rowid = ?{fence}",
                params if lease is None else (*params, lease),
            )
        return bool(cur.rowcount)

    def pending_compactions(self) -> int:
        with self._read(None) as tx:
            row = tx.execute(
                "SELECT count(*) FROM compaction_jobs WHERE status IN ('pending', 'running')"
            ).fetchone()
        return int(row[0])

    def queue_stats(self) -> QueueStats:
        with self._read(None) as tx:
            row = tx.execute(
                "SELECT coalesce(sum(status = 'pending'), 0), coalesce(sum(status = 'running'), 0),"
                " min(CASE WHEN status = 'pending' THEN created_at END)"
                " FROM compaction_jobs WHERE status IN ('pending', 'running')"
            ).fetchone()
        return QueueStats(
            pending=int(row[0]), running=int(row[1]), oldest_pending=self._d.read_opt_time(row[2])
        )
