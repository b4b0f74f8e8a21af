"""Chat items to kenning events and back, shared by the framework adapters (pure, no I/O).

A framework item is stored as one event: its role, its text as the event's content (what
search, pins and windows read) and, under the metadata key :data:`RAW_KEY`, the item itself as
JSON, so reading the session back returns exactly what was written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kenning.errors import InvalidInput
from kenning.records import Event, NewEvent, Role

__all__ = ["RAW_KEY", "dump_raw", "load_raw", "new_event", "parsed_json", "text_of", "tool_id"]

#: The event metadata key holding the framework's item as JSON.
RAW_KEY = "framework_item"


def dump_raw(item: object) -> str:
    """The item as JSON text; a value JSON cannot hold is refused, naming the item."""
    try:
        return json.dumps(item, ensure_ascii=False, allow_nan=False, sort_keys=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"this item cannot be stored as JSON: {exc}") from exc


def load_raw(event: Event) -> Any:
    """The item stored with *event*, or None for an event written without one."""
    raw = event.metadata.get(RAW_KEY)
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def text_of(content: object) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                text = part.get("text") or part.get("refusal") or part.get("transcript")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return ""


def parsed_json(value: object) -> Any:
    """A JSON string's value (tool arguments and outputs travel as JSON text), else *value*."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def new_event(
    role: Role,
    text: str,
    raw: object,
    *,
    tool_name: str | None = None,
    tool_args: Any = None,
    tool_result: Any = None,
    placeholder: str,
) -> NewEvent:
    """An event for a framework item; an item without text gets *placeholder* as its content
    (events carry text), and keeps its exact self in the metadata."""
    return NewEvent(
        role=role,
        content=text if text.strip() else placeholder,
        tool_name=tool_name,
        tool_args=tool_args,
        tool_result=tool_result,
        metadata={RAW_KEY: dump_raw(raw)},
    )


def tool_id(name: object) -> str | None:
    """A tool's name as a kenning tool id when it is one (ids start with a letter or digit and
    have at most 128 characters); the name stays in the stored item either way."""
    if isinstance(name, str) and name[:1].isalnum() and len(name) <= 128:
        return name
    return None
