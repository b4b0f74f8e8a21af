"""Long-term facts in the PostgreSQL store, and the progress of fact extraction per session.

A fact is an item of kind ``fact`` (its statement is searched like a turn) plus a row of
``facts`` with its subject, attribute, value and validity, as on SQLite. Consolidation applies
a batch of changes in one transaction that holds the user's fact lock (SQLite's single writer
gave that order for free) and first checks that the facts it decided on are still the active
ones: another writer may have consolidated the same key meanwhile (StaleWrite, decide again).
A fact that stops being active leaves every process's search partitions through the index log
(op ``hide``) and keeps its history.

Extraction progress is a queue over every tenant: workers lease sessions through
``kenning_claim_extraction`` (``FOR UPDATE SKIP LOCKED``, see
:mod:`~kenning.store.postgres.schema`); finishing a lease is a write of one tenant.

A mixin of :class:`~kenning.store.postgres.store.PostgresStore`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput, LeaseLost, StaleWrite
from kenning.records import Fact, FactCategory, FactSource, FactStatus, QueueStats, Scope
from kenning.store.postgres.database import (
    Conn,
    Database,
    check_generation,
    lock_key,
    log_removed,
)
from kenning.store.postgres.events import checked_vector
from kenning.store.postgres.sql import jsonb
from kenning.store.records import ExtractionJob, FactChanges, FactInsert, ModelInfo
from kenning.store.sql.dialect import Tx

__all__ = ["FactTables"]

_FACT_COLUMNS = (
    "i.id, i.tenant, i.user_id, i.session, f.subject, f.attribute, f.value, i.text, "
    "f.qualifier, f.source, f.confidence, f.category, f.status, i.tags, f.valid_from, "
    "f.valid_to, f.superseded_by, f.expires_at, f.pinned, f.reinforced, f.last_seen, "
    "f.sources, f.source_event_id, i.created_at, coalesce(a.count, 0), a.last"
)
_FACT_FROM = (
    "FROM facts f JOIN items i ON i.tenant = f.tenant AND i.rowid = f.item"
    " LEFT JOIN item_access a ON a.tenant = i.tenant AND a.item = i.rowid"
)
# A fact keeps at most this many source events (the newest).
_MAX_SOURCES = 50


def _fact(row: Sequence[Any]) -> Fact:
    return Fact(
        id=row[0], scope=Scope(row[1], row[2], row[3]), subject=row[4], attribute=row[5],
        value=row[6], text=row[7], qualifier=row[8], source=FactSource(row[9]),
        confidence=float(row[10]), category=FactCategory(row[11]), status=FactStatus(row[12]),
        tags=tuple(row[13]), valid_from=row[14], valid_to=row[15], superseded_by=row[16],
        expires_at=row[17], pinned=bool(row[18]), reinforced=int(row[19]), last_seen=row[20],
        sources=tuple(row[21]), source_event_id=row[22], created_at=row[23],
        access_count=int(row[24]), last_access=row[25],
    )  # fmt: skip


def _user_sql(scope: Scope) -> tuple[str, list[Any]]:
    """The scope's constraint on facts: the tenant, its user, and (a session) the session the
    facts were read from."""
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
        if purge or not erased:
            return
        ids = sorted({e[0] for e in erased})
        found = conn.execute(
            "SELECT item, sources FROM facts WHERE tenant = ? AND sources && ?::text[]",
            (scope.tenant, ids),
        ).fetchall()
        gone_ids = set(ids)
        doomed: list[int] = []
        kept: list[tuple[int, list[str]]] = []
        for item, sources in found:
            left = [s for s in sources if s not in gone_ids]
            if left:
                kept.append((int(item), left))
            else:
                doomed.append(int(item))
        for item, left in kept:
            conn.execute(
                "UPDATE facts SET sources = ?, source_event_id = ? WHERE tenant = ? AND item = ?",
                (left, left[0], scope.tenant, item),
            )
        if doomed:
            conn.execute(
                "DELETE FROM items WHERE tenant = ? AND rowid = ANY(?)", (scope.tenant, doomed)
            )
            log_removed(conn, scope.tenant, doomed)

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
        checked = {
            digest: checked_vector(vec, model, digest) for digest, vec in (vectors or {}).items()
        }
        # *at* is when the change happened (a statement's time, for an imported history long
        # ago): mentions and closures are dated by it; created_at is when the row was written.
        now = datetime.now(UTC)
        with self._write(scope, claim=True) as conn:
            check_generation(conn, scope.tenant, generation)
            if lease is not None:
                # Checked inside the write's own transaction, and the progress row stays
                # share-locked until it ends: a claim taking the session over skips it.
                held = conn.execute(
                    "SELECT lease FROM extraction_progress WHERE tenant = ? AND session = ?"
                    " FOR SHARE",
                    (scope.tenant, scope.session),
                ).fetchone()
                if held is None or held[0] != lease:
                    raise LeaseLost(
                        f"the fact extraction of session {scope.session} was taken over by "
                        "another worker; nothing was written"
                    )
            # One consolidation of a user's facts at a time: the expected facts below stay
            # the active ones until this transaction ends.
            lock_key(conn, scope.tenant, f"facts:{scope.user}")
            for key, expected in changes.expected:
                active = self._active_ids(conn, scope, key)
                if sorted(active) != sorted(expected):
                    raise StaleWrite(
                        f"the facts of {key} changed while this consolidation was decided; "
                        "decide again"
                    )
            if model is not None and checked:
                self._put_vectors(conn, scope.tenant, model, checked)
            written: list[str] = []
            for change in changes.inserts:
                written.append(self._insert(conn, scope, change, now, at))
            for fact_id, source_event_id in changes.reinforcements:
                self._reinforce(conn, scope, fact_id, source_event_id, at)
                written.append(fact_id)
            # A value replaced by one that began to hold earlier than it was said ("I've lived
            # in Lisbon since March") stopped holding then, so validities do not overlap.
            began = {c.id: c.draft.valid_from for c in changes.inserts
                     if c.draft.valid_from is not None}  # fmt: skip
            for fact_id, status, by in changes.closures:
                until = min(at, began.get(by, at)) if by is not None else at
                self._close(conn, scope, fact_id, status, by, until)
                written.append(fact_id)
            rows = self._rows(conn, scope, written)
        self._after_append({scope.tenant})
        return rows

    @staticmethod
    def _put_vectors(
        conn: Conn, tenant: str, model: ModelInfo, vectors: Mapping[str, npt.NDArray[np.float32]]
    ) -> None:
        conn.execute(
            "INSERT INTO embedding_model (id, model_id, dimension, normalized)"
            " VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            (model.model_id, model.dimension, model.normalized),
        )
        row = conn.execute(
            "SELECT model_id, dimension, normalized FROM embedding_model WHERE id = 1"
        ).fetchone()
        if row is None or ModelInfo(row[0], int(row[1]), bool(row[2])) != model:
            return  # a model mismatch is refused on the event path; facts stay lexical here
        conn.executemany(
            "INSERT INTO vectors (tenant, hash, vec) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(tenant, digest, vec) for digest, vec in vectors.items()],
        )

    @staticmethod
    def _active_ids(conn: Conn, scope: Scope, key: tuple[str, str, str]) -> list[str]:
        rows = conn.execute(
            "SELECT i.id FROM facts f JOIN items i ON i.tenant = f.tenant AND i.rowid = f.item"
            " WHERE f.tenant = ? AND f.user_id = ? AND f.subject = ? AND f.attribute = ?"
            " AND f.qualifier = ? AND f.status = 'active'",
            (scope.tenant, scope.user, *key),
        ).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _insert(conn: Conn, scope: Scope, change: FactInsert, now: datetime, seen: datetime) -> str:
        draft = change.draft
        valid_from = draft.valid_from or seen
        role = "tool" if draft.source is FactSource.TOOL else "user"
        row = conn.execute(
            "INSERT INTO items (tenant, id, kind, user_id, session, agent, seq, role, label,"
            " text, at, tags, metadata, version, content_hash, embed_hash, created_at,"
            " expires_at) VALUES (?, ?, 'fact', ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?,"
            " NULL, '', ?, ?, ?) RETURNING rowid",
            (
                scope.tenant, change.id, scope.user, scope.session, role,
                "" if draft.subject == "user" else draft.subject, draft.text, valid_from,
                jsonb(list(draft.tags)),
                # The event the fact was read from: a search for turns finds it through here.
                jsonb({"source_event_id": draft.source_event_id}
                      if draft.source_event_id else {}),
                change.embed_hash, now, change.expires_at,
            ),
        ).fetchone()  # fmt: skip
        assert row is not None
        sources = [draft.source_event_id] if draft.source_event_id else []
        conn.execute(
            "INSERT INTO facts (tenant, item, user_id, subject, attribute, qualifier, value,"
            " source, confidence, category, status, valid_from, expires_at, pinned, last_seen,"
            " sources, source_event_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " 'active', ?, ?, ?, ?, ?, ?)",
            (
                scope.tenant, row[0], scope.user, draft.subject, draft.attribute,
                draft.qualifier, draft.value, draft.source.value, draft.confidence,
                draft.category.value, valid_from, change.expires_at, change.pinned, seen,
                sources, draft.source_event_id,
            ),
        )  # fmt: skip
        return change.id

    @staticmethod
    def _active_item(conn: Conn, scope: Scope, fact_id: str) -> tuple[int, list[str]]:
        """The item rowid and sources of an active fact of the scope's user (StaleWrite if it
        is no longer active), locked until the transaction ends."""
        row = conn.execute(
            "SELECT f.item, f.sources FROM facts f"
            " JOIN items i ON i.tenant = f.tenant AND i.rowid = f.item"
            " WHERE f.tenant = ? AND i.id = ? AND f.user_id = ? AND f.status = 'active'"
            " FOR UPDATE OF f",
            (scope.tenant, fact_id, scope.user),
        ).fetchone()
        if row is None:
            raise StaleWrite(f"fact {fact_id} is no longer active; decide again")
        return int(row[0]), list(row[1])

    def _reinforce(
        self, conn: Conn, scope: Scope, fact_id: str, source: str | None, seen: datetime
    ) -> None:
        item, sources = self._active_item(conn, scope, fact_id)
        if source and source not in sources:
            sources = [*sources, source][-_MAX_SOURCES:]
        conn.execute(
            "UPDATE facts SET reinforced = reinforced + 1, last_seen = greatest(last_seen, ?),"
            " sources = ? WHERE tenant = ? AND item = ?",
            (seen, sources, scope.tenant, item),
        )

    def _close(
        self,
        conn: Conn,
        scope: Scope,
        fact_id: str,
        status: FactStatus,
        by: str | None,
        at: datetime,
    ) -> None:
        item, _ = self._active_item(conn, scope, fact_id)
        validity = status in (FactStatus.SUPERSEDED, FactStatus.REVOKED, FactStatus.EXPIRED)
        conn.execute(
            "UPDATE facts SET status = ?, superseded_by = ?,"
            " valid_to = CASE WHEN ? THEN greatest(?, valid_from) ELSE valid_to END"
            " WHERE tenant = ? AND item = ?",
            (status.value, by, validity, at, scope.tenant, item),
        )
        # Out of every search partition from now on; the row keeps its history.
        log_removed(conn, scope.tenant, [item], op="hide")

    @staticmethod
    def _rows(conn: Conn, scope: Scope, ids: Sequence[str]) -> list[Fact]:
        wanted = list(dict.fromkeys(ids))
        rows = conn.execute(
            f"SELECT {_FACT_COLUMNS} {_FACT_FROM} WHERE f.tenant = ? AND i.id = ANY(?)",
            (scope.tenant, wanted),
        ).fetchall()
        found = {fact.id: fact for fact in map(_fact, rows)}
        return [found[i] for i in wanted if i in found]

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
            where += " AND i.id = ANY(?)"
            params.append(list(ids))
        if subject is not None:
            where += " AND f.subject = ?"
            params.append(subject)
        if keys:
            where += " AND (f.subject, f.attribute, f.qualifier) IN (SELECT * FROM"
            where += " unnest(?::text[], ?::text[], ?::text[]))"
            params += [[k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]]
        if as_of is not None:
            # What held then: by validity, whatever the fact's status now (archived and
            # expired facts are out of every read).
            where += (
                " AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)"
                " AND f.status NOT IN ('archived', 'expired')"
            )
            params += [as_of, as_of]
        elif statuses is not None:
            where += " AND f.status = ANY(?)"
            params.append([s.value for s in statuses])
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
                "SELECT tenant, user_id, session, done_seq, last_seq"
                " FROM kenning_pending_extractions(?)",
                (int(limit),),
            ).fetchall()
        return [ExtractionJob(Scope(r[0], r[1], r[2]), int(r[3]), int(r[4])) for r in rows]

    def claim_extraction(self, *, at: datetime, lease_s: float) -> ExtractionJob | None:
        """Lease the oldest session with unread events (or one whose lease ran out) under a
        fresh token; a session another worker is claiming right now is skipped, never waited
        for."""
        lease = secrets.token_hex(8)
        with self._write(None) as conn:
            row = conn.execute(
                "SELECT tenant, user_id, session, done_seq, last_seq"
                " FROM kenning_claim_extraction(?, ?, ?)",
                (at, float(lease_s), lease),
            ).fetchone()
        if row is None:
            return None
        return ExtractionJob(Scope(row[0], row[1], row[2]), int(row[3]), int(row[4]), lease)

    def renew_extraction(self, job: ExtractionJob, *, at: datetime, lease_s: float) -> bool:
        if job.lease is None:
            return False
        with self._write(Scope(job.scope.tenant)) as conn:
            cur = conn.execute(
                "UPDATE extraction_progress SET lease_until = ?"
                " WHERE tenant = ? AND session = ? AND lease = ?",
                (at + timedelta(seconds=lease_s), job.scope.tenant, job.scope.session, job.lease),
            )
        return bool(cur.rowcount)

    def finish_extraction(self, job: ExtractionJob, *, done_seq: int) -> bool:
        """Record that the session's events through *done_seq* were read; drop the lease
        (only while *job*'s lease still holds the session, when it has one)."""
        fence = "" if job.lease is None else " AND lease = ?"
        params: tuple[Any, ...] = (done_seq, job.scope.tenant, job.scope.session)
        with self._write(Scope(job.scope.tenant)) as conn:
            cur = conn.execute(
                "UPDATE extraction_progress SET done_seq = greatest(done_seq, ?),"
                " lease_until = NULL, lease = NULL, attempts = 0"
                f" WHERE tenant = ? AND session = ?{fence}",
                params if job.lease is None else (*params, job.lease),
            )
        return bool(cur.rowcount)

    def extraction_stats(self) -> QueueStats:
        with self._read(None) as conn:
            row = conn.execute(
                "SELECT pending, running, oldest_pending FROM kenning_extraction_stats()"
            ).fetchone()
        assert row is not None
        return QueueStats(pending=int(row[0]), running=int(row[1]), oldest_pending=row[2])
