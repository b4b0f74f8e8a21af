"""A tool result enters the window as the model's tool message: a ``tool`` message right after
the assistant message that carries its call, never as the user's words; the pair stays whole
wherever the tail begins, and is counted exactly. Stores counted before are counted again."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kenning import InvalidInput, Memory, Role, Scope
from kenning.context.assembler import ContextSettings
from kenning.context.window import Tier
from kenning.settings import Settings
from kenning.tokens import count_messages, message_tokens, tokenizer_for
from kenning.tokens.messages import message_for
from tests.conftest import open_store

S = Scope("acme", "ann", "tools-1")
QUIET = Settings(context=ContextSettings(retrieve=False, background=False))


def _events(n: int = 12) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "Check the orders of this week."}]
    for i in range(n):
        out.append({"role": "assistant", "content": f"Looking up order A-{1000 + i}.",
                    "tool_name": "orders.lookup", "tool_args": {"id": f"A-{1000 + i}"},
                    "metadata": {"tool_call_id": f"call_{i}"} if i % 2 else {}})  # fmt: skip
        shipped = {"order": f"A-{1000 + i}", "status": "shipped", "items": i}
        result = {"role": "tool", "tool_name": "orders.lookup", "tool_result": shipped}
        if i % 2:
            result["metadata"] = {"tool_call_id": f"call_{i}"}
        if i % 3 == 0:
            result["tool_args"] = {"id": f"A-{1000 + i}"}
        out.append(result)
    out.append({"role": "user", "content": "Which ones shipped?"})
    return out


def _check_pairs(messages: list[dict[str, Any]]) -> int:
    """Every tool message right after its call, every call right before its result; no tool
    output in a user message. Returns the tool messages seen."""
    tools = 0
    for at, message in enumerate(messages):
        if message["role"] == "tool":
            tools += 1
            before = messages[at - 1]
            assert before["role"] == "assistant" and before["content"] == ""
            assert [c["id"] for c in before["tool_calls"]] == [message["tool_call_id"]]
        if message.get("tool_calls"):
            assert messages[at + 1]["role"] == "tool"
        if message["role"] == "user":
            assert "tool result" not in message["content"] and 'shipped"' not in message["content"]
    return tools


@pytest.mark.parametrize("backend", ["sqlite-file", "postgresql"])
def test_tool_results_are_tool_messages_after_their_calls_at_every_budget(
    backend: str, tmp_path: Path
) -> None:
    tokenizer = tokenizer_for("gpt-4o")
    with Memory(open_store(backend, tmp_path), embedder=None, settings=QUIET) as memory:
        memory.add_events(S, _events())
        seen = set()
        for budget in range(120, 1_400, 37):
            window = memory.assemble(S, budget_tokens=budget, model="gpt-4o", system="Be brief.")
            messages = [dict(m) for m in window.messages]
            seen.add(_check_pairs(messages))
            assert window.tokens == count_messages(tokenizer, messages) <= budget
        assert 0 in seen and 12 in seen and len(seen) >= 4  # cut at several points, then whole
        window = memory.assemble(S, budget_tokens=4_000, model="gpt-4o", system="Be brief.")
        calls = [m["tool_calls"][0] for m in window.messages if m.get("tool_calls")]
        assert [c["id"] for c in calls[:3]] == ["kn3", "call_1", "kn7"]  # host id, else kn<seq>
        assert calls[0]["function"] == {"name": "orders_lookup", "arguments": '{"id":"A-1000"}'}
        assert calls[1]["function"]["arguments"] == "{}"  # the result carried no arguments


def test_a_tool_result_is_counted_as_its_call_and_itself() -> None:
    tokenizer = tokenizer_for("gpt-4o")
    call, result = message_for(Role.TOOL, "42 rows", tool_name="db.query", seq=9,
                               tool_args={"sql": "select 1"})  # fmt: skip
    assert call["tool_calls"][0]["id"] == result["tool_call_id"] == "kn9"
    strings = ["assistant", "", "kn9", "function", "db_query", '{"sql":"select 1"}']
    assert message_tokens(tokenizer, call) == 3 + sum(tokenizer.count(s) for s in strings)
    assert message_for(Role.USER, "hi") == [{"role": "user", "content": "hi"}]
    with pytest.raises(InvalidInput, match="tool_calls"):
        message_tokens(tokenizer, {"role": "assistant", "tool_calls": [{"id": "x"}]})
    with pytest.raises(InvalidInput, match="tool_calls"):
        count_messages(tokenizer, [{"role": "assistant", "tool_calls": "call"}])


@pytest.mark.parametrize("backend", ["sqlite-file", "postgresql"])
def test_a_ledger_counted_before_is_counted_again(backend: str, tmp_path: Path) -> None:
    with Memory(open_store(backend, tmp_path), embedder=None, settings=QUIET) as memory:
        memory.add_events(S, _events(4))
        memory.assemble(S, budget_tokens=4_000, model="gpt-4o", system="s")
    # As an older kenning left it: tool results counted as one message, the migration not run.
    stale = "UPDATE token_ledger SET n = 1, cum = seq"
    if backend == "postgresql":
        from tests.pg import PG_URL

        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(stale)
            conn.execute("DELETE FROM kenning_migrations WHERE name = '0010_recount_tool_messages'")
        from kenning.store.postgres.store import PostgresStore

        PostgresStore(PG_URL).close()  # the owner's open migrates
    else:
        with sqlite3.connect(tmp_path / "store.db") as conn:
            conn.execute(stale)
            conn.execute("DELETE FROM migrations WHERE name = '0016_recount_tool_messages'")
    with Memory(open_store(backend, tmp_path, fresh=False), embedder=None, settings=QUIET) as m:
        window = m.assemble(S, budget_tokens=4_000, model="gpt-4o", system="s")
        assert window.tokens == count_messages(tokenizer_for("gpt-4o"), window.messages)
        assert _check_pairs([dict(x) for x in window.messages]) == 4


def test_the_message_cap_counts_a_tool_result_as_two(tmp_path: Path) -> None:
    capped = Settings(context=ContextSettings(retrieve=False, background=False, max_messages=9))
    with Memory.open(tmp_path / "m.db", embedder=None, settings=capped) as memory:
        memory.add_events(S, _events())
        window = memory.assemble(S, budget_tokens=8_000, model="gpt-4o", system="Be brief.")
        messages = [dict(m) for m in window.messages]
        # The tail's share of the cap: 9 less the system policy and five blocks.
        tail = [m for m in messages if m["role"] != "system"]
        assert len(tail) <= 3 and _check_pairs(messages) == 1
        assert any(s.reason == "message cap" for s in window.tiers[Tier.TAIL].skipped)
