"""The long-term memory tools: remember a fact, revoke a fact, read the profile.

Every call acts on the bound user's facts in the bound tenant (the binding is the host's; no
argument names a tenant, user or session). Facts belong to the user, not to one conversation,
but what another conversation established stays out of reach unless the host's flag and the
user's stored consent both allow it (:func:`~kenning.tools.registry.shares_sessions`):
without them ``read_profile`` shows and ``revoke_fact`` reaches only the facts read from, or
remembered in, this session, and ``remember_fact`` acts on those alone: the same value
reinforces, a new one supersedes, only this session's fact, and the answer is this session's
fact (a guess at what the user told another conversation neither finds nor changes it). With
sharing, ``remember_fact`` works on all the user's facts, as extraction from what the user
says does: a new value supersedes the user's older one, whichever session held it.
"""

from __future__ import annotations

from typing import Any

from kenning.errors import NotFound
from kenning.records import Fact, FactCategory
from kenning.tools.registry import MemoryTarget, ToolBinding, ToolSpec, shares_sessions
from kenning.tools.schema import closed_object

__all__ = ["fact_tools"]

_TEXT = {"type": "string", "minLength": 1, "maxLength": 200}


def _fact(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id,
        "text": fact.text,
        "subject": fact.subject,
        "attribute": fact.attribute,
        "qualifier": fact.qualifier,
        "value": fact.value,
        "category": fact.category.value,
        "session": fact.scope.session,
        "since": fact.valid_from.isoformat(),
    }


def remember_fact(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    fact = memory.facts.remember(
        binding.scope,
        args["attribute"],
        args["value"],
        subject=args.get("subject", "user"),
        qualifier=args.get("qualifier", ""),
        category=args.get("category", FactCategory.GENERAL.value),
        within_session=not shares_sessions(memory, binding),
    )
    return _fact(fact) | {"reinforced": fact.reinforced}


def revoke_fact(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    fact_id = args["fact_id"]
    if not shares_sessions(memory, binding):
        # Only what this conversation can see: the facts read from (or remembered in) it.
        here = {f.id for f in memory.facts.list(binding.scope)}
        if fact_id not in here:
            raise NotFound(
                f"no active fact {fact_id!r:.80} in this conversation; read_profile lists "
                "the ones you can revoke"
            )
    closed = memory.facts.revoke(binding.scope, fact_id)
    return {"id": closed.id, "text": closed.text, "status": closed.status.value}


def read_profile(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    k = args.get("k", 50)
    if shares_sessions(memory, binding):
        profile = memory.facts.profile(binding.user_scope).to_json()
        for key in ("tenant", "user"):
            profile.pop(key, None)
        facts = memory.facts.list(binding.user_scope)
        return {"shared": True, "profile": profile, "facts": [_fact(f) for f in facts[-k:]]}
    # The profile spans the user's sessions: without sharing, only this session's facts.
    facts = memory.facts.list(binding.scope)
    return {"shared": False, "profile": None, "facts": [_fact(f) for f in facts[-k:]]}


def fact_tools() -> list[ToolSpec]:
    """The tools that work on the user's long-term facts."""
    return [
        _remember_fact_tool(),
        _revoke_fact_tool(),
        _read_profile_tool(),
    ]


def _remember_fact_tool() -> ToolSpec:
    """The tool that remembers a fact the user stated or confirmed."""
    return ToolSpec(
        "remember_fact",
        "Remember a fact the user stated or confirmed, to use in later conversations: an "
        "attribute and its value (e.g. attribute 'preferred language', value 'Portuguese'"
        "). A new value for the same attribute replaces the old one; the same value "
        "strengthens it. Health, finance and relationship facts are kept only if the user "
        "agreed to that.",
        closed_object(
            {
                "attribute": _TEXT | {"description": "what the fact is about"},
                "value": _TEXT,
                "subject": _TEXT | {"description": "who it is about (default: the user)"},
                "qualifier": {
                    "type": "string",
                    "maxLength": 60,
                    "description": "when it holds, e.g. 'at work'",
                },
                "category": {"type": "string", "enum": [c.value for c in FactCategory]},
            },
            "attribute",
            "value",
        ),
        remember_fact,
        writes=True,
    )


def _revoke_fact_tool() -> ToolSpec:
    """The tool that withdraws a fact."""
    return ToolSpec(
        "revoke_fact",
        "Withdraw a fact that no longer holds or that the user asked you to forget, by the "
        "id read_profile gave. It stops being used at once; its history is kept.",
        closed_object({"fact_id": {"type": "string", "minLength": 1, "maxLength": 128}}, "fact_id"),
        revoke_fact,
        writes=True,
    )


def _read_profile_tool() -> ToolSpec:
    """The tool that reads the user's profile and facts."""
    return ToolSpec(
        "read_profile",
        "Read what you know about this user: their profile (biography, preferences, style, "
        "people, corrections) and facts with their ids, where the user and the application "
        "allow it; otherwise only the facts from this conversation.",
        closed_object(
            {
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200,
                    "description": "at most this many facts, the newest (default 50)",
                },
            }
        ),
        read_profile,
    )
