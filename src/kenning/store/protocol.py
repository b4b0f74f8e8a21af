"""The one storage protocol every backend implements, and the records it trades in.

A store offers a few batched primitives; everything convenient is built on top of them in
:mod:`kenning.memory`. Every read takes a :class:`~kenning.records.Scope` and constrains by it
inside the backend's query; there is no read path without one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kenning.compaction.records import AuditEntry, CompactionJob, JobStatus
from kenning.context.task import TaskState, TaskUpdate
from kenning.pins.draft import PinDraft
from kenning.records import Event, JSONScalar, NewEvent, Pin, Role, Scope, Summary
from kenning.search.filters import Filters

__all__ = [
    "Candidate",
    "Capabilities",
    "ContextSnapshot",
    "EventWrite",
    "Item",
    "MessageRow",
    "ModelInfo",
    "SessionCandidate",
    "Store",
]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Optional features a backend declares; unsupported calls raise ``Unsupported``."""

    lexical_search: bool = True
    vector_search: bool = True
    ann_index: bool = False
    multi_process: bool = False


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """Identity of the embedding model whose vectors a store holds."""

    model_id: str
    dimension: int
    normalized: bool = True


@dataclass(frozen=True, slots=True)
class EventWrite:
    """One event to append: its scope, the validated input and the hash of its embedded text."""

    scope: Scope
    event: NewEvent
    embed_hash: str | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A search candidate from one signal: the record's id, that signal's raw score, and the
    session it belongs to (fusion can rank turns of the best-matching session together)."""

    id: str
    score: float
    session: str | None = None


@dataclass(frozen=True, slots=True)
class SessionCandidate:
    """A session scored as one document: normalised BM25 over its text, cosine to its
    centroid."""

    session: str | None
    lexical: float
    cosine: float


@dataclass(frozen=True, slots=True)
class Item:
    """A searchable record as returned to the search layer (an event, later facts...)."""

    id: str
    kind: str
    scope: Scope
    seq: int
    role: Role
    text: str
    at: datetime
    metadata: Mapping[str, JSONScalar] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    access_count: int = 0
    last_access: datetime | None = None


Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class MessageRow:
    """What a window needs of an event: enough to render its chat message, nothing more."""

    seq: int
    id: str
    role: Role
    text: str
    tool_name: str | None = None
    tool_call_id: str | None = None
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class ContextSnapshot:
    """A session's working-context state, read in one go for one window.

    ``tail`` holds the newest events after the last summary whose message tokens (per the
    ledger) fit in the room asked for, oldest first.
    """

    task: TaskState
    pins: tuple[Pin, ...]
    summaries: tuple[Summary, ...]
    total: int
    summarized: int
    tail: tuple[MessageRow, ...]
    counted_seq: int = 0
    last_seq: int = 0


@runtime_checkable
class Store(Protocol):
    """Batched, tenant-scoped storage of kenning's records.

    Writes are atomic: a batch is committed whole or not at all. Reads take a scope and never
    return a record outside it.
    """

    @property
    def backend(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def model(self) -> ModelInfo | None:
        """The embedding model the stored vectors belong to, or None before the first vector."""
        ...

    def missing_vectors(self, tenant: str, model: ModelInfo, hashes: Sequence[str]) -> list[str]:
        """Return the hashes among *hashes* that have no stored vector for *model* yet."""
        ...

    def append_events(
        self,
        writes: Sequence[EventWrite],
        *,
        model: ModelInfo | None = None,
        vectors: Mapping[tuple[str, str], npt.NDArray[np.float32]] | None = None,
    ) -> list[Event]:
        """Append events (assigning per-session sequence numbers) and new vectors, atomically.

        *vectors* maps ``(tenant, embed_hash)`` to a unit vector of *model*.
        """
        ...

    def events(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        after_seq: int | None = None,
        limit: int | None = None,
        tail: int | None = None,
    ) -> list[Event]:
        """Events in *scope* in order (seq in a session; time across sessions).

        Optionally only *ids*, those after a sequence number, the first *limit*, or the last
        *tail* (still returned in order).
        """
        ...

    def items(self, scope: Scope, ids: Sequence[str]) -> list[Item]:
        """The searchable items with these ids inside *scope* (unknown ids are left out)."""
        ...

    def lexical(self, scope: Scope, match: str, *, filters: Filters, limit: int) -> list[Candidate]:
        """BM25-ranked candidates for an already escaped FTS *match* expression."""
        ...

    def nearest(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: ModelInfo,
        filters: Filters,
        limit: int,
    ) -> list[Candidate]:
        """Cosine-ranked candidates; only vectors inside *scope* and *filters* are scored."""
        ...

    def sessions(
        self,
        scope: Scope,
        query: str,
        vector: npt.NDArray[np.float32] | None,
        *,
        model: ModelInfo | None,
        sessions: Sequence[str | None],
    ) -> list[SessionCandidate]:
        """The given *sessions* that lie inside *scope*, each scored as a whole document."""
        ...

    def touch(self, scope: Scope, ids: Sequence[str], *, at: datetime) -> None:
        """Record an access to these items (for the access bonus)."""
        ...

    def token_counts(self, scope: Scope, ids: Sequence[str], encoding: str) -> dict[str, int]:
        """Cached token counts of these records for *encoding* (missing ones are left out)."""
        ...

    def put_token_counts(self, scope: Scope, encoding: str, counts: Mapping[str, int]) -> None:
        """Cache token counts of records for *encoding*."""
        ...

    def forget(self, scope: Scope, *, ids: Sequence[str] | None = None,
               before: datetime | None = None) -> int:  # fmt: skip
        """Erase records in *scope* (all, or *ids*, or those before a time) from every index.

        Returns the number of records erased.
        """
        ...

    # -- pins -------------------------------------------------------------------------------

    def put_pins(
        self,
        scope: Scope,
        drafts: Sequence[PinDraft],
        *,
        at: datetime,
        mode: Literal["add", "set"] = "set",
    ) -> list[Pin]:
        """Write pins of the session of *scope* atomically; return the versions written.

        ``mode="set"``: a draft whose key exists with another value or status becomes a new
        version (the old one stays in history). ``mode="add"`` (extraction): existing keys are
        left alone, so re-extracting old text never reopens a closed pin.
        """
        ...

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        """Current pins in *scope* (with *history*, every version), in write order."""
        ...

    # -- summaries, compaction queue and audit -----------------------------------------------

    def put_summary(
        self,
        summary: Summary,
        *,
        replaces: Sequence[str] = (),
        guard_pins: Sequence[PinDraft] = (),
        audit: Sequence[AuditEntry] = (),
    ) -> Summary:
        """In one transaction: add the amnesia guard's pins, the summary, retire the summaries
        it *replaces*, and append the audit entries."""
        ...

    def summaries(self, scope: Scope, *, include_replaced: bool = False) -> list[Summary]:
        """Active summaries in *scope*, by session and covered range."""
        ...

    def audit(self, entries: Sequence[AuditEntry]) -> None:
        """Append entries to the compaction audit log."""
        ...

    def audit_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        """The latest *limit* audit entries in *scope*, oldest first."""
        ...

    def enqueue_compaction(
        self, scope: Scope, *, model: str, budget: int, reason: str, at: datetime
    ) -> CompactionJob | None:
        """Queue a compaction of the session; None if one is already pending or running."""
        ...

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        """Take the oldest pending job, or a running one whose lease expired (its worker died).

        The queue is the store's own machinery, not a read of tenant data, so it has no scope.
        """
        ...

    def finish_compaction(
        self, job_id: int, *, status: JobStatus, at: datetime, error: str | None = None
    ) -> None: ...

    def compaction_jobs(self, scope: Scope) -> list[CompactionJob]: ...

    def pending_compactions(self) -> int: ...

    # -- task state and the token ledger -----------------------------------------------------

    def task_state(self, scope: Scope) -> TaskState:
        """The session's task state (an empty one if never set)."""
        ...

    def update_task_state(self, scope: Scope, update: TaskUpdate, *, at: datetime) -> TaskState:
        """Merge *update* into the stored state atomically (rules in kenning.context.task)."""
        ...

    def ledger_head(self, scope: Scope, encoding: str) -> tuple[int, int]:
        """(last counted sequence number, total message tokens through it) of the session."""
        ...

    def extend_ledger(self, scope: Scope, encoding: str, counts: Sequence[tuple[int, int]]) -> None:
        """Append ``(seq, message tokens)`` of newer events to the session's running totals."""
        ...

    def ledger_cum(self, scope: Scope, encoding: str, seq: int) -> int:
        """Message tokens of the session's events through *seq*."""
        ...

    def context_snapshot(self, scope: Scope, encoding: str, *, room: int) -> ContextSnapshot:
        """Task state, current pins, active summaries, the ledger's total and the tokens the
        summaries cover, and the tail that fits in *room* — one consistent read."""
        ...

    def ledger_tail(
        self, scope: Scope, encoding: str, *, room: int, after_seq: int = 0
    ) -> list[tuple[int, int]]:
        """``(seq, tokens)`` of the newest events after *after_seq* that fit in *room*."""
        ...

    def close(self) -> None: ...
