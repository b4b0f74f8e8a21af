"""The fact-extraction queue of the SQLite store across tenants: which sessions have events
not yet read for facts, a reader's claim on one, and the queue's size.

Claims run inside the single writer's transaction, so two processes on one file never hold the
same session. The shared part (:mod:`kenning.store.sql.facts`) writes facts, reads them, and
renews and finishes a claim.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from kenning.records import QueueStats, Scope
from kenning.store.records import ExtractionJob
from kenning.store.sql import facts

__all__ = ["FactTables"]


class FactTables(facts.FactTables):
    """Sessions waiting to be read for facts, and claims on them."""

    def pending_extractions(self, *, limit: int = 100) -> list[ExtractionJob]:
        """Sessions with events not yet read for facts (the store's own bookkeeping)."""
        with self._read(None) as tx:
            rows = tx.execute(
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
        with self._write(None) as tx:
            row = tx.execute(
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
            tx.execute(
                "INSERT INTO extraction_progress (tenant, session, user_id, done_seq, lease_until,"
                " attempts, lease) VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT (tenant, session)"
                " DO UPDATE SET lease_until = excluded.lease_until, attempts = attempts + 1,"
                " lease = excluded.lease",
                (row[0], row[2], row[1], int(row[3]), now + lease_s, lease),
            )
        return ExtractionJob(Scope(row[0], row[1], row[2]), int(row[3]), int(row[4]), lease)

    def extraction_stats(self) -> QueueStats:
        """Sessions with unread events: waiting (no reader holds them), held by a reader, and
        when the oldest unread event was written."""
        with self._read(None) as tx:
            row = tx.execute(
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
            oldest_pending=self._d.read_opt_time(row[2]),
        )
