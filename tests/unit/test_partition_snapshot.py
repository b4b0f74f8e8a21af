"""Partition snapshots beside a SQLite file (real SQLite): a partition read back from its
snapshot and the delta since answers exactly as one rebuilt from the rows; an erasure is
never undone by a snapshot; a damaged snapshot is ignored and rebuilt."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from kenning.records import NewEvent, Scope, content_hash
from kenning.search.filters import parse_filters
from kenning.store.ann import AnnConfig
from kenning.store.flat_file import FlatFileError, read_flat, write_flat
from kenning.store.records import Candidate, EventWrite, ModelInfo, SessionCandidate
from kenning.store.row_columns import RowIds
from kenning.store.sqlite.store import SQLiteStore

DIM = 32
MODEL = ModelInfo("random-unit", DIM)
ALL = parse_filters(None)
T0 = datetime(2025, 1, 1, tzinfo=UTC)
# A graph from 300 vectors, built in the foreground: the tests see it ready.
SYNC = AnnConfig(min_rows=300, min_fraction=0.0, background=False, m=16, ef_construction=40)
WORDS = "refund order broken glass delivery late invoice card box lid shipping".split()


def vectors(n: int, seed: int) -> npt.NDArray[np.float32]:
    x = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def fill(store: SQLiteStore, n: int, *, tenant: str = "acme", start: int = 0) -> list[str]:
    """*n* turns with varied words, in sessions of 10, some texts repeated (shared nodes)."""
    rng = np.random.default_rng(start + 1)
    vecs = vectors(n, start + 7)
    writes, by_hash = [], {}
    for i in range(start, start + n):
        text = " ".join(rng.choice(WORDS, size=4)) + ("?" if i % 3 == 0 else f" {i % 40}")
        scope = Scope(tenant, f"u{i // 10 % 4}", f"s{i // 10}")
        role = "user" if i % 2 == 0 else "assistant"
        event = NewEvent(role, text, at=T0 + timedelta(seconds=i)).validated()
        writes.append(EventWrite(scope, event, content_hash(text)))
        by_hash.setdefault((tenant, content_hash(text)), vecs[i - start])
    return [e.id for e in store.append_events(writes, model=MODEL, vectors=by_hash)]


def answers(store: SQLiteStore, tenant: str = "acme") -> list[list[Candidate]]:
    """Nearest, lexical and session candidates for a few queries, tenant and user scope."""
    out: list[list[Candidate]] = []
    for q, query in enumerate(vectors(6, 99)):
        for scope in (Scope(tenant), Scope(tenant, f"u{q % 4}")):
            out.append(store.nearest(scope, query, model=MODEL, filters=ALL, limit=20))
            text = f"{WORDS[q]} {WORDS[q + 3]} glass"
            out.append(store.lexical(scope, text, filters=ALL, limit=20))
            found = store.sessions(
                scope, text, query, model=MODEL, sessions=[f"s{k}" for k in range(30)],
                filters=ALL,
            )  # fmt: skip
            out.append(found)  # type: ignore[arg-type]
    return out


def same(got: list[list[Candidate]], want: list[list[Candidate]]) -> None:
    """The same answers; a session's cosine to within float32 rounding: a partition that
    removed rows subtracted their vectors from its session sums, which a rebuild never
    added (as in any process that follows erasures)."""
    assert len(got) == len(want)
    for mine, theirs in zip(got, want, strict=True):
        if mine and isinstance(mine[0], SessionCandidate):
            assert [(s.session, s.lexical) for s in mine] == [
                (s.session, s.lexical) for s in theirs
            ]  # type: ignore[attr-defined]
            cos = [s.cosine for s in mine], [s.cosine for s in theirs]  # type: ignore[attr-defined]
            assert np.allclose(*cos, rtol=0, atol=1e-6)
        else:
            assert mine == theirs


def snapshot(db: Path) -> Path:
    (part,) = (db.parent / f"{db.name}.ann").glob("*.part")
    return part


def from_snapshot(store: SQLiteStore, tenant: str = "acme") -> bool:
    """Whether the tenant's loaded partition came from its snapshot (set only then, until
    the store saves)."""
    return store._partitions[tenant].saved is not None


def rebuilt_answers(db: Path, tmp: Path, config: AnnConfig = SYNC) -> list[list[Candidate]]:
    """The answers of a copy of *db* with no snapshot: its partitions read from the rows."""
    copy = tmp / "rebuilt" / db.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    copy.parent.mkdir()
    shutil.copy(db, copy)
    store = SQLiteStore(copy, ann=config)
    try:
        found = answers(store)
        assert not from_snapshot(store)
        return found
    finally:
        store.close()


@pytest.mark.parametrize("config", [SYNC, AnnConfig(enabled=False)])
def test_a_snapshot_and_its_delta_answer_as_a_rebuild(tmp_path: Path, config: AnnConfig) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=config)
    ids = fill(store, 600)
    fill(store, 200, tenant="globex", start=5_000)
    answers(store)
    store.forget(Scope("acme"), ids=ids[:3])  # removed rows are saved as removed
    live = answers(store)
    store.close()
    saved = SQLiteStore(db, ann=config)
    assert answers(saved) == live  # exactly what the process that saved it answered
    assert from_snapshot(saved)
    # The graph came with it (not built, nor read from the graph file and checked).
    assert saved.vector_index("acme").build_s is None
    assert saved._partitions["acme"].partition.has_graph is (config.enabled)
    saved.close()
    # Another process writes after the snapshot: new rows and a closed turn's rows.
    writer = SQLiteStore(db, ann=config)
    fill(writer, 150, start=600)
    writer.close()
    reopened = SQLiteStore(db, ann=config)
    found = answers(reopened)
    assert from_snapshot(reopened)
    assert reopened.partition_status("acme").rows == 600 - 3 + 150
    same(found, rebuilt_answers(db, tmp_path, config))
    reopened.close()
    # Saved again with the delta: read back whole, with nothing left to catch up.
    again = SQLiteStore(db, ann=config)
    assert answers(again) == found and from_snapshot(again)
    assert again.partition_status("acme").added == 0
    again.close()


def test_each_tenant_has_its_own_snapshot(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=SYNC)
    fill(store, 400)
    other = fill(store, 400, tenant="globex", start=5_000)
    answers(store, "acme")
    answers(store, "globex")
    store.close()
    assert len(list((tmp_path / "m.db.ann").glob("*.part"))) == 2
    reopened = SQLiteStore(db, ann=SYNC)
    query = vectors(1, 5)[0]
    acme = reopened.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=400)
    assert from_snapshot(reopened, "acme")
    assert not {c.id for c in acme} & set(other)
    assert reopened.partition_status("acme").rows == 400
    reopened.close()


def test_an_erasure_after_a_snapshot_is_never_undone(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=SYNC)
    ids = fill(store, 500)
    answers(store)
    store.close()
    place, stale = snapshot(db), tmp_path / "stale.part"
    shutil.copy(place, stale)
    eraser = SQLiteStore(db, ann=SYNC)
    assert eraser.forget(Scope("acme"), ids=ids[10:20]) == 10
    # The erasure removed the snapshot that held the erased rows, and nothing saved since.
    assert not list((tmp_path / "m.db.ann").glob("*.part*"))
    eraser.close()
    # A snapshot from before the erasure put back (a copy, a save that raced it) is refused.
    shutil.copy(stale, place)
    reopened = SQLiteStore(db, ann=SYNC)
    found = answers(reopened)
    assert not from_snapshot(reopened)
    served = {c.id for hits in found for c in hits if isinstance(c, Candidate)}
    query = vectors(1, 3)[0]
    served |= {c.id for c in reopened.nearest(Scope("acme"), query, model=MODEL, filters=ALL,
                                              limit=500)}  # fmt: skip
    assert len(served) == 490 and not served & set(ids[10:20])
    reopened.close()
    # Saved again on close, without the erased rows.
    _, arrays = read_flat(snapshot(db))
    saved_ids = RowIds(arrays)
    assert not set(saved_ids.head(len(saved_ids))) & set(ids[10:20])


@pytest.mark.parametrize(
    "damage", ["truncate", "header", "postings", "vectors", "garbage", "graph", "no graph"]
)
def test_a_damaged_snapshot_is_ignored_and_rebuilt(tmp_path: Path, damage: str) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=SYNC)
    fill(store, 500)
    want = answers(store)
    store.close()
    part = snapshot(db)
    blob = bytearray(part.read_bytes())
    _, arrays = read_flat(part)
    (graph,) = part.parent.glob("*.graph")
    if damage == "graph":
        graph.write_bytes(graph.read_bytes()[:-4096] + bytes(4096))  # its last vectors zeroed
    elif damage == "no graph":
        graph.unlink()
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "header":
        blob[40] ^= 0xFF
    elif damage == "garbage":
        blob = bytearray(b"garbage")
    else:
        name = "lex_docs" if damage == "postings" else "_matrix"
        at = _offset(blob, name) + arrays[name].nbytes // 2
        blob[at : at + 4096] = bytes(4096)  # a page of zeros, as a torn write leaves
    part.write_bytes(bytes(blob))
    reopened = SQLiteStore(db, ann=SYNC)
    assert answers(reopened) == want
    assert not from_snapshot(reopened)
    reopened.close()
    read_flat(snapshot(db))  # rewritten whole on close


def _offset(blob: bytearray, name: str) -> int:
    import json

    at = blob.index(b"\n") + 1
    size = int.from_bytes(blob[at : at + 8], "little")
    header = json.loads(bytes(blob[at + 8 : at + 8 + size]))
    return int(next(s["offset"] for s in header["sections"] if s["name"] == name))


def test_flat_file_round_trip_and_checks(tmp_path: Path) -> None:
    path = tmp_path / "f"
    arrays = {"a": np.arange(10, dtype=np.int32), "m": np.ones((3, 4), np.float32)}
    tmp = write_flat(path, {"x": [1, "y"]}, arrays, unchecked=("m",))
    tmp.replace(path)
    meta, back = read_flat(path)
    assert meta == {"x": [1, "y"]} and back["a"].tolist() == list(range(10))
    back["m"][0, 0] = 5.0  # copy-on-write: the file is not changed
    assert read_flat(path)[1]["m"][0, 0] == 1.0
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1  # inside the unchecked array: not read at open
    path.write_bytes(bytes(blob))
    read_flat(path)
    blob[_offset(blob, "a")] ^= 1
    path.write_bytes(bytes(blob))
    with pytest.raises(FlatFileError):
        read_flat(path)
    path.write_bytes(bytes(blob[:-8]))
    with pytest.raises(FlatFileError):
        read_flat(path)


def _mapped_kib(path: Path) -> int:
    """Resident KiB of this process's mappings of *path* (/proc/self/smaps)."""
    total, current = 0, ""
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5:
            current = fields[5] if len(fields) > 5 else ""
        elif fields[0] == "Rss:" and current == str(path):
            total += int(fields[1])
    return total


def test_sampled_rows_are_read_from_the_file_not_through_its_mapping(tmp_path: Path) -> None:
    """The rows a load checks come from the file: the mapping keeps (almost) none of the
    matrix, whatever the page cache holds (a 24 MiB matrix, its writer's pages still cached)."""
    path = tmp_path / "f"
    matrix = np.random.default_rng(3).standard_normal((16_384, 384)).astype(np.float32)
    write_flat(path, {}, {"m": matrix, "a": np.arange(5)}, unchecked=("m",)).replace(path)
    _, back = read_flat(path)
    rows = np.unique(np.linspace(0, len(matrix) - 1, num=256, dtype=np.int64))
    assert np.array_equal(back.rows("m", rows), matrix[rows])
    assert _mapped_kib(path) * 1024 < matrix.nbytes // 4
    with pytest.raises(IndexError):
        back.rows("m", np.array([len(matrix)], dtype=np.int64))


def test_a_graph_read_with_its_snapshot_takes_erasures_and_new_rows(tmp_path: Path) -> None:
    """The graph's vectors are mapped from the snapshot's file (read only): clearing an
    erased node or adding one copies them out first."""
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=SYNC)
    ids = fill(store, 500)
    query = vectors(1, 11)[0]
    store.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=5)
    store.close()
    reopened = SQLiteStore(db, ann=SYNC)
    top = reopened.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=5)
    assert from_snapshot(reopened) and reopened._partitions["acme"].partition.has_graph
    erased = [c.id for c in top[:2]]
    assert reopened.forget(Scope("acme"), ids=erased) == 2
    more = fill(reopened, 100, start=500)
    after = reopened.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=600)
    assert not {c.id for c in after} & set(erased)
    assert {c.id for c in after} == (set(ids) | set(more)) - set(erased)
    status = reopened.vector_index("acme")
    assert (status.state, status.excluded) == ("ready", 2)
    reopened.close()
    again = SQLiteStore(db, ann=SYNC)
    found = again.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=600)
    assert from_snapshot(again) and not {c.id for c in found} & set(erased)
    assert again.partition_status("acme").rows == len(found) == 598
    again.close()


def test_a_snapshot_saved_before_its_graph_is_saved_again_with_it(tmp_path: Path) -> None:
    """A process that read the rows saves a snapshot before any graph exists (a CLI search
    that exits first); the next process builds the graph from it and, on close, saves the
    snapshot again with the graph, so a third maps the graph instead of building it."""
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=replace(SYNC, min_rows=100_000))  # no graph at 500 rows
    fill(store, 500)
    answers(store)
    store.close()
    assert "graph" not in read_flat(snapshot(db))[0]
    builder = SQLiteStore(db, ann=SYNC)
    found = answers(builder)
    assert from_snapshot(builder) and builder._partitions["acme"].partition.has_graph
    assert builder.vector_index("acme").build_s is not None  # built here
    builder.close()
    assert "graph" in read_flat(snapshot(db))[0]
    mapped = SQLiteStore(db, ann=SYNC)
    assert answers(mapped) == found and from_snapshot(mapped)
    assert mapped._partitions["acme"].partition.has_graph
    assert mapped.vector_index("acme").build_s is None  # came with the snapshot
    mapped.close()


def test_rows_are_read_from_the_file_that_was_mapped_after_another_replaced_it(
    tmp_path: Path,
) -> None:
    """Another process may put a new snapshot in place while this one searches the old:
    rows are read from the file that was mapped (here, through its mapping), never from the
    new one; no descriptor stays open between reads."""
    path = tmp_path / "f"
    old = np.arange(12, dtype=np.float32).reshape(4, 3)
    write_flat(path, {}, {"m": old}).replace(path)
    before = len(os.listdir("/proc/self/fd"))
    _, back = read_flat(path)
    assert np.array_equal(back.rows("m", np.array([3, 1], dtype=np.int64)), old[[3, 1]])
    write_flat(path, {}, {"m": -old}).replace(path)  # renamed over it
    assert np.array_equal(back.rows("m", np.array([3, 1], dtype=np.int64)), old[[3, 1]])
    path.unlink()  # and removed
    assert np.array_equal(back.rows("m", np.array([0], dtype=np.int64)), old[[0]])
    # At most the mapping's own descriptor (CPython's mmap keeps a duplicate of the file's).
    assert len(os.listdir("/proc/self/fd")) <= before + 1


def test_a_restored_partition_reads_its_candidates_rows_from_the_file_until_one_changes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, ann=SYNC)
    ids = fill(store, 500)
    query = vectors(1, 5)[0]
    store.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=10)  # loads, saves
    store.close()
    reopened = SQLiteStore(db, ann=SYNC)
    want = reopened.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=10)
    partition = reopened._partitions["acme"].partition
    assert from_snapshot(reopened) and partition.has_graph
    reader = partition._file_rows
    assert reader is not None
    asked: list[int] = []

    def counted(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        asked.extend(rows.tolist())
        return reader(rows)

    partition._file_rows = counted
    assert reopened.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=10) == want
    assert 10 <= len(asked) < 500  # the candidates' rows, from the file
    reopened.forget(Scope("acme"), ids=[want[0].id])
    assert partition._file_rows is None  # a row changed: the matrix is read from now on
    after = reopened.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=10)
    assert [c.id for c in after][:9] == [c.id for c in want][1:10]
    assert want[0].id in ids
    reopened.close()
