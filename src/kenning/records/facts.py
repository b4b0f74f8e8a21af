"""Long-term memory records: facts with time validity, their drafts, and procedures.

A fact says something about a subject — the user, or another named entity — as an attribute
with a value, optionally under a qualifier ("at work"). Facts are never edited: a new value
for the same subject, attribute and qualifier supersedes the old fact (which keeps its
history), a revocation closes it, a repetition reinforces it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kenning.records.core import Scope, parse_opt_time, parse_time, time_json

__all__ = [
    "USER",
    "Fact",
    "FactCategory",
    "FactDraft",
    "FactSource",
    "FactStatus",
    "Procedure",
    "ProcedureMatch",
    "ProcedureStatus",
]

USER = "user"
"""The subject of facts about the user."""


class FactSource(enum.StrEnum):
    """Where a fact comes from: the user said it, it was inferred, or a tool returned it."""

    EXPLICIT = "explicit"
    INFERRED = "inferred"
    TOOL = "tool"


class FactStatus(enum.StrEnum):
    """``active`` facts are read and searched; the others keep their history."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    REVOKED = "revoked"
    ARCHIVED = "archived"
    EXPIRED = "expired"


class FactCategory(enum.StrEnum):
    """Sensitive categories are kept as facts only with the tenant's or the user's consent."""

    GENERAL = "general"
    HEALTH = "health"
    FINANCE = "finance"
    RELATIONSHIP = "relationship"

    @property
    def sensitive(self) -> bool:
        return self is not FactCategory.GENERAL


@dataclass(frozen=True, slots=True)
class FactDraft:
    """A candidate fact found in an event, before consolidation.

    ``revoke`` marks a statement that withdraws a fact ("I no longer eat meat", "forget that I
    like jazz"): it closes the matching fact instead of adding one. ``multi`` attributes hold
    several facts at once (``preference:jazz`` and ``preference:rock``); the object is part of
    the attribute, so a new value supersedes only the fact about the same object.
    """

    subject: str
    attribute: str
    value: str
    text: str
    qualifier: str = ""
    source: FactSource = FactSource.EXPLICIT
    confidence: float = 1.0
    category: FactCategory = FactCategory.GENERAL
    revoke: bool = False
    valid_from: datetime | None = None
    source_event_id: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        """What a new value supersedes: subject, attribute, qualifier."""
        return (self.subject, self.attribute, self.qualifier)


@dataclass(frozen=True, slots=True)
class Fact:
    """A stored fact and its validity.

    ``valid_from``/``valid_to`` bound when it held; ``superseded_by`` names the fact that
    replaced it. ``reinforced`` counts how often it was stated (duplicates reinforce instead of
    piling up), ``sources`` the events it was stated in. ``expires_at`` is hard retention;
    ``pinned`` facts never decay.
    """

    id: str
    scope: Scope
    subject: str
    attribute: str
    value: str
    text: str
    qualifier: str = ""
    source: FactSource = FactSource.EXPLICIT
    confidence: float = 1.0
    category: FactCategory = FactCategory.GENERAL
    status: FactStatus = FactStatus.ACTIVE
    tags: tuple[str, ...] = ()
    valid_from: datetime = field(default_factory=lambda: datetime.now(UTC))
    valid_to: datetime | None = None
    superseded_by: str | None = None
    expires_at: datetime | None = None
    pinned: bool = False
    reinforced: int = 1
    last_seen: datetime | None = None
    sources: tuple[str, ...] = ()
    source_event_id: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    access_count: int = 0
    last_access: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.attribute, self.qualifier)

    def to_json(self) -> dict[str, Any]:
        """Every field as plain JSON (times as ISO-8601; the session is where it was read)."""
        return {
            "id": self.id, "tenant": self.scope.tenant, "user": self.scope.user,
            "session": self.scope.session, "subject": self.subject,
            "attribute": self.attribute, "qualifier": self.qualifier, "value": self.value,
            "text": self.text, "status": self.status.value, "source": self.source.value,
            "confidence": self.confidence, "category": self.category.value,
            "tags": list(self.tags), "valid_from": time_json(self.valid_from),
            "valid_to": time_json(self.valid_to), "superseded_by": self.superseded_by,
            "expires_at": time_json(self.expires_at), "pinned": self.pinned,
            "reinforced": self.reinforced, "last_seen": time_json(self.last_seen),
            "sources": list(self.sources), "source_event_id": self.source_event_id,
            "created_at": time_json(self.created_at), "access_count": self.access_count,
            "last_access": time_json(self.last_access),
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fact:
        """The fact :meth:`to_json` wrote."""
        return cls(
            id=data["id"], scope=Scope(data["tenant"], data.get("user"), data.get("session")),
            subject=data["subject"], attribute=data["attribute"], value=data["value"],
            text=data["text"], qualifier=data.get("qualifier", ""),
            source=FactSource(data.get("source", "explicit")),
            confidence=float(data.get("confidence", 1.0)),
            category=FactCategory(data.get("category", "general")),
            status=FactStatus(data.get("status", "active")), tags=tuple(data.get("tags", ())),
            valid_from=parse_time(data["valid_from"]),
            valid_to=parse_opt_time(data.get("valid_to")), superseded_by=data.get("superseded_by"),
            expires_at=parse_opt_time(data.get("expires_at")),
            pinned=bool(data.get("pinned", False)), reinforced=int(data.get("reinforced", 1)),
            last_seen=parse_opt_time(data.get("last_seen")), sources=tuple(data.get("sources", ())),
            source_event_id=data.get("source_event_id"), created_at=parse_time(data["created_at"]),
            access_count=int(data.get("access_count", 0)),
            last_access=parse_opt_time(data.get("last_access")),
        )  # fmt: skip


class ProcedureStatus(enum.StrEnum):
    CANDIDATE = "candidate"
    ACTIVE = "active"
    RETIRED = "retired"


@dataclass(frozen=True, slots=True)
class Procedure:
    """A versioned playbook tied to the hash of the tool schemas it was written for."""

    id: str
    scope: Scope
    name: str
    version: int
    tool_schema_hash: str
    steps: tuple[str, ...]
    description: str = ""
    status: ProcedureStatus = ProcedureStatus.ACTIVE
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass(frozen=True, slots=True)
class ProcedureMatch:
    """The active playbook for the current tools (None if none matches), and the versions
    left out because they were written for other tools."""

    procedure: Procedure | None
    drifted: tuple[Procedure, ...] = ()
