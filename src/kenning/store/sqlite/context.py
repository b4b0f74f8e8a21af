"""The working-context tables of the SQLite store: pins, summaries and their audit log, task
state and the per-session token ledger.

A mixin of :class:`~kenning.store.sqlite.store.SQLiteStore`; every statement is constrained by
the scope inside its SQL, like the rest of the store.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from kenning.errors import InvalidInput
from kenning.records import (
    AuditAction,
    AuditEntry,
    Event,
    Pin,
    PinDraft,
    PinKind,
    PinStatus,
    Role,
    Scope,
    Summary,
    TaskState,
)
from kenning.store.records import ContextSnapshot, EventWrite, MessageRow, Usage
from kenning.store.sqlite.database import Database, check_generation, check_owner
from kenning.store.sqlite.sql import chunks, scope_sql
from kenning.store.sqlite.sql import ts as _ts

__all__ = ["ContextTables"]

_PIN_COLUMNS = (
    "id, tenant, user_id, session, kind, key, version, value, amount, currency, status, "
    "source_event_id, metadata, created_at, closed_at"
)
_SUMMARY_COLUMNS = (
    "id, tenant, user_id, session, level, first_seq, last_seq, text, body, summarizer, created_at"
)
_AUDIT_COLUMNS = (
    "rowid, tenant, user_id, session, at, action, first_seq, last_seq, tokens_before, "
    "tokens_after, summary_id, summarizer, detail"
)


_ROLES = {role.value: role for role in Role}


def _pin(row: Sequence[Any]) -> Pin:
    return Pin(
        id=row[0], scope=Scope(row[1], row[2], row[3]), kind=PinKind(row[4]), key=row[5],
        version=int(row[6]), value=row[7],
        amount=None if row[8] is None else Decimal(row[8]), currency=row[9],
        status=PinStatus(row[10]), source_event_id=row[11], metadata=json.loads(row[12]),
        created_at=_ts(row[13]), closed_at=None if row[14] is None else _ts(row[14]),
    )  # fmt: skip


def _summary(row: Sequence[Any]) -> Summary:
    return Summary(
        id=row[0], scope=Scope(row[1], row[2], row[3]), level=int(row[4]),
        first_seq=int(row[5]), last_seq=int(row[6]), text=row[7], body=json.loads(row[8]),
        summarizer=row[9], created_at=_ts(row[10]),
    )  # fmt: skip


def _audit(row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(
        id=int(row[0]), scope=Scope(row[1], row[2], row[3]), at=_ts(row[4]),
        action=AuditAction(row[5]), first_seq=row[6], last_seq=row[7], tokens_before=row[8],
        tokens_after=row[9], summary_id=row[10], summarizer=row[11], detail=row[12],
    )  # fmt: skip


def _same(current: Pin, draft: PinDraft) -> bool:
    return (
        current.kind is draft.kind
        and current.value == draft.value
        and current.amount == draft.amount
        and current.currency == draft.currency
        and current.status is draft.status
        and dict(current.metadata) == dict(draft.metadata)
    )


def _ledger_at(
    conn: sqlite3.Connection, scope: Scope, encoding: str, seq: int | None = None
) -> tuple[int, int]:
    """(seq, running total) of the session's last ledger row at or before *seq* (the head
    when None); (0, 0) if there is none."""
    sql = "SELECT seq, cum FROM token_ledger WHERE tenant = ? AND session = ? AND encoding = ?"
    params: list[Any] = [scope.tenant, scope.session, encoding]
    if seq is not None:
        sql += " AND seq <= ?"
        params.append(seq)
    row = conn.execute(sql + " ORDER BY seq DESC LIMIT 1", params).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def _tail_start(
    conn: sqlite3.Connection, scope: Scope, encoding: str, floor: int, after_seq: int
) -> int:
    """The sequence number a tail starts after: the events after it sum to at most the total
    minus *floor*. Running totals grow with seq, so this is one index lookup."""
    if floor <= 0:
        return after_seq
    row = conn.execute(
        "SELECT seq FROM token_ledger WHERE tenant = ? AND session = ? AND encoding = ?"
        " AND cum >= ? ORDER BY cum LIMIT 1",
        (scope.tenant, scope.session, encoding, floor),
    ).fetchone()
    return after_seq if row is None else max(after_seq, int(row[0]))


class ContextTables(Database):
    """Pins, summaries and their audit log, task state and the token ledger."""

    # -- pins ------------------------------------------------------------------------------

    def put_pins(
        self,
        scope: Scope,
        drafts: Sequence[PinDraft],
        *,
        at: datetime,
        mode: Literal["add", "set"] = "set",
        generation: int | None = None,
    ) -> list[Pin]:
        scope = scope.require_session()
        if mode not in ("add", "set"):
            raise InvalidInput("mode must be 'add' or 'set'")
        if not drafts:
            return []
        with self._write(scope, claim=True) as conn:
            check_generation(conn, scope.tenant, generation)
            return self._put_pins(conn, scope, drafts, at=at, mode=mode)

    @staticmethod
    def _put_pins(
        conn: sqlite3.Connection,
        scope: Scope,
        drafts: Sequence[PinDraft],
        *,
        at: datetime,
        mode: Literal["add", "set"],
    ) -> list[Pin]:
        written: list[Pin] = []
        for draft in drafts:
            row = conn.execute(
                f"SELECT {_PIN_COLUMNS} FROM pins"
                " WHERE tenant = ? AND session = ? AND key = ? AND current = 1",
                (scope.tenant, scope.session, draft.key),
            ).fetchone()
            version = 1
            if row is not None:
                current = _pin(row)
                if mode == "add" or _same(current, draft):
                    continue
                version = current.version + 1
                conn.execute(
                    "UPDATE pins SET current = 0"
                    " WHERE tenant = ? AND session = ? AND key = ? AND current = 1",
                    (scope.tenant, scope.session, draft.key),
                )
            closed = at if draft.status is PinStatus.CLOSED else None
            pin = Pin(
                id=f"pin_{uuid.uuid4().hex}", scope=Scope(scope.tenant, scope.user, scope.session),
                kind=draft.kind, key=draft.key, value=draft.value, version=version,
                amount=draft.amount, currency=draft.currency, status=draft.status,
                source_event_id=draft.source_event_id, created_at=at, closed_at=closed,
                metadata=dict(draft.metadata),
            )  # fmt: skip
            conn.execute(
                f"INSERT INTO pins ({_PIN_COLUMNS}, current)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (
                    pin.id, scope.tenant, scope.user, scope.session, pin.kind.value, pin.key,
                    pin.version, pin.value, None if pin.amount is None else str(pin.amount),
                    pin.currency, pin.status.value, pin.source_event_id,
                    json.dumps(dict(pin.metadata), sort_keys=True), at.timestamp(),
                    None if closed is None else closed.timestamp(),
                ),
            )  # fmt: skip
            written.append(pin)
        return written

    def _derive_from_events(
        self, conn: sqlite3.Connection, written: Sequence[tuple[EventWrite, Event]], at: datetime
    ) -> None:
        # Pins ride in the events' transaction: no committed event ever lacks its pins.
        for write, event in written:
            if write.pins:
                self._put_pins(conn, event.scope, write.pins, at=at, mode="add")

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        where, params = scope_sql(scope)
        if not history:
            where += " AND current = 1"
        with self._read(scope) as conn:
            rows = conn.execute(
                f"SELECT {_PIN_COLUMNS} FROM pins WHERE {where} ORDER BY rowid", params
            ).fetchall()
        return [_pin(r) for r in rows]

    # -- summaries and the audit log -------------------------------------------------------

    def put_summary(
        self,
        summary: Summary,
        *,
        replaces: Sequence[str] = (),
        guard_pins: Sequence[PinDraft] = (),
        audit: Sequence[AuditEntry] = (),
        generation: int | None = None,
    ) -> Summary:
        scope = summary.scope.require_session()
        with self._write(scope, claim=True) as conn:
            check_generation(conn, scope.tenant, generation)
            if guard_pins:
                self._put_pins(conn, scope, guard_pins, at=summary.created_at, mode="add")
            conn.execute(
                f"INSERT INTO summaries ({_SUMMARY_COLUMNS}, active)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (
                    summary.id, scope.tenant, scope.user, scope.session, summary.level,
                    summary.first_seq, summary.last_seq, summary.text,
                    json.dumps(dict(summary.body), sort_keys=True), summary.summarizer,
                    summary.created_at.timestamp(),
                ),
            )  # fmt: skip
            for old in replaces:
                conn.execute(
                    "UPDATE summaries SET active = 0 WHERE tenant = ? AND session = ? AND id = ?",
                    (scope.tenant, scope.session, old),
                )
            self._append_audit(conn, audit)
        return summary

    def summaries(self, scope: Scope, *, include_replaced: bool = False) -> list[Summary]:
        where, params = scope_sql(scope)
        if not include_replaced:
            where += " AND active = 1"
        with self._read(scope) as conn:
            rows = conn.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE {where}"
                " ORDER BY session, first_seq, level",
                params,
            ).fetchall()
        return [_summary(r) for r in rows]

    def audit(self, entries: Sequence[AuditEntry]) -> None:
        if entries:
            with self._write(None) as conn:
                for entry in entries:
                    check_owner(conn, entry.scope)
                self._append_audit(conn, entries)

    @staticmethod
    def _append_audit(conn: sqlite3.Connection, entries: Sequence[AuditEntry]) -> None:
        conn.executemany(
            "INSERT INTO compaction_log (tenant, user_id, session, at, action, first_seq, last_seq,"
            " tokens_before, tokens_after, summary_id, summarizer, detail)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    e.scope.tenant, e.scope.user, e.scope.session, e.at.timestamp(),
                    e.action.value, e.first_seq, e.last_seq, e.tokens_before, e.tokens_after,
                    e.summary_id, e.summarizer, e.detail,
                )
                for e in entries
            ],
        )  # fmt: skip

    def audit_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        where, params = scope_sql(scope)
        with self._read(scope) as conn:
            rows = conn.execute(
                f"SELECT {_AUDIT_COLUMNS} FROM compaction_log WHERE {where}"
                " ORDER BY rowid DESC LIMIT ?",
                [*params, limit],
            ).fetchall()
        return [_audit(r) for r in reversed(rows)]

    # -- task state ------------------------------------------------------------------------

    def task_state(self, scope: Scope) -> TaskState:
        scope = scope.require_session()
        with self._read(scope) as conn:
            row = conn.execute(
                "SELECT body FROM task_state WHERE tenant = ? AND user_id = ? AND session = ?",
                (scope.tenant, scope.user, scope.session),
            ).fetchone()
        return TaskState() if row is None else TaskState.from_json(json.loads(row[0]))

    def put_task_state(
        self, scope: Scope, state: TaskState, *, expected: int, at: datetime
    ) -> bool:
        scope = scope.require_session()
        with self._write(scope, claim=True) as conn:
            row = conn.execute(
                "SELECT version FROM task_state WHERE tenant = ? AND user_id = ? AND session = ?",
                (scope.tenant, scope.user, scope.session),
            ).fetchone()
            if (0 if row is None else int(row[0])) != expected:
                return False
            conn.execute(
                "INSERT OR REPLACE INTO task_state (tenant, session, user_id, body, version,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    scope.tenant, scope.session, scope.user, json.dumps(state.to_json()),
                    state.version, at.timestamp(),
                ),
            )  # fmt: skip
        return True

    # -- token usage -----------------------------------------------------------------------

    def add_usage(
        self, scope: Scope, model: str, *, input_tokens: int, output_tokens: int, cost: float,
        calls: int = 1,
    ) -> None:  # fmt: skip
        scope = scope.require_session()
        with self._write(scope, claim=True) as conn:
            conn.execute(
                "INSERT INTO token_usage (tenant, session, model, input_tokens, output_tokens,"
                " calls, cost) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, session, model)"
                " DO UPDATE SET input_tokens = input_tokens + excluded.input_tokens,"
                " output_tokens = output_tokens + excluded.output_tokens,"
                " calls = calls + excluded.calls, cost = cost + excluded.cost",
                (scope.tenant, scope.session, model, input_tokens, output_tokens, calls, cost),
            )

    def usage(self, scope: Scope) -> list[Usage]:
        scope = scope.require_session()
        with self._read(scope) as conn:
            rows = conn.execute(
                "SELECT model, input_tokens, output_tokens, calls, cost FROM token_usage"
                " WHERE tenant = ? AND session = ? ORDER BY model",
                (scope.tenant, scope.session),
            ).fetchall()
        return [Usage(r[0], int(r[1]), int(r[2]), int(r[3]), float(r[4])) for r in rows]

    # -- the token ledger ------------------------------------------------------------------

    def ledger_head(self, scope: Scope, encoding: str) -> tuple[int, int]:
        """(last counted sequence number, total tokens through it); (0, 0) if none."""
        scope = scope.require_session()
        with self._read(scope) as conn:
            return _ledger_at(conn, scope, encoding)

    def extend_ledger(self, scope: Scope, encoding: str, counts: Sequence[tuple[int, int]]) -> None:
        """Append ``(seq, tokens)`` of events after the ledger's head, in sequence order."""
        scope = scope.require_session()
        if not counts:
            return
        with self._write(scope) as conn:
            head, cum = _ledger_at(conn, scope, encoding)
            rows = []
            for seq, n in counts:
                if seq <= head:
                    continue  # counted by a concurrent writer already
                cum += n
                head = seq
                rows.append((scope.tenant, scope.session, encoding, seq, n, cum))
            conn.executemany(
                "INSERT INTO token_ledger (tenant, session, encoding, seq, n, cum)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def ledger_cum(self, scope: Scope, encoding: str, seq: int) -> int:
        """Tokens of the session's events through *seq* (0 before the first)."""
        scope = scope.require_session()
        with self._read(scope) as conn:
            return _ledger_at(conn, scope, encoding, seq)[1]

    def context_snapshot(self, scope: Scope, encoding: str, *, room: int) -> ContextSnapshot:
        scope = scope.require_session()
        key = (scope.tenant, scope.session)
        with self._read(scope) as conn:
            row = conn.execute(
                "SELECT body FROM task_state WHERE tenant = ? AND user_id = ? AND session = ?",
                (scope.tenant, scope.user, scope.session),
            ).fetchone()
            task = TaskState() if row is None else TaskState.from_json(json.loads(row[0]))
            pins = conn.execute(
                f"SELECT {_PIN_COLUMNS} FROM pins WHERE tenant = ? AND session = ?"
                " AND current = 1 ORDER BY rowid",
                key,
            ).fetchall()
            summaries = conn.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE tenant = ? AND session = ?"
                " AND active = 1 ORDER BY first_seq, level",
                key,
            ).fetchall()
            boundary = max((int(r[6]) for r in summaries), default=0)
            counted, total = _ledger_at(conn, scope, encoding)
            last = conn.execute(
                "SELECT last_seq FROM sessions WHERE tenant = ? AND session = ?", key
            ).fetchone()
            start = _tail_start(conn, scope, encoding, total - room, boundary)
            tail = conn.execute(
                "SELECT t.seq, i.id, i.role, i.text, d.tool_name,"
                " CASE WHEN i.role = 'tool' THEN json_extract(i.metadata, '$.tool_call_id') END,"
                " t.n FROM token_ledger t"
                " JOIN items i ON i.tenant = t.tenant AND i.session = t.session AND i.seq = t.seq"
                " AND i.kind = 'event'"
                " LEFT JOIN event_details d ON d.item = i.rowid"
                " WHERE t.tenant = ? AND t.session = ? AND t.encoding = ? AND t.seq > ?"
                " ORDER BY t.seq",
                (*key, encoding, start),
            ).fetchall()
            summarized = _ledger_at(conn, scope, encoding, boundary)[1]
        return ContextSnapshot(
            task=task,
            pins=tuple(_pin(r) for r in pins),
            summaries=tuple(_summary(r) for r in summaries),
            total=total,
            summarized=summarized,
            tail=tuple(
                MessageRow(
                    seq=r[0],
                    id=r[1],
                    role=_ROLES[r[2]],
                    text=r[3],
                    tool_name=r[4],
                    tool_call_id=r[5] if isinstance(r[5], str) else None,
                    tokens=r[6],
                )
                for r in tail
            ),
            counted_seq=counted,
            last_seq=0 if last is None else int(last[0]),
        )

    def ledger_tail(
        self, scope: Scope, encoding: str, *, room: int, after_seq: int = 0
    ) -> list[tuple[int, int]]:
        """``(seq, tokens)`` of the longest run of newest events after *after_seq* whose tokens
        sum to at most *room*, oldest first."""
        scope = scope.require_session()
        with self._read(scope) as conn:
            _, total = _ledger_at(conn, scope, encoding)
            start = _tail_start(conn, scope, encoding, total - room, after_seq)
            rows = conn.execute(
                "SELECT seq, n FROM token_ledger WHERE tenant = ? AND session = ? AND encoding = ?"
                " AND seq > ? ORDER BY seq",
                (scope.tenant, scope.session, encoding, start),
            ).fetchall()
        return [(int(r[0]), int(r[1])) for r in rows]

    # -- erasure ---------------------------------------------------------------------------

    def _forget_derived(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        erased: Sequence[tuple[str, str | None, int | None]],
        gone: Sequence[str],
        *,
        purge: bool = False,
    ) -> None:
        """Drop what derives from erased events — pins sourced from them, summaries covering
        them, the token ledger of their sessions — and everything of the *gone* sessions."""
        super()._forget_derived(conn, scope, erased, gone, purge=purge)
        touched: dict[str, int] = {}
        for _, session, seq in erased:
            # Only turns are summarized and counted: an erased fact leaves both alone.
            if session is not None and seq is not None:
                touched[session] = min(seq, touched.get(session, seq))
        for chunk in chunks([e[0] for e in erased]):
            conn.execute(
                f"DELETE FROM pins WHERE tenant = ? AND source_event_id IN"
                f" ({','.join('?' * len(chunk))})",
                [scope.tenant, *chunk],
            )
        for session, first in touched.items():
            conn.execute(
                "DELETE FROM summaries WHERE tenant = ? AND session = ? AND last_seq >= ?",
                (scope.tenant, session, first),
            )
            conn.execute(
                "DELETE FROM token_ledger WHERE tenant = ? AND session = ?",
                (scope.tenant, session),
            )
        # Erased sessions keep nothing derived from them.
        for part in chunks(list(gone)):
            marks = ",".join("?" * len(part))
            for table in (
                "pins", "summaries", "compaction_log", "compaction_jobs", "task_state",
                "token_ledger", "extraction_progress", "token_usage",
            ):  # fmt: skip
                conn.execute(
                    f"DELETE FROM {table} WHERE tenant = ? AND session IN ({marks})",
                    [scope.tenant, *part],
                )
