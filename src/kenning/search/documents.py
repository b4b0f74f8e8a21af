"""Namespaced documents as an application uses them: ranked search (kenning's fusion of BM25
and vector cosine, :mod:`kenning.search.fusion`, over the candidates a
:class:`~kenning.store.protocol.DocumentStore` gives), and :class:`Documents`, the embedded
implementation of :class:`kenning.api.DocumentsAPI` (the memory's clock and embedder over its
store), which the server's document routes serve too.

A document's score is the fused score of its best-matching index text in each signal, the
same weighted fusion (with the same weights) as a search over events; documents are not turns
of a session, so there is no session or partner lift. As for events, each signal proposes its
best ``FusionConfig.candidates`` documents (at least a page's worth). The documents neither
proposes (no index text sharing a word with the query and no vector, or beyond both signals'
best) follow the ranked ones, newest first, with no score.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kenning.embed.base import Embedder
from kenning.errors import InvalidInput
from kenning.records import Scope
from kenning.records.core import ModelInfo
from kenning.records.documents import (
    Document,
    DocumentQuery,
    DocumentWrite,
    IndexText,
    Namespace,
    NamespaceQuery,
    ScoredDocument,
    check_model,
    parse_document_filter,
)
from kenning.search.fusion import FusionConfig, fuse_scores
from kenning.store.protocol import DocumentStore

__all__ = [
    "MAX_DIMS",
    "Documents",
    "ScoredDocument",
    "float32_vectors",
    "search_documents",
    "unit_vectors",
]

Matrix = npt.NDArray[np.float32]
Vector = npt.NDArray[np.float32]
Condition = tuple[Literal["prefix", "suffix"], Namespace]

MAX_DIMS = 16_384
"""The most dimensions a document or query vector may have."""
# A vector whose length is this close to 1 is taken as it is.
_UNIT_TOLERANCE = 1e-3
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def search_documents(
    store: DocumentStore,
    scope: Scope,
    query: DocumentQuery,
    *,
    text: str,
    vector: npt.NDArray[np.float32] | None = None,
    model: str | None = None,
    fusion: FusionConfig | None = None,
    refresh_at: datetime | None = None,
) -> list[ScoredDocument]:
    """The page of *query*'s documents ranked for *text* (and its unit *vector* of *model*),
    best first, ties by id; *refresh_at* restarts the time to live of those returned.

    >>> from datetime import UTC, datetime
    >>> from kenning.store.records import DocumentWrite, IndexText
    >>> from kenning.store.sqlite.store import SQLiteStore
    >>> store = SQLiteStore(":memory:")
    >>> _ = store.put_documents(Scope("acme"), [
    ...     DocumentWrite(("notes",), "1", {"text": "refund approved"},
    ...                   texts=(IndexText("text", "refund approved"),)),
    ...     DocumentWrite(("notes",), "2", {"text": "shipping delayed"},
    ...                   texts=(IndexText("text", "shipping delayed"),)),
    ... ], at=datetime.now(UTC))
    >>> [(hit.document.key, hit.score)
    ...  for hit in search_documents(store, Scope("acme"), DocumentQuery(), text="refund")]
    [('1', 0.6), ('2', None)]
    """
    config = replace(fusion or FusionConfig(), session_weight=0.0, partner_weight=0.0)
    # Each signal proposes its best `candidates` (at least a page's worth), as for events.
    depth = max(config.candidates, query.offset + query.limit)
    with store.reading(scope):  # the candidates and the documents loaded agree
        found = store.document_candidates(
            scope, query, text=text, vector=vector, model=model, depth=depth
        )
        ranked = fuse_scores(found.lexical, found.vector, config=config).ranked
        order: list[tuple[str, float | None]] = [(f.id, f.score) for f in ranked]
        order += [(doc_id, None) for doc_id in found.rest]
        page = order[query.offset : query.offset + query.limit]
        loaded = store.documents_by_id(scope, [i for i, _ in page], refresh_at=refresh_at)
    docs = {d.id: d for d in loaded}
    # A document deleted since the candidates were read is left out of the page.
    return [ScoredDocument(docs[i], score) for i, score in page if i in docs]


def float32_vectors(rows: object, what: str) -> Matrix:
    """*rows* (a vector, or a list of them) as float32; InvalidInput unless they are numbers,
    finite and within float32's range."""
    wide = _wide(rows, what)
    return wide.astype(np.float32)


def _wide(rows: object, what: str) -> npt.NDArray[np.float64]:
    wide = _packed(rows)
    if wide is None:
        try:
            wide = np.asarray(rows, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{what}: vectors are lists of numbers of one length") from exc
    if not np.isfinite(wide).all():
        raise InvalidInput(f"{what}: a vector holds a number that is not finite")
    if wide.size and float(np.abs(wide).max()) > _FLOAT32_MAX:
        raise InvalidInput(f"{what}: a vector holds a number beyond float32's range")
    return wide


def _packed(rows: object) -> npt.NDArray[np.float64] | None:
    """*rows*, a list of lists of Python numbers of one length (what an embedding function
    returns), as float64: packed by :mod:`struct` in C, a third of the time numpy takes to
    read the numbers one by one. None for anything else (or a row struct refuses), which
    numpy converts or refuses."""
    if not isinstance(rows, list) or not rows or not all(type(r) is list for r in rows):
        return None
    width = len(rows[0])
    if not width or any(len(r) != width for r in rows):
        return None
    layout = struct.Struct(f"={width}d")
    try:
        packed = b"".join(layout.pack(*r) for r in rows)
    except (struct.error, TypeError, ValueError, OverflowError):
        return None
    return np.frombuffer(packed, dtype=np.float64).reshape(len(rows), width)


def unit_vectors(rows: object, dims: int | None, what: str) -> Matrix:
    """The vectors *rows* at unit length (a zero vector stays zero); InvalidInput unless each
    has the same number (*dims*, when given; at most :data:`MAX_DIMS`) of finite numbers
    within float32's range. *what* names where they came from."""
    matrix = _wide(rows, what)
    _check_shape(matrix, dims, what)
    return _normalized(matrix)


def _check_shape(matrix: npt.NDArray[np.float64], dims: int | None, what: str) -> None:
    if matrix.ndim != 2 or (dims is not None and matrix.shape[1] != dims):
        shape = "x".join(str(n) for n in matrix.shape)
        want = "vectors of one length" if dims is None else f"index dims is {dims}"
        raise InvalidInput(f"{what} returned vectors of shape {shape}; {want}")
    if not 0 < matrix.shape[1] <= MAX_DIMS:
        raise InvalidInput(f"{what} gave vectors of {matrix.shape[1]} dimensions: 1 to {MAX_DIMS}")


def _normalized(matrix: npt.NDArray[np.float64]) -> Matrix:
    # In float64, so squaring float32's largest numbers does not overflow.
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    out: Matrix = unit.astype(np.float32)
    return out


def _now() -> datetime:
    return datetime.now(UTC)


class Documents:
    """Namespaced documents of a memory, as :class:`kenning.api.DocumentsAPI` describes them:
    *store*'s documents at the memory's clock, texts and queries without vectors embedded
    with *embedder* (None: found by BM25 alone), ranked with *fusion*.

    >>> from kenning.store.sqlite.store import SQLiteStore
    >>> docs = Documents(SQLiteStore(":memory:"), embedder=None)
    >>> docs.put(Scope("acme"), [DocumentWrite(("notes",), "1", {"text": "refund approved"},
    ...                                        texts=(IndexText("text", "refund approved"),))])
    >>> [(hit.document.key, hit.score) for hit in docs.search(Scope("acme"), query="refund")]
    [('1', 0.6)]
    """

    def __init__(
        self, store: DocumentStore, *, embedder: Embedder | None,
        fusion: FusionConfig | None = None, clock: Callable[[], datetime] = _now,
    ) -> None:  # fmt: skip
        self._store = store
        self._embedder = embedder
        self._fusion = fusion or FusionConfig()
        self._clock = clock

    def embedding(self, scope: Scope) -> ModelInfo | None:
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        embedder = self._embedder
        return None if embedder is None else ModelInfo(embedder.model_id, embedder.dimension)

    def put(
        self, scope: Scope, writes: Sequence[DocumentWrite], *, model: str | None = None
    ) -> None:
        writes = list(writes)
        if not all(isinstance(w, DocumentWrite) for w in writes):
            raise InvalidInput("writes must be DocumentWrite records")
        given = [t.vector for w in writes for t in w.texts if t.vector is not None]
        if model is not None:
            if len(given) != sum(len(w.texts) for w in writes):
                raise InvalidInput("with a model, every text needs its vector")
            model, writes = self._given(writes, model)
        elif given:
            raise InvalidInput("vectors were given without the model they belong to")
        elif self._embedder is not None:
            model, writes = self._embedded(writes, self._embedder)
        self._store.put_documents(scope, writes, at=self._clock(), model=model)

    def _given(self, writes: list[DocumentWrite], model: str) -> tuple[str, list[DocumentWrite]]:
        """The writes with their vectors checked (one length, finite) and at unit length, and
        the model they are stored under (see :meth:`_named`)."""
        vectors = [t.vector for w in writes for t in w.texts]
        if not vectors:
            return check_model(model), writes
        dims = _unit_float32(vectors)
        if dims is not None:  # as a KenningStore's embeddings are: nothing to convert
            return self._named(model, dims), writes
        raw = _wide(np.stack(_rows(vectors)), "the given vectors")
        _check_shape(raw, None, "the given vectors")
        named = self._named(model, raw.shape[1])
        norms = np.linalg.norm(raw, axis=1)
        if np.all((np.abs(norms - 1) <= _UNIT_TOLERANCE) | (norms == 0)):
            return named, writes  # already unit length, as a KenningStore's embeddings are
        return named, _with_vectors(writes, _normalized(raw))

    def _named(self, model: str, dims: int) -> str:
        """The name vectors of *model* with *dims* dimensions are stored under: the model and
        its dims (``name/dims``; kept as is when it already ends so, or when it is the
        memory's own model with its dims), so vectors of one stored model all have one
        length, and given vectors never pass for the memory's own model's."""
        model = check_model(model)
        own = self._embedder
        if model.endswith(f"/{dims}") or (
            own is not None and model == own.model_id and dims == own.dimension
        ):
            return model
        return f"{model}/{dims}"

    def _embedded(
        self, writes: list[DocumentWrite], embedder: Embedder
    ) -> tuple[str | None, list[DocumentWrite]]:
        texts = list(dict.fromkeys(t.text for w in writes for t in w.texts))
        if not texts:
            return None, writes
        what = f"the embedder {embedder.model_id}"
        found = dict(zip(texts, unit_vectors(embedder.embed(texts), embedder.dimension, what),
                         strict=True))  # fmt: skip
        vectors = (found[t.text] for w in writes for t in w.texts)
        return embedder.model_id, _with_vectors(writes, vectors)

    def get(
        self, scope: Scope, keys: Sequence[tuple[Namespace, str]], *, refresh: bool = False,
        omit_expired: bool = False,
    ) -> list[Document | None]:  # fmt: skip
        now = self._clock()
        return self._store.get_documents(
            scope, list(keys), refresh_at=now if refresh else None,
            live_at=now if omit_expired else None,
        )  # fmt: skip

    def search(
        self, scope: Scope, prefix: Namespace = (), *, filter: Mapping[str, Any] | None = None,
        limit: int = 10, offset: int = 0, query: str | None = None,
        vector: Sequence[float] | Vector | None = None, model: str | None = None,
        refresh: bool = False, omit_expired: bool = False,
    ) -> list[ScoredDocument]:  # fmt: skip
        now = self._clock()
        wanted = DocumentQuery(
            prefix=tuple(prefix), filter=parse_document_filter(filter), limit=limit,
            offset=offset, live_at=now if omit_expired else None,
        )  # fmt: skip
        refresh_at = now if refresh else None
        if (vector is None) != (model is None):
            raise InvalidInput("a query vector and its model are given together, or neither")
        if query is not None and not isinstance(query, str):
            raise InvalidInput("query must be a string")
        if not (query and query.strip()):
            docs = self._store.find_documents(scope, wanted, refresh_at=refresh_at)
            return [ScoredDocument(doc, None) for doc in docs]
        found, named = self._query_vector(query, vector, model)
        return search_documents(
            self._store, scope, wanted, text=query, vector=found, model=named,
            fusion=self._fusion, refresh_at=refresh_at,
        )  # fmt: skip

    def _query_vector(
        self, query: str, vector: Sequence[float] | Vector | None, model: str | None
    ) -> tuple[Vector | None, str | None]:
        if vector is not None and model is not None:
            unit = unit_vectors([vector], None, "the query vector")[0]
            return unit, self._named(model, unit.shape[0])
        embedder = self._embedder
        if embedder is None:
            return None, None
        what = f"the embedder {embedder.model_id}"
        return unit_vectors(embedder.embed([query]), embedder.dimension, what)[0], embedder.model_id

    def namespaces(
        self, scope: Scope, *, conditions: Iterable[Condition] = (), max_depth: int | None = None,
        limit: int = 100, offset: int = 0, omit_expired: bool = False,
    ) -> list[Namespace]:  # fmt: skip
        query = NamespaceQuery(
            conditions=conditions, max_depth=max_depth, limit=limit, offset=offset,
            live_at=self._clock() if omit_expired else None,
        )  # fmt: skip
        return self._store.document_namespaces(scope, query)

    def sweep(self, tenant: str) -> int:
        return self._store.sweep_documents(tenant, now=self._clock())


def _rows(vectors: Sequence[Vector | None]) -> list[Vector]:
    rows = [np.asarray(v) for v in vectors if v is not None]
    if len({r.shape for r in rows}) > 1 or any(r.ndim != 1 for r in rows):
        raise InvalidInput("the given vectors must all have the same number of dimensions")
    return rows


def _unit_float32(vectors: Sequence[Vector | None]) -> int | None:
    """The dimensions of *vectors* when each is a float32 array of one length whose numbers
    are finite (so within float32's range) and whose length is 1; None when any is not (the
    full check converts them to float64 and normalises them)."""
    if not all(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in vectors):
        return None
    shapes = {v.shape for v in vectors if v is not None}
    if len(shapes) != 1:
        return None
    [shape] = shapes
    if len(shape) != 1 or not 0 < shape[0] <= MAX_DIMS:
        return None
    matrix = np.stack([v for v in vectors if v is not None])
    if not np.isfinite(matrix).all():
        return None
    # Zero vectors, and sums of squares out of float32's range, take the float64 path.
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(matrix, axis=1)
    return int(shape[0]) if bool(np.all(np.abs(norms - 1) <= _UNIT_TOLERANCE)) else None


def _with_vectors(
    writes: Sequence[DocumentWrite], vectors: Iterable[Vector]
) -> list[DocumentWrite]:
    """*writes* with their texts' vectors replaced by *vectors*, in order."""
    it = iter(vectors)
    return [
        w if not w.texts else replace(
            w, texts=tuple(IndexText(t.path, t.text, next(it)) for t in w.texts)
        )
        for w in writes
    ]  # fmt: skip
