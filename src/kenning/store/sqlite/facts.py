"""Long-term facts in the SQLite store, and the progress of fact extraction per session.

A fact is an item of kind ``fact`` (its statement is searched like a turn) plus a row of
``facts`` with its subject, attribute, value and validity. Consolidation applies a batch of
changes in one transaction and first checks that the facts it decided on are still the active
ones (another writer may have consolidated the same key meanwhile: StaleWrite, decide again).
A fact that stops being active leaves the search partitions through the index log (op
``hide``) and keeps its history.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, LeaseLost, StaleWrite
from kenning.records import (
    Fact,
    FactCategory,
    FactSource,
    FactStatus,
    QueueStats,
    Scope,
)
from kenning.store.records import ExtractionJob, FactChanges, ModelInfo
from kenning.store.sql.database import check_generation
from kenning.store.sql.dialect import Tx
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.fts import scope_terms
from kenning.store.sqlite.sql import chunks, stored_model, ts

__all__ = ["FactTables"]

_FACT_COLUMNS = (
    "i.id, i.tenant, i.user_id, i.session, f.subject, f.attribute, f.value, i.text, f.qualifier, "
    "f.source, f.confidence, f.category, f.status, i.tags, f.valid_from, f.valid_to, "
    "f.superseded_by, f.expires_at, f.pinned, f.reinforced, f.last_seen, f.sources, "
    "f.source_event_id, i.created_at, coalesce(a.count, 0), a.last"
)
_FACT_FROM = (
    "FROM facts f JOIN items i ON i.rowid = f.item LEFT JOIN item_access a ON a.item = i.rowid"
)


def _fact(row: Sequence[Any]) -> Fact:
    return Fact(
        id=row[0], scope=Scope(row[1], row[2], row[3]), subject=row[4], attribute=row[5],
        value=row[6], text=row[7], qualifier=row[8], source=FactSource(row[9]),
        confidence=float(row[10]), category=FactCategory(row[11]), status=FactStatus(row[12]),
        tags=tuple(json.loads(row[13])), valid_from=ts(row[14]),
        valid_to=None if row[15] is None else ts(row[15]), superseded_by=row[16],
        expires_at=None if row[17] is None else ts(row[17]), pinned=bool(row[18]),
        reinforced=int(row[19]), last_seen=ts(row[20]), sources=tuple(json.loads(row[21])),
        source_event_id=row[22], created_at=ts(row[23]), access_count=int(row[24]),
        last_access=None if row[25] is None else ts(row[25]),
    )  # fmt: skip


def _user_sql(scope: Scope) -> tuple[str, list[Any]]:
    where = ["f.tenant = ?"]
    params: list[Any] = [scope.tenant]
    if scope.user is not None:
        where.append("f.user_id = ?")
        params.append(scope.user)
    if scope.session is not None:
        where.append("i.session = ?")
        params.append(scope.session)
    return " AND ".join(where), params


class FactTables(Database):
    """Facts: consolidated writes, reads (current, as of a time, history), extraction progress."""

    # -- writes ----------------------------------------------------------------------------

    def _forget_derived(
        self,
        conn: Tx,
        scope: Scope,
        erased: Sequence[tuple[str, str | None, int | None]],
        gone: Sequence[str],
        *,
        purge: bool = False,
    ) -> None:
        """A fact read only from erased events is erased with them; one that other events
        stated too keeps those as its sources. The purge leaves facts alone: they have their
        own retention (``TenantPolicy.fact_days``) and outlive the turns they came from."""
        super()._forget_derived(conn, scope, erased, gone, purge=purge)
        if purge:
            return
        ids = {e[0] for e in erased}
        found: dict[int, str] = {}
        for chunk in chunks(sorted(ids)):
            found.update(
                conn.execute(
                    "SELECT DISTINCT f.item, f.sources FROM facts f, json_each(f.sources) j"
                    f" WHERE f.tenant = ? AND j.value IN ({','.join('?' * len(chunk))})",
                    [scope.tenant, *chunk],
                ).fetchall()
            )
        doomed: list[int] = []
        for item, sources in found.items():
            left = [s for s in json.loads(sources) if s not in ids]
            if left:
                conn.execute(
                    "UPDATE facts SET sources = ?, source_event_id = ? WHERE item = ?",
                    (json.dumps(left), left[0], item),
                )
            else:
                doomed.append(item)
        for rows in chunks(doomed):
            conn.execute(f"DELETE FROM items WHERE rowid IN ({','.join('?' * len(rows))})", rows)

    def apply_facts(
        self,
        scope: Scope,
        changes: FactChanges,
        *,
        at: datetime,
        model: ModelInfo | None = None,
        vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
        generation: int | None = None,
        lease: str | None = None,
    ) -> list[Fact]:
        scope = scope.require_session()
        assert scope.user is not None and scope.session is not None
        if vectors and model is None:
            raise InvalidInput("vectors were given without the model they belong to")
        # *at* is when the change happened (a statement's time, for an imported history long
        # ago): mentions and closures are dated by it; created_at is when the row was written.
        now, seen = time.time(), at.timestamp()
        with self._write(scope, claim=True) as conn:
            check_generation(conn, scope.tenant, generation)
            if lease is not None:
                # Checked inside the write's own transaction: a reader whose claim was taken
                # over between its last renewal and this write still writes nothing.
                held = conn.execute(
                    "SELECT lease FROM extraction_progress WHERE tenant = ? AND session = ?",
                    (scope.tenant, scope.session),
                ).fetchone()
                if held is None or held[0] != lease:
                    raise LeaseLost(
                        f"the fact extraction of session {scope.session} was taken over by "
                        "another worker; nothing was written"
                    )
            for key, expected in changes.expected:
                active = self._active_ids(conn, scope, key)
                if sorted(active) != sorted(expected):
                    raise StaleWrite(
                        f"the facts of {key} changed while this consolidation was decided; "
                        "decide again"
                    )
            if model is not None and vectors:
                self._put_vectors(conn, scope.tenant, model, vectors)
            written: list[str] = []
            for change in changes.inserts:
                written.append(self._insert(conn, scope, change, now, seen))
            for fact_id, source_event_id in changes.reinforcements:
                self._reinforce(conn, scope, fact_id, source_event_id, seen)
                written.append(fact_id)
            # A value replaced by one that began to hold earlier than it was said ("I've lived
            # in Lisbon since March") stopped holding then, so validities do not overlap.
            began = {c.id: c.draft.valid_from.timestamp() for c in changes.inserts
                     if c.draft.valid_from is not None}  # fmt: skip
            for fact_id, status, by in changes.closures:
                until = min(seen, began.get(by, seen)) if by is not None else seen
                self._close(conn, scope, fact_id, status, by, until)
                written.append(fact_id)
            rows = self._rows(conn, scope, written)
        self._after_append({scope.tenant})
        return rows

    def _put_vectors(
        self,
        conn: sqlite3.Connection,
        tenant: str,
        model: ModelInfo,
        vectors: Mapping[str, npt.NDArray[np.float32]],
    ) -> None:
        stored = stored_model(conn)
        if stored is None:
            conn.execute(
                "INSERT INTO embedding_model (id, model_id, dimension, normalized, created_at)"
                " VALUES (1, ?, ?, ?, ?)",
                (model.model_id, model.dimension, int(model.normalized), time.time()),
            )
        elif stored != model:
            return  # a model mismatch is refused on the event path; facts stay lexical here
        rows = []
        for digest, vec in vectors.items():
            arr = np.ascontiguousarray(vec, dtype=np.float32)
            if arr.shape != (model.dimension,):
                raise InvalidInput(f"fact vector has shape {arr.shape}, not ({model.dimension},)")
            rows.append((tenant, digest, arr.tobytes()))
        conn.executemany("INSERT OR IGNORE INTO vectors (tenant, hash, vec) VALUES (?, ?, ?)", rows)

    @staticmethod
    def _active_ids(conn: sqlite3.Connection, scope: Scope, key: tuple[str, str, str]) -> list[str]:
        rows = conn.execute(
            "SELECT i.id FROM facts f JOIN items i ON i.rowid = f.item WHERE f.tenant = ?"
            " AND f.user_id = ? AND f.subject = ? AND f.attribute = ? AND f.qualifier = ?"
            " AND f.status = 'active'",
            (scope.tenant, scope.user, *key),
        ).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _insert(
        conn: sqlite3.Connection, scope: Scope, change: Any, now: float, seen: float
    ) -> str:
        draft = change.draft
        valid_from = draft.valid_from.timestamp() if draft.valid_from else seen
        role = "tool" if draft.source is FactSource.TOOL else "user"
        cur = conn.execute(
            "INSERT INTO items (id, kind, tenant, user_id, session, agent, seq, role, label, text,"
            " scope_terms, at, tags, metadata, version, content_hash, embed_hash, created_at,"
            " expires_at)"
            " VALUES (?, 'fact', ?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?, ?, NULL, '', ?, ?, ?)",
            (
                change.id, scope.tenant, scope.user, scope.session, role,
                "" if draft.subject == "user" else draft.subject, draft.text,
                scope_terms(scope.tenant, scope.user, scope.session, role, "fact"),
                valid_from, json.dumps(list(draft.tags)),
                # The event the fact was read from: a search for turns finds it through here.
                json.dumps({"source_event_id": draft.source_event_id}
                           if draft.source_event_id else {}),
                change.embed_hash, now,
                None if change.expires_at is None else change.expires_at.timestamp(),
            ),
        )  # fmt: skip
        sources = [draft.source_event_id] if draft.source_event_id else []
        conn.execute(
            "INSERT INTO facts (item, tenant, user_id, subject, attribute, qualifier, value,"
            " source, confidence, category, status, valid_from, expires_at, pinned, last_seen,"
            " sources, source_event_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)",
            (
                cur.lastrowid, scope.tenant, scope.user, draft.subject, draft.attribute,
                draft.qualifier, draft.value, draft.source.value, draft.confidence,
                draft.category.value, valid_from,
                None if change.expires_at is None else change.expires_at.timestamp(),
                int(change.pinned), seen, json.dumps(sources), draft.source_event_id,
            ),
        )  # fmt: skip
        return str(change.id)

    @staticmethod
    def _reinforce(
        conn: sqlite3.Connection, scope: Scope, fact_id: str, source: str | None, seen: float
    ) -> None:
        row = conn.execute(
            "SELECT f.item, f.sources FROM facts f JOIN items i ON i.rowid = f.item"
            " WHERE i.id = ? AND f.tenant = ? AND f.user_id = ? AND f.status = 'active'",
            (fact_id, scope.tenant, scope.user),
        ).fetchone()
        if row is None:
            raise StaleWrite(f"fact {fact_id} is no longer active; decide again")
        sources = json.loads(row[1])
        if source and source not in sources:
            sources = [*sources, source][-50:]
        conn.execute(
            "UPDATE facts SET reinforced = reinforced + 1, last_seen = max(last_seen, ?),"
            " sources = ? WHERE item = ?",
            (seen, json.dumps(sources), row[0]),
        )

    @staticmethod
    def _close(
        conn: sqlite3.Connection,
        scope: Scope,
        fact_id: str,
        status: FactStatus,
        by: str | None,
        at: float,
    ) -> None:
        row = conn.execute(
            "SELECT f.item FROM facts f JOIN items i ON i.rowid = f.item"
            " WHERE i.id = ? AND f.tenant = ? AND f.user_id = ? AND f.status = 'active'",
            (fact_id, scope.tenant, scope.user),
        ).fetchone()
        if row is None:
            raise StaleWrite(f"fact {fact_id} is no longer active; decide again")
        validity = status in (FactStatus.SUPERSEDED, FactStatus.REVOKED, FactStatus.EXPIRED)
        conn.execute(
            "UPDATE facts SET status = ?, superseded_by = ?,"
            " valid_to = CASE WHEN ? THEN max(?, valid_from) ELSE valid_to END WHERE item = ?",
            (status.value, by, int(validity), at, row[0]),
        )
        # Out of every search partition from now on; the row keeps its history.
        conn.execute(
            "INSERT INTO index_log (tenant, item, op) VALUES (?, ?, 'hide')",
            (scope.tenant, row[0]),
        )

    def _rows(self, conn: sqlite3.Connection, scope: Scope, ids: Sequence[str]) -> list[Fact]:
        out: dict[str, Fact] = {}
        for chunk in chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(
                f"SELECT {_FACT_COLUMNS} {_FACT_FROM} WHERE f.tenant = ? AND i.id IN ({marks})",
                [scope.tenant, *chunk],
            ):
                fact = _fact(row)
                out[fact.id] = fact
        return [out[i] for i in dict.fromkeys(ids) if i in out]

    # -- reads -----------------------------------------------------------------------------

    def facts(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        subject: str | None = None,
        keys: Sequence[tuple[str, str, str]] | None = None,
        statuses: Sequence[FactStatus] | None = (FactStatus.ACTIVE,),
        as_of: datetime | None = None,
        limit: int | None = None,
    ) -> list[Fact]:
        where, params = _user_sql(scope)
        if ids is not None:
            if not ids:
                return []
            where += f" AND i.id IN ({','.join('?' * len(ids))})"
            params.extend(ids)
        if subject is not None:
            where += " AND f.subject = ?"
            params.append(subject)
        if keys:
            where += (
                " AND ("
                + " OR ".join(
                    "(f.subject = ? AND f.attribute = ? AND f.qualifier = ?)" for _ in keys
                )
                + ")"
            )
            for key in keys:
                params.extend(key)
        if as_of is not None:
            # What held then: by validity, whatever the fact's status now (archived and
            # expired facts are out of every read).
            where += (
                " AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)"
                " AND f.status NOT IN ('archived', 'expired')"
            )
            params.extend([as_of.timestamp(), as_of.timestamp()])
        elif statuses is not None:
            where += f" AND f.status IN ({','.join('?' * len(statuses))})"
            params.extend(s.value for s in statuses)
        sql = f"SELECT {_FACT_COLUMNS} {_FACT_FROM} WHERE {where} ORDER BY f.valid_from, i.rowid"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._read(scope) as conn:
            return [_fact(r) for r in conn.execute(sql, params)]

    def fact_history(self, scope: Scope, fact_id: str) -> list[Fact]:
        """Every version of the fact's subject, attribute and qualifier, oldest first."""
        with self._read(scope) as conn:
            where, params = _user_sql(Scope(scope.tenant, scope.user))
            row = conn.execute(
                f"SELECT f.subject, f.attribute, f.qualifier, f.user_id {_FACT_FROM}"
                f" WHERE {where} AND i.id = ?",
                [*params, fact_id],
            ).fetchone()
            if row is None:
                return []
            rows = conn.execute(
                f"SELECT {_FACT_COLUMNS} {_FACT_FROM} WHERE f.tenant = ? AND f.user_id = ?"
                " AND f.subject = ? AND f.attribute = ? AND f.qualifier = ?"
                " ORDER BY f.valid_from, i.rowid",
                (scope.tenant, row[3], row[0], row[1], row[2]),
            ).fetchall()
        return [_fact(r) for r in rows]

    # -- extraction progress ---------------------------------------------------------------

    def pending_extractions(self, *, limit: int = 100) -> list[ExtractionJob]:
        """Sessions with events not yet read for facts (the store's own bookkeeping)."""
        with self._read(None) as conn:
            rows = conn.execute(
                "SELECT s.tenant, s.user_id, s.session, coalesce(p.done_seq, 0), s.last_seq"
                " FROM sessions s LEFT JOIN extraction_progress p"
                " ON p.tenant = s.tenant AND p.session = s.session"
                " WHERE s.last_seq > coalesce(p.done_seq, 0) LIMIT ?",
                (limit,),
            ).fetchall()
        return [ExtractionJob(Scope(r[0], r[1], r[2]), int(r[3]), int(r[4])) for r in rows]

    def claim_extraction(self, *, at: datetime, lease_s: float) -> ExtractionJob | None:
        """Lease the oldest session with unread events (or one whose lease ran out) under a
        fresh token."""
        now = at.timestamp()
        lease = secrets.token_hex(8)
        with self._write(None) as conn:
            row = conn.execute(
                "SELECT s.tenant, s.user_id, s.session, coalesce(p.done_seq, 0), s.last_seq"
                " FROM sessions s LEFT JOIN extraction_progress p"
                " ON p.tenant = s.tenant AND p.session = s.session"
                " WHERE s.last_seq > coalesce(p.done_seq, 0)"
                " AND (p.lease_until IS NULL OR p.lease_until < ?)"
                " ORDER BY s.created_at LIMIT 1",
                (now,),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "INSERT INTO extraction_progress (tenant, session, user_id, done_seq, lease_until,"
                " attempts, lease) VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT (tenant, session)"
                " DO UPDATE SET lease_until = excluded.lease_until, attempts = attempts + 1,"
                " lease = excluded.lease",
                (row[0], row[2], row[1], int(row[3]), now + lease_s, lease),
            )
        return ExtractionJob(Scope(row[0], row[1], row[2]), int(row[3]), int(row[4]), lease)

    def renew_extraction(self, job: ExtractionJob, *, at: datetime, lease_s: float) -> bool:
        if job.lease is None:
            return False
        with self._write(None) as conn:
            cur = conn.execute(
                "UPDATE extraction_progress SET lease_until = ?"
                " WHERE tenant = ? AND session = ? AND lease = ?",
                (at.timestamp() + lease_s, job.scope.tenant, job.scope.session, job.lease),
            )
        return bool(cur.rowcount)

    def finish_extraction(self, job: ExtractionJob, *, done_seq: int) -> bool:
        """Record that the session's events through *done_seq* were read; drop the lease
        (only while *job*'s lease still holds the session, when it has one)."""
        fence = "" if job.lease is None else " AND lease = ?"
        params: tuple[Any, ...] = (done_seq, job.scope.tenant, job.scope.session)
        with self._write(None) as conn:
            cur = conn.execute(
                "UPDATE extraction_progress SET done_seq = max(done_seq, ?), lease_until = NULL,"
                f" lease = NULL, attempts = 0 WHERE tenant = ? AND session = ?{fence}",
                params if job.lease is None else (*params, job.lease),
            )
        return bool(cur.rowcount)

    def extraction_stats(self) -> QueueStats:
        """Sessions with unread events: waiting (no reader holds them), held by a reader, and
        when the oldest unread event was written."""
        with self._read(None) as conn:
            row = conn.execute(
                "SELECT coalesce(sum(p.lease IS NULL), 0), coalesce(sum(p.lease IS NOT NULL), 0),"
                " min(i.created_at)"
                " FROM sessions s LEFT JOIN extraction_progress p"
                " ON p.tenant = s.tenant AND p.session = s.session"
                " LEFT JOIN items i ON i.kind = 'event' AND i.tenant = s.tenant"
                " AND i.session = s.session AND i.seq = coalesce(p.done_seq, 0) + 1"
                " WHERE s.last_seq > coalesce(p.done_seq, 0)"
            ).fetchone()
        return QueueStats(
            pending=int(row[0]),
            running=int(row[1]),
            oldest_pending=None if row[2] is None else ts(row[2]),
        )
