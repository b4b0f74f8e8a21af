"""The EventLog conformance suite: sessions, events and their vectors, token counts, erasure.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from kenning.errors import InvalidInput, ModelMismatch, ScopeConflict, StoreError
from kenning.records import (
    NewEvent,
    PinDraft,
    PinKind,
    Role,
    Scope,
    content_hash,
)
from kenning.store.protocol import Directory, Store
from kenning.store.records import Chunk, EventWrite, IndexChange, ModelInfo
from kenning.store.sqlite.store import SQLiteStore
from tests.conformance.helpers import A1, A2, ALL, B1, G1, T0, ev, model_of, write
from tests.conftest import MemoEmbedder


def test_declares_its_backend(store: Store) -> None:
    assert (
        store.backend
        == {"SQLiteStore": "sqlite", "PostgresStore": "postgresql"}[type(store).__name__]
    )


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


def test_a_new_session_named_by_two_users_in_one_batch_is_refused(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    """Regression (SQLite): the owner was checked for a session's first write of a batch only,
    so a second user's write to a session the same batch created went in."""
    rows = [
        (Scope("acme", "ann", "new-s"), ev("ann opens a session")),
        (Scope("acme", "bob", "new-s"), ev("bob writes into it")),
    ]
    with pytest.raises(ScopeConflict):
        write(store, real_embedder, rows)
    assert store.events(Scope("acme")) == []
    assert store.user_sessions(Scope("acme", "ann")) == []
    # The same rows as two sessions of their own are fine.
    write(store, real_embedder, [rows[0], (Scope("acme", "bob", "bob-s"), ev("bob's own"))])
    assert sorted(e.scope.user or "" for e in store.events(Scope("acme"))) == ["ann", "bob"]


def test_session_owners_reads_many_sessions_of_one_tenant(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    write(store, real_embedder, [(A1, ev("ann's")), (B1, ev("bob's"))])
    write(store, real_embedder, [(Scope("globex", "mallory", "g-s1"), ev("another tenant"))])
    asked = ["a-s1", "b-s1", "never-written", "g-s1", "a-s1"]
    assert store.session_owners("acme", asked) == {"a-s1": "ann", "b-s1": "bob"}
    assert store.session_owners("globex", asked) == {"g-s1": "mallory"}
    assert store.session_owners("acme", []) == {}
    many = [f"s{i}" for i in range(2_500)] + ["a-s1"]  # more than one query's parameters
    assert store.session_owners("acme", many) == {"a-s1": "ann"}


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


def test_reindex_replaces_an_events_rows_atomically_and_search_follows(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    """``index_layouts`` pages a tenant's events in order with their rows; ``reindex_events``
    replaces them (one vector becomes two units here) and the search index follows at once."""
    first, second = "I moved to Lisbon in May last year.", "My new office is near the river."
    text = f"{first} {second}"
    ids = write(store, real_embedder, [(A1, ev(text)), (A1, ev("lunch at noon", minutes=1))])
    write(store, real_embedder, [(G1, ev("another tenant's turn"))])
    model = model_of(real_embedder)
    layouts = store.index_layouts("acme", after=0, limit=1)
    assert [(lay.event.id, lay.embed_hash, lay.chunks) for lay in layouts] == [
        (ids[0], content_hash(text), ())
    ]
    rest = store.index_layouts("acme", after=layouts[0].cursor, limit=10)
    assert [lay.event.id for lay in rest] == [ids[1]]
    assert store.index_layouts("acme", after=rest[0].cursor, limit=10) == []
    assert layouts[0].event == store.events(A1)[0]
    q = real_embedder.embed(["Where is the office?"])[0]
    whole = store.nearest(A1, q, model=model, filters=ALL, limit=1)[0].score
    units = (Chunk(0, len(first), content_hash(first), lexical=False),
             Chunk(len(first) + 1, len(text), content_hash(second), lexical=False))  # fmt: skip
    vectors = dict(zip([content_hash(first), content_hash(second)],
                       real_embedder.embed([first, second]), strict=True))  # fmt: skip
    done = store.reindex_events(
        "acme", [IndexChange(ids[0], None, units)], model=model, vectors=vectors
    )
    assert done == 1
    [now] = store.index_layouts("acme", after=0, limit=1)
    assert (now.embed_hash, now.chunks, now.cursor) == (None, units, layouts[0].cursor)
    # Found by its second sentence's own vector, and still once, as the whole record.
    best = store.nearest(A1, q, model=model, filters=ALL, limit=5)
    assert [c.id for c in best].count(ids[0]) == 1
    assert best[0].id == ids[0] and best[0].score > whole
    assert best[0].score == pytest.approx(float(vectors[content_hash(second)] @ q), abs=1e-6)
    assert [c.id for c in store.lexical(A1, "Lisbon office", filters=ALL, limit=5)] == [ids[0]]
    # A bad change writes nothing: not a vector of the model.
    bad = {content_hash("x"): np.zeros(7, dtype=np.float32)}
    with pytest.raises(InvalidInput):
        store.reindex_events(
            "acme", [IndexChange(ids[1], content_hash("x"))], model=model, vectors=bad
        )
    assert store.index_layouts("acme", after=0, limit=10)[1] == rest[0]
    # Another tenant's event is not this tenant's to rewrite.
    [other] = store.index_layouts("globex", after=0, limit=10)
    assert store.reindex_events("acme", [IndexChange(other.event.id, "h")]) == 0
    assert store.index_layouts("globex", after=0, limit=10) == [other]


def test_a_session_spans_the_times_its_events_happened(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    """A session's first and last times are its events' 'at' (a history imported later, or
    out of order, keeps its own times), and an erase that leaves events behind narrows them."""
    first = [(A1, ev("middle", minutes=60)), (A1, ev("late", minutes=90))]
    ids = write(store, real_embedder, first)
    write(store, real_embedder, [(A1, ev("early", minutes=5)), (A2, ev("other", minutes=30))])
    write(store, real_embedder, [(A1, ev("late", minutes=90, idempotency_key="k"))])
    write(store, real_embedder, [(A1, ev("replayed", minutes=500, idempotency_key="k"))])
    spans = {s.session: (s.first_at, s.last_at, s.active_at)
             for s in store.user_sessions(Scope("acme", "ann"))}  # fmt: skip
    assert spans == {
        "a-s1": (_at(5), _at(90), _at(90)),
        "a-s2": (_at(30), _at(30), _at(30)),
    }
    assert [s.session for s in store.user_sessions(Scope("acme", "ann"))] == ["a-s1", "a-s2"]
    idem = [e.id for e in store.events(A1) if e.idempotency_key == "k"]
    store.forget(A1, ids=[ids[1], *idem])  # both "late" events
    (a1,) = [s for s in store.user_sessions(Scope("acme", "ann")) if s.session == "a-s1"]
    assert (a1.first_at, a1.last_at) == (_at(5), _at(60))


def _at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_a_tenants_users_add_up_their_sessions_most_recent_first(
    store: Store, real_embedder: MemoEmbedder
) -> None:
    """The directory lists a tenant's users only, each with its sessions, the events they
    were given and its first and last activity, the latest active first; ``contains`` matches
    any case and takes LIKE's wildcards as plain text; ``limit`` cuts the list."""
    assert isinstance(store, Directory)
    write(store, real_embedder, [(A1, ev("one", minutes=5)), (A1, ev("two", minutes=50)),
                                 (A2, ev("three", minutes=20)), (B1, ev("four", minutes=70)),
                                 (G1, ev("elsewhere", minutes=99))])  # fmt: skip
    bob, ann = store.tenant_users("acme")
    assert (bob.user, bob.sessions, bob.events) == ("bob", 1, 1)
    assert (bob.first_at, bob.last_at) == (_at(70), _at(70))
    assert (ann.user, ann.sessions, ann.events) == ("ann", 2, 3)
    assert (ann.first_at, ann.last_at) == (_at(5), _at(50))
    assert [u.user for u in store.tenant_users("acme", contains="AN")] == ["ann"]
    assert store.tenant_users("acme", contains="%") == []
    assert store.tenant_users("acme", contains="_") == []
    assert [u.user for u in store.tenant_users("acme", limit=1)] == ["bob"]
    assert [(u.user, u.sessions) for u in store.tenant_users("globex")] == [("ann", 1)]
    assert store.tenant_users("initech") == []
