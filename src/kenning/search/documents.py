"""Ranked search over namespaced documents: kenning's fusion of BM25 and vector cosine
(:mod:`kenning.search.fusion`) over the candidates a
:class:`~kenning.store.protocol.DocumentStore` gives.

A document's score is the fused score of its best-matching index text in each signal, the
same weighted fusion (with the same weights) as a search over events; documents are not turns
of a session, so there is no session or partner lift. As for events, each signal proposes its
best ``FusionConfig.candidates`` documents (at least a page's worth). The documents neither
proposes (no index text sharing a word with the query and no vector, or beyond both signals'
best) follow the ranked ones, newest first, with no score.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from kenning.records import Scope
from kenning.records.documents import Document, DocumentQuery
from kenning.search.fusion import FusionConfig, fuse_scores
from kenning.store.protocol import DocumentStore

__all__ = ["ScoredDocument", "search_documents"]


class ScoredDocument(NamedTuple):
    """A document found by a ranked search, with its fused score (None: not ranked)."""

    document: Document
    score: float | None


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
