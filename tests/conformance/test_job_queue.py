"""The JobQueue conformance suite: the persisted, leased compaction queue.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from datetime import timedelta

from kenning.records import JobStatus, QueueStats
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


def test_a_lease_taken_over_can_neither_renew_nor_finish(store: Store) -> None:
    store.enqueue_compaction(A1, model="gpt-4o", budget=1000, reason="r", at=T0)
    first = store.claim_compaction(at=T0, lease_s=60)
    assert first is not None and first.lease
    assert store.renew_compaction(first.id, lease=first.lease, at=T0 + timedelta(seconds=50),
                                  lease_s=60)  # fmt: skip
    # Renewed: not expired at 61 s, only at 111 s.
    assert store.claim_compaction(at=T0 + timedelta(seconds=61), lease_s=60) is None
    second = store.claim_compaction(at=T0 + timedelta(seconds=111), lease_s=60)
    assert second is not None and second.lease and second.lease != first.lease
    assert not store.renew_compaction(
        first.id, lease=first.lease, at=T0 + timedelta(seconds=112), lease_s=60
    )
    assert not store.finish_compaction(first.id, status=JobStatus.DONE, at=T0, lease=first.lease)
    assert [j.status for j in store.compaction_jobs(A1)] == [JobStatus.RUNNING]
    assert store.finish_compaction(second.id, status=JobStatus.DONE, at=T0, lease=second.lease)
    assert [j.status for j in store.compaction_jobs(A1)] == [JobStatus.DONE]


def test_queue_stats_count_waiting_and_running_jobs(store: Store) -> None:
    assert store.queue_stats() == QueueStats(pending=0, running=0, oldest_pending=None)
    store.enqueue_compaction(A1, model="gpt-4o", budget=1000, reason="r", at=T0)
    store.enqueue_compaction(G1, model="gpt-4o", budget=1000, reason="r",
                             at=T0 + timedelta(seconds=5))  # fmt: skip
    store.claim_compaction(at=T0, lease_s=60)
    stats = store.queue_stats()
    assert (stats.pending, stats.running) == (1, 1)
    assert stats.oldest_pending == T0 + timedelta(seconds=5)
    assert stats.lag_s(T0 + timedelta(seconds=7)) == 2.0
