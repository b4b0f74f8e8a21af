"""KenningChatMessageHistory and KenningRetriever with the real ``langchain-core``, on a SQLite
file, on PostgreSQL and through a served kenning's client. The chat model is langchain-core's
own fake that answers from a list (no LLM is reachable here)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from kenning import InvalidInput, InvalidScope, Scope
from kenning.api import MemoryAPI
from kenning.integrations.langchain import KenningChatMessageHistory, KenningRetriever
from tests.frameworks import KINDS, framework_memory

DANA = Scope("acme", "dana", "chat-1")


@pytest.fixture(params=KINDS)
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryAPI]:
    with framework_memory(request.param, tmp_path) as m:
        yield m


def every_kind() -> list[BaseMessage]:
    return [
        SystemMessage("You are a support agent."),
        HumanMessage(
            "Refund order A-1042, it arrived broken",
            id="h1",
            additional_kwargs={"channel": "email"},
        ),
        AIMessage(
            "",
            id="a1",
            tool_calls=[
                {
                    "name": "lookup_order",
                    "args": {"order_id": "A-1042"},
                    "id": "call_1",
                    "type": "tool_call",
                },
            ],
        ),
        ToolMessage(
            '{"order": "A-1042", "amount": "182.40 USD"}',
            tool_call_id="call_1",
            name="lookup_order",
        ),
        AIMessage([{"type": "text", "text": "The refund is 182.40 USD."}], id="a2"),
        ChatMessage("a note", role="critic"),
    ]


def test_every_message_type_comes_back_exactly(memory: MemoryAPI) -> None:
    history = KenningChatMessageHistory(memory, DANA)
    history.add_messages(every_kind())
    assert history.messages == every_kind()
    events = memory.get_session(DANA)
    assert [e.role.value for e in events] == [
        "system", "user", "assistant", "tool", "assistant", "user",
    ]  # fmt: skip
    assert events[2].tool_name == "lookup_order"
    assert events[2].tool_args == {"order_id": "A-1042"}
    assert events[3].tool_result == {"order": "A-1042", "amount": "182.40 USD"}
    assert {p.value for p in memory.context.pins(DANA)} >= {"A-1042", "182.40 USD"}


def test_async_methods_and_clear(memory: MemoryAPI) -> None:
    history = KenningChatMessageHistory(memory, DANA)

    async def use() -> list[BaseMessage]:
        await history.aadd_messages([HumanMessage("hello"), AIMessage("hi")])
        got = await history.aget_messages()
        await history.aclear()
        return got

    assert [m.content for m in asyncio.run(use())] == ["hello", "hi"]
    assert history.messages == [] and memory.get_session(DANA) == []


# langchain-core 1.x marks RunnableWithMessageHistory deprecated (for LangGraph persistence,
# which kenning.integrations.langgraph serves); it is still what chains use for a history.
@pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")
def test_a_runnable_keeps_its_history_in_kenning(memory: MemoryAPI) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You help."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    model = FakeListChatModel(responses=["Paris.", "About 2.1 million people."])
    chain = RunnableWithMessageHistory(
        prompt | model,
        lambda session_id: KenningChatMessageHistory(memory, Scope("acme", "dana", session_id)),
        input_messages_key="question",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": "geo"}}
    assert chain.invoke({"question": "Capital of France?"}, config=config).content == "Paris."
    chain.invoke({"question": "How many live there?"}, config=config)
    stored = KenningChatMessageHistory(memory, Scope("acme", "dana", "geo")).messages
    assert [(m.type, m.content) for m in stored] == [
        ("human", "Capital of France?"), ("ai", "Paris."),
        ("human", "How many live there?"), ("ai", "About 2.1 million people."),
    ]  # fmt: skip


def test_events_written_without_langchain_read_as_messages(memory: MemoryAPI) -> None:
    memory.add_events(DANA, [{"role": "user", "content": "hi"},
                             {"role": "assistant", "content": "hello"}])  # fmt: skip
    got = KenningChatMessageHistory(memory, DANA).messages
    assert [(type(m), m.content) for m in got] == [(HumanMessage, "hi"), (AIMessage, "hello")]


def test_bad_input_is_refused_and_nothing_is_written(memory: MemoryAPI) -> None:
    history = KenningChatMessageHistory(memory, DANA)
    with pytest.raises(InvalidInput):
        history.add_messages([HumanMessage("ok"), "not a message"])  # type: ignore[list-item]
    assert memory.get_session(DANA) == []
    with pytest.raises(InvalidScope):
        KenningChatMessageHistory(memory, Scope("acme", "dana"))


def test_the_retriever_searches_the_users_sessions(memory: MemoryAPI) -> None:
    KenningChatMessageHistory(memory, DANA).add_messages(every_kind())
    KenningChatMessageHistory(memory, Scope("acme", "dana", "chat-2")).add_messages(
        [HumanMessage("My cat is called Miso"), AIMessage("Nice name!")]
    )
    KenningChatMessageHistory(memory, Scope("acme", "erin", "chat-3")).add_messages(
        [HumanMessage("My cat is called Pixel")]
    )
    retriever = KenningRetriever(memory=memory, scope=Scope("acme", "dana"), k=3, kinds=("event",))
    docs = retriever.invoke("what is my cat called")
    assert docs and docs[0].page_content == "My cat is called Miso"
    assert docs[0].metadata["session"] == "chat-2" and docs[0].metadata["score"] > 0
    assert all(d.metadata["user"] == "dana" for d in docs)
    assert "framework_item" not in docs[0].metadata
    assert asyncio.run(retriever.ainvoke("refund A-1042"))[0].metadata["session"] == "chat-1"
