"""Long content (a pasted file) is stored whole and found through its chunks."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kenning import ContentTooLarge, Memory, Scope, Settings
from kenning.store.sqlite.store import SQLiteStore
from tests.conftest import MemoEmbedder

NEEDLE = "The staging database password rotates every Tuesday at 04:00 UTC via vaultctl."


def _pasted_file(chars: int, seed: int = 1) -> str:
    """A log-like text of *chars* characters with the needle in the middle."""
    rng = random.Random(seed)
    words = "request handler retry timeout cache worker queue latency shard replica".split()
    lines: list[str] = []
    size = 0
    while size < chars:
        line = f"{rng.randint(10, 99)}:{rng.randint(10, 59)} " + " ".join(
            rng.choice(words) for _ in range(rng.randint(6, 14))
        )
        lines.append(line)
        size += len(line) + 1
        if len(lines) == min(1500, chars // 160):
            lines.append(NEEDLE)
            size += len(NEEDLE) + 1
    return "\n".join(lines)[:chars]


@pytest.mark.parametrize(
    ("chars", "with_model"),
    # The 348,853-character message of a public dataset, lexical only (embedding it takes
    # ~40 s on 2 cores); a 40k-character paste with the real model for the vector chunks.
    [(348_853, False), (40_000, True)],
)
def test_a_long_message_is_stored_whole_and_found_once(
    tmp_path: Path, real_embedder: MemoEmbedder, chars: int, with_model: bool
) -> None:
    chat = Scope("acme", "dana", "paste")
    text = _pasted_file(chars)
    assert len(text) == chars and NEEDLE in text
    embedder = real_embedder if with_model else None
    with Memory.open(tmp_path / "long.db", embedder=embedder) as memory:
        [pasted] = memory.add_events(chat, [{"role": "user", "content": text}])
        memory.add_events(
            chat,
            [
                {"role": "user", "content": "Can you check why the worker queue is slow?"},
                {"role": "assistant", "content": "Looking at the latency graphs now."},
            ],
        )
        assert memory.get_session(chat)[0].content == text
        queries = ["vaultctl tuesday", "when does the staging database password rotate"]
        for query in queries[: 2 if with_model else 1]:
            hits = memory.search(chat, query, k=3)
            ids = [h.id for h in hits]
            assert ids[0] == pasted.id and len(ids) == len(set(ids))
            assert hits[0].content == text
        # Other turns are still found: the chunks did not crowd them out.
        assert memory.search(chat, "latency graphs", k=1)[0].content.startswith("Looking")
        store = memory.store
        assert isinstance(store, SQLiteStore)
        assert store.partition_status("acme").rows > chars // 2_000  # a row per chunk
        memory.forget(chat, ids=[pasted.id])
        assert store.partition_status("acme").rows == 2
        assert all(h.id != pasted.id for h in memory.search(chat, "vaultctl tuesday", k=3))


def test_chunk_vectors_carry_the_meaning_of_their_part(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    """A paraphrase with no word in common finds the paste through its chunk's vector."""
    chat = Scope("acme", "dana", "paste")
    text = _pasted_file(40_000)
    with Memory.open(tmp_path / "vec.db", embedder=real_embedder) as memory:
        [pasted] = memory.add_events(chat, [{"role": "user", "content": text}])
        memory.add_events(chat, [{"role": "user", "content": "I like hiking in the Alps."}])
        query = "credentials of the test environment get changed weekly"
        hits = memory.search(chat, query, k=2)
        assert hits[0].id == pasted.id and "bm25" not in hits[0].scores
        # The needle's chunk is far closer to the question than the paste as one vector.
        whole, q = real_embedder.embed([text, query])
        assert hits[0].scores["cosine"] > float(whole @ q) + 0.1


def test_content_above_the_hard_limit_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    chat = Scope("acme", "dana", "paste")
    settings = Settings(max_content_chars=500_000)
    with Memory.open(tmp_path / "limit.db", embedder=None, settings=settings) as memory:
        with pytest.raises(ContentTooLarge, match="500000"):
            memory.add_events(
                chat,
                [
                    {"role": "user", "content": "fine"},
                    {"role": "user", "content": "x" * 500_001},
                ],
            )
        assert memory.get_session(chat) == []
    assert Settings().max_content_chars >= 2_000_000
