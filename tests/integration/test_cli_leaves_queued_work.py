"""A one-shot command opens the memory without resuming the work a long-running process
left queued: a compaction queued before it ran is still pending, untouched, when it exits.
Only `Memory.open` with its default (`resume=True`), as `kenning serve` and the library
use it, picks the job up."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kenning.cli.main import main
from kenning.memory import Memory
from kenning.records import JobStatus, Scope
from kenning.store.sqlite.store import SQLiteStore

CHAT = Scope("acme", "ann", "s1")


def _queued(db: Path) -> Path:
    with Memory.open(db, embedder=None) as memory:
        memory.add_events(
            CHAT, [{"role": "user", "content": f"refund order {n}"} for n in range(8)]
        )
    store = SQLiteStore(db)
    try:
        job = store.enqueue_compaction(CHAT, model="gpt-4o", budget=200, reason="test",
                                       at=datetime.now(UTC))  # fmt: skip
        assert job is not None
    finally:
        store.close()
    return db


def _job_status(db: Path) -> tuple[JobStatus, int]:
    store = SQLiteStore(db)
    try:
        [job] = store.compaction_jobs(CHAT)
    finally:
        store.close()
    return job.status, job.attempts


COMMANDS = {
    "search": ["search", "refund", "--tenant", "acme"],
    "pins": ["pins", "list", "--tenant", "acme", "--session", "s1", "--user", "ann"],
    "facts": ["facts", "list", "--tenant", "acme", "--user", "ann"],
    "export": ["export", "--tenant", "acme"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_one_shot_command_leaves_a_queued_compaction_pending(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _queued(tmp_path / "m.db")
    args = COMMANDS[name]
    out = ["--out", str(tmp_path / "x.jsonl")] if name == "export" else []
    assert main([*args, "--db", str(db), *out]) == 0
    assert _job_status(db) == (JobStatus.PENDING, 0)


def test_the_library_default_resumes_the_queued_compaction(tmp_path: Path) -> None:
    db = _queued(tmp_path / "m.db")
    with Memory.open(db, embedder=None) as memory:
        assert memory.context.wait_for_compaction(timeout=60)
    assert _job_status(db)[0] is JobStatus.DONE
