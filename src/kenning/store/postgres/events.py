"""The event log of the PostgreSQL store: sessions, events, their vectors, token counts, erasure.

A mixin of :class:`~kenning.store.postgres.store.PostgresStore`; every statement carries the
scope's tenant predicate, and row-level security admits only the transaction's tenant.

Bulk writes go through ``COPY``: rows are copied into a temporary staging table (PostgreSQL
does not accept ``COPY FROM`` into a table under row-level security), then moved with one
``INSERT ... SELECT``, which the policies check row by row.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ModelMismatch, ScopeConflict
from kenning.records import KINDS, Event, Filters, Role, Scope, content_hash, event_label
from kenning.store.postgres.database import Conn, Database, erase_generation
from kenning.store.postgres.sql import jsonb, scope_sql, where_clause
from kenning.store.records import (
    Chunk,
    EventWrite,
    IndexChange,
    IndexLayout,
    Item,
    ModelInfo,
    SessionInfo,
    check_changes,
)

__all__ = ["EventTables", "checked_vector", "copy_rows", "stored_model"]

_EVENT_COLUMNS = (
    "i.id, i.tenant, i.user_id, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.tags, i.metadata, i.version, i.content_hash, d.tool_name, d.tool_args, d.tool_result, "
    "i.idem_key"
)
_ITEM_COLUMNS = (
    "i.id, i.kind, i.tenant, i.user_id, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.metadata, i.tags, coalesce(a.count, 0), a.last"
)
_STAGED_ITEM_COLUMNS = (
    "ord", "tenant", "id", "kind", "user_id", "session", "agent", "seq", "role", "label",
    "text", "at", "tags", "metadata", "version", "content_hash", "embed_hash", "idem_key",
    "expires_at",
)  # fmt: skip


def _event(row: Sequence[Any]) -> Event:
    return Event(
        id=row[0], scope=Scope(row[1], row[2], row[3], row[4]), seq=int(row[5]),
        role=Role(row[6]), content=row[7], at=row[8], tags=tuple(row[9]), metadata=row[10],
        version=row[11], content_hash=row[12], tool_name=row[13], tool_args=row[14],
        tool_result=row[15], idempotency_key=row[16],
    )  # fmt: skip


def stored_model(conn: Conn) -> ModelInfo | None:
    """The embedding model the database's vectors belong to (None before the first vector)."""
    row = conn.execute(
        "SELECT model_id, dimension, normalized FROM embedding_model WHERE id = 1"
    ).fetchone()
    if row is None:
        return None
    return ModelInfo(model_id=row[0], dimension=int(row[1]), normalized=bool(row[2]))


def copy_rows(
    conn: Conn,
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    binary_types: Sequence[str] | None = None,
) -> str:
    """COPY *rows* into a per-connection temporary staging table shaped like *columns* of
    *table* (emptied at commit); return the staging table's name. With *binary_types* (the
    columns' type names) the rows travel in COPY's binary format."""
    # One staging table per column list: the same connection stages differently shaped rows.
    stage = f"stage_{table}_{zlib.crc32(','.join(columns).encode()):08x}"
    cols = ", ".join(c for c in columns if c != "ord")
    conn.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DELETE ROWS AS"
        f" SELECT 0::bigint AS ord, {cols} FROM {table} WITH NO DATA"
    )
    conn.execute(f"TRUNCATE {stage}")
    binary = " (FORMAT BINARY)" if binary_types is not None else ""
    with conn.raw.cursor().copy(f"COPY {stage} ({', '.join(columns)}) FROM STDIN{binary}") as copy:
        if binary_types is not None:
            copy.set_types(list(binary_types))
        for row in rows:
            copy.write_row(row)
    return stage


class EventTables(Database):
    """Events, sessions, vectors and token counts; erasure of everything derived."""

    # -- model identity --------------------------------------------------------------------

    def model(self) -> ModelInfo | None:
        with self._read(None) as conn:
            return self._model_in(conn)

    @staticmethod
    def _check_model(conn: Conn, model: ModelInfo, *, claim: bool) -> None:
        if claim:
            conn.execute(
                "INSERT INTO embedding_model (id, model_id, dimension, normalized)"
                " VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (model.model_id, model.dimension, model.normalized),
            )
        stored = stored_model(conn)
        if stored is not None and stored != model:
            raise ModelMismatch(
                f"this store holds vectors of {stored.model_id} ({stored.dimension}-d); "
                f"refusing {model.model_id} ({model.dimension}-d). Use the same embedder or a "
                "new database"
            )

    def missing_vectors(self, tenant: str, model: ModelInfo, hashes: Sequence[str]) -> list[str]:
        wanted = list(dict.fromkeys(hashes))
        with self._read(Scope(tenant)) as conn:
            self._check_model(conn, model, claim=False)
            if stored_model(conn) is None:
                return wanted
            rows = conn.execute(
                "SELECT hash FROM vectors WHERE tenant = ? AND hash = ANY(?)", (tenant, wanted)
            )
            have = {row[0] for row in rows}
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
        by_tenant: dict[str, list[tuple[int, EventWrite]]] = {}
        for n, write in enumerate(writes):
            scope = write.scope.require_session()
            by_tenant.setdefault(scope.tenant, []).append((n, write))
        by_vector_tenant: dict[str, list[tuple[str, npt.NDArray[np.float32]]]] = {}
        for (tenant, digest), vec in (vectors or {}).items():
            by_vector_tenant.setdefault(tenant, []).append(
                (digest, checked_vector(vec, model, digest))
            )
        now = datetime.now(UTC)
        placed: dict[int, Event] = {}
        with self._write(None) as conn:
            if model is not None and vectors:
                self._check_model(conn, model, claim=True)
            # Tenants and sessions are locked in sorted order: concurrent batches never wait
            # for each other in a cycle.
            for tenant in sorted(set(by_tenant) | set(by_vector_tenant)):
                self.set_tenant(conn, tenant)
                self.lock_tenant(conn, tenant)
                if tenant in by_vector_tenant:
                    rows = [(tenant, d, v) for d, v in by_vector_tenant[tenant]]
                    stage = copy_rows(conn, "vectors", ("tenant", "hash", "vec"), rows,
                                      binary_types=("text", "text", "vector"))  # fmt: skip
                    conn.execute(
                        f"INSERT INTO vectors (tenant, hash, vec) SELECT tenant, hash, vec"
                        f" FROM {stage} ON CONFLICT DO NOTHING"
                    )
                if tenant in by_tenant:
                    for n, event in self._append_tenant(conn, by_tenant[tenant], now):
                        placed[n] = event
        self._after_append(set(by_tenant))
        return [placed[n] for n in sorted(placed)]

    def _append_tenant(
        self, conn: Conn, writes: Sequence[tuple[int, EventWrite]], now: datetime
    ) -> list[tuple[int, Event]]:
        """Append one tenant's writes (its setting is active): claim and lock the sessions,
        skip repeated idempotency keys, number, COPY, and write what derives."""
        tenant = writes[0][1].scope.tenant
        last_seq = self._claim_sessions(conn, tenant, [w.scope for _, w in writes])
        keep = _episode_days(conn, tenant)
        keys = [w.event.idempotency_key for _, w in writes if w.event.idempotency_key]
        held = set()
        if keys:
            held = {
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT session, idem_key FROM items WHERE tenant = ? AND idem_key = ANY(?)",
                    (tenant, keys),
                )
            }
        out: list[tuple[int, Event]] = []
        staged: list[tuple[Any, ...]] = []
        for n, write in writes:
            scope, event = write.scope, write.event
            assert scope.session is not None
            key = event.idempotency_key
            if key is not None:
                if (scope.session, key) in held:
                    continue
                held.add((scope.session, key))
            last_seq[scope.session] += 1
            seq = last_seq[scope.session]
            at = event.at or now
            expires = None if keep is None else at + timedelta(days=keep)
            role = Role(event.role)
            digest = content_hash(event.content)
            staged.append((
                len(staged), tenant, write.id, "event", scope.user, scope.session, scope.agent,
                seq, role.value, event_label(event), event.content, at,
                jsonb(list(event.tags)), jsonb(dict(event.metadata)), event.version, digest,
                write.embed_hash, key, expires,
            ))  # fmt: skip
            out.append((n, Event(
                id=write.id, scope=scope, seq=seq, role=role, content=event.content, at=at,
                tool_name=event.tool_name, tool_args=event.tool_args,
                tool_result=event.tool_result, metadata=dict(event.metadata),
                tags=tuple(event.tags), version=event.version, content_hash=digest,
                idempotency_key=key,
            )))  # fmt: skip
        if not staged:
            return []
        stage = copy_rows(conn, "items", _STAGED_ITEM_COLUMNS, staged)
        cols = ", ".join(_STAGED_ITEM_COLUMNS[1:])
        rowids = dict(
            conn.execute(
                f"INSERT INTO items ({cols}) SELECT {cols} FROM {stage} ORDER BY ord"
                " RETURNING id, rowid"
            ).fetchall()
        )
        self._insert_details(conn, tenant, rowids, [w for _, w in writes])
        by_n = dict(writes)
        self._derive_from_events(conn, [(by_n[n], e) for n, e in out], now)
        conn.execute(
            "UPDATE sessions s SET last_seq = v.seq"
            " FROM unnest(?::text[], ?::bigint[]) AS v(session, seq)"
            " WHERE s.tenant = ? AND s.session = v.session",
            (list(last_seq), list(last_seq.values()), tenant),
        )
        return out

    @staticmethod
    def _claim_sessions(conn: Conn, tenant: str, scopes: Sequence[Scope]) -> dict[str, int]:
        """Claim the sessions of *scopes* (one tenant) for their users and lock them, in
        session order; return each session's last sequence number. ScopeConflict if a
        session belongs to another user (or two users of the batch name it)."""
        users: dict[str, str | None] = {}
        for scope in scopes:
            assert scope.session is not None
            if users.setdefault(scope.session, scope.user) != scope.user:
                raise ScopeConflict(
                    f"session {scope.session!r} of tenant {tenant!r} is named by two users "
                    "in one batch; session ids are unique within a tenant"
                )
        names = sorted(users)
        conn.execute(
            "INSERT INTO sessions (tenant, session, user_id)"
            " SELECT ?, s, u FROM unnest(?::text[], ?::text[]) AS t(s, u)"
            " ON CONFLICT DO NOTHING",
            (tenant, names, [users[n] for n in names]),
        )
        rows = conn.execute(
            "SELECT session, user_id, last_seq FROM sessions"
            " WHERE tenant = ? AND session = ANY(?) ORDER BY session FOR UPDATE",
            (tenant, names),
        ).fetchall()
        for session, owner, _ in rows:
            if owner != users[session]:
                raise ScopeConflict(
                    f"session {session!r} belongs to another user of tenant {tenant!r}; "
                    "session ids are unique within a tenant"
                )
        return {row[0]: int(row[2]) for row in rows}

    @staticmethod
    def _insert_details(
        conn: Conn, tenant: str, rowids: Mapping[str, int], writes: Sequence[EventWrite]
    ) -> None:
        details, chunks = [], []
        for write in writes:
            rowid = rowids.get(write.id)
            if rowid is None:
                continue  # skipped (a repeated idempotency key)
            event = write.event
            if event.tool_name or event.tool_args is not None or event.tool_result is not None:
                details.append((tenant, rowid, event.tool_name, jsonb(event.tool_args),
                                jsonb(event.tool_result)))  # fmt: skip
            chunks += [
                (tenant, rowid, n, c.start, c.stop, c.embed_hash, c.lexical)
                for n, c in enumerate(write.chunks)
            ]
        if details:
            conn.executemany(
                "INSERT INTO event_details (tenant, item, tool_name, tool_args, tool_result)"
                " VALUES (?, ?, ?, ?, ?)",
                details,
            )
        if chunks:
            conn.executemany(
                "INSERT INTO item_chunks (tenant, item, n, start, stop, embed_hash, lexical)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                chunks,
            )

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
        where, params = where_clause(scope, Filters(kinds=("event",)))
        if after_seq is not None:
            where += " AND i.seq > ?"
            params.append(after_seq)
        if ids is not None:
            if not ids:
                return []
            where += " AND i.id = ANY(?)"
            params.append(list(ids))
        order = "i.seq" if scope.session is not None else "i.at, i.session, i.seq"
        if tail is not None:
            order = ", ".join(f"{column} DESC" for column in order.split(", "))
        sql = (
            f"SELECT {_EVENT_COLUMNS} FROM items i"
            " LEFT JOIN event_details d ON d.tenant = i.tenant AND d.item = i.rowid"
            f" WHERE {where} ORDER BY {order}"
        )
        count = tail if tail is not None else limit
        if count is not None:
            sql += " LIMIT ?"
            params.append(int(count))
        with self._read(scope) as conn:
            rows = [_event(row) for row in conn.execute(sql, params)]
        return rows[::-1] if tail is not None else rows

    def user_sessions(self, scope: Scope) -> list[SessionInfo]:
        if scope.user is None:
            raise InvalidInput("user_sessions needs a scope with a user")
        with self._read(scope) as conn:
            rows = conn.execute(
                "SELECT session, created_at, last_seq FROM sessions"
                " WHERE tenant = ? AND user_id = ? ORDER BY created_at, session",
                (scope.tenant, scope.user),
            ).fetchall()
        return [SessionInfo(r[0], r[1], int(r[2])) for r in rows]

    def session_owners(self, tenant: str, sessions: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(sessions))
        if not wanted:
            return {}
        with self._read(Scope(tenant)) as conn:
            rows = conn.execute(
                "SELECT session, user_id FROM sessions WHERE tenant = ? AND session = ANY(?)",
                (tenant, wanted),
            ).fetchall()
        return {r[0]: r[1] for r in rows}

    # -- reindexing ------------------------------------------------------------------------

    def index_layouts(self, tenant: str, *, after: int, limit: int) -> list[IndexLayout]:
        if limit < 1:
            raise InvalidInput("limit must be >= 1")
        with self._read(Scope(tenant)) as conn:
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS}, i.embed_hash, i.rowid FROM items i"
                " LEFT JOIN event_details d ON d.tenant = i.tenant AND d.item = i.rowid"
                " WHERE i.tenant = ? AND i.kind = 'event' AND i.rowid > ?"
                " ORDER BY i.rowid LIMIT ?",
                (tenant, int(after), int(limit)),
            ).fetchall()
            spans: dict[int, list[Chunk]] = {}
            if rows:
                for item, start, stop, digest, lexical in conn.execute(
                    "SELECT item, start, stop, embed_hash, lexical FROM item_chunks"
                    " WHERE tenant = ? AND item = ANY(?) ORDER BY item, n",
                    (tenant, [int(r[18]) for r in rows]),
                ):
                    spans.setdefault(int(item), []).append(
                        Chunk(int(start), int(stop), digest, lexical=bool(lexical))
                    )
        return [
            IndexLayout(int(r[18]), _event(r), r[17], tuple(spans.get(int(r[18]), ())))
            for r in rows
        ]

    def reindex_events(
        self,
        tenant: str,
        changes: Sequence[IndexChange],
        *,
        model: ModelInfo | None = None,
        vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
    ) -> int:
        if not check_changes(changes, model=model, vectors=vectors):
            return 0
        staged = [(tenant, d, checked_vector(v, model, d)) for d, v in (vectors or {}).items()]
        with self._write(Scope(tenant)) as conn:
            if model is not None and staged:
                self._check_model(conn, model, claim=True)
            if staged:
                stage = copy_rows(conn, "vectors", ("tenant", "hash", "vec"), staged,
                                  binary_types=("text", "text", "vector"))  # fmt: skip
                conn.execute(
                    f"INSERT INTO vectors (tenant, hash, vec) SELECT tenant, hash, vec"
                    f" FROM {stage} ON CONFLICT DO NOTHING"
                )
            found = dict(
                conn.execute(
                    "SELECT id, rowid FROM items WHERE tenant = ? AND kind = 'event'"
                    " AND id = ANY(?)",
                    (tenant, [c.id for c in changes]),
                ).fetchall()
            )
            live = [c for c in changes if c.id in found]  # the others were erased since
            if not live:
                return 0
            rowids = [int(found[c.id]) for c in live]
            conn.executemany(
                "UPDATE items SET embed_hash = ? WHERE tenant = ? AND rowid = ?",
                [(c.embed_hash, tenant, r) for c, r in zip(live, rowids, strict=True)],
            )
            conn.execute(
                "DELETE FROM item_chunks WHERE tenant = ? AND item = ANY(?)", (tenant, rowids)
            )
            spans = [
                (tenant, r, n, c.start, c.stop, c.embed_hash, c.lexical)
                for change, r in zip(live, rowids, strict=True)
                for n, c in enumerate(change.chunks)
            ]
            if spans:
                conn.executemany(
                    "INSERT INTO item_chunks (tenant, item, n, start, stop, embed_hash, lexical)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    spans,
                )
            self._log_removed(conn, tenant, rowids, op="reindex")
        self._after_reindex(tenant)
        return len(live)

    def items(self, scope: Scope, ids: Sequence[str]) -> list[Item]:
        where, params = where_clause(scope, Filters(kinds=KINDS))
        sql = (
            f"SELECT {_ITEM_COLUMNS} FROM items i"
            " LEFT JOIN item_access a ON a.tenant = i.tenant AND a.item = i.rowid"
            f" WHERE {where} AND i.id = ANY(?)"
        )
        with self._read(scope) as conn:
            rows = conn.execute(sql, [*params, list(ids)]).fetchall()
        return [
            Item(
                id=r[0], kind=r[1], scope=Scope(r[2], r[3], r[4], r[5]),
                seq=None if r[6] is None else int(r[6]),
                role=Role(r[7]), text=r[8], at=r[9], metadata=r[10], tags=tuple(r[11]),
                access_count=int(r[12]), last_access=r[13],
            )
            for r in rows
        ]  # fmt: skip

    # -- token counts ----------------------------------------------------------------------

    def token_counts(self, scope: Scope, ids: Sequence[str], encoding: str) -> dict[str, int]:
        where, params = where_clause(scope, Filters(kinds=KINDS))
        with self._read(scope) as conn:
            rows = conn.execute(
                "SELECT i.id, t.n FROM token_counts t"
                " JOIN items i ON i.tenant = t.tenant AND i.rowid = t.item"
                f" WHERE t.encoding = ? AND {where} AND i.id = ANY(?)",
                [encoding, *params, list(ids)],
            )
            return {row[0]: int(row[1]) for row in rows}

    def put_token_counts(self, scope: Scope, encoding: str, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        where, params = where_clause(scope, Filters(kinds=KINDS))
        ids = list(counts)
        with self._write(scope) as conn:
            conn.execute(
                "INSERT INTO token_counts (tenant, item, encoding, n)"
                " SELECT i.tenant, i.rowid, ?, c.n FROM items i"
                " JOIN unnest(?::text[], ?::int[]) AS c(id, n) ON c.id = i.id"
                f" WHERE {where}"
                " ON CONFLICT (tenant, item, encoding) DO UPDATE SET n = excluded.n",
                [encoding, ids, [int(counts[i]) for i in ids], *params],
            )

    # -- erasure ---------------------------------------------------------------------------

    def erase_generation(self, tenant: str) -> int:
        with self._read(Scope(tenant)) as conn:
            return erase_generation(conn, tenant)

    def forget(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        before: datetime | None = None,
    ) -> int:
        where, params = where_clause(scope, Filters(kinds=KINDS))
        if ids is not None:
            if not ids:
                return 0
            where += " AND i.id = ANY(?)"
            params.append(list(ids))
        if before is not None:
            where += " AND i.at < ?"
            params.append(before)
        return self._erase(scope, where, params, whole=ids is None and before is None)

    def purge(self, tenant: str, *, now: datetime, episodes_before: datetime | None) -> int:
        """Hard retention: remove the tenant's records past their ``expires_at``, and events
        older than *episodes_before*, from every index; what a legal hold covers stays.

        Returns the number of records removed.
        """
        where = "i.tenant = ? AND (i.expires_at < ?"
        params: list[Any] = [tenant, now]
        if episodes_before is not None:
            where += " OR (i.kind = 'event' AND i.at < ?)"
            params.append(episodes_before)
        where += ")"
        return self._erase(Scope(tenant), where, params, whole=False, log_at=now)

    def _erase(
        self,
        scope: Scope,
        where: str,
        params: Sequence[Any],
        *,
        whole: bool,
        log_at: datetime | None = None,
    ) -> int:
        """Delete the items ``where`` selects (alias ``i``) and what derives from them, in one
        transaction under the tenant's exclusive lock; *whole*: the whole scope goes, sessions
        without events included. With *log_at* (the purge) what a legal hold covers is left
        out instead of refusing, and the removed records are counted in the purge log."""
        tenant = scope.tenant
        with self._write(scope, exclusive=True) as conn:
            params = list(params)
            if log_at is None:
                self._before_erase(conn, scope)
            else:
                held = conn.execute(
                    "SELECT user_id, session FROM legal_holds WHERE tenant = ?", (tenant,)
                ).fetchall()
                for user, session in held:
                    if not user and not session:
                        return 0  # the whole tenant is held
                    column, value = ("session", session) if session else ("user_id", user)
                    where += f" AND i.{column} IS DISTINCT FROM ?"
                    params.append(value)
            doomed = conn.execute(
                f"DELETE FROM items i WHERE {where}"
                " RETURNING i.id, i.session, i.seq, i.rowid, i.kind",
                params,
            ).fetchall()
            self._log_removed(conn, tenant, [r[3] for r in doomed])
            if log_at is not None and doomed:  # the purge counts what it removes, by kind
                kinds = Counter(r[4] for r in doomed)
                conn.execute(
                    "INSERT INTO purge_log (tenant, at, kind, count)"
                    " SELECT ?, ?, k, n FROM unnest(?::text[], ?::bigint[]) AS c(k, n)",
                    (tenant, log_at, sorted(kinds), [kinds[k] for k in sorted(kinds)]),
                )
            gone = _gone_sessions(conn, scope, doomed, whole=whole)
            if gone:
                conn.execute(
                    "DELETE FROM sessions WHERE tenant = ? AND session = ANY(?)", (tenant, gone)
                )
            self._forget_derived(
                conn, scope, [(r[0], r[1], r[2]) for r in doomed], gone,
                purge=log_at is not None,
            )  # fmt: skip
            # After the derived records (a fact read only from erased turns goes too):
            # vectors no record or chunk still uses go with the text.
            conn.execute(
                "DELETE FROM vectors v WHERE v.tenant = ?"
                " AND NOT EXISTS (SELECT 1 FROM items i"
                "  WHERE i.tenant = v.tenant AND i.embed_hash = v.hash)"
                " AND NOT EXISTS (SELECT 1 FROM item_chunks c"
                "  WHERE c.tenant = v.tenant AND c.embed_hash = v.hash)",
                (tenant,),
            )
            if whole and scope.session is None:
                # Erasing a user (or a tenant's users) takes their choices along.
                owned, owned_params = scope_sql(Scope(tenant, scope.user))
                conn.execute(f"DELETE FROM user_settings WHERE {owned}", owned_params)
        if doomed:
            self._after_forget(tenant)
        return len(doomed)


def _episode_days(conn: Conn, tenant: str) -> float | None:
    """How long the tenant keeps events (its policy's ``episode_days``)."""
    row = conn.execute(
        "SELECT body ->> 'episode_days' FROM tenant_policy WHERE tenant = ?", (tenant,)
    ).fetchone()
    return None if row is None or row[0] is None else float(row[0])


def checked_vector(
    vec: npt.NDArray[np.float32], model: ModelInfo | None, digest: str
) -> npt.NDArray[np.float32]:
    arr = np.ascontiguousarray(vec, dtype=np.float32)
    if model is not None and arr.shape != (model.dimension,):
        raise InvalidInput(
            f"vector for {digest} has shape {arr.shape}, expected ({model.dimension},)"
        )
    if not np.isfinite(arr).all():
        raise InvalidInput(f"vector for {digest} holds a NaN or an infinity")
    return arr


def _gone_sessions(
    conn: Conn, scope: Scope, doomed: Sequence[Sequence[Any]], *, whole: bool
) -> list[str]:
    """The sessions an erase removes entirely: every session of the scope when the whole
    scope goes (with or without events), else those it left without events."""
    if whole:
        owned, params = scope_sql(scope)
        return [r[0] for r in conn.execute(f"SELECT session FROM sessions WHERE {owned}", params)]
    touched = sorted({r[1] for r in doomed if r[1] is not None})
    if not touched:
        return []
    left = {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT session FROM items WHERE tenant = ? AND session = ANY(?)",
            (scope.tenant, touched),
        )
    }
    return [s for s in touched if s not in left]
