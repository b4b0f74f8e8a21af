"""The Store conformance suite: written once against the protocol, run over every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from kenning.errors import InvalidInput, ModelMismatch, ScopeConflict, StoreError
from kenning.records import NewEvent, PinDraft, PinKind, Role, Scope, content_hash
from kenning.search.filters import parse_filters
from kenning.store.protocol import Store
from kenning.store.records import EventWrite, ModelInfo
from kenning.store.sqlite.store import SQLiteStore
from tests.conftest import MemoEmbedder

T0 = datetime(2025, 1, 1, tzinfo=UTC)
ALL = parse_filters(None)


def ev(content: str, role: str = "user", minutes: int = 0, **kw: object) -> NewEvent:
    return NewEvent(role, content, at=T0 + timedelta(minutes=minutes), **kw).validated()  # type: ignore[arg-type]


def write(
    store: Store,
    embedder: MemoEmbedder,
    rows: list[tuple[Scope, NewEvent]],
) -> list[str]:
    model = ModelInfo(embedder.model_id, embedder.dimension)
    writes = [EventWrite(s, e, content_hash(e.content)) for s, e in rows]
    vecs = embedder.embed([e.content for _, e in rows])
    vectors = {(s.tenant, content_hash(e.content)): vecs[i] for i, (s, e) in enumerate(rows)}
    return [e.id for e in store.append_events(writes, model=model, vectors=vectors)]


def model_of(embedder: MemoEmbedder) -> ModelInfo:
    return ModelInfo(embedder.model_id, embedder.dimension)


A1 = Scope("acme", "ann", "a-s1")
A2 = Scope("acme", "ann", "a-s2")
B1 = Scope("acme", "bob", "b-s1")
G1 = Scope("globex", "ann", "g-s1")


def test_declares_backend_and_capabilities(store: Store) -> None:
    assert store.backend == "sqlite"
    assert store.capabilities.lexical_search and store.capabilities.vector_search


def test_sequence_numbers_are_per_session_and_monotonic(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    write(store, real_embedder, [(A1, ev("one")), (A1, ev("two")), (A2, ev("other"))])
    write(store, real_embedder, [(A1, ev("three")), (A2, ev("other two"))])
    assert [e.seq for e in store.events(A1)] == [1, 2, 3]
    assert [e.content for e in store.events(A1)] == ["one", "two", "three"]
    assert [e.seq for e in store.events(A2)] == [1, 2]
    assert [e.seq for e in store.events(A1, after_seq=1)] == [2, 3]
    assert [e.seq for e in store.events(A1, tail=2)] == [2, 3]
    assert [e.seq for e in store.events(A1, limit=2)] == [1, 2]
    assert [e.content for e in store.events(Scope("acme", "ann"), tail=1)] == ["other two"]
    assert len(store.events(Scope("acme", "ann"))) == 5


def test_events_round_trip_every_field(store: Store, real_embedder: MemoEmbedder) -> None:
    event = NewEvent(
        Role.TOOL,
        '{"order": "A-1"}',
        at="2024-05-01T10:00:00+02:00",
        tool_name="orders.lookup",
        tool_args={"id": "A-1", "deep": [1, 2, {"x": None}]},
        tool_result={"amount": "42.50", "currency": "EUR"},
        metadata={"speaker": "orders", "n": 3, "ok": True, "none": None},
        tags=("billing", "tool"),
        version="prompt-v7",
    ).validated()
    (event_id,) = write(store, real_embedder, [(A1, event)])
    (got,) = store.events(A1)
    assert got.id == event_id
    assert got.scope == A1
    assert got.role is Role.TOOL
    assert got.at == datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
    assert got.tool_name == "orders.lookup"
    assert got.tool_args == {"id": "A-1", "deep": [1, 2, {"x": None}]}
    assert got.tool_result == {"amount": "42.50", "currency": "EUR"}
    assert dict(got.metadata) == {"speaker": "orders", "n": 3, "ok": True, "none": None}
    assert got.tags == ("billing", "tool")
    assert got.version == "prompt-v7"
    assert got.content_hash == content_hash('{"order": "A-1"}')


def test_session_ids_belong_to_one_user(store: Store, real_embedder: MemoEmbedder) -> None:
    write(store, real_embedder, [(A1, ev("mine"))])
    with pytest.raises(ScopeConflict):
        write(store, real_embedder, [(Scope("acme", "mallory", "a-s1"), ev("hijack"))])
    assert [e.content for e in store.events(Scope("acme"))] == ["mine"]
    # The same session id in another tenant is another session.
    write(store, real_embedder, [(Scope("globex", "mallory", "a-s1"), ev("fine"))])
    assert [e.content for e in store.events(Scope("globex"))] == ["fine"]


def test_failing_batch_leaves_nothing_behind(store: Store, real_embedder: MemoEmbedder) -> None:
    """Regression: a batch that fails on its last write must not keep its first writes."""
    write(store, real_embedder, [(A1, ev("before"))])
    rows = [
        (A2, ev("first of a doomed batch")),
        (B1, ev("second of a doomed batch")),
        (Scope("acme", "bob", "a-s1"), ev("conflicts with ann's session")),
    ]
    with pytest.raises(ScopeConflict):
        write(store, real_embedder, rows)
    assert [e.content for e in store.events(Scope("acme"))] == ["before"]
    model = model_of(real_embedder)
    doomed = [content_hash(e.content) for _, e in rows]
    assert store.missing_vectors("acme", model, doomed) == doomed
    assert store.lexical(Scope("acme"), "doomed", filters=ALL, limit=10) == []
    # The sessions the doomed batch touched did not keep a claimed sequence number.
    write(store, real_embedder, [(A2, ev("after"))])
    assert [e.seq for e in store.events(A2)] == [1]


def test_bad_vector_shape_rolls_back(store: Store, real_embedder: MemoEmbedder) -> None:
    model = model_of(real_embedder)
    event = ev("vector of the wrong size")
    with pytest.raises(InvalidInput):
        store.append_events(
            [EventWrite(A1, event, content_hash(event.content))],
            model=model,
            vectors={("acme", content_hash(event.content)): np.zeros(7, dtype=np.float32)},
        )
    assert store.events(A1) == []
    assert store.model() is None


def test_mixing_embedding_models_is_refused(store: Store, real_embedder: MemoEmbedder) -> None:
    write(store, real_embedder, [(A1, ev("first"))])
    assert store.model() == model_of(real_embedder)
    other = ModelInfo("another-model", real_embedder.dimension)
    event = ev("second")
    with pytest.raises(ModelMismatch):
        store.append_events(
            [EventWrite(A1, event, "h")],
            model=other,
            vectors={("acme", "h"): np.ones(real_embedder.dimension, dtype=np.float32)},
        )
    with pytest.raises(ModelMismatch):
        store.nearest(
            A1,
            np.ones(real_embedder.dimension, dtype=np.float32),
            model=other,
            filters=ALL,
            limit=5,
        )
    with pytest.raises(ModelMismatch):
        store.missing_vectors("acme", other, ["h"])
    assert len(store.events(A1)) == 1


def test_embedding_cache_is_per_tenant(store: Store, real_embedder: MemoEmbedder) -> None:
    write(store, real_embedder, [(A1, ev("shared text"))])
    model = model_of(real_embedder)
    digest = content_hash("shared text")
    assert store.missing_vectors("acme", model, [digest, "nope"]) == ["nope"]
    assert store.missing_vectors("globex", model, [digest]) == [digest]


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


def test_token_counts_are_cached_per_record(store: Store, real_embedder: MemoEmbedder) -> None:
    ids = write(store, real_embedder, [(A1, ev("a b c")), (G1, ev("d e"))])
    store.put_token_counts(A1, "o200k_base", {ids[0]: 3, ids[1]: 99})
    assert store.token_counts(A1, ids, "o200k_base") == {ids[0]: 3}
    assert store.token_counts(G1, ids, "o200k_base") == {}
    assert store.token_counts(A1, ids, "cl100k_base") == {}


def test_forget_purges_every_index(store: Store, real_embedder: MemoEmbedder) -> None:
    ids = write(
        store,
        real_embedder,
        [(A1, ev("secret alpha")), (A2, ev("keep beta")), (G1, ev("secret alpha"))],
    )
    model = model_of(real_embedder)
    q = real_embedder.embed(["secret alpha"])[0]
    assert len(store.nearest(Scope("acme"), q, model=model, filters=ALL, limit=5)) == 2
    store.put_token_counts(A1, "o200k_base", {ids[0]: 2})
    assert store.forget(A1) == 1
    assert store.events(A1) == []
    assert store.lexical(Scope("acme"), "secret", filters=ALL, limit=5) == []
    remaining = store.nearest(Scope("acme"), q, model=model, filters=ALL, limit=5)
    assert [c.id for c in remaining] == [ids[1]]
    assert store.token_counts(A1, [ids[0]], "o200k_base") == {}
    assert store.missing_vectors("acme", model, [content_hash("secret alpha")]) == [
        content_hash("secret alpha")
    ]
    # Another tenant's identical text is untouched.
    assert len(store.lexical(Scope("globex"), "secret", filters=ALL, limit=5)) == 1
    assert store.missing_vectors("globex", model, [content_hash("secret alpha")]) == []
    # A forgotten session id can start again from sequence 1.
    write(store, real_embedder, [(A1, ev("fresh start"))])
    assert [e.seq for e in store.events(A1)] == [1]


def test_forget_by_ids_and_time(store: Store, real_embedder: MemoEmbedder) -> None:
    ids = write(store, real_embedder, [(A1, ev("old", minutes=0)), (A1, ev("new", minutes=60))])
    assert store.forget(Scope("globex"), ids=ids) == 0
    assert store.forget(A1, before=T0 + timedelta(minutes=30)) == 1
    assert [e.content for e in store.events(A1)] == ["new"]
    assert store.forget(Scope("acme"), ids=[ids[1]]) == 1
    assert store.events(A1) == []


def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "x.db")
    store.close()
    with pytest.raises(StoreError):
        store.events(A1)


def test_file_store_persists_and_sees_other_connections(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    path = tmp_path / "shared.db"
    first = SQLiteStore(path)
    second = SQLiteStore(path)
    try:
        model = model_of(real_embedder)
        q = real_embedder.embed(["espresso"])[0]
        write(first, real_embedder, [(A1, ev("espresso one"))])
        assert len(second.nearest(A1, q, model=model, filters=ALL, limit=5)) == 1
        write(first, real_embedder, [(A1, ev("espresso two"))])
        # The second connection notices the new commit and reloads its vectors.
        assert len(second.nearest(A1, q, model=model, filters=ALL, limit=5)) == 2
        assert [e.seq for e in second.events(A1)] == [1, 2]
    finally:
        first.close()
        second.close()
    reopened = SQLiteStore(path)
    try:
        assert [e.content for e in reopened.events(A1)] == ["espresso one", "espresso two"]
        assert reopened.model() == model_of(real_embedder)
    finally:
        reopened.close()


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


def test_idempotency_keys_skip_repeats_within_a_session(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    first = write(store, real_embedder, [(A1, ev("order placed", idempotency_key="m-1"))])
    assert len(first) == 1
    again = write(
        store,
        real_embedder,
        [
            (A1, ev("order placed", idempotency_key="m-1")),  # a retry: skipped
            (A1, ev("order shipped", idempotency_key="m-2")),
            (A1, ev("order shipped again", idempotency_key="m-2")),  # repeated in the batch
            (A2, ev("other session, same key", idempotency_key="m-1")),  # keys are per session
            (A1, ev("no key at all")),
        ],
    )
    assert len(again) == 3
    stored = store.events(A1)
    assert [(e.seq, e.content, e.idempotency_key) for e in stored] == [
        (1, "order placed", "m-1"),
        (2, "order shipped", "m-2"),
        (3, "no key at all", None),
    ]
    assert [e.content for e in store.events(A2)] == ["other session, same key"]


def test_events_and_their_pins_commit_together(store: Store, real_embedder: MemoEmbedder) -> None:
    model = model_of(real_embedder)
    draft = PinDraft(PinKind.ENTITY_ID, "order_id:A-77", "A-77", source_event_id="ev_pinned")
    event = ev("refund order A-77")
    vec = real_embedder.embed([event.content])[0]
    good = EventWrite(A1, event, content_hash(event.content), id="ev_pinned", pins=(draft,))
    bad = EventWrite(A1, ev("second"), "not-a-vector-hash")
    with pytest.raises(InvalidInput):
        store.append_events(
            [good, bad],
            model=model,
            vectors={("acme", content_hash(event.content)): vec, ("acme", "x"): vec[:3]},
        )
    assert store.events(A1) == [] and store.pins(A1, history=True) == []
    [written] = store.append_events(
        [good], model=model, vectors={("acme", content_hash(event.content)): vec}
    )
    assert written.id == "ev_pinned"
    [pin] = store.pins(A1)
    assert (pin.value, pin.source_event_id) == ("A-77", "ev_pinned")


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
