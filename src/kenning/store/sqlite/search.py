"""The search index of the SQLite store: in-memory partitions that follow the file by delta.

Search runs over in-memory partitions (:mod:`kenning.store.partition`), one per tenant, loaded
lazily from the file. A loaded partition catches up with what any connection (this process or
another) committed since: rows with a rowid above its high-water mark are added, rows named
in the deletion log (``index_log``) after its position are removed. Nothing is reloaded
because another process wrote, and access statistics live in a table of their own.

Lexical ranking is BM25 either in memory (default: about a millisecond at 100k records) or by
FTS5's ``bm25()`` (``lexical="fts5"``: no load step, tens of milliseconds per query at 100k).

A large partition also gets an HNSW index (:class:`~kenning.store.ann.AnnConfig`), built in a
background thread. For a database file it is saved beside it (``<file>.ann/``, the graph and
vector fingerprints, no vectors) and checked against the database when loaded; ``forget``
deletes the saved file, and the in-memory index skips (and clears) the nodes no row holds any
more; it is rebuilt once they are an eighth of it.

A file's partitions are also saved whole when the store closes (a snapshot per tenant in
``<file>.ann/``: the live rows' arrays, vectors and postings in one flat file, and the graph
with its 8-bit codes beside it), with the log position, high-water mark and erase generation they
hold. A new process reads the snapshot, mapped copy-on-write, and catches up from there by
the same delta as any partition, instead of reading and indexing every row. A snapshot from
before an erasure of the tenant is refused (and removed), as is one that does not read back
whole; ``forget`` deletes the tenant's snapshots with its graph files. Processes put a
snapshot and its graph in place, and read them, under the folder's lock
(:func:`~kenning.store.flat_file.folder_lock`), and a save removes the temporary files of
processes that died while they wrote.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, StoreError
from kenning.records import Filters, Scope
from kenning.store.ann import AnnConfig, HnswIndex, hnsw_available
from kenning.store.flat_file import (
    FlatFileError,
    MappedArrays,
    folder_lock,
    left_by_dead_processes,
    read_flat,
    temporary_name,
    write_flat,
)
from kenning.store.partition import IndexRows, Partition, listed_once
from kenning.store.partition_rows import turn_position
from kenning.store.records import Candidate, ModelInfo
from kenning.store.replies import DEFAULT_REPLY_WEIGHT, Question, questions
from kenning.store.sql import search
from kenning.store.sql.database import erase_generation
from kenning.store.sql.dialect import Tx
from kenning.store.sql.query import where_clause
from kenning.store.sql.search import LOAD_ROWS, LOG_KEEP, Follower
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.fts import ensure_fts, scope_match, text_match
from kenning.store.sqlite.sql import DIALECT, chunks
from kenning.text import query_terms, stem
from kenning.version import __version__

__all__ = ["SearchTables"]

_log = logging.getLogger(__name__)

# Bump when what a partition holds, or how it indexes a row (tokens, stems, reply mixing,
# fingerprints), changes: a snapshot of another format is rebuilt, never read.
_SNAPSHOT_FORMAT = 3

# One row per record, or per chunk of a chunked record (its text span, its own vector), or per
# sentence unit (its own vector; the first unit's text is the record's, the others' none).
_PARTITION_COLUMNS = (
    "i.rowid, i.id, i.user_id, i.session, i.role, i.kind, i.at, v.vec,"
    " CASE WHEN c.item IS NULL THEN i.text"
    " WHEN c.lexical THEN substr(i.text, c.start + 1, c.stop - c.start)"
    " WHEN c.n = 0 THEN i.text END, i.label, c.n, p.rowid, p.label, p.role,"
    " instr(p.text, '?') > 0, i.seq, instr(i.text, '?') > 0"
)
# Facts that are no longer active keep their rows (history) but are not searched.
_PARTITION_FROM = (
    "FROM items i LEFT JOIN item_chunks c ON c.item = i.rowid"
    " LEFT JOIN vectors v ON v.tenant = i.tenant AND v.hash = coalesce(c.embed_hash, i.embed_hash)"
    " LEFT JOIN facts f ON f.item = i.rowid"
    # The event just before an event, neither indexed as chunks (kenning.store.replies).
    " LEFT JOIN items p ON (c.item IS NULL OR NOT c.lexical) AND i.kind = 'event'"
    " AND p.kind = 'event' AND p.tenant = i.tenant AND p.session = i.session"
    " AND p.seq = i.seq - 1 AND (p.embed_hash IS NOT NULL OR EXISTS (SELECT 1 FROM"
    " item_chunks pc WHERE pc.item = p.rowid AND NOT pc.lexical))"
)
_LIVE = "(f.item IS NULL OR f.status = 'active')"
# What an FTS5 candidate carries besides its id and score (see Candidate).
_FTS5_RECORD = "i.session, i.kind, i.at, i.seq, i.label, i.role, instr(i.text, '?') > 0"
_PARTITION_ORDER = "ORDER BY i.rowid, c.n"
# Column weights of bm25(): text, label (speaker or tool name), scope tokens (never scored).
_BM25_WEIGHTS = "1.0, 0.5, 0.0"


@dataclass
class _Follower(Follower):
    """A loaded partition and how far it has followed the file."""

    log_pos: int  # the last index_log id applied
    hwm: int  # rows with a larger rowid are new to the partition
    saved: tuple[int, int, bool] | None = None  # the partition's state its snapshot holds
    # Per reading connection: its data_version when it last caught up (nothing new since).
    seen: dict[int, int] = field(default_factory=dict)


def _blobs(dimension: int) -> Callable[[list[Any]], npt.NDArray[np.float32]]:
    def stack(blobs: list[Any]) -> npt.NDArray[np.float32]:
        return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, dimension)

    return stack


def _questions_of(conn: Tx, tenant: str) -> Callable[[list[int]], dict[int, Question]]:
    def fetch(rowids: list[int]) -> dict[int, Question]:
        found: list[tuple[int, npt.NDArray[np.float32], str]] = []
        for chunk in chunks(rowids):
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT i.rowid, v.vec, i.text FROM items i"
                " JOIN vectors v ON v.tenant = i.tenant AND v.hash = i.embed_hash"
                f" WHERE i.tenant = ? AND i.rowid IN ({marks})"
                " UNION ALL SELECT i.rowid, v.vec, i.text FROM items i"
                " JOIN item_chunks c ON c.item = i.rowid AND NOT c.lexical"
                " JOIN vectors v ON v.tenant = i.tenant AND v.hash = c.embed_hash"
                f" WHERE i.tenant = ? AND i.rowid IN ({marks})",
                [tenant, *chunk, tenant, *chunk],
            )
            found += [(int(r[0]), np.frombuffer(r[1], dtype=np.float32), r[2]) for r in rows]
        return questions(found)

    return fetch


def _log_head(conn: Tx) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM index_log").fetchone()[0])


def _log_floor(conn: Tx) -> int:
    row = conn.execute(
        "SELECT value FROM store_meta WHERE key = 'index_log_pruned_through'"
    ).fetchone()
    return 0 if row is None else int(row[0])


class SearchTables(search.SearchTables[_Follower], Database):
    """Partitions that follow the file by rowid and log position; BM25 in memory or by FTS5;
    HNSW graphs saved beside the file."""

    def _init_search(
        self, *, lexical: Literal["memory", "fts5"], ann: AnnConfig, reply_weight: float
    ) -> None:
        if lexical not in ("memory", "fts5"):
            raise InvalidInput("lexical must be 'memory' or 'fts5'")
        self._init_partitions(ann=ann, reply_weight=reply_weight)
        self._lexical_mode = lexical
        if lexical == "fts5":
            with self._write(None) as conn:
                ensure_fts(conn)
        # HNSW indexes of reloaded partitions, checked and adopted by the tenant's next one.
        self._spare_indexes: dict[str, HnswIndex] = {}
        # Nodes and excluded nodes of each tenant's saved graph.
        self._saved_nodes: dict[str, tuple[int, int]] = {}
        # Held while an erasure deletes the saved graphs and while a written graph is put in
        # place: a save that dumped before an erasure (counted in _erasures) does not land
        # after it, and an erasure waits for a rename, never for a dump. Saves run one at a
        # time under _dump_lock, taken before _save_lock (an erasure holds only the latter).
        self._save_lock = threading.Lock()
        self._erasures = 0
        self._dump_lock = threading.RLock()

    # -- partitions that follow the database -----------------------------------------------

    def _load(self, conn: Tx, tenant: str) -> _Follower:
        model = self._model_in(conn)
        dimension = model.dimension if model is not None else 0
        follower = self._load_saved(conn, tenant, model)
        if follower is None:
            follower = self._load_rows(conn, tenant, dimension)
            previous = self._adopt(tenant, follower)
        else:
            previous = self._adopt(tenant, follower)
            self._catch_up(conn, tenant, follower)  # what was written since it was saved
        if previous is not None:
            self._release(tenant, previous)
        partition = follower.partition
        prebuilt = self._spare_indexes.pop(tenant, None)
        if prebuilt is None and len(partition) >= self._ann.min_rows and not partition.has_graph:
            prebuilt = self._load_index(tenant, partition)
        partition.start_ann(prebuilt)
        return follower

    def _load_rows(self, conn: Tx, tenant: str, dimension: int) -> _Follower:
        """The tenant's partition read and indexed from its rows."""
        log_pos = _log_head(conn)
        partition = Partition(dimension, ann=self._ann, on_index=self._index_saver(tenant))
        partition.reserve(
            conn.execute(
                "SELECT count(*) FROM items i LEFT JOIN item_chunks c ON c.item = i.rowid"
                " WHERE i.tenant = ?",
                (tenant,),
            ).fetchone()[0]
        )
        cursor = conn.execute(
            f"SELECT {_PARTITION_COLUMNS} {_PARTITION_FROM} WHERE i.tenant = ? AND {_LIVE}"
            f" {_PARTITION_ORDER}",
            (tenant,),
        )
        rows = iter(cursor)
        steps = iter(lambda: list(islice(rows, LOAD_ROWS)), [])
        hwm = self._add_in_steps(conn, tenant, partition, steps)
        return _Follower(partition, log_pos=log_pos, hwm=hwm)

    def _load_saved(self, conn: Tx, tenant: str, model: ModelInfo | None) -> _Follower | None:
        """The tenant's partition from its snapshot beside the file, as of the log position
        it was saved at (None: no usable snapshot; one that is not is removed)."""
        path = self._snapshot_file(tenant)
        if path is None or model is None or not path.exists():
            return None
        key = self._snapshot_key(tenant, model)
        read: os.stat_result | None = None
        try:
            with folder_lock(path.parent, shared=True):
                # Under the folder's lock: the snapshot and the graph it names were put in
                # place together, and no other process replaces either while they are mapped
                # (or while the sampled rows are read from the file by name).
                read = path.stat()
                meta, arrays = read_flat(path)
                graph = self._saved_graph(path, meta, arrays)
                if meta.get("key") != key:
                    raise FlatFileError("saved for another model, weight or format")
                generation, log_pos = int(meta["generation"]), int(meta["log_pos"])
                if erase_generation(conn, tenant) != generation or _log_floor(conn) > log_pos:
                    # Records were erased since (or the log that names them is gone): the
                    # snapshot may hold them, and it is never read.
                    raise FlatFileError("records were erased since it was saved")
                partition = Partition.restored(
                    meta, arrays, ann=self._ann, on_index=self._index_saver(tenant), graph=graph,
                    file_rows=lambda rows: arrays.rows("_matrix", rows),
                )  # fmt: skip
                partition.check_vectors(read=lambda rows: arrays.rows("_matrix", rows))
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            if read is None and isinstance(exc, FileNotFoundError):
                return None  # removed since it was seen (another process found it stale)
            _log.info("rebuilding the partition of a tenant instead of %s: %s", path, exc)
            self._drop_snapshot(path, read)
            return None
        follower = _Follower(partition, log_pos=log_pos, hwm=int(meta["hwm"]))
        follower.saved = partition.state
        status = partition.ann_status()
        if partition.has_graph:
            # Saved with the snapshot, as the graph file was: closing does not write it again.
            self._saved_nodes[tenant] = (status.nodes, status.excluded)
        return follower

    def _saved_graph(
        self, path: Path, meta: dict[str, Any], arrays: MappedArrays
    ) -> HnswIndex | None:
        """The graph a snapshot names, mapped from its file (None: saved without one, or
        this store builds none)."""
        if "graph" not in meta or not self._ann.enabled or not hnsw_available():
            return None
        node_rep = arrays["graph_node_rep"]
        return HnswIndex.read(
            path.with_name(str(meta["graph"])), arrays["graph_prints"], m=self._ann.m,
            exact=lambda nodes: arrays.rows("_matrix", node_rep[nodes]),
        )  # fmt: skip

    def _drop_snapshot(self, path: Path, read: os.stat_result | None) -> None:
        """Remove a snapshot found unusable, unless another process has put a new one in
        its place since it was read."""
        with folder_lock(path.parent), self._save_lock:
            try:
                now = path.stat()
            except FileNotFoundError:
                return
            if read is None or (now.st_ino, now.st_mtime_ns) == (read.st_ino, read.st_mtime_ns):
                path.unlink(missing_ok=True)

    def _catch_up(self, conn: Tx, tenant: str, follower: _Follower) -> None:
        """Apply the deletion log and add the rows committed since the partition last looked.

        Runs inside *conn*'s read transaction, so the log and the rows are one state.
        """
        version = self._read_version(conn)
        if follower.seen.get(id(conn)) == version:
            return
        with follower.lock:
            partition = follower.partition
            model = self._model_in(conn)
            if _log_floor(conn) > follower.log_pos or (
                model is not None and model.dimension != partition.dimension
            ):
                # Fell behind the pruned log, or the first vectors arrived: start over.
                self._load(conn, tenant)
                return
            head = _log_head(conn)
            hwm = follower.hwm
            again: list[int] = []
            if head > follower.log_pos:
                logged = conn.execute(
                    "SELECT item, op FROM index_log WHERE tenant = ? AND id > ?"
                    " AND op IN ('erase', 'hide', 'reindex')",
                    (tenant, follower.log_pos),
                ).fetchall()
                removed = 0
                if logged:
                    gone = np.array([r[0] for r in logged], dtype=np.int64)
                    removed = partition.remove(gone)
                    partition.remix(
                        gone, lambda ids: self._read_rows(conn, tenant, ids, partition.dimension)
                    )
                    again = sorted({int(r[0]) for r in logged if r[1] == "reindex"})
                if removed:
                    # A new row may reuse the rowid of an erased last row: look from the
                    # largest rowid still held.
                    hwm = partition.max_rowid
                    follower.removed += removed
            # Reindexed events come back from their new rows; those above the high-water
            # mark come with the new rows below.
            again = [rowid for rowid in again if rowid <= hwm]
            if again:
                back = self._read_rows(conn, tenant, again, partition.dimension)
                partition.add(back)
                follower.added += len(back.ids)
            rows = conn.execute(
                f"SELECT {_PARTITION_COLUMNS} {_PARTITION_FROM}"
                # Unary + keeps the planner on the rowid range (new rows only) instead of
                # scanning the tenant's whole index on every catch-up.
                f" WHERE i.rowid > ? AND +i.tenant = ? AND {_LIVE} {_PARTITION_ORDER}",
                (hwm, tenant),
            ).fetchall()
            if rows:
                partition.add(self._indexed(conn, tenant, rows, partition.dimension))
                hwm = int(rows[-1][0])
                follower.added += len(rows)
            follower.catch_ups += 1
            follower.hwm, follower.log_pos = hwm, max(head, follower.log_pos)
            follower.seen[id(conn)] = version

    def _read_rows(self, conn: Tx, tenant: str, rowids: list[int], dimension: int) -> IndexRows:
        """The partition rows of the tenant's live records with these rowids."""
        rows: list[Any] = []
        for chunk in chunks(rowids):
            rows += conn.execute(
                f"SELECT {_PARTITION_COLUMNS} {_PARTITION_FROM}"
                f" WHERE i.rowid IN ({','.join('?' * len(chunk))}) AND i.tenant = ?"
                f" AND {_LIVE} {_PARTITION_ORDER}",
                [*chunk, tenant],
            ).fetchall()
        return self._indexed(conn, tenant, rows, dimension)

    def _stack(self, dimension: int) -> Callable[[list[Any]], npt.NDArray[np.float32]]:
        return _blobs(dimension)

    def _questions_of(self, tx: Tx, tenant: str) -> Callable[[list[int]], dict[int, Question]]:
        return _questions_of(tx, tenant)

    def _after_forget(self, tenant: str) -> None:
        # Applied first: a graph dumped from here on names no erased row.
        self._catch_up_loaded({tenant})
        with self._save_lock:
            # Graphs saved, or dumped and not yet in place, before that may name erased rows;
            # the next save writes one without them.
            self._erasures += 1
            self._saved_nodes.pop(tenant, None)
            for index_file in [*self._index_files(tenant), *self._snapshot_files(tenant)]:
                index_file.unlink(missing_ok=True)
        self._prune_log()

    def _after_reindex(self, tenant: str) -> None:
        self._catch_up_loaded({tenant})
        # A reindex logs every event it rewrites: the log is kept as short as after erasures.
        self._prune_log()

    def _catch_up_loaded(self, tenants: set[str]) -> None:
        with self._plock:
            loaded = {t: self._partitions[t] for t in tenants if t in self._partitions}
        if not loaded:
            return
        with self._read(None) as conn:
            for tenant, follower in loaded.items():
                follower.seen.clear()  # this process's own write may not move data_version
                self._catch_up(conn, tenant, follower)

    def _prune_log(self) -> None:
        with self._write(None) as conn:
            head = _log_head(conn)
            if head - _log_floor(conn) <= 2 * LOG_KEEP:
                return
            through = head - LOG_KEEP
            conn.execute("DELETE FROM index_log WHERE id <= ?", (through,))
            conn.execute(
                "INSERT OR REPLACE INTO store_meta (key, value)"
                " VALUES ('index_log_pruned_through', ?)",
                (through,),
            )

    def _release(self, tenant: str, follower: _Follower, *, wait: bool = False) -> None:
        """Stop a partition's index work; a ready HNSW index waits for the next partition."""
        index = follower.partition.release_ann(wait=wait)
        if index is not None:
            self._spare_indexes[tenant] = index

    def _release_all(self) -> None:
        with self._plock:
            followers, self._partitions = self._partitions, {}
        for tenant, follower in followers.items():
            self._save_partition(tenant, follower)
            self._persist_index(tenant, follower.partition, force=True)
            self._release(tenant, follower, wait=True)
        self._spare_indexes.clear()

    # -- candidates ------------------------------------------------------------------------

    def lexical(
        self, scope: Scope, query: str, *, filters: Filters, limit: int,
        also: Sequence[Filters] = (), also_limit: int | None = None,
    ) -> list[Candidate]:  # fmt: skip
        if self._lexical_mode == "memory":
            return super().lexical(
                scope, query, filters=filters, limit=limit, also=also, also_limit=also_limit
            )
        depth = limit if also_limit is None else also_limit
        with self._read(scope):
            return listed_once(
                [
                    self._fts5_lexical(scope, query, filters=filters, limit=limit),
                    *(self._fts5_lexical(scope, query, filters=f, limit=depth) for f in also),
                ]
            )

    def _fts5_lexical(
        self, scope: Scope, query: str, *, filters: Filters, limit: int
    ) -> list[Candidate]:
        terms = text_match(query)
        if not terms:
            return []
        roles = [r.value for r in filters.roles]
        match = f"{scope_match(scope, roles=roles, kinds=filters.kinds)} AND {terms}"
        where, params = where_clause(DIALECT, scope, filters)
        # Closed facts keep their rows (history) but are not searched.
        where += (
            " AND NOT EXISTS (SELECT 1 FROM facts fx WHERE fx.item = i.rowid"
            " AND fx.status != 'active')"
        )
        if filters.needs_sql or filters.since is not None or filters.until is not None:
            # Constraints FTS5 cannot express are joined in before ranking is cut.
            sql = (
                f"SELECT i.id, bm25(items_fts, {_BM25_WEIGHTS}) AS s, {_FTS5_RECORD}"
                " FROM items_fts"
                " JOIN items i ON i.rowid = items_fts.rowid"
                f" WHERE items_fts MATCH ? AND {where} ORDER BY s, i.rowid LIMIT ?"
            )
            args = [match, *params, int(limit)]
        else:
            # The scope is inside MATCH, so FTS5 ranks in-scope rows only and can cut early;
            # the outer constraint re-checks tenancy against the row itself.
            sql = (
                f"SELECT i.id, f.s, {_FTS5_RECORD} FROM"
                f" (SELECT rowid, bm25(items_fts, {_BM25_WEIGHTS}) AS s FROM items_fts"
                " WHERE items_fts MATCH ? ORDER BY s LIMIT ?) f"
                f" JOIN items i ON i.rowid = f.rowid WHERE {where} ORDER BY f.s, i.rowid"
            )
            args = [match, int(limit), *params]
        with self._read(scope) as conn:
            rows = conn.execute(sql, args).fetchall()
            ideal = self._fts5_ideal(conn, query) if rows else 1.0
        return [
            Candidate(
                row[0], -float(row[1]) / ideal, row[2], row[3], float(row[4]),
                turn_position(row[2], row[5], row[6], row[7], row[8]),
            )
            for row in rows
        ]  # fmt: skip

    @staticmethod
    def _fts5_ideal(conn: Tx, query: str) -> float:
        """Σ IDF of the query's terms with FTS5's own (table-wide) statistics."""
        terms = list(dict.fromkeys(stem(word) for word in query_terms(query)))
        total_rows = int(conn.execute("SELECT count(*) FROM items").fetchone()[0])
        marks = ",".join("?" * len(terms))
        df = dict(conn.execute(f"SELECT term, doc FROM items_vocab WHERE term IN ({marks})", terms))
        total = 0.0
        for term in terms:
            n_term = int(df.get(term, 0))
            idf = math.log((total_rows - n_term + 0.5) / (n_term + 0.5))
            total += idf if idf > 0 else 1e-6
        return total or 1.0

    # -- access statistics -----------------------------------------------------------------

    # -- HNSW index lifecycle --------------------------------------------------------------

    def _index_file(self, tenant: str) -> Path | None:
        if self.in_memory or not self._ann.enabled or not self._ann.persist:
            return None
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:32]
        # Answers' vectors depend on the reply weight: a process indexing with another
        # weight keeps its own graph instead of overwriting (and mostly excluding) this one.
        weight = "" if self._reply_weight == DEFAULT_REPLY_WEIGHT else f"-r{self._reply_weight!r}"
        return Path(f"{self._path}.ann") / f"{digest}{weight}.hnsw"

    def _index_files(self, tenant: str) -> list[Path]:
        """Every saved graph of *tenant*, whatever reply weight it was saved under."""
        path = self._index_file(tenant)
        if path is None:
            return []
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:32]
        return [path, *path.parent.glob(f"{digest}-r*.hnsw")]

    def _load_index(self, tenant: str, partition: Partition) -> HnswIndex | None:
        path = self._index_file(tenant)
        if path is None or not path.exists():
            return None
        try:
            index = HnswIndex.loads(path.read_bytes(), partition.vectors_for)
        except (OSError, ValueError, RuntimeError) as exc:
            _log.warning("ignoring unreadable HNSW index %s: %s", path, exc)
            return None
        self._saved_nodes[tenant] = (len(index), int(np.count_nonzero(index.prints == 0)))
        return index

    def _index_saver(self, tenant: str) -> Callable[[Partition], None]:
        def save(partition: Partition) -> None:
            self._persist_index(tenant, partition)

        return save

    def _persist_index(self, tenant: str, partition: Partition, *, force: bool = False) -> None:
        """Save a partition's index beside the database if it changed since saved."""
        path = self._index_file(tenant)
        if path is None or (self._closed and not force):
            return
        with self._plock:
            follower = self._partitions.get(tenant)
        if not force and (follower is None or follower.partition is not partition):
            return
        status = partition.ann_status()
        if self._saved_nodes.get(tenant) == (status.nodes, status.excluded):
            return  # unchanged since saved: not even dumped (a closing CLI search's peak)
        with self._dump_lock:  # one at a time: an older dump never lands over a newer one
            with self._save_lock:
                erasures = self._erasures
            dumped = partition.dump_ann()
            if dumped is None or self._saved_nodes.get(tenant) == dumped[1]:
                return
            tmp = temporary_name(path)
            if _write_file(tmp, dumped[0]):
                self._land(tenant, tmp, path, nodes=dumped[1], erasures=erasures)

    def _land(self, tenant: str, tmp: Path, path: Path, *, nodes: tuple[int, int],
              erasures: int) -> None:  # fmt: skip
        """Put a written graph in place, unless an erasure ran since it was dumped (the graph
        may name erased rows; the next save writes one without them)."""
        with self._save_lock:
            if self._erasures != erasures:
                tmp.unlink(missing_ok=True)
                return
            try:
                os.replace(tmp, path)
            except OSError as exc:
                _log.warning("could not save the HNSW index to %s: %s", path, exc)
                tmp.unlink(missing_ok=True)
                return
            self._saved_nodes[tenant] = nodes

    # -- partition snapshots -----------------------------------------------------------------

    def _snapshot_file(self, tenant: str) -> Path | None:
        """Where the tenant's partition is saved beside the file (None: it is not)."""
        if self.in_memory or not self._ann.persist:
            return None
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:32]
        weight = "" if self._reply_weight == DEFAULT_REPLY_WEIGHT else f"-r{self._reply_weight!r}"
        return Path(f"{self._path}.ann") / f"{digest}{weight}.part"

    def _snapshot_files(self, tenant: str) -> list[Path]:
        """Every snapshot of *tenant*, whatever reply weight it was saved under, and any
        being written (or left by a crash while written)."""
        path = self._snapshot_file(tenant)
        if path is None:
            return []
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:32]
        return list(path.parent.glob(f"{digest}*.part*"))

    def _snapshot_key(self, tenant: str, model: ModelInfo) -> dict[str, object]:
        """What a snapshot was made with; one made otherwise is rebuilt, never read."""
        return {
            "format": _SNAPSHOT_FORMAT, "version": __version__, "tenant": tenant,
            "model": [model.model_id, model.dimension, model.normalized],
            "reply_weight": self._reply_weight, "prints": self._ann.enabled,
        }  # fmt: skip

    def _save_partition(self, tenant: str, follower: _Follower) -> None:
        """Save the partition beside the file if it changed since it was loaded or saved,
        caught up first, with the log position and erase generation it holds."""
        path = self._snapshot_file(tenant)
        if path is None or follower.saved == follower.partition.state:
            return
        try:
            with self._read(None) as conn:
                model = self._model_in(conn)
                if model is None or model.dimension != follower.partition.dimension:
                    return
                if _log_floor(conn) > follower.log_pos:
                    return  # the catch-up would start over: a store closing loads nothing
                follower.seen.clear()
                self._catch_up(conn, tenant, follower)
                with follower.lock, self._dump_lock:
                    with self._save_lock:
                        erasures = self._erasures
                    generation = erase_generation(conn, tenant)
                    meta = {
                        "key": self._snapshot_key(tenant, model), "generation": generation,
                        "log_pos": follower.log_pos, "hwm": follower.hwm,
                    }  # fmt: skip
                    state = follower.partition.state
                    path.parent.mkdir(exist_ok=True)
                    written = follower.partition.saved(
                        lambda own, arrays, graph: _write_snapshot(
                            path, {**own, **meta}, arrays, graph
                        )
                    )
            self._land_snapshot(tenant, written, path, erasures, generation)
        except (OSError, StoreError) as exc:
            _log.warning("could not save the partition to %s: %s", path, exc)
            return
        follower.saved = state

    def _land_snapshot(
        self, tenant: str, written: tuple[Path, Path | None], path: Path, erasures: int,
        generation: int,
    ) -> None:  # fmt: skip
        """Put a written snapshot (its file, and its graph's) in place unless an erasure
        came since it was read: in this process (counted), or in another (its generation
        moved; that process deletes the files after it commits, so one of the two removes
        it). The graph lands first, under the name the snapshot gives it."""
        tmp, graph_tmp = written
        graph = None if graph_tmp is None else _graph_file(path, graph_tmp)
        with folder_lock(path.parent), self._save_lock:
            try:
                if self._erasures != erasures:
                    return
                if graph_tmp is not None and graph is not None:
                    os.replace(graph_tmp, graph)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
                if graph_tmp is not None:
                    graph_tmp.unlink(missing_ok=True)
            for old in path.parent.glob(f"{path.name}.*.graph"):
                if old != graph:
                    old.unlink(missing_ok=True)
            for left in left_by_dead_processes(path.parent):
                left.unlink(missing_ok=True)
        with self._read(None) as conn:
            if erase_generation(conn, tenant) != generation:
                with self._save_lock:
                    for saved in (path, graph):
                        if saved is not None:
                            saved.unlink(missing_ok=True)


def _graph_file(path: Path, graph_tmp: Path) -> Path:
    """Where a snapshot's graph lands: a name of its own (the temporary file's unique part),
    so that a snapshot never names a graph written with another."""
    return path.with_name(f"{path.name}.{graph_tmp.name.rsplit('.', 3)[-3]}.graph")


def _write_snapshot(
    path: Path, meta: dict[str, object], arrays: dict[str, npt.NDArray[Any]],
    graph: HnswIndex | None,
) -> tuple[Path, Path | None]:  # fmt: skip
    """Write a snapshot's graph (when it has one) and then its rows to temporary files
    beside *path*; return both."""
    graph_tmp = None
    if graph is not None:
        graph_tmp = temporary_name(path, "graph.tmp")
        try:
            graph.write(graph_tmp)
        except BaseException:
            graph_tmp.unlink(missing_ok=True)
            raise
        meta = {**meta, "graph": _graph_file(path, graph_tmp).name}
    try:
        return write_flat(path, meta, arrays, unchecked=("_matrix",)), graph_tmp
    except BaseException:
        if graph_tmp is not None:
            graph_tmp.unlink(missing_ok=True)
        raise


def _write_file(tmp: Path, blob: bytes) -> bool:
    try:
        tmp.parent.mkdir(exist_ok=True)
        tmp.write_bytes(blob)
    except OSError as exc:
        _log.warning("could not save the HNSW index to %s: %s", tmp, exc)
        tmp.unlink(missing_ok=True)
        return False
    return True
