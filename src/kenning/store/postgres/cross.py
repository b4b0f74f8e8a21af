"""The PostgreSQL store's statements across tenants
(:class:`~kenning.store.sql.cross.CrossTenant`): calls of the ``SECURITY DEFINER`` functions of
:mod:`~kenning.store.postgres.schema`. Jobs and sessions are claimed with ``FOR UPDATE SKIP
LOCKED`` inside them: any number of workers, in any number of processes and machines, share
one queue, and a job another worker is claiming right now is skipped, never waited for."""

from __future__ import annotations

from kenning.store.sql import cross

__all__ = ["CROSS_TENANT"]

_EXTRACTION = "tenant, user_id, session, done_seq, last_seq"

CROSS_TENANT = cross.CrossTenant(
    jobs=cross.JobSql(
        claim=f"SELECT {cross.JOB_COLUMNS} FROM kenning_claim_compaction(?, ?, ?)",
        renew="SELECT kenning_renew_compaction(?, ?, ?, ?)",
        finish="SELECT kenning_finish_compaction(?, ?, ?, ?, ?)",
        pending="SELECT kenning_pending_compactions()",
        stats="SELECT pending, running, oldest_pending FROM kenning_queue_stats()",
    ),
    extraction=cross.ExtractionSql(
        pending=f"SELECT {_EXTRACTION} FROM kenning_pending_extractions(?)",
        claim=f"SELECT {_EXTRACTION} FROM kenning_claim_extraction(?, ?, ?)",
        stats="SELECT pending, running, oldest_pending FROM kenning_extraction_stats()",
    ),
    keys=cross.KeySql(
        by_id=f"SELECT {cross.KEY_COLUMNS} FROM kenning_api_key(?)",
        of_tenant=f"SELECT {cross.KEY_COLUMNS} FROM kenning_api_keys(?)",
        revoke=f"SELECT {cross.KEY_COLUMNS} FROM kenning_revoke_api_key(?, ?)",
    ),
)
