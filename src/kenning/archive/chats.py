"""Conversations people already have, read from the files their assistants export: ChatGPT's
``conversations.json``, Claude's ``conversations.json`` and plain OpenAI-style message lists
(a JSON list of ``{role, content}`` or JSON Lines of them). No I/O: the caller gives the text.

- ChatGPT: a list of conversations (``id``/``conversation_id``, ``title``, ``mapping`` of nodes
  ``{message, parent, children}``, ``current_node``). The branch shown last is followed from
  ``current_node`` up its parents; a message is ``author.role`` with the text ``parts`` of
  ``content`` and its own ``create_time`` (epoch seconds). Empty and hidden messages are left
  out.
- Claude: a list of conversations (``uuid``, ``name``, ``chat_messages``); a message is
  ``sender`` human or assistant, its ``text`` (or the text blocks of ``content``) and
  ``created_at`` (ISO 8601).
- OpenAI messages: ``role`` system/user/assistant/tool and ``content`` (a string, or parts
  with ``text``), with an optional time in ``timestamp``, ``created_at`` or ``at``; the whole
  file is one conversation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kenning.errors import InvalidArchive
from kenning.records import NewEvent, Scope

__all__ = [
    "FORMATS", "Conversation", "Message", "conversation_events", "detect_format",
    "parse_conversations",
]  # fmt: skip

FORMATS = ("chatgpt", "claude", "openai")
_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "system": "system",
          "tool": "tool", "developer": "system"}  # fmt: skip
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._:@-]")


@dataclass(frozen=True, slots=True)
class Message:
    """One message: *role* (user, assistant, system, tool), its text, its own time (None:
    unknown) and its id in the file (repeated imports skip it)."""

    role: str
    content: str
    at: datetime | None
    key: str


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation of a file: a session id made from its own id, its title, and its
    messages in order."""

    session: str
    title: str | None
    messages: tuple[Message, ...]


def _bad(what: str, line: int | None = None) -> InvalidArchive:
    return InvalidArchive(what, line=line)


def _load(text: str) -> Any:
    """The file's JSON: one document, or JSON Lines (a list of their values)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as exc:
            raise _bad(f"line {number}: neither a JSON document nor JSON Lines ({exc})",
                       number) from exc  # fmt: skip
    return out


def detect_format(data: Any) -> str:
    """Which of :data:`FORMATS` parsed JSON *data* is; ``InvalidArchive`` if none or unclear."""
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if not isinstance(data, list) or not data:
        raise _bad("a conversation file holds a non-empty JSON list (or JSON Lines)")
    first = data[0]
    if isinstance(first, dict):
        if "mapping" in first:
            return "chatgpt"
        if "chat_messages" in first:
            return "claude"
        if "role" in first and "content" in first:
            return "openai"
    raise _bad("cannot tell the file's format (ChatGPT, Claude or OpenAI messages): name it "
               "with --format")  # fmt: skip


def parse_conversations(text: str, fmt: str | None = None) -> list[Conversation]:
    """The conversations in a file's *text*, in format *fmt* (None: detected). Raises
    ``InvalidArchive`` naming what is wrong (and the line, for JSON Lines)."""
    data = _load(text)
    found = detect_format(data)
    if fmt is not None and fmt != found:
        if fmt not in FORMATS:
            raise _bad(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
        raise _bad(f"the file is not in the {fmt} format (it looks like {found})")
    if isinstance(data, dict):
        data = data["conversations"]
    if found == "openai":
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        return [_openai(data, f"openai-{digest}")]
    parse = _chatgpt if found == "chatgpt" else _claude
    out = []
    for index, conv in enumerate(data):
        if not isinstance(conv, dict):
            raise _bad(f"conversation {index}: not a JSON object")
        out.append(parse(conv, index))
    return out


def _session(prefix: str, raw: Any, index: int) -> str:
    name = _ID_UNSAFE.sub("-", str(raw))[:100] if raw else f"n{index}"
    return f"{prefix}-{name}"


def _time(value: Any, where: str) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        if isinstance(value, bool):
            raise TypeError
        if isinstance(value, int | float):
            return datetime.fromtimestamp(float(value), UTC)
        at = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        return at if at.tzinfo else at.replace(tzinfo=UTC)
    except (TypeError, ValueError, OverflowError, OSError) as exc:
        raise _bad(f"{where}: time {str(value)[:40]!r} is not epoch seconds or ISO 8601") from exc


def _role(value: Any, where: str) -> str:
    role = _ROLES.get(str(value).lower()) if isinstance(value, str) else None
    if role is None:
        raise _bad(f"{where}: unknown role {str(value)[:40]!r}")
    return role


def _text(parts: Any) -> str:
    """The text of a content value: a string, or the strings and text blocks of a list."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(t for t in texts if t.strip())


def _chatgpt(conv: Mapping[str, Any], index: int) -> Conversation:
    where = f"conversation {index}"
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        raise _bad(f"{where}: mapping must be an object of nodes")
    node_id = conv.get("current_node")
    if node_id is None:  # no branch marked: the last leaf in the file's order
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        node_id = leaves[-1] if leaves else None
    chain: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None:
        node = mapping.get(node_id)
        if not isinstance(node, dict) or node_id in seen:
            raise _bad(f"{where}: node {str(node_id)[:40]!r} is missing or in a cycle")
        seen.add(node_id)
        chain.append(node)
        node_id = node.get("parent")
    messages = []
    for node in reversed(chain):
        msg = node.get("message")
        if not isinstance(msg, dict):
            continue
        meta = msg.get("metadata") or {}
        if isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation"):
            continue
        content = msg.get("content") or {}
        text = _text(content.get("parts")) or _text(content.get("text"))
        if not text.strip():
            continue
        author = msg.get("author") or {}
        role = _role(author.get("role"), f"{where}: message {msg.get('id')}")
        at = _time(msg.get("create_time"), f"{where}: message {msg.get('id')}")
        messages.append(Message(role, text, at, str(msg.get("id") or node.get("id"))))
    raw = conv.get("conversation_id") or conv.get("id")
    return Conversation(_session("chatgpt", raw, index), conv.get("title"), tuple(messages))


def _claude(conv: Mapping[str, Any], index: int) -> Conversation:
    where = f"conversation {index}"
    raw = conv.get("chat_messages")
    if not isinstance(raw, list):
        raise _bad(f"{where}: chat_messages must be a list")
    messages = []
    for n, msg in enumerate(raw):
        if not isinstance(msg, dict):
            raise _bad(f"{where}: message {n} is not an object")
        text = msg.get("text") if isinstance(msg.get("text"), str) else ""
        text = text or _text(msg.get("content"))
        if not text.strip():
            continue
        role = _role(msg.get("sender"), f"{where}: message {n}")
        at = _time(msg.get("created_at"), f"{where}: message {n}")
        messages.append(Message(role, text, at, str(msg.get("uuid") or n)))
    title = conv.get("name") if isinstance(conv.get("name"), str) else None
    return Conversation(_session("claude", conv.get("uuid"), index), title, tuple(messages))


def _openai(data: Sequence[Any], session: str) -> Conversation:
    messages = []
    for n, msg in enumerate(data):
        where = f"message {n}"
        if not isinstance(msg, dict) or "role" not in msg:
            raise _bad(f"{where}: not an object with role and content", n + 1)
        text = _text(msg.get("content"))
        if not text.strip():
            continue
        stamp = next((msg[k] for k in ("timestamp", "created_at", "at") if k in msg), None)
        messages.append(Message(_role(msg["role"], where), text, _time(stamp, where), str(n)))
    return Conversation(session, None, tuple(messages))


def conversation_events(
    conversations: Sequence[Conversation], *, tenant: str, user: str
) -> list[tuple[Scope, NewEvent]]:
    """Each conversation as a session of *user*, its messages as events with their own times
    (now where the file has none) and their ids in the file as idempotency keys, so importing
    the file again adds nothing. The title is kept in each event's metadata."""
    out = []
    for conv in conversations:
        scope = Scope(tenant, user, conv.session)
        meta = {} if not conv.title else {"title": conv.title[:200]}
        for msg in conv.messages:
            key = "m" + _ID_UNSAFE.sub("-", msg.key)[:120]
            out.append((scope, NewEvent(role=msg.role, content=msg.content, at=msg.at,
                                        metadata=meta, idempotency_key=key)))  # fmt: skip
    return out
