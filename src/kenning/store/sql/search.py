"""The search index on every SQL backend: in-memory partitions, one per tenant, that follow the
database by delta, and the candidates and session scores they give.

A tenant's partition (:mod:`kenning.store.partition`) is loaded lazily and catches up with what
any process committed since it last looked: new rows are added, rows named in the index log
(erased, closed facts, rebuilt events) are removed. How a backend tells what is new differs
(SQLite: a rowid high-water mark and the log's position; PostgreSQL: transaction snapshots), so
:meth:`SearchTables._load` and :meth:`SearchTables._catch_up` are the backend's; everything
else is here.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ModelMismatch
from kenning.records import KINDS, Filters, Scope
from kenning.store.ann import AnnConfig
from kenning.store.partition import AnnStatus, IndexRows, Partition, RowSelector
from kenning.store.partition_rows import index_rows
from kenning.store.records import Candidate, ModelInfo, SessionCandidate
from kenning.store.replies import Question, check_reply_weight
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.dialect import Tx
from kenning.store.sql.query import where_clause
from kenning.telemetry import stage
from kenning.text import query_terms, stem

__all__ = ["LOAD_ROWS", "LOG_KEEP", "Follower", "PartitionStatus", "SearchTables"]

# The deletion log keeps this many entries; a partition that fell further behind reloads.
LOG_KEEP = 50_000
# Rows a partition load indexes per step. A step holds its fetched rows, their texts and a
# stacked copy of their vectors beside the partition's own: at 1,024 the first search on
# LoCoMo dev peaks 13 MB lower than at 8,192, and loads in the same time.
LOAD_ROWS = 1024


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


@dataclass
class Follower:
    """A loaded partition and how far it has followed the database (a backend adds how it
    tells)."""

    partition: Partition
    lock: threading.Lock = field(default_factory=threading.Lock, kw_only=True)
    catch_ups: int = field(default=0, kw_only=True)
    added: int = field(default=0, kw_only=True)
    removed: int = field(default=0, kw_only=True)


_F = TypeVar("_F", bound=Follower)


class SearchTables(SqlDatabase, Generic[_F]):
    """Candidates of both signals and whole-session scores over per-tenant partitions."""

    def _init_partitions(self, *, ann: AnnConfig, reply_weight: float) -> None:
        try:
            self._reply_weight = check_reply_weight(reply_weight)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        self._ann = ann
        self._partitions: dict[str, _F] = {}
        self._plock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}
        self._loads: Counter[str] = Counter()

    # -- partitions that follow the database -----------------------------------------------

    @abstractmethod
    def _load(self, tx: Tx, tenant: str) -> _F:
        """Load the tenant's partition from what *tx* sees and make it the tenant's."""

    @abstractmethod
    def _catch_up(self, tx: Tx, tenant: str, follower: _F) -> None:
        """Bring *follower* up to what *tx* sees (inside its read transaction, so the log and
        the rows are one state)."""

    @abstractmethod
    def _questions_of(self, tx: Tx, tenant: str) -> Callable[[list[int]], dict[int, Question]]:
        """Reads records by rowid as questions (those a catch-up's answers need): a whole
        record's vector, or each of a record's sentence units'
        (:func:`kenning.store.replies.questions`)."""

    @abstractmethod
    def _stack(self, dimension: int) -> Callable[[list[Any]], npt.NDArray[np.float32]]:
        """Stacks the stored vectors of partition rows into a matrix."""

    def _partition(self, tx: Tx, tenant: str) -> Partition:
        """The tenant's partition, caught up with what *tx*'s snapshot holds."""
        with self._plock:
            follower = self._partitions.get(tenant)
            loading = self._loading.setdefault(tenant, threading.Lock())
        if follower is None:
            with loading:
                with self._plock:
                    follower = self._partitions.get(tenant)
                if follower is None:
                    return self._load(tx, tenant).partition
        self._catch_up(tx, tenant, follower)
        return follower.partition

    def _adopt(self, tenant: str, follower: _F) -> _F | None:
        """Make *follower* the tenant's; return the one it replaces."""
        with self._plock:
            self._loads[tenant] += 1
            previous = self._partitions.get(tenant)
            self._partitions[tenant] = follower
        return previous

    def _add_in_steps(
        self, tx: Tx, tenant: str, partition: Partition, batches: Iterable[Sequence[Any]]
    ) -> int:
        """Add the partition rows of *batches* (in rowid order) to *partition* a step at a
        time, each record whole (its rows are adjacent); return the largest rowid. A load
        that indexed every row at once held the vectors three times over (the rows, the
        stacked vectors, the matrix)."""
        held: list[Any] = []
        hwm = 0
        for batch in batches:
            rows = held + list(batch)
            if not rows:
                continue
            hwm = int(rows[-1][0])
            cut = len(rows)
            while cut and rows[cut - 1][0] == hwm:
                cut -= 1  # the last record may go on in the next step
            if cut:
                partition.add(self._indexed(tx, tenant, rows[:cut], partition.dimension))
            held = rows[cut:]
        if held:
            partition.add(self._indexed(tx, tenant, held, partition.dimension))
        return hwm

    def _indexed(
        self, tx: Tx, tenant: str, rows: Sequence[Sequence[Any]], dimension: int
    ) -> IndexRows:
        return index_rows(
            rows,
            dimension,
            stack=self._stack(dimension),
            reply_weight=self._reply_weight,
            fetch=self._questions_of(tx, tenant),
        )

    def _after_append(self, tenants: set[str]) -> None:
        # Indexing is paid by the ingest, not by the next search.
        super()._after_append(tenants)
        with stage("index"):
            self._catch_up_loaded(tenants)

    def _loaded(self, tenants: set[str]) -> dict[str, _F]:
        with self._plock:
            return {t: self._partitions[t] for t in sorted(tenants) if t in self._partitions}

    @abstractmethod
    def _catch_up_loaded(self, tenants: set[str]) -> None:
        """Bring the loaded partitions of *tenants* up to date after this process wrote."""

    # -- candidates ------------------------------------------------------------------------

    def lexical(
        self, scope: Scope, query: str, *, filters: Filters, limit: int,
        also: Sequence[Filters] = (), also_limit: int | None = None,
    ) -> list[Candidate]:  # fmt: skip
        terms = [stem(word) for word in query_terms(query)]
        if not terms:
            return []
        with self._read(scope) as tx:
            partition = self._partition(tx, scope.tenant)
            select = self._selector(tx, scope, filters)
            more = [self._selector(tx, scope, f) for f in also]
        return partition.lexical(terms, limit, select, more, also_limit)

    def nearest(
        self, scope: Scope, vector: npt.NDArray[np.float32], *, model: ModelInfo, filters: Filters,
        limit: int, also: Sequence[Filters] = (), also_limit: int | None = None,
    ) -> list[Candidate]:  # fmt: skip
        with self._read(scope) as tx:
            stored = self._model_in(tx)
            if stored is None:
                return []
            if stored != model:
                _mismatch(stored, model)
            partition = self._partition(tx, scope.tenant)
            select = self._selector(tx, scope, filters)
            more = [self._selector(tx, scope, f) for f in also]
        return partition.nearest(
            np.asarray(vector, dtype=np.float32), limit, select, more, also_limit
        )

    def sessions(
        self, scope: Scope, query: str, vector: npt.NDArray[np.float32] | None, *,
        model: ModelInfo | None, sessions: Sequence[str | None], filters: Filters,
    ) -> list[SessionCandidate]:  # fmt: skip
        terms = [stem(word) for word in query_terms(query)]
        with self._read(scope) as tx:
            if vector is not None:
                if model is None:
                    raise InvalidInput("a query vector needs the model it belongs to")
                stored = self._model_in(tx)
                if stored is None:
                    vector = None
                elif stored != model:
                    _mismatch(stored, model)
            partition = self._partition(tx, scope.tenant)
            select = self._selector(tx, scope, filters)
        query_vec = None if vector is None else np.asarray(vector, dtype=np.float32)
        scored = partition.sessions(terms, query_vec, select, sessions)
        return list(map(SessionCandidate._make, scored))

    def _selector(self, tx: Tx, scope: Scope, filters: Filters) -> RowSelector:
        """The partition rows a query may rank: the scope and every filter, before ranking."""
        rowids = None
        if filters.needs_sql:
            where, params = where_clause(self._d, scope, filters)
            rows = tx.execute(f"SELECT i.rowid FROM items i WHERE {where}", params)
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

    # -- access statistics -----------------------------------------------------------------

    def touch(self, scope: Scope, ids: Sequence[str], *, at: datetime) -> None:
        if not ids:
            return
        d = self._d
        with self._write(scope) as tx:
            for part in d.batches(list(ids)):
                where, params = where_clause(d, scope, Filters(kinds=KINDS), row_check=True)
                cond, more = d.ids_in("i", part)
                tx.execute(
                    f"INSERT INTO item_access AS a ({d.item_columns}, count, last)"
                    f" SELECT {d.item_key_of('i')}, 1, ? FROM items i WHERE {where} AND {cond}"
                    f" ON CONFLICT ({d.item_columns})"
                    " DO UPDATE SET count = a.count + 1, last = excluded.last",
                    [d.time(at), *params, *more],
                )

    # -- status ----------------------------------------------------------------------------

    def partition_status(self, tenant: str) -> PartitionStatus:
        """How *tenant*'s partition has followed the database (nothing is loaded by asking).

        >>> from kenning.store.sqlite.store import SQLiteStore
        >>> SQLiteStore().partition_status("acme").loaded
        False
        """
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
        0, first waits that long (``None``: as long as it takes) for a running build.

        >>> from kenning.store.sqlite.store import SQLiteStore
        >>> SQLiteStore().vector_index("acme").state
        'off'
        """
        with self._read(Scope(tenant)) as tx:
            partition = self._partition(tx, tenant)
        if wait_s != 0.0:
            partition.wait_ann(wait_s)
        return partition.ann_status()


def _mismatch(stored: ModelInfo, model: ModelInfo) -> None:
    raise ModelMismatch(
        f"this store holds vectors of {stored.model_id} ({stored.dimension}-d); "
        f"refusing {model.model_id} ({model.dimension}-d). Use the same embedder or a "
        "new database"
    )
