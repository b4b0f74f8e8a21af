"""The background compaction pool: bounded threads, leases across workers sharing one file.

Two ``Memory`` objects on one SQLite file stand for two server worker processes: each has its
own pool and its own connections, and they meet only in the file, as processes do.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kenning import CompactionSettings, Memory, Scope, Settings
from kenning.records import JobStatus
from tests.fakes import BlockingSummarizer, RecordingSummarizer

TURN = "The customer asked about order {n} and the refund policy for damaged items again."


def _fill(memory: Memory, scope: Scope, turns: int = 30) -> None:
    memory.add_events(
        scope,
        [{"role": "user" if i % 2 else "assistant", "content": TURN.format(n=i)}
         for i in range(turns)],
    )  # fmt: skip


def test_two_pools_on_one_file_run_every_job_once(tmp_path: Path) -> None:
    settings = Settings(compaction=CompactionSettings(workers=2, lease_s=30))
    path = tmp_path / "pool.db"
    recorders = [RecordingSummarizer(), RecordingSummarizer()]
    first = Memory.open(path, embedder=None, settings=settings, summarizer=recorders[0])
    second = Memory.open(path, embedder=None, settings=settings, summarizer=recorders[1])
    scopes = [Scope("acme", f"u{i % 3}", f"s{i}") for i in range(12)]
    try:
        now = datetime.now(UTC)
        for scope in scopes:
            _fill(first, scope)
            assert first.store.enqueue_compaction(
                scope, model="gpt-4o", budget=300, reason="test", at=now
            )
        first.context.resume()
        second.context.resume()
        assert first.context.worker.busy <= 2 and second.context.worker.busy <= 2
        assert first.context.wait_for_compaction(60) and second.context.wait_for_compaction(60)
        jobs = [j for s in scopes for j in first.store.compaction_jobs(s)]
        assert [j.status for j in jobs] == [JobStatus.DONE] * len(scopes)
        ranges = Counter(
            (r.events[0].scope.session, r.first_seq, r.last_seq)
            for rec in recorders
            for r in rec.requests
        )
        assert ranges and max(ranges.values()) == 1, "a range was summarized twice"
        assert {session for session, _, _ in ranges} == {s.session for s in scopes}
        done = first.context.worker.completed + second.context.worker.completed
        assert done == len(scopes)
        assert first.store.queue_stats().pending == 0
    finally:
        first.close()
        second.close()


def test_a_worker_whose_lease_was_taken_over_writes_nothing(tmp_path: Path) -> None:
    settings = Settings(compaction=CompactionSettings(lease_s=1.5))
    blocking = BlockingSummarizer()
    memory = Memory.open(tmp_path / "lease.db", embedder=None, settings=settings,
                         summarizer=blocking)  # fmt: skip
    scope = Scope("acme", "dana", "s1")
    try:
        _fill(memory, scope)
        memory.store.enqueue_compaction(
            scope, model="gpt-4o", budget=300, reason="test", at=datetime.now(UTC)
        )
        memory.context.resume()
        assert blocking.started.wait(10)
        # Another worker, whose clock says the stalled worker's lease ran out, takes the job.
        thief = memory.store.claim_compaction(
            at=datetime.now(UTC) + timedelta(seconds=10), lease_s=600
        )
        assert thief is not None
        time.sleep(1.0)  # the stalled worker's next renewal finds its lease gone
        blocking.release.set()
        assert memory.context.wait_for_compaction(10)
        assert memory.context.worker.lost == 1 and memory.context.worker.completed == 0
        assert memory.context.summaries(scope) == []
        [job] = memory.store.compaction_jobs(scope)
        assert job.status is JobStatus.RUNNING and job.lease == thief.lease
    finally:
        memory.close()
