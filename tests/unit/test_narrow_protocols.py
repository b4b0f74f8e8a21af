"""A component takes only the store protocol it uses, so a double of that one protocol is
enough to drive it: here the compaction worker runs jobs from a queue that implements
``JobQueue`` alone, while the compactor it drives reads and writes a real SQLite store.

mypy checks this file (``[tool.mypy] files``): it accepts the double where the worker's
constructor names its store parameter, which it would refuse if that were any protocol wider
than ``JobQueue`` (or ``Store``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from kenning import Memory, Scope
from kenning.compaction.compactor import Compactor
from kenning.compaction.extractive import ExtractiveSummarizer
from kenning.compaction.plan import CompactionSettings
from kenning.compaction.worker import CompactionWorker
from kenning.pins.extract import DEFAULT_RULES
from kenning.records import JobStatus
from kenning.store.protocol import ContextState, EventLog, JobQueue, Store
from tests.fakes import MemoryJobQueue

CHATTER = (
    "By the way, the weather has been lovely and I have been reading a long novel about "
    "sailors, which is nice but has nothing to do with anything."
)


def test_a_job_queue_alone_drives_the_compaction_worker(tmp_path: Path) -> None:
    jobs = MemoryJobQueue()
    assert isinstance(jobs, JobQueue)
    assert not isinstance(jobs, ContextState | EventLog | Store)
    scope = Scope("acme", "u", "s")
    with Memory.open(tmp_path / "k.db", embedder=None) as memory:
        memory.add_events(
            scope,
            [{"role": "user", "content": f"({i}) {CHATTER} Order A-{i:04d}."} for i in range(80)],
        )
        compactor = Compactor(
            memory.store, summarizer=ExtractiveSummarizer(), settings=CompactionSettings(),
            rules=DEFAULT_RULES,
        )  # fmt: skip
        worker = CompactionWorker(jobs, compactor, lease_s=30)
        now = datetime.now(UTC)
        try:
            job = jobs.enqueue_compaction(scope, model="gpt-4o", budget=600, reason="t", at=now)
            assert job is not None and job.status is JobStatus.PENDING
            again = jobs.enqueue_compaction(scope, model="gpt-4o", budget=600, reason="t", at=now)
            assert again is None  # one open job per session
            worker.wake()
            assert worker.wait(60)
        finally:
            worker.close()

        assert (worker.completed, worker.failed, worker.lost) == (1, 0, 0)
        [done] = jobs.compaction_jobs(scope)
        assert done.id == job.id and done.status is JobStatus.DONE and done.attempts == 1
        assert jobs.pending_compactions() == 0
        # The compactor's work is in the real store; its own queue was never touched.
        summaries = memory.context.summaries(scope)
        assert summaries and summaries[0].first_seq == 1
        assert {e.action.value for e in memory.context.compaction_log(scope)} >= {"segment"}
        assert memory.store.compaction_jobs(scope) == []
