"""Namespaced documents over HTTP (``/v1/documents``, ``client.documents``): a real server on
loopback over a real SQLite file with the real MiniLM model. The tenant is always the key's:
another tenant's key sees nothing, and a store for another tenant than its key's is refused.
A read key reads and cannot write (403). Hostile bodies answer 422 and store nothing, and
vectors a client sends never pass for another model's (or another length's), so no search
afterwards can fail. The LangGraph store tests also run through the client
(``tests/integration/test_langgraph_store.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
import pytest

from kenning import AsyncClient, Client, Forbidden, InvalidInput, InvalidScope, Memory, Scope
from kenning.integrations.langgraph import KenningStore
from kenning.records.documents import DocumentQuery, NamespaceQuery
from kenning.store.records import DocumentWrite, IndexText, ModelInfo
from tests.conftest import MemoEmbedder
from tests.served import Served, serve

ACME = Scope("acme")


@pytest.fixture
def served(tmp_path: Path, real_embedder: MemoEmbedder) -> Iterator[Served]:
    with Memory.open(tmp_path / "docs.db", embedder=real_embedder) as memory, serve(memory) as s:
        yield s


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def _deep_text(levels: int) -> str:
    return '{"a":' * levels + '"x"' + "}" * levels


def _stored(memory: Memory, tenant: str = "acme") -> list[tuple[tuple[str, ...], str]]:
    found = memory.documents.find_documents(Scope(tenant), DocumentQuery(limit=1_000))
    return sorted((doc.namespace, doc.key) for doc in found)


def _store(served: Served, tenant: str, key: str | None = None, **options: Any) -> KenningStore:
    client = Client(served.url, api_key=key or served.key(tenant))
    return KenningStore(client, tenant=tenant, own_memory=True, **options)


def test_another_tenants_key_sees_nothing_of_the_documents(served: Served) -> None:
    with _store(served, "acme", user_at=1) as acme, _store(served, "globex") as globex:
        acme.put(("memories", "dana"), "k", {"text": "the refund RF-7781 was approved"})
        assert globex.get(("memories", "dana"), "k") is None
        assert globex.search(()) == [] and globex.search((), query="refund RF-7781") == []
        assert globex.list_namespaces() == [] and globex.sweep_ttl() == 0
        globex.put(("memories", "dana"), "k", {"text": "globex's own"})
        globex.memory.forget(Scope("globex"))  # erases globex's, not acme's
        assert globex.search(()) == []
        item = acme.get(("memories", "dana"), "k")
        assert item is not None and item.value == {"text": "the refund RF-7781 was approved"}
    # The tenant is the key's: a body cannot name another one.
    r = httpx.post(f"{served.url}/v1/documents/search", json={"tenant": "acme"},
                   headers=_auth(served.key("globex")))  # fmt: skip
    assert r.status_code == 422 and "tenant" in r.json()["error"]["message"]
    assert _stored(served.memory, "globex") == []
    assert _stored(served.memory) == [(("memories", "dana"), "k")]


def test_served_stats_count_the_documents(served: Served) -> None:
    with _store(served, "acme", user_at=1) as acme:
        acme.put(("memories", "dana"), "a", {"text": "one"})
        acme.put(("memories", "dana"), "b", {"text": "two"})
        acme.put(("memories", "lee"), "c", {"text": "three"})
        client = acme.memory
        assert isinstance(client, Client)
        assert client.retention.stats(ACME).documents == 3
        assert client.retention.stats(Scope("acme", "dana")).documents == 2


def test_a_store_for_another_tenant_than_its_keys_is_refused(served: Served) -> None:
    key = served.key("acme")
    with pytest.raises(InvalidScope, match="belongs to tenant 'acme', not 'globex'"):
        _store(served, "globex", key)
    with Client(served.url, api_key=key) as client, pytest.raises(InvalidScope):
        client.documents.get(Scope("globex"), [(("n",), "k")])


def test_a_read_key_reads_and_cannot_write(served: Served) -> None:
    read = served.key("acme", ("read",))
    with _store(served, "acme") as writer, _store(served, "acme", read) as reader:
        writer.put(("notes",), "1", {"text": "refund approved"}, ttl=60)
        assert reader.get(("notes",), "1") is not None
        assert [i.key for i in reader.search(("notes",), query="refund")] == ["1"]
        assert reader.list_namespaces() == [("notes",)]
        for write in (lambda: reader.put(("notes",), "2", {"text": "x"}),
                      lambda: reader.delete(("notes",), "1"), reader.sweep_ttl):  # fmt: skip
            with pytest.raises(Forbidden):
                write()
    body = '{"writes": [{"namespace": ["notes"], "key": "3", "value": {"text": "x"}}]}'
    r = httpx.post(f"{served.url}/v1/documents", content=body, headers=_auth(read))
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert _stored(served.memory) == [(("notes",), "1")]


def _write(value: str, *, key: str = '"k"', namespace: str = '["n"]', extra: str = "") -> str:
    return f'{{"writes": [{{"namespace": {namespace}, "key": {key}, "value": {value}{extra}}}]}}'


def _text(text: str, vector: str = "null") -> str:
    return f', "texts": [{{"path": "text", "text": {text}, "vector": {vector}}}]'


BAD = [
    ("", _write(_deep_text(65))),
    ("", _write(_deep_text(5_000))),
    ("", _write('{"a": "\\ud800"}')),
    ("", _write('{"a\\udc00": 1}')),
    ("", _write('{"a": "\\u0000"}')),
    ("", _write('{"a": 1e999}')),
    ("", _write('{"a": NaN}')),
    ("", _write("[1, 2]")),
    ("", _write('"text"')),
    ("", _write("{}", key='"k\\ud800"')),
    ("", _write("{}", namespace='["n\\ud800"]')),
    ("", _write("{}", namespace='["a\\u001fb"]')),
    ("", _write("{}", namespace="[]")),
    ("", _write("{}", namespace="[" + ", ".join(['"x"'] * 33) + "]")),
    ("", _write("{}", key='"' + "k" * 2_000 + '"')),
    ("", _write("{}", extra=', "ttl_minutes": -1')),
    ("", _write("{}", extra=_text('"x\\ud800"'))),
    ("", _write("{}", extra=_text('"x"', "[1.0, NaN]"))),
    ("", _write("{}", extra=_text('"x"', "[" + ", ".join(["0.5"] * 20_000) + "]"))),
    ("", _write("{}", extra=_text('"x"', "[1e300, 0.0]")) + ', "model": "m"'),  # not a float32
    ("", _write("{}", extra=_text('"x"', "[1.0, 0.0]"))),  # a vector without its model
    ("", _write("{}", extra=_text('"x"')) + ', "model": "m"'),  # a model, a text without one
    ("", _write("{}", extra=', "user": "not a valid id!"')),
    ("", '{"writes": [{"namespace": ["n"], "key": "a", "value": {}' + _text('"x"', "[1, 0]")
     + '}, {"namespace": ["n"], "key": "b", "value": {}' + _text('"y"', "[1, 0, 0]")
     + '}], "model": "m"}'),
    ("", '{"writes": [], "model": "m"}'),
    ("", '{"writes": [{"namespace": ["n"], "key": "k", "value": {}}], "model": "m\\u0000"}'),
    ("", '{"writes": [{"namespace": ["n"], "key": "k", "value": {}}], "tenant": "globex"}'),
    ("/search", '{"filter": ' + _deep_text(65) + "}"),
    ("/search", '{"filter": {"a": {"$in": [1]}}}'),
    ("/search", '{"filter": {"a.": 1}}'),
    ("/search", '{"query": "refund\\ud800"}'),
    ("/search", '{"query": "refund", "vector": [1.0, NaN], "model": "m"}'),
    ("/search", '{"query": "refund", "vector": [1.0, 0.0]}'),
    ("/search", '{"query": "refund", "vector": [-1e39, 0.0], "model": "m"}'),
    ("/search", '{"limit": 10001}'),
    ("/search", '{"prefix": ["a\\u001f"]}'),
    ("/get", '{"keys": [{"namespace": [], "key": "k"}]}'),
    ("/get", '{"keys": [{"namespace": ["n"], "key": "k\\u0000"}]}'),
    ("/namespaces", '{"conditions": [{"match_type": "infix", "path": ["a"]}]}'),
    ("/namespaces", '{"max_depth": 0}'),
]  # fmt: skip


def test_hostile_bodies_answer_422_and_store_nothing(served: Served) -> None:
    key = served.key("acme")
    for path, body in BAD:
        r = httpx.post(f"{served.url}/v1/documents{path}", content=body.encode(),
                       headers=_auth(key))  # fmt: skip
        assert r.status_code == 422, (path, body[:120], r.status_code, r.text[:300])
        error = r.json()["error"]
        assert error["code"] in ("invalid_input", "invalid_filter"), error
        assert "Traceback" not in r.text
    assert _stored(served.memory) == []
    assert served.memory.documents.document_namespaces(ACME, NamespaceQuery()) == []
    # The server is fine and the same write, made valid, is stored.
    r = httpx.post(f"{served.url}/v1/documents", content=_write('{"a": 1}').encode(),
                   headers=_auth(key))  # fmt: skip
    assert r.status_code == 200 and _stored(served.memory) == [(("n",), "k")]


def test_given_vectors_never_pass_for_another_model_or_length(served: Served) -> None:
    minilm = served.memory.embedder
    assert minilm is not None
    acme, globex = served.key("acme"), served.key("globex")
    note = DocumentWrite(("n",), "a", {"text": "refund approved"},
                         texts=(IndexText("text", "refund approved"),))  # fmt: skip

    def given(key: str, dims: int, fill: float = 1.0) -> DocumentWrite:
        return DocumentWrite(("n",), key, {"text": "x"},
                             texts=(IndexText("text", "x", _vector(dims, fill)),))  # fmt: skip

    with Client(served.url, api_key=acme) as client:
        docs = client.documents
        assert docs.embedding(ACME) == ModelInfo(minilm.model_id, minilm.dimension)
        docs.put(ACME, [note])  # embedded by the server's model
        with pytest.raises(InvalidInput, match="mixing models"):
            docs.put(ACME, [given("b", minilm.dimension, 0.0)], model=minilm.model_id + "x")
        with pytest.raises(InvalidInput, match="mixing models"):
            docs.put(ACME, [given("b", 3)], model=minilm.model_id)  # named, but 3 dims
        with pytest.raises(InvalidInput):
            docs.search(ACME, query="refund", vector=[1.0, 0.0, 0.0], model=minilm.model_id)
        [hit] = docs.search(ACME, query="refund")
        assert hit.document.key == "a" and hit.score is not None and hit.score > 0.6
    with Client(served.url, api_key=globex) as client:
        docs, scope = client.documents, Scope("globex")
        docs.put(scope, [given("a", 3, 2.0)], model="mine")  # stored as mine/3, unit length
        with pytest.raises(InvalidInput, match="mixing models"):
            docs.put(scope, [given("b", 4)], model="mine")
        with pytest.raises(InvalidInput):
            docs.search(scope, query="x", vector=[1.0, 0.0, 0.0, 0.0], model="mine")
        [hit] = docs.search(scope, query="y", vector=[3.0, 3.0, 3.0], model="mine")
        assert hit.score == pytest.approx(0.4, abs=1e-3)  # cosine 1, BM25 none: 0.4 fused
    assert _stored(served.memory) == [(("n",), "a")]


def _vector(dims: int, fill: float) -> npt.NDArray[np.float32]:
    return np.full(dims, fill, dtype=np.float32)


def test_the_async_client_has_the_same_documents(served: Served) -> None:
    key = served.key("acme")
    note = DocumentWrite(("notes",), "1", {"text": "refund approved"}, ttl_minutes=5,
                         texts=(IndexText("text", "refund approved"),))  # fmt: skip

    async def run() -> None:
        async with AsyncClient(served.url, api_key=key) as client:
            docs = client.documents
            await docs.put(ACME, [note])
            [hit] = await docs.search(ACME, ("notes",), query="refund", refresh=True)
            assert hit.document.key == "1" and hit.score is not None
            [doc] = await docs.get(ACME, [(("notes",), "1")], omit_expired=True)
            assert doc is not None and doc.value == {"text": "refund approved"}
            assert doc.expires_at is not None and doc.ttl_minutes == 5
            assert await docs.namespaces(ACME, conditions=[("prefix", ("*",))]) == [("notes",)]
            assert await docs.sweep("acme") == 0
            await docs.put(ACME, [DocumentWrite(("notes",), "1", None)])
            assert await docs.get(ACME, [(("notes",), "1")]) == [None]
            with pytest.raises(InvalidScope):
                await docs.get(Scope("globex"), [(("notes",), "1")])

    asyncio.run(run())
