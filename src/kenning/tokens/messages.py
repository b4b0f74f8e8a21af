"""How an event becomes an OpenAI-style chat message: the unit the token ledger counts and
the window sends (pure, no I/O)."""

from __future__ import annotations

from kenning.records import Event, Role

__all__ = ["event_message", "message_for"]


def event_message(event: Event) -> dict[str, str]:
    """An event as an OpenAI-style message (see :func:`message_for`)."""
    call = event.metadata.get("tool_call_id")
    return message_for(
        event.role, event.content, tool_name=event.tool_name,
        tool_call_id=call if isinstance(call, str) else None,
    )  # fmt: skip


def message_for(
    role: Role, text: str, *, tool_name: str | None = None, tool_call_id: str | None = None
) -> dict[str, str]:
    """A chat message for an event's role and text.

    A tool result becomes a ``tool`` message when it carries the ``tool_call_id`` it answers
    (event metadata), since the API rejects a tool message without its call; otherwise it is
    shown as a ``user`` message marked as a tool result.
    """
    if role is Role.TOOL:
        if tool_call_id:
            return {"role": "tool", "tool_call_id": tool_call_id, "content": text}
        return {"role": "user", "content": f"[tool result: {tool_name or 'tool'}] {text}"}
    return {"role": role.value, "content": text}
