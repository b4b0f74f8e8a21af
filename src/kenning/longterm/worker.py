"""The in-process background readers of new events for facts: a bounded pool of threads.

The store keeps, per session, how far extraction got: the events themselves are the queue,
so nothing is lost across a crash or restart, and a session whose reader died is taken over
when its lease runs out. Each claim holds a lease token that the reading thread renews every
third of its length; the facts of each batch and the recorded progress are written only
while that token still holds the session (checked by the store in the write's transaction),
so a reader that stalled past its lease and was taken over writes nothing. The pool never
holds more than ``threads`` sessions at once: the rest wait in the store (backpressure
without loss). Threads run only while there is work.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime

from kenning.lease import Lease
from kenning.longterm.service import LongTermMemory
from kenning.store.protocol import FactStore
from kenning.store.records import ExtractionJob

__all__ = ["FactWorker"]

log = logging.getLogger("kenning")


def _now() -> datetime:
    return datetime.now(UTC)


class FactWorker:
    """Reads pending sessions for facts on at most *threads* threads at once."""

    def __init__(self, facts: LongTermMemory, store: FactStore, *, threads: int = 1) -> None:
        self._facts = facts
        self._store = store
        self._lease_s = facts.settings.lease_s
        self._size = max(1, threads)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._again = False
        self._closed = False
        self.completed = 0
        self.failed = 0
        self.lost = 0

    @property
    def threads(self) -> int:
        """The pool's size."""
        return self._size

    @property
    def busy(self) -> int:
        """Threads reading now."""
        with self._lock:
            return len(self._threads)

    def wake(self) -> None:
        """Read new events soon: start readers up to the pool's size."""
        with self._lock:
            if self._closed:
                return
            # A reader about to find the queue empty looks once more instead of leaving.
            self._again = True
            while len(self._threads) < self._size:
                thread = threading.Thread(target=self._drain, name="kenning-facts", daemon=True)
                self._threads.append(thread)
                thread.start()

    def resume(self) -> None:
        """Start readers if the store holds unread events (written before a restart, by
        another process, or left by a reader that died once its lease runs out)."""
        if self._store.pending_extractions(limit=1):
            self.wake()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every reader is idle (or *timeout*); True if they are."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                threads = list(self._threads)
            if not threads:
                return True
            for thread in threads:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                thread.join(left)
            if deadline is not None and time.monotonic() >= deadline:
                with self._lock:
                    return not self._threads

    def close(self) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        for thread in threads:
            thread.join()

    def _leave(self) -> None:
        with self._lock:
            me = threading.current_thread()
            if me in self._threads:
                self._threads.remove(me)

    def _drain(self) -> None:
        try:
            while not self._closed:
                try:
                    job = self._store.claim_extraction(at=_now(), lease_s=self._lease_s)
                except Exception:  # the store is closing or broken: progress persists
                    log.exception("fact extraction could not read its queue")
                    return
                if job is None:
                    with self._lock:
                        if self._again and not self._closed:
                            self._again = False
                            continue
                        # Leave under the lock a wake takes: it then starts a new reader.
                        self._threads.remove(threading.current_thread())
                        return
                if not self._run(job):
                    return
        finally:
            self._leave()

    def _run(self, job: ExtractionJob) -> bool:
        """Read one claimed session; False when this reader should stop."""
        lease = Lease(
            lambda: self._store.renew_extraction(job, at=_now(), lease_s=self._lease_s),
            self._lease_s,
            what=f"the fact extraction of {job.scope}",
        )
        try:
            recorded = self._facts.extract(job, stop=lambda: self._closed or lease.lost)
        except Exception:
            with self._lock:
                self.failed += 1
            log.exception("fact extraction of %s failed; it resumes with the next write", job.scope)
            return False
        finally:
            lease.release()
        if self._closed:
            return False
        with self._lock:
            if recorded:
                self.completed += 1
            else:
                self.lost += 1
        return True
