"""Records of the compaction machinery: queued jobs and the audit log."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from kenning.records.core import Scope

__all__ = ["AuditAction", "AuditEntry", "CompactionJob", "JobStatus", "QueueStats"]


class JobStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class CompactionJob:
    """A request to compact a session, persisted so it survives a restart."""

    id: int
    scope: Scope
    model: str
    budget: int
    reason: str
    status: JobStatus
    attempts: int
    created_at: datetime
    error: str | None = None
    #: The claim's lease token: only its holder may renew or finish the job (a worker whose
    #: lease ran out and was taken over can no longer write the job's outcome).
    lease: str | None = None


@dataclass(frozen=True, slots=True)
class QueueStats:
    """A background queue at a glance (compaction jobs, or sessions awaiting fact
    extraction): work waiting, work held by a worker, and when the oldest waiting work was
    queued (None when none waits)."""

    pending: int
    running: int
    oldest_pending: datetime | None = None

    def lag_s(self, now: datetime) -> float:
        """Seconds the oldest waiting job has waited (0 when none waits)."""
        if self.oldest_pending is None:
            return 0.0
        return max(0.0, (now - self.oldest_pending).total_seconds())


class AuditAction(enum.StrEnum):
    WARN = "warn"  # utilization crossed the warn threshold; nothing changed
    SCHEDULED = "scheduled"  # a background compaction was queued
    SEGMENT = "segment"  # raw events became a level-1 summary
    MERGE = "merge"  # level-1 summaries were regenerated as one session summary
    GUARD_PIN = "guard_pin"  # the amnesia guard pinned a value the summary lost
    PINS = "pins"  # pins extracted from the range before summarizing


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of a session's compaction audit log."""

    scope: Scope
    at: datetime
    action: AuditAction
    first_seq: int | None = None
    last_seq: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    summary_id: str | None = None
    summarizer: str | None = None
    detail: str = ""
    id: int = 0
