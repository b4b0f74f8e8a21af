"""KenningSession against the OpenAI Agents SDK (the real ``openai-agents`` package), on a
SQLite file, on PostgreSQL and through a served kenning's client.

The tests marked "from the SDK" are the behaviours of ``tests/test_session.py`` in
``openai/openai-agents-python`` (written for ``SQLiteSession``), rewritten for this session;
each names the test it follows. The model is :class:`tests.agents_replay.ReplayModel`, which
replays recorded outputs: no LLM is reachable here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, RunContextWrapper, Runner, function_tool
from agents.memory import Session, SessionSettings

from kenning import InvalidScope, Scope, ScopeConflict
from kenning.api import MemoryAPI
from kenning.integrations.openai_agents import KenningSession
from tests.agents_replay import ReplayModel, calls, run, said
from tests.frameworks import KINDS, framework_memory

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
METHODS = ("run", "run_sync", "run_streamed")


@pytest.fixture(params=KINDS)
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryAPI]:
    with framework_memory(request.param, tmp_path) as m:
        yield m


def session(memory: MemoryAPI, name: str = "s1", user: str = "dana") -> KenningSession:
    return KenningSession(name, memory, tenant="acme", user=user)


def test_it_is_the_sdks_session_protocol(memory: MemoryAPI) -> None:
    assert isinstance(session(memory), Session)


@pytest.mark.parametrize("method", METHODS)
def test_a_second_turn_sees_the_first(memory: MemoryAPI, method: str) -> None:
    """From the SDK: test_session_memory_basic_functionality_parametrized and
    test_session_memory_with_explicit_instance_parametrized."""
    model = ReplayModel().then(said("San Francisco")).then(said("California"))
    agent = Agent(name="test", model=model)
    s = session(memory)

    async def turns() -> None:
        first = await run(method, agent, "What city is the Golden Gate Bridge in?", session=s)
        assert first.final_output == "San Francisco"
        second = await run(method, agent, "What state is it in?", session=s)
        assert second.final_output == "California"

    asyncio.run(turns())
    sent = model.last_input
    assert [i.get("content") for i in sent if i.get("role") == "user"] == [
        "What city is the Golden Gate Bridge in?", "What state is it in?",
    ]  # fmt: skip
    assert len(asyncio.run(s.get_items())) == 4


@pytest.mark.parametrize("method", METHODS)
def test_sessions_keep_their_own_histories(memory: MemoryAPI, method: str) -> None:
    """From the SDK: test_session_memory_different_sessions_parametrized."""
    model = ReplayModel().then(said("cats")).then(said("dogs")).then(said("you said cats"))
    agent = Agent(name="test", model=model)
    one, two = session(memory, "s1"), session(memory, "s2")

    async def turns() -> None:
        await run(method, agent, "I like cats", session=one)
        await run(method, agent, "I like dogs", session=two)
        await run(method, agent, "What did I say I like?", session=one)

    asyncio.run(turns())
    texts = [i.get("content") for i in model.last_input if i.get("role") == "user"]
    assert texts == ["I like cats", "What did I say I like?"]


def test_items_are_added_read_and_cleared(memory: MemoryAPI) -> None:
    """From the SDK: test_sqlite_session_memory_direct."""
    s = session(memory)
    asyncio.run(s.add_items([
        {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there!"},
    ]))  # fmt: skip
    got = asyncio.run(s.get_items())
    assert [(i["role"], i["content"]) for i in got] == [  # type: ignore[typeddict-item]
        ("user", "Hello"), ("assistant", "Hi there!"),
    ]  # fmt: skip
    asyncio.run(s.clear_session())
    assert asyncio.run(s.get_items()) == []
    assert memory.get_session(s.scope()) == []


def test_pop_item_takes_the_latest_until_none_is_left(memory: MemoryAPI) -> None:
    """From the SDK: test_sqlite_session_memory_pop_item."""
    s = session(memory)
    assert asyncio.run(s.pop_item()) is None
    asyncio.run(s.add_items([
        {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there!"},
        {"role": "user", "content": "How are you?"},
    ]))  # fmt: skip
    popped = [asyncio.run(s.pop_item()) for _ in range(4)]
    assert [p and p.get("content") for p in popped] == [
        "How are you?", "Hi there!", "Hello", None,
    ]  # fmt: skip
    assert asyncio.run(s.get_items()) == []


def test_pop_item_leaves_other_sessions_alone(memory: MemoryAPI) -> None:
    """From the SDK: test_session_memory_pop_different_sessions."""
    one, two = session(memory, "s1"), session(memory, "s2")
    asyncio.run(one.add_items([{"role": "user", "content": "Session 1 message"}]))
    asyncio.run(two.add_items([
        {"role": "user", "content": "Session 2 message 1"},
        {"role": "user", "content": "Session 2 message 2"},
    ]))  # fmt: skip
    popped = asyncio.run(two.pop_item())
    assert popped is not None and popped.get("content") == "Session 2 message 2"
    assert [i.get("content") for i in asyncio.run(one.get_items())] == ["Session 1 message"]
    assert [i.get("content") for i in asyncio.run(two.get_items())] == ["Session 2 message 1"]


def test_get_items_returns_the_latest_in_order(memory: MemoryAPI) -> None:
    """From the SDK: test_sqlite_session_get_items_with_limit (and the settings' limit)."""
    s = session(memory)
    asyncio.run(s.add_items([
        {"role": role, "content": f"{word} {n}"}
        for n in (1, 2, 3) for role, word in (("user", "Message"), ("assistant", "Response"))
    ]))  # fmt: skip

    def contents(limit: int | None) -> list[Any]:
        return [i.get("content") for i in asyncio.run(s.get_items(limit))]

    assert contents(None)[0] == "Message 1" and contents(None)[-1] == "Response 3"
    assert contents(2) == ["Message 3", "Response 3"]
    assert contents(4) == ["Message 2", "Response 2", "Message 3", "Response 3"]
    assert len(contents(10)) == 6 and contents(0) == []
    s.session_settings = SessionSettings(limit=3)
    assert contents(None) == ["Response 2", "Message 3", "Response 3"]


@pytest.mark.parametrize("method", METHODS)
def test_a_list_input_follows_the_history(memory: MemoryAPI, method: str) -> None:
    """From the SDK: test_session_memory_rejects_both_session_and_list_input, as the installed
    SDK (0.24) behaves: a list input no longer needs a callback; it follows the history and is
    stored with the turn."""
    s = session(memory)
    asyncio.run(s.add_items([{"role": "user", "content": "Earlier"}]))
    model = ReplayModel().then(said("Noted"))
    given = [{"role": "user", "content": "Test message"}]
    asyncio.run(run(method, Agent(name="test", model=model), given, session=s))
    assert [i.get("content") for i in model.last_input] == ["Earlier", "Test message"]
    assert [i.get("content") for i in asyncio.run(s.get_items())][:2] == ["Earlier", "Test message"]


@pytest.mark.parametrize("method", METHODS)
def test_a_callback_chooses_the_history_sent(memory: MemoryAPI, method: str) -> None:
    """From the SDK: test_session_callback_prepared_input."""
    s = session(memory)
    first = [{"role": "user", "content": "Hello there."},
             {"role": "assistant", "content": "Hi, I'm here to assist you."}]  # fmt: skip
    asyncio.run(s.add_items(first))  # type: ignore[arg-type]

    def users_only(history: list[Any], new: list[Any]) -> list[Any]:
        return [i for i in history if i["role"] == "user"] + new

    model = ReplayModel().then(said("I'm a model"))
    new = [{"role": "user", "content": "What is your name?"}]
    asyncio.run(run(method, Agent(name="test", model=model), new, session=s,
                    run_config=RunConfig(session_input_callback=users_only)))  # fmt: skip
    assert model.last_input == [first[0], new[0]]


def test_unicode_and_sql_text_come_back_as_written(memory: MemoryAPI) -> None:
    """From the SDK: test_sqlite_session_unicode_content and
    test_sqlite_session_special_characters_and_sql_injection."""
    texts = [
        "こんにちは", "😊👍", "Привет", "O'Reilly", "DROP TABLE sessions;",
        '"SELECT * FROM users WHERE name = "admin";"', "Robert'); DROP TABLE students;--",
    ]  # fmt: skip
    s = session(memory)
    asyncio.run(s.add_items([{"role": "user", "content": t} for t in texts]))
    assert [i.get("content") for i in asyncio.run(s.get_items())] == texts


def test_concurrent_writers_lose_nothing(memory: MemoryAPI) -> None:
    """From the SDK: test_sqlite_session_concurrent_access."""
    s = session(memory)

    def add(n: int) -> None:
        asyncio.run(s.add_items([{"role": "user", "content": f"Message {n}"}]))

    with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(add, range(10)))
    assert {i.get("content") for i in asyncio.run(s.get_items())} == {
        f"Message {n}" for n in range(10)
    }


def test_a_failing_write_surfaces_in_a_streamed_run(memory: MemoryAPI) -> None:
    """From the SDK: test_session_add_items_exception_propagates_in_streamed."""
    s = session(memory)

    async def failing(items: Any, **_: Any) -> None:
        raise RuntimeError("the session write failed")

    s.add_items = failing  # type: ignore[method-assign]
    agent = Agent(name="test", model=ReplayModel().then(said("unreached")))

    async def consume() -> None:
        result = Runner.run_streamed(agent, "Hello", session=s)
        async for _ in result.stream_events():
            pass

    with pytest.raises(RuntimeError, match="the session write failed"):
        asyncio.run(asyncio.wait_for(consume(), timeout=10))


@function_tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return json.dumps({"order": order_id, "amount": "182.40 USD", "status": "damaged"})


def test_tool_calls_are_tool_events_and_come_back_exactly(memory: MemoryAPI) -> None:
    model = ReplayModel().then(calls("lookup_order", '{"order_id": "A-1042"}', "call_1"))
    model.then(said("The refund is 182.40 USD."))
    s = session(memory)
    asyncio.run(run("run", Agent(name="t", model=model, tools=[lookup_order]),
                    "Refund order A-1042, it arrived broken", session=s))  # fmt: skip
    events = memory.get_session(s.scope())
    assert [(e.role.value, e.tool_name) for e in events] == [
        ("user", None), ("assistant", "lookup_order"), ("tool", "lookup_order"),
        ("assistant", None),
    ]  # fmt: skip
    assert events[1].tool_args == {"order_id": "A-1042"}
    assert events[2].tool_result == {"order": "A-1042", "amount": "182.40 USD", "status": "damaged"}
    items = asyncio.run(s.get_items())
    assert items[1] == {"type": "function_call", "name": "lookup_order", "call_id": "call_1",
                        "arguments": '{"order_id": "A-1042"}', "id": "fc_call_1"}  # fmt: skip
    assert items[2]["type"] == "function_call_output" and items[2]["call_id"] == "call_1"  # type: ignore[typeddict-item]
    # Pins and search work on what the SDK stored.
    assert {p.value for p in memory.context.pins(s.scope())} >= {"A-1042", "182.40 USD"}
    hits = memory.search(Scope("acme", "dana"), "refund broken order", k=3)
    assert hits.hits and hits.hits[0].scope.session == "s1"


def test_an_output_in_a_later_batch_than_its_call_gets_the_tools_name(memory: MemoryAPI) -> None:
    s = session(memory)
    asyncio.run(
        s.add_items(
            [{"type": "function_call", "name": "lookup_order", "arguments": "{}", "call_id": "c9"}]
        )
    )  # type: ignore[list-item]
    asyncio.run(
        s.add_items([{"type": "function_call_output", "call_id": "c9", "output": "shipped"}])
    )  # type: ignore[list-item]
    assert memory.get_session(s.scope())[-1].tool_name == "lookup_order"


def test_the_run_context_routes_tenant_and_user(memory: MemoryAPI) -> None:
    s = session(memory, user="dana")
    model = ReplayModel().then(said("hi erin"))
    asyncio.run(Runner.run(Agent(name="t", model=model), "I am Erin", session=s,
                           context={"user": "erin"}))  # fmt: skip
    with pytest.raises(ScopeConflict):  # the session is Erin's now, not Dana's
        memory.get_session(Scope("acme", "dana", "s1"))
    assert [e.content for e in memory.get_session(Scope("acme", "erin", "s1"))] == [
        "I am Erin", "hi erin",
    ]  # fmt: skip
    routed = RunContextWrapper(context=Scope("acme", "erin", "other"))
    assert len(asyncio.run(s.get_items(wrapper=routed))) == 2


def test_an_invalid_session_id_is_a_clear_error(memory: MemoryAPI) -> None:
    with pytest.raises(InvalidScope, match="session id"):
        KenningSession("bad id!", memory, tenant="acme", user="dana")


def test_three_turns_through_the_window_then_two_hundred_stay_in_budget(
    memory: MemoryAPI,
) -> None:
    s = session(memory)
    window = s.window_input(budget_tokens=600, model="gpt-4o", system="You are a support agent.")
    config = RunConfig(session_input_callback=window)
    model = ReplayModel()
    agent = Agent(name="support", model=model)
    first = "Please refund $182.40 for order A-1042, it arrived broken."
    turns = [first] + [f"Question {n}: what else about shipping?" for n in range(2, 201)]
    for n in range(len(turns)):
        model.then(said(f"Answer {n + 1}: we are looking into it."))

    async def talk() -> None:
        for n, text in enumerate(turns, start=1):
            await Runner.run(agent, text, session=s, run_config=config)
            if n == 3:
                sent = model.last_input
                assert sent[0] == {"role": "system", "content": "You are a support agent."}
                assert sent[-1] == {"role": "user", "content": turns[2]}

    asyncio.run(talk())
    # The SDK stored the turns themselves, never the window's items.
    assert len(asyncio.run(s.get_items())) == 400
    sent_text = "\n".join(str(i.get("content")) for i in model.last_input)
    assert "182.40 USD" in sent_text and "A-1042" in sent_text
    assert "Question 2:" not in sent_text  # the oldest turns are summarised, not sent raw
    shown = memory.assemble(s.scope(), budget_tokens=600, model="gpt-4o",
                            system="You are a support agent.")  # fmt: skip
    assert shown.tokens <= 600


def test_a_tool_result_reaches_the_model_as_its_call_and_output(memory: MemoryAPI) -> None:
    model = ReplayModel().then(calls("lookup_order", '{"order_id": "A-1042"}', "call_1"))
    model.then(said("The refund is 182.40 USD.")).then(said("It was damaged."))
    s = session(memory)
    agent = Agent(name="t", model=model, tools=[lookup_order])
    asyncio.run(run("run", agent, "Refund order A-1042, it arrived broken", session=s))
    window = s.window_input(budget_tokens=2_000, model="gpt-4o", system="You help.")
    asyncio.run(Runner.run(agent, "What was wrong with it?", session=s,
                           run_config=RunConfig(session_input_callback=window)))  # fmt: skip
    sent = model.last_input
    at = next(i for i, item in enumerate(sent) if item.get("type") == "function_call_output")
    call = sent[at - 1]
    assert call["type"] == "function_call" and call["name"] == "lookup_order"
    assert call["call_id"] == sent[at]["call_id"] and "damaged" in sent[at]["output"]
    assert not any("tool result" in str(item.get("content")) for item in sent)
