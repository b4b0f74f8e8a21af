"""In-memory search partitions: one per tenant, holding its vectors and its BM25 postings.

Partitioning by tenant means a query only ever scores its own tenant's records; narrower scopes
and filters become a row mask applied *before* ranking, never to a ranked, cut list. Vectors
are searched exactly (float32 matrix product) unless the partition is large: then an HNSW graph
(:mod:`kenning.store.ann`), built in the background while exact search serves, answers queries
whose mask selects a large share of the rows, with the mask applied inside the graph search.
The graph holds each distinct vector once; a node found stands for all of its rows.

A partition follows its database by delta: new rows are appended (:meth:`Partition.add`) and
erased rows removed (:meth:`Partition.remove`) without a reload. Searches share a
reader-writer lock, so they run together while a change waits for them, and see it whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import repeat
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from kenning.store.ann import AnnConfig, HnswIndex, evenly_spaced, fingerprints
from kenning.store.graph_rows import F32, AnnStatus, GraphRows
from kenning.store.lexical_index import LexicalIndex
from kenning.store.records import Candidate, Position
from kenning.store.row_columns import Positions, RowIds, saved_ids, saved_positions
from kenning.store.rwlock import RWLock

__all__ = ["AnnStatus", "IndexRows", "Partition", "RowSelector", "listed_once"]

# Named tuples built from whole columns: tuple.__new__ is C, ``_make`` a Python call per row
# (the columns are zipped strictly, so every row has all the fields).
_new_tuple = tuple.__new__

_Scored = tuple[npt.NDArray[np.float32], npt.NDArray[np.intp]]
"""Scores of some partition rows, and those rows' positions."""


@dataclass(frozen=True, slots=True)
class IndexRows:
    """Rows to add to a partition: ids, vectors and the attributes masks are built from.

    A long record is indexed as several rows (its chunks), a record of several sentences as
    a row per sentence unit, with the same id and rowid, next to each other; a search returns
    the record once, with its best row's score. A row's text is its lexical document; a unit's
    is None but for the first unit's, which holds the record's whole text. ``weights``
    (default 1) scale a row's share of its session's centroid, so a record's rows count as one
    record.
    """

    ids: Sequence[str]
    rowids: npt.NDArray[np.int64]
    vectors: F32
    has_vector: npt.NDArray[np.bool_]
    texts: Sequence[str | None]
    labels: Sequence[str]
    users: Sequence[str | None]
    sessions: Sequence[str | None]
    roles: Sequence[str]
    kinds: Sequence[str]
    ats: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float32] | None = None
    # Per row, the rowid of the question its vector was mixed with (-1: none; see
    # kenning.store.replies), whose erasure makes the row stale, and that question's text.
    before: npt.NDArray[np.int64] | None = None
    questions: Sequence[str | None] | None = None
    # Per row, the turn's place in its conversation (None: not a turn of a session).
    positions: Sequence[Position | None] | None = None


@dataclass(frozen=True, slots=True)
class RowSelector:
    """Which rows of a partition may be scored. ``None`` fields do not constrain."""

    user: str | None = None
    session: str | None = None
    roles: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    rowids: npt.NDArray[np.int64] | None = None


class _Codes:
    """Interns strings to small ints so masks are vectorised comparisons."""

    def __init__(self) -> None:
        self._codes: dict[str | None, int] = {}
        self.values: list[str | None] = []

    def code(self, value: str | None) -> int:
        found = self._codes.get(value)
        if found is None:
            found = len(self._codes)
            self._codes[value] = found
            self.values.append(value)
        return found

    def lookup(self, value: str | None) -> int:
        return self._codes.get(value, -1)

    def covers(self, values: tuple[str, ...]) -> bool:
        """True if every interned value is among *values* (the constraint selects all rows)."""
        return set(self._codes) <= set(values)


# The per-row arrays a snapshot holds (the graph's, _row_node and _row_next, are remade).
_SAVED_ARRAYS = (
    "_matrix", "_has_vector", "_alive", "_weights", "_rowids", "_before", "_row_print",
    "_ats", "_users", "_sessions", "_roles", "_kinds",
)  # fmt: skip
_T = TypeVar("_T")
Arrays = dict[str, npt.NDArray[Any]]

# The per-row arrays of a partition, all grown together.
_ROW_ARRAYS = (
    "_matrix", "_has_vector", "_alive", "_weights", "_rowids", "_before", "_row_print",
    "_row_node", "_row_next", "_ats", "_users", "_sessions", "_roles", "_kinds",
)  # fmt: skip


class Partition(GraphRows):
    """Cosine over a growing float32 matrix (unit vectors) plus in-memory BM25.

    With an enabled *ann* config, :meth:`start_ann` lets the partition keep an HNSW index once
    it holds ``ann.min_rows`` vectors; *on_index* is called (from the building thread) each
    time a newly built or adopted index is ready, e.g. to persist it.
    """

    def __init__(
        self,
        dimension: int,
        *,
        ann: AnnConfig | None = None,
        on_index: Callable[[Partition], None] | None = None,
    ) -> None:
        self._dim = dimension
        self._init_graph(ann if ann is not None and ann.enabled and dimension else None, on_index)
        self._n = 0
        self._rw = RWLock()
        self._removed = 0
        self._alive = np.zeros(0, dtype=np.bool_)
        self._lexical = LexicalIndex()
        self._has_vector = np.zeros(0, dtype=np.bool_)
        self._vectorless = 0  # rows without a vector (removed rows among them)
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._file_rows = None
        # Sum of the row vectors of each kind in each session: a session's centroid direction,
        # kept by kind because a search for events in a tenant with facts leaves the facts
        # out of every session (a gather of per-kind sums, not a pass over the rows).
        self._session_sums = np.zeros((0, 0, dimension), dtype=np.float32)
        self._session_users: dict[int, int] = {}
        self._rowids = np.zeros(0, dtype=np.int64)
        self._before = np.zeros(0, dtype=np.int64)
        self._row_print = np.zeros(0, dtype=np.uint64)  # fingerprint of each row's vector
        self._row_node = np.zeros(0, dtype=np.int64)  # graph node of each row, -1: none
        self._row_next = np.zeros(0, dtype=np.int64)  # the next row of its node, -1: none
        self._ats = np.zeros(0, dtype=np.float64)
        self._users = np.zeros(0, dtype=np.int32)
        self._sessions = np.zeros(0, dtype=np.int32)
        self._roles = np.zeros(0, dtype=np.int16)
        self._kinds = np.zeros(0, dtype=np.int16)
        self._ids = RowIds()
        self._positions = Positions()
        self._weights = np.zeros(0, dtype=np.float32)
        self._shared_ids = False  # some record has several rows (chunks)
        self._user_codes = _Codes()
        self._session_codes = _Codes()
        self._role_codes = _Codes()
        self._kind_codes = _Codes()

    def __len__(self) -> int:
        """Live rows."""
        return self._n - self._removed

    @property
    def max_rowid(self) -> int:
        """The largest database rowid among live rows (0 when there is none)."""
        with self._rw.read():
            live = self._rowids[: self._n][self._alive[: self._n]]
            return int(live.max()) if live.size else 0

    @property
    def state(self) -> tuple[int, int, bool]:
        """Rows added and rows removed so far, and whether a graph is held: it moves whenever
        what is searched, or how, changes (a graph built after a snapshot was saved without
        one is saved at close, so the next process maps it instead of building it again)."""
        return self._n, self._removed, self._ann is not None

    def check_vectors(
        self, sample: int = 256, read: Callable[[npt.NDArray[np.int64]], F32] | None = None
    ) -> None:
        """Raise ValueError if a sample of rows' vectors (spread over the partition) differ
        from their fingerprints: a restored matrix that is not what was saved. A no-op
        where fingerprints are not kept (no graph config). *read* gives the sampled rows of
        the matrix (default: from the matrix itself; a restored one reads them from its file,
        see :class:`~kenning.store.flat_file.MappedArrays`)."""
        if self._ann_config is None or self._n == 0:
            return
        rows = evenly_spaced(self._n, sample)
        rows = rows[self._has_vector[rows]]
        vectors = self._matrix[rows] if read is None else read(rows)
        if rows.size and (fingerprints(vectors) != self._row_print[rows]).any():
            raise ValueError("saved vectors differ from their fingerprints")

    @property
    def dimension(self) -> int:
        return self._dim

    def _grow(self, extra: int) -> None:
        need = self._n + extra
        if need <= self._matrix.shape[0]:
            return
        # A quarter more, not double: at 1M rows doubling left 1.5 GB of vectors unused.
        cap = max(need, self._matrix.shape[0] * 5 // 4, 1024)

        def grown(arr: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
            out = np.zeros((cap, *arr.shape[1:]), dtype=arr.dtype)
            out[: self._n] = arr[: self._n]
            return out

        for name in _ROW_ARRAYS:
            setattr(self, name, grown(getattr(self, name)))

    def reserve(self, rows: int) -> None:
        """Make room for *rows* rows in all (a load that adds in steps grows the arrays once,
        not by doubling)."""
        with self._rw.write():
            self._grow(max(0, rows - self._n))

    def saved(self, write: Callable[[dict[str, Any], Arrays, HnswIndex | None], _T]) -> _T:
        """Call *write* with the partition's live rows as small values and arrays (no graph:
        :meth:`restored` reads them back), while no change can come in between.

        Removed rows are left out, and with them every trace of an erased record (its id,
        postings, fingerprint, and a user or session no live row names): a snapshot holds
        what a partition rebuilt from the rows would, in the same order. The graph, when
        there is one, is given to *write* with the rows' mapping to it.
        """
        with self._rw.read(), self._ann_lock:
            n = self._n
            keep = np.flatnonzero(self._alive[:n]) if self._removed else None
            meta, arrays = self._lexical.saved(keep)
            for name in _SAVED_ARRAYS:
                whole = getattr(self, name)[:n]
                arrays[name] = whole if keep is None else whole[keep]
            ids, positions = self._ids.head(n), self._positions.head(n)
            if keep is not None:
                ids, positions = [ids[i] for i in keep.tolist()], [positions[i] for i in keep]
            meta.update(
                dimension=self._dim, n=len(ids),
                vectorless=int(np.count_nonzero(~arrays["_has_vector"])),
                shared_ids=bool((arrays["_weights"] < 1).any()),
            )  # fmt: skip
            self._save_codes(meta, arrays)
            positions_saved, meta["position_strings"] = saved_positions(positions)
            arrays.update(positions_saved)
            arrays.update(saved_ids(ids))
            graph = self._graph_saved(keep)
            if graph is not None:
                arrays.update(graph[1])
            return write(meta, arrays, None if graph is None else graph[0])

    def _save_codes(self, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> None:
        """The code tables of the rows in *arrays*, each cut to the values those rows use
        (renumbered in order), with the session sums and owners to match."""
        values: list[list[str | None]] = []
        used = []
        tables = (self._user_codes, self._session_codes, self._role_codes, self._kind_codes)
        for table, name in zip(tables, ("_users", "_sessions", "_roles", "_kinds"), strict=True):
            codes = arrays[name]
            present = np.unique(codes).astype(np.int64)
            renumber = np.full(len(table.values), -1, dtype=np.int64)
            renumber[present] = np.arange(present.size)
            arrays[name] = renumber[codes].astype(codes.dtype)
            values.append([table.values[i] for i in present.tolist()])
            used.append((present, renumber))
        meta["codes"] = values
        sessions, kinds = used[1][0], used[3][0]
        arrays["_session_sums"] = self._session_sums[np.ix_(kinds, sessions)]
        # A session's owner is the user of its first row (as a rebuild would find it).
        codes, first = np.unique(arrays["_sessions"], return_index=True)
        arrays["session_user_keys"] = codes.astype(np.int64)
        arrays["session_user_values"] = arrays["_users"][first].astype(np.int64)

    @classmethod
    def restored(
        cls, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]], *,
        ann: AnnConfig | None = None, on_index: Callable[[Partition], None] | None = None,
        graph: HnswIndex | None = None,
        file_rows: Callable[[npt.NDArray[np.int64]], F32] | None = None,
    ) -> Partition:  # fmt: skip
        """The partition :meth:`saved` gave, with its *graph* when saved with one (the arrays
        may be mapped copy-on-write: a row read for a search is the only page of it loaded).
        *file_rows*, for a mapped matrix, reads rows of it from its file (see
        ``GraphRows._vectors``) until the partition changes a row.
        """
        part = cls(int(meta["dimension"]), ann=ann, on_index=on_index)
        part._file_rows = file_rows
        n = int(meta["n"])
        part._n = n
        part._vectorless, part._shared_ids = int(meta["vectorless"]), bool(meta["shared_ids"])
        for name in _SAVED_ARRAYS:
            setattr(part, name, arrays[name])
        part._session_sums = arrays["_session_sums"]
        part._row_node = np.full(n, -1, dtype=np.int64)
        part._row_next = np.full(n, -1, dtype=np.int64)
        part._session_users = dict(
            zip(
                arrays["session_user_keys"].tolist(),
                arrays["session_user_values"].tolist(),
                strict=True,
            )
        )
        part._ids = RowIds(arrays)
        codes = (part._user_codes, part._session_codes, part._role_codes, part._kind_codes)
        for code, values in zip(codes, meta["codes"], strict=True):
            code.values = list(values)
            code._codes = {value: i for i, value in enumerate(values)}
        part._positions = Positions(arrays, meta["position_strings"])
        part._lexical = LexicalIndex.restored(meta, arrays)
        if len(part._ids) != n or len(part._positions) != n or len(part._lexical) != n:
            raise ValueError("saved partition's rows do not agree")
        if graph is not None and part._ann_config is not None:
            part._graph_restored(graph, arrays)
        return part

    @property
    def has_graph(self) -> bool:
        """Whether the partition holds an HNSW graph (built, adopted or restored)."""
        return self._ann is not None

    def add(self, rows: IndexRows) -> None:
        count = len(rows.ids)
        if count == 0:
            return
        if rows.vectors.shape != (count, self._dim):
            raise ValueError(f"expected vectors of shape ({count}, {self._dim})")
        with self._rw.write(), self._ann_lock:
            start = self._n
            self._add(rows, count)
            if self._ann is not None:
                self._map_new(np.flatnonzero(self._has_vector[start : self._n]) + start)
        self._maybe_build()
        self._maybe_insert()

    def remove(self, rowids: npt.NDArray[np.int64]) -> int:
        """Take the rows with these database rowids out of every search; return how many.

        Their vectors are zeroed in memory; graph nodes left without a row are excluded until
        the next build, which starts at once.
        """
        with self._rw.write(), self._ann_lock:
            n = self._n
            positions = np.flatnonzero(np.isin(self._rowids[:n], rowids) & self._alive[:n])
            if positions.size == 0:
                return 0
            self._alive[positions] = False
            self._removed += int(positions.size)
            self._lexical.remove(positions.astype(np.int64))
            if self._dim:
                np.subtract.at(
                    self._session_sums,
                    (self._kinds[positions], self._sessions[positions]),
                    self._matrix[positions]
                    * (self._has_vector[positions] * self._weights[positions])[:, None],
                )
            self._vectorless += int(np.count_nonzero(self._has_vector[positions]))
            self._has_vector[positions] = False
            self._matrix[positions] = 0.0
            self._file_rows = None  # the file holds the rows as they were
            if self._ann is not None:
                self._repoint_nodes()
        self._maybe_build()
        return int(positions.size)

    def remix(self, gone: npt.NDArray[np.int64], read: Callable[[list[int]], IndexRows]) -> None:
        """Index again, as *read* (rowids -> their rows now) gives them, the live rows whose
        vectors were mixed with one of the removed rows *gone*: a removed turn leaves nothing
        behind (see kenning.store.replies)."""
        with self._rw.read():
            n = self._n
            if not (self._before[:n] >= 0).any():
                return
            stale = np.unique(self._rowids[:n][np.isin(self._before[:n], gone) & self._alive[:n]])
        if stale.size:
            self.remove(stale)
            self.add(read(stale.tolist()))

    def _add(self, rows: IndexRows, count: int) -> None:
        self._file_rows = None  # the matrix is copied out of its file to grow
        self._grow(count)
        end = self._n + count
        self._matrix[self._n : end] = rows.vectors
        self._has_vector[self._n : end] = rows.has_vector
        self._vectorless += count - int(np.count_nonzero(rows.has_vector))
        self._alive[self._n : end] = True
        weights = np.ones(count, dtype=np.float32) if rows.weights is None else rows.weights
        self._weights[self._n : end] = weights
        if not self._shared_ids and rows.weights is not None and (weights < 1).any():
            self._shared_ids = True
        self._lexical.add(rows.texts, rows.labels, rows.questions)
        self._rowids[self._n : end] = rows.rowids
        self._before[self._n : end] = -1 if rows.before is None else rows.before
        self._row_node[self._n : end] = -1
        if self._ann_config is not None:
            self._row_print[self._n : end] = fingerprints(rows.vectors)
        self._ats[self._n : end] = rows.ats
        self._users[self._n : end] = [self._user_codes.code(u) for u in rows.users]
        codes = [self._session_codes.code(s) for s in rows.sessions]
        self._sessions[self._n : end] = codes
        for code, user in zip(codes, self._users[self._n : end], strict=True):
            self._session_users.setdefault(code, int(user))
        kinds = [self._kind_codes.code(k) for k in rows.kinds]
        self._kinds[self._n : end] = kinds
        self._grow_sums()
        if self._dim:
            np.add.at(
                self._session_sums,
                (np.asarray(kinds), np.asarray(codes)),
                rows.vectors * (rows.has_vector * weights)[:, None],
            )
        self._roles[self._n : end] = [self._role_codes.code(r) for r in rows.roles]
        self._ids.extend(rows.ids)
        self._positions.extend([None] * count if rows.positions is None else rows.positions)
        self._n = end

    def _grow_sums(self) -> None:
        """Make room in the session sums for every kind and session interned so far."""
        have_kinds, have_sessions = self._session_sums.shape[:2]
        kinds, sessions = len(self._kind_codes.values), len(self._session_codes.values)
        if kinds <= have_kinds and sessions <= have_sessions:
            return
        grown = np.zeros(
            (max(kinds, have_kinds), max(2 * sessions, have_sessions), self._dim),
            dtype=np.float32,
        )
        grown[:have_kinds, :have_sessions] = self._session_sums
        self._session_sums = grown

    def _mask(self, select: RowSelector, *, live: bool = True) -> npt.NDArray[np.bool_] | None:
        """The selected rows (None: all), removed rows excluded unless *live* is False."""
        n = self._n
        mask: npt.NDArray[np.bool_] | None = None

        def both(m: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
            return m if mask is None else mask & m

        if select.user is not None:
            mask = both(self._users[:n] == self._user_codes.lookup(select.user))
        if select.session is not None:
            mask = both(self._sessions[:n] == self._session_codes.lookup(select.session))
        if select.roles and not self._role_codes.covers(select.roles):
            codes = [self._role_codes.lookup(r) for r in select.roles]
            mask = both(_member(self._roles[:n], codes, len(self._role_codes.values)))
        kinds = self._kind_mask(self._kind_codes_of(select.kinds))
        if kinds is not None:
            mask = both(kinds)
        if select.since is not None:
            mask = both(self._ats[:n] >= select.since)
        if select.until is not None:
            mask = both(self._ats[:n] <= select.until)
        if select.rowids is not None:
            mask = both(np.isin(self._rowids[:n], select.rowids))
        if live and self._removed:
            mask = both(self._alive[:n])
        return mask

    def _kind_codes_of(self, kinds: tuple[str, ...]) -> list[int] | None:
        """The codes of the partition's kinds among *kinds* (None: no constraint)."""
        if not kinds or self._kind_codes.covers(kinds):
            return None
        return [code for code in map(self._kind_codes.lookup, kinds) if code >= 0]

    def _kind_mask(self, codes: list[int] | None) -> npt.NDArray[np.bool_] | None:
        """The rows of one of the kinds *codes* (None: all rows)."""
        if codes is None:
            return None
        return _member(self._kinds[: self._n], codes, len(self._kind_codes.values))

    def nearest(
        self, query: F32, k: int, select: RowSelector, also: Sequence[RowSelector] = (),
        also_k: int | None = None,
    ) -> list[Candidate]:  # fmt: skip
        """Top *k* rows by cosine among the selected rows that have a vector, then the top
        *also_k* (default *k*) under each of *also* not listed yet."""
        more = k if also_k is None else also_k
        with self._rw.read():
            found = [self._nearest(query, k, select)]
            found += [self._nearest(query, more, s) for s in also]
            return self._listed(found, k, more)

    def _nearest(self, query: F32, k: int, select: RowSelector) -> _Scored | None:
        """The selected rows' cosines (None: no row to rank)."""
        n = self._n
        if n == 0 or k <= 0:
            return None
        mask = self._mask(select)
        if self._vectorless:
            mask = self._has_vector[:n] if mask is None else mask & self._has_vector[:n]
        selected = n if mask is None else int(np.count_nonzero(mask))
        if selected == 0:
            return None
        # Chunks of one record may fill several places: the graph proposes more rows then.
        found = self._ann_nearest(query, 2 * k if self._shared_ids else k, mask, selected)
        if found is not None:
            self._ann_searches += 1
            # The graph proposes rows; their scores are exact, ranked like the exact path.
            return found
        self._exact_searches += 1
        if mask is None:
            return self._matrix[:n] @ query, np.arange(n)
        positions = np.flatnonzero(mask)
        # Rows outside the selection never reach the ranking. Gathering few rows is cheaper
        # than one pass over all; for a wide selection the single pass is cheaper.
        if positions.size * 3 < n:
            return self._matrix[positions] @ query, positions
        return (self._matrix[:n] @ query)[positions], positions

    def lexical(
        self, terms: Sequence[str], k: int, select: RowSelector, also: Sequence[RowSelector] = (),
        also_k: int | None = None,
    ) -> list[Candidate]:  # fmt: skip
        """Top *k* selected rows by BM25 for stemmed *terms* (rows without a match are left
        out), then the top *also_k* (default *k*) under each of *also* not listed yet (the
        rows' scores are computed once)."""
        with self._rw.read():
            if self._n == 0 or k <= 0 or not terms:
                return []
            scores = self._lexical.scores(terms)
            if scores is None:
                return []
            found = [self._matched(scores, s) for s in (select, *also)]
            return self._listed(found, k, k if also_k is None else also_k)

    def _matched(self, scores: npt.NDArray[np.float32], select: RowSelector) -> _Scored | None:
        """The selected rows that match, with their scores (None: none)."""
        mask = self._mask(select)
        matched = scores > 0 if mask is None else (scores > 0) & mask
        positions = np.flatnonzero(matched)
        if positions.size == 0:
            return None
        return scores[positions], positions

    def _listed(self, found: Sequence[_Scored | None], k: int, also_k: int) -> list[Candidate]:
        """The top *k* of the first scored selection, then the top *also_k* of each other in
        turn, each record once, where it is first listed."""
        depths = [k, *[also_k] * (len(found) - 1)]
        if self._shared_ids:
            pairs = zip(found, depths, strict=True)
            return listed_once([self._top(f[0], f[1], d) for f, d in pairs if f is not None])
        # A record is one row: the rows already listed are dropped before any candidate is
        # built (the selections of a named time mostly repeat the scope's best).
        rows, scores = [], []
        listed = np.zeros(self._n, dtype=np.bool_) if len(found) > 1 else None
        for f, depth in zip(found, depths, strict=True):
            if f is None:
                continue
            ranked = self._ranked_rows(f[0], f[1], depth)
            top, values = f[1][ranked], f[0][ranked]
            if listed is not None:
                new = ~listed[top]
                top, values = top[new], values[new]
                listed[top] = True
            rows.append(top)
            scores.append(values)
        if not rows:
            return []
        if len(rows) == 1:
            return self._candidates(rows[0], scores[0])
        return self._candidates(np.concatenate(rows), np.concatenate(scores))

    def sessions(
        self, terms: Sequence[str], query: F32 | None, select: RowSelector,
        wanted: Sequence[str | None],
    ) -> list[tuple[str | None, float, float]]:  # fmt: skip
        """The *wanted* sessions inside the selection's scope, each scored as one document:
        (session, BM25 over its turns as one text, cosine to its centroid).

        A session's document holds only the selected rows: a filter that excludes a turn
        keeps it out of its session's score too.
        """
        with self._rw.read():
            return self._sessions_scored(terms, query, select, wanted)

    def _sessions_scored(
        self, terms: Sequence[str], query: F32 | None, select: RowSelector,
        wanted: Sequence[str | None],
    ) -> list[tuple[str | None, float, float]]:  # fmt: skip
        n_groups = len(self._session_codes.values)
        codes = self._sessions_in_scope(
            map(self._session_codes.lookup, dict.fromkeys(wanted)), select
        )
        n = self._n
        if not codes or n == 0:
            return []
        index = np.asarray(codes)
        # Scope (user, session) is decided per session above; the rest narrows the rows.
        rest = self._mask(replace(select, user=None, session=None, kinds=()), live=False)
        chosen = self._kind_codes_of(select.kinds)
        kinds = self._kind_mask(chosen)
        rows = kinds if rest is None else rest if kinds is None else rest & kinds
        lexical = None
        if terms:
            # A selection by kind alone is the same rows until rows are added or removed; "no
            # kind asked for is here" (no codes) is not "every kind" (None).
            key = None if rest is not None else ("all",) if chosen is None else tuple(chosen)
            lexical = self._lexical.group_scores(terms, self._sessions, n_groups, rows, key=key)
        cosine = np.zeros(index.size, dtype=np.float32)
        if query is not None and self._dim:
            # Removed rows have no vector: no sum counts them.
            if rows is None or rest is None:
                by_kind = (
                    self._session_sums[:, index]
                    if chosen is None
                    else self._session_sums[np.ix_(np.asarray(chosen, dtype=np.intp), index)]
                )
                sums = by_kind.sum(axis=0)
            else:
                sums = self._masked_sums(index, rows)
            norms = np.linalg.norm(sums, axis=1)
            np.divide(sums @ query, norms, out=cosine, where=norms > 0)
        names = self._session_codes.values
        return [
            (names[code], float(lexical[code]) if lexical is not None else 0.0, float(cos))
            for code, cos in zip(codes, cosine, strict=True)
        ]

    def _masked_sums(self, codes: npt.NDArray[np.intp], rows: npt.NDArray[np.bool_]) -> F32:
        """Sum of the selected row vectors of each session in *codes*.

        A session whose selection leaves out fewer rows than it keeps is its running sum less
        the rows left out (a filter that drops the few facts from a session of turns reads a
        few rows, not all); the others are summed from the rows kept. Keeping at least half
        bounds the cancellation error of the subtraction.
        """
        n = self._n
        slot = np.full(len(self._session_codes.values), -1, dtype=np.int64)
        slot[codes] = np.arange(codes.size)
        row_slot = slot[self._sessions[:n]]
        # Removed rows have no vector: neither side counts them.
        wanted = (row_slot >= 0) & self._has_vector[:n]
        kept_rows = wanted & rows[:n]
        left_rows = wanted & ~rows[:n]
        kept = np.bincount(row_slot[kept_rows], minlength=codes.size)
        left = np.bincount(row_slot[left_rows], minlength=codes.size)
        subtract = left < kept
        sums = np.zeros((codes.size, self._dim), dtype=np.float32)
        sums[subtract] = self._session_sums[:, codes[subtract]].sum(axis=0)
        by_rest = subtract[row_slot]  # row_slot -1 reads a value the masks discard
        self._add_grouped(sums, np.flatnonzero(kept_rows & ~by_rest), row_slot, 1.0)
        self._add_grouped(sums, np.flatnonzero(left_rows & by_rest), row_slot, -1.0)
        return sums

    def _add_grouped(
        self,
        sums: F32,
        picked: npt.NDArray[np.intp],
        row_slot: npt.NDArray[np.int64],
        sign: float,
    ) -> None:
        """Add *sign* times the weighted vectors of rows *picked* to their slots of *sums*."""
        if picked.size == 0:
            return
        slots = row_slot[picked]
        # Grouped sums by sorting and reduceat: np.add.at is unbuffered and about 10x slower
        # (it was the largest part of a search's own time at LoCoMo scale). The stable sort
        # keeps each session's rows in row order, the order np.add.at added them in.
        order = np.argsort(slots, kind="stable")
        picked, slots = picked[order], slots[order]
        starts = np.flatnonzero(np.r_[True, slots[1:] != slots[:-1]])
        weighted = self._matrix[picked] * self._weights[picked, None]
        sums[slots[starts]] += sign * np.add.reduceat(weighted, starts, axis=0)

    def _sessions_in_scope(self, codes: Iterable[int], select: RowSelector) -> list[int]:
        """The known sessions among *codes* that are in scope: the selected session, or those
        of the selected user."""
        kept = [code for code in codes if code >= 0]
        if select.session is not None:
            only = self._session_codes.lookup(select.session)
            kept = [code for code in kept if code == only]
        if select.user is not None:
            user, owner = self._user_codes.lookup(select.user), self._session_users.get
            kept = [code for code in kept if owner(code) == user]
        return kept

    def _candidates(
        self, rows: npt.NDArray[np.intp], scores: npt.NDArray[np.float32]
    ) -> list[Candidate]:
        """Candidates of partition *rows* with their *scores*, in that order."""
        # Whole columns through C-level map and zip: a Python loop over the rows, or numpy
        # scalars read one by one, cost more than the ranking itself.
        listed = rows.tolist()
        return list(
            map(
                _new_tuple,
                repeat(Candidate),
                zip(
                    map(self._ids.__getitem__, listed),
                    scores.tolist(),
                    map(self._session_codes.values.__getitem__, self._sessions[rows].tolist()),
                    map(self._kind_codes.values.__getitem__, self._kinds[rows].tolist()),
                    self._ats[rows].tolist(),
                    map(self._positions.__getitem__, listed),
                    strict=True,
                ),
            )
        )

    def _top(
        self, scores: npt.NDArray[np.float32], positions: npt.NDArray[np.intp], k: int
    ) -> list[Candidate]:
        """The *k* best records (score, then insertion order) where a record may be indexed
        as several rows (chunks, sentence units): each counts once, with its best row.

        A record's rows are adjacent in the partition (see :class:`IndexRows`), so in
        partition order they form one run: its best score is the run's maximum, and records
        are ranked whole, without building a candidate for each row.
        """
        if positions.size > 1 and not bool((positions[1:] > positions[:-1]).all()):
            order = np.argsort(positions, kind="stable")  # a graph's proposals
            positions, scores = positions[order], scores[order]
        rowids = self._rowids[positions]
        starts = np.flatnonzero(np.concatenate(([True], rowids[1:] != rowids[:-1])))
        if starts.size == 0:
            return []
        best = np.maximum.reduceat(scores, starts)
        first = positions[starts]
        ranked = self._ranked_rows(best, first, k)
        return self._candidates(first[ranked], best[ranked])

    @staticmethod
    def _ranked_rows(
        scores: npt.NDArray[np.float32], positions: npt.NDArray[np.intp], k: int
    ) -> npt.NDArray[np.intp]:
        k = min(k, scores.shape[0])
        if k < scores.shape[0]:
            # Rows tied with the k-th score compete by insertion order too, not as the
            # partitioning happens to leave them.
            kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
            top = np.flatnonzero(scores >= kth)
        else:
            top = np.arange(k)
        ranked: npt.NDArray[np.intp] = top[np.lexsort((positions[top], -scores[top]))][:k]
        return ranked


def _member(
    values: npt.NDArray[np.int16], codes: Sequence[int], n_codes: int
) -> npt.NDArray[np.bool_]:
    """Which of *values* (codes below *n_codes*) are among *codes* (-1: unknown, none): a
    table lookup, where ``np.isin`` sorts (15 against 3 µs for a LoCoMo partition)."""
    table = np.zeros(n_codes, dtype=np.bool_)
    table[[code for code in codes if code >= 0]] = True
    out: npt.NDArray[np.bool_] = table[values]
    return out


def listed_once(lists: Sequence[list[Candidate]]) -> list[Candidate]:
    """The candidates of *lists* in order, each record once, where it is first listed (one
    signal scored it the same way in every list, up to rounding)."""
    if len(lists) == 1:
        return lists[0]
    out: list[Candidate] = []
    seen: set[str] = set()
    for ranked in lists:
        for cand in ranked:
            if cand.id not in seen:
                seen.add(cand.id)
                out.append(cand)
    return out
