"""The background fact-extraction pool: bounded threads, leases across workers sharing one file.

Two ``Memory`` objects on one SQLite file stand for two server worker processes: each has its
own pool and its own connections, and they meet only in the file, as processes do. Real
SQLite and the real rule extractor; the stalled reader is the rule extractor behind a gate.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from kenning import Memory, Scope, Settings
from kenning.longterm.service import LongTermMemory, LongTermSettings
from kenning.longterm.worker import FactWorker
from kenning.store.sqlite.store import SQLiteStore
from tests.fakes import BlockingExtractor

OFF = Settings(longterm=LongTermSettings(extract=False))


def _write(path: Path, sessions: int) -> list[Scope]:
    scopes = [Scope("acme", f"u{i}", f"s{i}") for i in range(sessions)]
    with Memory.open(path, embedder=None, settings=OFF) as writer:
        for i, scope in enumerate(scopes):
            writer.add_events(scope, [
                {"role": "user", "content": f"I work at Company{i}."},
                {"role": "assistant", "content": "Noted."},
                {"role": "user", "content": f"I live in Town{i}."},
            ])  # fmt: skip
    return scopes


def test_two_pools_on_one_file_read_every_session_once(tmp_path: Path) -> None:
    path = tmp_path / "pool.db"
    scopes = _write(path, 24)
    settings = Settings(longterm=LongTermSettings(workers=2))
    first = Memory.open(path, embedder=None, settings=settings)
    second = Memory.open(path, embedder=None, settings=settings)
    try:
        assert first.extraction.threads == 2 and first.extraction.busy <= 2
        assert second.extraction.busy <= 2
        assert first.wait_for_facts(60) and second.wait_for_facts(60)
        assert first.store.pending_extractions() == []
        stats = first.store.extraction_stats()
        assert (stats.pending, stats.running) == (0, 0)
        for i, scope in enumerate(scopes):
            facts = first.facts.list(Scope("acme", scope.user))
            assert {f.value for f in facts} == {f"Company{i}", f"Town{i}"}, scope
            # A session read twice would have reinforced its facts a second time.
            assert all(f.reinforced == 1 and len(f.sources) == 1 for f in facts), facts
        done = first.extraction.completed + second.extraction.completed
        assert done == len(scopes)
        assert first.extraction.lost == second.extraction.lost == 0
    finally:
        first.close()
        second.close()


def test_a_reader_whose_lease_was_taken_over_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "lease.db"
    [scope] = _write(path, 1)
    store = SQLiteStore(path)
    # A long lease: the stalled reader cannot have noticed the takeover by renewing, so what
    # stops its write is the store's fence in the write's own transaction.
    settings = LongTermSettings(lease_s=60)
    blocking = BlockingExtractor()
    facts = LongTermMemory(store, None, settings, extractor=blocking)
    worker = FactWorker(facts, store, threads=1)
    try:
        worker.wake()
        assert blocking.started.wait(10)
        # Another reader, whose clock says the stalled reader's lease ran out, takes over.
        thief = store.claim_extraction(at=datetime.now(UTC) + timedelta(seconds=120), lease_s=600)
        assert thief is not None and thief.scope == scope
        blocking.release.set()
        assert worker.wait(10)
        assert (worker.lost, worker.completed, worker.failed) == (1, 0, 0)
        user = Scope("acme", scope.user)
        assert store.facts(user, statuses=None) == []
        [pending] = store.pending_extractions()
        assert pending.done_seq == 0  # no progress recorded by the stalled reader
        assert store.extraction_stats().running == 1  # the new holder's lease
        # The new holder reads the session once, and it is done.
        rules = LongTermMemory(store, None, settings)
        assert rules.extract(thief)
        assert {f.value for f in store.facts(user)} == {"Company0", "Town0"}
        assert store.pending_extractions() == []
    finally:
        worker.close()
        store.close()
