"""Frozen records of kenning's core: scopes, episodic events, pins, facts, summaries, procedures.

Records do no I/O. Input is validated once, where it enters (``Scope`` and ``NewEvent`` check
themselves on construction); records read back from a store are trusted.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from kenning.errors import InvalidInput, InvalidScope
from kenning.records.values import check_json, check_text, check_year, enum_member

__all__ = [
    "DEFAULT_MAX_CONTENT_CHARS",
    "Event",
    "JSONScalar",
    "ModelInfo",
    "NewEvent",
    "Pin",
    "PinKind",
    "PinStatus",
    "Role",
    "Scope",
    "Summary",
    "content_hash",
    "event_label",
    "new_event_id",
    "parse_opt_time",
    "parse_time",
    "time_json",
    "to_utc",
    "validate_id",
]

JSONScalar = str | int | float | bool | None

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
_META_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_TAG_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}")
DEFAULT_MAX_CONTENT_CHARS = 2_000_000


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """Identity of an embedding model whose vectors a store holds (its events' vectors,
    or the model a memory embeds documents with)."""

    model_id: str
    dimension: int
    normalized: bool = True


def validate_id(value: object, what: str) -> str:
    """Return *value* if it is a valid id, else raise :class:`InvalidScope`.

    Ids are 1–128 characters from ``A-Z a-z 0-9 . _ : @ -`` and start with a letter or digit.
    """
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        shown = repr(value)[:60]
        raise InvalidScope(
            f"{what} id {shown} is invalid: use 1-128 characters from letters, digits and "
            "'._:@-', starting with a letter or digit"
        )
    return value


def to_utc(value: datetime | str | float | int | None, *, what: str = "timestamp") -> datetime:
    """Normalise a timestamp (aware or naive datetime, ISO string, epoch seconds) to UTC.

    Naive datetimes and ISO strings without an offset are taken as UTC.
    """
    if value is None:
        return datetime.now(UTC)
    try:
        if isinstance(value, bool):
            raise TypeError
        if isinstance(value, int | float):
            return datetime.fromtimestamp(float(value), UTC)
        if isinstance(value, str):
            text = value.strip()
            if text.endswith("Z"):
                text = text[:-1] + "+00:00"
            value = datetime.fromisoformat(text)
        if not isinstance(value, datetime):
            raise TypeError
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        # Inside the try: an offset can carry a time past the calendar's ends (year 1, 9999).
        return value.astimezone(UTC)
    except (TypeError, ValueError, OverflowError, OSError) as exc:
        raise InvalidInput(
            f"{what} {value!r:.60} is not a datetime, an ISO-8601 string or epoch seconds"
        ) from exc


def time_json(value: datetime | None) -> str | None:
    """*value* as an ISO-8601 string for JSON; None stays None."""
    return None if value is None else value.isoformat()


def parse_time(value: Any) -> datetime:
    """The datetime :func:`time_json` wrote."""
    return datetime.fromisoformat(str(value))


def parse_opt_time(value: Any) -> datetime | None:
    """The datetime :func:`time_json` wrote, or None where it wrote null."""
    return None if value is None else parse_time(value)


class _IdClock:
    """Milliseconds since the epoch and a sequence number within the millisecond, never going
    back in this process: while the clock stands still or has stepped back, the sequence of
    the last millisecond counts on, and past 65,535 it borrows the next millisecond."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ms = 0
        self._seq = 0

    def tick(self) -> tuple[int, int]:
        now = time.time_ns() // 1_000_000
        with self._lock:
            if now > self._ms:
                self._ms, self._seq = now, 0
            elif self._seq < 0xFFFF:
                self._seq += 1
            else:
                self._ms, self._seq = self._ms + 1, 0
            return self._ms, self._seq


_ID_CLOCK = _IdClock()


def new_event_id() -> str:
    """A fresh, globally unique event id that sorts by creation in this process: 12 hex digits
    of milliseconds, 4 of sequence, 16 random (as long as a UUID's hex).

    Search breaks equal scores by id, so with these ids the earlier-written record comes
    first, the same in every run that writes the same events in the same order (random ids
    made a baseline's ties, and its metrics' third decimal, change from run to run).
    """
    ms, seq = _ID_CLOCK.tick()
    return f"ev_{ms:012x}{seq:04x}{secrets.randbits(64):016x}"


def content_hash(text: str) -> str:
    """Stable hash of a text, the key of the embedding cache."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a record belongs to. ``tenant`` is mandatory; reads narrow to ``user``/``session``.

    A scope with only a tenant reads across the tenant; with a user, across that user's
    sessions; with a session, that session only. Writes of events need all three.

    >>> Scope("acme", "u1", "s1")
    Scope(tenant='acme', user='u1', session='s1', agent=None)
    """

    tenant: str
    user: str | None = None
    session: str | None = None
    agent: str | None = None

    def __post_init__(self) -> None:
        validate_id(self.tenant, "tenant")
        if self.user is not None:
            validate_id(self.user, "user")
        if self.session is not None:
            validate_id(self.session, "session")
        if self.agent is not None:
            validate_id(self.agent, "agent")

    def require_session(self) -> Scope:
        """Return self if user and session are set, else raise :class:`InvalidScope`."""
        if self.user is None or self.session is None:
            raise InvalidScope("this operation needs a scope with tenant, user and session")
        return self


class Role(enum.StrEnum):
    """Who produced an event."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


def _check_json_scalar_map(value: object, what: str) -> dict[str, JSONScalar]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{what} must be an object of key -> scalar")
    out: dict[str, JSONScalar] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not _META_KEY_RE.fullmatch(key):
            raise InvalidInput(
                f"{what} key {key!r:.40} is invalid: use letters, digits and '_' (max 64), "
                "starting with a letter or '_'"
            )
        if item is not None and not isinstance(item, str | int | float | bool):
            raise InvalidInput(f"{what}[{key!r}] must be a string, number, boolean or null")
        check_json(item, f"{what}[{key!r}]")
        out[key] = item
    return out


def _check_tags(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise InvalidInput("tags must be a list of strings")
    tags = []
    for tag in value:
        if not isinstance(tag, str) or not _TAG_RE.fullmatch(tag):
            raise InvalidInput(
                f"tag {tag!r:.40} is invalid: 1-64 characters from letters, digits and '._:/-'"
            )
        tags.append(tag)
    return tuple(sorted(set(tags)))


def tool_result_text(tool_name: str | None, result: Any) -> str:
    """The text of a tool event given only its result: what search, pins and windows read
    (the result itself when it is text, else its JSON)."""
    shown = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return f"{tool_name or 'tool'} returned: {shown}"


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append to a session; kenning assigns its id and sequence number.

    ``at`` defaults to now; pass the original time when importing a history.
    ``idempotency_key`` is the caller's own id for the event: an event whose key the session
    already holds is skipped, so a retried or re-run import adds nothing twice.
    """

    role: Role | str
    content: str = ""
    at: datetime | None = None
    tool_name: str | None = None
    tool_args: Any = None
    tool_result: Any = None
    metadata: Mapping[str, JSONScalar] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    version: str | None = None
    idempotency_key: str | None = None

    def validated(self, *, max_chars: int = DEFAULT_MAX_CONTENT_CHARS) -> NewEvent:
        """Return a normalised copy, or raise :class:`InvalidInput` saying what is wrong."""
        from kenning.errors import ContentTooLarge

        role = enum_member(Role, self.role, "role")
        if not isinstance(self.content, str):
            raise InvalidInput("content must be a string")
        check_json(self.tool_args, "tool_args")
        check_json(self.tool_result, "tool_result")
        content = self.content
        if not content.strip() and role is Role.TOOL and self.tool_result is not None:
            content = tool_result_text(self.tool_name, self.tool_result)
        if not content.strip():
            raise InvalidInput(
                "content is empty: events must carry text (a tool event may give tool_result "
                "instead)"
            )
        if len(content) > max_chars:
            raise ContentTooLarge(
                f"content has {len(content)} characters, over the maximum of {max_chars}; "
                "split it into several events or raise max_content_chars"
            )
        check_text(content, "content")
        if self.tool_name is not None:
            validate_id(self.tool_name, "tool")
        if self.version is not None and (
            not isinstance(self.version, str) or not 0 < len(self.version) <= 128
        ):
            raise InvalidInput("version must be a string of 1-128 characters")
        if self.version is not None:
            check_text(self.version, "version")
        if self.idempotency_key is not None:
            validate_id(self.idempotency_key, "idempotency key")
        return NewEvent(
            role=role,
            content=content,
            # Its text's relative times ("last week") and its retention are counted from it.
            at=check_year(to_utc(self.at, what="at"), "at"),
            tool_name=self.tool_name,
            tool_args=self.tool_args,
            tool_result=self.tool_result,
            metadata=_check_json_scalar_map(self.metadata, "metadata"),
            tags=_check_tags(self.tags),
            version=self.version,
            idempotency_key=self.idempotency_key,
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> NewEvent:
        """Build from a JSON-like mapping (``role``, ``content``, ``at``?, ``metadata``?, ...)."""
        allowed = {
            "role", "content", "at", "tool_name", "tool_args", "tool_result",
            "metadata", "tags", "version", "id", "idempotency_key",
        }  # fmt: skip
        unknown = set(data) - allowed
        if unknown:
            raise InvalidInput(
                f"unknown event fields {sorted(unknown)}; allowed: {sorted(allowed)}"
            )
        if "role" not in data or ("content" not in data and "tool_result" not in data):
            raise InvalidInput("an event needs 'role' and 'content' (a tool: or 'tool_result')")
        at = data.get("at")
        key = data.get("idempotency_key", data.get("id"))
        if "id" in data and "idempotency_key" in data and data["id"] != data["idempotency_key"]:
            raise InvalidInput("'id' and 'idempotency_key' name the same thing: give one")
        return cls(
            role=data["role"],
            content=data.get("content", ""),
            at=None if at is None else to_utc(at, what="at"),
            tool_name=data.get("tool_name"),
            tool_args=data.get("tool_args"),
            tool_result=data.get("tool_result"),
            metadata=data.get("metadata") or {},
            tags=_check_tags(data.get("tags")),
            version=data.get("version"),
            idempotency_key=key,
        )


@dataclass(frozen=True, slots=True)
class Event:
    """One append-only entry of a session's episodic record."""

    id: str
    scope: Scope
    seq: int
    role: Role
    content: str
    at: datetime
    tool_name: str | None = None
    tool_args: Any = None
    tool_result: Any = None
    metadata: Mapping[str, JSONScalar] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    version: str | None = None
    content_hash: str = ""
    idempotency_key: str | None = None


class PinKind(enum.StrEnum):
    """What a pin holds; compaction may never rewrite any of these."""

    ENTITY_ID = "entity_id"
    AMOUNT = "amount"
    APPROVAL = "approval"
    AUTHORIZATION = "authorization"
    IDEMPOTENCY_KEY = "idempotency_key"
    HUMAN_GATE = "human_gate"
    OBLIGATION = "obligation"
    GOAL = "goal"
    CONSTRAINT = "constraint"


class PinStatus(enum.StrEnum):
    OPEN = "open"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Pin:
    """A typed structured fact of a session. Updates create a new version; old ones are kept."""

    id: str
    scope: Scope
    kind: PinKind
    key: str
    value: str
    version: int = 1
    amount: Decimal | None = None
    currency: str | None = None
    status: PinStatus = PinStatus.OPEN
    source_event_id: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    closed_at: datetime | None = None
    metadata: Mapping[str, JSONScalar] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Summary:
    """A view of a covered event range at a compaction level (1 = segment, 2 = session...)."""

    id: str
    scope: Scope
    level: int
    first_seq: int
    last_seq: int
    text: str
    body: Mapping[str, Any] = field(default_factory=dict)
    summarizer: str = "extractive"
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def event_label(event: NewEvent | Event) -> str:
    """A short label indexed next to the text: the speaker's name, else the tool's name."""
    for key in ("speaker", "name"):
        value = event.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:128]
    return event.tool_name or ""
