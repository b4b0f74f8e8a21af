"""A user's profile as a record: what kenning holds about them, by kind (built from their
facts by :func:`kenning.longterm.profile.build_profile`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kenning.records.core import Scope

__all__ = ["Correction", "Profile", "ProfileLine"]


@dataclass(frozen=True, slots=True)
class Correction:
    """A value the user replaced: what it was, what it is now, and when."""

    attribute: str
    old: str
    new: str
    at: datetime


@dataclass(frozen=True, slots=True)
class ProfileLine:
    """One line of a profile as a window shows it, and the fact it states (None: a line
    no single fact stands behind, such as the session count)."""

    text: str
    fact: str | None = None


@dataclass(frozen=True, slots=True)
class Profile:
    """What kenning holds about a user, by kind."""

    user: Scope
    biography: Mapping[str, str] = field(default_factory=dict)
    preferences: Mapping[str, str] = field(default_factory=dict)
    style: Mapping[str, str] = field(default_factory=dict)
    people: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    corrections: tuple[Correction, ...] = ()
    session_count: int = 0
    last_session: str | None = None
    last_session_at: datetime | None = None
    #: When the user's first event happened.
    first_seen_at: datetime | None = None
    #: The id of the fact behind each entry: by its key for the user's own entries, by
    #: ``"<person> — <key>"`` for another person's.
    fact_ids: Mapping[str, str] = field(default_factory=dict)

    def lines(self, *, current_session: str | None = None) -> list[str]:
        """The profile as short lines for a window, most useful first."""
        return [line.text for line in self.stated_lines(current_session=current_session)]

    def stated_lines(self, *, current_session: str | None = None) -> list[ProfileLine]:
        """:meth:`lines` with the fact each line states, so that a window does not show a
        fact again among its memories."""
        out: list[ProfileLine] = []
        if self.session_count:
            returning = self.session_count > 1 or (
                self.last_session is not None and self.last_session != current_session
            )
            kind = "returning user" if returning else "new user"
            out.append(ProfileLine(f"{kind} (session {self.session_count})"))
        for entries in (self.style, self.biography, self.preferences):
            out += [ProfileLine(f"{k}: {v}", self.fact_ids.get(k)) for k, v in entries.items()]
        for who, facts in self.people.items():
            out += [
                ProfileLine(f"{who} — {k}: {v}", self.fact_ids.get(f"{who} — {k}"))
                for k, v in facts.items()
            ]
        out += [
            ProfileLine(f"corrected {c.attribute}: {c.old} -> {c.new}")
            for c in self.corrections[-5:]
        ]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "tenant": self.user.tenant,
            "user": self.user.user,
            "biography": dict(self.biography),
            "preferences": dict(self.preferences),
            "style": dict(self.style),
            "people": {k: dict(v) for k, v in self.people.items()},
            "corrections": [
                {"attribute": c.attribute, "old": c.old, "new": c.new, "at": c.at.isoformat()}
                for c in self.corrections
            ],
            "session_count": self.session_count,
            "last_session": self.last_session,
            "last_session_at": _iso(self.last_session_at),
            "first_seen_at": _iso(self.first_seen_at),
            "fact_ids": dict(self.fact_ids),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Profile:
        """The profile :meth:`to_json` wrote."""
        return cls(
            user=Scope(data["tenant"], data["user"]),
            biography=dict(data.get("biography") or {}),
            preferences=dict(data.get("preferences") or {}),
            style=dict(data.get("style") or {}),
            people={k: dict(v) for k, v in (data.get("people") or {}).items()},
            corrections=tuple(
                Correction(c["attribute"], c["old"], c["new"], datetime.fromisoformat(c["at"]))
                for c in data.get("corrections") or ()
            ),
            session_count=int(data.get("session_count", 0)),
            last_session=data.get("last_session"),
            last_session_at=_from_iso(data.get("last_session_at")),
            first_seen_at=_from_iso(data.get("first_seen_at")),
            fact_ids=dict(data.get("fact_ids") or {}),
        )


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def _from_iso(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)
