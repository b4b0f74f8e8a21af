"""The in-process background compactor: drains the store's persisted job queue on a thread.

Jobs live in the store, so work queued before a crash or restart is picked up by the next
worker (a job whose worker died is taken over when its lease runs out). The thread runs only
while there is work.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime

from kenning.compaction.compactor import Compactor, Stopped
from kenning.records import JobStatus
from kenning.store.protocol import Store

__all__ = ["CompactionWorker"]

log = logging.getLogger("kenning")

_MAX_ATTEMPTS = 3


class CompactionWorker:
    """Runs queued compactions one at a time."""

    def __init__(self, store: Store, compactor: Compactor, *, lease_s: float) -> None:
        self._store = store
        self._compactor = compactor
        self._lease_s = lease_s
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.completed = 0
        self.failed = 0

    def wake(self) -> None:
        """Start draining the queue if no thread is doing it already."""
        with self._lock:
            if self._closed or (self._thread is not None and self._thread.is_alive()):
                return
            self._thread = threading.Thread(
                target=self._drain, name="kenning-compactor", daemon=True
            )
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the queue is drained (or *timeout*); True if idle."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            thread.join()

    def _drain(self) -> None:
        while not self._closed:
            try:
                job = self._store.claim_compaction(at=datetime.now(UTC), lease_s=self._lease_s)
            except Exception:  # the store is closing or broken: stop, the queue persists
                log.exception("compaction worker could not read its queue")
                return
            if job is None:
                return
            try:
                self._compactor.compact(
                    job.scope, model=job.model, budget=job.budget, reason=job.reason,
                    stop=lambda: self._closed,
                )  # fmt: skip
            except Stopped:
                # Closing: hand the job back to the queue for the next open.
                self._store.finish_compaction(
                    job.id, status=JobStatus.PENDING, at=datetime.now(UTC)
                )
                return
            except Exception as exc:
                status = JobStatus.FAILED if job.attempts >= _MAX_ATTEMPTS else JobStatus.PENDING
                log.exception("compaction of %s failed (attempt %d)", job.scope, job.attempts)
                self.failed += 1
                try:
                    self._store.finish_compaction(
                        job.id, status=status, at=datetime.now(UTC), error=repr(exc)[:500]
                    )
                except Exception:
                    return
                continue
            self.completed += 1
            self._store.finish_compaction(job.id, status=JobStatus.DONE, at=datetime.now(UTC))
