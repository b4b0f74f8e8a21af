"""The PostgreSQL store's statements across tenants
(:class:`~kenning.store.sql.cross.CrossTenant`): calls of the ``SECURITY DEFINER`` functions of
:mod:`~kenning.store.postgres.schema`. Jobs and sessions are claimed with ``FOR UPDATE SKIP
LOCKED`` inside them: any number of workers, in any number of processes and machines, share
one queue, and a job another worker is claiming right now is skipped, never waited for."""

from __future__ import annotations

from kenning.store.sql.cross import JOB_COLUMNS, KEY_COLUMNS, CrossTenant

__all__ = ["CROSS_TENANT"]

_EXTRACTION = "tenant, user_id, session, done_seq, last_seq"

CROSS_TENANT = CrossTenant(
    claim_compaction=f"SELECT {JOB_COLUMNS} FROM kenning_claim_compaction(?, ?, ?)",
    renew_compaction="SELECT kenning_renew_compaction(?, ?, ?, ?)",
    finish_compaction="SELECT kenning_finish_compaction(?, ?, ?, ?, ?)",
    pending_compactions="SELECT kenning_pending_compactions()",
    queue_stats="SELECT pending, running, oldest_pending FROM kenning_queue_stats()",
    pending_extractions=f"SELECT {_EXTRACTION} FROM kenning_pending_extractions(?)",
    claim_extraction=f"SELECT {_EXTRACTION} FROM kenning_claim_extraction(?, ?, ?)",
    extraction_stats="SELECT pending, running, oldest_pending FROM kenning_extraction_stats()",
    api_key=f"SELECT {KEY_COLUMNS} FROM kenning_api_key(?)",
    api_keys=f"SELECT {KEY_COLUMNS} FROM kenning_api_keys(?)",
    revoke_api_key=f"SELECT {KEY_COLUMNS} FROM kenning_revoke_api_key(?, ?)",
)
