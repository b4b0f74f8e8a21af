"""The DocumentStore conformance suite: namespaced JSON documents, their search candidates,
time to live, and how erasure, retention and legal holds reach them.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from kenning.errors import InvalidFilter, InvalidInput, InvalidScope, LegalHoldActive
from kenning.records import Scope
from kenning.records.documents import (
    DocumentQuery,
    NamespaceQuery,
    parse_document_filter,
)
from kenning.store.protocol import DocumentStore, Store, documents_of
from kenning.store.records import DocumentWrite, IndexText
from tests.conformance.helpers import A1, T0, add
from tests.conftest import open_store

ACME, GLOBEX = Scope("acme"), Scope("globex")


def unit(*values: float) -> np.ndarray:
    vec = np.asarray(values, dtype=np.float32)
    return vec / np.linalg.norm(vec)


def doc(ns: tuple[str, ...], key: str, value: dict[str, object] | None, *, text: str | None = None,
        vec: np.ndarray | None = None, **kw: object) -> DocumentWrite:  # fmt: skip
    texts = () if text is None else (IndexText("text", text, vec),)
    return DocumentWrite(ns, key, value, texts=texts, **kw)  # type: ignore[arg-type]


def put(store: DocumentStore, scope: Scope, *writes: DocumentWrite, minutes: int = 0,
        model: str | None = None) -> None:  # fmt: skip
    store.put_documents(scope, writes, at=T0 + timedelta(minutes=minutes), model=model)


def keys(docs: list[object]) -> list[str]:
    return [d.key for d in docs]  # type: ignore[attr-defined]


def test_both_backends_offer_documents_outside_the_composite_store(store: Store) -> None:
    documents = documents_of(store)
    assert isinstance(documents, DocumentStore)
    assert "put_documents" not in Store.__dict__ and "put_documents" not in dir(Store)


def test_put_get_replace_and_delete(store: Store) -> None:
    docs = documents_of(store)
    put(docs, ACME, doc(("users", "dana"), "prefs", {"theme": "dark", "n": 1}))
    got = docs.get_documents(ACME, [(("users", "dana"), "prefs"), (("users", "dana"), "none")])
    assert got[1] is None and got[0] is not None
    first = got[0]
    assert got[0].value == {"theme": "dark", "n": 1} and got[0].namespace == ("users", "dana")
    assert got[0].created_at == got[0].updated_at == T0
    # Replacing keeps the id and created_at, and moves updated_at.
    put(docs, ACME, doc(("users", "dana"), "prefs", {"theme": "light"}), minutes=5)
    again = docs.get_documents(ACME, [(("users", "dana"), "prefs")])[0]
    assert again is not None and again.value == {"theme": "light"}
    assert (again.id, again.created_at) == (first.id, T0)
    assert again.updated_at == T0 + timedelta(minutes=5)
    put(docs, ACME, doc(("users", "dana"), "prefs", None))
    assert docs.get_documents(ACME, [(("users", "dana"), "prefs")]) == [None]


def test_new_documents_ids_are_unique_and_follow_the_order_they_were_written_in(
    store: Store,
) -> None:
    """Ids lead with the time of the write: a batch's documents sit side by side in the id
    index (a write touches a page or two of it, not a page per document)."""
    docs = documents_of(store)
    put(docs, ACME, *[doc(("a",), f"k{n}", {"n": n}) for n in range(20)])
    time.sleep(0.005)
    put(docs, ACME, *[doc(("b",), f"k{n}", {"n": n}) for n in range(20)])
    first = [d.id for d in docs.find_documents(ACME, DocumentQuery(prefix=("a",), limit=50))]
    then = [d.id for d in docs.find_documents(ACME, DocumentQuery(prefix=("b",), limit=50))]
    assert len(set(first + then)) == 40
    assert max(first) < min(then)


def test_stats_count_the_documents_a_tenant_or_user_holds(store: Store) -> None:
    docs = documents_of(store)
    owned = [doc(("u",), "3", {"v": 3}, user="dana"), doc(("u",), "4", {"v": 4}, user="lee")]
    put(docs, ACME, doc(("t",), "1", {"v": 1}), doc(("t",), "2", {"v": 2}), *owned)
    put(docs, GLOBEX, doc(("t",), "1", {"v": 1}))
    assert store.stats(ACME, now=T0).documents == 4
    assert store.stats(Scope("acme", "dana"), now=T0).documents == 1
    assert store.stats(Scope("acme", "kim"), now=T0).documents == 0
    put(docs, ACME, doc(("t",), "1", None), doc(("t",), "2", {"v": 5}))
    assert store.stats(ACME, now=T0).documents == 3
    assert store.stats(GLOBEX, now=T0).documents == 1


def test_a_batch_applies_in_order_and_atomically(store: Store) -> None:
    docs = documents_of(store)
    ns = ("a",)
    put(docs, ACME, doc(ns, "k", {"v": 1}))
    old = docs.get_documents(ACME, [(ns, "k")])[0]
    # Deleted then written again in one batch: a new document (new id and created_at).
    put(docs, ACME, doc(ns, "k", {"v": 2}), doc(ns, "k", None), doc(ns, "k", {"v": 3}),
        minutes=1)  # fmt: skip
    new = docs.get_documents(ACME, [(ns, "k")])[0]
    assert old is not None and new is not None and new.value == {"v": 3}
    assert new.id != old.id and new.created_at == T0 + timedelta(minutes=1)
    put(docs, ACME, doc(ns, "gone", {"v": 1}), doc(ns, "gone", None))
    assert docs.get_documents(ACME, [(ns, "gone")]) == [None]
    # Written twice in one batch: only the second write's texts find it.
    put(docs, ACME, doc(ns, "t", {}, text="first words"), doc(ns, "t", {}, text="second words"))
    assert docs.document_candidates(ACME, DocumentQuery(), text="first").lexical == []
    assert len(docs.document_candidates(ACME, DocumentQuery(), text="second").lexical) == 1
    put(docs, ACME, doc(ns, "x", {"v": 1}, text="one", vec=unit(1, 0)), model="m1")
    # A batch mixing another model's vectors is refused whole: nothing of it is written.
    with pytest.raises(InvalidInput, match="mixing models"):
        put(docs, ACME, doc(ns, "y", {"v": 2}), doc(ns, "z", {"v": 3}, text="t", vec=unit(0, 1)),
            model="m2")  # fmt: skip
    assert docs.get_documents(ACME, [(ns, "y")]) == [None]


def test_reads_keep_to_the_tenant_and_the_owner(store: Store) -> None:
    docs = documents_of(store)
    put(docs, ACME, doc(("n",), "t", {"who": "tenant"}),
        doc(("n", "ann"), "k", {"who": "ann"}, user="ann"))  # fmt: skip
    put(docs, GLOBEX, doc(("n",), "t", {"who": "globex"}))
    assert docs.get_documents(GLOBEX, [(("n",), "t")])[0].value == {"who": "globex"}  # type: ignore[union-attr]
    assert keys(docs.find_documents(GLOBEX, DocumentQuery(prefix=("n",)))) == ["t"]
    ann = Scope("acme", "ann")
    assert [d.value for d in docs.find_documents(ann, DocumentQuery())] == [{"who": "ann"}]
    assert docs.get_documents(ann, [(("n",), "t")]) == [None]
    assert docs.document_namespaces(GLOBEX, NamespaceQuery()) == [("n",)]
    with pytest.raises(InvalidScope):
        put(docs, ann, doc(("n",), "x", {}, user="bob"))
    with pytest.raises(InvalidScope):
        docs.find_documents(Scope("acme", "ann", "s1"), DocumentQuery())


def test_prefixes_filters_order_and_pages(store: Store) -> None:
    docs = documents_of(store)
    rows = [(("a", "b"), "1", {"color": "red", "score": 4.5, "meta": {"lang": "en"}}),
            (("a", "b", "c"), "2", {"color": "red", "score": 3, "tags": ["x", "y"]}),
            (("a", "bc"), "3", {"color": "green", "score": 4.0, "flag": True}),
            (("z",), "4", {"color": "blue", "score": "high"})]  # fmt: skip
    for minute, (ns, key, value) in enumerate(rows):
        put(docs, ACME, doc(ns, key, value), minutes=minute)

    def find(prefix: tuple[str, ...] = (), **kw: object) -> list[str]:
        raw = kw.pop("filter", None)
        query = DocumentQuery(prefix=prefix, filter=parse_document_filter(raw), **kw)  # type: ignore[arg-type]
        return keys(docs.find_documents(ACME, query))

    assert find() == ["4", "3", "2", "1"]  # most recently updated first
    assert find(("a", "b")) == ["2", "1"]  # ("a", "bc") is not under ("a", "b")
    assert find(("a",), limit=2, offset=1) == ["2", "1"]
    assert find(filter={"color": "red"}) == ["2", "1"]
    assert find(filter={"score": {"$gt": 3, "$lte": 4.5}}) == ["3", "1"]
    assert find(filter={"score": {"$ne": 3}}) == ["4", "3", "1"]
    assert find(filter={"score": {"$gte": "a"}}) == ["4"]  # strings compare with strings only
    assert find(filter={"meta.lang": "en"}) == ["1"] == find(filter={"meta": {"lang": "en"}})
    assert find(filter={"tags": ["x", "y"]}) == ["2"] and find(filter={"tags": ["x"]}) == []
    assert find(filter={"flag": True}) == ["3"] and find(filter={"flag": 1}) == []
    assert find(filter={"missing": None}) == ["4", "3", "2", "1"]
    assert find(("a",), filter={"color": "red"}, limit=1, offset=1) == ["1"]
    for bad in ({"score": {"$in": [1]}}, {"a..b": 1}, {"score": {"$gt": None}}):
        with pytest.raises(InvalidFilter):
            parse_document_filter(bad)


def test_namespaces_with_patterns_depth_and_pages(store: Store) -> None:
    docs = documents_of(store)
    spaces = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "c", "f"), ("b", "a", "f"),
              ("users", "123"), ("users", "456", "settings")]  # fmt: skip
    for n, ns in enumerate(spaces):
        put(docs, ACME, doc(ns, f"k{n}", {"n": n}))
    put(docs, GLOBEX, doc(("a", "b", "x"), "k", {}))

    def listed(**kw: object) -> list[tuple[str, ...]]:
        return docs.document_namespaces(ACME, NamespaceQuery(**kw))  # type: ignore[arg-type]

    assert listed() == sorted(spaces)
    assert listed(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert listed(suffix=("f",)) == [("a", "c", "f"), ("b", "a", "f")]
    assert listed(prefix=("a", "*", "f")) == [("a", "c", "f")]
    assert listed(suffix=("*", "f"), prefix=("b",)) == [("b", "a", "f")]
    assert listed(max_depth=2) == [("a", "b"), ("a", "c"), ("b", "a"), ("users", "123"),
                                   ("users", "456")]  # fmt: skip
    assert listed(prefix=("a",), limit=1, offset=1) == [("a", "b", "d", "e")]
    assert listed(prefix=("nope",)) == []


def test_candidates_rank_only_what_the_query_admits(store: Store) -> None:
    docs = documents_of(store)
    put(docs, ACME,
        doc(("k",), "apple", {"c": "red"}, text="red apple pie", vec=unit(1, 0, 0)),
        doc(("k",), "car", {"c": "red"}, text="red car", vec=unit(0, 1, 0)),
        doc(("k",), "plain", {"c": "red"}),
        doc(("k",), "green", {"c": "green"}, text="green apple", vec=unit(1, 0.1, 0)),
        doc(("other",), "far", {"c": "red"}, text="apple", vec=unit(1, 0, 0)),
        model="m")  # fmt: skip
    query = DocumentQuery(prefix=("k",), filter=parse_document_filter({"c": "red"}))
    found = docs.document_candidates(ACME, query, text="apple", vector=unit(1, 0, 0), model="m")
    by_id = {d.id: d.key for d in docs.find_documents(ACME, DocumentQuery())}
    assert [by_id[c.id] for c in found.lexical] == ["apple"]
    assert [by_id[c.id] for c in found.vector] == ["apple", "car"]
    assert found.vector[0].score == pytest.approx(1.0) and found.vector[1].score == pytest.approx(0)
    assert [by_id[i] for i in found.rest] == ["plain"]
    # With a depth, each signal proposes its best; a proposed document keeps both scores.
    top = docs.document_candidates(ACME, query, text="car", vector=unit(1, 0, 0), model="m",
                                   depth=1)  # fmt: skip
    assert [by_id[c.id] for c in top.lexical] == ["car"]
    assert [by_id[c.id] for c in top.vector] == ["apple", "car"] and top.rest == []
    lexical_only = docs.document_candidates(ACME, query, text="pie")
    assert [by_id[c.id] for c in lexical_only.lexical] == ["apple"] and not lexical_only.vector
    with pytest.raises(InvalidInput):
        docs.document_candidates(ACME, query, text="x", vector=unit(1, 0, 0), model="other")
    # A replaced document is scored by its new texts at once.
    put(docs, ACME, doc(("k",), "car", {"c": "red"}, text="apple cart", vec=unit(0, 1, 0)),
        model="m")  # fmt: skip
    found = docs.document_candidates(ACME, query, text="apple", vector=unit(1, 0, 0), model="m")
    assert sorted(by_id[c.id] for c in found.lexical) == ["apple", "car"]


def test_time_to_live_refresh_omission_and_sweep(store: Store) -> None:
    docs = documents_of(store)
    ns = ("cache",)
    put(docs, ACME, doc(ns, "short", {"v": 1}, ttl_minutes=10), doc(ns, "forever", {"v": 2}))
    short = docs.get_documents(ACME, [(ns, "short")])[0]
    assert short is not None and short.expires_at == T0 + timedelta(minutes=10)
    # Reading with a refresh restarts the clock; reading without one does not.
    docs.get_documents(ACME, [(ns, "short")], refresh_at=T0 + timedelta(minutes=8))
    assert docs.get_documents(ACME, [(ns, "short")])[0].expires_at == T0 + timedelta(minutes=18)  # type: ignore[union-attr]
    late = T0 + timedelta(minutes=20)
    assert docs.get_documents(ACME, [(ns, "short")], live_at=late) == [None]
    assert keys(docs.find_documents(ACME, DocumentQuery(live_at=late))) == ["forever"]
    assert docs.document_namespaces(ACME, NamespaceQuery(live_at=late)) == [("cache",)]
    assert docs.sweep_documents("acme", now=T0 + timedelta(minutes=17)) == 0
    assert docs.sweep_documents("acme", now=late) == 1
    assert keys(docs.find_documents(ACME, DocumentQuery())) == ["forever"]


def test_a_legal_hold_wins_over_the_time_to_live(store: Store) -> None:
    docs = documents_of(store)
    put(docs, ACME, doc(("m", "ann"), "a", {}, user="ann", ttl_minutes=1),
        doc(("m", "bob"), "b", {}, user="bob", ttl_minutes=1),
        doc(("t",), "c", {}, ttl_minutes=1))  # fmt: skip
    later = T0 + timedelta(minutes=5)
    store.put_hold(Scope("acme", "ann"), "audit")
    store.put_hold(Scope("acme", "bob", "b-s1"), "a session hold covers no document")
    assert docs.sweep_documents("acme", now=later) == 2
    assert [d.user for d in docs.find_documents(ACME, DocumentQuery())] == ["ann"]
    store.put_hold(ACME, "tenant audit")
    store.release_hold(Scope("acme", "ann"))
    assert docs.sweep_documents("acme", now=later) == 0
    store.release_hold(ACME)
    assert store.purge("acme", now=later, episodes_before=None) == 1
    assert store.purge_log("acme") == {"document": 1}
    assert docs.find_documents(ACME, DocumentQuery()) == []


def test_forget_of_a_tenant_or_an_owner_erases_their_documents(store: Store) -> None:
    docs = documents_of(store)
    add(store, A1, "I like tea")
    put(docs, ACME, doc(("m", "ann"), "a", {}, user="ann", text="tea", vec=unit(1, 0)),
        doc(("m", "bob"), "b", {}, user="bob"), doc(("t",), "c", {}), model="m")  # fmt: skip
    put(docs, GLOBEX, doc(("m", "ann"), "a", {}, user="ann"))
    store.forget(A1)  # a session: documents have none, they stay
    assert len(docs.find_documents(ACME, DocumentQuery())) == 3
    store.put_hold(Scope("acme", "bob"), "audit")
    with pytest.raises(LegalHoldActive):
        store.forget(Scope("acme", "bob"))
    store.forget(Scope("acme", "ann"))
    assert [d.key for d in docs.find_documents(ACME, DocumentQuery())] == ["b", "c"]
    found = docs.document_candidates(
        ACME, DocumentQuery(), text="tea", vector=unit(1, 0), model="m"
    )
    assert found.lexical == [] and found.vector == []
    store.release_hold(Scope("acme", "bob"))
    store.forget(ACME)
    assert docs.find_documents(ACME, DocumentQuery()) == []
    assert len(docs.find_documents(GLOBEX, DocumentQuery())) == 1


def test_bad_input_is_refused_with_a_typed_error(store: Store) -> None:
    docs = documents_of(store)
    for bad in ((), ("a", ""), ("a\x1fb",), "ab", ("a", 1)):
        with pytest.raises(InvalidInput):
            DocumentWrite(bad, "k", {})  # type: ignore[arg-type]
    for value in ({"a": float("nan")}, {1: "x"}, {"a": "nul\x00"}, ["not", "an", "object"]):
        with pytest.raises(InvalidInput):
            DocumentWrite(("a",), "k", value)  # type: ignore[arg-type]
    for ttl in (0, -1, float("inf"), "5"):
        with pytest.raises(InvalidInput):
            DocumentWrite(("a",), "k", {}, ttl_minutes=ttl)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        DocumentQuery(limit=-1)
    with pytest.raises(InvalidInput):
        docs.get_documents(ACME, [(("a",), "k\x00")])
    assert docs.find_documents(ACME, DocumentQuery()) == []


@pytest.mark.parametrize("backend", ["sqlite-file", "postgresql", "citus"])
def test_another_process_sees_writes_and_searches_them(backend: str, tmp_path: Path) -> None:
    first, second = open_store(backend, tmp_path), open_store(backend, tmp_path, fresh=False)
    try:
        a, b = documents_of(first), documents_of(second)
        put(a, ACME, doc(("k",), "1", {}, text="refund approved", vec=unit(1, 0)), model="m")
        assert [
            c.score > 0 for c in b.document_candidates(ACME, DocumentQuery(), text="refund").lexical
        ] == [True]
        put(b, ACME, doc(("k",), "2", {}, text="refund denied", vec=unit(0, 1)), model="m")
        found = a.document_candidates(
            ACME, DocumentQuery(), text="refund", vector=unit(0, 1), model="m"
        )
        assert len(found.lexical) == 2 and found.vector[0].score == pytest.approx(1.0)
        put(b, ACME, doc(("k",), "1", None))
        assert len(a.document_candidates(ACME, DocumentQuery(), text="refund").lexical) == 1
    finally:
        first.close()
        second.close()
