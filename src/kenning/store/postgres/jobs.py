"""The compaction queue of the PostgreSQL store across tenants: claims, renewals, its size.

Jobs are claimed with ``FOR UPDATE SKIP LOCKED`` inside ``kenning_claim_compaction`` (see
:mod:`~kenning.store.postgres.schema`): any number of workers, in any number of processes and
machines, share one queue, and two workers never take the same job. The queue spans tenants,
so the application role reaches it through functions that return queue fields only. The shared
part (:mod:`kenning.store.sql.jobs`) enqueues.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from kenning.records import CompactionJob, JobStatus, QueueStats
from kenning.store.sql import jobs
from kenning.store.sql.jobs import JOB_COLUMNS

__all__ = ["JobTables"]


class JobTables(jobs.JobTables):
    """Compaction jobs: claim with a lease, renew, finish."""

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        """Take the oldest pending job (or one whose worker died: its lease ran out) under a
        fresh lease token; a job another worker is claiming right now is skipped, never
        waited for."""
        with self._write(None) as tx:
            row = tx.execute(
                f"SELECT {JOB_COLUMNS} FROM kenning_claim_compaction(?, ?, ?)",
                (at, float(lease_s), secrets.token_hex(8)),
            ).fetchone()
        return None if row is None else self._job(row)

    def renew_compaction(self, job_id: int, *, lease: str, at: datetime, lease_s: float) -> bool:
        with self._write(None) as tx:
            row = tx.execute(
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
        with self._write(None) as tx:
            row = tx.execute(
                "SELECT kenning_finish_compaction(?, ?, ?, ?, ?)",
                (job_id, status.value, at, error, lease),
            ).fetchone()
        return bool(row and row[0])

    def pending_compactions(self) -> int:
        with self._read(None) as tx:
            row = tx.execute("SELECT kenning_pending_compactions()").fetchone()
        return 0 if row is None else int(row[0])

    def queue_stats(self) -> QueueStats:
        with self._read(None) as tx:
            row = tx.execute(
                "SELECT pending, running, oldest_pending FROM kenning_queue_stats()"
            ).fetchone()
        assert row is not None
        return QueueStats(pending=int(row[0]), running=int(row[1]), oldest_pending=row[2])
