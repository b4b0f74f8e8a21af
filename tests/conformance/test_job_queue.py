"""The JobQueue conformance suite: the persisted, leased compaction queue.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from datetime import timedelta

from kenning.records import (
    JobStatus,
)
from kenning.store.protocol import Store
from tests.conformance.helpers import A1, G1, T0


def test_compaction_queue_is_persistent_and_leased(store: Store) -> None:
    job = store.enqueue_compaction(A1, model="gpt-4o", budget=1000, reason="r", at=T0)
    assert job is not None and job.status is JobStatus.PENDING
    assert store.enqueue_compaction(A1, model="gpt-4o", budget=1000, reason="r", at=T0) is None
    claimed = store.claim_compaction(at=T0, lease_s=60)
    assert claimed is not None and claimed.id == job.id and claimed.attempts == 1
    assert store.claim_compaction(at=T0 + timedelta(seconds=30), lease_s=60) is None
    # A worker that died leaves an expired lease: the job is taken over.
    again = store.claim_compaction(at=T0 + timedelta(seconds=61), lease_s=60)
    assert again is not None and again.attempts == 2
    store.finish_compaction(job.id, status=JobStatus.DONE, at=T0)
    assert store.pending_compactions() == 0
    assert [j.status for j in store.compaction_jobs(A1)] == [JobStatus.DONE]
    assert store.compaction_jobs(G1) == []
