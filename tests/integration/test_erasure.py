"""Erasure reaches the bytes: after ``forget`` no erased string is left in the database file or
its write-ahead log, whichever lexical index the store keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning import Memory, Scope, Settings, TaskUpdate
from kenning.embed.base import Embedder
from kenning.store.sqlite.store import SQLiteStore
from tests.conftest import MemoEmbedder

SECRETS = ("quokkafrondle", "zyxtaplumbery", "ZQ-99817", "snorkelwhiff", "DE8937040044")


def _bytes_of(path: Path) -> bytes:
    data = path.read_bytes()
    wal = Path(f"{path}-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


def _fill(memory: Memory, scope: Scope) -> None:
    memory.add_events(
        scope,
        [
            {"role": "user", "content": f"My order {SECRETS[2]} needs a {SECRETS[0]} refund"},
            {"role": "assistant", "content": f"Noted: {SECRETS[1]} and {SECRETS[3]}."},
            {"role": "user", "content": f"IBAN {SECRETS[4]}0532013000, please"},
        ]
        + [{"role": "user", "content": f"{SECRETS[0]} chatter number {i}"} for i in range(30)],
    )
    memory.context.update_task(scope, TaskUpdate(task=f"refund {SECRETS[2]}"))
    memory.context.compact(scope, budget_tokens=300, model="gpt-4o")
    memory.search(Scope(scope.tenant), SECRETS[0])


@pytest.mark.parametrize("lexical", ["memory", "fts5"])
@pytest.mark.parametrize("erase", ["user", "ids"])
def test_no_erased_string_is_left_in_the_file_or_the_wal(
    tmp_path: Path, real_embedder: MemoEmbedder, lexical: str, erase: str
) -> None:
    path = tmp_path / "erase.db"
    victim = Scope("acme", "dana", "s-dana")
    keeper = Scope("acme", "lee", "s-lee")
    embedder: Embedder = real_embedder
    store = SQLiteStore(path, lexical=lexical)  # type: ignore[arg-type]
    with Memory(store, embedder=embedder, settings=Settings()) as memory:
        _fill(memory, victim)
        memory.add_events(keeper, [{"role": "user", "content": "an unrelated kettle question"}])
        before = _bytes_of(path)
        assert all(s.encode() in before for s in SECRETS[:4])
        if erase == "user":
            memory.forget(Scope("acme", "dana"))
        else:
            memory.forget(victim, ids=[e.id for e in memory.get_session(victim)])
        after = _bytes_of(path)
        left = [s for s in SECRETS if s.encode() in after or s.lower().encode() in after]
        assert left == []
        assert memory.search(Scope("acme"), "kettle")[0].content == "an unrelated kettle question"
    # Reopened, nothing comes back either.
    assert [s for s in SECRETS if s.lower().encode() in _bytes_of(path)] == []
