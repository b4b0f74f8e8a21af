"""Deferred vectors (kenning.vectors): events committed first, vectors written after, with the
real MiniLM model on SQLite and PostgreSQL.

- a search right after ``add_events`` finds the event by its vector (read your writes);
- a process killed with vectors pending leaves them listed, and the next process's search
  embeds them (the vectors are the model's own);
- a model failure in the background writer surfaces as ``VectorsPending`` and the events stay
  pending (found by their words) until a later flush embeds them;
- an event erased while its vectors were pending leaves no vector behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from kenning import Memory, Scope
from kenning.embed.base import DelegatingEmbedder, Matrix
from kenning.errors import VectorsPending
from kenning.records import Filters
from kenning.settings import LongTermSettings, Settings
from kenning.store.records import ModelInfo
from tests.conftest import MemoEmbedder, open_store

_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
SCOPE = Scope("acme", "dana", "s1")
# The query shares no word with the turn it should find: only its vector can find it.
TURN = "I adopted a greyhound named Pixel last spring."
QUERY = "which dog does the user own"
OTHERS = [
    "The quarterly report is due on Friday.",
    "Can you book a table for two at eight?",
    "My laptop battery drains far too quickly.",
]
BACKENDS = ("sqlite-file", "postgresql")


def _memory(backend: str, tmp_path: Path, embedder: object, *, fresh: bool = True) -> Memory:
    store = open_store(backend, tmp_path, fresh=fresh)
    # Fact reading (which embeds on its own thread) is left out: the writer is under test.
    settings = Settings(defer_vectors=True, longterm=LongTermSettings(extract=False))
    return Memory(store, embedder=embedder, settings=settings)  # type: ignore[arg-type]


def _turns(texts: Sequence[str]) -> list[dict[str, str]]:
    return [{"role": "user", "content": t} for t in texts]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_search_right_after_add_finds_the_event_by_its_vector(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    with _memory(backend, tmp_path, real_embedder) as memory:
        memory.add_events(SCOPE, _turns(OTHERS))
        for _ in range(3):  # the writer is busy with earlier turns when the search comes
            memory.add_events(SCOPE, _turns([f"note {_}: {OTHERS[_]}"]))
        (event,) = memory.add_events(SCOPE, _turns([TURN]))
        found = memory.search(SCOPE, QUERY, k=2)
        assert not found.degraded
        assert event.id in [hit.id for hit in found]
        assert memory.store.pending_texts("acme", limit=10) == {}


class _Gate(DelegatingEmbedder):
    """The real model behind a switch: while *broken*, a call with the turn's text fails as a
    model runtime error does (a query still embeds); while *open* is clear, a call waits."""

    def __init__(self, inner: MemoEmbedder) -> None:
        super().__init__(inner)
        self.broken = False
        self.open = threading.Event()
        self.open.set()

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.open.wait()
        if self.broken and any(t.endswith(TURN) for t in texts):
            raise RuntimeError("onnxruntime: bad allocation (injected)")
        return self.inner.embed(texts)


def test_a_model_failure_surfaces_as_vectors_pending_and_the_rows_stay_pending(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    gate = _Gate(real_embedder)
    with _memory(backend, tmp_path, gate) as memory:
        gate.embed(["warm up"])  # the store's model is known; the failure is the writer's
        gate.broken = True
        (event,) = memory.add_events(SCOPE, _turns([TURN]))  # committed, acknowledged
        with pytest.raises(VectorsPending) as raised:
            memory.flush("acme")
        assert isinstance(raised.value.__cause__, RuntimeError)
        assert raised.value.code == "vectors_pending"
        assert memory.store.pending_texts("acme", limit=10)
        # The event is stored and found by its words; the search says what is missing.
        by_words = memory.search(SCOPE, "greyhound Pixel", k=1)
        assert [hit.id for hit in by_words] == [event.id]
        assert by_words.degraded and "wait for vectors" in (by_words.reason or "")
        gate.broken = False
        memory.flush("acme")
        assert memory.store.pending_texts("acme", limit=10) == {}
        assert event.id in [hit.id for hit in memory.search(SCOPE, QUERY, k=1)]


def test_an_event_erased_while_its_vector_is_pending_leaves_no_vector(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    gate = _Gate(real_embedder)
    with _memory(backend, tmp_path, gate) as memory:
        memory.add_events(Scope("acme", "dana", "s0"), _turns(["warm up"]))
        memory.flush()
        gate.open.clear()
        memory.add_events(SCOPE, _turns([TURN]))
        assert memory.forget(SCOPE) == 1
        gate.open.set()
        memory.flush()
        model = ModelInfo(real_embedder.model_id, real_embedder.dimension)
        pending = memory.store.pending_texts("acme", limit=10)
        assert pending == {}
        digest = _digest_of(memory, TURN)
        assert memory.store.missing_vectors("acme", model, [digest]) == [digest]


def _digest_of(memory: Memory, text: str) -> str:
    from kenning.indexing import index_plan
    from kenning.records import NewEvent

    settings = memory.settings
    plan = index_plan(
        NewEvent.from_mapping({"role": "user", "content": text}), mode=settings.embed_text,
        chunk_chars=settings.chunk_chars, unit_chars=settings.index_unit_chars,
    )  # fmt: skip
    (digest,) = plan.texts
    return digest


# A process that writes turns with the writer stopped, then dies by SIGKILL: its events are
# committed and acknowledged, their vectors never written.
_WRITE_AND_DIE = textwrap.dedent(
    """
    import os, signal, sys, threading
    from kenning import Memory, Scope
    from kenning.settings import Settings
    from kenning.vectors import VectorWriter
    from tests.conftest import open_store

    VectorWriter._write = lambda self, batch: threading.Event().wait()  # never delivers
    store = open_store(sys.argv[1], __import__("pathlib").Path(sys.argv[2]), fresh=False)
    memory = Memory(store, settings=Settings(defer_vectors=True),
                    embedder=__import__("kenning.embed.minilm").embed.minilm.MiniLMEmbedder())
    scope = Scope("acme", "dana", "s1")
    for text in sys.argv[3:]:
        memory.add_events(scope, [{"role": "user", "content": text}])
    print("acknowledged", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


@pytest.fixture
def killed_writer(backend: str, tmp_path: Path) -> Iterator[str]:
    open_store(backend, tmp_path).close()  # a fresh database, migrated
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_AND_DIE, backend, str(tmp_path), *OTHERS, TURN],
        env=_ENV, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "acknowledged" in done.stdout
    yield backend


def test_vectors_pending_when_a_process_was_killed_are_embedded_by_the_next_one(
    killed_writer: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    with _memory(killed_writer, tmp_path, real_embedder, fresh=False) as memory:
        assert len(memory.store.events(SCOPE)) == len(OTHERS) + 1
        left = memory.store.pending_texts("acme", limit=100)
        assert TURN in "".join(left.values())
        found = memory.search(SCOPE, QUERY, k=2)
        assert not found.degraded
        assert found[0].content == TURN
        assert memory.store.pending_texts("acme", limit=100) == {}
        # The vectors are the model's own for the texts that were pending: each one's own
        # embedding finds its event's row at a cosine of 1.
        model = ModelInfo(real_embedder.model_id, real_embedder.dimension)
        assert memory.store.missing_vectors("acme", model, list(left)) == []
        for text in left.values():
            (best, *_) = memory.store.nearest(
                Scope("acme", "dana"), real_embedder.embed([text])[0], model=model,
                filters=Filters(), limit=1,
            )  # fmt: skip
            assert best.score == pytest.approx(1.0, abs=1e-4)


def test_a_flush_waits_for_earlier_writes_only(tmp_path: Path, real_embedder: MemoEmbedder) -> None:
    """Another thread writing to the same tenant all along does not keep a flush waiting."""
    stop = threading.Event()
    bound = threading.Timer(30, stop.set)  # were the flush to wait for the other thread
    bound.start()

    def keep_writing(memory: Memory) -> None:
        n = 0
        while not stop.is_set():
            memory.add_events(
                Scope("acme", "dana", "s2"), _turns([f"Reminder {n}: water the plants."])
            )
            n += 1

    with _memory("sqlite-file", tmp_path, real_embedder) as memory:
        writer = threading.Thread(target=keep_writing, args=(memory,))
        writer.start()
        try:
            (event,) = memory.add_events(SCOPE, _turns([TURN]))
            memory.flush("acme")
            assert not stop.is_set()  # returned while the other thread still writes
            assert event.id in [hit.id for hit in memory.search(SCOPE, QUERY, k=2)]
        finally:
            bound.cancel()
            stop.set()
            writer.join()


def test_vectors_pending_in_a_sqlite_file_travel_with_kenning_migrate(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    """A file left with texts to embed (its process died) is copied to PostgreSQL with
    them; the first search on PostgreSQL embeds them and finds the turn by its vector."""
    from kenning.cli.main import main
    from tests.pg import PG_URL, fresh_postgres

    open_store("sqlite-file", tmp_path).close()
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_AND_DIE, "sqlite-file", str(tmp_path), *OTHERS, TURN],
        env=_ENV, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    fresh_postgres()
    assert main(["migrate", "--from", str(tmp_path / "store.db"), "--to", PG_URL]) == 0
    with _memory("postgresql", tmp_path, real_embedder, fresh=False) as memory:
        assert TURN in "".join(memory.store.pending_texts("acme", limit=100).values())
        found = memory.search(SCOPE, QUERY, k=2)
        assert not found.degraded and found[0].content == TURN
        assert memory.store.pending_texts("acme", limit=100) == {}
