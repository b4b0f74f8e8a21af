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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.records import Scope
from kenning.store.ann import AnnConfig
from kenning.store.partition import IndexRows, Partition
from kenning.store.postgres.database import Database
from kenning.store.postgres.sql import pg_sql, raw
from kenning.store.replies import Question, questions
from kenning.store.sql import search
from kenning.store.sql.dialect import Tx
from kenning.store.sql.search import LOAD_ROWS, LOG_KEEP, Follower

__all__ = ["SearchTables"]

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
    " i.label, c.n, p.rowid, p.label, p.role, p.asks, i.seq, strpos(i.text, '?') > 0, i.xact"
    " FROM items i LEFT JOIN item_chunks c ON c.tenant = i.tenant AND c.item = i.rowid"
    " LEFT JOIN vectors vc ON vc.tenant = c.tenant AND vc.hash = c.embed_hash"
    " LEFT JOIN vectors vi ON vi.tenant = i.tenant AND vi.hash = i.embed_hash"
    " LEFT JOIN facts f ON f.tenant = i.tenant AND f.item = i.rowid"
    # The event just before an event, neither indexed as chunks (kenning.store.replies): the
    # session's last event before it, kept when it is the one just before. Row-level security
    # keeps a qual with i.seq - 1 (subtraction is not leakproof) out of the index scan, which
    # then read every turn of the session; p.seq < i.seq reaches the index and the backward
    # scan stops at one row.
    # The subquery names the tenant itself (not only i.tenant): Citus routes a statement to
    # one shard only when every table in it is constrained to one tenant value.
    " LEFT JOIN LATERAL (SELECT p.rowid, p.label, p.role, p.seq, p.embed_hash,"
    " strpos(p.text, '?') > 0 AS asks, EXISTS (SELECT 1 FROM item_chunks pc"
    " WHERE pc.tenant = ? AND pc.item = p.rowid AND NOT pc.lexical) AS units"
    " FROM items p"
    " WHERE p.tenant = ? AND p.session = i.session AND p.kind = 'event'"
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


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What a read snapshot saw: transactions below ``xmax`` and not in ``running``."""

    xmax: int
    running: tuple[int, ...]

    def saw(self, xact: int) -> bool:
        """Whether the rows of transaction *xact* were visible to this snapshot."""
        return xact < self.xmax and xact not in self.running

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
class _Follower(Follower):
    """A loaded partition and the snapshot it has followed the tables to."""

    seen: _Snapshot
    #: Rows already in the partition although ``seen`` did not see their transaction. Only
    #: on Citus: a worker commits a row just before the coordinator commits its transaction
    #: (the row's ``xact``), so a read can see a row whose transaction the coordinator's
    #: snapshot still lists as running; the next catch-up asks for it again and skips it.
    early: set[int] = field(default_factory=set)


def _early(rows: Sequence[Any], seen: _Snapshot) -> set[int]:
    """The rowids of *rows* whose transaction (the last column) *seen* did not see."""
    return {int(r[0]) for r in rows if not seen.saw(int(r[-1]))}


def _snapshot(conn: Tx) -> _Snapshot:
    row = conn.execute(_SNAPSHOT_SQL).fetchone()
    assert row is not None
    return _Snapshot(xmax=int(row[0]), running=tuple(int(x) for x in row[1]))


def _rows(
    conn: Tx, tenant: str, unseen: _Snapshot | None, *, rowids: Sequence[int] | None = None
) -> list[Any]:
    """The tenant's partition rows: all, those the snapshot *unseen* did not see, or *rowids*."""
    where, params = ("", []) if unseen is None else unseen.unseen()
    if rowids is not None:
        where, params = "AND i.rowid = ANY(?)", [list(rowids)]
    with raw(conn).cursor(binary=True) as cur:
        cur.execute(pg_sql(_PARTITION_SQL.format(unseen=where)), [tenant] * 3 + params)
        return list(cur.fetchall())


def _questions_of(conn: Tx, tenant: str) -> Callable[[list[int]], dict[int, Question]]:

    def fetch(rowids: list[int]) -> dict[int, Question]:
        with raw(conn).cursor(binary=True) as cur:
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


class SearchTables(search.SearchTables[_Follower], Database):
    """Partitions that follow the tables by transaction snapshots (the index log keeps each
    entry's transaction)."""

    def _init_search(self, *, ann: AnnConfig, reply_weight: float) -> None:
        # A PostgreSQL store has no file to keep a graph beside: it is rebuilt after a restart.
        self._init_partitions(ann=replace(ann, persist=False), reply_weight=reply_weight)

    # -- partitions that follow the database -----------------------------------------------

    def _load(self, conn: Tx, tenant: str) -> _Follower:
        model = self._model_in(conn)
        dimension = model.dimension if model is not None else 0
        seen = _snapshot(conn)
        rows = _rows(conn, tenant, None)
        partition = Partition(dimension, ann=self._ann)
        partition.reserve(len(rows))
        self._add_in_steps(
            conn,
            tenant,
            partition,
            (rows[at : at + LOAD_ROWS] for at in range(0, len(rows), LOAD_ROWS)),
        )
        follower = _Follower(partition, seen=seen, early=_early(rows, seen))
        previous = self._adopt(tenant, follower)
        prebuilt = None
        if previous is not None:
            prebuilt = previous.partition.release_ann()
        partition.start_ann(prebuilt)
        return follower

    def _catch_up(self, conn: Tx, tenant: str, follower: _Follower) -> None:
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
                partition.remix(gone, lambda ids: self._read_rows(conn, tenant, ids, partition))
                again = {int(r[0]) for r in logged if r[1] == "reindex"}
            fetched = _rows(conn, tenant, seen)
            rows = [r for r in fetched if r[0] not in follower.early]
            # A record written and rebuilt since the last look is among the new rows already.
            again -= {int(r[0]) for r in rows}
            if again:
                rows += _rows(conn, tenant, None, rowids=sorted(again))
            if rows:
                partition.add(self._indexed(conn, tenant, rows, partition.dimension))
                follower.added += len(rows)
            follower.catch_ups += 1
            follower.seen = now
            follower.early = _early(fetched, now)

    def _read_rows(
        self, conn: Tx, tenant: str, rowids: list[int], partition: Partition
    ) -> IndexRows:
        rows = _rows(conn, tenant, None, rowids=rowids)
        return self._indexed(conn, tenant, rows, partition.dimension)

    def _stack(self, dimension: int) -> Callable[[list[Any]], npt.NDArray[np.float32]]:
        return np.stack

    def _questions_of(self, tx: Tx, tenant: str) -> Callable[[list[int]], dict[int, Question]]:
        return _questions_of(tx, tenant)

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
            if row is None or int(row[0]) <= 2 * LOG_KEEP:
                return
            pruned = conn.execute(
                "DELETE FROM index_log WHERE tenant = ? AND id <= ? RETURNING xact",
                (tenant, int(row[1]) - LOG_KEEP),
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

    # -- access statistics -----------------------------------------------------------------

    # -- status ----------------------------------------------------------------------------
