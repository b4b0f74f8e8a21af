"""LangChain on kenning: a chat message history and a retriever.

:class:`KenningChatMessageHistory` is a ``BaseChatMessageHistory`` whose messages are the
events of one kenning session: ``RunnableWithMessageHistory`` can keep its history there::

    memory = kenning.Memory.open("agent.db")
    history = KenningChatMessageHistory(memory, Scope("acme", "dana", "chat-1"))
    history.add_messages([HumanMessage("Refund order A-1042"), AIMessage("Done.")])

Each message becomes one event (human → user, AI → assistant, tool → tool, system → system);
an AI message's tool calls name the tool and its arguments, a tool message's content is its
result (parsed when it is JSON), so pins, search and windows read them. The message itself is
kept with its event (``messages_to_dict``), so ``messages`` returns exactly what was added:
types, ids, tool calls, tool call ids, additional kwargs.

:class:`KenningRetriever` is a ``BaseRetriever`` over kenning's hybrid search in a scope (a
session, a user's sessions or a tenant), one ``Document`` per hit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from kenning.api import MemoryAPI
from kenning.errors import InvalidInput
from kenning.integrations.items import (
    RAW_KEY,
    load_raw,
    new_event,
    parsed_json,
    text_of,
    tool_id,
)
from kenning.records import Event, NewEvent, Role, Scope

__all__ = ["KenningChatMessageHistory", "KenningRetriever"]

_ROLES = {"human": Role.USER, "ai": Role.ASSISTANT, "system": Role.SYSTEM, "tool": Role.TOOL,
          "function": Role.TOOL}  # fmt: skip


class KenningChatMessageHistory(BaseChatMessageHistory):
    """The messages of the kenning session of *scope* (tenant, user and session).

    ``clear`` erases the session (events, pins, summaries, task state) from every index.
    The async methods (``aget_messages``, ``aadd_messages``, ``aclear``) run these in a thread.
    """

    def __init__(self, memory: MemoryAPI, scope: Scope) -> None:
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        self.scope = scope.require_session()
        self._memory = memory

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [event_message(e) for e in self._memory.get_session(self.scope)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append *messages* as events, atomically (all or none)."""
        if messages:
            self._memory.add_events(self.scope, [message_event(m) for m in messages])

    def clear(self) -> None:
        self._memory.forget(self.scope)


class KenningRetriever(BaseRetriever):
    """Documents for a query from kenning's hybrid search (BM25 and vectors, fused).

    Attributes:
        memory: a :class:`kenning.Memory` or :class:`kenning.Client`.
        scope: what is searched: a session, a user's sessions, or a tenant.
        k: how many documents at most.
        kinds: the record kinds searched (``event``, ``fact``, ``summary``), all by default.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    scope: Scope
    k: int = 4
    kinds: tuple[str, ...] | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        results = self.memory.search(self.scope, query, k=self.k, kinds=self.kinds)
        return [_document(hit) for hit in results.hits]


def message_event(message: BaseMessage) -> NewEvent:
    """The event for a LangChain message (pure)."""
    if not isinstance(message, BaseMessage):
        raise InvalidInput("messages must be LangChain BaseMessage objects")
    raw = message_to_dict(message)
    role = _ROLES.get(message.type, Role.USER)
    if message.type == "chat":
        role = _ROLES.get(str(getattr(message, "role", "")), Role.USER)
    text = text_of(message.content)
    if isinstance(message, AIMessage) and message.tool_calls:
        call = message.tool_calls[0]
        text = text or "; ".join(f"called {c['name']}({json.dumps(c['args'])})"
                                 for c in message.tool_calls)  # fmt: skip
        return new_event(role, text, raw, tool_name=tool_id(call["name"]),
                         tool_args=call["args"], placeholder="[tool call]")  # fmt: skip
    if isinstance(message, ToolMessage) or role is Role.TOOL:
        name = getattr(message, "name", None)
        result = parsed_json(message.content)
        return new_event(Role.TOOL, text, raw, tool_name=tool_id(name), tool_result=result,
                         placeholder="[tool result]")  # fmt: skip
    return new_event(role, text, raw, placeholder="[empty message]")


def event_message(event: Event) -> BaseMessage:
    """The message an event was written from; an event written without one becomes the
    message of its role (a tool result without its call as a human message marked as one)."""
    raw = load_raw(event)
    if isinstance(raw, dict) and "type" in raw:
        return messages_from_dict([raw])[0]
    if event.role is Role.ASSISTANT:
        return AIMessage(event.content, id=event.id)
    if event.role is Role.SYSTEM:
        return SystemMessage(event.content, id=event.id)
    if event.role is Role.TOOL:
        return HumanMessage(f"[tool result: {event.tool_name or 'tool'}] {event.content}")
    return HumanMessage(event.content, id=event.id)


def _document(hit: Any) -> Document:
    metadata = {k: v for k, v in hit.metadata.items() if k != RAW_KEY}
    metadata.update(id=hit.id, kind=hit.kind, score=hit.score, role=hit.role.value,
                    session=hit.scope.session, user=hit.scope.user, seq=hit.seq,
                    at=hit.at.isoformat())  # fmt: skip
    return Document(page_content=hit.content, metadata=metadata, id=hit.id)
