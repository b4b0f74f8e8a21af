"""KenningMemory, KenningMemoryBlock and KenningPinsBlock with the real ``llama-index-core``
(its own ``Memory`` for the blocks), on a SQLite file, on PostgreSQL and through a served
kenning's client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from sqlalchemy.ext.asyncio import create_async_engine

from kenning import InvalidInput, Scope
from kenning.api import MemoryAPI
from kenning.integrations.llamaindex import KenningMemory, KenningMemoryBlock, KenningPinsBlock
from tests.frameworks import KINDS, framework_memory

DANA = Scope("acme", "dana", "chat-1")
REFUND = "Please refund $182.40 for order A-1042, it arrived broken."


@pytest.fixture(params=KINDS)
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryAPI]:
    with framework_memory(request.param, tmp_path) as m:
        yield m


def conversation() -> list[ChatMessage]:
    return [
        ChatMessage(role=MessageRole.SYSTEM, content="You help with orders."),
        ChatMessage(role=MessageRole.USER, content=REFUND),
        ChatMessage(
            role=MessageRole.ASSISTANT,
            content="",
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1042"}'},
                    },
                ]
            },
        ),
        ChatMessage(
            role=MessageRole.TOOL,
            content='{"status": "damaged"}',
            additional_kwargs={"tool_call_id": "call_1", "name": "lookup_order"},
        ),
        ChatMessage(role=MessageRole.ASSISTANT, content="I have started the refund."),
    ]


def test_messages_come_back_exactly_and_tools_are_tool_events(memory: MemoryAPI) -> None:
    kept = KenningMemory(memory=memory, scope=DANA)
    kept.put_messages(conversation())
    assert kept.get_all() == conversation()
    events = memory.get_session(DANA)
    assert [e.role.value for e in events] == ["system", "user", "assistant", "tool", "assistant"]
    assert events[2].tool_name == "lookup_order" and events[2].tool_args == {"order_id": "A-1042"}
    assert events[3].tool_name == "lookup_order" and events[3].tool_result == {"status": "damaged"}


def test_get_is_kenning_window_within_budget_with_pins(memory: MemoryAPI) -> None:
    kept = KenningMemory(memory=memory, scope=DANA, budget_tokens=300, system="You help.")
    kept.put_messages(conversation())
    for n in range(60):
        kept.put(ChatMessage(role=MessageRole.USER, content=f"Another shipping question {n}"))
        kept.put(ChatMessage(role=MessageRole.ASSISTANT, content=f"Another answer {n}"))
    window = kept.get("what was the refund amount?")
    text = "\n".join(m.content or "" for m in window)
    assert window[0].role == MessageRole.SYSTEM and window[0].content == "You help."
    assert "182.40 USD" in text and "A-1042" in text
    assert "Another shipping question 0" not in text  # old turns did not all fit
    shown = memory.assemble(DANA, budget_tokens=300, model="gpt-4o", system="You help.")
    assert shown.tokens <= 300
    assert asyncio.run(kept.aget("refund")) == kept.get("refund")


def test_a_tool_result_comes_back_as_its_call_and_the_tool_message(memory: MemoryAPI) -> None:
    kept = KenningMemory(memory=memory, scope=DANA, budget_tokens=2_000, system="You help.")
    kept.put_messages(conversation())
    window = kept.get("what was wrong with the order?")
    at = next(i for i, m in enumerate(window) if m.role == MessageRole.TOOL)
    call = window[at - 1]
    assert call.role == MessageRole.ASSISTANT
    [tool_call] = call.additional_kwargs["tool_calls"]
    assert tool_call["function"]["name"] == "lookup_order"
    assert window[at].additional_kwargs["tool_call_id"] == tool_call["id"]
    assert window[at].content == '{"status": "damaged"}'
    assert not any(
        m.role == MessageRole.USER and "tool result" in (m.content or "") for m in window
    )


def test_set_and_reset_replace_and_erase(memory: MemoryAPI) -> None:
    kept = KenningMemory(memory=memory, scope=DANA)
    kept.put_messages(conversation())
    kept.set([ChatMessage(role=MessageRole.USER, content="Start over")])
    assert [m.content for m in kept.get_all()] == ["Start over"]
    kept.reset()
    assert kept.get_all() == [] and memory.get_session(DANA) == []


def test_bad_input_is_refused(memory: MemoryAPI) -> None:
    with pytest.raises(InvalidInput):
        KenningMemory(memory=memory, scope=DANA).put_messages(["text"])  # type: ignore[list-item]
    assert memory.get_session(DANA) == []
    with pytest.raises(Exception, match="scope with tenant, user and session"):
        KenningMemory(memory=memory, scope=Scope("acme", "dana"))


def test_llamaindex_memory_archives_flushed_turns_and_keeps_pins_untruncated(
    memory: MemoryAPI, tmp_path: Path
) -> None:
    KenningMemory(memory=memory, scope=Scope("acme", "dana", "last-week")).put_messages([
        ChatMessage(role=MessageRole.USER, content="My cat is called Miso"),
    ])  # fmt: skip
    blocks = [KenningPinsBlock(memory=memory, scope=DANA),
              KenningMemoryBlock(memory=memory, scope=DANA, kinds=("event",))]  # fmt: skip
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'llamaindex.db'}")
    li = Memory.from_defaults(
        session_id="chat-1", token_limit=200, chat_history_token_ratio=0.5,
        token_flush_size=60, memory_blocks=blocks, async_engine=engine,
    )  # fmt: skip
    li.put(ChatMessage(role=MessageRole.USER, content=REFUND))
    li.put(ChatMessage(role=MessageRole.ASSISTANT, content="Refund started."))
    for n in range(20):
        li.put(ChatMessage(role=MessageRole.USER, content=f"Shipping question number {n}?"))
        li.put(ChatMessage(role=MessageRole.ASSISTANT, content=f"Shipping detail number {n}."))
    # The refund turn left LlamaIndex's chat history and was archived in kenning.
    assert REFUND in [e.content for e in memory.get_session(DANA)]
    got = li.get(input="what is my cat called?")
    text = "\n".join(m.content or "" for m in got)
    assert "182.40 USD" in text and "A-1042" in text  # the pins block, priority 0
    assert "My cat is called Miso" in text  # recalled from another session
    assert blocks[0].priority == 0
    asyncio.run(engine.dispose())
