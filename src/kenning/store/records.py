"""The records a store exchanges with the layers above it (frozen, no I/O)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput
from kenning.records import (
    Event,
    FactDraft,
    FactStatus,
    JSONScalar,
    NewEvent,
    Pin,
    PinDraft,
    Role,
    Scope,
    StoreStats,  # lives with the records (a served client returns it); stores make it
    Summary,
    TaskState,
    new_event_id,
)
from kenning.records.core import ModelInfo
from kenning.records.documents import DocumentWrite, IndexText

_NO_METADATA: Mapping[str, JSONScalar] = MappingProxyType({})

__all__ = [
    "Candidate",
    "Chunk",
    "ContextSnapshot",
    "DocumentCandidates",
    "DocumentWrite",
    "EventWrite",
    "IndexChange",
    "IndexLayout",
    "IndexText",
    "Item",
    "MessageRow",
    "ModelInfo",
    "Position",
    "SessionCandidate",
    "SessionInfo",
    "StoreStats",
    "Usage",
    "UserInfo",
    "Vectors",
    "check_changes",
]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of a record with a vector of its own, and the hash of its embedded text: a
    chunk of a long record, also its own lexical document (``lexical``), or a sentence unit,
    whose record's whole text is the lexical document (see :mod:`kenning.indexing`)."""

    start: int
    stop: int
    embed_hash: str | None = None
    lexical: bool = True


@dataclass(frozen=True, slots=True)
class EventWrite:
    """One event to append: its scope, the validated input, the hash of its embedded text,
    its id, the pins extracted from it (committed in the same transaction), and for a long
    event or one of several sentences the chunks or units it is indexed as (then *embed_hash*
    is None: they carry the vectors)."""

    scope: Scope
    event: NewEvent
    embed_hash: str | None = None
    id: str = field(default_factory=new_event_id)
    pins: tuple[PinDraft, ...] = ()
    chunks: tuple[Chunk, ...] = ()


@dataclass(frozen=True, slots=True)
class IndexLayout:
    """How an event is indexed now: the hash of its one embedded text, or the chunks or
    sentence units it is embedded as (see :class:`EventWrite`). *cursor* orders a tenant's
    events for :meth:`~kenning.store.protocol.Reindexing.index_layouts`."""

    cursor: int
    event: Event
    embed_hash: str | None
    chunks: tuple[Chunk, ...] = ()


@dataclass(frozen=True, slots=True)
class IndexChange:
    """An event's index rows as they are to be: one embedded text (*embed_hash*) or its
    *chunks*, as :class:`EventWrite` carries them."""

    id: str
    embed_hash: str | None
    chunks: tuple[Chunk, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidInput("an index change needs the event's id")
        if (self.embed_hash is None) == (not self.chunks):
            raise InvalidInput(
                f"event {self.id!r}: give either one embedded text's hash or its chunks"
            )
        for c in self.chunks:
            if not 0 <= c.start < c.stop or not c.embed_hash:
                raise InvalidInput(f"event {self.id!r}: a chunk needs a span and a hash")


def check_changes(
    changes: Sequence[IndexChange],
    *,
    model: ModelInfo | None,
    vectors: Mapping[str, npt.NDArray[np.float32]] | None,
) -> bool:
    """Whether a reindex has anything to write; InvalidInput unless each change is an
    :class:`IndexChange` naming its event once, and vectors come with their model."""
    if vectors and model is None:
        raise InvalidInput("vectors were given without the model they belong to")
    if not all(isinstance(c, IndexChange) for c in changes):
        raise InvalidInput("changes must be IndexChange records")
    if len({c.id for c in changes}) != len(changes):
        raise InvalidInput("an event appears twice among the changes")
    return bool(changes)


class Position(NamedTuple):
    """Where a turn sits in its conversation: session, sequence number, who wrote it (its
    label: speaker, name or tool; else its role), and whether it asks something (its text
    holds a question mark)."""

    session: str | None
    seq: int
    author: str
    asks: bool = False


class Candidate(NamedTuple):
    """A search candidate from one signal: the record's id, that signal's raw score, the
    session it belongs to (fusion can rank turns of the best-matching session together), and
    its kind. A named tuple: a search builds a few hundred (see :class:`Item`)."""

    id: str
    score: float
    session: str | None = None
    kind: str = "event"
    at: float | None = None
    """When the record was written (epoch seconds), where the index knows it: bonuses for a
    time the query names can then be bounded before the record is loaded."""
    position: Position | None = None
    """The turn's place in its conversation (None: not a turn of a session, or the index does
    not know it): a question and its answer can be lifted toward each other before either
    record is loaded."""


class SessionCandidate(NamedTuple):
    """A session scored as one document: normalised BM25 over its text, cosine to its
    centroid. A named tuple: a search builds one per session its candidates come from."""

    session: str | None
    lexical: float
    cosine: float


class Item(NamedTuple):
    """A searchable record as returned to the search layer (an event, later facts...).

    A named tuple rather than a frozen dataclass: every search loads a few dozen, and a frozen
    dataclass of these eleven fields costs 4.7 µs to build against 1.6 µs.
    """

    id: str
    kind: str
    scope: Scope
    seq: int | None  # None for records outside a session's sequence (facts)
    role: Role
    text: str
    at: datetime
    metadata: Mapping[str, JSONScalar] = _NO_METADATA
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


@dataclass(frozen=True, slots=True)
class FactInsert:
    """A new fact: its id, the draft (``valid_from`` is when it began to hold), the hash of its
    embedded statement, and retention. A fact of a history read out of order may be written
    already closed (*state*)."""

    id: str
    draft: FactDraft
    embed_hash: str | None = None
    expires_at: datetime | None = None
    pinned: bool = False
    state: FactState | None = None


@dataclass(frozen=True, slots=True)
class FactState:
    """Where a fact stands in its key's history: since when and until when it held, its status
    and the fact that replaced it, how often it was stated, in which events, and when last."""

    valid_from: datetime
    valid_to: datetime | None
    status: FactStatus
    superseded_by: str | None
    reinforced: int
    sources: tuple[str, ...]
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class FactChanges:
    """One consolidation step, applied in one transaction.

    ``expected`` lists, per (subject, attribute, qualifier), the ids of the facts of its
    history (active, superseded or revoked) the step was decided on; the store refuses the
    step (StaleWrite) if they changed. Closures are ``(fact id, new status, id of the fact that
    supersedes it or None)`` of active facts; reinforcements ``(fact id, source event id)``.
    ``revisions`` give facts of a history a new place in it (``(fact id, state)``: a history
    refolded around a statement read out of order), ``withdrawn`` names facts the history no
    longer holds (merged into another, or a withdrawal whose value has since been found).
    With ``within_session`` the step was decided on the histories of the scope's session
    alone (a tool call that may not reach the user's other sessions): ``expected`` names only
    their facts.
    """

    inserts: tuple[FactInsert, ...] = ()
    reinforcements: tuple[tuple[str, str | None], ...] = ()
    closures: tuple[tuple[str, FactStatus, str | None], ...] = ()
    expected: tuple[tuple[tuple[str, str, str], tuple[str, ...]], ...] = ()
    revisions: tuple[tuple[str, FactState], ...] = ()
    withdrawn: tuple[str, ...] = ()
    within_session: bool = False

    def __bool__(self) -> bool:
        return bool(
            self.inserts or self.reinforcements or self.closures or self.revisions
            or self.withdrawn
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ExtractionJob:
    """A session whose events after ``done_seq`` (through ``last_seq``) are to be read for
    facts; ``lease`` is the token of the claim that holds it (None on a job that was only
    listed, not claimed)."""

    scope: Scope
    done_seq: int
    last_seq: int
    lease: str | None = None


@dataclass(frozen=True, slots=True)
class UserInfo:
    """One of a tenant's users, as its sessions add up: how many sessions, how many events
    they were given, and when the user was first and last active (each session's first and
    last event, else its creation)."""

    user: str
    sessions: int
    events: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One of a user's sessions: its id, when kenning created it, how many events it was
    given, and when its first and last events happened (their ``at``; None without events)."""

    session: str
    created_at: datetime
    events: int
    first_at: datetime | None = None
    last_at: datetime | None = None

    @property
    def active_at(self) -> datetime:
        """When the session was last active: its last event's time, else its creation."""
        return self.last_at or self.created_at


@dataclass(frozen=True, slots=True)
class Usage:
    """A session's running token usage with one model: windows sent, replies reported."""

    model: str
    input_tokens: int
    output_tokens: int
    calls: int
    cost: float


# -- namespaced documents -------------------------------------------------------------------


class DocumentCandidates(NamedTuple):
    """What a ranked document search scores, by document id: the proposed documents that
    share words with the query, with their BM25 score (the best of their texts); the
    proposed documents with a vector, with their cosine to the query's (the best of their
    texts); and the other documents the query admits, newest first, which nothing ranks."""

    lexical: list[Candidate]
    vector: list[Candidate]
    rest: list[str]
