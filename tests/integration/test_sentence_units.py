"""A message of several sentences is embedded sentence by sentence and found by its best one:
a statement made in passing is not drowned by the rest of its message (real model, real
SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning import InvalidInput, Memory, Scope, Settings
from kenning.longterm.service import LongTermSettings
from kenning.search.filters import parse_filters
from kenning.search.fusion import FusionConfig
from kenning.store.sqlite.store import SQLiteStore
from tests.conftest import MemoEmbedder

CHAT = Scope("acme", "dana", "s1")
IN_PASSING = (
    "I'm trying to get my closet organised before we move next month: the shelves are a mess, "
    "I keep losing scarves, and the winter coats take up half the rail. By the way, I finally "
    "adopted a grey rescue cat last weekend and named her Pixel. Do you know a good way to fold "
    "sweaters so they don't stretch?"
)
OTHERS = [
    "Our neighbour's dog barks all night and I can't sleep. Any advice on how to bring it up?",
    "Can you recommend a vacuum cleaner that handles pet hair on carpets?",
    "I need a recipe for a quick weeknight pasta with spinach and garlic.",
    "What's the best way to keep houseplants alive while I'm travelling for two weeks?",
]
# Neither shares a word with the statement that answers it.
QUESTIONS = ("What did I call the kitten I brought home?", "Which animal did I take in?")
VECTOR_ONLY = FusionConfig(lexical_weight=0.0, vector_weight=1.0)


def _memory(path: Path, embedder: MemoEmbedder, **settings: object) -> Memory:
    """Facts are not read from the events: the cat adopted in passing would be a fact row of
    its own, and the rows and rankings compared here are the events'."""
    settings.setdefault("longterm", LongTermSettings(extract=False))
    memory = Memory.open(path, embedder=embedder, settings=Settings(**settings))  # type: ignore[arg-type]
    memory.add_events(CHAT, [{"role": "user", "content": t} for t in [IN_PASSING, *OTHERS]])
    return memory


def test_a_statement_in_passing_is_found_by_its_own_sentence(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    by_units = _memory(tmp_path / "units.db", real_embedder, fusion=VECTOR_ONLY)
    whole = _memory(tmp_path / "whole.db", real_embedder, fusion=VECTOR_ONLY, unit_chars=0)
    try:
        for query in QUESTIONS:
            hits = by_units.search(CHAT, query, k=5)
            assert hits[0].content == IN_PASSING  # the record, whole
            assert len({h.id for h in hits}) == len(hits) == 5  # each record once
            [same] = [h for h in whole.search(CHAT, query, k=5) if h.content == IN_PASSING]
            # Its best sentence is far nearer the question than the whole message is.
            assert hits[0].scores["cosine"] > same.scores["cosine"] + 0.1
        store = by_units.store
        assert isinstance(store, SQLiteStore)
        # The record has a row per sentence (3), every other record one (the first of them
        # has two sentences, but its first is too short to stand alone).
        assert store.partition_status("acme").rows == 3 + len(OTHERS)
        assert isinstance(whole.store, SQLiteStore)
        assert whole.store.partition_status("acme").rows == 1 + len(OTHERS)
    finally:
        by_units.close()
        whole.close()


def test_the_default_search_finds_it_and_erasing_it_leaves_no_unit(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    with _memory(tmp_path / "m.db", real_embedder) as memory:
        hits = memory.search(CHAT, QUESTIONS[1], k=3)
        assert hits[0].content == IN_PASSING
        # Its words are matched over the whole message, as one document.
        lexical = memory.search(CHAT, "closet Pixel sweaters", k=3)
        assert lexical[0].content == IN_PASSING and lexical[0].scores["bm25"] > 0
        memory.forget(CHAT, ids=[hits[0].id])
        store = memory.store
        assert isinstance(store, SQLiteStore)
        assert store.partition_status("acme").rows == len(OTHERS)
        assert all(h.content != IN_PASSING for h in memory.search(CHAT, QUESTIONS[1], k=5))


@pytest.mark.parametrize("unit_chars", [-1, 5, 2_001])
def test_a_bad_unit_length_is_refused(unit_chars: int) -> None:
    with pytest.raises(InvalidInput, match="unit_chars"):
        Settings(unit_chars=unit_chars)


def test_turns_embedded_with_their_context_stay_whole() -> None:
    assert Settings(embed_context=True).index_unit_chars == 0
    assert Settings().index_unit_chars == Settings().unit_chars > 0


def test_chunks_written_before_units_existed_stay_lexical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database made before migration 0010: its long records' chunks are each still a
    lexical document of their own. (The later migrations, which today's writer needs, are
    applied without it: migrations are named, so 0010 is applied when the store opens.)"""
    from kenning.records import NewEvent
    from kenning.store.records import EventWrite
    from kenning.store.sqlite import schema

    path = tmp_path / "old.db"
    before = tuple(m for m in schema.MIGRATIONS if m[0] != "0010_sentence_units")
    text = "alpha " * 300 + "needle " + "omega " * 300
    with monkeypatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", before)
        with SQLiteStore(path) as old:
            [event] = old.append_events([EventWrite(CHAT, NewEvent("user", text).validated())])
            with old._write(None) as conn:  # the chunk rows the old writer made
                rowid = conn.execute("SELECT rowid FROM items WHERE id = ?", [event.id]).fetchone()
                conn.executemany(
                    "INSERT INTO item_chunks (item, n, start, stop) VALUES (?, ?, ?, ?)",
                    [(rowid[0], 0, 0, 1800), (rowid[0], 1, 1800, len(text))],
                )
    with SQLiteStore(path) as store:
        with store._read(None) as conn:
            assert conn.execute("SELECT lexical FROM item_chunks").fetchall() == [(1,), (1,)]
        [hit] = store.lexical(CHAT, "needle", filters=parse_filters(None), limit=5)
        assert hit.id == event.id
        assert store.partition_status("acme").rows == 2
