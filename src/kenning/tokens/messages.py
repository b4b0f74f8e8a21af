"""How an event becomes OpenAI-style chat messages: the unit the token ledger counts and the
window sends (pure, no I/O)."""

from __future__ import annotations

import json
import re
from typing import Any

from kenning.records import Event, Role

__all__ = ["event_messages", "message_for"]

_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


def event_messages(event: Event) -> list[dict[str, Any]]:
    """An event as OpenAI-style messages (see :func:`message_for`)."""
    call = event.metadata.get("tool_call_id")
    return message_for(
        event.role, event.content, tool_name=event.tool_name,
        tool_call_id=call if isinstance(call, str) else None, tool_args=event.tool_args,
        seq=event.seq,
    )  # fmt: skip


def message_for(
    role: Role,
    text: str,
    *,
    tool_name: str | None = None,
    tool_call_id: str | None = None,
    tool_args: Any = None,
    seq: int = 0,
) -> list[dict[str, Any]]:
    """The chat messages of an event's role and text: one message, or two for a tool result.

    A tool result is a ``tool`` message answering the assistant message just before it, which
    carries the call in ``tool_calls``: the result's ``tool_call_id`` from the event metadata
    (else ``kn<seq>``, after the event's sequence number), the tool's name (characters
    outside ``A-Z a-z 0-9 _ -`` as ``_``) and the result's own ``tool_args`` as JSON (else
    ``{}``). The API accepts a ``tool`` message only right after the call it answers, so each
    result brings its call along: it stays valid wherever the window's tail begins, and is
    never shown as the user's words. The call's ``content`` is ``""`` (every message's content
    is a string).
    """
    if role is not Role.TOOL:
        return [{"role": role.value, "content": text}]
    call = tool_call_id or f"kn{seq}"
    name = _NOT_NAME.sub("_", tool_name or "tool")[:64]
    args = "{}" if tool_args is None else json.dumps(
        tool_args, ensure_ascii=False, separators=(",", ":")
    )  # fmt: skip
    return [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": call, "type": "function", "function": {"name": name, "arguments": args}}
        ]},
        {"role": "tool", "tool_call_id": call, "content": text},
    ]  # fmt: skip
