"""A window's session is read in one transaction on PostgreSQL: its pins, summaries, tail and
profile come from one committed state; each search of its retrieval reads in one of its own;
the round trips stay few. Counted on the wire
(psycopg's cursor) for the calling thread only; the compaction worker is off so nothing else
of the same thread interleaves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kenning.bench.round_trips import counting
from kenning.context.assembler import ContextSettings
from kenning.context.window import Tier
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import Scope
from kenning.settings import Settings
from tests.conftest import MemoEmbedder

SCOPE = Scope("acme", "dana", "s1")
#: A new session of the same user: its window retrieves from the user's earlier sessions.
LATER = Scope("acme", "dana", "s2")
SYSTEM = "You help with orders."
QUERY = "what did I say about the refund for order A-3?"


@pytest.fixture
def memory(pg_url: str, real_embedder: MemoEmbedder) -> Iterator[Memory]:
    settings = Settings(
        context=ContextSettings(background=False), longterm=LongTermSettings(extract=False)
    )
    with Memory.open(pg_url, embedder=real_embedder, settings=settings) as m:
        for i in range(20):
            m.add_events(
                SCOPE,
                [
                    {"role": "user", "content": f"Order A-{i} costs ${i * 10}. Refund it please."},
                    {"role": "assistant", "content": f"The refund for A-{i} is queued."},
                ],
            )
        yield m


def _window(memory: Memory) -> list[str]:
    window = memory.assemble(
        LATER, budget_tokens=4_000, model="gpt-4o", system=SYSTEM, query=QUERY,
        retrieve_from=Scope("acme", "dana"),
    )  # fmt: skip
    return [str(m["content"]) for m in window.messages]


def test_a_window_reads_in_one_transaction(memory: Memory) -> None:
    memory.add_events(LATER, [{"role": "user", "content": "Hello again."}])
    _window(memory)  # counts the session's turns into the ledger
    with counting() as count:
        messages = _window(memory)
    # The session's read, then retrieval's two searches (the user's facts, the sessions):
    # each in a transaction of its own, since a search may hand its lexical half to a worker
    # thread that cannot join the caller's.
    assert count.read_only == 3, count.texts
    # The reads and the window's usage record: nothing else commits.
    assert count.transactions == 4, count.texts
    session_read = count.texts[: count.texts.index("COMMIT")]
    assert any("FROM pins" in t for t in session_read)
    assert any("FROM summaries" in t for t in session_read)
    assert any("token_ledger t" in t for t in session_read)  # the tail
    # The earlier session's turn was retrieved.
    assert any("A-3" in m for m in messages), messages


def test_a_new_turn_is_counted_before_the_window_is_read(memory: Memory) -> None:
    memory.add_events(LATER, [{"role": "user", "content": "Hello again."}])
    _window(memory)
    memory.add_events(LATER, [{"role": "user", "content": "Any news on the refund for B-77?"}])
    with counting() as count:
        messages = _window(memory)
    # One read finds the turn uncounted; the ledger's write; the session's read; two
    # searches; usage.
    assert count.read_only == 4, count.texts
    assert count.transactions == 6, count.texts
    assert messages[-1].endswith("Any news on the refund for B-77?")


def test_hard_pressure_compacts_then_reads_the_window_again(memory: Memory) -> None:
    with counting() as count:
        window = memory.assemble(SCOPE, budget_tokens=220, model="gpt-4o", system=SYSTEM)
    assert window.tokens <= 220
    # The compaction's summaries reached the window (shown or left out for room): the
    # read after the compaction saw them.
    summaries = window.tiers[Tier.SUMMARIES]
    assert summaries.included + len(summaries.skipped) >= 1
    assert count.read_only >= 2
