"""The Memory facade end to end: real SQLite, the real embedding model, bad input."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenning import (
    ContentTooLarge,
    FusionConfig,
    InvalidFilter,
    InvalidInput,
    InvalidScope,
    KenningError,
    Memory,
    NewEvent,
    Scope,
    Settings,
)
from tests.conftest import MemoEmbedder
from tests.fakes import DownEmbedder

S = Scope("acme", "dana", "s1")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

CONVERSATION = [
    ("user", "Hi, I was charged twice for order A-1042, please refund one charge.", "Dana"),
    ("assistant", "I see two charges of 42.50 EUR on A-1042.", "Bot"),
    ("user", "I'm vegetarian, so stop sending me the steak-box promotions.", "Dana"),
    ("assistant", "Refund RF-7781 was approved by Priya in finance.", "Bot"),
    ("user", "My cat knocked the kettle off the counter and it shattered.", "Dana"),
    ("user", "Please deliver next week's order on Saturday morning.", "Dana"),
]


@pytest.fixture
def memory(tmp_path: Path, real_embedder: MemoEmbedder) -> Memory:
    m = Memory.open(tmp_path / "m.db", embedder=real_embedder)
    m.add_events(
        S,
        [
            NewEvent(role, text, at=T0 + timedelta(minutes=i), metadata={"speaker": who})
            for i, (role, text, who) in enumerate(CONVERSATION)
        ],
    )
    return m


def test_semantic_match_without_shared_words(memory: Memory) -> None:
    hits = memory.search(S, "what diet does the customer follow", k=3)
    assert "vegetarian" in hits[0].content
    assert "cosine" in hits[0].scores
    hits = memory.search(S, "broken appliance", k=3)
    assert "kettle" in hits[0].content


def test_hits_carry_scores_and_provenance(memory: Memory) -> None:
    results = memory.search(S, "who approved the refund", k=2)
    assert not results.degraded
    top = results[0]
    assert "Priya" in top.content
    assert top.scope == S and top.session == "s1" and top.seq == 4
    assert top.at == T0 + timedelta(minutes=3)
    assert set(top.scores) >= {"weighted", "bm25", "cosine", "session", "score"}
    assert top.score == pytest.approx(top.scores["score"])
    assert results[0].score >= results[1].score
    data = top.to_dict()
    assert {"id", "session", "content", "score", "scores", "seq", "at"} <= set(data)


def test_search_is_deterministic_and_respects_k_and_min_score(memory: Memory) -> None:
    memory.close()
    # Access tracking changes later scores on purpose; turn it off to compare runs.
    with Memory.open(
        memory.store.path,  # type: ignore[attr-defined]
        embedder=memory.embedder,
        settings=Settings(track_access=False),
    ) as m:
        first = [h.id for h in m.search(S, "refund order", k=4)]
        assert first == [h.id for h in m.search(S, "refund order", k=4)]
        assert len(first) == 4
        assert all(h.score >= 0.9 for h in m.search(S, "refund order", k=6, min_score=0.9))


def test_fusion_methods_both_rank(memory: Memory, real_embedder: MemoEmbedder) -> None:
    path = memory.store.path  # type: ignore[attr-defined]
    memory.close()
    for method in ("rrf", "weighted"):
        settings = Settings(fusion=FusionConfig(method=method))  # type: ignore[arg-type]
        with Memory.open(path, embedder=real_embedder, settings=settings) as m:
            top = m.search(S, "refund approved by finance", k=1)[0]
            assert "Priya" in top.content
            assert method in top.scores


def test_scope_narrowing(memory: Memory) -> None:
    memory.add_events(Scope("acme", "lee", "s9"), [{"role": "user", "content": "refund please"}])
    memory.add_events(Scope("globex", "dana", "s1"), [{"role": "user", "content": "refund me"}])
    assert {h.scope.user for h in memory.search(Scope("acme"), "refund", k=20)} == {"dana", "lee"}
    assert {h.scope.user for h in memory.search(Scope("acme", "lee"), "refund", k=20)} == {"lee"}
    assert {h.scope.tenant for h in memory.search(Scope("globex"), "refund")} == {"globex"}


def test_filters(memory: Memory) -> None:
    hits = memory.search(S, "refund", filters={"role": "assistant"}, k=10)
    assert hits and all(h.role.value == "assistant" for h in hits)
    hits = memory.search(S, "refund", filters={"meta.speaker": "Dana"}, k=10)
    assert hits and all(h.metadata["speaker"] == "Dana" for h in hits)
    hits = memory.search(S, "order", since=T0 + timedelta(minutes=4), k=10)
    assert hits and all(h.at >= T0 + timedelta(minutes=4) for h in hits)


def test_unchanged_text_is_not_embedded_twice(tmp_path: Path, real_embedder: MemoEmbedder) -> None:
    class Counting(MemoEmbedder):
        pass

    counting = Counting(real_embedder.inner)
    with Memory.open(tmp_path / "c.db", embedder=counting) as m:
        m.add_events(S, [{"role": "user", "content": "same words"}])
        m.add_events(S, [{"role": "user", "content": "same words"}] * 3)
        assert counting.calls == 1
        assert len(m.get_session(S)) == 4


def test_degraded_when_model_is_down(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "d.db", embedder=DownEmbedder()) as m:
        events = m.add_events(S, [{"role": "user", "content": "refund for order A-1"}])
        assert len(events) == 1
        results = m.search(S, "refund")
        assert results.degraded and "unavailable" in (results.reason or "")
        assert [h.content for h in results] == ["refund for order A-1"]


def test_another_programs_database_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('dana')")
        conn.commit()
    before = path.read_bytes()
    with pytest.raises(InvalidInput, match="another program"):
        Memory.open(path, embedder=DownEmbedder())
    assert path.read_bytes() == before
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    # A database kenning made opens again as itself.
    with Memory.open(tmp_path / "k.db", embedder=DownEmbedder()) as m:
        m.add_events(S, [{"role": "user", "content": "refund for order A-1"}])
    with Memory.open(tmp_path / "k.db", embedder=DownEmbedder()) as m:
        assert [h.content for h in m.search(S, "refund")] == ["refund for order A-1"]


def test_get_session_and_forget(memory: Memory) -> None:
    assert memory.wait_for_facts(60)
    events = memory.get_session(S)
    assert [e.seq for e in events] == list(range(1, len(CONVERSATION) + 1))
    assert memory.forget(S, ids=[events[0].id]) == 1
    assert len(memory.get_session(S)) == len(CONVERSATION) - 1
    assert all("A-1042, please" not in h.content for h in memory.search(S, "charged twice"))
    facts = memory.facts.list(Scope("acme", "dana"), include_closed=True)
    # Records: the events left and the facts read from them.
    assert memory.forget(Scope("acme", "dana")) == len(CONVERSATION) - 1 + len(facts)
    assert memory.search(Scope("acme"), "refund").hits == ()
    assert memory.facts.list(Scope("acme", "dana"), include_closed=True) == []


def _stored(memory: Memory) -> int:
    return len(memory.store.events(Scope("acme"))) + len(memory.store.events(Scope("x")))


BAD_EVENTS: list[tuple[object, type[Exception]]] = [
    ({"role": "user", "content": ""}, InvalidInput),
    ({"role": "user", "content": "   \n"}, InvalidInput),
    ({"role": "user", "content": "x" * 2001}, ContentTooLarge),
    ({"role": "wizard", "content": "hi"}, InvalidInput),
    ({"role": "user"}, InvalidInput),
    ({"role": "user", "content": 42}, InvalidInput),
    ({"role": "user", "content": "hi", "at": "yesterday-ish"}, InvalidInput),
    ({"role": "user", "content": "hi", "metadata": {"bad key'; --": 1}}, InvalidInput),
    ({"role": "user", "content": "hi", "metadata": {"k": {"nested": 1}}}, InvalidInput),
    ({"role": "user", "content": "hi", "tags": ["ok", "no spaces allowed"]}, InvalidInput),
    ({"role": "user", "content": "hi", "surprise": 1}, InvalidInput),
    ({"role": "user", "content": "nul\x00byte"}, InvalidInput),
    ("just a string", InvalidInput),
]


@pytest.mark.parametrize(("bad", "error"), BAD_EVENTS)
def test_bad_events_change_nothing(
    tmp_path: Path, real_embedder: MemoEmbedder, bad: object, error: type[Exception]
) -> None:
    settings = Settings(max_content_chars=2000)
    with Memory.open(tmp_path / "b.db", embedder=real_embedder, settings=settings) as m:
        good = {"role": "user", "content": "a valid event before the bad one"}
        with pytest.raises(error) as info:
            m.add_events(S, [good, bad])  # type: ignore[list-item]
        assert isinstance(info.value, KenningError) and isinstance(info.value, ValueError)
        assert info.value.code
        assert _stored(m) == 0


@pytest.mark.parametrize(
    "scope_args",
    [
        ("",),
        ("acme'; DROP TABLE items; --",),
        ("acme", "u" * 129),
        ("acme", "ann", "s 1"),
        ("acme", "ann", "../etc/passwd"),
        ("-leading-dash",),
        ("acme", None, None, "agent\n"),
    ],
)
def test_invalid_ids_are_rejected(scope_args: tuple[object, ...]) -> None:
    with pytest.raises(InvalidScope):
        Scope(*scope_args)  # type: ignore[arg-type]


def test_writes_need_a_full_session_scope(memory: Memory) -> None:
    with pytest.raises(InvalidScope):
        memory.add_events(Scope("acme", "dana"), [{"role": "user", "content": "hi"}])


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"query": ""}, InvalidInput),
        ({"query": "  "}, InvalidInput),
        ({"query": "x" * 5000}, InvalidInput),
        ({"query": "ok", "k": 0}, InvalidInput),
        ({"query": "ok", "k": 10**7}, InvalidInput),
        ({"query": "ok", "k": True}, InvalidInput),
        ({"query": "ok", "min_score": float("nan")}, InvalidInput),
        ({"query": "ok", "filters": {"color": "red"}}, InvalidFilter),
        ({"query": "ok", "filters": {"meta.a'b": "x"}}, InvalidFilter),
        ({"query": "ok", "filters": {"meta.x) OR 1=1 --": "x"}}, InvalidFilter),
        ({"query": "ok", "filters": {"role": "root"}}, InvalidFilter),
        ({"query": "ok", "filters": {"tag": []}}, InvalidFilter),
        ({"query": "ok", "filters": {"meta.k": {"$ne": 1}}}, InvalidFilter),
        ({"query": "ok", "kinds": ["secrets"]}, InvalidFilter),
        ({"query": "ok", "since": "2026-01-02", "until": "2026-01-01"}, InvalidFilter),
    ],
)
def test_bad_searches_raise_typed_errors(
    memory: Memory, kwargs: dict[str, object], error: type[Exception]
) -> None:
    before = len(memory.get_session(S))
    with pytest.raises(error):
        memory.search(S, **kwargs)  # type: ignore[arg-type]
    assert len(memory.get_session(S)) == before


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "NEAR(refund order, 2)",
        "text:refund OR label:*",
        "refund* AND NOT order",
        "'; DROP TABLE items; --",
        "^^^ ((( )))",
        "🙂 €42.50",
    ],
)
def test_query_syntax_is_not_interpreted(memory: Memory, query: str) -> None:
    results = memory.search(S, query, k=3)
    assert len(results) <= 3
    assert len(memory.get_session(S)) == len(CONVERSATION)


def test_metadata_filter_values_are_parameters(memory: Memory) -> None:
    hits = memory.search(S, "refund", filters={"meta.speaker": "Dana' OR '1'='1"})
    assert hits.hits == ()


def test_token_counts_are_exact_and_cached(memory: Memory) -> None:
    from kenning.tokens import tokenizer_for

    counts = memory.context.count_tokens(S, model="gpt-4o")
    events = memory.get_session(S)
    exact = tokenizer_for("gpt-4o")
    assert counts == {e.id: exact.count(e.content) for e in events}
    cached = memory.store.token_counts(S, [e.id for e in events], exact.name)
    assert cached == counts
    memory.add_events(S, [{"role": "user", "content": "one more line"}])
    again = memory.context.count_tokens(S, model="gpt-4o")
    assert len(again) == len(events) + 1
    assert memory.context.count_tokens(S, model="gpt-4")  # another encoding, cached separately
    approx = memory.context.count_tokens(S, model="claude-3-opus")
    assert set(approx) == set(again)
    assert memory.store.token_counts(S, list(approx), tokenizer_for("claude-3-opus").name)


def test_a_repeated_query_is_embedded_once(real_embedder: MemoEmbedder) -> None:
    scope = Scope("acme", "u", "s")
    with Memory.open(":memory:", embedder=real_embedder) as memory:
        memory.add_events(scope, [{"role": "user", "content": "my kettle is broken"}])
        # Only the queries are counted: the turn's vectors and the fact reader's (which
        # embeds the fact it reads) are stored first.
        memory.wait_for_facts()
        memory.flush()
        before = real_embedder.calls
        first = memory.search(scope, "broken kettle")
        again = memory.search(scope, "broken kettle")
        assert real_embedder.calls == before + 1
        assert [h.id for h in first] == [h.id for h in again]
        memory.search(scope, "another question")
        assert real_embedder.calls == before + 2
