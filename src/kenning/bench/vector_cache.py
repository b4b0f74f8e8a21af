"""A benchmark's embeddings kept on disk, so a long run can be split over several processes.

Embedding a million synthetic turns with the local model takes longer than one sitting on a
small machine. :class:`CachedEmbedder` embeds each distinct text once; with a cache file it
also writes every batch there as it goes (committed per batch), and a later run with the
same file and model reads them back instead of embedding again. The file is a SQLite
database of ``(blake2b-128 of the text, float32 vector)`` rows under the model's id; a file
made with another model is refused, never mixed.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from kenning.embed.base import DelegatingEmbedder, Embedder, Matrix
from kenning.errors import InvalidInput, ModelMismatch
from kenning.indexing import embedding_text, texts_to_embed
from kenning.records import NewEvent, Scope
from kenning.settings import Settings

__all__ = ["CachedEmbedder", "embedded_texts"]


def embedded_texts(rows: Iterable[tuple[Scope, NewEvent]], settings: Settings) -> list[str]:
    """The distinct texts kenning embeds for *rows*, in first-seen order (each session is new,
    so a first turn has no context), as :meth:`Memory.ingest` computes them."""
    texts: dict[str, None] = {}
    previous: dict[str | None, str] = {}
    for scope, event in rows:
        indexed = texts_to_embed(
            event, mode=settings.embed_text, chunk_chars=settings.chunk_chars,
            unit_chars=settings.index_unit_chars,
            previous=previous.get(scope.session) if settings.embed_context else None,
        )  # fmt: skip
        texts.update(dict.fromkeys(t.text for t in indexed))
        previous[scope.session] = embedding_text(event, settings.embed_text)
    return list(texts)


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


class CachedEmbedder(DelegatingEmbedder):
    """The real model, each distinct text embedded once (:meth:`prepare` fills the cache), and
    with *path* each vector also kept in that file for later runs."""

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        super().__init__(inner)
        self._cache: dict[str, np.ndarray] = {}
        self._db: sqlite3.Connection | None = None
        if path is not None:
            if path.is_dir():
                raise InvalidInput(f"--vector-cache {path} is a directory, not a file")
            self._db = sqlite3.connect(path, check_same_thread=False)
            self._db.execute("CREATE TABLE IF NOT EXISTS model (id TEXT NOT NULL, dim INTEGER)")
            # A rowid table: its rows of ~1.5 KB stay on their leaf pages, where a WITHOUT
            # ROWID table moved each to an overflow page (a 737k-vector file took 3.5 GB).
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)"
            )
            row = self._db.execute("SELECT id, dim FROM model").fetchone()
            if row is None:
                identity = (inner.model_id, inner.dimension)
                self._db.execute("INSERT INTO model VALUES (?, ?)", identity)
                self._db.commit()
            elif (row[0], row[1]) != (inner.model_id, inner.dimension):
                raise ModelMismatch(
                    f"{path} holds vectors of {row[0]} ({row[1]} dimensions), not of "
                    f"{inner.model_id}; use another file"
                )

    @property
    def stored(self) -> int:
        """Vectors in the cache file (0 without one)."""
        if self._db is None:
            return 0
        return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def prepare(
        self,
        texts: Sequence[str],
        batch: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Make every text of *texts* available: from memory, from the file, or embedded now
        (and written to the file per batch). Returns how many were embedded now; *progress*
        is called with the number of texts each step made available."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        embedded = 0
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            missing = chunk
            if self._db is not None:
                keys = [_key(t) for t in chunk]
                found = dict(
                    self._db.execute(
                        f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(keys))})",
                        keys,
                    ).fetchall()
                )
                for text, key in zip(chunk, keys, strict=True):
                    if key in found:
                        self._cache[text] = np.frombuffer(found[key], dtype=np.float32)
                missing = [t for t in chunk if t not in self._cache]
            if missing:
                vectors = self.inner.embed(missing)
                self._cache.update(zip(missing, vectors, strict=True))
                embedded += len(missing)
                if self._db is not None:
                    self._db.executemany(
                        "INSERT OR IGNORE INTO vectors VALUES (?, ?)",
                        [(_key(t), np.asarray(v, dtype=np.float32).tobytes())
                         for t, v in zip(missing, vectors, strict=True)],
                    )  # fmt: skip
                    self._db.commit()
            if progress is not None:
                progress(len(chunk))
        return embedded

    @property
    def cached(self) -> int:
        """Distinct texts held in memory."""
        return len(self._cache)

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.prepare(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
