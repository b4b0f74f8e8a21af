"""The fact-extraction queue of the PostgreSQL store across tenants: which sessions have
events not yet read for facts, a reader's claim on one, and the queue's size.

Workers lease sessions through ``kenning_claim_extraction`` (``FOR UPDATE SKIP LOCKED``, see
:mod:`~kenning.store.postgres.schema`); the queue spans tenants, so the application role
reaches it through functions that return queue fields only. The shared part
(:mod:`kenning.store.sql.facts`) writes facts, reads them, and renews and finishes a claim.
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
        with self._write(None) as tx:
            row = tx.execute(
                "SELECT tenant, user_id, session, done_seq, last_seq"
                " FROM kenning_claim_extraction(?, ?, ?)",
                (at, float(lease_s), lease),
            ).fetchone()
        if row is None:
            return None
        return ExtractionJob(Scope(row[0], row[1], row[2]), int(row[3]), int(row[4]), lease)

    def extraction_stats(self) -> QueueStats:
        with self._read(None) as tx:
            row = tx.execute(
                "SELECT pending, running, oldest_pending FROM kenning_extraction_stats()"
            ).fetchone()
        assert row is not None
        return QueueStats(
            pending=int(row[0]), running=int(row[1]), oldest_pending=self._d.read_opt_time(row[2])
        )
