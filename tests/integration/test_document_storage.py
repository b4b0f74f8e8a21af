"""How SQLite lays out namespaced documents on disk: a text's row, with its vector, fits
whole in a page (no overflow page per row), and a database made before that layout keeps
its documents when it is opened."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from kenning.records import Scope
from kenning.records.documents import DocumentQuery
from kenning.store.records import DocumentWrite, IndexText
from kenning.store.sqlite.store import SQLiteStore

ACME = Scope("acme")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
DIMS = 256  # 1 KiB of float32 per vector: a LangGraph store's MiniLM texts


def _writes(count: int, start: int = 0) -> list[DocumentWrite]:
    rng = np.random.default_rng(start)
    out = []
    for n in range(start, start + count):
        vec = rng.standard_normal(DIMS).astype(np.float32)
        text = f"speaker {n % 7}: turn number {n} of a long conversation about refunds"
        texts = (IndexText("text", text, vec / np.linalg.norm(vec)),)
        out.append(DocumentWrite(("locomo", f"conv-{n % 5}"), f"D{n}", {"text": text}, texts=texts))
    return out


def _pages(store: SQLiteStore) -> int:
    store._checkpoint()
    with store._read(None) as conn:
        return int(conn.execute("PRAGMA page_count").fetchone()[0])


def test_a_text_and_its_vector_fit_in_the_page_they_are_written_to(tmp_path: Path) -> None:
    """300 documents of one 1 KiB vector each take about a page per three documents, not an
    overflow page each (a WITHOUT ROWID table spilled every row: 4x the pages written)."""
    with SQLiteStore(tmp_path / "k.db") as store:
        before = _pages(store)
        for start in range(0, 300, 30):
            store.put_documents(ACME, _writes(30, start), at=T0, model="m")
        grown = _pages(store) - before
    assert grown < 200, f"300 documents took {grown} new pages"


def test_a_database_from_before_the_layout_keeps_its_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 0016 moves the texts of a database made with 0015's layout: they stay
    searchable by word and vector, and a deleted document's texts still go with it; only
    documents a user owns stay in the index of owners."""
    from kenning.store.sqlite import schema

    path = tmp_path / "old.db"
    before = tuple(m for m in schema.MIGRATIONS if m[0] != "0017_document_layout")
    writes = _writes(40)
    with monkeypatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", before)
        with SQLiteStore(path) as old:
            old.put_documents(ACME, writes, at=T0, model="m")
    with SQLiteStore(path) as store:
        with store._read(None) as conn:
            sql = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'document_texts'"
            ).fetchone()[0]
            assert "WITHOUT ROWID" not in sql
            index = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'documents_user'"
            ).fetchone()[0]
            assert index.endswith("WHERE user_id IS NOT NULL")
            assert conn.execute("SELECT count(*) FROM document_texts").fetchone()[0] == 40
        vector = writes[7].texts[0].vector
        found = store.document_candidates(
            ACME, DocumentQuery(prefix=("locomo",)), text="number 7", vector=vector, model="m"
        )
        [doc] = store.get_documents(ACME, [(("locomo", "conv-2"), "D7")])
        assert doc is not None
        assert found.vector[0].id == doc.id and doc.id in {c.id for c in found.lexical}
        store.put_documents(ACME, [DocumentWrite(("locomo", "conv-2"), "D7", None)], at=T0)
        with store._read(None) as conn:
            assert conn.execute("SELECT count(*) FROM document_texts").fetchone()[0] == 39
