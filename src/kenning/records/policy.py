"""Consent, retention and legal holds: what a tenant allows and what a user agreed to."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from kenning.checks import check_numbers
from kenning.errors import InvalidInput
from kenning.records.core import Scope
from kenning.records.values import check_text

__all__ = ["Consent", "LegalHold", "StoreStats", "TenantPolicy", "UserSettings"]


def _days(value: float | None, what: str) -> None:
    if value is not None and (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InvalidInput(f"{what} must be a positive number of days, or None for no limit")


_MAX_TOOLS = 200
_TOOL_LISTS = (
    "fact_tools", "authoritative_tools", "file_read_tools", "file_write_tools", "file_path_args",
)  # fmt: skip


def _tool_names(names: object, what: str) -> None:
    if (
        not isinstance(names, tuple)
        or len(names) > _MAX_TOOLS
        or not all(isinstance(n, str) and 0 < len(n) <= 200 and n.strip() == n for n in names)
    ):
        raise InvalidInput(
            f"{what} must be a tuple of at most {_MAX_TOOLS} tool names (non-empty, at most "
            "200 characters, no surrounding spaces)"
        )
    for name in names:
        check_text(name, what)


@dataclass(frozen=True, slots=True)
class TenantPolicy:
    """A tenant's defaults and retention.

    ``share_across_sessions``: a user's facts and profile reach their other sessions unless the
    user said otherwise (off: privacy by default). ``sensitive_facts``: health, finance and
    relationship statements are kept as facts (off: they stay episodic text only).
    ``episode_days`` / ``fact_days``: hard retention of events and facts (None: kept until
    erased; facts until revoked). ``recent_sessions``: how many of a user's last sessions the
    rolling cross-session summary covers. ``fact_tools``: the tools whose results are read
    for facts (none by default: a tool result's values still reach pins and search, but a
    key like ``currency`` in a ``refunds.create`` result is the tool's output, not something
    the user is). ``authoritative_tools``: the tools whose results may grant approvals and
    authorizations as pins (none by default: a tool result is data the agent fetched, and
    an email or a web page saying "approved" is no approval; the host's own API still sets
    any pin). ``file_read_tools`` / ``file_write_tools``: the tools that read or write files
    (none by default); the session's action log lists the files their calls name, in the
    first of ``file_path_args`` each call carries (a string, or a list of strings).
    """

    share_across_sessions: bool = False
    sensitive_facts: bool = False
    episode_days: float | None = None
    fact_days: float | None = None
    recent_sessions: int = 5
    fact_tools: tuple[str, ...] = ()
    authoritative_tools: tuple[str, ...] = ()
    file_read_tools: tuple[str, ...] = ()
    file_write_tools: tuple[str, ...] = ()
    file_path_args: tuple[str, ...] = ("path", "file_path", "filename")

    def __post_init__(self) -> None:
        _days(self.episode_days, "episode_days")
        _days(self.fact_days, "fact_days")
        check_numbers(self, "recent_sessions", low=0, high=50, integer=True)
        _tool_names(self.fact_tools, "fact_tools")
        _tool_names(self.authoritative_tools, "authoritative_tools")
        _tool_names(self.file_read_tools, "file_read_tools")
        _tool_names(self.file_write_tools, "file_write_tools")
        _tool_names(self.file_path_args, "file_path_args")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TenantPolicy:
        known = {f for f in cls.__dataclass_fields__}
        fields = {k: v for k, v in data.items() if k in known}
        for name in _TOOL_LISTS:
            if isinstance(fields.get(name), list):
                fields[name] = tuple(fields[name])
        return cls(**fields)


@dataclass(frozen=True, slots=True)
class UserSettings:
    """What a user chose; None leaves the tenant's default in force."""

    share_across_sessions: bool | None = None
    sensitive_facts: bool | None = None


@dataclass(frozen=True, slots=True)
class Consent:
    """The effective choices for one user: their settings over the tenant's policy."""

    share_across_sessions: bool
    sensitive_facts: bool

    @classmethod
    def resolve(cls, policy: TenantPolicy, settings: UserSettings) -> Consent:
        def pick(mine: bool | None, default: bool) -> bool:
            return default if mine is None else mine

        return cls(
            share_across_sessions=pick(
                settings.share_across_sessions, policy.share_across_sessions
            ),
            sensitive_facts=pick(settings.sensitive_facts, policy.sensitive_facts),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Consent:
        return cls(
            share_across_sessions=bool(data["share_across_sessions"]),
            sensitive_facts=bool(data["sensitive_facts"]),
        )


@dataclass(frozen=True, slots=True)
class LegalHold:
    """A hold on a tenant, one user of it, or one session: blocks purge and erase of it."""

    scope: Scope
    reason: str
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def covers(self, scope: Scope) -> bool:
        """True if erasing *scope* would touch what this hold protects."""
        mine = self.scope
        return (
            mine.tenant == scope.tenant
            and (mine.user is None or scope.user is None or mine.user == scope.user)
            and (mine.session is None or scope.session is None or mine.session == scope.session)
        )


@dataclass(frozen=True, slots=True)
class StoreStats:
    """What a tenant (or one user of it) holds: records by kind, their mean age in days, the
    most used tags, facts by status, what the retention purge removed (tenant-wide), how
    many events are still to be read for facts, and how many namespaced documents it holds
    (a user: those the user owns; expired ones count until they are swept)."""

    records: Mapping[str, int]
    mean_age_days: Mapping[str, float]
    top_tags: tuple[tuple[str, int], ...]
    facts: Mapping[str, int]
    purged: Mapping[str, int]
    unread_events: int = 0
    documents: int = 0
