"""One tenant's namespaced documents as a ranked search scores them: BM25 over their index
texts (:class:`~kenning.store.lexical_index.LexicalIndex`, the same scoring as events) and the
texts' vectors, built from the stored rows of one version of the tenant's documents.

A document found by several texts (several fields, or each element of a list) scores the best
of them in each signal, as LangGraph's stores pool a document's vectors. Statistics are the
tenant's own: another tenant's documents never move a score. Documents are kept in namespace
order, so the documents under a prefix are one contiguous span of them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput
from kenning.records.documents import Namespace, prefix_range
from kenning.store.lexical_index import LexicalIndex
from kenning.store.records import Candidate
from kenning.text import query_terms, stem

__all__ = ["DocumentIndex", "IndexRow", "vector_bytes"]

_KIND = "document"
_ID, _SCORE = attrgetter("id"), attrgetter("score")
Mask = npt.NDArray[np.bool_]


def vector_bytes(vector: npt.NDArray[np.float32] | None) -> bytes | None:
    """A stored vector: its float32 values as bytes (None stays None)."""
    return None if vector is None else np.ascontiguousarray(vector, dtype=np.float32).tobytes()


class IndexRow(NamedTuple):
    """One stored row: a document (id, stored namespace, last update in epoch seconds) with
    one of its texts and that text's vector (both None for a document without texts)."""

    document: str
    namespace: str
    updated: float
    text: str | None
    vector: bytes | None


class DocumentIndex:
    """Every document of a tenant as of *version*, with the BM25 postings and vectors of their
    texts. *rows* come in namespace order (a document's rows together). Built once, then
    only read: searches on several threads share it."""

    def __init__(self, version: int, rows: Sequence[IndexRow]) -> None:
        self.version = version
        self._ids: list[str] = []
        self._namespaces: list[str] = []
        updated: list[float] = []
        position: dict[str, int] = {}
        row_doc = np.empty(len(rows), dtype=np.int32)
        for n, row in enumerate(rows):
            found = position.get(row.document)
            if found is None:
                found = position[row.document] = len(self._ids)
                self._ids.append(row.document)
                self._namespaces.append(row.namespace)
                updated.append(row.updated)
            row_doc[n] = found
        self._position = position
        self._updated = np.asarray(updated, dtype=np.float64)
        self._lexical = LexicalIndex()
        self._lexical.add([row.text for row in rows], [""] * len(rows))
        self._row_doc = row_doc
        with_vec = [n for n, row in enumerate(rows) if row.vector is not None]
        self._vec_doc = row_doc[np.asarray(with_vec, dtype=np.int64)]
        self._matrix = (
            np.stack([np.frombuffer(rows[n].vector or b"", dtype=np.float32) for n in with_vec])
            if with_vec
            else np.zeros((0, 0), dtype=np.float32)
        )

    def under(self, prefix: Namespace) -> Mask:
        """The documents in *prefix* or below it."""
        out = np.zeros(len(self._ids), dtype=np.bool_)
        bounds = prefix_range(prefix)
        if bounds is None:
            out[:] = True
        else:
            out[
                bisect_left(self._namespaces, bounds[0]) : bisect_left(self._namespaces, bounds[1])
            ] = True
        return out

    def among(self, ids: Iterable[str]) -> Mask:
        """The documents among *ids* (ids this version does not hold are left out)."""
        out = np.zeros(len(self._ids), dtype=np.bool_)
        position = self._position
        out[[position[i] for i in ids if i in position]] = True
        return out

    def candidates(
        self, text: str, vector: npt.NDArray[np.float32] | None, docs: Mask, depth: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        """The documents of *docs* that the best *depth* of either signal proposes, each
        scored in every signal it has a score in: BM25 of its best text sharing a word with
        *text* (over the query's ideal score, as events are scored), and cosine of its best
        text's vector to the unit *vector*. Best first, ties by id."""
        lexical = self._lexical_best(text, docs)
        nearest = None if vector is None else self._nearest_best(vector, docs)
        chosen = np.zeros(len(self._ids), dtype=np.bool_)
        for best in (lexical, nearest):
            if best is not None:
                chosen[self._top(best, depth)] = True
        return self._listed(lexical, chosen), self._listed(nearest, chosen)

    def _lexical_best(self, text: str, docs: Mask) -> npt.NDArray[np.float64] | None:
        terms = [stem(w) for w in query_terms(text)]
        scores = self._lexical.scores(terms) if terms and len(self._row_doc) else None
        if scores is None:
            return None
        rows = np.flatnonzero(scores > 0)
        return self._per_document(self._row_doc[rows], scores[rows], docs)

    def _nearest_best(
        self, vector: npt.NDArray[np.float32], docs: Mask
    ) -> npt.NDArray[np.float64] | None:
        if not self._vec_doc.size:
            return None
        if vector.shape != (self._matrix.shape[1],):
            raise InvalidInput(
                f"the query vector has {vector.size} dimensions, the stored ones "
                f"{self._matrix.shape[1]}: search with the model the documents were indexed with"
            )
        rows = np.flatnonzero(docs[self._vec_doc])
        if not rows.size:
            return None
        first, last = int(rows[0]), int(rows[-1]) + 1
        if last - first == rows.size:  # a namespace's rows are contiguous: a view, no copy
            scores = self._matrix[first:last] @ vector
        elif rows.size * 3 < self._vec_doc.size:  # few rows: gathering them is cheaper
            scores = self._matrix[rows] @ vector
        else:
            scores = (self._matrix @ vector)[rows]
        return self._per_document(self._vec_doc[rows], scores, docs)

    def _per_document(
        self, owner: npt.NDArray[np.int32], scores: npt.NDArray[np.float32], docs: Mask
    ) -> npt.NDArray[np.float64]:
        """Each document of *docs*'s best score among its rows (-inf: none)."""
        keep = docs[owner]
        best = np.full(len(self._ids), -np.inf, dtype=np.float64)
        np.maximum.at(best, owner[keep], scores[keep].astype(np.float64))
        return best

    @staticmethod
    def _top(best: npt.NDArray[np.float64], depth: int) -> npt.NDArray[np.intp]:
        """The documents with the *depth* best scores (all those tied with the last one)."""
        found = np.flatnonzero(best > -np.inf)
        if found.size > depth:
            cut = np.partition(best[found], found.size - depth)[found.size - depth]
            found = found[best[found] >= cut]
        return found

    def _listed(self, best: npt.NDArray[np.float64] | None, chosen: Mask) -> list[Candidate]:
        if best is None:
            return []
        ids = self._ids
        found = np.flatnonzero(chosen & (best > -np.inf))
        out = [Candidate(ids[p], float(best[p]), None, _KIND) for p in found.tolist()]
        out.sort(key=_ID)
        out.sort(key=_SCORE, reverse=True)
        return out

    def rest(self, docs: Mask, ranked: Iterable[str]) -> list[str]:
        """The documents of *docs* not in *ranked*, most recently updated first (ties by id)."""
        left = docs.copy()
        position = self._position
        left[[position[i] for i in ranked if i in position]] = False
        found = np.flatnonzero(left)
        ids = self._ids
        order = sorted(found.tolist(), key=lambda p: ids[p])
        order.sort(key=lambda p: -self._updated[p])
        return [ids[p] for p in order]
