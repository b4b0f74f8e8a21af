"""Frozen records of kenning's core, the bottom layer: every other module may import them.

Records do no I/O. Input is validated once, where it enters (``Scope``, ``NewEvent`` and
``TaskUpdate`` check themselves on construction); records read back from a store are trusted.
"""

from kenning.records.core import (
    DEFAULT_MAX_CONTENT_CHARS,
    Event,
    JSONScalar,
    NewEvent,
    Pin,
    PinKind,
    PinStatus,
    Role,
    Scope,
    Summary,
    content_hash,
    event_label,
    new_event_id,
    to_utc,
    validate_id,
)
from kenning.records.facts import (
    USER,
    Fact,
    FactCategory,
    FactDraft,
    FactSource,
    FactStatus,
    Procedure,
    ProcedureMatch,
    ProcedureStatus,
)
from kenning.records.filters import KINDS, Filters
from kenning.records.investigation import Finding, Hypothesis, HypothesisChange, HypothesisStatus
from kenning.records.jobs import AuditAction, AuditEntry, CompactionJob, JobStatus, QueueStats
from kenning.records.keys import ApiKey, KeyScope, Quota, TenantUsage
from kenning.records.pin_draft import PinDraft
from kenning.records.policy import Consent, LegalHold, StoreStats, TenantPolicy, UserSettings
from kenning.records.profile import Correction, Profile, ProfileLine
from kenning.records.task import Decision, TaskState, TaskStatus, TaskUpdate
from kenning.records.values import (
    MAX_JSON_DEPTH,
    check_amount,
    check_json,
    check_text,
    check_year,
    enum_member,
    too_deep,
)

__all__ = [
    "DEFAULT_MAX_CONTENT_CHARS",
    "KINDS",
    "MAX_JSON_DEPTH",
    "USER",
    "ApiKey",
    "AuditAction",
    "AuditEntry",
    "CompactionJob",
    "Consent",
    "Correction",
    "Decision",
    "Event",
    "Fact",
    "FactCategory",
    "FactDraft",
    "FactSource",
    "FactStatus",
    "Filters",
    "Finding",
    "Hypothesis",
    "HypothesisChange",
    "HypothesisStatus",
    "JSONScalar",
    "JobStatus",
    "KeyScope",
    "LegalHold",
    "NewEvent",
    "Pin",
    "PinDraft",
    "PinKind",
    "PinStatus",
    "Procedure",
    "ProcedureMatch",
    "ProcedureStatus",
    "Profile",
    "ProfileLine",
    "QueueStats",
    "Quota",
    "Role",
    "Scope",
    "StoreStats",
    "Summary",
    "TaskState",
    "TaskStatus",
    "TaskUpdate",
    "TenantPolicy",
    "TenantUsage",
    "UserSettings",
    "check_amount",
    "check_json",
    "check_text",
    "check_year",
    "content_hash",
    "enum_member",
    "event_label",
    "new_event_id",
    "to_utc",
    "too_deep",
    "validate_id",
]
