"""An OpenAI Agents SDK ``Session`` whose history is a kenning session.

Used as any SDK session (``docs/integrations.md`` has the whole example)::

    memory = kenning.Memory.open("agent.db")
    session = KenningSession("chat-1", memory, tenant="acme", user="dana")
    await Runner.run(agent, "Refund order A-1042", session=session)

Every item the SDK adds becomes one kenning event: messages by their role, a
``function_call`` an assistant event with the tool's name and arguments, a
``function_call_output`` a tool event with the tool's name and its output (parsed when it is
JSON), so pins, search, facts and windows work on them. The item itself is kept with its event:
:meth:`KenningSession.get_items` returns exactly what was added, in order.

:meth:`KenningSession.window_input` is a ``RunConfig.session_input_callback`` that hands the
model kenning's assembled window (token budget, pins, summaries, retrieved memories, then the
recent turns) instead of the raw history.

Tenant and user: from the constructor, or per run from the run context. When every history
method accepts ``wrapper`` (they do), the SDK passes its ``RunContextWrapper``; a context that
is a :class:`kenning.Scope`, a mapping or an object with ``tenant``/``user`` routes the call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from agents.items import TResponseInputItem
from agents.memory import SessionSettings
from agents.run_context import RunContextWrapper

from kenning.api import MemoryAPI
from kenning.errors import InvalidInput
from kenning.integrations.items import load_raw, new_event, parsed_json, text_of, tool_id
from kenning.records import Event, NewEvent, Role, Scope

__all__ = ["KenningSession", "item_events"]

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM,
          "developer": Role.SYSTEM}  # fmt: skip

WindowCallback = Callable[
    [list[TResponseInputItem], list[TResponseInputItem]], Awaitable[list[TResponseInputItem]]
]


class KenningSession:
    """The SDK's ``Session`` protocol over a kenning memory.

    Arguments:
        session_id: the kenning session id (1-128 characters from letters, digits and
            ``._:@-``).
        memory: a :class:`kenning.Memory` (SQLite or PostgreSQL) or a :class:`kenning.Client`.
        tenant, user: whose session it is, unless the run context says otherwise.
        session_settings: the SDK's settings (``limit`` for :meth:`get_items`).
    """

    def __init__(self, session_id: str, memory: MemoryAPI, *, tenant: str, user: str,
                 session_settings: SessionSettings | None = None) -> None:  # fmt: skip
        self._default = Scope(tenant, user, session_id)
        self.session_id = session_id
        self.session_settings = session_settings
        self._memory = memory
        # pop_item reads the last event then erases it: one at a time per session object.
        self._pop_lock = threading.Lock()

    def scope(self, wrapper: RunContextWrapper[Any] | None = None) -> Scope:
        """The session's scope, routed by the run context when it names a tenant or user."""
        context = None if wrapper is None else wrapper.context
        tenant, user = _route(context)
        return Scope(tenant or self._default.tenant, user or self._default.user, self.session_id)

    async def get_items(self, limit: int | None = None, *,
                        wrapper: RunContextWrapper[Any] | None = None
                        ) -> list[TResponseInputItem]:  # fmt: skip
        """The session's items in order; the latest *limit* when given (or the settings')."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and limit <= 0:
            return []
        events = await asyncio.to_thread(self._memory.get_session, self.scope(wrapper))
        chosen = events if limit is None else events[-limit:]
        return [event_item(e) for e in chosen]

    async def add_items(self, items: list[TResponseInputItem], *,
                        wrapper: RunContextWrapper[Any] | None = None) -> None:  # fmt: skip
        """Append *items* as events, atomically (all or none)."""
        if not items:
            return
        scope = self.scope(wrapper)
        names = await self._call_names(scope, items)
        await asyncio.to_thread(self._memory.add_events, scope, item_events(items, names))

    async def pop_item(self, *, wrapper: RunContextWrapper[Any] | None = None
                       ) -> TResponseInputItem | None:  # fmt: skip
        """Remove the most recent item and return it (None when the session is empty); its
        event is erased from every index, with what derives from it."""
        scope = self.scope(wrapper)
        return await asyncio.to_thread(self._pop, scope)

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Erase the session: its events, pins, summaries and task state."""
        await asyncio.to_thread(self._memory.forget, self.scope(wrapper))

    def window_input(
        self,
        *,
        budget_tokens: int,
        model: str,
        system: str,
        reserve_output_tokens: int = 0,
        goal: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> WindowCallback:
        """A ``RunConfig.session_input_callback``: the model gets kenning's window for this
        session (assembled for the new input as the retrieval query) followed by the new input,
        instead of the whole history. The window's items stand in for the history, so the SDK
        still stores only the new turn. The window's budget covers what is stored; leave the
        new input room in ``reserve_output_tokens`` or the model's limit."""

        async def combine(
            history: list[TResponseInputItem], new_items: list[TResponseInputItem]
        ) -> list[TResponseInputItem]:
            query = _last_user_text(new_items) or None
            window = await asyncio.to_thread(
                self._memory.assemble, self._default, budget_tokens=budget_tokens, model=model,
                reserve_output_tokens=reserve_output_tokens, system=system, goal=goal,
                tools=tools, query=query,
            )  # fmt: skip
            # The SDK tells history from new input by the list it passed in: the window takes
            # the history's place there, so it is sent but never stored again.
            history[:] = [window_item(m) for m in window.messages]
            return [*history, *new_items]

        return combine

    def _pop(self, scope: Scope) -> TResponseInputItem | None:
        with self._pop_lock:
            events = self._memory.get_session(scope)
            if not events:
                return None
            last = events[-1]
            self._memory.forget(scope, ids=[last.id])
            return event_item(last)

    async def _call_names(
        self, scope: Scope, items: Sequence[TResponseInputItem]
    ) -> dict[str, str]:
        """The tool name of each call id the items answer: from the items, else the session's
        stored calls (an output can arrive in a later batch than its call)."""
        names = _names_in(items)
        wanted = {_get(i, "call_id") for i in items if _get(i, "type") == "function_call_output"}
        if wanted - set(names):
            events = await asyncio.to_thread(self._memory.get_session, scope)
            stored = [load_raw(e) for e in events]
            names = {**_names_in([s for s in stored if isinstance(s, Mapping)]), **names}
        return names


def item_events(items: Sequence[TResponseInputItem], names: Mapping[str, str]) -> list[NewEvent]:
    """The events for *items*; *names* maps call ids to tool names (pure)."""
    return [_item_event(item, names) for item in items]


def event_item(event: Event) -> TResponseInputItem:
    """The item an event was written from, or one made from an event written without (a tool
    result as a user message marked as one, as kenning's windows show it)."""
    raw = load_raw(event)
    if isinstance(raw, dict):
        return raw  # type: ignore[return-value]
    if event.role is Role.TOOL:  # alone, without its call: text marked as a tool result
        return {"role": "user", "content": f"[tool result: {event.tool_name or 'tool'}] "
                f"{event.content}"}  # fmt: skip
    return {"role": event.role.value, "content": event.content}  # type: ignore[return-value,misc]


def window_item(message: Mapping[str, Any]) -> TResponseInputItem:
    """A window message as an input item: a tool result's call and the result itself as the
    SDK's ``function_call`` and ``function_call_output`` items (the window shows each result
    right after its call), anything else as a message of its role."""
    role = message.get("role", "user")
    content = message.get("content") or ""
    calls = message.get("tool_calls")
    if role == "assistant" and calls:
        call, function = calls[0], calls[0]["function"]
        return {"type": "function_call", "call_id": call["id"], "name": function["name"],
                "arguments": function["arguments"]}  # fmt: skip
    if role == "tool":
        return {"type": "function_call_output", "call_id": message["tool_call_id"],
                "output": content}  # fmt: skip
    item: dict[str, str] = {"role": role, "content": content}
    return item  # type: ignore[return-value]  # one of the SDK's message shapes, by role


def _item_event(item: TResponseInputItem, names: Mapping[str, str]) -> NewEvent:
    if not isinstance(item, Mapping):
        raise InvalidInput("session items must be mappings (the SDK's input items)")
    kind = item.get("type")
    if kind == "function_call":
        name = str(item.get("name", ""))
        arguments = item.get("arguments", "")
        return new_event(Role.ASSISTANT, f"called {name}({arguments})", item,
                         tool_name=tool_id(name), tool_args=parsed_json(arguments),
                         placeholder="[function call]")  # fmt: skip
    if kind == "function_call_output":
        name = names.get(str(item.get("call_id")), "")
        output = item.get("output", "")
        text = output if isinstance(output, str) else text_of(output)
        return new_event(Role.TOOL, text, item, tool_name=tool_id(name),
                         tool_result=parsed_json(output), placeholder="[tool output]")  # fmt: skip
    role = item.get("role")
    if role in _ROLES and kind in (None, "message"):
        return new_event(_ROLES[str(role)], text_of(item.get("content")), item,
                         placeholder="[empty message]")  # fmt: skip
    # Reasoning, hosted tool calls and other items: kept whole, shown by their kind.
    return new_event(Role.ASSISTANT, text_of(item.get("summary") or item.get("content")), item,
                     placeholder=f"[{kind or 'item'}]")  # fmt: skip


def _names_in(items: Sequence[Any]) -> dict[str, str]:
    return {
        str(i["call_id"]): str(i.get("name", ""))
        for i in items
        if isinstance(i, Mapping) and i.get("type") == "function_call" and "call_id" in i
    }


def _get(item: object, key: str) -> object:
    return item.get(key) if isinstance(item, Mapping) else None


def _last_user_text(items: Sequence[TResponseInputItem]) -> str:
    for item in reversed(items):
        if isinstance(item, Mapping) and item.get("role") == "user":
            return text_of(item.get("content"))
    return ""


def _route(context: object) -> tuple[str | None, str | None]:
    """Tenant and user named by a run context (a Scope, a mapping or an object)."""
    if context is None:
        return None, None
    if isinstance(context, Mapping):
        tenant, user = context.get("tenant"), context.get("user")
    else:
        tenant, user = getattr(context, "tenant", None), getattr(context, "user", None)
    return (tenant if isinstance(tenant, str) else None, user if isinstance(user, str) else None)
