"""The in-process background compactor: a bounded pool of threads draining the store's
persisted job queue.

Jobs live in the store, so work queued before a crash or restart is picked up by the next
worker, in this process or another on the same store. Each claim holds a lease that the
working thread renews every third of its length; a job whose worker died is taken over when
its lease runs out, and a worker that lost its lease (it stalled past the lease) stops
before its next write and cannot record an outcome. The pool never holds more than
``threads`` jobs in memory: the rest wait in the queue (backpressure without loss). Threads
run only while there is work.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from kenning.compaction.compactor import Compactor, Stopped
from kenning.lease import Lease, LeasedPool
from kenning.records import CompactionJob, JobStatus
from kenning.store.protocol import JobQueue

__all__ = ["CompactionWorker"]

log = logging.getLogger("kenning")

_MAX_ATTEMPTS = 3


class CompactionWorker(LeasedPool[CompactionJob]):
    """Runs queued compactions on at most *threads* threads at once."""

    def __init__(
        self, store: JobQueue, compactor: Compactor, *, lease_s: float, threads: int = 1
    ) -> None:
        super().__init__(threads=threads, name="kenning-compactor", what="compaction worker")
        self._store = store
        self._compactor = compactor
        self._lease_s = lease_s

    def _claim(self) -> CompactionJob | None:
        return self._store.claim_compaction(at=datetime.now(UTC), lease_s=self._lease_s)

    def _run(self, job: CompactionJob) -> bool:
        """Run one claimed job; False when the worker should stop."""
        assert job.lease is not None
        token = job.lease
        lease = Lease(
            lambda: self._store.renew_compaction(
                job.id, lease=token, at=datetime.now(UTC), lease_s=self._lease_s
            ),
            self._lease_s,
            what=f"compaction job {job.id}",
        )
        try:
            self._compactor.compact(
                job.scope, model=job.model, budget=job.budget, reason=job.reason,
                stop=lambda: self.closed or lease.lost, fence=lambda: lease.lost,
            )  # fmt: skip
        except Stopped:
            lease.release()
            if lease.lost:
                # Another worker holds the job now; whatever was written stays valid.
                self._count("lost")
                log.warning("compaction job %d lost its lease and was taken over", job.id)
                return True
            # Closing: hand the job back to the queue for the next open.
            self._finish(job, JobStatus.PENDING)
            return False
        except Exception as exc:
            lease.release()
            status = JobStatus.FAILED if job.attempts >= _MAX_ATTEMPTS else JobStatus.PENDING
            log.exception("compaction of %s failed (attempt %d)", job.scope, job.attempts)
            self._count("failed")
            return self._finish(job, status, error=repr(exc)[:500])
        lease.release()
        self._count("completed" if self._finish(job, JobStatus.DONE) else "lost")
        return True

    def _finish(self, job: CompactionJob, status: JobStatus, *, error: str | None = None) -> bool:
        try:
            return self._store.finish_compaction(
                job.id, status=status, at=datetime.now(UTC), error=error, lease=job.lease
            )
        except Exception:
            log.exception("could not record the end of compaction job %d", job.id)
            return False
