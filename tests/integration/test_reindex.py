"""``Memory.reindex`` / ``kenning reindex``: events written under other settings, or while the
model was down, get the index rows ingest writes now (real model, SQLite and PostgreSQL; a
second store on the same database stands for another process)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from kenning import InvalidInput, Memory, Scope, Settings
from kenning.cli.main import main
from kenning.embed.base import DelegatingEmbedder, Matrix
from kenning.errors import ModelMismatch, ModelUnavailable
from kenning.indexing import DEFAULT_UNIT_CHARS, unit_spans
from kenning.longterm.service import LongTermSettings
from kenning.reindexing import ReindexReport
from kenning.store.postgres import search as pg_search
from kenning.store.records import IndexChange
from kenning.store.sqlite import search as sqlite_search
from tests.conftest import MemoEmbedder, open_store
from tests.integration.test_bench_commands import _locomo
from tests.unit.test_longmemeval_bench import lme_items

CHAT = Scope("acme", "dana", "s1")
FRESH = Scope("fresh", "dana", "s1")
IN_PASSING = (
    "I'm sorting out the spare room before my sister visits next month: the desk is covered in "
    "cables and the printer jams. By the way, I finally adopted a grey rescue cat last weekend "
    "and named her Pixel. Do you know a good way to hide cables behind a desk?"
)
TURNS = [
    ("user", IN_PASSING),
    ("assistant", "Cable trays under the desk work well. Did you pick a litter box yet?"),
    ("user", "Yes, a covered one from the pet shop on Main Street."),
    ("user", "Can you recommend a vacuum cleaner that handles pet hair on carpets?"),
    ("user", "I need a recipe for a quick weeknight pasta with spinach and garlic."),
]
QUERIES = ["Which animal did I take in?", "where did I buy the litter box?", "pasta recipe"]
BACKENDS = ("sqlite-file", "postgresql")
# Searches leave no access counts behind: the rankings compared carry no access bonus. Facts
# are not read from the events: a fact found in the background (the cat adopted in passing) is
# a row of its own, and the rows and rankings compared here are the events'.
NO_FACTS = LongTermSettings(extract=False)
QUIET = Settings(track_access=False, longterm=NO_FACTS)


def _ranking(memory: Memory, query: str, scope: Scope = CHAT) -> list[tuple[str, float]]:
    return [(h.content, round(h.score, 6)) for h in memory.search(scope, query, k=5)]


def _rows(store: object, tenant: str = "acme") -> int:
    status = store.partition_status(tenant)  # type: ignore[attr-defined]
    return int(status.rows)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reindex_gives_old_events_the_rows_ingest_writes_now(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    events = [{"role": r, "content": t} for r, t in TURNS]
    store = open_store(backend, tmp_path)
    # The same conversation ingested under today's settings, in a tenant of its own.
    fresh = Memory(store, embedder=real_embedder, settings=QUIET)
    fresh.add_events(FRESH, events)
    expected = {q: _ranking(fresh, q, FRESH) for q in QUERIES}
    # Written before sentence units: every message has one vector.
    old = Memory(store, embedder=real_embedder, settings=Settings(unit_chars=0, longterm=NO_FACTS))
    old.add_events(CHAT, events)
    other = open_store(backend, tmp_path, fresh=False)  # another process, its partition loaded
    watcher = Memory(other, embedder=real_embedder, settings=QUIET)
    assert watcher.search(CHAT, QUERIES[0], k=5)
    assert _rows(other) == len(TURNS)
    now = Memory(store, embedder=real_embedder, settings=QUIET)
    try:
        report = now.reindex("acme", batch=2)
        # The long message gets its two units (its first two sentences are one: the first is
        # short); the others are one unit each already. The reply after it is indexed again.
        assert report == ReindexReport("acme", checked=5, rebuilt=1, relinked=1, embedded=2)
        assert {q: _ranking(now, q) for q in QUERIES} == expected
        # The other process follows the rebuilt rows by delta, without a reload.
        loads = other.partition_status("acme").loads  # type: ignore[attr-defined]
        assert {q: _ranking(watcher, q) for q in QUERIES} == expected
        assert _rows(other) == _rows(store) == _rows(store, "fresh")
        assert other.partition_status("acme").loads == loads  # type: ignore[attr-defined]
        # Nothing left to do.
        again = now.reindex("acme")
        assert (again.checked, again.rebuilt, again.relinked, again.embedded) == (5, 0, 0, 0)
    finally:
        watcher.close()
        for memory in (now, old, fresh):
            memory.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_events_stored_while_the_model_was_down_get_their_vectors(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    store = open_store(backend, tmp_path)
    # Embedded before the commit: with deferred vectors the events would wait as pending and
    # the next search would embed them (tests/integration/test_deferred_vectors.py).
    events_only = Settings(longterm=NO_FACTS, defer_vectors=False)
    with Memory(store, embedder=real_embedder, settings=events_only) as up:
        up.add_events(CHAT, [{"role": "user", "content": "My order A-1042 arrived damaged."}])
    down = Memory(open_store(backend, tmp_path, fresh=False), embedder=_Down(real_embedder),
                  settings=events_only)  # fmt: skip
    down.add_events(CHAT, [{"role": "user", "content": "I adopted a grey rescue cat."}])
    down.close()
    store = open_store(backend, tmp_path, fresh=False)
    with Memory(store, embedder=real_embedder, settings=events_only) as memory:
        # Without a vector it shares no word with the question, so it is not found at all.
        assert all("cat" not in h.content for h in memory.search(CHAT, "new pet", k=2))
        report = memory.reindex("acme")
        assert (report.checked, report.rebuilt, report.embedded) == (2, 1, 1)
        [hit, _] = memory.search(CHAT, "new pet", k=2)
        assert "cat" in hit.content and hit.scores["cosine"] > 0.2


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_reindex_input_changes_nothing(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    store = open_store(backend, tmp_path)
    with Memory(
        store, embedder=real_embedder, settings=Settings(unit_chars=0, longterm=NO_FACTS)
    ) as m:
        [event] = m.add_events(CHAT, [{"role": "user", "content": IN_PASSING}])
        layout = store.index_layouts("acme", after=0, limit=10)
        for bad in (
            lambda: IndexChange(event.id, None),  # neither a hash nor chunks
            lambda: IndexChange("", "h"),
            lambda: store.reindex_events(
                "acme", [IndexChange(event.id, "h"), IndexChange(event.id, "h")]
            ),
            lambda: store.index_layouts("acme", after=0, limit=0),
            lambda: m.reindex("acme", batch=0),
            lambda: Memory(store).reindex("acme"),  # no embedder
        ):
            with pytest.raises(InvalidInput):
                bad()
        assert store.index_layouts("acme", after=0, limit=10) == layout
        # An id that is no event of the tenant (erased since it was read) is skipped.
        assert store.reindex_events("acme", [IndexChange("ev_gone", "h")]) == 0
        assert store.reindex_events("other", [IndexChange(event.id, "h")]) == 0
        assert store.index_layouts("acme", after=0, limit=10) == layout
    with pytest.raises(ModelMismatch):
        Memory(open_store(backend, tmp_path, fresh=False), embedder=_Other(real_embedder)).reindex(
            "acme"
        )


class _Down(DelegatingEmbedder):
    """The real model's identity while the model is down (degraded mode)."""

    def embed(self, texts: Sequence[str]) -> Matrix:
        raise ModelUnavailable("the embedding model is down (test double)")


class _Other(DelegatingEmbedder):
    """The real model under another id: a store of MiniLM vectors refuses it."""

    @property
    def model_id(self) -> str:
        return "another-model"


def test_kenning_reindex_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], real_embedder: MemoEmbedder
) -> None:
    db = tmp_path / "k.db"
    with Memory.open(db, settings=Settings(unit_chars=0, longterm=NO_FACTS)) as m:
        m.add_events(CHAT, [{"role": r, "content": t} for r, t in TURNS])
    assert main(["reindex", "--db", str(db), "--tenant", "acme"]) == 0
    out = capsys.readouterr().out
    assert "checked 5 events of tenant acme: rebuilt 1, relinked 1, embedded 2 texts" in out
    assert main(["reindex", "--db", str(db), "--tenant", "acme"]) == 0
    assert "rebuilt 0, relinked 0, embedded 0 texts" in capsys.readouterr().out
    for args, message in (
        (["--db", str(tmp_path / "missing.db"), "--tenant", "acme"], "does not exist"),
        (["--db", str(db), "--tenant", "bad tenant"], "invalid_scope"),
    ):
        assert main(["reindex", *args]) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reindex", "--db", str(db), "--tenant", "acme", "--batch", "0"])
    assert "--batch: must be >= 1" in capsys.readouterr().err


def test_kenning_bench_reindex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bench on small LoCoMo- and LongMemEval-shaped files: the reindexed stores rank as
    fresh ones."""
    locomo = tmp_path / "locomo.json"
    conversation = _locomo()[0]
    conversation["conversation"]["session_1"][0]["text"] = LONG_CAT
    locomo.write_text(json.dumps([conversation]))
    longmemeval = tmp_path / "lme.json"
    question = json.loads(json.dumps(lme_items()[0]))
    question["haystack_sessions"][0][0]["content"] = LONG_CAT
    longmemeval.write_text(json.dumps([question]))
    out = tmp_path / "out"
    argv = ["bench", "reindex", "--locomo", str(locomo), "--longmemeval", str(longmemeval)]
    assert main([*argv, "--out", str(out)]) == 0
    loc_report, lme_report = json.loads((out / "report.json").read_text())["datasets"]
    for report in (loc_report, lme_report):
        assert report["reindex"]["checked"] == report["turns"]
        assert report["reindex"]["rebuilt"] == 1 and report["reindex"]["embedded"] == 2
        rows = report["partition_rows"]
        assert rows["after"] == rows["fresh"] == rows["before"] + 1
        assert report["top10_same_as_fresh"]["after"] == report["questions"]
    assert loc_report["turns"] == 5 and "top 10 equal" in capsys.readouterr().out
    assert main(["bench", "reindex", "--out", str(out)]) == 2
    assert "--locomo FILE, --longmemeval FILE or both" in capsys.readouterr().err


LONG_CAT = (
    "I adopted a cat named Miso from the shelter on Elm Street last weekend. "
    "She sleeps on the radiator all afternoon and hides under the sofa when guests arrive."
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reindex_keeps_the_index_log_short_and_a_follower_behind_it_reloads(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = pg_search if backend == "postgresql" else sqlite_search
    monkeypatch.setattr(module, "LOG_KEEP", 2)
    store = open_store(backend, tmp_path)
    texts = [f"{IN_PASSING} Note {n}: the shelf by the window." for n in range(8)]
    old = Memory(store, embedder=real_embedder, settings=Settings(unit_chars=0, longterm=NO_FACTS))
    old.add_events(CHAT, [{"role": "user", "content": t} for t in texts])
    other = open_store(backend, tmp_path, fresh=False)
    follower = Memory(other, embedder=real_embedder, settings=QUIET)
    assert follower.search(CHAT, QUERIES[0], k=3)
    now = Memory(store, embedder=real_embedder, settings=QUIET)
    try:
        assert now.reindex("acme").rebuilt == len(texts)
        # 8 entries logged, more than twice the 2 kept: pruned down to the last 2.
        assert _log_entries(store, backend) == 2
        loads = other.partition_status("acme").loads  # type: ignore[attr-defined]
        # The follower had seen none of them: it is behind the pruned log and loads again.
        assert _ranking(follower, QUERIES[0]) == _ranking(now, QUERIES[0])
        assert other.partition_status("acme").loads == loads + 1  # type: ignore[attr-defined]
        units = len(unit_spans(texts[0], min_chars=DEFAULT_UNIT_CHARS))
        assert _rows(other) == _rows(store) == units * len(texts)
    finally:
        for memory in (follower, now, old):
            memory.close()


def _log_entries(store: object, backend: str) -> int:
    if backend == "postgresql":
        with store._read(Scope("acme")) as conn:  # type: ignore[attr-defined]
            return int(conn.execute("SELECT count(*) FROM index_log").fetchone()[0])
    with store._read(None) as conn:  # type: ignore[attr-defined]
        return int(conn.execute("SELECT count(*) FROM index_log").fetchone()[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_keeps_serving_while_another_process_reindexes(
    backend: str, tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    """Searches in one store run throughout a reindex made through another (a second process
    on the same database): none fails, each sees every event once, and the last equals a
    fresh ingest's ranking."""
    texts = [f"{IN_PASSING} Note {n}: the shelf by the window." for n in range(12)]
    events = [{"role": "user", "content": t} for t in texts]
    store = open_store(backend, tmp_path)
    fresh = Memory(store, embedder=real_embedder, settings=QUIET)
    fresh.add_events(FRESH, events)
    old = Memory(store, embedder=real_embedder, settings=Settings(unit_chars=0, longterm=NO_FACTS))
    old.add_events(CHAT, events)
    reader = Memory(open_store(backend, tmp_path, fresh=False), embedder=real_embedder,
                    settings=QUIET)  # fmt: skip
    done = threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def search() -> None:
        try:
            while not done.is_set():
                hits = reader.search(CHAT, QUERIES[0], k=len(texts) + 5)
                assert len({h.id for h in hits}) == len(hits) == len(texts)
                seen.append(len(hits))
        except BaseException as exc:  # reported below, with the thread's own traceback
            errors.append(exc)

    def between_batches(_: ReindexReport) -> None:
        """Let a search run against each committed batch (the model's memo makes batches
        quicker than a search)."""
        before = len(seen)
        deadline = time.monotonic() + 10
        while len(seen) <= before and not errors and time.monotonic() < deadline:
            time.sleep(0.001)

    now = Memory(store, embedder=real_embedder, settings=QUIET)
    worker = threading.Thread(target=search)
    worker.start()
    try:
        report = now.reindex("acme", batch=1, progress=between_batches)
    finally:
        done.set()
        worker.join(timeout=60)
    try:
        assert not errors, errors
        assert report.rebuilt == len(texts)
        assert len(seen) > len(texts)  # searches ran between the batches
        assert _ranking(reader, QUERIES[0]) == _ranking(fresh, QUERIES[0], FRESH)
    finally:
        for memory in (reader, now, old, fresh):
            memory.close()
