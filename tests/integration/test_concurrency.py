"""Threads and processes on one store: the real model, real SQLite files, no mocks."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import snowballstemmer

from kenning import Memory, Scope, Settings
from kenning.store.lexical_index import LexicalIndex
from kenning.store.sqlite.store import SQLiteStore
from kenning.text import stem
from tests.conftest import MemoEmbedder

NOW = datetime(2026, 3, 1, tzinfo=UTC)
TOPICS = (
    "refund for a broken coffee grinder",
    "delivery of the standing desk is late",
    "password reset link never arrives",
    "invoice shows the wrong VAT number",
    "subscription renewal charged twice",
    "warranty claim for cracked phone screen",
    "change the shipping address to Lisbon",
    "allergic to peanuts, please note it",
)


def _line(rng: random.Random, n: int) -> str:
    topic = rng.choice(TOPICS)
    return f"{topic}, case {n}: " + " ".join(rng.choice(topic.split()) for _ in range(6))


def _ranked(memory: Memory, query: str) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, 5)) for h in memory.search(Scope("acme"), query, now=NOW)]


@pytest.fixture
def switchy() -> Iterator[None]:
    # Threads change hands every microsecond, so a race shows up in seconds, not by luck.
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_stemming_is_safe_across_threads(switchy: None) -> None:
    reference = snowballstemmer.stemmer("porter")
    suffixes = ("ing", "ation", "ness", "ies", "ed", "ful", "ization", "ously")
    rng = random.Random(3)
    jobs = [
        # Distinct words per thread: none is answered from stem()'s cache.
        [
            "".join(rng.choice("bcdfglmnprst") + rng.choice("aeiou") for _ in range(4))
            + rng.choice(suffixes)
            + "x" * t
            for _ in range(3_000)
        ]
        for t in range(8)
    ]
    results: list[list[str]] = [[] for _ in jobs]
    errors: list[BaseException] = []

    def run(t: int) -> None:
        try:
            results[t] = [stem(word) for word in jobs[t]]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for words, got in zip(jobs, results, strict=True):
        assert got == [reference.stemWord(w) for w in words]


def test_two_readers_of_fresh_postings_see_them_whole(switchy: None) -> None:
    """Two searches reading postings that grew since they were last read (a query and the
    time it names are searched on two threads) each get documents and term frequencies of the
    same length. Before, one could see the other's new documents with the old frequencies
    (ValueError in about 1 of 10 rounds)."""
    index = LexicalIndex()
    index.add(["refund order lisbon"] * 50, [""] * 50)
    errors: list[str] = []
    results: list[list[float]] = []
    barrier = threading.Barrier(2)

    def read() -> None:
        try:
            barrier.wait()
            scores = index.scores(["refund", "order"])
            assert scores is not None
            results.append([float(scores[0]), float(scores[-1])])
        except Exception as exc:  # kept as text: a traceback would pin the buffers
            errors.append(repr(exc))

    for _ in range(1_000):
        index.add(["refund order"], [""])  # a writer, alone, as under the partition's lock
        threads = [threading.Thread(target=read) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results[-1] == results[-2]
    assert errors == []


def test_threads_search_and_add_at_once(tmp_path: Path, real_embedder: MemoEmbedder) -> None:
    """8 threads for 10 s: 4 search a tenant while 4 add to another tenant and search it.

    No call fails; every added event is stored once and found by its own text; the searches
    over the tenant nobody wrote to equal the same calls made serially afterwards.
    """
    settings = Settings(track_access=False)
    rng = random.Random(11)
    base = [
        (Scope("acme", f"u{i % 5}", f"s{i % 20}"), {"role": "user", "content": _line(rng, i)})
        for i in range(400)
    ]
    queries = [f"{t.split(',')[0]} {w}" for t in TOPICS for w in ("please", "status")]
    memory = Memory.open(tmp_path / "t.db", embedder=real_embedder, settings=settings)
    try:
        memory.ingest(base)
        memory.search(Scope("acme"), "warm-up")
        errors: list[BaseException] = []
        concurrent: list[tuple[Scope, str, list[str]]] = []
        added: list[str] = []
        stop = time.monotonic() + 10.0

        def searcher(n: int) -> None:
            scopes = [Scope("acme"), Scope("acme", f"u{n}")]
            i = 0
            try:
                while time.monotonic() < stop:
                    scope, query = scopes[i % 2], queries[(i * 7 + n) % len(queries)]
                    hits = memory.search(scope, query, k=5, now=NOW)
                    concurrent.append((scope, query, [h.id for h in hits]))
                    i += 1
            except BaseException as exc:
                errors.append(exc)

        def writer(n: int) -> None:
            wrng = random.Random(n)
            i = 0
            try:
                while time.monotonic() < stop:
                    scope = Scope("globex", f"w{n}", f"w{n}-s{i % 3}")
                    text = f"ticket T{n}Z{i}: " + _line(wrng, i)
                    memory.add_events(scope, [{"role": "user", "content": text}])
                    added.append(text)
                    memory.search(Scope("globex", f"w{n}"), text, k=3, now=NOW)
                    i += 1
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=searcher, args=(n,)) for n in range(4)]
        threads += [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert errors == []
        assert len(concurrent) > 100 and len(added) > 20
        for scope, query, ids in concurrent:
            assert [h.id for h in memory.search(scope, query, k=5, now=NOW)] == ids
        stored = [e.content for e in memory.get_session(Scope("globex", "w0", "w0-s0"))]
        everything = [e.content for e in memory.store.events(Scope("globex"))]
        assert sorted(everything) == sorted(added) and len(stored) == len(set(stored))
        for text in added:
            ticket = text.split(":")[0]
            assert memory.search(Scope("globex"), ticket, k=1, now=NOW)[0].content == text
    finally:
        memory.close()


_INGESTER = textwrap.dedent(
    """
    import json, sys, time
    from kenning import Memory, Scope, Settings
    path, progress, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    memory = Memory.open(path, settings=Settings(track_access=False))
    stop, i = time.monotonic() + seconds, 0
    while time.monotonic() < stop:
        batch = [
            (Scope("acme", "writer", f"w-{i // 50}"),
             {"role": "user", "content": f"shipment marker{i + j} left the depot in Porto"})
            for j in range(5)
        ]
        memory.ingest(batch)
        i += 5
        # Written after the commit: the searcher may rely on every marker below i.
        with open(progress, "w") as f:
            json.dump({"committed": i}, f)
        time.sleep(0.02)
    memory.close()
    """
)


def test_two_processes_follow_each_other_by_delta(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    """One process ingests for 30 s while this one searches the same file: every committed
    event is found by the next search, and the partition is loaded once, then caught up by
    delta, never reloaded because of the other's writes."""
    path = tmp_path / "shared.db"
    progress = tmp_path / "progress.json"
    settings = Settings(track_access=True)  # the searcher's own access writes are in the mix
    memory = Memory.open(path, embedder=real_embedder, settings=settings)
    memory.add_events(Scope("acme", "reader", "r-1"), [{"role": "user", "content": "hello"}])
    memory.search(Scope("acme"), "hello")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    ingester = subprocess.Popen(
        [sys.executable, "-c", _INGESTER, str(path), str(progress), "30"], env=env
    )
    checked = 0
    try:
        while ingester.poll() is None:
            try:
                committed = json.loads(progress.read_text())["committed"]
            except (OSError, ValueError):
                continue
            if committed == 0 or committed - 1 <= checked:
                time.sleep(0.01)
                continue
            marker = f"marker{committed - 1}"
            hits = memory.search(Scope("acme"), f"{marker} left the depot", k=3)
            assert marker in hits[0].content, (marker, [h.content for h in hits])
            checked = committed - 1
        assert ingester.wait() == 0
        assert checked > 50
        committed = json.loads(progress.read_text())["committed"]
        last = memory.search(Scope("acme"), f"marker{committed - 1} left the depot", k=1)
        assert f"marker{committed - 1}" in last[0].content
        store = memory.store
        assert isinstance(store, SQLiteStore)
        status = store.partition_status("acme")
        assert status.loads == 1, status
        assert status.added >= checked and status.rows == 1 + committed
    finally:
        if ingester.poll() is None:
            ingester.kill()
        memory.close()


def test_a_reused_rowid_is_seen_by_another_store(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    """SQLite reuses the largest rowid after it is deleted: the deletion log plus the
    high-water mark still show the other store the erased row gone and the new one there."""
    path = tmp_path / "reuse.db"
    scope = Scope("acme", "ann", "s1")
    with (
        Memory.open(path, embedder=real_embedder) as writer,
        Memory.open(path, embedder=real_embedder) as reader,
    ):
        writer.add_events(scope, [{"role": "user", "content": "first note about tea"}])
        last = writer.add_events(scope, [{"role": "user", "content": "second note about tea"}])
        # The writer's vectors stored before the reader looks: otherwise the reader's own
        # flush may embed them too, and the rows' accounting depends on which lands first
        # (seen once under load: removed 2).
        writer.flush(scope.tenant)
        assert len(reader.search(scope, "tea")) == 2
        writer.forget(scope, ids=[last[0].id])
        writer.add_events(scope, [{"role": "user", "content": "third note about coffee"}])
        writer.flush(scope.tenant)
        hits = reader.search(scope, "note", k=5)
        assert sorted(h.content for h in hits) == [
            "first note about tea",
            "third note about coffee",
        ]
        store = reader.store
        assert isinstance(store, SQLiteStore)
        assert store.partition_status("acme").loads == 1
        assert store.partition_status("acme").removed == 1


def test_forget_by_delta_scores_like_a_fresh_load(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    rng = random.Random(5)
    rows = [
        (Scope("acme", "ann", f"s{i % 4}"), {"role": "user", "content": _line(rng, i)})
        for i in range(120)
    ]
    path = tmp_path / "f.db"
    with Memory.open(path, embedder=real_embedder, settings=Settings(track_access=False)) as m:
        events = m.ingest(rows)
        m.search(Scope("acme"), "refund")
        m.forget(Scope("acme"), ids=[e.id for e in events[::3]])
        m.forget(Scope("acme", "ann", "s1"))
        store = m.store
        assert isinstance(store, SQLiteStore)
        assert store.partition_status("acme").loads == 1
        queries = ["refund grinder", "late desk delivery", "VAT invoice", "peanuts allergy"]
        followed = [
            [(h.id, round(h.score, 5)) for h in m.search(Scope("acme"), q)] for q in queries
        ]
    with Memory.open(path, embedder=real_embedder, settings=Settings(track_access=False)) as m:
        fresh = [[(h.id, round(h.score, 5)) for h in m.search(Scope("acme"), q)] for q in queries]
    assert followed == fresh


def _open_files(path: Path) -> int:
    """How many of this process's file descriptors point at the SQLite file *path*."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor is gone by now
            continue
        count += target == str(path)
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_ended_threads_leave_no_open_connections(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    # The fact workers start a thread per burst of writes, as an agent loop writing one turn at
    # a time makes them: each ended thread's reader connection (file handles, page cache) used
    # to stay open until the store closed, one per turn (about 50 kB of RAM each).
    path = tmp_path / "turns.db"
    memory = Memory(SQLiteStore(path), embedder=real_embedder)
    scope = Scope("acme", "u1", "s1")
    try:
        for n in range(40):
            turn = {"role": "user", "content": f"I moved to city number {n} last year."}
            memory.add_events(scope, [turn])
            memory.wait_for_facts()
        assert memory.search(Scope("acme", "u1"), "city number 7")
        assert _open_files(path) <= 6
    finally:
        memory.close()
    assert _open_files(path) == 0
