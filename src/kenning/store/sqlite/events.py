"""The event log of the SQLite store: sessions, events, their vectors, token counts, erasure.

A mixin of :class:`~kenning.store.sqlite.store.SQLiteStore`; every statement is constrained by
the scope inside its SQL.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ModelMismatch, ScopeConflict
from kenning.records import KINDS, Event, Filters, Role, Scope, content_hash, event_label
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
from kenning.store.sql.database import check_owner, erase_generation
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.fts import purge_fts, scope_terms
from kenning.store.sqlite.sql import (
    DIALECT,
    by_ids,
    chunks,
    dumps,
    role,
    scope_sql,
    stored_model,
    stored_scope,
    tags,
    ts,
    where_clause,
)

__all__ = ["EventTables"]

_EVENT_COLUMNS = (
    "i.rowid, i.id, i.tenant, i.user_id, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.tags, i.metadata, i.version, i.content_hash, d.tool_name, d.tool_args, d.tool_result, "
    "i.idem_key"
)
_ITEM_COLUMNS = (
    "i.id, i.kind, i.tenant, i.user_id, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.metadata, i.tags, coalesce(a.count, 0), a.last"
)


def _event(row: Sequence[Any]) -> Event:
    return Event(
        id=row[1],
        scope=stored_scope(row[2], row[3], row[4], row[5]),
        seq=int(row[6]),
        role=role(row[7]),
        content=row[8],
        at=ts(row[9]),
        tags=tags(row[10]),
        metadata=json.loads(row[11]),
        version=row[12],
        content_hash=row[13],
        tool_name=row[14],
        tool_args=None if row[15] is None else json.loads(row[15]),
        tool_result=None if row[16] is None else json.loads(row[16]),
        idempotency_key=row[17],
    )


class EventTables(Database):
    """Events, sessions, vectors and token counts; erasure of everything derived."""

    # -- model identity --------------------------------------------------------------------

    def model(self) -> ModelInfo | None:
        with self._read(None) as conn:
            return stored_model(conn)

    @staticmethod
    def _check_model(conn: sqlite3.Connection, model: ModelInfo, *, claim: bool) -> None:
        stored = stored_model(conn)
        if stored is None:
            if claim:
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
        with self._read(Scope(tenant)) as conn:
            self._check_model(conn, model, claim=False)
            if stored_model(conn) is None:
                return wanted
            for chunk in chunks(wanted):
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
        written: list[tuple[EventWrite, Event]] = []
        # Each write's session is claimed, and checked against its owner, below.
        with self._write(None) as conn:
            if model is not None and vectors:
                self._check_model(conn, model, claim=True)
                conn.executemany(
                    "INSERT OR IGNORE INTO vectors (tenant, hash, vec) VALUES (?, ?, ?)",
                    [
                        (tenant, digest, _vector_blob(vec, model, digest))
                        for (tenant, digest), vec in vectors.items()
                    ],
                )
            last_seq: dict[tuple[str, str], int] = {}
            owners: dict[tuple[str, str], str] = {}
            keys: set[tuple[str, str, str]] = set()
            keep = {w.scope.tenant: self._episode_days(conn, w.scope.tenant) for w in writes}
            for write in writes:
                scope = write.scope.require_session()
                assert scope.user is not None and scope.session is not None
                key = (scope.tenant, scope.session)
                if key not in last_seq:
                    last_seq[key] = self._claim_session(conn, scope)
                    owners[key] = scope.user
                elif owners[key] != scope.user:
                    # The session is claimed (its owner checked) at its first write only.
                    raise ScopeConflict(
                        f"session {scope.session!r} of tenant {scope.tenant!r} is named by two "
                        "users in one batch; session ids are unique within a tenant"
                    )
                if self._repeated(conn, write, keys):
                    continue
                seq = last_seq[key] + 1
                last_seq[key] = seq
                event = self._insert_event(conn, write, seq, now, keep[scope.tenant])
                out.append(event)
                written.append((write, event))
            self._derive_from_events(conn, written, ts(now))
            for (tenant, session), seq in last_seq.items():
                conn.execute(
                    "UPDATE sessions SET last_seq = ? WHERE tenant = ? AND session = ?",
                    (seq, tenant, session),
                )
        self._after_append({e.scope.tenant for e in out})
        return out

    @staticmethod
    def _repeated(
        conn: sqlite3.Connection, write: EventWrite, seen: set[tuple[str, str, str]]
    ) -> bool:
        """True if the write's idempotency key is already in its session (or in this batch)."""
        key = write.event.idempotency_key
        if key is None:
            return False
        scope = write.scope
        assert scope.session is not None
        mark = (scope.tenant, scope.session, key)
        if mark in seen:
            return True
        seen.add(mark)
        row = conn.execute(
            "SELECT 1 FROM items WHERE tenant = ? AND session = ? AND idem_key = ?", mark
        ).fetchone()
        return row is not None

    @staticmethod
    def _episode_days(conn: sqlite3.Connection, tenant: str) -> float | None:
        """How long the tenant keeps events (its policy's ``episode_days``)."""
        row = conn.execute("SELECT body FROM tenant_policy WHERE tenant = ?", (tenant,)).fetchone()
        days = None if row is None else json.loads(row[0]).get("episode_days")
        return None if days is None else float(days)

    @staticmethod
    def _insert_event(
        conn: sqlite3.Connection, write: EventWrite, seq: int, now: float, keep: float | None
    ) -> Event:
        scope, event = write.scope, write.event
        at = event.at or ts(now)
        expires = None if keep is None else at.timestamp() + keep * 86_400
        digest = content_hash(event.content)
        event_id = write.id
        role = Role(event.role)
        cur = conn.execute(
            "INSERT INTO items (id, kind, tenant, user_id, session, agent, seq, role, label, text,"
            " scope_terms, at, tags, metadata, version, content_hash, embed_hash, created_at,"
            " idem_key, expires_at)"
            " VALUES (?, 'event', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                event_id, scope.tenant, scope.user, scope.session, scope.agent, seq, role.value,
                event_label(event), event.content,
                scope_terms(scope.tenant, scope.user, scope.session, role.value, "event"),
                at.timestamp(), json.dumps(list(event.tags)), dumps(dict(event.metadata)),
                event.version, digest, write.embed_hash, now, event.idempotency_key, expires,
            ),
        )  # fmt: skip
        if write.chunks:
            conn.executemany(
                "INSERT INTO item_chunks (item, n, start, stop, embed_hash, lexical)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (cur.lastrowid, n, c.start, c.stop, c.embed_hash, c.lexical)
                    for n, c in enumerate(write.chunks)
                ],
            )
        if event.tool_name or event.tool_args is not None or event.tool_result is not None:
            conn.execute(
                "INSERT INTO event_details (item, tool_name, tool_args, tool_result)"
                " VALUES (?, ?, ?, ?)",
                (cur.lastrowid, event.tool_name, dumps(event.tool_args), dumps(event.tool_result)),
            )
        return Event(
            id=event_id, scope=scope, seq=seq, role=role, content=event.content, at=at,
            tool_name=event.tool_name, tool_args=event.tool_args, tool_result=event.tool_result,
            metadata=dict(event.metadata), tags=tuple(event.tags), version=event.version,
            content_hash=digest, idempotency_key=event.idempotency_key,
        )  # fmt: skip

    @staticmethod
    def _claim_session(conn: sqlite3.Connection, scope: Scope) -> int:
        """Claim the session for the scope's user (ScopeConflict if another user owns it);
        return its last sequence number."""
        check_owner(conn, DIALECT, scope, claim=True)
        row = conn.execute(
            "SELECT last_seq FROM sessions WHERE tenant = ? AND session = ?",
            (scope.tenant, scope.session),
        ).fetchone()
        return int(row[0])

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
            where += f" AND {by_ids(len(ids))}"
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
        return [SessionInfo(r[0], ts(r[1]), int(r[2])) for r in rows]

    def session_owners(self, tenant: str, sessions: Sequence[str]) -> dict[str, str]:
        owners: dict[str, str] = {}
        with self._read(Scope(tenant)) as conn:
            for chunk in chunks(list(dict.fromkeys(sessions))):
                owners.update(
                    conn.execute(
                        "SELECT session, user_id FROM sessions WHERE tenant = ?"
                        f" AND session IN ({','.join('?' * len(chunk))})",
                        [tenant, *chunk],
                    ).fetchall()
                )
        return owners

    def items(self, scope: Scope, ids: Sequence[str]) -> list[Item]:
        out: list[Item] = []
        with self._read(scope) as conn:
            for chunk in chunks(list(ids)):
                where, params = where_clause(scope, Filters(kinds=KINDS), row_check=True)
                sql = (
                    f"SELECT {_ITEM_COLUMNS} FROM items i"
                    " LEFT JOIN item_access a ON a.item = i.rowid"
                    f" WHERE {where} AND {by_ids(len(chunk))}"
                )
                for row in conn.execute(sql, [*params, *chunk]):
                    out.append(
                        Item(
                            id=row[0], kind=row[1],
                            scope=stored_scope(row[2], row[3], row[4], row[5]),
                            seq=None if row[6] is None else int(row[6]), role=role(row[7]),
                            text=row[8], at=ts(row[9]),
                            metadata=json.loads(row[10]), tags=tags(row[11]),
                            access_count=int(row[12]),
                            last_access=None if row[13] is None else ts(row[13]),
                        )
                    )  # fmt: skip
        return out

    # -- reindexing ------------------------------------------------------------------------

    def index_layouts(self, tenant: str, *, after: int, limit: int) -> list[IndexLayout]:
        if limit < 1:
            raise InvalidInput("limit must be >= 1")
        with self._read(Scope(tenant)) as conn:
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS}, i.embed_hash FROM items i"
                " LEFT JOIN event_details d ON d.item = i.rowid"
                " WHERE i.tenant = ? AND i.kind = 'event' AND i.rowid > ?"
                " ORDER BY i.rowid LIMIT ?",
                (tenant, int(after), int(limit)),
            ).fetchall()
            spans: dict[int, list[Chunk]] = {}
            for chunk in chunks([int(r[0]) for r in rows]):
                for item, start, stop, digest, lexical in conn.execute(
                    "SELECT item, start, stop, embed_hash, lexical FROM item_chunks"
                    f" WHERE item IN ({','.join('?' * len(chunk))}) ORDER BY item, n",
                    list(chunk),
                ):
                    spans.setdefault(int(item), []).append(
                        Chunk(int(start), int(stop), digest, lexical=bool(lexical))
                    )
        return [
            IndexLayout(int(r[0]), _event(r), r[18], tuple(spans.get(int(r[0]), ()))) for r in rows
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
        done = 0
        with self._write(Scope(tenant)) as conn:
            if model is not None and vectors:
                self._check_model(conn, model, claim=True)
                conn.executemany(
                    "INSERT OR IGNORE INTO vectors (tenant, hash, vec) VALUES (?, ?, ?)",
                    [(tenant, d, _vector_blob(v, model, d)) for d, v in vectors.items()],
                )
            for change in changes:
                row = conn.execute(
                    "SELECT rowid FROM items WHERE id = ? AND tenant = ? AND kind = 'event'",
                    (change.id, tenant),
                ).fetchone()
                if row is None:  # erased since it was read
                    continue
                rowid = int(row[0])
                conn.execute(
                    "UPDATE items SET embed_hash = ? WHERE rowid = ?", (change.embed_hash, rowid)
                )
                conn.execute("DELETE FROM item_chunks WHERE item = ?", (rowid,))
                conn.executemany(
                    "INSERT INTO item_chunks (item, n, start, stop, embed_hash, lexical)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (rowid, n, c.start, c.stop, c.embed_hash, c.lexical)
                        for n, c in enumerate(change.chunks)
                    ],
                )
                conn.execute(
                    "INSERT INTO index_log (tenant, item, op) VALUES (?, ?, 'reindex')",
                    (tenant, rowid),
                )
                done += 1
        self._after_reindex(tenant)
        return done

    # -- token counts ----------------------------------------------------------------------

    def token_counts(self, scope: Scope, ids: Sequence[str], encoding: str) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._read(scope) as conn:
            for chunk in chunks(list(ids)):
                where, params = where_clause(scope, Filters(kinds=KINDS), row_check=True)
                rows = conn.execute(
                    "SELECT i.id, t.n FROM token_counts t JOIN items i ON i.rowid = t.item"
                    f" WHERE t.encoding = ? AND {where}"
                    f" AND {by_ids(len(chunk))}",
                    [encoding, *params, *chunk],
                )
                out.update((row[0], int(row[1])) for row in rows)
        return out

    def put_token_counts(self, scope: Scope, encoding: str, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        where, params = where_clause(scope, Filters(kinds=KINDS), row_check=True)
        with self._write(scope) as conn:
            for record_id, n in counts.items():
                conn.execute(
                    "INSERT OR REPLACE INTO token_counts (item, encoding, n)"
                    f" SELECT i.rowid, ?, ? FROM items i WHERE {where} AND {by_ids(1)}",
                    [encoding, int(n), *params, record_id],
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
        where, params = where_clause(scope, Filters(kinds=KINDS), row_check=ids is not None)
        if ids is not None:
            if not ids:
                return 0
            where += f" AND {by_ids(len(ids))}"
            params.extend(ids)
        if before is not None:
            where += " AND i.at < ?"
            params.append(before.timestamp())
        return self._erase(scope, where, params, whole=ids is None and before is None)

    def purge(self, tenant: str, *, now: datetime, episodes_before: datetime | None) -> int:
        """Hard retention: remove the tenant's records past their ``expires_at``, and events
        older than *episodes_before*, from every index; what a legal hold covers stays.

        Returns the number of records removed.
        """
        scope = Scope(tenant)
        where = "i.tenant = ? AND (i.expires_at < ?"
        params: list[Any] = [tenant, now.timestamp()]
        if episodes_before is not None:
            where += " OR (i.kind = 'event' AND i.at < ?)"
            params.append(episodes_before.timestamp())
        where += ")"
        for user, session in self._held(scope):
            if not user and not session:
                return 0  # the whole tenant is held
            if session:
                where += " AND NOT (i.session IS ? AND i.session = ?)"
                params.extend([session, session])
            else:
                where += " AND NOT (i.user_id IS ? AND i.user_id = ?)"
                params.extend([user, user])
        return self._erase(scope, where, params, whole=False, holds=False, log_at=now)

    def _erase(
        self,
        scope: Scope,
        where: str,
        params: Sequence[Any],
        *,
        whole: bool,
        holds: bool = True,
        log_at: datetime | None = None,
    ) -> int:
        """Delete the items ``where`` selects (alias ``i``) and what derives from them, in one
        transaction; *whole*: the whole scope goes, sessions without events included; with
        *log_at* (the purge) the removed records are counted in the purge log."""
        with self._write(scope) as conn:
            if holds:
                self._before_erase(conn, scope)
            doomed = conn.execute(
                f"SELECT i.id, i.session, i.seq FROM items i WHERE {where}", params
            ).fetchall()
            if log_at is not None:  # the purge counts what it removes, by kind
                conn.execute(
                    "INSERT INTO purge_log (tenant, at, kind, count) SELECT ?, ?, i.kind,"
                    f" count(*) FROM items i WHERE {where} GROUP BY i.kind",
                    [scope.tenant, log_at.timestamp(), *params],
                )
            rowids = [
                int(r[0])
                for r in conn.execute(
                    "DELETE FROM items WHERE rowid IN"
                    f" (SELECT i.rowid FROM items i WHERE {where}) RETURNING rowid",
                    params,
                ).fetchall()
            ]
            self._log_removed(conn, scope.tenant, rowids)
            erased = len(rowids)
            gone = _gone_sessions(conn, scope, doomed, whole=whole)
            for chunk in chunks(gone):
                marks = ",".join("?" * len(chunk))
                conn.execute(
                    f"DELETE FROM sessions WHERE tenant = ? AND session IN ({marks})",
                    [scope.tenant, *chunk],
                )
            self._forget_derived(
                conn, scope, [(r[0], r[1], r[2]) for r in doomed], gone,
                purge=log_at is not None,
            )  # fmt: skip
            # After the derived records: a fact read only from erased turns goes too.
            conn.execute(
                "DELETE FROM vectors WHERE tenant = ? AND hash NOT IN"
                " (SELECT embed_hash FROM items WHERE tenant = ? AND embed_hash IS NOT NULL)"
                " AND hash NOT IN (SELECT c.embed_hash FROM item_chunks c JOIN items i"
                " ON i.rowid = c.item WHERE i.tenant = ? AND c.embed_hash IS NOT NULL)",
                (scope.tenant, scope.tenant, scope.tenant),
            )
            if whole and scope.session is None:
                # Erasing a user (or a tenant's users) takes their choices along.
                owned, owned_params = scope_sql(Scope(scope.tenant, scope.user))
                conn.execute(f"DELETE FROM user_settings WHERE {owned}", owned_params)
            if erased:
                purge_fts(conn)
        if erased:
            self._after_forget(scope.tenant)
        # Erased text (events, or the pins and summaries of an emptied session) must not
        # linger in the write-ahead log either.
        self._checkpoint()
        return erased

    def _held(self, scope: Scope) -> list[tuple[str, str]]:
        with self._read(scope) as conn:
            return [
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT user_id, session FROM legal_holds WHERE tenant = ?", (scope.tenant,)
                )
            ]


def _vector_blob(vec: npt.NDArray[np.float32], model: ModelInfo, digest: str) -> bytes:
    arr = np.ascontiguousarray(vec, dtype=np.float32)
    if arr.shape != (model.dimension,):
        raise InvalidInput(
            f"vector for {digest} has shape {arr.shape}, expected ({model.dimension},)"
        )
    return arr.tobytes()


def _gone_sessions(
    conn: sqlite3.Connection, scope: Scope, doomed: Sequence[Sequence[Any]], *, whole: bool
) -> list[str]:
    """The sessions an erase removes entirely: every session of the scope when the whole
    scope goes (with or without events), else those it left without events."""
    if whole:
        owned, params = scope_sql(scope)
        return [r[0] for r in conn.execute(f"SELECT session FROM sessions WHERE {owned}", params)]
    touched = sorted({r[1] for r in doomed if r[1] is not None})
    return [
        session
        for session in touched
        if conn.execute(
            "SELECT 1 FROM items WHERE tenant = ? AND session = ? LIMIT 1",
            (scope.tenant, session),
        ).fetchone()
        is None
    ]
