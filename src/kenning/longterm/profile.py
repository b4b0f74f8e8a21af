"""A user's profile: a typed key/value view of their current facts (pure).

Biography (name, age, work, places, roles, hobbies, languages, family, pets), preferences
(likes, favourites, tools, diet), interaction style (how to address them, language, time
zone), what they said about people close to them, the corrections they made (a value that
replaced an earlier one), and how many sessions they had. Editing a profile entry is an
explicit fact (``memory.facts.remember``); erasing a user erases every record of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from kenning.records import USER, Correction, Fact, FactStatus, Profile, Scope
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
# Multi-valued kinds: "hobby:guitar", "language:spanish", "family:two kids", ...
_BIOGRAPHY_KINDS = frozenset(
    {"is_a", "allergy", "condition", "hobby", "language", "education", "family", "pet"}
)


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
    their sessions (its times are those of the user's events, not of when they were stored)."""
    biography: dict[str, str] = {}
    preferences: dict[str, str] = {}
    style: dict[str, str] = {}
    people: dict[str, dict[str, str]] = {}
    fact_ids: dict[str, str] = {}
    for fact in current:
        key, value = _label(fact)
        if fact.qualifier:
            key = f"{key} ({fact.qualifier})"
        kind = fact.attribute.partition(":")[0]
        if fact.subject != USER:
            if not fact.subject.startswith("tool:"):
                people.setdefault(fact.subject, {})[key] = value
                fact_ids[f"{fact.subject} — {key}"] = fact.id
            continue
        if fact.attribute in _STYLE:
            section = style
        elif kind in _PREFERENCE_KINDS or fact.attribute.startswith("favorite "):
            section = preferences
        elif kind in _BIOGRAPHY_KINDS or ":" not in fact.attribute:
            section = biography
        else:
            continue
        section[key] = value
        fact_ids[key] = fact.id
    by_id = {f.id: f for f in [*current, *closed]}
    corrections = tuple(
        Correction(old.attribute, old.value, new.value, new.valid_from)
        for old in closed
        if old.status is FactStatus.SUPERSEDED and old.subject == USER
        and (new := by_id.get(old.superseded_by or "")) is not None
    )  # fmt: skip
    last = max(sessions, key=lambda s: (s.active_at, s.session), default=None)
    first = min((s.first_at or s.created_at for s in sessions), default=None)
    return Profile(
        user=Scope(user.tenant, user.user),
        biography=biography,
        preferences=preferences,
        style=style,
        people=people,
        corrections=tuple(sorted(corrections, key=lambda c: c.at)),
        session_count=len(sessions),
        last_session=None if last is None else last.session,
        last_session_at=None if last is None else last.active_at,
        first_seen_at=first,
        fact_ids=fact_ids,
    )
