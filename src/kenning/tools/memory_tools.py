"""The memory tools an agent is given: search its memory, search the conversation by text and
time, set or close a pin, replace the goal and constraints; and, from
:mod:`kenning.tools.fact_tools`, remember or revoke a fact and read the profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kenning.errors import NotFound, ToolRefused
from kenning.records import Event, PinKind, Role, Scope, TaskUpdate, to_utc
from kenning.search.hits import Hit
from kenning.tools.fact_tools import fact_tools
from kenning.tools.registry import (
    HOST_ONLY_PIN_KINDS,
    MemoryTarget,
    ToolBinding,
    ToolRegistry,
    ToolSpec,
    shares_sessions,
)
from kenning.tools.schema import closed_object

__all__ = ["default_registry", "memory_tools"]

_AGENT_PIN_KINDS = [k.value for k in PinKind if k not in HOST_ONLY_PIN_KINDS]
_TIME = {
    "type": "string",
    "maxLength": 64,
    "description": "ISO-8601 time, e.g. 2026-03-02T14:00:00Z",
}


def _said(item: Hit | Event) -> dict[str, Any]:
    """What an agent is shown of a hit and of an event alike: its id, text, role, place in
    its session and time."""
    return {"id": item.id, "content": item.content, "role": item.role.value, "seq": item.seq,
            "at": item.at.isoformat()}  # fmt: skip


def _hit(hit: Hit) -> dict[str, Any]:
    return {**_said(hit), "session": hit.session, "score": round(hit.score, 4)}


def _event(event: Event) -> dict[str, Any]:
    return {**_said(event), "tool_name": event.tool_name}


def search_memory(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    scope = binding.user_scope if shares_sessions(memory, binding) else binding.scope
    results = memory.search(scope, args["query"], k=args.get("k", 5))
    return {"hits": [_hit(h) for h in results], "degraded": results.degraded}


def search_conversation(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    since = to_utc(args["since"], what="since") if "since" in args else None
    until = to_utc(args["until"], what="until") if "until" in args else None
    k = args.get("k", 10)
    role = args.get("role")
    if "query" in args:
        filters = {"role": role} if role else None
        results = memory.search(
            binding.scope, args["query"], k=k, filters=filters, since=since, until=until
        )
        return {"events": [_hit(h) for h in results], "degraded": results.degraded}
    # No text: the conversation in time order, the latest k turns of the window asked for.
    events = [
        e
        for e in memory.get_session(binding.scope)
        if (since is None or e.at >= since)
        and (until is None or e.at < until)
        and (role is None or e.role is Role(role))
    ]
    return {"events": [_event(e) for e in events[-k:]], "degraded": False}


def _guard_key(memory: MemoryTarget, scope: Scope, key: str) -> None:
    """A key that names a host-only pin is refused: changing or closing it would let the agent
    rewrite an approval under another kind."""
    current = next((p for p in memory.context.pins(scope) if p.key == key), None)
    if current is not None and current.kind in HOST_ONLY_PIN_KINDS:
        raise ToolRefused(
            f"pin {key!r:.80} is a {current.kind.value} pin: only the host application may "
            "change it, not an agent's tool"
        )


def refuse_host_only_kinds(args: Mapping[str, Any]) -> None:
    """An approval, authorization or human-gate pin is refused for what it is, before the
    schema (whose enum leaves those kinds out) would only call it malformed."""
    kind = args.get("kind")
    if isinstance(kind, str) and kind in {k.value for k in HOST_ONLY_PIN_KINDS}:
        raise ToolRefused(
            f"an agent cannot create a {kind} pin: approvals, authorizations and human-gate "
            "outcomes are recorded only by the host application"
        )


def set_pin(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    kind = args["kind"]
    # The key the pin will be stored under (the store's default when none is given).
    key = args.get("key") or f"{kind}:{' '.join(args['value'].split())}"[:256]
    _guard_key(memory, binding.scope, key)
    pin = memory.context.set_pin(
        binding.scope,
        kind,
        args["value"],
        key=args.get("key"),
        amount=None if "amount" not in args else str(args["amount"]),
        currency=args.get("currency"),
    )
    return {
        "key": pin.key,
        "kind": pin.kind.value,
        "value": pin.value,
        "version": pin.version,
        "status": pin.status.value,
    }


def close_pin(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    _guard_key(memory, binding.scope, args["key"])
    try:
        pin = memory.context.close_pin(binding.scope, args["key"])
    except NotFound:
        keys = [p.key for p in memory.context.pins(binding.scope)][:20]
        raise NotFound(f"no pin with key {args['key']!r:.80} here; open pins: {keys}") from None
    return {"key": pin.key, "status": pin.status.value, "version": pin.version}


def replace_goal(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    drop: tuple[str, ...] = ()
    constraints = tuple(args.get("constraints", ()))
    if "constraints" in args:
        drop = memory.context.task_state(binding.scope).constraints
    state = memory.context.update_task(
        binding.scope,
        TaskUpdate(task=args.get("goal"), constraints=constraints, drop_constraints=drop),
    )
    return state.to_json()


def update_investigation(memory: MemoryTarget, binding: ToolBinding, args: dict[str, Any]) -> Any:
    """Record hypotheses (proposed, supported, rejected with a reason) and verified findings;
    a rejected hypothesis comes back only with ``reopen`` and a reason."""
    update = TaskUpdate(hypotheses=args.get("hypotheses", ()), findings=args.get("findings", ()))
    return memory.context.update_task(binding.scope, update).to_json()


def memory_tools() -> list[ToolSpec]:
    """The tools that work on the episodic record, pins and task state."""
    return [
        _search_memory_tool(),
        _search_conversation_tool(),
        _set_pin_tool(),
        _close_pin_tool(),
        _replace_goal_tool(),
        _update_investigation_tool(),
    ]


def _search_memory_tool() -> ToolSpec:
    """The tool that searches what the agent remembers of the user."""
    return ToolSpec(
        "search_memory",
        "Search what you remember of this user: earlier turns of this conversation (and of "
        "the user's other conversations, where the user and the application allow it). "
        "Hybrid keyword and meaning search; each hit says when it was said and in which "
        "session.",
        closed_object(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 4000,
                    "description": "what to look for, in natural language",
                },
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "description": "how many hits (default 5)",
                },
            },
            "query",
        ),
        search_memory,
    )


def _search_conversation_tool() -> ToolSpec:
    """The tool that reads this conversation by text and time."""
    return ToolSpec(
        "search_conversation",
        "Search this conversation by text and time: with a query, the best-matching turns; "
        "without one, the turns between since and until in order. Times are ISO-8601.",
        closed_object(
            {
                "query": {"type": "string", "minLength": 1, "maxLength": 4000},
                "since": _TIME,
                "until": _TIME,
                "role": {"type": "string", "enum": [r.value for r in Role]},
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "description": "how many turns (default 10)",
                },
            }
        ),
        search_conversation,
    )


def _set_pin_tool() -> ToolSpec:
    """The tool that pins a value (host-only kinds refused)."""
    return ToolSpec(
        "set_pin",
        "Pin a value that must never be lost or rewritten while this conversation lasts: "
        "an id, an amount with its currency, an idempotency key, an open obligation, a "
        "goal or a constraint. Approvals, authorizations and human decisions cannot be "
        "pinned by you: the application records those.",
        closed_object(
            {
                "kind": {"type": "string", "enum": _AGENT_PIN_KINDS},
                "value": {"type": "string", "minLength": 1, "maxLength": 2000},
                "key": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 256,
                    "description": "stable name; a new value under it is a new version",
                },
                "amount": {
                    "type": "string",
                    "maxLength": 64,
                    "description": "decimal amount for kind=amount, e.g. '42.50'",
                },
                "currency": {
                    "type": "string",
                    "minLength": 3,
                    "maxLength": 3,
                    "description": "ISO-4217 code for kind=amount, e.g. 'EUR'",
                },
            },
            "kind",
            "value",
        ),
        set_pin,
        writes=True,
        guard=refuse_host_only_kinds,
    )


def _close_pin_tool() -> ToolSpec:
    """The tool that closes a pin."""
    return ToolSpec(
        "close_pin",
        "Close a pin that no longer holds (an obligation fulfilled, a constraint lifted). "
        "Its history is kept.",
        closed_object({"key": {"type": "string", "minLength": 1, "maxLength": 256}}, "key"),
        close_pin,
        writes=True,
    )


def _replace_goal_tool() -> ToolSpec:
    """The tool that replaces the goal and constraints."""
    return ToolSpec(
        "replace_goal",
        "Replace the conversation's goal, and, if given, its whole list of constraints.",
        closed_object(
            {
                "goal": {"type": "string", "minLength": 1, "maxLength": 2000},
                "constraints": {
                    "type": "array",
                    "maxItems": 50,
                    "items": {"type": "string", "minLength": 1, "maxLength": 1000},
                },
            }
        ),
        replace_goal,
        writes=True,
    )


_EVIDENCE = {"type": "array", "maxItems": 20,
             "items": {"type": "string", "minLength": 1, "maxLength": 256}}  # fmt: skip


def _update_investigation_tool() -> ToolSpec:
    """The tool that records hypotheses and verified findings in the task state."""
    hypothesis = closed_object(
        {
            "text": {"type": "string", "minLength": 1, "maxLength": 1000},
            "status": {"type": "string", "enum": ["open", "supported", "rejected"]},
            "evidence": _EVIDENCE,
            "reason": {"type": "string", "maxLength": 1000},
            "reopen": {"type": "boolean"},
        },
        "text",
    )
    finding = closed_object(
        {"text": {"type": "string", "minLength": 1, "maxLength": 1000}, "evidence": _EVIDENCE},
        "text",
    )
    return ToolSpec(
        "update_investigation",
        "Record what you tried and learned, so it survives when the conversation is "
        "summarized: hypotheses (open, supported, or rejected with a one-line reason) and "
        "verified findings with their evidence (event ids). A rejected hypothesis cannot be "
        "proposed again unless you set reopen with a reason.",
        closed_object(
            {
                "hypotheses": {"type": "array", "maxItems": 20, "items": hypothesis},
                "findings": {"type": "array", "maxItems": 20, "items": finding},
            }
        ),
        update_investigation,
        writes=True,
    )


def default_registry() -> ToolRegistry:
    """A registry of every memory tool kenning offers: the episodic and working-context tools,
    then the long-term ones."""
    return ToolRegistry([*memory_tools(), *fact_tools()])
