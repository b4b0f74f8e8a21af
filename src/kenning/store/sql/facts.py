"""Long-term facts, and the progress of fact extraction within a tenant, on every SQL backend.

A fact is an item of kind ``fact`` (its statement is searched like a turn) plus a row of
``facts`` with its subject, attribute, value and validity. Consolidation applies a batch of
changes in one transaction that holds the user's facts (:meth:`SqlDatabase._serialize`) and
first checks that the facts it decided on are still the active ones: another writer may have
consolidated the same key meanwhile (StaleWrite, decide again). A fact that stops being active
leaves every process's search partitions through the index log (op ``hide``) and keeps its
history.

Extraction progress is a queue of sessions with events not yet read; listing and claiming them
reach across tenants (:mod:`kenning.store.sql.cross`), while renewing and finishing a claim are
writes of one tenant. Two readers, in one process or several, never hold the same session.
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
from kenning.store.records import ExtractionJob, FactChanges, FactInsert, FactState, ModelInfo
from kenning.store.sql.database import Erasure, SqlDatabase, check_generation
from kenning.store.sql.dialect import Tx
from kenning.store.sql.vectors import checked_vector, claim_model

__all__ = ["FactTables"]

_FACT_COLUMNS = (
    "i.id, i.tenant, i.user_id, i.session, f.subject, f.attribute, f.value, i.text, "
    "f.qualifier, f.source, f.confidence, f.category, f.status, i.tags, f.valid_from, "
    "f.valid_to, f.superseded_by, f.expires_at, f.pinned, f.reinforced, f.last_seen, "
    "f.sources, f.source_event_id, i.created_at, coalesce(a.count, 0), a.last"
)
# A fact keeps at most this many source events (the newest).
_MAX_SOURCES = 50


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


class FactTables(SqlDatabase):
    """Facts: consolidated writes, reads (current, as of a time, history), extraction progress."""

    @property
    def _fact_from(self) -> str:
        return (
            f"FROM facts f JOIN items i ON {self._d.item_join('f', 'i')}"
            f" LEFT JOIN item_access a ON {self._d.item_join('a', 'i')}"
        )

    def _fact(self, row: Sequence[Any]) -> Fact:
        d = self._d
        return Fact(
            id=row[0], scope=Scope(row[1], row[2], row[3]), subject=row[4], attribute=row[5],
            value=row[6], text=row[7], qualifier=row[8], source=FactSource(row[9]),
            confidence=float(row[10]), category=FactCategory(row[11]),
            status=FactStatus(row[12]), tags=tuple(d.read_json(row[13])),
            valid_from=d.read_time(row[14]), valid_to=d.read_opt_time(row[15]),
            superseded_by=row[16], expires_at=d.read_opt_time(row[17]), pinned=bool(row[18]),
            reinforced=int(row[19]), last_seen=d.read_time(row[20]),
            sources=tuple(d.read_text_list(row[21])), source_event_id=row[22],
            created_at=d.read_time(row[23]), access_count=int(row[24]),
            last_access=d.read_opt_time(row[25]),
        )  # fmt: skip

    # -- writes ----------------------------------------------------------------------------

    def _forget_derived(self, tx: Tx, erasure: Erasure) -> None:
        """A fact read only from erased events is erased with them; one that other events
        stated too keeps those as its sources. The purge leaves facts alone: they have their
        own retention (``TenantPolicy.fact_days``) and outlive the turns they came from."""
        super()._forget_derived(tx, erasure)
        if erasure.purge or not erasure.records:
            return
        d, tenant = self._d, erasure.scope.tenant
        ids = sorted({e[0] for e in erasure.records})
        found: dict[int, list[str]] = {}
        for part in d.batches(ids):
            cond, params = d.shares_text("sources", part)
            for item, sources in tx.execute(
                f"SELECT item, sources FROM facts WHERE tenant = ? AND {cond}", [tenant, *params]
            ):
                found[int(item)] = d.read_text_list(sources)
        gone_ids = set(ids)
        doomed: list[int] = []
        kept: list[tuple[object, str, str, int]] = []
        for item, sources in found.items():
            left = [s for s in sources if s not in gone_ids]
            if left:
                kept.append((d.text_list(left), left[0], tenant, item))
            else:
                doomed.append(item)
        if kept:
            tx.executemany(
                "UPDATE facts SET sources = ?, source_event_id = ? WHERE tenant = ? AND item = ?",
                kept,
            )
        for rows in d.batches(doomed):
            cond, params = d.one_of("rowid", rows)
            tx.execute(f"DELETE FROM items WHERE tenant = ? AND {cond}", [tenant, *params])
        self._log_removed(tx, tenant, doomed)

    def apply_facts(
        self, scope: Scope, changes: FactChanges, *, at: datetime, model: ModelInfo | None = None,
        vectors: Mapping[str, npt.NDArray[np.float32]] | None = None, generation: int | None = None,
        lease: str | None = None,
    ) -> list[Fact]:  # fmt: skip
        scope = scope.require_session()
        if vectors and model is None:
            raise InvalidInput("vectors were given without the model they belong to")
        checked = {
            digest: checked_vector(vec, model, digest) for digest, vec in (vectors or {}).items()
        }
        with self._write(scope, claim=True) as tx:
            check_generation(tx, scope.tenant, generation)
            if lease is not None:
                self._check_lease(tx, scope, lease)
            # One consolidation of a user's facts at a time: the histories decided on stay as
            # they are until this transaction ends.
            self._serialize(tx, scope.tenant, f"facts:{scope.user}")
            session = scope.session if changes.within_session else None
            for key, expected in changes.expected:
                if sorted(self._history_ids(tx, scope, key, session)) != sorted(expected):
                    raise StaleWrite(
                        f"the facts of {key} changed while this consolidation was decided; "
                        "decide again"
                    )
            if model is not None and checked:
                self._put_fact_vectors(tx, scope.tenant, model, checked)
            rows = self._rows(tx, scope, self._apply(tx, scope, changes, at))
        self._after_append({scope.tenant})
        return rows

    def _apply(self, tx: Tx, scope: Scope, changes: FactChanges, at: datetime) -> list[str]:
        """Write the inserts, reinforcements and closures; return the ids they touched.

        *at* is when the change happened (a statement's time, for an imported history long
        ago): mentions and closures are dated by it; created_at is when the row was written.
        """
        now = datetime.now(UTC)
        self._withdraw(tx, scope, changes.withdrawn)
        written = [self._insert(tx, scope, change, now, at) for change in changes.inserts]
        for fact_id, state in changes.revisions:
            self._revise(tx, scope, fact_id, state)
            written.append(fact_id)
        for fact_id, source_event_id in changes.reinforcements:
            self._reinforce(tx, scope, fact_id, source_event_id, at)
            written.append(fact_id)
        # A value replaced by one that began to hold earlier than it was said ("I've lived
        # in Lisbon since March") stopped holding then, so validities do not overlap.
        began = {c.id: c.draft.valid_from for c in changes.inserts
                 if c.draft.valid_from is not None}  # fmt: skip
        for fact_id, status, by in changes.closures:
            until = min(at, began.get(by, at)) if by is not None else at
            self._close(tx, scope, fact_id, status, by, until)
            written.append(fact_id)
        return written

    def _check_lease(self, tx: Tx, scope: Scope, lease: str) -> None:
        """LeaseLost unless *lease* still holds the session's extraction. Checked inside the
        write's own transaction, and the progress row stays share-locked until it ends: a
        claim taking the session over skips it."""
        held = tx.execute(
            "SELECT lease FROM extraction_progress WHERE tenant = ? AND session = ?"
            + self._d.for_share,
            (scope.tenant, scope.session),
        ).fetchone()
        if held is None or held[0] != lease:
            raise LeaseLost(
                f"the fact extraction of session {scope.session} was taken over by another "
                "worker; nothing was written"
            )

    def _put_fact_vectors(
        self, tx: Tx, tenant: str, model: ModelInfo, vectors: Mapping[str, npt.NDArray[np.float32]]
    ) -> None:
        if claim_model(tx, self._d, model) != model:
            return  # a model mismatch is refused on the event path; facts stay lexical here
        self._store_vectors(tx, tenant, vectors)

    def _history_ids(
        self, tx: Tx, scope: Scope, key: tuple[str, str, str], session: str | None
    ) -> list[str]:
        """The facts of a key's history: active, superseded or revoked (archived and expired
        ones are out of it); those of one *session* when given."""
        sql = (
            f"SELECT i.id FROM facts f JOIN items i ON {self._d.item_join('f', 'i')}"
            " WHERE f.tenant = ? AND f.user_id = ? AND f.subject = ? AND f.attribute = ?"
            " AND f.qualifier = ? AND f.status IN ('active', 'superseded', 'revoked')"
        )
        params: list[Any] = [scope.tenant, scope.user, *key]
        if session is not None:
            sql += " AND i.session = ?"
            params.append(session)
        return [r[0] for r in tx.execute(sql, params).fetchall()]

    def _revise(self, tx: Tx, scope: Scope, fact_id: str, state: FactState) -> None:
        """Give a fact of a history its new place in it. A fact that stops being active leaves
        the search partitions; one that becomes active, or moves in time while active, is
        indexed again (the index log's ``reindex``)."""
        d = self._d
        row = tx.execute(
            "SELECT f.item, f.status, f.valid_from FROM facts f"
            f" JOIN items i ON {d.item_join('f', 'i')}"
            " WHERE f.tenant = ? AND i.id = ? AND f.user_id = ?"
            " AND f.status IN ('active', 'superseded', 'revoked')" + d.for_update_of("f"),
            (scope.tenant, fact_id, scope.user),
        ).fetchone()
        if row is None:
            raise StaleWrite(f"fact {fact_id} is no longer in its history; decide again")
        item, was_active = int(row[0]), row[1] == FactStatus.ACTIVE.value
        moved = d.read_time(row[2]) != state.valid_from
        tx.execute(
            "UPDATE facts SET valid_from = ?, valid_to = ?, status = ?, superseded_by = ?,"
            " reinforced = ?, sources = ?, last_seen = ? WHERE tenant = ? AND item = ?",
            (
                d.time(state.valid_from), d.opt_time(state.valid_to), state.status.value,
                state.superseded_by, state.reinforced, d.text_list(state.sources[-_MAX_SOURCES:]),
                d.time(state.last_seen), scope.tenant, item,
            ),
        )  # fmt: skip
        if moved:
            tx.execute(
                "UPDATE items SET at = ? WHERE tenant = ? AND rowid = ?",
                (d.time(state.valid_from), scope.tenant, item),
            )
        if state.status is FactStatus.ACTIVE and (moved or not was_active):
            self._log_removed(tx, scope.tenant, [item], op="reindex")
        elif was_active and state.status is not FactStatus.ACTIVE:
            self._log_removed(tx, scope.tenant, [item], op="hide")

    def _withdraw(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> None:
        """Delete facts a history no longer holds (they leave any partition that holds them)."""
        d = self._d
        for part in d.batches(list(fact_ids)):
            cond, params = d.one_of("i.id", part)
            gone = tx.execute(
                f"SELECT f.item FROM facts f JOIN items i ON {d.item_join('f', 'i')}"
                f" WHERE f.tenant = ? AND f.user_id = ? AND {cond}",
                [scope.tenant, scope.user, *params],
            ).fetchall()
            rowids = [int(r[0]) for r in gone]
            if len(rowids) != len(part):
                raise StaleWrite("a fact of the history is gone; decide again")
            for rows in d.batches(rowids):
                where, more = d.one_of("rowid", rows)
                tx.execute(f"DELETE FROM items WHERE tenant = ? AND {where}", [scope.tenant, *more])
            self._log_removed(tx, scope.tenant, rowids, op="hide")

    def _insert(
        self, tx: Tx, scope: Scope, change: FactInsert, now: datetime, seen: datetime
    ) -> str:
        d, draft = self._d, change.draft
        valid_from = change.state.valid_from if change.state else draft.valid_from or seen
        role = "tool" if draft.source is FactSource.TOOL else "user"
        extra_values = self._item_extras(scope, role, "fact")
        extra = "".join(f", {c}" for c in self._extra_item_columns)
        row = tx.execute(
            f"INSERT INTO items (tenant, id, kind, user_id, session, agent, seq, role, label,"
            f" text, at, tags, metadata, version, content_hash, embed_hash, created_at,"
            f" expires_at{extra}) VALUES (?, ?, 'fact', ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?,"
            f" NULL, '', ?, ?, ?{', ?' * len(extra_values)}) RETURNING rowid",
            (
                scope.tenant, change.id, scope.user, scope.session, role,
                "" if draft.subject == "user" else draft.subject, draft.text,
                d.time(valid_from), d.json(list(draft.tags)),
                # The event the fact was read from: a search for turns finds it through here.
                d.json({"source_event_id": draft.source_event_id}
                       if draft.source_event_id else {}),
                change.embed_hash, d.time(now),
                None if change.expires_at is None else d.time(change.expires_at), *extra_values,
            ),
        ).fetchone()  # fmt: skip
        state = change.state or FactState(
            valid_from, None, FactStatus.ACTIVE, None, 1,
            (draft.source_event_id,) if draft.source_event_id else (), seen,
        )  # fmt: skip
        tx.execute(
            "INSERT INTO facts (tenant, item, user_id, subject, attribute, qualifier, value,"
            " source, confidence, category, status, valid_from, valid_to, superseded_by,"
            " reinforced, expires_at, pinned, last_seen, sources, source_event_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                scope.tenant, row[0], scope.user, draft.subject, draft.attribute,
                draft.qualifier, draft.value, draft.source.value, draft.confidence,
                draft.category.value, state.status.value, d.time(state.valid_from),
                d.opt_time(state.valid_to), state.superseded_by, state.reinforced,
                None if change.expires_at is None else d.time(change.expires_at),
                change.pinned, d.time(state.last_seen),
                d.text_list(state.sources[-_MAX_SOURCES:]), draft.source_event_id,
            ),
        )  # fmt: skip
        return change.id

    def _active_item(self, tx: Tx, scope: Scope, fact_id: str) -> tuple[int, list[str]]:
        """The item rowid and sources of an active fact of the scope's user (StaleWrite if it
        is no longer active), locked until the transaction ends."""
        row = tx.execute(
            f"SELECT f.item, f.sources FROM facts f JOIN items i ON {self._d.item_join('f', 'i')}"
            " WHERE f.tenant = ? AND i.id = ? AND f.user_id = ? AND f.status = 'active'"
            + self._d.for_update_of("f"),
            (scope.tenant, fact_id, scope.user),
        ).fetchone()
        if row is None:
            raise StaleWrite(f"fact {fact_id} is no longer active; decide again")
        return int(row[0]), self._d.read_text_list(row[1])

    def _reinforce(
        self, tx: Tx, scope: Scope, fact_id: str, source: str | None, seen: datetime
    ) -> None:
        d = self._d
        item, sources = self._active_item(tx, scope, fact_id)
        if source and source not in sources:
            sources = [*sources, source][-_MAX_SOURCES:]
        tx.execute(
            f"UPDATE facts SET reinforced = reinforced + 1, last_seen = {d.greatest}(last_seen, ?),"
            " sources = ? WHERE tenant = ? AND item = ?",
            (d.time(seen), d.text_list(sources), scope.tenant, item),
        )

    def _close(
        self,
        tx: Tx,
        scope: Scope,
        fact_id: str,
        status: FactStatus,
        by: str | None,
        at: datetime,
    ) -> None:
        d = self._d
        item, _ = self._active_item(tx, scope, fact_id)
        validity = status in (FactStatus.SUPERSEDED, FactStatus.REVOKED, FactStatus.EXPIRED)
        tx.execute(
            "UPDATE facts SET status = ?, superseded_by = ?,"
            f" valid_to = CASE WHEN ? THEN {d.greatest}(?, valid_from) ELSE valid_to END"
            " WHERE tenant = ? AND item = ?",
            (status.value, by, validity, d.time(at), scope.tenant, item),
        )
        # Out of every search partition from now on; the row keeps its history.
        self._log_removed(tx, scope.tenant, [item], op="hide")

    def _rows(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
        wanted = list(dict.fromkeys(ids))
        found: dict[str, Fact] = {}
        for part in self._d.batches(wanted):
            cond, params = self._d.one_of("i.id", part)
            for row in tx.execute(
                f"SELECT {_FACT_COLUMNS} {self._fact_from} WHERE f.tenant = ? AND {cond}",
                [scope.tenant, *params],
            ):
                fact = self._fact(row)
                found[fact.id] = fact
        return [found[i] for i in wanted if i in found]

    # -- reads -----------------------------------------------------------------------------

    def facts(
        self, scope: Scope, *, ids: Sequence[str] | None = None, subject: str | None = None,
        keys: Sequence[tuple[str, str, str]] | None = None, as_of: datetime | None = None,
        statuses: Sequence[FactStatus] | None = (FactStatus.ACTIVE,), limit: int | None = None,
        sources: Sequence[str] | None = None,
    ) -> list[Fact]:  # fmt: skip
        if any(given is not None and not given for given in (ids, sources)):
            return []  # an empty list of ids, or of sources, matches no fact
        d = self._d
        where, params = _user_sql(scope)
        among = [d.one_of("i.id", list(ids))] if ids is not None else []
        if sources is not None:
            among.append(d.shares_text("f.sources", list(sources)))
        for cond, more in among:
            where += f" AND {cond}"
            params += more
        if subject is not None:
            where += " AND f.subject = ?"
            params.append(subject)
        if keys:
            rows = ", ".join("(?, ?, ?)" for _ in keys)
            where += f" AND (f.subject, f.attribute, f.qualifier) IN (VALUES {rows})"
            params += [part for key in keys for part in key]
        if as_of is not None:
            # What held then: by validity, whatever the fact's status now (archived and
            # expired facts are out of every read).
            where += (
                " AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)"
                " AND f.status NOT IN ('archived', 'expired')"
            )
            params += [d.time(as_of), d.time(as_of)]
        elif statuses is not None:
            cond, more = d.one_of("f.status", [s.value for s in statuses])
            where += f" AND {cond}"
            params += more
        sql = f"SELECT {_FACT_COLUMNS} {self._fact_from} WHERE {where}"
        sql += " ORDER BY f.valid_from, i.rowid"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._read(scope) as tx:
            return [self._fact(r) for r in tx.execute(sql, params)]

    def fact_history(self, scope: Scope, fact_id: str) -> list[Fact]:
        """Every version of the fact's subject, attribute and qualifier, oldest first."""
        with self._read(scope) as tx:
            where, params = _user_sql(Scope(scope.tenant, scope.user))
            row = tx.execute(
                f"SELECT f.subject, f.attribute, f.qualifier, f.user_id {self._fact_from}"
                f" WHERE {where} AND i.id = ?",
                [*params, fact_id],
            ).fetchone()
            if row is None:
                return []
            rows = tx.execute(
                f"SELECT {_FACT_COLUMNS} {self._fact_from} WHERE f.tenant = ? AND f.user_id = ?"
                " AND f.subject = ? AND f.attribute = ? AND f.qualifier = ?"
                " ORDER BY f.valid_from, i.rowid",
                (scope.tenant, row[3], row[0], row[1], row[2]),
            ).fetchall()
        return [self._fact(r) for r in rows]

    # -- extraction progress ---------------------------------------------------------------

    def pending_extractions(self, *, limit: int = 100) -> list[ExtractionJob]:
        """Sessions with events not yet read for facts (the store's own bookkeeping)."""
        with self._read(None) as tx:
            rows = tx.execute(self._cross.extraction.pending, (int(limit),)).fetchall()
        return [ExtractionJob(Scope(r[0], r[1], r[2]), int(r[3]), int(r[4])) for r in rows]

    def claim_extraction(self, *, at: datetime, lease_s: float) -> ExtractionJob | None:
        """Lease the oldest session with unread events (or one whose lease ran out) under a
        fresh token."""
        lease = secrets.token_hex(8)
        with self._write(None) as tx:
            row = tx.execute(
                self._cross.extraction.claim, (self._d.time(at), float(lease_s), lease)
            ).fetchone()
        if row is None:
            return None
        return ExtractionJob(Scope(row[0], row[1], row[2]), int(row[3]), int(row[4]), lease)

    def extraction_stats(self) -> QueueStats:
        """Sessions with unread events: waiting (no reader holds them), held by a reader, and
        when the oldest unread event was written."""
        with self._read(None) as tx:
            row = tx.execute(self._cross.extraction.stats).fetchone()
        return QueueStats(
            pending=int(row[0]), running=int(row[1]), oldest_pending=self._d.read_opt_time(row[2])
        )

    def renew_extraction(self, job: ExtractionJob, *, at: datetime, lease_s: float) -> bool:
        if job.lease is None:
            return False
        until = self._d.time(at + timedelta(seconds=lease_s))
        with self._write(Scope(job.scope.tenant)) as tx:
            cur = tx.execute(
                "UPDATE extraction_progress SET lease_until = ?"
                " WHERE tenant = ? AND session = ? AND lease = ?",
                (until, job.scope.tenant, job.scope.session, job.lease),
            )
        return bool(cur.rowcount)

    def finish_extraction(self, job: ExtractionJob, *, done_seq: int) -> bool:
        """Record that the session's events through *done_seq* were read; drop the lease
        (only while *job*'s lease still holds the session, when it has one)."""
        fence = "" if job.lease is None else " AND lease = ?"
        params: tuple[Any, ...] = (done_seq, job.scope.tenant, job.scope.session)
        with self._write(Scope(job.scope.tenant)) as tx:
            cur = tx.execute(
                f"UPDATE extraction_progress SET done_seq = {self._d.greatest}(done_seq, ?),"
                " lease_until = NULL, lease = NULL, attempts = 0"
                f" WHERE tenant = ? AND session = ?{fence}",
                params if job.lease is None else (*params, job.lease),
            )
        return bool(cur.rowcount)
