"""A user's profile: a typed key/value view of their current facts (pure).

Biography (name, age, work, places, roles), preferences (likes, favourites, tools, diet),
interaction style (how to address them, language, time zone), what they said about people
close to them, the corrections they made (a value that replaced an earlier one), and how many
sessions they had. Editing a profile entry is an explicit fact (``memory.facts.remember``);
erasing a user erases every record of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kenning.records import USER, Fact, FactStatus, Scope
from kenning.store.records import SessionInfo

__all__ = ["Correction", "Profile", "build_profile"]

_STYLE = frozenset(
    {
        "preferred name",
        "preferred language",
        "language",
        "native language",
        "time zone",
        "timezone",
        "pronouns",
        "nickname",
    }
)
_PREFERENCE_KINDS = frozenset({"preference", "uses", "diet"})
_BIOGRAPHY_KINDS = frozenset({"is_a", "allergy", "condition"})


@dataclass(frozen=True, slots=True)
class Correction:
    """A value the user replaced: what it was, what it is now, and when."""

    attribute: str
    old: str
    new: str
    at: datetime


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

    def lines(self, *, current_session: str | None = None) -> list[str]:
        """The profile as short lines for a window, most useful first."""
        out: list[str] = []
        if self.session_count:
            returning = self.session_count > 1 or (
                self.last_session is not None and self.last_session != current_session
            )
            kind = "returning user" if returning else "new user"
            out.append(f"{kind} (session {self.session_count})")
        out += [f"{k}: {v}" for k, v in self.style.items()]
        out += [f"{k}: {v}" for k, v in self.biography.items()]
        out += [f"{k}: {v}" for k, v in self.preferences.items()]
        for who, facts in self.people.items():
            out += [f"{who} — {k}: {v}" for k, v in facts.items()]
        out += [f"corrected {c.attribute}: {c.old} -> {c.new}" for c in self.corrections[-5:]]
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
            "last_session_at": None
            if self.last_session_at is None
            else self.last_session_at.isoformat(),
        }


def _label(fact: Fact) -> tuple[str, str]:
    kind, sep, thing = fact.attribute.partition(":")
    if not sep:
        return fact.attribute, fact.value
    if kind == "preference":
        return thing, fact.value
    if kind == "diet":
        return f"does not eat or drink {thing.removeprefix('no ')}", "yes"
    if kind == "is_a":
        return thing, "yes"
    return f"{kind} {thing}", fact.value


def build_profile(
    user: Scope,
    current: Sequence[Fact],
    closed: Sequence[Fact],
    sessions: Sequence[SessionInfo],
) -> Profile:
    """The profile of *user* from their current facts, the facts they replaced (*closed*), and
    their sessions."""
    biography: dict[str, str] = {}
    preferences: dict[str, str] = {}
    style: dict[str, str] = {}
    people: dict[str, dict[str, str]] = {}
    for fact in current:
        key, value = _label(fact)
        if fact.qualifier:
            key = f"{key} ({fact.qualifier})"
        kind = fact.attribute.partition(":")[0]
        if fact.subject != USER:
            if not fact.subject.startswith("tool:"):
                people.setdefault(fact.subject, {})[key] = value
        elif fact.attribute in _STYLE:
            style[key] = value
        elif kind in _PREFERENCE_KINDS or fact.attribute.startswith("favorite "):
            preferences[key] = value
        elif kind in _BIOGRAPHY_KINDS or ":" not in fact.attribute:
            biography[key] = value
    by_id = {f.id: f for f in [*current, *closed]}
    corrections = tuple(
        Correction(old.attribute, old.value, new.value, new.valid_from)
        for old in closed
        if old.status is FactStatus.SUPERSEDED and old.subject == USER
        and (new := by_id.get(old.superseded_by or "")) is not None
    )  # fmt: skip
    last = max(sessions, key=lambda s: s.created_at, default=None)
    return Profile(
        user=Scope(user.tenant, user.user),
        biography=biography,
        preferences=preferences,
        style=style,
        people=people,
        corrections=tuple(sorted(corrections, key=lambda c: c.at)),
        session_count=len(sessions),
        last_session=None if last is None else last.session,
        last_session_at=None if last is None else last.created_at,
    )
