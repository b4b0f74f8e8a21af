"""LlamaIndex on kenning: a memory, and memory blocks for LlamaIndex's own ``Memory``.

- :class:`KenningMemory` is a ``BaseMemory`` whose messages are a kenning session's events and
  whose ``get()`` is kenning's token-budgeted window for the input: pins, summaries, retrieved
  memories, then as many recent turns as fit.
- :class:`KenningMemoryBlock` gives LlamaIndex's ``Memory`` what kenning recalls for the
  current input (past turns from the user's sessions and long-term facts). Messages that
  ``Memory`` flushes out of its chat history are archived in the kenning session, so they
  stay searchable and their pins and facts are read.
- :class:`KenningPinsBlock` gives ``Memory`` the session's open pins (ids, amounts, approvals,
  obligations) at priority 0: ``Memory`` never truncates it.

Each message is one event (user, assistant, system; tool and function as tool events), and the
message itself is kept with its event, so ``get_all()`` returns exactly what was put.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock
from llama_index.core.memory.types import BaseMemory
from pydantic import ConfigDict, Field

from kenning.context.render import pin_line, pin_order
from kenning.errors import InvalidInput
from kenning.integrations.items import load_raw, new_event, parsed_json, tool_id
from kenning.records import Event, NewEvent, PinStatus, Role, Scope
from kenning.search.hits import Hit

__all__ = ["KenningMemory", "KenningMemoryBlock", "KenningPinsBlock"]

_ROLES = {MessageRole.USER: Role.USER, MessageRole.ASSISTANT: Role.ASSISTANT,
          MessageRole.SYSTEM: Role.SYSTEM, MessageRole.DEVELOPER: Role.SYSTEM,
          MessageRole.TOOL: Role.TOOL, MessageRole.FUNCTION: Role.TOOL,
          MessageRole.CHATBOT: Role.ASSISTANT, MessageRole.MODEL: Role.ASSISTANT}  # fmt: skip


class KenningMemory(BaseMemory):
    """A LlamaIndex memory on the kenning session of *scope* (tenant, user and session).

    ``get(input)`` assembles kenning's window for *input* within ``budget_tokens`` (exact
    counts for ``model``'s tokenizer), led by ``system``; pins are part of every window.
    ``reset()`` erases the session from every index.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    scope: Scope
    budget_tokens: int = 4000
    model: str = "gpt-4o"
    system: str = "You are a helpful assistant."

    @classmethod
    def class_name(cls) -> str:
        return "KenningMemory"

    @classmethod
    def from_defaults(cls, **kwargs: Any) -> KenningMemory:
        """``KenningMemory.from_defaults(memory=..., scope=..., budget_tokens=...)``."""
        return cls(**kwargs)

    def model_post_init(self, context: Any, /) -> None:
        if not isinstance(self.scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        self.scope.require_session()

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        if kwargs:
            raise InvalidInput(f"KenningMemory.get takes no {sorted(kwargs)}")
        window = self.memory.assemble(self.scope, budget_tokens=self.budget_tokens,
                                      model=self.model, system=self.system,
                                      query=input or None)  # fmt: skip
        return [_window_message(m) for m in window.messages]

    def get_all(self) -> list[ChatMessage]:
        return [event_message(e) for e in self.memory.get_session(self.scope)]

    def put(self, message: ChatMessage) -> None:
        self.put_messages([message])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Append *messages* as events, atomically (all or none)."""
        if messages:
            self.memory.add_events(self.scope, [message_event(m) for m in messages])

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        await asyncio.to_thread(self.put_messages, messages)

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the session's messages with *messages* (the old ones are erased)."""
        self.reset()
        self.put_messages(messages)

    def reset(self) -> None:
        self.memory.forget(self.scope)


class KenningMemoryBlock(BaseMemoryBlock[str]):
    """What kenning recalls for the current input: the best hits of its hybrid search over
    the user's sessions (and, with ``kinds``, their long-term facts), one line each.

    Messages ``Memory`` flushes from its chat history are archived in the session of
    ``scope``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="kenning_recall")
    memory: Any
    scope: Scope
    k: int = 5
    kinds: tuple[str, ...] = ("event", "fact")

    async def _aget(self, messages: list[ChatMessage] | None = None, **kwargs: Any) -> str:
        query = _last_user_text(messages or [])
        if not query:
            return ""
        users = Scope(self.scope.tenant, self.scope.user)
        results = await asyncio.to_thread(
            self.memory.search, users, query, k=self.k, kinds=self.kinds
        )
        return "\n".join(_hit_line(hit) for hit in results.hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        if messages:
            events = [message_event(m) for m in messages]
            await asyncio.to_thread(self.memory.add_events, self.scope, events)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the weakest hits (the last lines) until about *tokens_to_truncate* tokens
        (four characters each) are gone."""
        lines = content.splitlines()
        while lines and tokens_to_truncate > 0:
            tokens_to_truncate -= len(lines.pop()) // 4 + 1
        return "\n".join(lines) or None


class KenningPinsBlock(BaseMemoryBlock[str]):
    """The session's open pins, exact as recorded, at priority 0 (never truncated)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="kenning_pins")
    priority: int = Field(default=0)
    accept_short_term_memory: bool = Field(default=False)
    memory: Any
    scope: Scope

    async def _aget(self, messages: list[ChatMessage] | None = None, **kwargs: Any) -> str:
        pins = await asyncio.to_thread(self.memory.context.pins, self.scope)
        return "\n".join(pin_line(p) for p in pin_order(pins) if p.status is PinStatus.OPEN)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Pins are read from the session's events; nothing is put here."""


def message_event(message: ChatMessage) -> NewEvent:
    """The event for a LlamaIndex chat message (pure)."""
    if not isinstance(message, ChatMessage):
        raise InvalidInput("messages must be LlamaIndex ChatMessage objects")
    raw = message.model_dump(mode="json")
    role = _ROLES.get(MessageRole(message.role), Role.USER)
    text = message.content or ""
    extra = message.additional_kwargs
    if role is Role.TOOL:
        name = tool_id(extra.get("name") or extra.get("tool_name"))
        return new_event(role, text, raw, tool_name=name, tool_result=parsed_json(text),
                         placeholder="[tool result]")  # fmt: skip
    calls = extra.get("tool_calls")
    if role is Role.ASSISTANT and isinstance(calls, Sequence) and calls:
        name, args = _first_call(calls[0])
        return new_event(role, text or f"called {name}({args})", raw, tool_name=tool_id(name),
                         tool_args=parsed_json(args), placeholder="[tool call]")  # fmt: skip
    return new_event(role, text, raw, placeholder="[empty message]")


def event_message(event: Event) -> ChatMessage:
    """The message an event was written from, or one made from its role and text."""
    raw = load_raw(event)
    if isinstance(raw, dict) and "role" in raw:
        return ChatMessage.model_validate(raw)
    if event.role is Role.TOOL:
        shown = f"[tool result: {event.tool_name or 'tool'}] {event.content}"
        return ChatMessage(role=MessageRole.USER, content=shown)
    return ChatMessage(role=MessageRole(event.role.value), content=event.content)


def _first_call(call: Any) -> tuple[str, Any]:
    """Name and arguments of a tool call in OpenAI's shape (a mapping or an SDK object)."""
    function = call.get("function") if isinstance(call, dict) else getattr(call, "function", None)
    if isinstance(function, dict):
        return str(function.get("name", "")), function.get("arguments")
    return str(getattr(function, "name", "")), getattr(function, "arguments", None)


def _window_message(message: Any) -> ChatMessage:
    """A window message as LlamaIndex's: a tool result's call and the result itself in the
    ``additional_kwargs`` its OpenAI and Anthropic adapters read (``tool_calls``,
    ``tool_call_id``)."""
    role, content = message.get("role", "user"), message.get("content")
    if role == "tool":
        return ChatMessage(role=MessageRole.TOOL, content=content,
                           additional_kwargs={"tool_call_id": message["tool_call_id"]})  # fmt: skip
    if message.get("tool_calls"):
        return ChatMessage(role=MessageRole.ASSISTANT, content=content,
                           additional_kwargs={"tool_calls": message["tool_calls"]})  # fmt: skip
    return ChatMessage(role=MessageRole(role), content=content or "")


def _last_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == MessageRole.USER and message.content:
            return message.content
    return ""


def _hit_line(hit: Hit) -> str:
    when = hit.at.date().isoformat()
    label = "fact" if hit.kind == "fact" else f"{hit.role.value}, session {hit.scope.session}"
    return f"- [{label}, {when}] {hit.content}"
