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
from datetime import UTC, datetime

from kenning.lease import Lease, LeasedPool
from kenning.longterm.service import LongTermMemory
from kenning.store.protocol import FactStore
from kenning.store.records import ExtractionJob
from kenning.telemetry import stage

__all__ = ["FactWorker"]

log = logging.getLogger("kenning")


# How long a reader pauses after a job before it claims the next, so that a loop writing a
# turn at a time is read a few turns a job (measured on LoCoMo dev, one ``add_events`` per
# turn: fact reading's CPU per turn, docs/experiments/2026-12-03-10-write-path-cpu.md).
# ``wait_for_facts`` and ``close`` end the pause.
SETTLE_S = 1.0


class FactWorker(LeasedPool[ExtractionJob]):
    """Reads pending sessions for facts on at most *threads* threads at once."""

    def __init__(self, facts: LongTermMemory, store: FactStore, *, threads: int = 1) -> None:
        super().__init__(
            threads=threads, name="kenning-facts", what="fact extraction", settle_s=SETTLE_S
        )
        self._facts = facts
        self._store = store
        self._lease_s = facts.settings.lease_s

    def resume(self) -> None:
        """Start readers if the store holds unread events (written before a restart, by
        another process, or left by a reader that died once its lease runs out)."""
        if self._store.pending_extractions(limit=1):
            self.wake()

    def _claim(self) -> ExtractionJob | None:
        return self._store.claim_extraction(at=datetime.now(UTC), lease_s=self._lease_s)

    def _run(self, job: ExtractionJob) -> bool:
        """Read one claimed session; False when this reader should stop."""
        lease = Lease(
            lambda: self._store.renew_extraction(job, at=datetime.now(UTC), lease_s=self._lease_s),
            self._lease_s,
            what=f"the fact extraction of {job.scope}",
        )
        try:
            with stage("facts"):
                recorded = self._facts.extract(job, stop=lambda: self.closed or lease.lost)
        except Exception:
            self._count("failed")
            log.exception("fact extraction of %s failed; it resumes with the next write", job.scope)
            return False
        finally:
            lease.release()
        if self.closed:
            return False
        self._count("completed" if recorded else "lost")
        return True
