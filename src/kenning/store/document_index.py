"""One tenant's namespaced documents as a ranked search scores them: BM25 over their index
texts (:class:`~kenning.store.lexical_index.LexicalIndex`, the same scoring as events) and the
texts' vectors, built from the stored rows of one version of the tenant's documents.

A document found by several texts (several fields, or each element of a list) scores the best
of them in each signal, as LangGraph's stores pool a document's vectors. Statistics are the
tenant's own: another tenant's documents never move a score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput
from kenning.store.lexical_index import LexicalIndex
from kenning.store.records import Candidate
from kenning.text import query_terms, stem

__all__ = ["DocumentIndex", "vector_bytes"]

_KIND = "document"


def vector_bytes(vector: npt.NDArray[np.float32] | None) -> bytes | None:
    """A stored vector: its float32 values as bytes (None stays None)."""
    return None if vector is None else np.ascontiguousarray(vector, dtype=np.float32).tobytes()


class DocumentIndex:
    """BM25 postings and vectors of a tenant's index texts, as of *version*.

    *rows* are ``(document id, text, vector bytes or None)``. Built once, then only read:
    searches on several threads share it.
    """

    def __init__(self, version: int, rows: Sequence[tuple[str, str, bytes | None]]) -> None:
        self.version = version
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        row_doc = np.empty(len(rows), dtype=np.int32)
        for n, (doc, _, _) in enumerate(rows):
            found = self._position.get(doc)
            if found is None:
                found = self._position[doc] = len(self._ids)
                self._ids.append(doc)
            row_doc[n] = found
        self._row_doc = row_doc
        self._lexical = LexicalIndex()
        self._lexical.add([text for _, text, _ in rows], [""] * len(rows))
        with_vec = [n for n, (_, _, vec) in enumerate(rows) if vec is not None]
        self._vec_rows = np.asarray(with_vec, dtype=np.int64)
        self._matrix = (
            np.stack([np.frombuffer(rows[n][2] or b"", dtype=np.float32) for n in with_vec])
            if with_vec
            else np.zeros((0, 0), dtype=np.float32)
        )

    def __contains__(self, doc: str) -> bool:
        return doc in self._position

    def mask(self, ids: Iterable[str]) -> npt.NDArray[np.bool_]:
        """The documents among *ids* (those without index texts are not here)."""
        out = np.zeros(len(self._ids), dtype=np.bool_)
        position = self._position
        out[[position[i] for i in ids if i in position]] = True
        return out

    def lexical(self, text: str, docs: npt.NDArray[np.bool_]) -> list[Candidate]:
        """The documents of *docs* sharing a word with *text*, by their best text's BM25
        (over the query's ideal score, as events are scored)."""
        terms = [stem(w) for w in query_terms(text)]
        if not terms or not len(self._row_doc):
            return []
        scores = self._lexical.scores(terms)
        if scores is None:
            return []
        rows = np.flatnonzero(scores > 0)
        return self._best(rows, scores[rows], docs)

    def nearest(
        self, vector: npt.NDArray[np.float32], docs: npt.NDArray[np.bool_]
    ) -> list[Candidate]:
        """Every document of *docs* with a vector, by its best text's cosine to the unit
        *vector* (the stored vectors are unit length)."""
        if not self._vec_rows.size:
            return []
        if vector.shape != (self._matrix.shape[1],):
            raise InvalidInput(
                f"the query vector has {vector.size} dimensions, the stored ones "
                f"{self._matrix.shape[1]}: search with the model the documents were indexed with"
            )
        return self._best(self._vec_rows, self._matrix @ vector, docs)

    def _best(
        self, rows: npt.NDArray[np.int64], scores: npt.NDArray[np.float32],
        docs: npt.NDArray[np.bool_],
    ) -> list[Candidate]:  # fmt: skip
        """Each selected document's best score among *rows*, best first (ties by id)."""
        owner = self._row_doc[rows]
        keep = docs[owner]
        owner, scores = owner[keep], scores[keep]
        if not owner.size:
            return []
        best = np.full(len(self._ids), -np.inf, dtype=np.float64)
        np.maximum.at(best, owner, scores.astype(np.float64))
        found = np.flatnonzero(best > -np.inf)
        ids = self._ids
        out = [Candidate(ids[p], float(best[p]), None, _KIND) for p in found.tolist()]
        out.sort(key=lambda c: c.id)
        out.sort(key=lambda c: c.score, reverse=True)
        return out
