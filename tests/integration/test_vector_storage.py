"""How SQLite lays out the vectors of events: a row per vector that fits whole in a page, so
vectors take at most 1.3x their raw float32 size, and a file made with the older layout is
converted when it is opened, its vectors still found."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from kenning.records import NewEvent, Scope, content_hash
from kenning.search.filters import parse_filters
from kenning.store.records import EventWrite, ModelInfo
from kenning.store.sqlite.store import SQLiteStore

ACME = Scope("acme", "ann", "s1")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
DIMS = 384  # MiniLM: 1.5 KiB of float32 per vector
MODEL = ModelInfo("test-model", DIMS)


def _append(store: SQLiteStore, start: int, count: int) -> None:
    rng = np.random.default_rng(start)
    events = [
        NewEvent("user", f"turn number {n} about the refund of order {n * 7}", at=T0).validated()
        for n in range(start, start + count)
    ]
    vecs = rng.standard_normal((count, DIMS)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    writes = [EventWrite(ACME, e, content_hash(e.content)) for e in events]
    vectors = {("acme", content_hash(e.content)): v for e, v in zip(events, vecs, strict=True)}
    store.append_events(writes, model=MODEL, vectors=vectors)


def _vector_bytes(path: Path) -> int:
    """Bytes of the pages of the vectors table and its indexes (SQLite's dbstat)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        names = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'vectors'")
        ]
        marks = ",".join("?" * len(names))
        return int(
            conn.execute(
                f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks})", names
            ).fetchone()[0]
        )
    finally:
        conn.close()


def test_vectors_take_at_most_1_3x_their_raw_float32_size(tmp_path: Path) -> None:
    """3,000 vectors of 1.5 KiB: a WITHOUT ROWID table put each on an overflow page (2.9x)."""
    path = tmp_path / "k.db"
    with SQLiteStore(path) as store:
        for start in range(0, 3_000, 500):
            _append(store, start, 500)
    raw = 3_000 * DIMS * 4
    assert _vector_bytes(path) <= 1.3 * raw, f"{_vector_bytes(path) / raw:.2f}x raw"


def test_a_file_with_the_older_vector_layout_is_converted_and_keeps_its_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0018 moves the vectors of a file made before it into rows of their own and
    rewrites the file with larger pages: the same vectors are found, and it shrinks."""
    from kenning.store.sqlite import database, schema

    path = tmp_path / "old.db"
    before = tuple(m for m in schema.MIGRATIONS if m[0] != "0018_vector_rows")
    with monkeypatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", before)
        patch.setattr(database, "PAGE_SIZE", 4096)
        with SQLiteStore(path) as old:
            for start in range(0, 1_000, 500):
                _append(old, start, 500)
            [wanted, *_] = old.nearest(
                Scope("acme"), _vec_of(old, 3), model=MODEL, filters=parse_filters(None), limit=5
            )
    old_bytes = _vector_bytes(path)
    with SQLiteStore(path) as store:
        with store._read(None) as conn:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'vectors'").fetchone()
            assert "WITHOUT ROWID" not in sql[0]
            assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1_000
            assert conn.execute("PRAGMA page_size").fetchone()[0] == schema.PAGE_SIZE
        found = store.nearest(
            Scope("acme"), _vec_of(store, 3), model=MODEL, filters=parse_filters(None), limit=5
        )
        assert found[0].id == wanted.id and found[0].score == pytest.approx(1.0, abs=1e-5)
        _append(store, 1_000, 10)  # the unique key still holds: a repeated vector is kept once
        _append(store, 1_000, 10)
        with store._read(None) as conn:
            assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1_010
    assert _vector_bytes(path) <= 1.3 * 1_010 * DIMS * 4 < old_bytes


def _vec_of(store: SQLiteStore, n: int) -> np.ndarray:
    digest = content_hash(f"turn number {n} about the refund of order {n * 7}")
    with store._read(None) as conn:
        blob = conn.execute("SELECT vec FROM vectors WHERE hash = ?", (digest,)).fetchone()[0]
    return np.frombuffer(blob, dtype=np.float32)
