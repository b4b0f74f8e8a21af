"""The SearchIndex conformance suite: candidates of both signals and whole-session scores,
always inside the scope and the filters.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kenning.records import (
    Scope,
)
from kenning.search.filters import parse_filters
from kenning.store.protocol import Store
from tests.conformance.helpers import A1, A2, ALL, B1, G1, T0, ev, model_of, write
from tests.conftest import MemoEmbedder


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
