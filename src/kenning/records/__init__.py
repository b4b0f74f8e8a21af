"""Frozen records of kenning's core, the bottom layer: every other module may import them.

Records do no I/O. Input is validated once, where it enters (``Scope``, ``NewEvent`` and
``TaskUpdate`` check themselves on construction); records read back from a store are trusted.
"""

from kenning.records.core import (
    DEFAULT_MAX_CONTENT_CHARS,
    Event,
    Fact,
    FactSource,
    JSONScalar,
    NewEvent,
    Pin,
    PinKind,
    PinStatus,
    Procedure,
    Role,
    Scope,
    Summary,
    content_hash,
    event_label,
    new_event_id,
    to_utc,
    validate_id,
)
from kenning.records.filters import KINDS, Filters
from kenning.records.jobs import AuditAction, AuditEntry, CompactionJob, JobStatus, QueueStats
from kenning.records.keys import ApiKey, KeyScope, TenantUsage
from kenning.records.pin_draft import PinDraft
from kenning.records.task import Decision, TaskState, TaskStatus, TaskUpdate

__all__ = [
    "DEFAULT_MAX_CONTENT_CHARS",
    "KINDS",
    "ApiKey",
    "AuditAction",
    "AuditEntry",
    "CompactionJob",
    "Decision",
    "Event",
    "Fact",
    "FactSource",
    "Filters",
    "JSONScalar",
    "JobStatus",
    "KeyScope",
    "NewEvent",
    "Pin",
    "PinDraft",
    "PinKind",
    "PinStatus",
    "Procedure",
    "QueueStats",
    "Role",
    "Scope",
    "Summary",
    "TaskState",
    "TaskStatus",
    "TaskUpdate",
    "TenantUsage",
    "content_hash",
    "event_label",
    "new_event_id",
    "to_utc",
    "validate_id",
]
