"""The HNSW side of a partition: graph nodes mapped to rows, built in the background.

The graph holds each distinct vector once; a node found stands for all of its rows. It is
built in a background thread while exact search serves, extended as rows arrive, and checked
node by node when adopted from a saved file or an earlier partition. A mixin of
:class:`~kenning.store.partition.Partition`, which owns the row arrays it reads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kenning.store.ann import AnnConfig, HnswIndex, evenly_spaced, hnsw_available, nodes_to_fetch

__all__ = ["F32", "AnnStatus", "GraphRows"]

F32 = npt.NDArray[np.float32]
# Nodes a build adds between looks at its cancel flag (a closing store waits for one step).
_BUILD_CHUNK = 512
# Rows the graph's 8-bit ranges are learnt from (spread over the rows it is built from).
_TRAIN_ROWS = 20_000
# Nodes left without a row are excluded from searches; past this share of the graph it is
# rebuilt (a rebuild per closed fact or erasure redid minutes of work at 1M rows).
_EXCLUDED_SHARE = 0.125
# Rows a background inserter adds to the graph under one hold of the lock: a search waits for
# at most one such step (milliseconds, tens at 1M nodes on a busy machine).
_INSERT_CHUNK = 16
# The inserter's pause between steps: a lock is not fair, and an inserter that takes it back
# at once kept an ingest (and searches) waiting until every pending row was in (measured:
# the ingest thread idle for 120 of 207 s).
_INSERT_PAUSE_S = 0.001


@dataclass(frozen=True, slots=True)
class AnnStatus:
    """Where a partition's HNSW index stands.

    ``state``: ``off`` (disabled or no vectors), ``exact`` (below the row threshold),
    ``building`` (exact search serves meanwhile), ``ready``. ``nodes`` counts graph nodes
    (one per distinct vector), ``excluded`` those no row holds any more (skipped, awaiting a
    rebuild).
    ``build_s`` is the last build's duration; ``ann_searches`` and ``exact_searches`` count
    vector searches by path since the partition was loaded.
    """

    state: Literal["off", "exact", "building", "ready"]
    rows: int
    nodes: int
    excluded: int
    build_s: float | None
    ann_searches: int
    exact_searches: int


class GraphRows:
    """Graph state and the operations on it; the row arrays belong to the partition."""

    # Owned by the partition (see Partition.__init__).
    _n: int
    _dim: int
    _removed: int
    _matrix: F32
    # Reads rows of the matrix from the snapshot file it is mapped from, while no row of it
    # has changed (None otherwise): see _vectors.
    _file_rows: Callable[[npt.NDArray[np.int64]], F32] | None
    _has_vector: npt.NDArray[np.bool_]
    _alive: npt.NDArray[np.bool_]
    _row_print: npt.NDArray[np.uint64]
    _row_node: npt.NDArray[np.int64]
    _row_next: npt.NDArray[np.int64]

    def _init_graph(self, ann: AnnConfig | None, on_index: Callable[[Any], None] | None) -> None:
        self._ann_config = ann
        self._on_index = on_index
        # Guards the row arrays against a builder's catch-up and the graph against add/search.
        self._ann_lock = threading.Lock()
        self._ann_on = False
        self._ann: HnswIndex | None = None
        # Graph node -> a row position holding its vector (-1: no row has it, excluded).
        self._node_rep = np.zeros(0, dtype=np.int64)
        self._node_of: dict[int, int] = {}  # vector fingerprint -> node
        self._node_of_unbuilt = False  # a restored graph's: built when a row is first mapped
        # Each node's rows as a list through the rows (_row_next), kept as rows are mapped:
        # its first and last row (-1: none). No change to the partition sorts all its rows.
        self._node_head = np.zeros(0, dtype=np.int64)
        self._node_tail = np.zeros(0, dtype=np.int64)
        self._excluded = 0
        # Rows with a vector not in the graph yet, in position order (background inserts):
        # searched exactly beside the graph until the inserter has added them.
        self._pending: list[npt.NDArray[np.int64]] = []
        self._inserter: threading.Thread | None = None
        self._saved_size = 0  # nodes when the index was last handed to on_index
        self._builder: threading.Thread | None = None
        self._cancel = threading.Event()
        self._build_s: float | None = None
        self._ann_searches = 0
        self._exact_searches = 0

    # -- HNSW index ------------------------------------------------------------------------

    def start_ann(self, prebuilt: HnswIndex | None = None) -> None:
        """Let the partition keep an HNSW index from now on (a no-op without an ann config).

        *prebuilt* (persisted, or the index of this tenant's previous partition) is checked
        row by row: nodes whose row is gone or whose vector changed are excluded from every
        search and a rebuild is scheduled; rows it lacks are added. Otherwise an index is
        built once the partition is large enough.
        """
        if self._ann_config is None:
            return
        self._ann_on = True
        if prebuilt is not None:
            self._adopt(prebuilt)
        self._maybe_build()

    def _vector_count(self) -> int:
        return int(np.count_nonzero(self._has_vector[: self._n]))

    def vectors_for(self, prints: npt.NDArray[np.uint64]) -> F32:
        """For each fingerprint, the vector of a row that has it; zeros where none has."""
        with self._ann_lock:
            have = np.flatnonzero(self._has_vector[: self._n])
            out = np.zeros((prints.shape[0], self._dim), dtype=np.float32)
            if have.size == 0:
                return out
            own = self._row_print[have]
            order = np.argsort(own, kind="stable")
            slot = np.clip(np.searchsorted(own[order], prints), 0, have.size - 1)
            found = own[order][slot] == prints
            out[found] = self._matrix[have[order[slot[found]]]]
            return out

    def _adopt(self, index: HnswIndex) -> None:
        with self._ann_lock:
            if index.dimension != self._dim or self._vector_count() < self._cfg().min_rows:
                return
            positions = np.flatnonzero(self._has_vector[: self._n]).astype(np.int64)
            own = np.unique(self._row_print[positions])
            live = np.isin(index.prints, own)
            fresh = np.setdiff1d(own, index.prints, assume_unique=True).size
            if fresh > len(index) or 2 * np.count_nonzero(live) < len(index):
                return  # mostly new or changed vectors: a fresh build makes a better graph
            node_of: dict[int, int] = {}
            for node in np.flatnonzero(live).tolist():
                node_of.setdefault(int(index.prints[node]), node)
            self._install(index, np.full(len(index), -1, dtype=np.int64), node_of)
            # Rows the saved graph lacks are inserted like new rows: the load does not wait.
            known = np.isin(self._row_print[positions], index.prints[live])
            self._index_rows(positions[known])
            self._map_new(positions[~known])
            index.clear(np.flatnonzero(self._node_rep < 0))
            self._excluded = int(np.count_nonzero(self._node_rep < 0))
        self._hand_over()
        self._maybe_insert()

    def _map_new(self, positions: npt.NDArray[np.int64]) -> None:
        """Map rows new to the graph: now, or (background) by the inserter (lock held)."""
        if positions.size == 0:
            return
        if self._cfg().background:
            self._pending.append(positions.astype(np.int64))
        else:
            self._index_rows(positions)

    def _maybe_insert(self) -> None:
        """Start the background inserter if rows wait for the graph."""
        if self._inserter is not None:
            return  # it takes the rows added since it started too
        with self._ann_lock:
            if not self._pending or self._inserter is not None or self._cancel.is_set():
                return
            job = threading.Thread(target=self._insert, name="kenning-hnsw-insert", daemon=True)
            self._inserter = job
        job.start()

    def _insert(self) -> None:
        """Add the pending rows to the graph a few at a time, releasing the lock between
        steps; hand the index over to be saved once it has grown by an eighth."""
        threads = HnswIndex.build_threads(self._cfg().build_threads)
        try:
            while True:
                with self._ann_lock:
                    if self._cancel.is_set() or self._ann is None or not self._pending:
                        self._inserter = None
                        grown = self._ann is not None and len(self._ann) > 1.125 * self._saved_size
                        break
                    first = self._pending[0]
                    step, rest = first[:_INSERT_CHUNK], first[_INSERT_CHUNK:]
                    if rest.size:
                        self._pending[0] = rest
                    else:
                        self._pending.pop(0)
                    # Rows removed while they waited have no vector any more.
                    self._index_rows(step[self._has_vector[step]])
                time.sleep(_INSERT_PAUSE_S)
        finally:
            HnswIndex.build_threads(threads)
        if grown and not self._cancel.is_set():
            self._hand_over()

    def _hand_over(self) -> None:
        """Give the index to *on_index* (to be saved), noting its size."""
        if self._on_index is None:
            return
        with self._ann_lock:
            self._saved_size = 0 if self._ann is None else len(self._ann)
        self._on_index(self)

    def _pending_rows(self) -> npt.NDArray[np.int64]:
        """The rows waiting for the graph that still have a vector (lock held)."""
        if not self._pending:
            return np.zeros(0, dtype=np.int64)
        rows = np.concatenate(self._pending) if len(self._pending) > 1 else self._pending[0]
        return rows[self._has_vector[rows]]

    def _install(
        self, index: HnswIndex, node_rep: npt.NDArray[np.int64], node_of: dict[int, int]
    ) -> None:
        """Make *index* the partition's graph, no row mapped to it yet (lock held)."""
        self._ann, self._node_rep, self._node_of = index, node_rep, node_of
        self._node_of_unbuilt = False
        self._row_node[: self._n] = -1
        self._node_head = np.full(len(index), -1, dtype=np.int64)
        self._node_tail = np.full(len(index), -1, dtype=np.int64)
        self._pending = []  # the caller maps every row
        self._excluded = 0

    def _drop_index(self) -> None:
        self._ann, self._node_rep, self._node_of = None, self._node_rep[:0], {}
        self._node_of_unbuilt = False
        self._node_head, self._node_tail = self._node_head[:0], self._node_tail[:0]
        self._pending = []
        self._row_node[: self._n] = -1
        self._excluded = 0

    def _index_rows(self, positions: npt.NDArray[np.int64]) -> None:
        """Map rows at *positions* to the graph's nodes, adding a node for each vector it
        lacks (lock held)."""
        index = self._ann
        assert index is not None
        if positions.size == 0:
            return
        prints = self._row_print[positions]
        if self._node_of_unbuilt:
            self._node_of = self._first_nodes()
            self._node_of_unbuilt = False
        get = self._node_of.get
        nodes = np.fromiter(
            (get(p, -1) for p in prints.tolist()), dtype=np.int64, count=positions.size
        )
        # Adopted nodes take their first row as the one that holds their vector.
        known = np.flatnonzero(nodes >= 0)
        unset = known[self._node_rep[nodes[known]] < 0]
        if unset.size:
            first_nodes, first = np.unique(nodes[unset], return_index=True)
            self._node_rep[first_nodes] = positions[unset[first]]
        new = np.flatnonzero(nodes < 0)
        if new.size:
            distinct, first, inverse = np.unique(
                prints[new], return_index=True, return_inverse=True
            )
            base = len(index) + np.arange(distinct.size, dtype=np.int64)
            nodes[new] = base[inverse.reshape(-1)]
            self._add_nodes(positions[new[first]])
            self._node_of.update(zip(distinct.tolist(), base.tolist(), strict=True))
        # A fingerprint is a hash: a row whose vector differs from its node's gets its own.
        differs = np.zeros(positions.size, dtype=np.bool_)
        for at in range(0, positions.size, _BUILD_CHUNK):
            part = slice(at, at + _BUILD_CHUNK)
            mine = self._matrix[positions[part]]
            theirs = self._matrix[self._node_rep[nodes[part]]]
            differs[part] = (mine != theirs).any(axis=1)
        if differs.any():
            odd = np.flatnonzero(differs)
            nodes[odd] = len(index) + np.arange(odd.size, dtype=np.int64)
            self._add_nodes(positions[odd])
        self._row_node[positions] = nodes
        self._link(positions, nodes)

    def _link(self, positions: npt.NDArray[np.int64], nodes: npt.NDArray[np.int64]) -> None:
        """Append rows at *positions* (ascending, after every row already linked) to the
        lists of their *nodes*: a sort of the new rows only (lock held)."""
        order = np.lexsort((positions, nodes))
        rows, by = positions[order], nodes[order]
        same = by[1:] == by[:-1]
        self._row_next[rows] = -1
        self._row_next[rows[:-1][same]] = rows[1:][same]
        starts = np.flatnonzero(np.concatenate(([True], ~same)))
        ends = np.concatenate((starts[1:] - 1, [rows.size - 1]))
        group, first = by[starts], rows[starts]
        tails = self._node_tail[group]
        joined = tails >= 0
        self._row_next[tails[joined]] = first[joined]
        self._node_head[group[~joined]] = first[~joined]
        self._node_tail[group] = rows[ends]

    def _repoint_nodes(self) -> None:
        """After rows were removed: each node is held by a live row of its own, or excluded
        when none is left (lock held). Only the nodes that lost their row are looked at."""
        assert self._ann is not None
        n = self._n
        row_node = self._row_node[:n]
        row_node[~self._alive[:n]] = -1
        current = self._node_rep
        lost = np.flatnonzero((current >= 0) & ~self._alive[np.clip(current, 0, None)])
        for node in lost.tolist():
            live = self._rows_of(node, None, 1)
            current[node] = live[0] if live.size else -1
        gone = lost[current[lost] < 0]
        if not self._node_of_unbuilt:
            # The vector may come back in a new row: it needs a node of its own then, not
            # this one, whose vector is cleared.
            prints = self._ann.prints[gone].tolist()
            for fingerprint, node in zip(prints, gone.tolist(), strict=True):
                if self._node_of.get(fingerprint) == node:
                    del self._node_of[fingerprint]
        # An erased row's vector must not stay in memory, nor be saved, until a rebuild.
        self._ann.clear(gone)
        self._excluded = int(np.count_nonzero(current < 0))

    def _add_nodes(self, positions: npt.NDArray[np.int64]) -> None:
        """Add graph nodes for the vectors of rows at *positions* (lock held)."""
        assert self._ann is not None
        threads = HnswIndex.build_threads(self._cfg().build_threads)
        try:
            self._ann.add(self._matrix[positions], self._row_print[positions])
        finally:
            HnswIndex.build_threads(threads)
        self._node_rep = np.concatenate([self._node_rep, positions.astype(np.int64)])
        none = np.full(positions.size, -1, dtype=np.int64)
        self._node_head = np.concatenate([self._node_head, none])
        self._node_tail = np.concatenate([self._node_tail, none])

    def _rows_of(
        self, node: int, mask: npt.NDArray[np.bool_] | None, k: int
    ) -> npt.NDArray[np.int64]:
        """The first *k* live rows of *node* in insertion order, selected by *mask* when
        given (lock held). Removed rows stay in the list, unmapped, and are skipped."""
        row_node, row_next = self._row_node, self._row_next
        found: list[int] = []
        row = int(self._node_head[node])
        while row >= 0 and len(found) < k:
            if row_node[row] == node and (mask is None or mask[row]):
                found.append(row)
            row = int(row_next[row])
        return np.asarray(found, dtype=np.int64)

    def _vectors(self, rows: npt.NDArray[np.int64]) -> F32:
        """The vectors of a search's few *rows*. A matrix restored from a snapshot is mapped
        from its file, and reading a row through the mapping can map a large folio of it
        (most of a 147 MiB matrix for a cold search's candidates); while the rows are as
        saved, they are read from the file instead."""
        reader = self._file_rows
        return self._matrix[rows] if reader is None else reader(rows)

    def _pending_nearest(
        self, query: F32, k: int, mask: npt.NDArray[np.bool_] | None
    ) -> tuple[list[npt.NDArray[np.float32]], list[npt.NDArray[np.int64]]]:
        """The top *k* selected rows not in the graph yet, scored exactly (lock held)."""
        rows = self._pending_rows()
        if mask is not None:
            rows = rows[mask[rows]]
        if rows.size == 0:
            return [], []
        scores = self._vectors(rows) @ query
        if rows.size > k:
            # Rows tied with the k-th score all stay: ties are ranked by insertion order.
            kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
            keep = scores >= kth
            rows, scores = rows[keep], scores[keep]
        return [scores.astype(np.float32)], [rows]

    def _cfg(self) -> AnnConfig:
        assert self._ann_config is not None
        return self._ann_config

    def _maybe_build(self) -> None:
        if not self._ann_on or self._ann_config is None or self._builder is not None:
            return
        index = self._ann
        if index is not None and self._excluded <= _EXCLUDED_SHARE * len(index):
            return  # checked again under the lock when it may build: a write does not wait
        with self._ann_lock:
            if self._builder is not None or self._cancel.is_set():
                return
            if self._vector_count() < self._ann_config.min_rows:
                if self._ann is not None:
                    self._drop_index()
                return
            if self._ann is not None and self._excluded <= _EXCLUDED_SHARE * len(self._ann):
                return
            if not hnsw_available():
                return  # no faiss: exact search serves (warned once per process)
            n = self._n
            positions = np.flatnonzero(self._has_vector[:n]).astype(np.int64)
            matrix, prints = self._matrix, self._row_print  # rows < n never change in these
            job = threading.Thread(
                target=self._build,
                args=(n, positions, matrix, prints),
                name="kenning-hnsw-build",
                daemon=True,
            )
            self._builder = job
        if self._ann_config.background:
            job.start()
        else:
            job.run()

    def _build(
        self,
        n: int,
        positions: npt.NDArray[np.int64],
        matrix: F32,
        prints: npt.NDArray[np.uint64],
    ) -> None:
        cfg = self._cfg()
        started = time.perf_counter()
        threads = HnswIndex.build_threads(cfg.build_threads)
        try:
            # One node per distinct vector: its first row holds it.
            _, first = np.unique(prints[positions], return_index=True)
            reps = positions[np.sort(first)]
            index = HnswIndex(self._dim, m=cfg.m, ef_construction=cfg.ef_construction)
            index.train(matrix[reps[evenly_spaced(reps.size, _TRAIN_ROWS)]])
            for at in range(0, reps.size, _BUILD_CHUNK):
                if self._cancel.is_set():
                    return
                chunk = reps[at : at + _BUILD_CHUNK]
                index.add(matrix[chunk], prints[chunk])
            with self._ann_lock:
                if self._cancel.is_set():
                    return
                node_of = dict(zip(prints[reps].tolist(), range(reps.size), strict=True))
                self._install(index, reps.copy(), node_of)
                # Every row, those added while the graph was being built included.
                self._index_rows(np.flatnonzero(self._has_vector[: self._n]).astype(np.int64))
                if self._removed:
                    self._repoint_nodes()  # rows removed while the graph was being built
                self._build_s = time.perf_counter() - started
        finally:
            HnswIndex.build_threads(threads)
            with self._ann_lock:
                self._builder = None
        if self._excluded and not self._cancel.is_set():
            # Rows removed while the graph was being built left nodes without a row: build
            # again if they are many, as a removal does.
            self._maybe_build()
        if self._builder is None:
            self._hand_over()

    def wait_ann(self, timeout: float | None = None) -> bool:
        """Wait for a running build, and the builds it starts; True if an index is ready
        afterwards."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for attr in ("_builder", "_inserter"):
            job = getattr(self, attr)
            while job is not None and job is not threading.current_thread():
                job.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
                if job.is_alive() or getattr(self, attr) is job:
                    break  # timed out
                job = getattr(self, attr)
        return self._ann is not None and self._builder is None

    def _graph_saved(
        self, keep: npt.NDArray[np.intp] | None
    ) -> tuple[HnswIndex, dict[str, npt.NDArray[Any]]] | None:
        """The graph and how the rows *keep* (None: all; renumbered in order) map to it, for
        a snapshot (None: no graph). Lock held."""
        index = self._ann
        if index is None:
            return None
        n = self._n
        row_node = self._row_node[:n] if keep is None else self._row_node[keep]
        node_rep, pending = self._node_rep.copy(), self._pending_rows()
        if keep is not None:
            renumber = np.full(n, -1, dtype=np.int64)
            renumber[keep] = np.arange(keep.size)
            # A node is held by a live row, or by none (excluded): no removed row holds one.
            node_rep = np.where(node_rep >= 0, renumber[np.clip(node_rep, 0, None)], -1)
            pending = renumber[pending]
            pending = pending[pending >= 0]
        arrays = {
            "graph_row_node": row_node, "graph_node_rep": node_rep,
            "graph_pending": pending, "graph_prints": index.prints,
        }  # fmt: skip
        return index, arrays

    def _graph_restored(self, index: HnswIndex, arrays: dict[str, npt.NDArray[Any]]) -> None:
        """Make *index* the graph, with the row mapping :meth:`_graph_saved` gave (no row
        is read: the node lists are linked again from each row's node)."""
        node_rep = np.array(arrays["graph_node_rep"], dtype=np.int64)
        row_node = np.array(arrays["graph_row_node"], dtype=np.int64)
        pending = np.array(arrays["graph_pending"], dtype=np.int64)
        n = self._n
        if node_rep.size != len(index) or row_node.size != n or (node_rep >= n).any():
            raise ValueError("saved graph does not match its rows")
        if (row_node >= len(index)).any() or (pending >= n).any():
            raise ValueError("saved graph does not match its rows")
        with self._ann_lock:
            self._install(index, node_rep, {})
            # A cold search maps no row: the map from fingerprints waits (87k nodes: 11 MB).
            self._node_of_unbuilt = True
            self._row_node[:n] = row_node
            mapped = np.flatnonzero(row_node >= 0)
            if mapped.size:
                self._link(mapped, row_node[mapped])
            self._pending = [pending] if pending.size else []
            self._excluded = int(np.count_nonzero(node_rep < 0))
            self._saved_size = len(index)
        self._maybe_insert()

    def _first_nodes(self) -> dict[int, int]:
        """Each live node's fingerprint -> the first node with it (lock held)."""
        assert self._ann is not None
        live = np.flatnonzero(self._node_rep >= 0)
        prints = self._ann.prints[live]
        return dict(zip(prints[::-1].tolist(), live[::-1].tolist(), strict=True))

    def dump_ann(self) -> tuple[bytes, tuple[int, int]] | None:
        """The persisted form of the index, and its nodes and excluded nodes (saved cleared:
        no vector, no fingerprint)."""
        with self._ann_lock:
            if self._ann is None:
                return None
            return self._ann.dumps(), (len(self._ann), self._excluded)

    def release_ann(self, *, wait: bool = False) -> HnswIndex | None:
        """Stop any build for good (it ends at its next chunk; *wait* joins it) and hand over
        the index, e.g. to this tenant's next partition."""
        self._cancel.set()
        for job in (self._builder, self._inserter):
            if wait and job is not None and job is not threading.current_thread():
                job.join()
        with self._ann_lock:
            index, self._ann = self._ann, None
            return index

    def ann_status(self) -> AnnStatus:
        with self._ann_lock:
            if self._ann_config is None or not self._ann_on:
                state: Literal["off", "exact", "building", "ready"] = "off"
            elif self._ann is not None:
                state = "ready"
            elif self._builder is not None:
                state = "building"
            else:
                state = "exact"
            return AnnStatus(
                state=state,
                rows=self._n - self._removed,
                nodes=0 if self._ann is None else len(self._ann),
                excluded=self._excluded,
                build_s=self._build_s,
                ann_searches=self._ann_searches,
                exact_searches=self._exact_searches,
            )

    def _ann_nearest(
        self, query: F32, k: int, mask: npt.NDArray[np.bool_] | None, selected: int
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]] | None:
        """Scores and positions of candidate rows found by the graph (every selected row of
        the best nodes, enough for the top *k*), or None when this query should be exact."""
        cfg = self._ann_config
        if cfg is None or self._ann is None:
            return None
        if selected < cfg.min_rows or selected < cfg.min_fraction * self._vector_count():
            return None
        with self._ann_lock:
            index = self._ann
            if index is None:
                return None
            allowed = None
            if mask is not None:
                # A node is eligible when any of its rows is selected.
                allowed = np.zeros(len(index), dtype=np.bool_)
                picked = self._row_node[: self._n][mask[: self._n]]
                allowed[picked[picked >= 0]] = True
            elif self._excluded:
                allowed = self._node_rep >= 0
            nodes = index.search(query, nodes_to_fetch(k), ef_search=cfg.ef_search, allowed=allowed)
            scores, positions = self._pending_nearest(query, k, mask)
            if nodes.size == 0 and not scores:
                return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
            node_scores = self._vectors(self._node_rep[nodes]) @ query
            total, last = 0, np.inf
            for i in np.argsort(-node_scores, kind="stable").tolist():
                score = node_scores[i]
                if total >= k and score < last:
                    break  # later nodes score lower: the top k rows are all in hand
                # Rows of one node tie: the first k by insertion order win.
                rows = self._rows_of(int(nodes[i]), mask, k)
                scores.append(np.full(rows.size, score, dtype=np.float32))
                positions.append(rows)
                total, last = total + rows.size, score
            return np.concatenate(scores), np.concatenate(positions)
