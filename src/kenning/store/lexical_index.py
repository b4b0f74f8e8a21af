"""In-memory BM25 over one tenant's records (scored exactly like FTS5's ``bm25()``).

Postings grow append-only in compact typed arrays and become numpy arrays when a term is first
queried after it changed. Scoring a query touches only the postings of its terms, so a
tenant-wide query over 100k records costs about a millisecond, where FTS5 has to run its
``bm25()`` callback once per matching row.

Statistics (row count, document frequency, average length) are the tenant's own: another
tenant's data never moves a score. Removed rows (erased records) drop out of the statistics at
once: document frequencies are counted over live rows, so scores equal those of an index built
without them. A row may have no document (a record's sentence unit: the record's whole text is
its document, on another row); it never matches and counts in no statistic.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.store.replies import QUESTION_TERM_WEIGHT
from kenning.text import stem, words

__all__ = ["BM25_B", "BM25_K1", "LABEL_WEIGHT", "LexicalIndex"]

BM25_K1 = 1.2
BM25_B = 0.75
LABEL_WEIGHT = 0.5
_GROUP_MEMO = 8  # selections whose group statistics are kept (searches use one or two)

_GroupStats = tuple["npt.NDArray[np.bool_] | None", int, "npt.NDArray[np.float64]"]
_Pair = tuple["npt.NDArray[np.int32]", "npt.NDArray[np.float32]"]


class _Postings:
    __slots__ = ("base", "docs", "frozen", "tf")

    def __init__(self, base: _Pair | None = None) -> None:
        # Postings read from a snapshot (views of its mapping, never written), then those
        # appended since.
        self.base = base
        self.docs = array("i")
        self.tf = array("f")
        self.frozen: _Pair | None = base

    def __len__(self) -> int:
        return len(self.docs) + (0 if self.base is None else self.base[0].size)

    def arrays(self) -> _Pair:
        """The postings as numpy arrays, refreshed after rows were added.

        Readers share a partition (searches on several threads, e.g. a query and the time it
        names): the pair is built whole and published in one assignment, so no reader sees
        new documents with old term frequencies.
        """
        frozen = self.frozen
        if frozen is None or frozen[0].size != len(self):
            docs = np.frombuffer(self.docs, dtype=np.int32)
            tf = np.frombuffer(self.tf, dtype=np.float32)
            if self.base is None:
                frozen = (docs.copy(), tf.copy())
            else:
                frozen = (np.concatenate([self.base[0], docs]), np.concatenate([self.base[1], tf]))
            self.frozen = frozen
        return frozen


def _idf(count: int, df: int) -> float:
    idf = math.log((count - df + 0.5) / (df + 0.5))
    return idf if idf > 0 else 1e-6  # as FTS5 does for terms in more than half of the rows


class LexicalIndex:
    """BM25 postings of a partition's rows, addressed by row position.

    Scores are BM25 divided by the query's *ideal* score, the sum of its terms' IDF: the score
    of a row of average length that contains every query term once. 1.0 then means "matches
    the whole query", 0.3 "matches a rare third of it", whatever the query's length or the
    corpus — the calibration the weighted fusion needs.
    """

    def __init__(self) -> None:
        self._postings: dict[str, _Postings] = {}
        # A restored index's postings, end to end (views of a snapshot's mapping): each
        # term's start and end; a term gets its _Postings when first looked up.
        self._base_terms: dict[str, int] = {}
        self._base: tuple[list[int], npt.NDArray[np.int32], npt.NDArray[np.float32]] | None = None
        self._lengths = array("f")
        self._total_length = 0.0
        self._docless = array("b")  # per row: 1 when the row has no document
        self._textless = 0  # live rows without a document
        # Live rows; None while no row was ever removed (the common case pays nothing).
        self._alive: npt.NDArray[np.bool_] | None = None
        self._removed = 0
        # The index's state (rows, removed) with the rows' norms.
        self._norm_memo: tuple[tuple[int, int], npt.NDArray[np.float32]] | None = None
        # Per selection key: the index's state when computed, and the groups' statistics.
        self._group_memo: dict[Hashable, tuple[tuple[int, int, int], _GroupStats]] = {}

    def __len__(self) -> int:
        return len(self._lengths)

    def remove(self, rows: npt.NDArray[np.int64]) -> None:
        """Take rows (positions) out of every score and statistic; their postings stay as
        dead entries until the index is rebuilt."""
        if rows.size == 0:
            return
        alive = self._live_mask()
        rows = rows[alive[rows]]
        alive[rows] = False
        lengths = np.frombuffer(self._lengths, dtype=np.float32)
        self._total_length -= float(lengths[rows].sum())
        self._removed += int(rows.size)
        self._textless -= int(np.frombuffer(self._docless, dtype=np.int8)[rows].sum())

    def _documents(self) -> int:
        """Live rows with a document: the row count of the statistics."""
        return len(self._lengths) - self._removed - self._textless

    def _live_mask(self) -> npt.NDArray[np.bool_]:
        n = len(self._lengths)
        if self._alive is None:
            self._alive = np.ones(n, dtype=np.bool_)
        elif self._alive.size < n:
            grown = np.ones(n, dtype=np.bool_)
            grown[: self._alive.size] = self._alive
            self._alive = grown
        return self._alive

    def _posting(self, term: str) -> _Postings | None:
        """The term's postings (None: no row holds it)."""
        found = self._postings.get(term)
        if found is None and self._base is not None:
            at = self._base_terms.get(term)
            if at is not None:
                bounds, docs, tf = self._base
                part = slice(bounds[at], bounds[at + 1])
                # Readers may race here: each builds the same views, one assignment wins.
                found = self._postings[term] = _Postings((docs[part], tf[part]))
        return found

    def _live_postings(
        self, postings: _Postings
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        docs, tf = postings.arrays()
        if self._removed:
            keep = self._live_mask()[docs]
            docs, tf = docs[keep], tf[keep]
        return docs, tf

    def add(
        self,
        texts: Sequence[str | None],
        labels: Sequence[str],
        questions: Sequence[str | None] | None = None,
    ) -> None:
        """Append rows (in partition order) with their text and label, and for an answer the
        question it answers: each of its words the text lacks counts
        :data:`~kenning.store.replies.QUESTION_TERM_WEIGHT` of an occurrence (the row's length
        stays its own). A row whose text is None has no document."""
        start = len(self._lengths)
        asked = questions if questions is not None else [None] * len(texts)
        for offset, (text, label, question) in enumerate(zip(texts, labels, asked, strict=True)):
            row = start + offset
            if text is None:
                self._lengths.append(0.0)
                self._docless.append(1)
                self._textless += 1
                continue
            self._docless.append(0)
            counts: Counter[str] = Counter(stem(w) for w in words(text))
            label_words = [stem(w) for w in words(label)] if label else []
            weighted: dict[str, float] = dict(counts)
            for term in label_words:
                weighted[term] = weighted.get(term, 0.0) + LABEL_WEIGHT
            if question:
                for term in {stem(w) for w in words(question)} - counts.keys():
                    weighted[term] = weighted.get(term, 0.0) + QUESTION_TERM_WEIGHT
            for term, tf in weighted.items():
                postings = self._posting(term)
                if postings is None:
                    postings = self._postings[term] = _Postings()
                postings.docs.append(row)
                postings.tf.append(tf)
            length = float(sum(counts.values()) + len(label_words))
            self._lengths.append(length)
            self._total_length += length

    def saved(
        self, keep: npt.NDArray[np.intp] | None = None
    ) -> tuple[dict[str, object], dict[str, npt.NDArray[Any]]]:
        """The index as small values and arrays (:meth:`restored` reads them back): the
        postings of every term end to end, with each term's start. With *keep* (ascending
        rows), only those rows, renumbered in order, and only the terms they hold."""
        n = len(self._lengths)
        renumber = None
        if keep is not None:
            renumber = np.full(n, -1, dtype=np.int32)
            renumber[keep] = np.arange(keep.size, dtype=np.int32)
        terms, docs, tf = [], [], []
        for term in [*self._postings, *(t for t in self._base_terms if t not in self._postings)]:
            postings = self._posting(term)
            assert postings is not None
            rows, weights = postings.arrays()
            if renumber is not None:
                rows = renumber[rows]
                weights = weights[rows >= 0]
                rows = rows[rows >= 0]
                if rows.size == 0:
                    continue  # only removed rows held it: no trace of them is saved
            terms.append(term)
            docs.append(rows)
            tf.append(weights)
        starts = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum([d.size for d in docs], out=starts[1:])
        lengths = np.frombuffer(self._lengths, dtype=np.float32)
        docless = np.frombuffer(self._docless, dtype=np.int8)
        meta: dict[str, object] = {
            "terms": terms, "total_length": self._total_length,
            "textless": self._textless,
        }  # fmt: skip
        arrays: dict[str, npt.NDArray[Any]] = {
            "lex_starts": starts,
            "lex_docs": np.concatenate(docs) if docs else np.zeros(0, np.int32),
            "lex_tf": np.concatenate(tf) if tf else np.zeros(0, np.float32),
            "lex_lengths": lengths if keep is None else lengths[keep],
            "lex_docless": docless if keep is None else docless[keep],
        }
        return meta, arrays

    @classmethod
    def restored(cls, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> LexicalIndex:
        """The index :meth:`saved` describes."""
        index = cls()
        starts, docs, tf = arrays["lex_starts"], arrays["lex_docs"], arrays["lex_tf"]
        index._base = (starts.tolist(), docs, tf)
        index._base_terms = {term: i for i, term in enumerate(meta["terms"])}
        index._lengths.frombytes(arrays["lex_lengths"].tobytes())
        index._docless.frombytes(arrays["lex_docless"].tobytes())
        index._total_length = float(meta["total_length"])
        index._textless = int(meta["textless"])
        return index

    def group_scores(
        self,
        terms: Sequence[str],
        groups: npt.NDArray[np.int32],
        n_groups: int,
        rows: npt.NDArray[np.bool_] | None = None,
        *,
        key: Hashable | None = None,
    ) -> npt.NDArray[np.float32] | None:
        """BM25 of each group of rows taken as one document (e.g. a whole session).

        ``groups`` maps each row to its group (a row's group never changes); statistics are
        over the groups. With *rows* (a mask over row positions) a group's document holds
        only those rows. A *key* names the selection *rows* makes (e.g. "events only"): the
        groups' lengths are then kept for it until rows are added or removed.
        """
        n = len(self._lengths)
        if n == 0 or n_groups == 0:
            return None
        unique = list(dict.fromkeys(terms))
        found = [p.arrays() for p in map(self._posting, unique) if p is not None]
        if not found:
            return None
        keep, count, norm = self._group_stats(groups, n_groups, rows, key)
        # Every term at once: one term frequency per (term, group) cell.
        docs = np.concatenate([d for d, _ in found])
        tf = np.concatenate([t for _, t in found])
        term = np.repeat(np.arange(len(found)), [d.size for d, _ in found])
        if keep is not None:
            kept = keep[docs]
            docs, tf, term = docs[kept], tf[kept], term[kept]
        group_tf = np.bincount(
            term * n_groups + groups[docs], weights=tf, minlength=len(found) * n_groups
        ).reshape(len(found), n_groups)
        idfs = [_idf(count, int(df)) for df in np.count_nonzero(group_tf, axis=1).tolist()]
        ideal = 0.0
        matched = iter(idfs)
        for postings in map(self._posting, unique):
            ideal += _idf(count, 0) if postings is None else next(matched)
        # A cell without the term adds exactly 0 (norm > 0); terms are added one after the
        # other in float32, as a term-by-term loop would.
        parts = (np.asarray(idfs)[:, None] * group_tf * (BM25_K1 + 1) / (group_tf + norm)).astype(
            np.float32
        )
        out: npt.NDArray[np.float32] = parts[0].copy()
        for part in parts[1:]:
            out += part
        return out / np.float32(ideal)

    def _group_stats(
        self,
        groups: npt.NDArray[np.int32],
        n_groups: int,
        rows: npt.NDArray[np.bool_] | None,
        key: Hashable | None,
    ) -> _GroupStats:
        """The rows kept, the number of non-empty groups and each group's BM25 length norm."""
        state = (len(self._lengths), self._removed, n_groups)
        found = self._group_memo.get(key) if key is not None else None
        if found is not None and found[0] == state:
            return found[1]
        n = state[0]
        keep = self._live_mask()[:n] if self._removed else None
        if rows is not None:
            keep = rows[:n] if keep is None else keep & rows[:n]
        row_lengths = np.frombuffer(self._lengths, dtype=np.float32)
        if keep is not None:
            row_lengths = row_lengths * keep
        lengths = np.bincount(groups[:n], weights=row_lengths, minlength=n_groups)
        present = lengths > 0
        count = int(present.sum())
        average = float(lengths[present].mean()) if count else 1.0
        norm = np.asarray(BM25_K1 * (1 - BM25_B + BM25_B * lengths / average), dtype=np.float64)
        stats = (keep, count, norm)
        if key is not None:
            if len(self._group_memo) >= _GROUP_MEMO and key not in self._group_memo:
                self._group_memo.clear()
            # One assignment: a reader on another thread sees the old entry or the new one.
            self._group_memo[key] = (state, stats)
        return stats

    def _row_norm(self) -> npt.NDArray[np.float32]:
        """Each row's BM25 length norm, kept until rows are added or removed."""
        state = (len(self._lengths), self._removed)
        memo = self._norm_memo
        if memo is not None and memo[0] == state:
            return memo[1]
        lengths = np.frombuffer(self._lengths, dtype=np.float32)
        average = self._total_length / self._documents()
        norm = (BM25_K1 * (1 - BM25_B + BM25_B * lengths / average)).astype(np.float32)
        self._norm_memo = (state, norm)
        return norm

    def scores(self, terms: Sequence[str]) -> npt.NDArray[np.float32] | None:
        """Normalised BM25 of every row for the (stemmed) *terms*; None if nothing matches."""
        terms = tuple(dict.fromkeys(terms))
        n = len(self._lengths)
        live = self._documents()
        if live <= 0:
            return None
        norm: npt.NDArray[np.float32] | None = None
        out: npt.NDArray[np.float32] | None = None
        for term in terms:
            postings = self._posting(term)
            if postings is None:
                continue
            docs, tf = self._live_postings(postings)
            if docs.size == 0:
                continue
            idf = _idf(live, docs.size)
            if norm is None:
                norm = self._row_norm()
                out = np.zeros(n, dtype=np.float32)
            assert out is not None
            out[docs] += (idf * tf * (BM25_K1 + 1) / (tf + norm[docs])).astype(np.float32)
        if out is None:
            return None
        return out / np.float32(self.ideal(terms))

    def ideal(self, terms: Sequence[str]) -> float:
        """The BM25 score of an average-length row holding each of *terms* once: Σ IDF."""
        live = self._documents()
        total = 0.0
        for term in dict.fromkeys(terms):
            postings = self._posting(term)
            df = 0
            if postings is not None:
                df = self._live_postings(postings)[0].size if self._removed else len(postings)
            total += _idf(live, df)
        return total
