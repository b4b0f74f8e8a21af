"""The search index of the PostgreSQL store: in-memory partitions that follow the tables.

Both signals are ranked by the same per-tenant partitions as on SQLite
(:mod:`kenning.store.partition`): BM25 over the tenant's own statistics, calibrated as BM25 / Σ
IDF, and cosine over float32 vectors, exact or through an HNSW graph once a tenant is large.
So scores, and fusion on top of them, are the same on both backends by construction; the
measurements behind this choice (pgvector's HNSW, ``tsvector`` ranking) are in
``docs/scaling.md``.

A loaded partition follows the tables by delta, in every process that holds one. PostgreSQL
commits concurrent transactions in any order, so an identity column's high-water mark could
skip a row committed late with a smaller id. Each row therefore records its writing
transaction (``xact``), and a partition remembers the snapshot it last read: the rows it has
not seen are exactly those of transactions that snapshot showed as running (its ``xip``
list) or had not started (``>= xmax``). Erased rows leave through ``index_log`` the same way.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ModelMismatch
from kenning.records import KINDS, Filters, Scope
from kenning.store.ann import AnnConfig
from kenning.store.partition import AnnStatus, IndexRows, Partition, RowSelector
from kenning.store.partition_rows import index_rows
from kenning.store.postgres.database import Conn, Database
from kenning.store.postgres.sql import pg_sql, where_clause
from kenning.store.records import Candidate, ModelInfo, SessionCandidate
from kenning.store.replies import Question, check_reply_weight, questions
from kenning.text import query_terms, stem

__all__ = ["PartitionStatus", "SearchTables"]

# One row per record, or per chunk of a chunked record (its text span, its own vector), or per
# sentence unit (its own vector; the first unit's text is the record's, the others' none).
# Facts that are no longer active keep their rows (history) but are not searched.
# A chunk's vector, else the item's: two plain equality joins. Joining vectors on
# coalesce(c.embed_hash, i.embed_hash) kept row-level security from pushing the key into the
# index scan (the expression is not leakproof), so once the tables were analyzed each catch-up
# compared every new row with every vector of the tenant (56 s for 777 rows at 100k events).
_PARTITION_SQL = (
    "SELECT i.rowid, i.id, i.user_id, i.session, i.role, i.kind,"
    " extract(epoch FROM i.at)::float8,"
    " CASE WHEN c.embed_hash IS NOT NULL THEN vc.vec ELSE vi.vec END,"
    " CASE WHEN c.item IS NULL THEN i.text"
    " WHEN c.lexical THEN substr(i.text, c.start + 1, c.stop - c.start)"
    " WHEN c.n = 0 THEN i.text END,"
    " i.label, c.n, p.rowid, p.label, p.role, p.asks, i.seq, strpos(i.text, '?') > 0"
    " FROM items i LEFT JOIN item_chunks c ON c.tenant = i.tenant AND c.item = i.rowid"
    " LEFT JOIN vectors vc ON vc.tenant = c.tenant AND vc.hash = c.embed_hash"
    " LEFT JOIN vectors vi ON vi.tenant = i.tenant AND vi.hash = i.embed_hash"
    " LEFT JOIN facts f ON f.tenant = i.tenant AND f.item = i.rowid"
    # The event just before an event, neither indexed as chunks (kenning.store.replies): the
    # session's last event before it, kept when it is the one just before. Row-level security
    # keeps a qual with i.seq - 1 (subtraction is not leakproof) out of the index scan, which
    # then read every turn of the session; p.seq < i.seq reaches the index and the backward
    # scan stops at one row.
    " LEFT JOIN LATERAL (SELECT p.rowid, p.label, p.role, p.seq, p.embed_hash,"
    " strpos(p.text, '?') > 0 AS asks, EXISTS (SELECT 1 FROM item_chunks pc"
    " WHERE pc.tenant = p.tenant AND pc.item = p.rowid AND NOT pc.lexical) AS units"
    " FROM items p"
    " WHERE p.tenant = i.tenant AND p.session = i.session AND p.kind = 'event'"
    " AND p.seq < i.seq ORDER BY p.seq DESC LIMIT 1) p"
    " ON (c.item IS NULL OR NOT c.lexical) AND i.kind = 'event' AND p.seq = i.seq - 1"
    " AND (p.embed_hash IS NOT NULL OR p.units)"
    " WHERE i.tenant = ? AND (f.item IS NULL OR f.status = 'active') {unseen}"
    " ORDER BY i.rowid, c.n"
)
_SNAPSHOT_SQL = (
    "SELECT pg_snapshot_xmax(s)::text::bigint,"
    " ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(s) AS x)"
    " FROM pg_current_snapshot() AS s"
)
# The deletion log keeps this many entries per tenant; a partition that fell further behind
# reloads.
_LOG_KEEP = 50_000


@dataclass(frozen=True, slots=True)
class PartitionStatus:
    """How a tenant's in-memory partition has followed the database in this process.

    ``loads`` counts full loads (the first, and any start-over); ``catch_ups`` the deltas
    applied, ``added``/``removed`` the rows they moved.
    """

    loaded: bool
    rows: int
    loads: int
    catch_ups: int
    added: int
    removed: int


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What a read snapshot saw: transactions below ``xmax`` and not in ``running``."""

    xmax: int
    running: tuple[int, ...]

    @property
    def horizon(self) -> int:
        """The oldest transaction whose rows the snapshot did not see."""
        return min((self.xmax, *self.running))

    def unseen(self, alias: str = "i") -> tuple[str, list[Any]]:
        """SQL that selects the rows of transactions this snapshot did not see."""
        return (
            f"AND ({alias}.xact >= ? OR {alias}.xact = ANY(?))",
            [self.xmax, list(self.running)],
        )


@dataclass
class _Follower:
    """A loaded partition and the snapshot it has followed the tables to."""

    partition: Partition
    seen: _Snapshot
    lock: threading.Lock = field(default_factory=threading.Lock)  # one catch-up at a time
    catch_ups: int = 0
    added: int = 0
    removed: int = 0


def _snapshot(conn: Conn) -> _Snapshot:
    row = conn.execute(_SNAPSHOT_SQL).fetchone()
    assert row is not None
    return _Snapshot(xmax=int(row[0]), running=tuple(int(x) for x in row[1]))


def _rows(
    conn: Conn, tenant: str, unseen: _Snapshot | None, *, rowids: Sequence[int] | None = None
) -> list[Any]:
    """The tenant's partition rows: all, those the snapshot *unseen* did not see, or *rowids*."""
    where, params = ("", []) if unseen is None else unseen.unseen()
    if rowids is not None:
        where, params = "AND i.rowid = ANY(?)", [list(rowids)]
    with conn.raw.cursor(binary=True) as cur:
        cur.execute(pg_sql(_PARTITION_SQL.format(unseen=where)), [tenant, *params])
        return cur.fetchall()


def _questions_of(conn: Conn, tenant: str) -> Callable[[list[int]], dict[int, Question]]:
    """Reads records by rowid as questions (those a catch-up's answers need): a whole record's
    vector, or each of a record's sentence units' (see kenning.store.replies.questions)."""

    def fetch(rowids: list[int]) -> dict[int, Question]:
        with conn.raw.cursor(binary=True) as cur:
            cur.execute(
                pg_sql(
                    "SELECT i.rowid, v.vec, i.text FROM items i"
                    " JOIN vectors v ON v.tenant = i.tenant AND v.hash = i.embed_hash"
                    " WHERE i.tenant = ? AND i.rowid = ANY(?)"
                    " UNION ALL SELECT i.rowid, v.vec, i.text FROM items i JOIN item_chunks c"
                    " ON c.tenant = i.tenant AND c.item = i.rowid AND NOT c.lexical"
                    " JOIN vectors v ON v.tenant = c.tenant AND v.hash = c.embed_hash"
                    " WHERE i.tenant = ? AND i.rowid = ANY(?)"
                ),
                [tenant, rowids, tenant, rowids],
            )
            return questions(
                [(int(r[0]), np.asarray(r[1], dtype=np.float32), r[2]) for r in cur.fetchall()]
            )

    return fetch


class SearchTables(Database):
    """Candidates of both signals and whole-session scores over per-tenant partitions."""

    def _init_search(self, *, ann: AnnConfig, reply_weight: float) -> None:
        try:
            self._reply_weight = check_reply_weight(reply_weight)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        # A PostgreSQL store has no file to keep a graph beside: it is rebuilt after a restart.
        self._ann = replace(ann, persist=False)
        self._partitions: dict[str, _Follower] = {}
        self._plock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}
        self._loads: Counter[str] = Counter()

    # -- partitions that follow the database -----------------------------------------------

    def _partition(self, conn: Conn, tenant: str) -> Partition:
        """The tenant's partition, caught up with what *conn*'s snapshot holds (the
        transaction's tenant setting must be *tenant*)."""
        with self._plock:
            follower = self._partitions.get(tenant)
            loading = self._loading.setdefault(tenant, threading.Lock())
        if follower is None:
            with loading:
                with self._plock:
                    follower = self._partitions.get(tenant)
                if follower is None:
                    return self._load(conn, tenant).partition
        self._catch_up(conn, tenant, follower)
        return follower.partition

    def _load(self, conn: Conn, tenant: str) -> _Follower:
        model = self._model_in(conn)
        dimension = model.dimension if model is not None else 0
        seen = _snapshot(conn)
        rows = _rows(conn, tenant, None)
        partition = Partition(dimension, ann=self._ann)
        partition.add(self._indexed(conn, tenant, rows, dimension))
        follower = _Follower(partition, seen=seen)
        with self._plock:
            self._loads[tenant] += 1
            previous = self._partitions.get(tenant)
            self._partitions[tenant] = follower
        prebuilt = None
        if previous is not None:
            prebuilt = previous.partition.release_ann()
        partition.start_ann(prebuilt)
        return follower

    def _catch_up(self, conn: Conn, tenant: str, follower: _Follower) -> None:
        """Apply the erasures and add the rows committed since the partition last looked.

        Runs inside *conn*'s read transaction, so the log and the rows are one state.
        """
        now = _snapshot(conn)
        if now == follower.seen:
            return
        with follower.lock:
            seen = follower.seen
            if now == seen:
                return
            partition = follower.partition
            model = self._model_in(conn)
            floor = conn.execute(
                "SELECT xact FROM index_log_floor WHERE tenant = ?", (tenant,)
            ).fetchone()
            if (floor is not None and int(floor[0]) >= seen.horizon) or (
                model is not None and model.dimension != partition.dimension
            ):
                # Fell behind the pruned log, or the first vectors arrived: start over.
                self._load(conn, tenant)
                return
            where, params = seen.unseen("l")
            # Erased rows, facts closed since (their rows stay for history), and events
            # whose index rows were rebuilt (they come back from the new rows).
            logged = conn.execute(
                "SELECT l.item, l.op FROM index_log l WHERE l.tenant = ?"
                f" AND l.op IN ('erase', 'hide', 'reindex') {where}",
                [tenant, *params],
            ).fetchall()
            again: set[int] = set()
            if logged:
                gone = np.array([r[0] for r in logged], dtype=np.int64)
                follower.removed += partition.remove(gone)
                self._unmix(conn, tenant, partition, gone)
                again = {int(r[0]) for r in logged if r[1] == "reindex"}
            rows = _rows(conn, tenant, seen)
            # A record written and rebuilt since the last look is among the new rows already.
            again -= {int(r[0]) for r in rows}
            if again:
                rows += _rows(conn, tenant, None, rowids=sorted(again))
            if rows:
                partition.add(self._indexed(conn, tenant, rows, partition.dimension))
                follower.added += len(rows)
            follower.catch_ups += 1
            follower.seen = now

    def _unmix(
        self, conn: Conn, tenant: str, partition: Partition, gone: npt.NDArray[np.int64]
    ) -> None:
        def read(rowids: list[int]) -> IndexRows:
            rows = _rows(conn, tenant, None, rowids=rowids)
            return self._indexed(conn, tenant, rows, partition.dimension)

        partition.remix(gone, read)

    def _indexed(
        self, conn: Conn, tenant: str, rows: Sequence[Sequence[Any]], dimension: int
    ) -> IndexRows:
        return index_rows(
            rows,
            dimension,
            stack=np.stack,
            reply_weight=self._reply_weight,
            fetch=_questions_of(conn, tenant),
        )

    def _after_append(self, tenants: set[str]) -> None:
        # Indexing is paid by the ingest, not by the next search.
        self._catch_up_loaded(tenants)

    def _after_forget(self, tenant: str) -> None:
        self._catch_up_loaded({tenant})
        self._prune_log(tenant)

    def _after_reindex(self, tenant: str) -> None:
        self._catch_up_loaded({tenant})
        # A reindex logs every event it rewrites: the log is kept as short as after erasures.
        self._prune_log(tenant)

    def _catch_up_loaded(self, tenants: set[str]) -> None:
        with self._plock:
            loaded = {t: self._partitions[t] for t in tenants if t in self._partitions}
        for tenant, follower in sorted(loaded.items()):
            with self._read(Scope(tenant)) as conn:
                self._catch_up(conn, tenant, follower)

    def _prune_log(self, tenant: str) -> None:
        with self._write(Scope(tenant)) as conn:
            row = conn.execute(
                "SELECT count(*), max(id) FROM index_log WHERE tenant = ?", (tenant,)
            ).fetchone()
            if row is None or int(row[0]) <= 2 * _LOG_KEEP:
                return
            pruned = conn.execute(
                "DELETE FROM index_log WHERE tenant = ? AND id <= ? RETURNING xact",
                (tenant, int(row[1]) - _LOG_KEEP),
            ).fetchall()
            conn.execute(
                "INSERT INTO index_log_floor (tenant, xact) VALUES (?, ?)"
                " ON CONFLICT (tenant) DO UPDATE"
                " SET xact = greatest(index_log_floor.xact, excluded.xact)",
                (tenant, max(int(r[0]) for r in pruned)),
            )

    def _release_all(self) -> None:
        with self._plock:
            followers, self._partitions = self._partitions, {}
        for follower in followers.values():
            follower.partition.release_ann(wait=True)

    # -- candidates ------------------------------------------------------------------------

    def lexical(
        self,
        scope: Scope,
        query: str,
        *,
        filters: Filters,
        limit: int,
        also: Sequence[Filters] = (),
        also_limit: int | None = None,
    ) -> list[Candidate]:
        terms = [stem(word) for word in query_terms(query)]
        if not terms:
            return []
        with self._read(scope) as conn:
            partition = self._partition(conn, scope.tenant)
            select = self._selector(conn, scope, filters)
            more = [self._selector(conn, scope, f) for f in also]
        return partition.lexical(terms, limit, select, more, also_limit)

    def nearest(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: ModelInfo,
        filters: Filters,
        limit: int,
        also: Sequence[Filters] = (),
        also_limit: int | None = None,
    ) -> list[Candidate]:
        with self._read(scope) as conn:
            stored = self._model_in(conn)
            if stored is None:
                return []
            if stored != model:
                self._mismatch(stored, model)
            partition = self._partition(conn, scope.tenant)
            select = self._selector(conn, scope, filters)
            more = [self._selector(conn, scope, f) for f in also]
        return partition.nearest(
            np.asarray(vector, dtype=np.float32), limit, select, more, also_limit
        )

    @staticmethod
    def _mismatch(stored: ModelInfo, model: ModelInfo) -> None:
        raise ModelMismatch(
            f"this store holds vectors of {stored.model_id} ({stored.dimension}-d); "
            f"refusing {model.model_id} ({model.dimension}-d). Use the same embedder or a "
            "new database"
        )

    def sessions(
        self,
        scope: Scope,
        query: str,
        vector: npt.NDArray[np.float32] | None,
        *,
        model: ModelInfo | None,
        sessions: Sequence[str | None],
        filters: Filters,
    ) -> list[SessionCandidate]:
        terms = [stem(word) for word in query_terms(query)]
        with self._read(scope) as conn:
            if vector is not None:
                if model is None:
                    raise InvalidInput("a query vector needs the model it belongs to")
                stored = self._model_in(conn)
                if stored is None:
                    vector = None
                elif stored != model:
                    self._mismatch(stored, model)
            partition = self._partition(conn, scope.tenant)
            select = self._selector(conn, scope, filters)
        query_vec = None if vector is None else np.asarray(vector, dtype=np.float32)
        scored = partition.sessions(terms, query_vec, select, sessions)
        return list(map(SessionCandidate._make, scored))

    @staticmethod
    def _selector(conn: Conn, scope: Scope, filters: Filters) -> RowSelector:
        """The partition rows a query may rank: the scope and every filter, before ranking."""
        rowids = None
        if filters.needs_sql:
            where, params = where_clause(scope, filters)
            rows = conn.execute(f"SELECT i.rowid FROM items i WHERE {where}", params)
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64)
        return RowSelector(
            user=scope.user,
            session=scope.session,
            roles=tuple(r.value for r in filters.roles),
            kinds=filters.kinds,
            since=None if filters.since is None else filters.since.timestamp(),
            until=None if filters.until is None else filters.until.timestamp(),
            rowids=rowids,
        )

    @contextmanager
    def reading(self, scope: Scope) -> Iterator[None]:
        # The calls inside find this thread's open read transaction and join it.
        with self._read(scope):
            yield

    # -- access statistics -----------------------------------------------------------------

    def touch(self, scope: Scope, ids: Sequence[str], *, at: datetime) -> None:
        if not ids:
            return
        where, params = where_clause(scope, Filters(kinds=KINDS))
        with self._write(scope) as conn:
            conn.execute(
                "INSERT INTO item_access AS a (tenant, item, count, last)"
                f" SELECT i.tenant, i.rowid, 1, ? FROM items i WHERE {where} AND i.id = ANY(?)"
                " ON CONFLICT (tenant, item) DO UPDATE"
                " SET count = a.count + 1, last = excluded.last",
                [at, *params, list(ids)],
            )

    # -- status ----------------------------------------------------------------------------

    def partition_status(self, tenant: str) -> PartitionStatus:
        """How *tenant*'s partition has followed the database (nothing is loaded by asking)."""
        with self._plock:
            follower = self._partitions.get(tenant)
            loads = self._loads[tenant]
        if follower is None:
            return PartitionStatus(False, 0, loads, 0, 0, 0)
        return PartitionStatus(
            loaded=True, rows=len(follower.partition), loads=loads,
            catch_ups=follower.catch_ups, added=follower.added, removed=follower.removed,
        )  # fmt: skip

    def vector_index(self, tenant: str, *, wait_s: float | None = 0.0) -> AnnStatus:
        """The state of *tenant*'s HNSW index (loads the partition); with *wait_s* other than
        0, first waits that long (``None``: as long as it takes) for a running build."""
        with self._read(Scope(tenant)) as conn:
            partition = self._partition(conn, tenant)
        if wait_s != 0.0:
            partition.wait_ann(wait_s)
        return partition.ann_status()
