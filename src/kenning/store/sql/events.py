"""The event log on every SQL backend: sessions, events, their vectors, token counts, erasure.

A mixin of the stores (:class:`~kenning.store.sql.database.SqlDatabase`); every statement
carries the scope's tenant predicate. A batch of events is written tenant by tenant, in tenant
and session order, inside one transaction: each session is claimed for its user (and held
until the end), repeated idempotency keys are skipped, events are numbered, their rows written
(:meth:`EventTables._insert_items`, which a backend may do in bulk), then what derives from
them (pins).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, ScopeConflict
from kenning.records import KINDS, Event, Filters, Quota, Role, Scope, content_hash, event_label
from kenning.store.records import (
    Chunk,
    EventWrite,
    IndexChange,
    IndexLayout,
    Item,
    ModelInfo,
    SessionInfo,
    UserInfo,
    check_changes,
)
from kenning.store.sql.database import Erasure, SqlDatabase, erase_generation
from kenning.store.sql.dialect import Tx
from kenning.store.sql.pending import insert_pending
from kenning.store.sql.query import require_user, scope_sql, stored_scope, where_clause
from kenning.store.sql.usage import add_usage, remove_usage
from kenning.store.sql.vectors import check_model, checked_vector, stored_model

__all__ = ["ITEM_COLUMNS", "EventTables"]

_EVENT_COLUMNS = (
    "i.rowid, i.id, i.tenant, i.user_id, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.tags, i.metadata, i.version, i.content_hash, e.tool_name, e.tool_args, e.tool_result, "
    "i.idem_key, i.embed_hash"
)
_ITEM_COLUMNS = (
    "i.id, i.kind, i.tenant, i.user_id, i.session, i.agent, i.seq, i.role, i.text, i.at, "
    "i.metadata, i.tags, coalesce(a.count, 0), a.last"
)
#: The columns of a new event's row, in the order :meth:`EventTables._insert_items` gets them.
ITEM_COLUMNS = (
    "tenant", "id", "kind", "user_id", "session", "agent", "seq", "role", "label", "text", "at",
    "tags", "metadata", "version", "content_hash", "embed_hash", "idem_key", "expires_at",
    "created_at",
)  # fmt: skip
_ROLES = {role.value: role for role in Role}
# The events of the session a "sessions" row names (for a correlated subquery). The tenant
# is a parameter, not sessions.tenant: on Citus a statement runs on one shard only when every
# table in it is constrained to one tenant value.
_SESSION_EVENTS = (
    "FROM items i WHERE i.tenant = ? AND i.session = sessions.session AND i.kind = 'event'"
)


def _new_event(write: EventWrite, seq: int, at: datetime) -> Event:
    new = write.event
    return Event(
        id=write.id, scope=write.scope, seq=seq, role=Role(new.role), content=new.content,
        at=at, tool_name=new.tool_name, tool_args=new.tool_args, tool_result=new.tool_result,
        metadata=dict(new.metadata), tags=tuple(new.tags), version=new.version,
        content_hash=content_hash(new.content), idempotency_key=new.idempotency_key,
    )  # fmt: skip


class EventTables(SqlDatabase):
    """Events, sessions, vectors and token counts; erasure of everything derived."""

    def _event(self, row: Sequence[Any]) -> Event:
        d = self._d
        return Event(
            id=row[1], scope=stored_scope(row[2], row[3], row[4], row[5]), seq=int(row[6]),
            role=_ROLES[row[7]], content=row[8], at=d.read_time(row[9]),
            tags=d.read_tags(row[10]), metadata=d.read_json(row[11]), version=row[12],
            content_hash=row[13], tool_name=row[14],
            # Most events are no tool call: skip the decoder for their NULLs.
            tool_args=None if row[15] is None else d.read_json(row[15]),
            tool_result=None if row[16] is None else d.read_json(row[16]),
            idempotency_key=row[17],
        )  # fmt: skip

    @property
    def _events_from(self) -> str:
        return f"FROM items i LEFT JOIN event_details e ON {self._d.item_join('e', 'i')}"

    # -- model identity --------------------------------------------------------------------

    def model(self) -> ModelInfo | None:
        with self._read(None) as tx:
            return stored_model(tx)

    def missing_vectors(self, tenant: str, model: ModelInfo, hashes: Sequence[str]) -> list[str]:
        d = self._d
        wanted = list(dict.fromkeys(hashes))
        have: set[str] = set()
        with self._read(Scope(tenant)) as tx:
            check_model(tx, d, model, claim=False)
            if stored_model(tx) is None:
                return wanted
            for part in d.batches(wanted):
                cond, params = d.one_of("hash", part)
                rows = tx.execute(
                    f"SELECT hash FROM vectors WHERE tenant = ? AND {cond}", [tenant, *params]
                )
                have.update(row[0] for row in rows)
        return [h for h in wanted if h not in have]

    # -- writes ----------------------------------------------------------------------------

    def append_events(
        self, writes: Sequence[EventWrite], *, model: ModelInfo | None = None,
        vectors: Mapping[tuple[str, str], npt.NDArray[np.float32]] | None = None,
        quota: Quota | None = None, pending: Mapping[tuple[str, str], str] | None = None,
    ) -> list[Event]:  # fmt: skip
        if vectors and model is None:
            raise InvalidInput("vectors were given without the model they belong to")
        by_tenant: dict[str, list[tuple[int, EventWrite]]] = {}
        for n, write in enumerate(writes):
            scope = write.scope.require_session()
            by_tenant.setdefault(scope.tenant, []).append((n, write))
        tenant_vectors: dict[str, dict[str, npt.NDArray[np.float32]]] = {}
        for (tenant, digest), vec in (vectors or {}).items():
            tenant_vectors.setdefault(tenant, {})[digest] = checked_vector(vec, model, digest)
        now = datetime.now(UTC)
        placed: dict[int, Event] = {}
        with self._write(None) as tx:
            if model is not None and vectors:
                check_model(tx, self._d, model, claim=True)
            # Tenants and sessions are taken in sorted order: concurrent batches never wait
            # for each other in a cycle.
            for tenant in sorted(set(by_tenant) | set(tenant_vectors)):
                self._enter_tenant(tx, tenant)
                if tenant in tenant_vectors:
                    self._store_vectors(tx, tenant, tenant_vectors[tenant])
                if tenant in by_tenant:
                    placed.update(
                        self._append_tenant(tx, by_tenant[tenant], now, quota, pending or {})
                    )
        # A tenant whose events wait for vectors is indexed when they come (put_vectors): a
        # partition caught up now would index those events twice.
        waiting = {tenant for tenant, _ in pending or {}}
        self._after_append(set(by_tenant) - waiting)
        return [placed[n] for n in sorted(placed)]

    def _append_tenant(
        self, tx: Tx, writes: Sequence[tuple[int, EventWrite]], now: datetime,
        quota: Quota | None, pending: Mapping[tuple[str, str], str],
    ) -> list[tuple[int, Event]]:  # fmt: skip
        """Append one tenant's writes: claim and hold the sessions, skip repeated idempotency
        keys, number, write the rows, write what derives from them, and count them against
        the tenant's *quota* (last: the counter row stays locked until the commit)."""
        d = self._d
        tenant = writes[0][1].scope.tenant
        last_seq = self._claim_sessions(tx, tenant, [w.scope for _, w in writes])
        keep = self._episode_days(tx, tenant)
        held = self._held_keys(tx, tenant, [w.event.idempotency_key for _, w in writes])
        out: list[tuple[int, Event]] = []
        rows: list[tuple[Any, ...]] = []
        for n, write in writes:
            scope, new = write.scope, write.event
            assert scope.session is not None
            key = new.idempotency_key
            if key is not None:
                if (scope.session, key) in held:
                    continue
                held.add((scope.session, key))
            last_seq[scope.session] += 1
            event = _new_event(write, last_seq[scope.session], new.at or now)
            expires = None if keep is None else d.time(event.at + timedelta(days=keep))
            extra = self._item_extras(scope, event.role.value, "event")
            rows.append((
                tenant, event.id, "event", scope.user, scope.session, scope.agent, event.seq,
                event.role.value, event_label(new), event.content, d.time(event.at),
                d.json(list(event.tags)), d.json(dict(event.metadata)), event.version,
                event.content_hash, write.embed_hash, key, expires, d.time(now), *extra,
            ))  # fmt: skip
            out.append((n, event))
        if not rows:
            return []
        rowids = self._insert_items(tx, tenant, rows)
        by_n = dict(writes)
        self._insert_parts(tx, tenant, [(rowids[by_n[n].id], by_n[n]) for n, _ in out])
        if pending:
            waits = [(rowids[by_n[n].id], by_n[n]) for n, _ in out]
            insert_pending(tx, self._d, tenant, waits, pending)
        self._derive_from_events(tx, [(by_n[n], e) for n, e in out], now)
        spans: dict[str, tuple[datetime, datetime]] = {}
        for _, event in out:
            session = event.scope.session or ""
            first, last = spans.get(session, (event.at, event.at))
            spans[session] = (min(first, event.at), max(last, event.at))
        self._set_last_seqs(tx, tenant, last_seq, spans)
        chars = sum(len(event.content) for _, event in out)
        add_usage(tx, tenant, events=len(out), chars=chars, quota=quota)
        return out

    def _set_last_seqs(
        self, tx: Tx, tenant: str, last_seq: Mapping[str, int],
        spans: Mapping[str, tuple[datetime, datetime]],
    ) -> None:  # fmt: skip
        """Record each session's last sequence number and widen its span of event times by
        the (first, last) times of the events just written."""
        d = self._d
        rows = []
        for session, seq in last_seq.items():
            first, last = (d.opt_time(t) for t in spans.get(session, (None, None)))
            rows.append((seq, first, first, last, last, tenant, session))
        tx.executemany(
            "UPDATE sessions SET last_seq = ?,"
            " first_at = CASE WHEN first_at IS NULL OR first_at > ? THEN ? ELSE first_at END,"
            " last_at = CASE WHEN last_at IS NULL OR last_at < ? THEN ? ELSE last_at END"
            " WHERE tenant = ? AND session = ?",
            rows,
        )

    def _retime_sessions(self, tx: Tx, tenant: str, sessions: Iterable[str]) -> None:
        """Set the span of event times of *sessions* from the events they still hold."""
        for part in self._d.batches(sorted(sessions)):
            cond, params = self._d.one_of("session", part)
            tx.execute(
                "UPDATE sessions SET"
                f" first_at = (SELECT min(i.at) {_SESSION_EVENTS}),"
                f" last_at = (SELECT max(i.at) {_SESSION_EVENTS})"
                f" WHERE tenant = ? AND {cond}",
                [tenant, tenant, tenant, *params],
            )

    def _add_sessions(self, tx: Tx, tenant: str, owners: Mapping[str, str | None]) -> None:
        """Create the sessions the tenant does not hold yet, for their users (a session held
        already keeps its owner: the caller checks it)."""
        created = self._d.time(datetime.now(UTC))
        tx.executemany(
            "INSERT INTO sessions (tenant, session, user_id, last_seq, created_at)"
            " VALUES (?, ?, ?, 0, ?) ON CONFLICT DO NOTHING",
            [(tenant, session, user, created) for session, user in owners.items()],
        )

    def _insert_items(self, tx: Tx, tenant: str, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        """Write new events' item rows (:data:`ITEM_COLUMNS`, then the backend's own
        :meth:`~SqlDatabase._item_extras`) in order; return each id's rowid."""
        d = self._d
        columns = ", ".join((*ITEM_COLUMNS, *self._extra_item_columns))
        marks = ", ".join("?" * (len(ITEM_COLUMNS) + len(self._extra_item_columns)))
        # One batched insert, then the rowids by id: a statement per row that returns its
        # rowid cost more than the whole batch.
        tx.executemany(f"INSERT INTO items ({columns}) VALUES ({marks})", rows)
        rowids: dict[str, int] = {}
        for part in d.batches([row[1] for row in rows]):
            cond, params = d.ids_in("i", part)
            found = tx.execute(
                f"SELECT i.id, i.rowid FROM items i WHERE {d.not_indexed('i.tenant')} = ?"
                f" AND {cond}",
                [tenant, *params],
            )
            rowids.update((r[0], int(r[1])) for r in found)
        return rowids

    def _insert_parts(self, tx: Tx, tenant: str, written: Sequence[tuple[int, EventWrite]]) -> None:
        """Tool details and chunks (or sentence units) of new events, by item rowid."""
        d = self._d
        details, chunks = [], []
        for rowid, write in written:
            event, item = write.event, d.item_key(tenant, rowid)
            if event.tool_name or event.tool_args is not None or event.tool_result is not None:
                details.append((*item, event.tool_name, d.json(event.tool_args),
                                d.json(event.tool_result)))  # fmt: skip
            chunks += [(*item, n, c.start, c.stop, c.embed_hash, c.lexical)
                       for n, c in enumerate(write.chunks)]  # fmt: skip
        if details:
            tx.executemany(
                f"INSERT INTO event_details ({d.item_columns}, tool_name, tool_args, tool_result)"
                f" VALUES ({', '.join('?' * (len(details[0])))})",
                details,
            )
        self._insert_chunks(tx, chunks)

    def _insert_chunks(self, tx: Tx, chunks: Sequence[tuple[Any, ...]]) -> None:
        if chunks:
            tx.executemany(
                f"INSERT INTO item_chunks ({self._d.item_columns}, n, start, stop, embed_hash,"
                f" lexical) VALUES ({', '.join('?' * len(chunks[0]))})",
                chunks,
            )

    def _claim_sessions(self, tx: Tx, tenant: str, scopes: Sequence[Scope]) -> dict[str, int]:
        """Claim the sessions of *scopes* (one tenant) for their users and hold them, in
        session order; return each session's last sequence number. ScopeConflict if a
        session belongs to another user (or two users of the batch name it)."""
        d = self._d
        users: dict[str, str | None] = {}
        for scope in scopes:
            assert scope.session is not None
            if users.setdefault(scope.session, scope.user) != scope.user:
                raise ScopeConflict(
                    f"session {scope.session!r} of tenant {tenant!r} is named by two users "
                    "in one batch; session ids are unique within a tenant"
                )
        names = sorted(users)
        self._add_sessions(tx, tenant, {name: users[name] for name in names})
        last: dict[str, int] = {}
        for part in d.batches(names):
            cond, params = d.one_of("session", part)
            for session, owner, seq in tx.execute(
                f"SELECT session, user_id, last_seq FROM sessions WHERE tenant = ? AND {cond}"
                f" ORDER BY session{d.for_update}",
                [tenant, *params],
            ):
                if owner != users[session]:
                    raise ScopeConflict(
                        f"session {session!r} belongs to another user of tenant {tenant!r}; "
                        "session ids are unique within a tenant"
                    )
                last[session] = int(seq)
        return last

    def _held_keys(self, tx: Tx, tenant: str, keys: Sequence[str | None]) -> set[tuple[str, str]]:
        """(session, idempotency key) of the tenant's stored events among *keys*."""
        d = self._d
        held: set[tuple[str, str]] = set()
        for part in d.batches(sorted({k for k in keys if k is not None})):
            cond, params = d.one_of("idem_key", part)
            rows = tx.execute(
                f"SELECT session, idem_key FROM items WHERE tenant = ? AND {cond}",
                [tenant, *params],
            )
            held.update((r[0], r[1]) for r in rows)
        return held

    def _episode_days(self, tx: Tx, tenant: str) -> float | None:
        """How long the tenant keeps events (its policy's ``episode_days``)."""
        row = tx.execute("SELECT body FROM tenant_policy WHERE tenant = ?", (tenant,)).fetchone()
        days = None if row is None else self._d.read_json(row[0]).get("episode_days")
        return None if days is None else float(days)

    # -- reads -----------------------------------------------------------------------------

    def events(
        self, scope: Scope, *, ids: Sequence[str] | None = None, after_seq: int | None = None,
        limit: int | None = None, tail: int | None = None, tools: bool = False,
    ) -> list[Event]:  # fmt: skip
        d = self._d
        where, params = where_clause(d, scope, Filters(kinds=("event",)), row_check=ids is not None)
        if tools:
            where += " AND (e.tool_name IS NOT NULL OR i.role = 'tool')"
        if after_seq is not None:
            where += " AND i.seq > ?"
            params.append(after_seq)
        if ids is not None:
            if not ids:
                return []
            cond, more = d.ids_in("i", ids)
            where += f" AND {cond}"
            params += more
        order = "i.seq" if scope.session is not None else "i.at, i.session, i.seq"
        if tail is not None:
            order = ", ".join(f"{column} DESC" for column in order.split(", "))
        sql = f"SELECT {_EVENT_COLUMNS} {self._events_from} WHERE {where} ORDER BY {order}"
        count = tail if tail is not None else limit
        if count is not None:
            sql += " LIMIT ?"
            params.append(int(count))
        with self._read(scope) as tx:
            rows = [self._event(row) for row in tx.execute(sql, params)]
        return rows[::-1] if tail is not None else rows

    def user_sessions(self, scope: Scope) -> list[SessionInfo]:
        user = require_user(scope, "user_sessions")
        rows = self._read_all(
            scope,
            "SELECT session, created_at, last_seq, first_at, last_at FROM sessions"
            " WHERE tenant = ? AND user_id = ? ORDER BY coalesce(first_at, created_at), session",
            (scope.tenant, user),
        )
        d = self._d
        times = d.read_time, d.read_opt_time
        return [
            SessionInfo(r[0], times[0](r[1]), int(r[2]), times[1](r[3]), times[1](r[4]))
            for r in rows
        ]

    def tenant_users(
        self, tenant: str, *, contains: str | None = None, limit: int = 100
    ) -> list[UserInfo]:
        params: list[Any] = [tenant]
        cond = ""
        if contains:
            # LIKE's wildcards in the text match themselves; lower() on both sides, as
            # PostgreSQL's LIKE is case-sensitive and SQLite's is not.
            escaped = contains.lower().replace("!", "!!").replace("%", "!%").replace("_", "!_")
            cond = " AND lower(user_id) LIKE ? ESCAPE '!'"
            params.append(f"%{escaped}%")
        rows = self._read_all(
            Scope(tenant),
            "SELECT user_id, count(*), sum(last_seq), min(coalesce(first_at, created_at)),"
            " max(coalesce(last_at, created_at)) AS active FROM sessions"
            f" WHERE tenant = ?{cond} GROUP BY user_id ORDER BY active DESC, user_id LIMIT ?",
            [*params, limit],
        )
        read = self._d.read_time
        return [UserInfo(r[0], int(r[1]), int(r[2]), read(r[3]), read(r[4])) for r in rows]

    def session_owners(self, tenant: str, sessions: Sequence[str]) -> dict[str, str]:
        d = self._d
        owners: dict[str, str] = {}
        with self._read(Scope(tenant)) as tx:
            for part in d.batches(list(dict.fromkeys(sessions))):
                cond, params = d.one_of("session", part)
                owners.update(
                    (r[0], r[1])
                    for r in tx.execute(
                        f"SELECT session, user_id FROM sessions WHERE tenant = ? AND {cond}",
                        [tenant, *params],
                    )
                )
        return owners

    def items(self, scope: Scope, ids: Sequence[str]) -> list[Item]:
        d = self._d
        out: list[Item] = []
        with self._read(scope) as tx:
            for part in d.batches(list(ids)):
                where, params = where_clause(d, scope, Filters(kinds=KINDS), row_check=True)
                cond, more = d.ids_in("i", part)
                sql = (
                    f"SELECT {_ITEM_COLUMNS} FROM items i"
                    f" LEFT JOIN item_access a ON {d.item_join('a', 'i')}"
                    f" WHERE {where} AND {cond}"
                )
                out += [self._item(row) for row in tx.execute(sql, [*params, *more])]
        return out

    def _item(self, row: Sequence[Any]) -> Item:
        d = self._d
        return Item(
            id=row[0], kind=row[1], scope=stored_scope(row[2], row[3], row[4], row[5]),
            seq=None if row[6] is None else int(row[6]), role=_ROLES[row[7]], text=row[8],
            at=d.read_time(row[9]), metadata=d.read_json(row[10]), tags=d.read_tags(row[11]),
            access_count=int(row[12]), last_access=d.read_opt_time(row[13]),
        )  # fmt: skip

    # -- reindexing ------------------------------------------------------------------------

    def index_layouts(self, tenant: str, *, after: int, limit: int) -> list[IndexLayout]:
        if limit < 1:
            raise InvalidInput("limit must be >= 1")
        d = self._d
        with self._read(Scope(tenant)) as tx:
            rows = tx.execute(
                f"SELECT {_EVENT_COLUMNS} {self._events_from}"
                " WHERE i.tenant = ? AND i.kind = 'event' AND i.rowid > ?"
                " ORDER BY i.rowid LIMIT ?",
                (tenant, int(after), int(limit)),
            ).fetchall()
            spans: dict[int, list[Chunk]] = {}
            for part in d.batches([int(r[0]) for r in rows]):
                cond, params = d.item_rows(tenant, part)
                for item, start, stop, digest, lexical in tx.execute(
                    "SELECT item, start, stop, embed_hash, lexical FROM item_chunks"
                    f" WHERE {cond} ORDER BY item, n",
                    params,
                ):
                    spans.setdefault(int(item), []).append(
                        Chunk(int(start), int(stop), digest, lexical=bool(lexical))
                    )
        return [
            IndexLayout(int(r[0]), self._event(r), r[18], tuple(spans.get(int(r[0]), ())))
            for r in rows
        ]

    def reindex_events(
        self, tenant: str, changes: Sequence[IndexChange], *, model: ModelInfo | None = None,
        vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
    ) -> int:  # fmt: skip
        if not check_changes(changes, model=model, vectors=vectors):
            return 0
        checked = {h: checked_vector(v, model, h) for h, v in (vectors or {}).items()}
        with self._write(Scope(tenant)) as tx:
            if model is not None and checked:
                check_model(tx, self._d, model, claim=True)
                self._store_vectors(tx, tenant, checked)
            live = self._rowids(tx, tenant, [c.id for c in changes])
            done = [(c, live[c.id]) for c in changes if c.id in live]  # others: erased since
            self._rewrite_index_rows(tx, tenant, done)
        self._after_reindex(tenant)
        return len(done)

    def _rowids(self, tx: Tx, tenant: str, ids: Sequence[str]) -> dict[str, int]:
        """The rowids of the tenant's events with these ids."""
        found: dict[str, int] = {}
        for part in self._d.batches(ids):
            cond, params = self._d.one_of("id", part)
            found.update(
                (r[0], int(r[1]))
                for r in tx.execute(
                    f"SELECT id, rowid FROM items WHERE tenant = ? AND kind = 'event' AND {cond}",
                    [tenant, *params],
                )
            )
        return found

    def _rewrite_index_rows(
        self, tx: Tx, tenant: str, changes: Sequence[tuple[IndexChange, int]]
    ) -> None:
        """Give events their new embedded text or chunks; their old partition rows leave
        through the index log and come back from the new ones."""
        d = self._d
        tx.executemany(
            "UPDATE items SET embed_hash = ? WHERE tenant = ? AND rowid = ?",
            [(c.embed_hash, tenant, rowid) for c, rowid in changes],
        )
        rowids = [rowid for _, rowid in changes]
        for part in d.batches(rowids):
            cond, params = d.item_rows(tenant, part)
            tx.execute(f"DELETE FROM item_chunks WHERE {cond}", params)
        self._insert_chunks(tx, [
            (*d.item_key(tenant, rowid), n, c.start, c.stop, c.embed_hash, c.lexical)
            for change, rowid in changes
            for n, c in enumerate(change.chunks)
        ])  # fmt: skip
        self._log_removed(tx, tenant, rowids, op="reindex")

    # -- token counts ----------------------------------------------------------------------

    def token_counts(self, scope: Scope, ids: Sequence[str], encoding: str) -> dict[str, int]:
        d = self._d
        out: dict[str, int] = {}
        with self._read(scope) as tx:
            for part in d.batches(list(ids)):
                where, params = where_clause(d, scope, Filters(kinds=KINDS), row_check=True)
                cond, more = d.ids_in("i", part)
                rows = tx.execute(
                    f"SELECT i.id, t.n FROM token_counts t JOIN items i ON {d.item_join('t', 'i')}"
                    f" WHERE t.encoding = ? AND {where} AND {cond}",
                    [encoding, *params, *more],
                )
                out.update((row[0], int(row[1])) for row in rows)
        return out

    def put_token_counts(self, scope: Scope, encoding: str, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        d = self._d
        where, params = where_clause(d, scope, Filters(kinds=KINDS), row_check=True)
        one, _ = d.ids_in("i", ["one id"])
        with self._write(scope) as tx:
            tx.executemany(
                f"INSERT INTO token_counts ({d.item_columns}, encoding, n)"
                f" SELECT {d.item_key_of('i')}, ?, ? FROM items i WHERE {where} AND {one}"
                f" ON CONFLICT ({d.item_columns}, encoding) DO UPDATE SET n = excluded.n",
                [
                    (encoding, int(n), *params, *d.ids_in("i", [record_id])[1])
                    for record_id, n in counts.items()
                ],
            )

    # -- erasure ---------------------------------------------------------------------------

    def erase_generation(self, tenant: str) -> int:
        with self._read(Scope(tenant)) as tx:
            return erase_generation(tx, tenant)

    def forget(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        before: datetime | None = None,
    ) -> int:
        d = self._d
        where, params = where_clause(d, scope, Filters(kinds=KINDS), row_check=ids is not None)
        if ids is not None:
            if not ids:
                return 0
            cond, more = d.ids_in("i", ids)
            where += f" AND {cond}"
            params += more
        if before is not None:
            where += " AND i.at < ?"
            params.append(d.time(before))
        return self._erase(scope, where, params, whole=ids is None and before is None)

    def purge(self, tenant: str, *, now: datetime, episodes_before: datetime | None) -> int:
        """Hard retention: remove the tenant's records past their ``expires_at``, and events
        older than *episodes_before*, from every index; what a legal hold covers stays.

        Returns the number of records removed.
        """
        d = self._d
        where = "i.tenant = ? AND (i.expires_at < ?"
        params: list[Any] = [tenant, d.time(now)]
        if episodes_before is not None:
            where += " OR (i.kind = 'event' AND i.at < ?)"
            params.append(d.time(episodes_before))
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
        transaction no other write of the tenant runs beside; *whole*: the whole scope goes,
        sessions without events included. With *log_at* (the purge) what a legal hold covers
        is left out instead of refusing, the removed records are counted in the purge log,
        and what else had expired goes too (:meth:`_purge_more`)."""
        tenant = scope.tenant
        with self._write(scope, exclusive=True) as tx:
            where, params = self._unheld(tx, scope, where, list(params), purge=log_at is not None)
            if not where:
                return 0
            doomed = tx.execute(
                f"DELETE FROM items AS i WHERE {where}"
                " RETURNING id, session, seq, rowid, kind, length(text)",
                params,
            ).fetchall()
            self._log_removed(tx, tenant, [int(r[3]) for r in doomed])
            events = [int(r[5]) for r in doomed if r[4] == "event"]
            remove_usage(tx, tenant, events=len(events), chars=sum(events))
            if log_at is not None and doomed:  # the purge counts what it removes, by kind
                kinds = Counter(r[4] for r in doomed)
                tx.executemany(
                    "INSERT INTO purge_log (tenant, at, kind, count) VALUES (?, ?, ?, ?)",
                    [(tenant, self._d.time(log_at), k, kinds[k]) for k in sorted(kinds)],
                )
            gone = self._gone_sessions(tx, scope, doomed, whole=whole)
            self._delete_sessions(tx, tenant, gone)
            self._retime_sessions(tx, tenant, {r[1] for r in doomed if r[1]} - set(gone))
            records = [(r[0], r[1], r[2]) for r in doomed]
            erasure = Erasure(scope, records, gone, purge=log_at is not None, whole=whole)
            self._forget_derived(tx, erasure)
            more = 0 if log_at is None else self._purge_more(tx, tenant, log_at)
            self._drop_unused_vectors(tx, tenant)
            if whole and scope.session is None:
                # Erasing a user (or a tenant's users) takes their choices along.
                owned, owned_params = scope_sql(self._d, Scope(tenant, scope.user))
                tx.execute(f"DELETE FROM user_settings WHERE {owned}", owned_params)
        if doomed:
            self._after_forget(tenant)
        self._after_erase(tenant, len(doomed))
        return len(doomed) + more

    def _unheld(
        self, tx: Tx, scope: Scope, where: str, params: list[Any], *, purge: bool
    ) -> tuple[str, list[Any]]:
        """An erase on request is refused under a legal hold (:meth:`_before_erase`); the
        purge leaves out what holds cover instead ('' when the whole tenant is held)."""
        if not purge:
            self._before_erase(tx, scope)
            return where, params
        for user, session in tx.execute(
            "SELECT user_id, session FROM legal_holds WHERE tenant = ?", (scope.tenant,)
        ).fetchall():
            if not user and not session:
                return "", []  # the whole tenant is held
            column, value = ("session", session) if session else ("user_id", user)
            where += f" AND (i.{column} IS NULL OR i.{column} <> ?)"
            params.append(value)
        return where, params

    def _delete_sessions(self, tx: Tx, tenant: str, sessions: Sequence[str]) -> None:
        for part in self._d.batches(sessions):
            cond, params = self._d.one_of("session", part)
            tx.execute(f"DELETE FROM sessions WHERE tenant = ? AND {cond}", [tenant, *params])

    def _drop_unused_vectors(self, tx: Tx, tenant: str) -> None:
        """Vectors no record or chunk of the tenant uses any more go with the erased text
        (after the derived records: a fact read only from erased turns goes too)."""
        tx.execute(
            "DELETE FROM vectors WHERE tenant = ? AND hash NOT IN"
            " (SELECT embed_hash FROM items WHERE tenant = ? AND embed_hash IS NOT NULL)"
            " AND hash NOT IN (SELECT c.embed_hash FROM item_chunks c"
            f" JOIN items i ON {self._d.item_join('c', 'i')}"
            " WHERE i.tenant = ? AND c.embed_hash IS NOT NULL)",
            (tenant, tenant, tenant),
        )

    def _gone_sessions(
        self, tx: Tx, scope: Scope, doomed: Sequence[Sequence[Any]], *, whole: bool
    ) -> list[str]:
        """The sessions an erase removes entirely: every session of the scope when the whole
        scope goes (with or without events), else those it left without events."""
        if whole:
            owned, params = scope_sql(self._d, scope)
            return [r[0] for r in tx.execute(f"SELECT session FROM sessions WHERE {owned}", params)]
        touched = sorted({r[1] for r in doomed if r[1] is not None})
        left: set[str] = set()
        for part in self._d.batches(touched):
            cond, params = self._d.one_of("session", part)
            left.update(
                r[0]
                for r in tx.execute(
                    f"SELECT DISTINCT session FROM items WHERE tenant = ? AND {cond}",
                    [scope.tenant, *params],
                )
            )
        return [s for s in touched if s not in left]
