"""Hard retention, legal holds and user erasure, checked in the raw tables and the bytes."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenning import Memory, Scope
from kenning.errors import LegalHoldActive
from kenning.records import TenantPolicy, UserSettings
from tests.conftest import MemoEmbedder

T0 = datetime(2026, 1, 5, tzinfo=UTC)
OLD_SECRET = "quetzalmarble"
NEW_WORDS = "fresh kettle question"


def _tables_with(path: Path, needle: str) -> list[str]:
    """Tables (and columns) whose rows still hold *needle*."""
    found = []
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )]  # fmt: skip
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for column in columns:
                hit = conn.execute(
                    f"SELECT 1 FROM {table} WHERE CAST({column} AS TEXT) LIKE ? LIMIT 1",
                    (f"%{needle}%",),
                ).fetchone()
                if hit:
                    found.append(f"{table}.{column}")
    return found


def _bytes(path: Path) -> bytes:
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_the_purge_removes_expired_records_everywhere_except_held_ones(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    path = tmp_path / "r.db"
    with Memory.open(path, embedder=real_embedder) as memory:
        memory.retention.set_policy("acme", TenantPolicy(episode_days=30, fact_days=60))
        old = Scope("acme", "dana", "old")
        memory.add_events(old, [
            {"role": "user", "content": f"I live in Porto and my code word is {OLD_SECRET}.",
             "at": T0},
            {"role": "user", "content": f"Please refund order A-{OLD_SECRET[:4]}9.", "at": T0},
        ])  # fmt: skip
        held = Scope("acme", "lee", "held")
        memory.add_events(held, [{"role": "user", "content": f"held {OLD_SECRET} note", "at": T0}])
        recent = Scope("acme", "dana", "recent")
        memory.add_events(
            recent, [{"role": "user", "content": NEW_WORDS, "at": T0 + timedelta(days=40)}]
        )
        assert memory.wait_for_facts(60)
        assert [f.value for f in memory.facts.list(Scope("acme", "dana"))] == ["Porto"]
        memory.retention.hold(Scope("acme", "lee"), reason="case 42")
        with pytest.raises(LegalHoldActive, match="case 42"):
            memory.forget(Scope("acme", "lee"))

        removed = memory.retention.purge("acme", now=T0 + timedelta(days=45))
        assert removed == 2  # the two old events; the fact (60 days) and the held note stay
        assert [e.content for e in memory.store.events(Scope("acme", "dana"))] == [NEW_WORDS]
        assert memory.context.pins(old, history=True) == []
        removed = memory.retention.purge("acme", now=T0 + timedelta(days=61))
        assert removed == 1 and memory.facts.list(Scope("acme", "dana")) == []
        [kept] = memory.store.events(Scope("acme", "lee"))
        assert kept.content.startswith("held")
        assert _tables_with(path, OLD_SECRET) == ["items.text"]  # only the held note
        hits = memory.search(Scope("acme", "dana"), OLD_SECRET)
        assert all(OLD_SECRET not in h.content for h in hits)

        memory.retention.release(Scope("acme", "lee"))
        assert memory.forget(Scope("acme", "lee")) == 1
        assert _tables_with(path, OLD_SECRET) == []
    assert OLD_SECRET.encode() not in _bytes(path)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_purge_as_of_the_first_year_removes_nothing(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    where = str(tmp_path / "r.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    with Memory.open(where, embedder=None) as memory:
        memory.retention.set_policy("acme", TenantPolicy(episode_days=30, fact_days=60))
        scope = Scope("acme", "dana", "s1")
        memory.add_events(scope, [{"role": "user", "content": NEW_WORDS, "at": T0}])
        # 30 days before year 1 is no date: the cutoff stops at year 1 and nothing is older.
        for now in (datetime(1, 1, 1, tzinfo=UTC), datetime(1, 1, 5, 12, tzinfo=UTC)):
            assert memory.retention.purge("acme", now=now) == 0
        assert [e.content for e in memory.store.events(scope)] == [NEW_WORDS]
        assert memory.retention.purge("acme", now=T0 + timedelta(days=31)) == 1


def test_erasing_a_user_removes_every_record_of_them(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    path = tmp_path / "e.db"
    dana = Scope("acme", "dana-erase-me")
    with Memory.open(path, embedder=real_embedder) as memory:
        memory.facts.set_consent(dana, share_across_sessions=True, sensitive_facts=True)
        for n in range(2):
            chat = Scope("acme", "dana-erase-me", f"s{n}")
            memory.add_events(chat, [
                {"role": "user", "content": "I'm allergic to peanuts and I work at Netflix."},
                {"role": "user", "content": "Please refund order A-1042 for 42.50 EUR."},
            ])  # fmt: skip
            memory.context.set_pin(chat, "goal", "get the refund")
            memory.context.update_task(chat, __import__("kenning").TaskUpdate(task="refund"))
            memory.context.compact(chat, budget_tokens=200, model="gpt-4o")
        memory.add_events(Scope("acme", "lee", "l1"), [{"role": "user", "content": "hello"}])
        assert memory.wait_for_facts(60)
        assert memory.facts.list(dana)
        assert memory.forget(dana) > 0
        assert memory.facts.profile(dana).session_count == 0
        assert memory.store.user_settings(dana) == UserSettings()
        assert _tables_with(path, "dana-erase-me") == []
        assert [e.content for e in memory.store.events(Scope("acme"))] == ["hello"]
    data = _bytes(path)
    assert b"dana-erase-me" not in data and b"Netflix" not in data and b"A-1042" not in data
