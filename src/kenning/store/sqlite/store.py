"""The embedded backend: one SQLite file (WAL), FTS5 full-text index, vectors as float32 BLOBs.

Search runs over in-memory partitions (:mod:`kenning.store.partition`), one per tenant, loaded
lazily from the file and refreshed when another connection has written to it. Lexical ranking
is BM25 either in memory (default: about a millisecond at 100k records) or by FTS5's
``bm25()`` (``lexical="fts5"``: no load step, tens of milliseconds per query at 100k).

A large partition also gets an HNSW index (:class:`~kenning.store.ann.AnnConfig`), built in a
background thread. For a database file it is saved beside it (``<file>.ann/``, the graph and
vector fingerprints, no vectors) and checked against the database when loaded; ``forget``
deletes the saved file and the in-memory index skips vectors no row holds any more until
its rebuild.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ModelMismatch, ScopeConflict, StoreError
from kenning.records import Event, Role, Scope, content_hash, event_label
from kenning.search.filters import KINDS, Filters, where_clause
from kenning.search.query import query_terms, scope_match, scope_terms, text_match
from kenning.search.tokenize import stem
from kenning.store.ann import AnnConfig, HnswIndex
from kenning.store.partition import AnnStatus, IndexRows, Partition, RowSelector
from kenning.store.protocol import (
    Candidate,
    Capabilities,
    EventWrite,
    Item,
    ModelInfo,
    SessionCandidate,
)
from kenning.store.sqlite.context import ContextTables
from kenning.store.sqlite.schema import migrate

__all__ = ["SQLiteStore"]

_log = logging.getLogger(__name__)

_EVENT_COLUMNS = (
    "i.rowid, i.id, i.tenant, i.user, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.tags, i.metadata, i.version, i.content_hash, d.tool_name, d.tool_args, d.tool_result"
)
_ITEM_COLUMNS = (
    "i.id, i.kind, i.tenant, i.user, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.metadata, i.tags, i.access_count, i.last_access"
)
_CHUNK = 500
_PARTITION_COLUMNS = (
    "i.rowid, i.id, i.user, i.session, i.role, i.kind, i.at, v.vec, i.text, i.label"
)
# Column weights of bm25(): text, label (speaker or tool name), scope tokens (never scored).
_BM25_WEIGHTS = "1.0, 0.5, 0.0"


def _ts(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _dumps(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"value is not JSON-serialisable: {exc}") from exc


@lru_cache(maxsize=65_536)
def _stored_scope(tenant: str, user: str | None, session: str | None, agent: str | None) -> Scope:
    # Rows repeat the same few scopes; validating each id once per process is enough.
    return Scope(tenant, user, session, agent)


def _by_ids(count: int) -> str:
    """Rows of alias ``i`` with the given ids (parameters follow the scope's).

    Written as a rowid lookup so the planner never prefers the tenant index over the id index
    (it did at 100k rows without statistics: 35 ms instead of 0.1 ms).
    """
    return f"i.rowid IN (SELECT rowid FROM items WHERE id IN ({','.join('?' * count)}))"


def _chunks(values: Sequence[str], size: int = _CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class SQLiteStore(ContextTables):
    """The embedded :class:`~kenning.store.protocol.Store`.

    >>> store = SQLiteStore(":memory:")
    >>> store.backend
    'sqlite'
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        timeout_s: float = 30.0,
        lexical: Literal["memory", "fts5"] = "memory",
        ann: AnnConfig | None = None,
    ) -> None:
        if lexical not in ("memory", "fts5"):
            raise InvalidInput("lexical must be 'memory' or 'fts5'")
        self._lexical_mode = lexical
        self._path = str(path)
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False, timeout=timeout_s
            )
            if self._path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            # Erased rows are overwritten on disk, not just unlinked.
            self._conn.execute("PRAGMA secure_delete = ON")
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            migrate(self._conn)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite database {self._path!r}: {exc}") from exc
        self._partitions: dict[str, Partition] = {}
        self._ann = ann if ann is not None else AnnConfig()
        # HNSW indexes of dropped partitions, checked and adopted by the tenant's next one.
        self._spare_indexes: dict[str, HnswIndex] = {}
        self._saved_nodes: dict[str, int] = {}
        self._data_version = self._read_data_version()
        self._closed = False

    # -- protocol properties ---------------------------------------------------------------

    @property
    def backend(self) -> str:
        return "sqlite"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(multi_process=self._path != ":memory:")

    @property
    def path(self) -> str:
        return self._path

    # -- plumbing --------------------------------------------------------------------------

    def _read_data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise StoreError("the store is closed")
            try:
                version = self._read_data_version()
                if version != self._data_version:
                    # Another connection committed: the in-memory vectors may be stale.
                    self._drop_partitions()
                    self._data_version = version
                yield self._conn
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite read failed: {exc}") from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One atomic transaction: commit on success, roll back on any exception."""
        with self._read() as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite could not start a transaction: {exc}") from exc
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"SQLite write failed and was rolled back: {exc}") from exc
                raise

    # -- model identity --------------------------------------------------------------------

    def model(self) -> ModelInfo | None:
        with self._read() as conn:
            return self._model(conn)

    @staticmethod
    def _model(conn: sqlite3.Connection) -> ModelInfo | None:
        row = conn.execute(
            "SELECT model_id, dimension, normalized FROM embedding_model WHERE id = 1"
        ).fetchone()
        if row is None:
            return None
        return ModelInfo(model_id=row[0], dimension=int(row[1]), normalized=bool(row[2]))

    def _check_model(self, conn: sqlite3.Connection, model: ModelInfo, *, claim: bool) -> None:
        stored = self._model(conn)
        if stored is None:
            if claim:
                # Partitions loaded before the first vector have no room for vectors.
                self._drop_partitions()
                conn.execute(
                    "INSERT INTO embedding_model (id, model_id, dimension, normalized, created_at)"
                    " VALUES (1, ?, ?, ?, ?)",
                    (model.model_id, model.dimension, int(model.normalized), time.time()),
                )
            return
        if stored != model:
            raise ModelMismatch(
                f"this store holds vectors of {stored.model_id} ({stored.dimension}-d); "
                f"refusing {model.model_id} ({model.dimension}-d). Use the same embedder or a "
                "new database"
            )

    def missing_vectors(self, tenant: str, model: ModelInfo, hashes: Sequence[str]) -> list[str]:
        wanted = list(dict.fromkeys(hashes))
        have: set[str] = set()
        with self._read() as conn:
            self._check_model(conn, model, claim=False)
            if self._model(conn) is None:
                return wanted
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT hash FROM vectors WHERE tenant = ? AND hash IN ({marks})",
                    (tenant, *chunk),
                )
                have.update(row[0] for row in rows)
        return [h for h in wanted if h not in have]

    # -- writes ----------------------------------------------------------------------------

    def append_events(
        self,
        writes: Sequence[EventWrite],
        *,
        model: ModelInfo | None = None,
        vectors: Mapping[tuple[str, str], npt.NDArray[np.float32]] | None = None,
    ) -> list[Event]:
        if vectors and model is None:
            raise InvalidInput("vectors were given without the model they belong to")
        now = time.time()
        out: list[Event] = []
        # Held across commit and indexing so no reader loads the partition in between.
        with self._lock:
            with self._write() as conn:
                if model is not None and vectors:
                    self._check_model(conn, model, claim=True)
                    rows = []
                    for (tenant, digest), vec in vectors.items():
                        arr = np.ascontiguousarray(vec, dtype=np.float32)
                        if arr.shape != (model.dimension,):
                            raise InvalidInput(
                                f"vector for {digest} has shape {arr.shape}, expected "
                                f"({model.dimension},)"
                            )
                        rows.append((tenant, digest, arr.tobytes()))
                    conn.executemany(
                        "INSERT OR IGNORE INTO vectors (tenant, hash, vec) VALUES (?, ?, ?)", rows
                    )
                last_seq: dict[tuple[str, str], int] = {}
                for write in writes:
                    scope = write.scope.require_session()
                    event = write.event
                    assert scope.user is not None and scope.session is not None
                    key = (scope.tenant, scope.session)
                    if key not in last_seq:
                        last_seq[key] = self._claim_session(conn, scope, now)
                    seq = last_seq[key] + 1
                    last_seq[key] = seq
                    at = event.at or _ts(now)
                    digest = content_hash(event.content)
                    event_id = f"ev_{uuid.uuid4().hex}"
                    role = Role(event.role)
                    cur = conn.execute(
                        "INSERT INTO items (id, kind, tenant, user, session, agent, seq, role,"
                        " label, text, scope_terms, at, tags, metadata, version, content_hash,"
                        " embed_hash, created_at)"
                        " VALUES (?, 'event', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            event_id, scope.tenant, scope.user, scope.session, scope.agent, seq,
                            role.value, event_label(event), event.content,
                            scope_terms(scope.tenant, scope.user, scope.session, role.value,
                                        "event"),
                            at.timestamp(),
                            json.dumps(list(event.tags)), _dumps(dict(event.metadata)),
                            event.version, digest, write.embed_hash, now,
                        ),
                    )  # fmt: skip
                    if (
                        event.tool_name
                        or event.tool_args is not None
                        or event.tool_result is not None
                    ):
                        conn.execute(
                            "INSERT INTO event_details (item, tool_name, tool_args, tool_result)"
                            " VALUES (?, ?, ?, ?)",
                            (
                                cur.lastrowid,
                                event.tool_name,
                                _dumps(event.tool_args),
                                _dumps(event.tool_result),
                            ),
                        )
                    out.append(
                        Event(
                            id=event_id, scope=scope, seq=seq, role=role, content=event.content,
                            at=at, tool_name=event.tool_name, tool_args=event.tool_args,
                            tool_result=event.tool_result, metadata=dict(event.metadata),
                            tags=tuple(event.tags), version=event.version, content_hash=digest,
                        )
                    )  # fmt: skip
                for (tenant, session), seq in last_seq.items():
                    conn.execute(
                        "UPDATE sessions SET last_seq = ? WHERE tenant = ? AND session = ?",
                        (seq, tenant, session),
                    )
            self._index_new(out)
        return out

    @staticmethod
    def _claim_session(conn: sqlite3.Connection, scope: Scope, now: float) -> int:
        row = conn.execute(
            "SELECT user, last_seq FROM sessions WHERE tenant = ? AND session = ?",
            (scope.tenant, scope.session),
        ).fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO sessions (tenant, session, user, last_seq, created_at)"
                " VALUES (?, ?, ?, 0, ?)",
                (scope.tenant, scope.session, scope.user, now),
            )
            return 0
        if row[0] != scope.user:
            raise ScopeConflict(
                f"session {scope.session!r} belongs to another user of tenant {scope.tenant!r}; "
                "session ids are unique within a tenant"
            )
        return int(row[1])

    def _index_new(self, events: Sequence[Event]) -> None:
        """Add freshly committed events to partitions that are already loaded."""
        tenants = {e.scope.tenant for e in events} & set(self._partitions)
        for tenant in tenants:
            ids = [e.id for e in events if e.scope.tenant == tenant]
            with self._read() as conn:
                rows = []
                for chunk in _chunks(ids):
                    rows.extend(
                        conn.execute(
                            f"SELECT {_PARTITION_COLUMNS} FROM items i LEFT JOIN vectors v"
                            " ON v.tenant = i.tenant AND v.hash = i.embed_hash"
                            f" WHERE i.tenant = ? AND {_by_ids(len(chunk))} ORDER BY i.rowid",
                            (tenant, *chunk),
                        ).fetchall()
                    )
                partition = self._partitions.get(tenant)
                if partition is not None:
                    partition.add(self._index_rows(rows, partition.dimension))

    # -- reads -----------------------------------------------------------------------------

    def events(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        after_seq: int | None = None,
        limit: int | None = None,
        tail: int | None = None,
    ) -> list[Event]:
        where, params = where_clause(scope, Filters(kinds=("event",)), row_check=ids is not None)
        if after_seq is not None:
            where += " AND i.seq > ?"
            params.append(after_seq)
        if ids is not None:
            if not ids:
                return []
            where += f" AND {_by_ids(len(ids))}"
            params.extend(ids)
        order = "i.seq" if scope.session is not None else "i.at, i.session, i.seq"
        if tail is not None:
            order = ", ".join(f"{column} DESC" for column in order.split(", "))
        sql = (
            f"SELECT {_EVENT_COLUMNS} FROM items i LEFT JOIN event_details d ON d.item = i.rowid"
            f" WHERE {where} ORDER BY {order}"
        )
        count = tail if tail is not None else limit
        if count is not None:
            sql += " LIMIT ?"
            params.append(int(count))
        with self._read() as conn:
            rows = [self._event(row) for row in conn.execute(sql, params)]
        return rows[::-1] if tail is not None else rows

    @staticmethod
    def _event(row: Sequence[Any]) -> Event:
        return Event(
            id=row[1],
            scope=_stored_scope(row[2], row[3], row[4], row[5]),
            seq=int(row[6]),
            role=Role(row[7]),
            content=row[8],
            at=_ts(row[9]),
            tags=tuple(json.loads(row[10])),
            metadata=json.loads(row[11]),
            version=row[12],
            content_hash=row[13],
            tool_name=row[14],
            tool_args=None if row[15] is None else json.loads(row[15]),
            tool_result=None if row[16] is None else json.loads(row[16]),
        )

    def items(self, scope: Scope, ids: Sequence[str]) -> list[Item]:
        out: list[Item] = []
        with self._read() as conn:
            for chunk in _chunks(list(ids)):
                where, params = where_clause(scope, Filters(kinds=KINDS), row_check=True)
                sql = f"SELECT {_ITEM_COLUMNS} FROM items i WHERE {where} AND {_by_ids(len(chunk))}"
                for row in conn.execute(sql, [*params, *chunk]):
                    out.append(
                        Item(
                            id=row[0], kind=row[1],
                            scope=_stored_scope(row[2], row[3], row[4], row[5]),
                            seq=int(row[6]), role=Role(row[7]), text=row[8], at=_ts(row[9]),
                            metadata=json.loads(row[10]), tags=tuple(json.loads(row[11])),
                            access_count=int(row[12]),
                            last_access=None if row[13] is None else _ts(row[13]),
                        )
                    )  # fmt: skip
        return out

    def lexical(self, scope: Scope, query: str, *, filters: Filters, limit: int) -> list[Candidate]:
        if self._lexical_mode == "memory":
            terms = [stem(word) for word in query_terms(query)]
            if not terms:
                return []
            with self._read() as conn:
                partition = self._partition(conn, scope.tenant)
                select = self._selector(conn, scope, filters)
                hits = partition.lexical(terms, limit, select)
            return [Candidate(id=i, score=s, session=g) for i, s, g in hits]
        return self._fts5_lexical(scope, query, filters=filters, limit=limit)

    def _fts5_lexical(
        self, scope: Scope, query: str, *, filters: Filters, limit: int
    ) -> list[Candidate]:
        terms = text_match(query)
        if not terms:
            return []
        roles = [r.value for r in filters.roles]
        match = f"{scope_match(scope, roles=roles, kinds=filters.kinds)} AND {terms}"
        where, params = where_clause(scope, filters)
        if filters.needs_sql or filters.since is not None or filters.until is not None:
            # Constraints FTS5 cannot express are joined in before ranking is cut.
            sql = (
                f"SELECT i.id, bm25(items_fts, {_BM25_WEIGHTS}) AS s, i.session FROM items_fts"
                " JOIN items i ON i.rowid = items_fts.rowid"
                f" WHERE items_fts MATCH ? AND {where} ORDER BY s, i.rowid LIMIT ?"
            )
            args = [match, *params, int(limit)]
        else:
            # The scope is inside MATCH, so FTS5 ranks in-scope rows only and can cut early;
            # the outer constraint re-checks tenancy against the row itself.
            sql = (
                "SELECT i.id, f.s, i.session FROM"
                f" (SELECT rowid, bm25(items_fts, {_BM25_WEIGHTS}) AS s FROM items_fts"
                " WHERE items_fts MATCH ? ORDER BY s LIMIT ?) f"
                f" JOIN items i ON i.rowid = f.rowid WHERE {where} ORDER BY f.s, i.rowid"
            )
            args = [match, int(limit), *params]
        with self._read() as conn:
            rows = conn.execute(sql, args).fetchall()
            ideal = self._fts5_ideal(conn, query) if rows else 1.0
        return [Candidate(id=row[0], score=-float(row[1]) / ideal, session=row[2]) for row in rows]

    @staticmethod
    def _fts5_ideal(conn: sqlite3.Connection, query: str) -> float:
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

    def nearest(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: ModelInfo,
        filters: Filters,
        limit: int,
    ) -> list[Candidate]:
        with self._read() as conn:
            self._check_model(conn, model, claim=False)
            if self._model(conn) is None:
                return []
            partition = self._partition(conn, scope.tenant)
            select = self._selector(conn, scope, filters)
            query = np.asarray(vector, dtype=np.float32)
            hits = partition.nearest(query, limit, select)
        return [Candidate(id=i, score=s, session=g) for i, s, g in hits]

    def sessions(
        self,
        scope: Scope,
        query: str,
        vector: npt.NDArray[np.float32] | None,
        *,
        model: ModelInfo | None,
        sessions: Sequence[str | None],
    ) -> list[SessionCandidate]:
        terms = [stem(word) for word in query_terms(query)]
        with self._read() as conn:
            if vector is not None:
                if model is None:
                    raise InvalidInput("a query vector needs the model it belongs to")
                self._check_model(conn, model, claim=False)
                if self._model(conn) is None:
                    vector = None
            partition = self._partition(conn, scope.tenant)
            select = RowSelector(user=scope.user, session=scope.session)
            query_vec = None if vector is None else np.asarray(vector, dtype=np.float32)
            scored = partition.sessions(terms, query_vec, select, sessions)
        return [SessionCandidate(session=g, lexical=lx, cosine=c) for g, lx, c in scored]

    @staticmethod
    def _selector(conn: sqlite3.Connection, scope: Scope, filters: Filters) -> RowSelector:
        """The partition rows a query may rank: the scope and every filter, before ranking."""
        rowids = None
        if filters.needs_sql:
            where, params = where_clause(scope, filters)
            sql = f"SELECT i.rowid FROM items i WHERE {where}"
            rowids = np.fromiter((r[0] for r in conn.execute(sql, params)), dtype=np.int64)
        return RowSelector(
            user=scope.user,
            session=scope.session,
            roles=tuple(r.value for r in filters.roles),
            kinds=filters.kinds,
            since=None if filters.since is None else filters.since.timestamp(),
            until=None if filters.until is None else filters.until.timestamp(),
            rowids=rowids,
        )

    def _partition(self, conn: sqlite3.Connection, tenant: str) -> Partition:
        found = self._partitions.get(tenant)
        if found is not None:
            return found
        model = self._model(conn)
        dimension = model.dimension if model is not None else 0
        rows = conn.execute(
            f"SELECT {_PARTITION_COLUMNS} FROM items i LEFT JOIN vectors v"
            " ON v.tenant = i.tenant AND v.hash = i.embed_hash"
            " WHERE i.tenant = ? ORDER BY i.rowid",
            (tenant,),
        ).fetchall()
        partition = Partition(dimension, ann=self._ann, on_index=self._index_saver(tenant))
        partition.add(self._index_rows(rows, dimension))
        self._partitions[tenant] = partition
        prebuilt = self._spare_indexes.pop(tenant, None)
        if prebuilt is None and len(partition) >= self._ann.min_rows:
            prebuilt = self._load_index(tenant, partition)
        partition.start_ann(prebuilt)
        return partition

    # -- HNSW index lifecycle --------------------------------------------------------------

    def _drop_partitions(self, tenant: str | None = None, *, wait: bool = False) -> None:
        """Unload partitions; a ready HNSW index waits for the tenant's next partition."""
        for name in list(self._partitions) if tenant is None else [tenant]:
            partition = self._partitions.pop(name, None)
            if partition is not None:
                index = partition.release_ann(wait=wait)
                if index is not None:
                    self._spare_indexes[name] = index

    def _index_file(self, tenant: str) -> Path | None:
        if self._path == ":memory:" or not self._ann.enabled or not self._ann.persist:
            return None
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:32]
        return Path(f"{self._path}.ann") / f"{digest}.hnsw"

    def _load_index(self, tenant: str, partition: Partition) -> HnswIndex | None:
        path = self._index_file(tenant)
        if path is None or not path.exists():
            return None
        try:
            index = HnswIndex.loads(path.read_bytes(), partition.vectors_for)
        except (OSError, ValueError, RuntimeError) as exc:
            _log.warning("ignoring unreadable HNSW index %s: %s", path, exc)
            return None
        self._saved_nodes[tenant] = len(index)
        return index

    def _index_saver(self, tenant: str) -> Callable[[Partition], None]:
        def save(partition: Partition) -> None:
            self._persist_index(tenant, partition)

        return save

    def _persist_index(self, tenant: str, partition: Partition) -> None:
        """Save a partition's complete index beside the database if it changed since saved."""
        path = self._index_file(tenant)
        if path is None or self._closed or self._partitions.get(tenant) is not partition:
            return
        dumped = partition.dump_ann()
        if dumped is None or self._saved_nodes.get(tenant) == dumped[1]:
            return
        blob, nodes = dumped
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(exist_ok=True)
            tmp.write_bytes(blob)
            os.replace(tmp, path)
        except OSError as exc:
            _log.warning("could not save the HNSW index to %s: %s", path, exc)
            tmp.unlink(missing_ok=True)
            return
        self._saved_nodes[tenant] = nodes

    def vector_index(self, tenant: str, *, wait_s: float | None = 0.0) -> AnnStatus:
        """The state of *tenant*'s HNSW index (loads the partition); with *wait_s* other than
        0, first waits that long (``None``: as long as it takes) for a running build.

        >>> SQLiteStore().vector_index("acme").state
        'off'
        """
        with self._read() as conn:
            partition = self._partition(conn, tenant)
        if wait_s != 0.0:
            partition.wait_ann(wait_s)
        return partition.ann_status()

    @staticmethod
    def _index_rows(rows: Sequence[Sequence[Any]], dimension: int) -> IndexRows:
        has_vector = np.array([r[7] is not None for r in rows], dtype=np.bool_)
        matrix = np.zeros((len(rows), dimension), dtype=np.float32)
        if dimension and has_vector.any():
            blob = b"".join(r[7] for r in rows if r[7] is not None)
            matrix[has_vector] = np.frombuffer(blob, dtype=np.float32).reshape(-1, dimension)
        return IndexRows(
            ids=[r[1] for r in rows],
            rowids=np.array([r[0] for r in rows], dtype=np.int64),
            vectors=matrix,
            has_vector=has_vector if dimension else np.zeros(len(rows), dtype=np.bool_),
            texts=[r[8] for r in rows],
            labels=[r[9] for r in rows],
            users=[r[2] for r in rows],
            sessions=[r[3] for r in rows],
            roles=[r[4] for r in rows],
            kinds=[r[5] for r in rows],
            ats=np.array([r[6] for r in rows], dtype=np.float64),
        )

    # -- access stats and token counts -----------------------------------------------------

    def touch(self, scope: Scope, ids: Sequence[str], *, at: datetime) -> None:
        if not ids:
            return
        with self._write() as conn:
            for chunk in _chunks(list(ids)):
                where, params = where_clause(scope, Filters(kinds=KINDS), row_check=True)
                conn.execute(
                    "UPDATE items AS i SET access_count = access_count + 1, last_access = ?"
                    f" WHERE {where} AND {_by_ids(len(chunk))}",
                    [at.timestamp(), *params, *chunk],
                )

    def token_counts(self, scope: Scope, ids: Sequence[str], encoding: str) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._read() as conn:
            for chunk in _chunks(list(ids)):
                where, params = where_clause(scope, Filters(kinds=KINDS), row_check=True)
                rows = conn.execute(
                    "SELECT i.id, t.n FROM token_counts t JOIN items i ON i.rowid = t.item"
                    f" WHERE t.encoding = ? AND {where}"
                    f" AND {_by_ids(len(chunk))}",
                    [encoding, *params, *chunk],
                )
                out.update((row[0], int(row[1])) for row in rows)
        return out

    def put_token_counts(self, scope: Scope, encoding: str, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        where, params = where_clause(scope, Filters(kinds=KINDS), row_check=True)
        with self._write() as conn:
            for record_id, n in counts.items():
                conn.execute(
                    "INSERT OR REPLACE INTO token_counts (item, encoding, n)"
                    f" SELECT i.rowid, ?, ? FROM items i WHERE {where} AND {_by_ids(1)}",
                    [encoding, int(n), *params, record_id],
                )

    # -- erasure ---------------------------------------------------------------------------

    def forget(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        before: datetime | None = None,
    ) -> int:
        where, params = where_clause(scope, Filters(kinds=KINDS), row_check=ids is not None)
        if ids is not None:
            if not ids:
                return 0
            where += f" AND {_by_ids(len(ids))}"
            params.extend(ids)
        if before is not None:
            where += " AND i.at < ?"
            params.append(before.timestamp())
        with self._write() as conn:
            doomed = conn.execute(
                f"SELECT i.id, i.session, i.seq FROM items i WHERE {where}", params
            ).fetchall()
            cur = conn.execute(
                f"DELETE FROM items WHERE rowid IN (SELECT i.rowid FROM items i WHERE {where})",
                params,
            )
            erased = int(cur.rowcount)
            conn.execute(
                "DELETE FROM vectors WHERE tenant = ? AND hash NOT IN"
                " (SELECT embed_hash FROM items WHERE tenant = ? AND embed_hash IS NOT NULL)",
                (scope.tenant, scope.tenant),
            )
            conn.execute(
                "DELETE FROM sessions AS s WHERE s.tenant = ? AND NOT EXISTS"
                " (SELECT 1 FROM items i WHERE i.tenant = s.tenant AND i.session = s.session)",
                (scope.tenant,),
            )
            self._forget_context(conn, scope, [(r[0], r[1], int(r[2] or 0)) for r in doomed])
        self._drop_partitions(scope.tenant)
        index_file = self._index_file(scope.tenant)
        if erased and index_file is not None:
            # The saved graph names erased rows; the next build saves a new one.
            self._saved_nodes.pop(scope.tenant, None)
            index_file.unlink(missing_ok=True)
        if erased and self._path != ":memory:":
            with self._read() as conn:
                # Erased text must not linger in the write-ahead log either.
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return erased

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                for tenant, partition in list(self._partitions.items()):
                    self._persist_index(tenant, partition)
                self._closed = True
                self._drop_partitions(wait=True)
                self._spare_indexes.clear()
                try:
                    self._conn.close()
                except sqlite3.Error as exc:  # pragma: no cover - close rarely fails
                    raise StoreError(f"closing SQLite failed: {exc}") from exc

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
