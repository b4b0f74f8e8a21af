"""The SearchIndex conformance suite: candidates of both signals and whole-session scores,
always inside the scope and the filters.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

import math
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kenning.errors import InvalidInput, ScopeConflict
from kenning.records import Filters, Scope, content_hash
from kenning.search.filters import parse_filters
from kenning.settings import Settings
from kenning.store.protocol import Store
from kenning.store.records import Chunk, EventWrite, ModelInfo, Position
from kenning.store.sqlite.store import SQLiteStore
from tests.conformance.conftest import CONFORMANCE_BACKENDS
from tests.conformance.helpers import A1, A2, ALL, B1, G1, T0, ev, model_of, write
from tests.conftest import MemoEmbedder, open_store


def test_lexical_is_constrained_by_scope(store: Store, real_embedder: MemoEmbedder) -> None:
    write(
        store,
        real_embedder,
        [
            (A1, ev("refund the espresso machine")),
            (A2, ev("refund the desk lamp")),
            (B1, ev("refund bob's kettle")),
            (G1, ev("refund globex order")),
        ],
    )
    match = "refund"
    assert len(store.lexical(Scope("acme"), match, filters=ALL, limit=10)) == 3
    assert len(store.lexical(Scope("acme", "ann"), match, filters=ALL, limit=10)) == 2
    hits = store.lexical(A2, match, filters=ALL, limit=10)
    assert [e.content for e in store.events(A2, ids=[h.id for h in hits])] == [
        "refund the desk lamp"
    ]
    assert len(store.lexical(Scope("globex"), match, filters=ALL, limit=10)) == 1
    assert store.lexical(Scope("initech"), match, filters=ALL, limit=10) == []


def test_nearest_is_constrained_by_scope(store: Store, real_embedder: MemoEmbedder) -> None:
    write(
        store,
        real_embedder,
        [
            (A1, ev("my espresso machine is broken")),
            (B1, ev("bob's coffee maker stopped working")),
            (G1, ev("globex coffee machine failure")),
        ],
    )
    q = real_embedder.embed(["coffee machine broken"])[0]
    model = model_of(real_embedder)
    tenant = store.nearest(Scope("acme"), q, model=model, filters=ALL, limit=10)
    assert len(tenant) == 2
    assert all(-1.0 <= c.score <= 1.0 + 1e-6 for c in tenant)
    assert tenant[0].score >= tenant[1].score
    bob = store.nearest(Scope("acme", "bob"), q, model=model, filters=ALL, limit=10)
    assert [e.content for e in store.events(B1, ids=[c.id for c in bob])] == [
        "bob's coffee maker stopped working"
    ]
    assert len(store.nearest(Scope("globex"), q, model=model, filters=ALL, limit=10)) == 1
    assert store.nearest(Scope("acme", "nobody"), q, model=model, filters=ALL, limit=10) == []


def test_filters_apply_inside_both_signals(store: Store, real_embedder: MemoEmbedder) -> None:
    write(
        store,
        real_embedder,
        [
            (A1, ev("refund request one", "user", 0, metadata={"speaker": "Ann"}, tags=("b",))),
            (A1, ev("refund approved", "assistant", 10, metadata={"speaker": "Bot"})),
            (A1, ev("refund sent", "tool", 20, metadata={"speaker": "Bot", "n": 2})),
        ],
    )
    q = real_embedder.embed(["refund"])[0]
    model = model_of(real_embedder)
    cases = {
        "role": (parse_filters({"role": "assistant"}), ["refund approved"]),
        "tag": (parse_filters({"tag": "b"}), ["refund request one"]),
        "meta": (parse_filters({"meta.speaker": "Bot"}), ["refund approved", "refund sent"]),
        "meta int": (parse_filters({"meta.n": 2}), ["refund sent"]),
        "since": (
            parse_filters(None, since=T0 + timedelta(minutes=5)),
            ["refund approved", "refund sent"],
        ),
        "until": (parse_filters(None, until=T0 + timedelta(minutes=5)), ["refund request one"]),
    }  # fmt: skip
    for name, (filters, expected) in cases.items():
        lex = store.lexical(A1, "refund", filters=filters, limit=10)
        vec = store.nearest(A1, q, model=model, filters=filters, limit=10)
        for got in (lex, vec):
            contents = sorted(e.content for e in store.events(A1, ids=[c.id for c in got]))
            assert contents == sorted(expected), name


def test_fts_syntax_in_text_is_stored_and_matched_literally(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    hostile = "he said \"NEAR(a b)\" AND text:* OR ^x -- DROP TABLE items; 'quote'"
    write(store, real_embedder, [(A1, ev(hostile))])
    for query in (hostile, 'NEAR("a"', "text:*", "items; DROP", "' OR 1=1 --"):
        hits = store.lexical(A1, query, filters=ALL, limit=5)
        assert len(hits) <= 1
    assert store.events(A1)[0].content == hostile


def test_items_and_touch(store: Store, real_embedder: MemoEmbedder) -> None:
    ids = write(store, real_embedder, [(A1, ev("x one")), (B1, ev("x two"))])
    items = store.items(Scope("acme", "ann"), ids)
    assert [i.id for i in items] == [ids[0]]
    store.touch(Scope("acme"), ids, at=T0)
    store.touch(Scope("acme", "ann"), ids, at=T0 + timedelta(days=1))
    counts = {i.id: i.access_count for i in store.items(Scope("acme"), ids)}
    assert counts == {ids[0]: 2, ids[1]: 1}
    assert store.items(Scope("globex"), ids) == []


def test_candidates_carry_each_turns_place_in_its_conversation(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    ids = write(
        store,
        real_embedder,
        [
            (A1, ev("did the parcel arrive?", metadata={"speaker": "  Ann "})),
            (A1, ev("the parcel arrived", role="assistant")),
            (A1, ev("parcel tracking says delivered", role="tool", tool_name="tracker")),
            (A2, ev("parcel parcel?", metadata={"name": "Bo"})),
        ],
    )
    asked, answered, tool, other = ids
    expected = {
        asked: Position("a-s1", 1, "Ann", asks=True),
        answered: Position("a-s1", 2, "assistant"),
        tool: Position("a-s1", 3, "tracker"),
        other: Position("a-s2", 1, "Bo", asks=True),
    }
    lexical = store.lexical(Scope("acme", "ann"), "parcel", filters=ALL, limit=10)
    vector = store.nearest(
        Scope("acme", "ann"), real_embedder.embed(["parcel"])[0],
        model=model_of(real_embedder), filters=ALL, limit=10,
    )  # fmt: skip
    for found in (lexical, vector):
        assert {c.id: c.position for c in found} == expected
    # The place is the index's: the same as the record's own session and sequence number.
    for item in store.items(Scope("acme", "ann"), ids):
        place = expected[item.id]
        assert (place.session, place.seq) == (item.scope.session, item.seq)
    # A turn written after the index was loaded carries its place too.
    (later,) = write(store, real_embedder, [(A1, ev("parcel returned", role="assistant"))])
    again = store.lexical(A1, "returned", filters=ALL, limit=10)
    assert [(c.id, c.position) for c in again] == [(later, Position("a-s1", 4, "assistant"))]


def test_query_words_never_match_scope_tokens(store: Store, real_embedder: MemoEmbedder) -> None:
    write(store, real_embedder, [(A1, ev("plain words"))])
    for probe in ("kevent", "ruser", "event user", "scope_terms"):
        assert store.lexical(Scope("acme"), probe, filters=ALL, limit=5) == []


def test_sessions_are_scored_as_documents_inside_scope(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    write(
        store,
        real_embedder,
        [
            (A1, ev("my espresso machine leaks")),
            (A1, ev("the espresso tastes burnt too")),
            (A2, ev("invoice address change")),
            (B1, ev("espresso for bob")),
            (G1, ev("espresso at globex")),
        ],
    )
    model = model_of(real_embedder)
    q = real_embedder.embed(["espresso machine problems"])[0]
    every = ["a-s1", "a-s2", "b-s1", "g-s1", "nope"]
    scored = store.sessions(
        Scope("acme", "ann"), "espresso", q, model=model, sessions=every, filters=ALL
    )
    by_session = {c.session: c for c in scored}
    assert set(by_session) == {"a-s1", "a-s2"}
    assert by_session["a-s1"].lexical > 0 and by_session["a-s2"].lexical == 0
    assert by_session["a-s1"].cosine > by_session["a-s2"].cosine
    tenant = {c.session for c in store.sessions(Scope("acme"), "espresso", None, model=None,
                                                 sessions=every, filters=ALL)}  # fmt: skip
    assert tenant == {"a-s1", "a-s2", "b-s1"}
    one = store.sessions(A2, "espresso", q, model=model, sessions=every, filters=ALL)
    assert [c.session for c in one] == ["a-s2"]


def test_lexical_scores_are_calibrated(store: Store, real_embedder: MemoEmbedder) -> None:
    write(
        store,
        real_embedder,
        [(A1, ev("espresso machine descaling")), (A1, ev("espresso beans")),
         (A1, ev("tea kettle")), (A1, ev("tea cups"))],
    )  # fmt: skip
    full = store.lexical(A1, "espresso machine", filters=ALL, limit=5)
    assert full[0].score == pytest.approx(1.0, abs=0.35)  # the whole query, once
    partial = {c.id: c.score for c in full}
    assert min(partial.values()) < 0.7 * max(partial.values())
    assert all(0 < c.score < 1.5 for c in full)


@pytest.mark.parametrize(
    "filters",
    [
        {"role": "assistant"},
        {"tag": "answer"},
        {"meta.speaker": "agent"},
    ],
)
def test_session_documents_hold_only_what_the_filters_admit(
    store: Store, real_embedder: MemoEmbedder, filters: dict[str, str]
) -> None:
    admitted = {"tags": ["answer"], "metadata": {"speaker": "agent"}}
    texts = {
        "user": "my espresso machine leaks espresso everywhere",
        "assistant": "we will send a courier tomorrow",
    }
    write(
        store,
        real_embedder,
        [
            (A1, ev(texts["user"])),
            (A1, ev(texts["assistant"], role="assistant", **admitted)),
            (A2, ev("courier booked for the espresso grinder", role="assistant", **admitted)),
        ],
    )
    model = model_of(real_embedder)
    q = real_embedder.embed(["espresso leaks"])[0]
    parsed = parse_filters(filters)
    scored = {
        c.session: c
        for c in store.sessions(
            Scope("acme", "ann"),
            "espresso leaks",
            q,
            model=model,
            sessions=["a-s1", "a-s2"],
            filters=parsed,
        )
    }
    # The user turn is what matches, and the filter excludes it: a-s1 scores on its
    # assistant turn alone, and its centroid is that turn's vector.
    assert scored["a-s1"].lexical == 0 and scored["a-s2"].lexical > 0
    own = real_embedder.embed([texts["assistant"]])[0]
    assert scored["a-s1"].cosine == pytest.approx(float(own @ q), abs=1e-5)
    unfiltered = store.sessions(
        Scope("acme", "ann"), "espresso leaks", q, model=model, sessions=["a-s1"], filters=ALL
    )
    assert unfiltered[0].lexical > 0


# -- a reply indexed with the turn it answers (kenning.store.replies) ----------------------

_BASIS = ModelInfo("basis-4", 4)


def _unit(i: int) -> np.ndarray:
    v = np.zeros(4, dtype=np.float32)
    v[i] = 1.0
    return v


def _turns(store: Store, scope: Scope, turns: list[tuple[str, str, int]]) -> list[str]:
    """Append (speaker, text, basis vector) turns with exact vectors."""
    writes, vectors = [], {}
    for i, (speaker, text, axis) in enumerate(turns):
        event = ev(text, minutes=i, metadata={"speaker": speaker})
        digest = content_hash(f"{speaker}: {text}")
        writes.append(EventWrite(scope, event, digest))
        vectors[(scope.tenant, digest)] = _unit(axis)
    return [e.id for e in store.append_events(writes, model=_BASIS, vectors=vectors)]


def _cosines(store: Store, scope: Scope, axis: int) -> dict[str, float]:
    hits = store.nearest(scope, _unit(axis), model=_BASIS, filters=ALL, limit=10)
    return {h.id: h.score for h in hits}


@pytest.fixture(params=CONFORMANCE_BACKENDS)
def reply_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_an_answer_is_searched_with_the_question_it_answers(
    reply_backend: str, tmp_path: Path
) -> None:
    store = open_store(reply_backend, tmp_path, reply_weight=0.5)
    try:
        question, answer, more, reply, own, again = _turns(
            store,
            A1,
            [("Ann", "did you visit the Louvre?", 0), ("Bob", "yes, last Tuesday!", 1),
             ("Bob", "it was packed", 2), ("Ann", "how nice", 3),
             ("Ann", "shall we go again?", 0), ("Ann", "maybe in May", 1)],
        )  # fmt: skip
        mixed = 0.5 / math.sqrt(1.25)
        by_question = _cosines(store, A1, 0)
        assert by_question[question] == pytest.approx(1.0, abs=1e-6)
        assert by_question[answer] == pytest.approx(mixed, abs=1e-6)
        assert _cosines(store, A1, 1)[answer] == pytest.approx(1.0 / math.sqrt(1.25), abs=1e-6)
        # The same author going on answers nothing; a reply to a statement keeps its own
        # vector; so does a turn after its own author's question.
        assert by_question[more] == pytest.approx(0.0, abs=1e-6)
        assert _cosines(store, A1, 2)[more] == pytest.approx(1.0, abs=1e-6)
        assert _cosines(store, A1, 3)[reply] == pytest.approx(1.0, abs=1e-6)
        assert _cosines(store, A1, 0)[own] == pytest.approx(1.0, abs=1e-6)
        assert _cosines(store, A1, 1)[again] == pytest.approx(1.0, abs=1e-6)
        # Turns of another session are never mixed in.
        (first,) = _turns(store, A2, [("Bob", "a new day", 1)])
        assert _cosines(store, A2, 1)[first] == pytest.approx(1.0, abs=1e-6)
        if reply_backend != "sqlite-fts5":  # FTS5 ranks each row's own text
            # The answer holds the question's words too, weaker than the question itself.
            lexical = _lexical(store, A1, "Louvre")
            assert set(lexical) == {question, answer}
            assert 0 < lexical[answer] < lexical[question]
    finally:
        store.close()


def test_an_answer_written_after_its_question_is_mixed_with_it(
    reply_backend: str, tmp_path: Path
) -> None:
    """The question was indexed by an earlier write: the partition reads it back."""
    store = open_store(reply_backend, tmp_path, reply_weight=0.5)
    try:
        (question,) = _turns(store, A1, [("Ann", "did you visit the Louvre?", 0)])
        assert _cosines(store, A1, 0)[question] == pytest.approx(1.0, abs=1e-6)  # loaded
        (answer,) = _turns(store, A1, [("Bob", "yes, last Tuesday!", 1)])
        assert _cosines(store, A1, 0)[answer] == pytest.approx(0.5 / math.sqrt(1.25), abs=1e-6)
        if reply_backend != "sqlite-fts5":
            assert answer in _lexical(store, A1, "Louvre")
    finally:
        store.close()


def _lexical(store: Store, scope: Scope, query: str) -> dict[str, float]:
    return {c.id: c.score for c in store.lexical(scope, query, filters=ALL, limit=10)}


def test_erasing_the_turn_answered_leaves_nothing_in_the_reply(
    reply_backend: str, tmp_path: Path
) -> None:
    store = open_store(reply_backend, tmp_path, reply_weight=0.5)
    follower = None
    try:
        question, reply = _turns(
            store, A1, [("Ann", "did you visit the Louvre?", 0), ("Bob", "yes, last Tuesday!", 1)]
        )
        if reply_backend != "sqlite-memory":
            # Another process on the same database follows the erasure by delta.
            follower = open_store(reply_backend, tmp_path, reply_weight=0.5, fresh=False)
            assert _cosines(follower, A1, 0)[reply] == pytest.approx(0.5 / math.sqrt(1.25))
        if reply_backend != "sqlite-fts5":  # FTS5 ranks each row's own text
            assert set(_lexical(store, A1, "Louvre")) == {question, reply}
        assert store.forget(A1, ids=[question]) == 1
        for s in (store, follower):
            if s is None:
                continue
            assert question not in _cosines(s, A1, 0)
            assert _cosines(s, A1, 0).get(reply, 0.0) == pytest.approx(0.0, abs=1e-6)
            assert _cosines(s, A1, 1)[reply] == pytest.approx(1.0, abs=1e-6)
            assert _lexical(s, A1, "Louvre") == {}
            status = s.partition_status("acme")  # type: ignore[attr-defined]
            assert status.rows == 1
    finally:
        if follower is not None:
            follower.close()
        store.close()


def test_no_reply_weight_keeps_every_vector_its_own(reply_backend: str, tmp_path: Path) -> None:
    store = open_store(reply_backend, tmp_path)
    try:
        _, reply = _turns(
            store, A1, [("Ann", "did you visit the Louvre?", 0), ("Bob", "yes, last Tuesday!", 1)]
        )
        assert _cosines(store, A1, 0).get(reply, 0.0) == pytest.approx(0.0, abs=1e-6)
        assert _cosines(store, A1, 1)[reply] == pytest.approx(1.0, abs=1e-6)
    finally:
        store.close()


@pytest.mark.parametrize("weight", [-0.1, 4.5, float("nan"), True])
def test_a_bad_reply_weight_is_refused(weight: float, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        SQLiteStore(tmp_path / "x.db", reply_weight=weight)
    with pytest.raises(InvalidInput):
        Settings(reply_weight=weight)


@pytest.fixture(params=CONFORMANCE_BACKENDS)
def any_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_calls_inside_a_reading_block_see_one_state(
    any_backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    store = open_store(any_backend, tmp_path)
    # Another process on the same database; an in-memory database has only this store.
    other = (
        store if any_backend == "sqlite-memory" else open_store(any_backend, tmp_path, fresh=False)
    )
    try:
        write(store, real_embedder, [(A1, ev("refund the espresso machine"))])
        late: list[str] = []

        def write_late() -> None:
            ids = write(other, real_embedder, [(A1, ev("refund the desk lamp", minutes=1))])
            late.extend(ids)

        writer = threading.Thread(target=write_late)
        with store.reading(A1):
            assert len(store.lexical(A1, "refund", filters=ALL, limit=10)) == 1
            writer.start()
            # Committed by then, except on an in-memory database, where it waits for the block.
            writer.join(timeout=1 if any_backend == "sqlite-memory" else 30)
            assert len(store.lexical(A1, "refund", filters=ALL, limit=10)) == 1
            assert bool(late) == (any_backend != "sqlite-memory")
            assert store.items(A1, late) == []
        writer.join(timeout=30)
        assert len(late) == 1
        assert len(store.lexical(A1, "refund", filters=ALL, limit=10)) == 2
        assert [i.id for i in store.items(A1, late)] == late
        with pytest.raises(ScopeConflict), store.reading(Scope("acme", "bob", A1.session)):
            pass
    finally:
        if other is not store:
            other.close()
        store.close()


def test_also_adds_the_best_under_each_further_filter_once(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    ids = write(
        store,
        real_embedder,
        [
            (A1, ev("refund refund refund for the espresso machine", minutes=0)),
            (A1, ev("refund for the desk lamp", minutes=60)),
            (A1, ev("a refund was mentioned", minutes=120)),
            (B1, ev("refund refund refund for bob", minutes=60)),
        ],
    )
    strong, lamp, weak, bob = ids
    window = parse_filters(None, since=T0 + timedelta(minutes=30), until=T0 + timedelta(minutes=90))
    late = parse_filters(None, since=T0 + timedelta(minutes=100))
    lexical = store.lexical(A1, "refund", filters=ALL, limit=1, also=[window, late, window])
    assert [c.id for c in lexical] == [strong, lamp, weak]
    # The scope binds every filter: bob's turn in the window is never a candidate.
    wide = store.lexical(A1, "refund", filters=ALL, limit=3, also=[window])
    assert bob not in {c.id for c in wide}
    q = real_embedder.embed(["refund"])[0]
    model = model_of(real_embedder)
    vector = store.nearest(A1, q, model=model, filters=ALL, limit=1, also=[window, late])
    each = [store.nearest(A1, q, model=model, filters=f, limit=1)[0] for f in (ALL, window, late)]
    expected = list(dict.fromkeys(c.id for c in each))
    assert [c.id for c in vector] == expected
    assert set(expected) <= {strong, lamp, weak}
    by_id = {c.id: c.score for c in each}
    # A row's cosine may differ in the last bits between a full and a gathered product.
    assert [c.score for c in vector] == pytest.approx([by_id[key] for key in expected], abs=1e-6)


def test_also_limit_caps_what_each_further_filter_adds(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    texts = ["refund refund refund for the espresso machine", "refund refund for the grinder"]
    texts += [f"a refund for order A-{n}" for n in range(4)]
    ids = write(store, real_embedder, [(A1, ev(t, minutes=10 * i)) for i, t in enumerate(texts)])
    late = parse_filters(None, since=T0 + timedelta(minutes=15))  # the last four
    q = real_embedder.embed(["refund"])[0]
    model = model_of(real_embedder)

    def lexical(filters: Filters, **kw: Any) -> list[str]:
        return [c.id for c in store.lexical(A1, "refund", filters=filters, **kw)]

    def nearest(filters: Filters, **kw: Any) -> list[str]:
        return [c.id for c in store.nearest(A1, q, model=model, filters=filters, **kw)]

    for search in (lexical, nearest):
        head = search(ALL, limit=1)
        inside = [key for key in search(late, limit=10) if key not in head]
        assert sorted(inside) == sorted(set(ids[2:]) - set(head))
        assert search(ALL, limit=1, also=[late]) == head + inside[:1]  # default: limit
        assert search(ALL, limit=1, also=[late], also_limit=2) == head + inside[:2]
        assert search(ALL, limit=1, also=[late], also_limit=10) == head + inside


# -- records embedded by sentence units (kenning.indexing) ------------------------------------


def _by_units(
    store: Store, scope: Scope, turns: list[tuple[str, list[tuple[str, int]]]], minutes: int = 0
) -> list[str]:
    """Append (speaker, [(sentence, basis vector)]) turns; a turn of several sentences is
    written as units, each with its own exact vector, as Memory.ingest writes it."""
    writes, vectors = [], {}
    for i, (speaker, sentences) in enumerate(turns):
        text = " ".join(s for s, _ in sentences)
        event = ev(text, minutes=minutes + i, metadata={"speaker": speaker})
        if len(sentences) == 1:
            digest = content_hash(f"{speaker}: {text}")
            writes.append(EventWrite(scope, event, digest))
            vectors[(scope.tenant, digest)] = _unit(sentences[0][1])
            continue
        units, start = [], 0
        for sentence, axis in sentences:
            digest = content_hash(f"{speaker}: {sentence}")
            units.append(Chunk(start, start + len(sentence), digest, lexical=False))
            vectors[(scope.tenant, digest)] = _unit(axis)
            start += len(sentence) + 1
        writes.append(EventWrite(scope, event, None, chunks=tuple(units)))
    return [e.id for e in store.append_events(writes, model=_BASIS, vectors=vectors)]


def test_a_record_of_units_is_found_by_its_best_unit_and_read_whole(
    any_backend: str, tmp_path: Path
) -> None:
    store = open_store(any_backend, tmp_path)
    try:
        sentences = [("I need a new espresso machine.", 0), ("By the way, my cat is Pixel.", 1)]
        filler = [("Ann", [("the weather is fine today", 2)]), ("Ann", [("see you", 3)])]
        (record,) = _by_units(store, A1, [("Ann", sentences)])
        _by_units(store, A1, filler, minutes=5)
        # The same text as one record, with the same neighbours, in a tenant of its own.
        g1 = Scope("globex", "ann", "g-s1")
        (whole,) = _turns(store, g1, [("Ann", " ".join(s for s, _ in sentences), 0)])
        _by_units(store, g1, filler, minutes=5)
        for axis in (0, 1):
            hits = store.nearest(A1, _unit(axis), model=_BASIS, filters=ALL, limit=10)
            assert [h.id for h in hits].count(record) == 1
            assert hits[0].id == record and hits[0].score == pytest.approx(1.0, abs=1e-6)
        [item] = store.items(A1, [record])
        assert item.text == " ".join(s for s, _ in sentences)
        # Its whole text is its one lexical document: a query across both units scores it
        # as the same text written whole, and units add no document to the statistics.
        lexical = store.lexical(A1, "espresso Pixel", filters=ALL, limit=10)
        assert [c.id for c in lexical] == [record]
        assert lexical[0].score == pytest.approx(_lexical(store, g1, "espresso Pixel")[whole])
        assert store.forget(A1, ids=[record]) == 1
        assert record not in _cosines(store, A1, 0) and record not in _cosines(store, A1, 1)
        assert store.lexical(A1, "espresso", filters=ALL, limit=10) == []
        if any_backend not in ("postgresql", "citus"):
            assert store.partition_status("acme").rows == 2  # type: ignore[attr-defined]
    finally:
        store.close()


def test_units_take_part_in_replies_on_both_sides(reply_backend: str, tmp_path: Path) -> None:
    store = open_store(reply_backend, tmp_path, reply_weight=0.5)
    follower = None
    try:
        # A question embedded by units: its direction is its units' together.
        _, answer = _by_units(
            store,
            A1,
            [("Ann", [("I was in Paris for a week.", 0), ("Did you visit the Louvre?", 2)]),
             ("Bob", [("yes, last Tuesday!", 1)])],
        )  # fmt: skip
        toward = 0.5 / math.sqrt(2)  # the question's direction (e0 + e2) / sqrt(2), weighed
        mixed = toward / math.sqrt(1 + 0.25)
        assert _cosines(store, A1, 0)[answer] == pytest.approx(mixed, abs=1e-6)
        assert _cosines(store, A1, 1)[answer] == pytest.approx(1 / math.sqrt(1.25), abs=1e-6)
        # An answer embedded by units, written after its question was indexed: each unit is
        # pulled toward the question, and its document holds the question's words.
        (asked,) = _by_units(store, A2, [("Ann", [("Did you see the Mona Lisa?", 0)])])
        assert _cosines(store, A2, 0)[asked] == pytest.approx(1.0, abs=1e-6)
        (reply,) = _by_units(
            store,
            A2,
            [("Bob", [("Yes, it was smaller than I thought.", 1), ("The queue was long.", 3)])],
            minutes=1,
        )
        assert _cosines(store, A2, 0)[reply] == pytest.approx(0.5 / math.sqrt(1.25), abs=1e-6)
        assert _cosines(store, A2, 3)[reply] == pytest.approx(1 / math.sqrt(1.25), abs=1e-6)
        if reply_backend != "sqlite-fts5":  # FTS5 ranks each row's own text
            assert set(_lexical(store, A2, "Mona")) == {asked, reply}
        if reply_backend != "sqlite-memory":
            # Another process loads the same rows and mixes them the same way.
            follower = open_store(reply_backend, tmp_path, reply_weight=0.5, fresh=False)
            assert _cosines(follower, A1, 0)[answer] == pytest.approx(mixed, abs=1e-6)
            assert _cosines(follower, A2, 0)[reply] == pytest.approx(
                0.5 / math.sqrt(1.25), abs=1e-6
            )
        # Erasing the question leaves each unit of the answer its own vector again.
        assert store.forget(A2, ids=[asked]) == 1
        assert _cosines(store, A2, 0).get(reply, 0.0) == pytest.approx(0.0, abs=1e-6)
        assert _cosines(store, A2, 1)[reply] == pytest.approx(1.0, abs=1e-6)
    finally:
        if follower is not None:
            follower.close()
        store.close()
