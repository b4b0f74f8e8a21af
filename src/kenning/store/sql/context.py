"""The working-context tables, on every SQL backend: pins, summaries and their audit log, task
state, the per-session token ledger and token usage.

A mixin of the stores (:class:`~kenning.store.sql.database.SqlDatabase`). Writes to a session
hold its row (a single writer, or the row's lock), so pin versions, ledger totals and
task-state versions advance one writer at a time within a session.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
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
from kenning.store.sql.database import Erasure, SqlDatabase, check_generation, check_owner
from kenning.store.sql.dialect import Dialect, Tx
from kenning.store.sql.query import scope_sql

__all__ = ["ContextTables"]

_PIN_COLUMNS = (
    "id, tenant, user_id, session, kind, key, version, value, amount, currency, status, "
    "source_event_id, metadata, created_at, closed_at"
)
_PIN_INSERT = (
    f"INSERT INTO pins ({_PIN_COLUMNS}, current)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, TRUE)"
)
_SUMMARY_COLUMNS = (
    "id, tenant, user_id, session, level, first_seq, last_seq, text, body, summarizer, created_at"
)
_AUDIT_COLUMNS = (
    "rowid, tenant, user_id, session, at, action, first_seq, last_seq, tokens_before, "
    "tokens_after, summary_id, summarizer, detail"
)
_ROLES = {role.value: role for role in Role}
# Erased sessions keep nothing derived from them.
_SESSION_TABLES = (
    "pins", "summaries", "compaction_log", "compaction_jobs", "task_state", "token_ledger",
    "extraction_progress", "token_usage",
)  # fmt: skip


def _pin(d: Dialect, row: Sequence[Any]) -> Pin:
    return Pin(
        id=row[0], scope=Scope(row[1], row[2], row[3]), kind=PinKind(row[4]), key=row[5],
        version=int(row[6]), value=row[7], amount=d.read_amount(row[8]), currency=row[9],
        status=PinStatus(row[10]), source_event_id=row[11], metadata=d.read_json(row[12]),
        created_at=d.read_time(row[13]), closed_at=d.read_opt_time(row[14]),
    )  # fmt: skip


def _pin_row(d: Dialect, pin: Pin) -> tuple[Any, ...]:
    scope = pin.scope
    return (
        pin.id, scope.tenant, scope.user, scope.session, pin.kind.value, pin.key, pin.version,
        pin.value, d.amount(pin.amount), pin.currency, pin.status.value, pin.source_event_id,
        d.json(dict(pin.metadata)), d.time(pin.created_at),
        None if pin.closed_at is None else d.time(pin.closed_at),
    )  # fmt: skip


def _new_pin(scope: Scope, draft: PinDraft, *, version: int, at: datetime) -> Pin:
    return Pin(
        id=f"pin_{uuid.uuid4().hex}", scope=Scope(scope.tenant, scope.user, scope.session),
        kind=draft.kind, key=draft.key, value=draft.value, version=version,
        amount=draft.amount, currency=draft.currency, status=draft.status,
        source_event_id=draft.source_event_id, created_at=at,
        closed_at=at if draft.status is PinStatus.CLOSED else None,
        metadata=dict(draft.metadata),
    )  # fmt: skip


def _summary(d: Dialect, row: Sequence[Any]) -> Summary:
    return Summary(
        id=row[0], scope=Scope(row[1], row[2], row[3]), level=int(row[4]),
        first_seq=int(row[5]), last_seq=int(row[6]), text=row[7], body=d.read_json(row[8]),
        summarizer=row[9], created_at=d.read_time(row[10]),
    )  # fmt: skip


def _audit(d: Dialect, row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(
        id=int(row[0]), scope=Scope(row[1], row[2], row[3]), at=d.read_time(row[4]),
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


def _ledger_at(tx: Tx, scope: Scope, encoding: str, seq: int | None = None) -> tuple[int, int]:
    """(seq, running total) of the session's last ledger row at or before *seq* (the head
    when None); (0, 0) if there is none."""
    sql = "SELECT seq, cum FROM token_ledger WHERE tenant = ? AND session = ? AND encoding = ?"
    params: list[Any] = [scope.tenant, scope.session, encoding]
    if seq is not None:
        sql += " AND seq <= ?"
        params.append(seq)
    row = tx.execute(sql + " ORDER BY seq DESC LIMIT 1", params).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def _tail_start(tx: Tx, scope: Scope, encoding: str, floor: int, after_seq: int) -> int:
    """The sequence number a tail starts after: the events after it sum to at most the total
    minus *floor*. Running totals grow with seq, so this is one index lookup."""
    if floor <= 0:
        return after_seq
    row = tx.execute(
        "SELECT seq FROM token_ledger WHERE tenant = ? AND session = ? AND encoding = ?"
        " AND cum >= ? ORDER BY cum LIMIT 1",
        (scope.tenant, scope.session, encoding, floor),
    ).fetchone()
    return after_seq if row is None else max(after_seq, int(row[0]))


def _task(d: Dialect, tx: Tx, scope: Scope) -> TaskState:
    row = tx.execute(
        "SELECT body FROM task_state WHERE tenant = ? AND user_id = ? AND session = ?",
        (scope.tenant, scope.user, scope.session),
    ).fetchone()
    return TaskState() if row is None else TaskState.from_json(d.read_json(row[0]))


class ContextTables(SqlDatabase):
    """Pins, summaries and their audit log, task state, the token ledger and usage."""

    # -- pins ------------------------------------------------------------------------------

    def put_pins(
        self, scope: Scope, drafts: Sequence[PinDraft], *, at: datetime,
        mode: Literal["add", "set"] = "set", generation: int | None = None,
    ) -> list[Pin]:  # fmt: skip
        scope = scope.require_session()
        if mode not in ("add", "set"):
            raise InvalidInput("mode must be 'add' or 'set'")
        if not drafts:
            return []
        with self._write(scope, claim=True) as tx:
            check_generation(tx, scope.tenant, generation)
            return self._put_pins(tx, scope, drafts, at=at, mode=mode)

    def _put_pins(
        self,
        tx: Tx,
        scope: Scope,
        drafts: Sequence[PinDraft],
        *,
        at: datetime,
        mode: Literal["add", "set"],
    ) -> list[Pin]:
        """A draft whose key holds another value or status becomes its next version (the
        old one stays as history); ``add`` leaves existing keys alone."""
        d = self._d
        written: list[Pin] = []
        for draft in drafts:
            key = (scope.tenant, scope.session, draft.key)
            where = " WHERE tenant = ? AND session = ? AND key = ? AND current"
            row = tx.execute(f"SELECT {_PIN_COLUMNS} FROM pins{where}", key).fetchone()
            version = 1
            if row is not None:
                current = _pin(d, row)
                if mode == "add" or _same(current, draft):
                    continue
                version = current.version + 1
                tx.execute(f"UPDATE pins SET current = FALSE{where}", key)
            pin = _new_pin(scope, draft, version=version, at=at)
            tx.execute(_PIN_INSERT, _pin_row(d, pin))
            written.append(pin)
        return written

    def _derive_from_events(
        self, tx: Tx, written: Sequence[tuple[EventWrite, Event]], at: datetime
    ) -> None:
        # Pins ride in the events' transaction: no committed event ever lacks its pins.
        # Extraction only adds keys a session lacks, so a batch needs one look-up, one insert.
        super()._derive_from_events(tx, written, at)
        drafts = [(event.scope, d) for write, event in written for d in write.pins]
        if not drafts:
            return
        d = self._d
        held: set[tuple[str, str]] = set()
        for tenant in sorted({scope.tenant for scope, _ in drafts}):
            sessions = sorted({str(s.session) for s, _ in drafts if s.tenant == tenant})
            for part in d.batches(sessions):
                cond, params = d.one_of("session", part)
                held.update(
                    (tenant + "\0" + r[0], r[1])
                    for r in tx.execute(
                        f"SELECT session, key FROM pins WHERE tenant = ? AND current AND {cond}",
                        [tenant, *params],
                    )
                )
        rows = []
        for scope, draft in drafts:
            mark = (f"{scope.tenant}\0{scope.session}", draft.key)
            if mark not in held:
                held.add(mark)
                rows.append(_pin_row(d, _new_pin(scope, draft, version=1, at=at)))
        if rows:
            tx.executemany(_PIN_INSERT, rows)

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        where, params = scope_sql(self._d, scope)
        if not history:
            where += " AND current"
        rows = self._read_all(
            scope, f"SELECT {_PIN_COLUMNS} FROM pins WHERE {where} ORDER BY rowid", params
        )
        return [_pin(self._d, r) for r in rows]

    # -- summaries and the audit log -------------------------------------------------------

    def put_summary(
        self, summary: Summary, *, replaces: Sequence[str] = (),
        guard_pins: Sequence[PinDraft] = (), audit: Sequence[AuditEntry] = (),
        generation: int | None = None,
    ) -> Summary:  # fmt: skip
        scope = summary.scope.require_session()
        d = self._d
        with self._write(scope, claim=True) as tx:
            check_generation(tx, scope.tenant, generation)
            if guard_pins:
                self._put_pins(tx, scope, guard_pins, at=summary.created_at, mode="add")
            tx.execute(
                f"INSERT INTO summaries ({_SUMMARY_COLUMNS}, active)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, TRUE)",
                (
                    summary.id, scope.tenant, scope.user, scope.session, summary.level,
                    summary.first_seq, summary.last_seq, summary.text,
                    d.json(dict(summary.body)), summary.summarizer, d.time(summary.created_at),
                ),
            )  # fmt: skip
            for part in d.batches(list(replaces)):
                cond, params = d.one_of("id", part)
                tx.execute(
                    f"UPDATE summaries SET active = FALSE WHERE tenant = ? AND session = ?"
                    f" AND {cond}",
                    [scope.tenant, scope.session, *params],
                )
            self._append_audit(tx, audit)
        return summary

    def summaries(self, scope: Scope, *, include_replaced: bool = False) -> list[Summary]:
        where, params = scope_sql(self._d, scope)
        if not include_replaced:
            where += " AND active"
        rows = self._read_all(
            scope,
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE {where}"
            " ORDER BY session, first_seq, level",
            params,
        )
        return [_summary(self._d, r) for r in rows]

    def audit(self, entries: Sequence[AuditEntry]) -> None:
        by_tenant: dict[str, list[AuditEntry]] = {}
        for entry in entries:
            by_tenant.setdefault(entry.scope.tenant, []).append(entry)
        if not by_tenant:
            return
        with self._write(None) as tx:
            for tenant in sorted(by_tenant):
                self._enter_tenant(tx, tenant)
                for entry in by_tenant[tenant]:
                    check_owner(tx, self._d, entry.scope)
                self._append_audit(tx, by_tenant[tenant])

    def _append_audit(self, tx: Tx, entries: Sequence[AuditEntry]) -> None:
        if not entries:
            return
        tx.executemany(
            "INSERT INTO compaction_log (tenant, user_id, session, at, action, first_seq,"
            " last_seq, tokens_before, tokens_after, summary_id, summarizer, detail)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    e.scope.tenant, e.scope.user, e.scope.session, self._d.time(e.at),
                    e.action.value, e.first_seq, e.last_seq, e.tokens_before, e.tokens_after,
                    e.summary_id, e.summarizer, e.detail,
                )
                for e in entries
            ],
        )  # fmt: skip

    def audit_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        where, params = scope_sql(self._d, scope)
        rows = self._read_all(
            scope,
            f"SELECT {_AUDIT_COLUMNS} FROM compaction_log WHERE {where}"
            " ORDER BY rowid DESC LIMIT ?",
            [*params, limit],
        )
        return [_audit(self._d, r) for r in reversed(rows)]

    # -- task state ------------------------------------------------------------------------

    def task_state(self, scope: Scope) -> TaskState:
        scope = scope.require_session()
        with self._read(scope) as tx:
            return _task(self._d, tx, scope)

    def put_task_state(
        self, scope: Scope, state: TaskState, *, expected: int, at: datetime
    ) -> bool:
        scope = scope.require_session()
        with self._write(scope, claim=True) as tx:
            row = tx.execute(
                "SELECT version FROM task_state WHERE tenant = ? AND session = ?",
                (scope.tenant, scope.session),
            ).fetchone()
            if (0 if row is None else int(row[0])) != expected:
                return False
            tx.execute(
                "INSERT INTO task_state (tenant, session, user_id, body, version, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, session) DO UPDATE"
                " SET user_id = excluded.user_id, body = excluded.body,"
                " version = excluded.version, updated_at = excluded.updated_at",
                (scope.tenant, scope.session, scope.user, self._d.json(state.to_json()),
                 state.version, self._d.time(at)),
            )  # fmt: skip
        return True

    # -- the token ledger ------------------------------------------------------------------

    def ledger_head(self, scope: Scope, encoding: str) -> tuple[int, int]:
        """(last counted sequence number, total tokens through it); (0, 0) if none."""
        scope = scope.require_session()
        with self._read(scope) as tx:
            return _ledger_at(tx, scope, encoding)

    def extend_ledger(self, scope: Scope, encoding: str, counts: Sequence[tuple[int, int]]) -> None:
        """Append ``(seq, tokens)`` of events after the ledger's head, in sequence order."""
        scope = scope.require_session()
        if not counts:
            return
        with self._write(scope) as tx:
            head, cum = _ledger_at(tx, scope, encoding)
            rows = []
            for seq, n in counts:
                if seq <= head:
                    continue  # counted by a concurrent writer already
                cum += n
                head = seq
                rows.append((scope.tenant, scope.session, encoding, seq, n, cum))
            if rows:
                tx.executemany(
                    "INSERT INTO token_ledger (tenant, session, encoding, seq, n, cum)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )

    def ledger_cum(self, scope: Scope, encoding: str, seq: int) -> int:
        """Tokens of the session's events through *seq* (0 before the first)."""
        scope = scope.require_session()
        with self._read(scope) as tx:
            return _ledger_at(tx, scope, encoding, seq)[1]

    def context_snapshot(
        self, scope: Scope, encoding: str, *, room: int, summarized: bool = True
    ) -> ContextSnapshot:
        scope = scope.require_session()
        d = self._d
        key = (scope.tenant, scope.session)
        with self._read(scope) as tx:
            task = _task(d, tx, scope)
            pins = tx.execute(
                f"SELECT {_PIN_COLUMNS} FROM pins WHERE tenant = ? AND session = ?"
                " AND current ORDER BY rowid",
                key,
            ).fetchall()
            summaries = (
                tx.execute(
                    f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE tenant = ? AND session = ?"
                    " AND active ORDER BY first_seq, level",
                    key,
                ).fetchall()
                if summarized
                else []
            )
            boundary = max((int(r[6]) for r in summaries), default=0)
            counted, total = _ledger_at(tx, scope, encoding)
            last = tx.execute(
                "SELECT last_seq FROM sessions WHERE tenant = ? AND session = ?", key
            ).fetchone()
            start = _tail_start(tx, scope, encoding, total - room, boundary)
            tail = self._tail(tx, scope, encoding, start)
            covered = _ledger_at(tx, scope, encoding, boundary)[1]
        return ContextSnapshot(
            task=task,
            pins=tuple(_pin(d, r) for r in pins),
            summaries=tuple(_summary(d, r) for r in summaries),
            total=total,
            summarized=covered,
            tail=tail,
            counted_seq=counted,
            last_seq=0 if last is None else int(last[0]),
        )

    def _tail(self, tx: Tx, scope: Scope, encoding: str, start: int) -> tuple[MessageRow, ...]:
        """The session's counted messages after *start*, in order. Only a string id in a tool
        result's metadata is its tool call id."""
        d = self._d
        rows = tx.execute(
            "SELECT t.seq, i.id, i.role, i.text, e.tool_name,"
            f" CASE WHEN i.role = 'tool' THEN {d.json_string('i.metadata', 'tool_call_id')} END,"
            " t.n, CASE WHEN i.role = 'tool' THEN e.tool_args END FROM token_ledger t"
            " JOIN items i ON i.tenant = t.tenant AND i.session = t.session AND i.seq = t.seq"
            " AND i.kind = 'event'"
            f" LEFT JOIN event_details e ON {d.item_join('e', 'i')}"
            " WHERE t.tenant = ? AND t.session = ? AND t.encoding = ? AND t.seq > ?"
            " ORDER BY t.seq",
            (scope.tenant, scope.session, encoding, start),
        ).fetchall()
        return tuple(
            MessageRow(
                seq=int(r[0]), id=r[1], role=_ROLES[r[2]], text=r[3], tool_name=r[4],
                tool_call_id=r[5], tokens=int(r[6]),
                tool_args=None if r[7] is None else d.read_json(r[7]),
            )
            for r in rows
        )  # fmt: skip

    def ledger_tail(
        self, scope: Scope, encoding: str, *, room: int, after_seq: int = 0
    ) -> list[tuple[int, int]]:
        """``(seq, tokens)`` of the longest run of newest events after *after_seq* whose tokens
        sum to at most *room*, oldest first."""
        scope = scope.require_session()
        with self._read(scope) as tx:
            _, total = _ledger_at(tx, scope, encoding)
            start = _tail_start(tx, scope, encoding, total - room, after_seq)
            rows = tx.execute(
                "SELECT seq, n FROM token_ledger WHERE tenant = ? AND session = ?"
                " AND encoding = ? AND seq > ? ORDER BY seq",
                (scope.tenant, scope.session, encoding, start),
            ).fetchall()
        return [(int(r[0]), int(r[1])) for r in rows]

    # -- token usage -----------------------------------------------------------------------

    def add_usage(
        self, scope: Scope, model: str, *, input_tokens: int, output_tokens: int, cost: float,
        calls: int = 1,
    ) -> None:  # fmt: skip
        scope = scope.require_session()
        with self._write(scope, claim=True) as tx:
            tx.execute(
                "INSERT INTO token_usage AS u (tenant, session, model, input_tokens,"
                " output_tokens, calls, cost) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (tenant, session, model) DO UPDATE"
                " SET input_tokens = u.input_tokens + excluded.input_tokens,"
                " output_tokens = u.output_tokens + excluded.output_tokens,"
                " calls = u.calls + excluded.calls, cost = u.cost + excluded.cost",
                (scope.tenant, scope.session, model, input_tokens, output_tokens, calls, cost),
            )

    def usage(self, scope: Scope) -> list[Usage]:
        scope = scope.require_session()
        rows = self._read_all(
            scope,
            "SELECT model, input_tokens, output_tokens, calls, cost FROM token_usage"
            f" WHERE tenant = ? AND session = ? ORDER BY {self._d.text_order('model')}",
            (scope.tenant, scope.session),
        )
        return [Usage(r[0], int(r[1]), int(r[2]), int(r[3]), float(r[4])) for r in rows]

    # -- erasure ---------------------------------------------------------------------------

    def _forget_derived(self, tx: Tx, erasure: Erasure) -> None:
        """Drop what derives from erased events — pins sourced from them, summaries covering
        them, the token ledger of their sessions — and everything of the sessions removed."""
        super()._forget_derived(tx, erasure)
        tenant, erased, gone = erasure.scope.tenant, erasure.records, erasure.sessions
        touched: dict[str, int] = {}
        for _, session, seq in erased:
            # Only turns are summarized and counted: an erased fact leaves both alone.
            if session is not None and seq is not None:
                touched[session] = min(seq, touched.get(session, seq))
        self._delete_where(tx, "pins", tenant, "source_event_id", [e[0] for e in erased])
        if touched:
            tx.executemany(
                "DELETE FROM summaries WHERE tenant = ? AND session = ? AND last_seq >= ?",
                [(tenant, session, first) for session, first in touched.items()],
            )
        self._delete_where(tx, "token_ledger", tenant, "session", list(touched))
        for table in _SESSION_TABLES:
            self._delete_where(tx, table, tenant, "session", list(gone))

    def _delete_where(
        self, tx: Tx, table: str, tenant: str, column: str, values: Sequence[str]
    ) -> None:
        """Delete the tenant's rows of *table* whose *column* is one of *values*."""
        for part in self._d.batches(values):
            cond, params = self._d.one_of(column, part)
            tx.execute(f"DELETE FROM {table} WHERE tenant = ? AND {cond}", [tenant, *params])
