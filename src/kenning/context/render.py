"""How records become window text: pins, summaries and retrieved memories as lines of their
tier's block, and the routing of tool schemas (events become chat messages in
:mod:`kenning.tokens.messages`). Pure, no I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kenning.errors import InvalidInput
from kenning.records import Pin, PinKind, PinStatus, Procedure, check_json
from kenning.search.hits import Hit
from kenning.text import query_terms

__all__ = [
    "BLOCK_HEADERS",
    "hit_line",
    "pin_line",
    "pin_order",
    "procedure_text",
    "route_tools",
    "tool_text",
    "validate_tools",
]

BLOCK_HEADERS: Mapping[str, str] = {
    "goal": "Goal and constraints of this conversation:",
    "profile": "What is known about this user (long-term memory):",
    "pins": "Pinned facts (exact values recorded from the conversation; they override any "
    "summary):",
    "summaries": "Earlier in this conversation (summaries; event numbers in brackets):",
    "memories": "Possibly relevant earlier memories (cited by record id, session and time):",
}

# Which pins matter most when not all fit: decisions that grant or block actions first.
_PIN_PRIORITY: Mapping[PinKind, int] = {
    PinKind.AUTHORIZATION: 0,
    PinKind.APPROVAL: 1,
    PinKind.HUMAN_GATE: 2,
    PinKind.GOAL: 3,
    PinKind.CONSTRAINT: 4,
    PinKind.AMOUNT: 5,
    PinKind.ENTITY_ID: 6,
    PinKind.IDEMPOTENCY_KEY: 7,
    PinKind.OBLIGATION: 8,
}


def pin_order(pins: Sequence[Pin]) -> list[Pin]:
    """Open pins before closed ones, then by kind priority, then oldest first.

    An id pinned under several keys (``ref: RF-7781`` from text, ``refund_id: RF-7781`` from a
    tool result) is shown once, under the key from structured data when there is one: text
    patterns carry ``metadata["pattern"]``, tool fields do not.
    """
    shown: dict[str, Pin] = {}
    for pin in pins:
        if pin.kind is not PinKind.ENTITY_ID:
            continue
        seen = shown.get(pin.value)
        if seen is None or ("pattern" in seen.metadata and "pattern" not in pin.metadata):
            shown[pin.value] = pin
    pins = [p for p in pins if p.kind is not PinKind.ENTITY_ID or shown[p.value] is p]
    ranked = sorted(
        enumerate(pins),
        key=lambda ip: (
            ip[1].status is PinStatus.CLOSED,
            _PIN_PRIORITY.get(ip[1].kind, 9),
            ip[0],
        ),
    )
    return [p for _, p in ranked]


def pin_line(pin: Pin) -> str:
    label = pin.key.split(":", 1)[0] if ":" in pin.key else pin.kind.value
    status = (
        ""
        if pin.status is PinStatus.OPEN and pin.kind is not PinKind.OBLIGATION
        else (f" [{pin.status.value}]")
    )
    version = f" (v{pin.version})" if pin.version > 1 else ""
    return f"- {label}: {pin.value}{status}{version}"


def hit_line(hit: Hit, *, max_chars: int) -> str:
    """A retrieved memory with its citation: record id, session and time."""
    text = " ".join(hit.content.split())
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    when = hit.at.strftime("%Y-%m-%d %H:%M UTC")
    return f"- [{hit.id} | session {hit.scope.session} | {when}] {hit.role.value}: {text}"


def validate_tools(tools: object) -> list[Mapping[str, Any]]:
    """Check tool schemas (OpenAI ``tools`` entries); raise InvalidInput naming the bad one."""
    if tools is None:
        return []
    if isinstance(tools, str | Mapping) or not isinstance(tools, Sequence):
        raise InvalidInput("tools must be a list of tool schemas (mappings)")
    check_json(list(tools), "tools")
    out = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidInput(f"tools[{i}] must be a mapping")
        if not _tool_name(tool):
            raise InvalidInput(f"tools[{i}] has no name (expected 'name' or 'function.name')")
        out.append(tool)
    return out


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return str(function["name"])
    name = tool.get("name")
    return name if isinstance(name, str) else ""


def procedure_text(procedure: Procedure) -> str:
    """A playbook as the window shows it: its name, version and numbered steps."""
    steps = "".join(f"\n{n}. {step}" for n, step in enumerate(procedure.steps, start=1))
    about = f" — {procedure.description}" if procedure.description else ""
    return f"Playbook {procedure.name} (v{procedure.version}){about}:{steps}"


def tool_text(tool: Mapping[str, Any]) -> str:
    """The text a tool schema is counted as: its compact JSON."""
    return json.dumps(tool, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def route_tools(tools: Sequence[Mapping[str, Any]], query: str | None) -> list[int]:
    """Indices of *tools*, most relevant to *query* first (ties keep the given order).

    Relevance is the number of the query's terms found in the tool's name, description and
    parameter names; with no query the given order stands.
    """
    if not query or len(tools) < 2:
        return list(range(len(tools)))
    terms = set(query_terms(query))
    scores = []
    for i, tool in enumerate(tools):
        words = set(query_terms(tool_text(tool).replace("_", " ")))
        scores.append((-len(terms & words), i))
    return [i for _, i in sorted(scores)]
