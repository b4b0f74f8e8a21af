"""The HNSW index behind large partitions: recall against exact search, incremental adds, masks
applied inside the graph search, erasure and the saved index beside the database file."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from kenning.errors import InvalidInput
from kenning.records import NewEvent, Scope, content_hash
from kenning.search.filters import parse_filters
from kenning.store.ann import AnnConfig, HnswIndex, fingerprints
from kenning.store.flat_file import read_flat
from kenning.store.partition import IndexRows, Partition, RowSelector
from kenning.store.records import Candidate, EventWrite, ModelInfo
from kenning.store.replies import DEFAULT_REPLY_WEIGHT
from kenning.store.row_columns import RowIds
from kenning.store.sqlite.store import SQLiteStore

DIM = 32
SYNC = AnnConfig(
    enabled=True, min_rows=500, min_fraction=0.0, background=False, m=16, ef_construction=40
)
MODEL = ModelInfo("random-unit", DIM)
ALL = parse_filters(None)
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def unit_vectors(n: int, seed: int = 0) -> npt.NDArray[np.float32]:
    x = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def rows(vectors: npt.NDArray[np.float32], start: int = 0, users: int = 4) -> IndexRows:
    n = vectors.shape[0]
    ids = range(start, start + n)
    return IndexRows(
        ids=[f"r{i}" for i in ids],
        rowids=np.arange(start + 1, start + n + 1, dtype=np.int64),
        vectors=vectors,
        has_vector=np.ones(n, dtype=np.bool_),
        texts=[f"text {i}" for i in ids],
        labels=[""] * n,
        users=[f"u{i % users}" for i in ids],
        sessions=[f"s{i % 50}" for i in ids],
        roles=["user"] * n,
        kinds=["event"] * n,
        ats=np.arange(start, start + n, dtype=np.float64),
    )


@pytest.fixture(scope="module")
def data() -> npt.NDArray[np.float32]:
    return unit_vectors(4_000)


def built(vectors: npt.NDArray[np.float32], config: AnnConfig = SYNC) -> Partition:
    partition = Partition(DIM, ann=config)
    partition.add(rows(vectors))
    partition.start_ann()
    return partition


def recall(got: list[Candidate], want: list[Candidate]) -> float:
    return len({g[0] for g in got} & {w[0] for w in want}) / len(want)


def test_recall_at_10_and_100_against_exact(data: npt.NDArray[np.float32]) -> None:
    ann = built(data)
    exact = Partition(DIM)
    exact.add(rows(data))
    assert ann.ann_status().state == "ready" and ann.ann_status().nodes == len(data)
    queries = unit_vectors(50, seed=1)
    for k, floor in ((10, 0.99), (100, 0.97)):
        got = [recall(ann.nearest(q, k, RowSelector()), exact.nearest(q, k, RowSelector()))
               for q in queries]  # fmt: skip
        assert np.mean(got) >= floor, (k, np.mean(got))
    assert ann.ann_status().ann_searches == 100
    # Scores are exact cosines of the rows the graph found, ranked like the exact path.
    hits = ann.nearest(queries[0], 10, RowSelector())
    assert [s for _, s, *_ in hits] == sorted((s for _, s, *_ in hits), reverse=True)
    for rid, score, *_ in hits:
        assert score == pytest.approx(float(data[int(rid[1:])] @ queries[0]), abs=1e-6)


def test_rows_added_after_the_build_are_searchable(data: npt.NDArray[np.float32]) -> None:
    ann = built(data[:3_000])
    ann.add(rows(data[3_000:], start=3_000))
    status = ann.ann_status()
    assert (status.state, status.nodes, status.rows) == ("ready", 4_000, 4_000)
    for i in (3_000, 3_500, 3_999):
        assert ann.nearest(data[i], 1, RowSelector())[0][0] == f"r{i}"
    assert ann.ann_status().exact_searches == 0


def test_masks_apply_inside_the_graph_search(data: npt.NDArray[np.float32]) -> None:
    ann = built(data)
    exact = Partition(DIM)
    exact.add(rows(data))
    for select in (RowSelector(user="u1"), RowSelector(since=1_000.0, until=2_999.0)):
        for q in unit_vectors(10, seed=2):
            got = ann.nearest(q, 20, select)
            want = exact.nearest(q, 20, select)
            assert len(got) == 20
            assert recall(got, want) >= 0.9
            for rid, *_ in got:
                i = int(rid[1:])
                assert select.user is None or i % 4 == 1
                assert select.since is None or 1_000 <= i <= 2_999


def test_narrow_masks_and_small_partitions_stay_exact(data: npt.NDArray[np.float32]) -> None:
    config = replace(SYNC, min_fraction=0.3)
    ann = built(data, config)
    exact = Partition(DIM)
    exact.add(rows(data))
    narrow = RowSelector(user="u1")  # a quarter of the rows: below min_fraction
    q = unit_vectors(1, seed=3)[0]
    assert ann.nearest(q, 50, narrow) == exact.nearest(q, 50, narrow)
    few = RowSelector(since=0.0, until=399.0)  # 400 rows: below min_rows
    assert ann.nearest(q, 50, few) == exact.nearest(q, 50, few)
    assert ann.ann_status().exact_searches == 2 and ann.ann_status().ann_searches == 0
    small = built(data[:400], config)
    assert small.ann_status().state == "exact"
    disabled = built(data, AnnConfig(enabled=False))
    assert disabled.ann_status().state == "off"


def test_background_build_serves_exact_until_ready(data: npt.NDArray[np.float32]) -> None:
    partition = built(data, replace(SYNC, background=True))
    q = unit_vectors(1, seed=4)[0]
    assert partition.nearest(q, 5, RowSelector())  # served while building, or after
    partition.add(rows(data[:100] * -1.0, start=4_000))  # during the build: caught up
    assert partition.wait_ann(60)
    status = partition.ann_status()
    assert (status.state, status.nodes, status.excluded) == ("ready", 4_100, 0)
    assert status.build_s is not None and status.build_s > 0
    assert partition.nearest(-data[7], 1, RowSelector())[0][0] == "r4007"


def test_rows_removed_during_a_build_are_excluded_and_many_bring_a_rebuild() -> None:
    slow = replace(SYNC, background=True, m=32, ef_construction=400)
    partition = Partition(DIM, ann=slow)
    many = unit_vectors(8_000, seed=21)
    partition.add(rows(many))
    partition.start_ann()
    saved: list[int] = []
    partition._on_index = lambda p: saved.append(p.ann_status().nodes)
    assert partition.ann_status().state == "building"
    partition.remove(np.arange(1, 11, dtype=np.int64))  # during the build
    assert partition.wait_ann(300)
    status = partition.ann_status()
    # The build's graph has nodes for the removed rows: excluded, their vectors cleared.
    assert (status.state, status.excluded, status.nodes) == ("ready", 10, 8_000)
    assert partition.dump_ann() is not None
    assert saved == [8_000]  # handed over to be saved once
    assert partition._ann is not None and not partition._ann.prints[:10].any()
    assert "r0" not in {r for r, *_ in partition.nearest(many[0], 10, RowSelector())}
    # Past an eighth of the graph excluded, it is rebuilt without them.
    partition.remove(np.arange(11, 1_100, dtype=np.int64))
    assert partition.wait_ann(300)
    status = partition.ann_status()
    assert (status.state, status.excluded, status.nodes) == ("ready", 0, 6_901)
    assert saved == [8_000, 6_901]


def test_index_round_trip_needs_matching_vectors(data: npt.NDArray[np.float32]) -> None:
    index = HnswIndex(DIM, m=16, ef_construction=32)
    index.add(data[:500])
    blob = index.dumps()
    assert data[7].tobytes() not in blob  # the vectors stay in the database only
    again = HnswIndex.loads(blob, lambda prints: data[:500])
    assert np.array_equal(again.prints, fingerprints(data[:500]))
    q = data[42]
    assert again.search(q, 5, ef_search=64).tolist() == index.search(q, 5, ef_search=64).tolist()
    with pytest.raises(ValueError):
        HnswIndex.loads(b"not an index", lambda prints: data[:500])
    with pytest.raises(InvalidInput):
        AnnConfig(min_fraction=2.0)


# -- through the store: real SQLite ----------------------------------------------------------


def fill(
    store: SQLiteStore, vectors: npt.NDArray[np.float32], tenant: str = "acme", start: int = 0
) -> list[str]:
    writes, vecs = [], {}
    for i, vec in enumerate(vectors, start):
        scope = Scope(tenant, f"u{i % 4}", f"s{i % 20}")
        text = f"{tenant} event {i}"
        event = NewEvent("user", text, at=T0 + timedelta(seconds=i)).validated()
        writes.append(EventWrite(scope, event, content_hash(text)))
        vecs[(tenant, content_hash(text))] = vec
    return [e.id for e in store.append_events(writes, model=MODEL, vectors=vecs)]


def nearest_ids(store: SQLiteStore, query: npt.NDArray[np.float32], k: int = 10) -> list[str]:
    return [c.id for c in store.nearest(Scope("acme"), query, model=MODEL, filters=ALL, limit=k)]


def saved_prints(path: Path) -> set[int]:
    """The vector fingerprints a saved graph names, read from its header and print table."""
    blob = path.read_bytes()
    at = blob.index(b"\n") + 1  # past the magic line: the header's length, then the header
    size = int.from_bytes(blob[at : at + 8], "little")
    at += 8
    count = int(json.loads(blob[at : at + size])["count"])
    return set(np.frombuffer(blob, dtype="<u8", count=count, offset=at + size).tolist())


def test_forgotten_rows_are_never_served(tmp_path: Path, data: npt.NDArray[np.float32]) -> None:
    config = replace(SYNC, background=True)
    store = SQLiteStore(tmp_path / "m.db", ann=config)
    ids = fill(store, data[:1_500])
    assert store.vector_index("acme", wait_s=None).state == "ready"
    saved = list((tmp_path / "m.db.ann").iterdir())
    assert len(saved) == 1
    assert nearest_ids(store, data[3])[0] == ids[3]
    erased = set(fingerprints(data[3:5]).tolist())
    assert erased <= saved_prints(saved[0])
    assert store.forget(Scope("acme"), ids=[ids[3], ids[4]]) == 2
    # The saved graph named erased rows: it is gone, or already replaced by the rebuild's.
    assert not saved[0].exists() or not erased & saved_prints(saved[0])
    # Served by the previous graph with the erased rows excluded, or by its rebuild.
    for i in (3, 4):
        assert ids[i] not in nearest_ids(store, data[i], 100)
    # Two nodes of 1,500 left without a row: excluded and cleared, not worth a rebuild.
    status = store.vector_index("acme", wait_s=None)
    assert (status.state, status.excluded, status.nodes) == ("ready", 2, 1_500)
    assert ids[5] == nearest_ids(store, data[5])[0]
    store.close()
    # Saved on close without the erased vectors' fingerprints (the graph holds no vectors),
    # and the partition's snapshot without the erased rows.
    (again,) = (tmp_path / "m.db.ann").glob("*.hnsw")
    assert not erased & saved_prints(again)
    (part,) = (tmp_path / "m.db.ann").glob("*.part")
    _, arrays = read_flat(part)
    saved_ids = RowIds(arrays)
    assert not {ids[3], ids[4]} & set(saved_ids.head(len(saved_ids)))
    assert not erased & set(arrays["_row_print"].tolist())


def test_saved_index_is_reused_and_checked(tmp_path: Path, data: npt.NDArray[np.float32]) -> None:
    path = tmp_path / "m.db"
    store = SQLiteStore(path, ann=SYNC)
    ids = fill(store, data[:1_000])
    assert store.vector_index("acme").build_s is not None
    store.close()
    reopened = SQLiteStore(path, ann=SYNC)
    fill(reopened, data[1_000:1_200], tenant="globex")
    status = reopened.vector_index("acme")
    assert (status.state, status.nodes, status.build_s) == ("ready", 1_000, None)  # not rebuilt
    assert nearest_ids(reopened, data[10])[0] == ids[10]
    reopened.close()
    # A saved graph whose rows no longer match the database is not trusted.
    (index_file,) = (tmp_path / "m.db.ann").glob("*.hnsw")
    other = SQLiteStore(tmp_path / "other.db", ann=SYNC)
    fill(other, data[2_000:3_000])  # same rowids, other vectors
    other.close()
    (tmp_path / "other.db.ann").mkdir()
    (tmp_path / "other.db.ann" / index_file.name).write_bytes(index_file.read_bytes())
    mismatched = SQLiteStore(tmp_path / "other.db", ann=SYNC)
    status = mismatched.vector_index("acme")
    assert status.state == "ready" and status.build_s is not None and status.excluded == 0
    mismatched.close()
    index_file.write_bytes(b"garbage")
    broken = SQLiteStore(path, ann=SYNC)
    assert broken.vector_index("acme").state == "ready"  # rebuilt, the bad file ignored
    assert nearest_ids(broken, data[10])[0] == ids[10]
    broken.close()


def test_memory_database_never_writes_an_index(
    tmp_path: Path, data: npt.NDArray[np.float32]
) -> None:
    store = SQLiteStore(":memory:", ann=SYNC)
    fill(store, data[:600])
    assert store.vector_index("acme").state == "ready"
    store.close()
    assert not any(tmp_path.iterdir())


# -- duplicate-heavy data: repeated texts embed identically -----------------------------------


def repeated(seed: int = 5) -> npt.NDArray[np.float32]:
    """5,000 rows drawn from 50 distinct vectors, then 500 distinct noise vectors, shuffled."""
    rng = np.random.default_rng(seed)
    common = unit_vectors(50, seed=seed)[rng.integers(0, 50, size=5_000)]
    mixed = np.concatenate([common, unit_vectors(500, seed=seed + 1)])
    return mixed[rng.permutation(mixed.shape[0])]


def test_duplicates_share_one_node_and_recall_matches_exact() -> None:
    dup = repeated()
    ann = built(dup)
    exact = Partition(DIM)
    exact.add(rows(dup))
    assert ann.ann_status().nodes == 550 and ann.ann_status().rows == 5_500
    # Queries near the repeated vectors, and anywhere.
    queries = np.concatenate([dup[:25] + 0.05 * unit_vectors(25, seed=7), unit_vectors(25, 8)])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    for k in (10, 100):
        got = [recall(ann.nearest(q, k, RowSelector()), exact.nearest(q, k, RowSelector()))
               for q in queries]  # fmt: skip
        assert np.mean(got) >= 0.99, (k, np.mean(got))
    # Rows sharing a vector tie; both paths rank them by insertion order.
    q = dup[0]
    same = [f"r{i}" for i in np.flatnonzero((dup == q).all(axis=1))]
    assert len(same) > 30
    assert [r for r, *_ in exact.nearest(q, 30, RowSelector())] == same[:30]
    assert ann.nearest(q, 30, RowSelector()) == exact.nearest(q, 30, RowSelector())
    assert ann.ann_status().exact_searches == 0


def test_duplicate_masks_select_nodes_by_any_row() -> None:
    dup = repeated()
    ann = built(dup)
    exact = Partition(DIM)
    exact.add(rows(dup))
    selects = (
        RowSelector(user="u1"),
        RowSelector(since=1_000.0, until=3_999.0),
        RowSelector(rowids=np.arange(2_001, 5_501, dtype=np.int64)),
    )
    for select in selects:
        for q in np.concatenate([dup[:5], unit_vectors(5, seed=9)]):
            got = ann.nearest(q, 100, select)
            assert got == exact.nearest(q, 100, select)
            for rid, *_ in got:
                i = int(rid[1:])
                assert select.user is None or i % 4 == 1
                assert select.since is None or 1_000 <= i <= 3_999
                assert select.rowids is None or i >= 2_000
    assert ann.ann_status().exact_searches == 0


def test_incremental_adds_of_duplicates() -> None:
    dup = repeated()
    ann = built(dup)
    fresh = unit_vectors(1, seed=11)
    more = np.concatenate([dup[:200], np.repeat(fresh, 20, axis=0)])
    ann.add(rows(more, start=5_500))
    status = ann.ann_status()
    assert (status.state, status.nodes, status.rows) == ("ready", 551, 5_720)
    hits = ann.nearest(fresh[0], 20, RowSelector())
    assert [r for r, *_ in hits] == [f"r{i}" for i in range(5_700, 5_720)]
    exact = Partition(DIM)
    exact.add(rows(np.concatenate([dup, more])))
    for q in dup[:5]:
        assert ann.nearest(q, 100, RowSelector()) == exact.nearest(q, 100, RowSelector())


def _same_ranking(got: list[Candidate], want: list[Candidate]) -> None:
    """The same scores, and the same rows above the last score (rows of one vector tie, and
    the exact product may round one of them apart)."""
    assert [r[1] for r in got] == pytest.approx([r[1] for r in want], abs=1e-6)
    last = want[-1][1] + 1e-5
    assert {r[0] for r in got if r[1] > last} == {r[0] for r in want if r[1] > last}


class _SortCounter:
    """numpy for the graph code, counting the sorts (argsort, lexsort, unique) of arrays of
    at least *size* elements."""

    def __init__(self, size: int) -> None:
        self.size, self.large = size, 0

    def __getattr__(self, name: str) -> object:
        real = getattr(np, name)
        if name not in ("argsort", "lexsort", "unique", "sort"):
            return real

        def counted(a: Any, *args: Any, **kw: Any) -> Any:
            arrays = a if name == "lexsort" else (a,)
            if max(np.asarray(x).size for x in arrays) >= self.size:
                self.large += 1
            return real(a, *args, **kw)

        return counted


def test_adds_removals_and_searches_never_sort_the_partitions_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The node-to-rows map is kept as rows are added and removed: a tenant that keeps
    writing, or whose facts close, never has all its rows sorted again (a sort of every
    row after each change took 0.3 s a search at 1M rows)."""
    from kenning.store import graph_rows

    dup = repeated()
    ann = built(dup)
    exact = Partition(DIM)
    exact.add(rows(dup))
    counter = _SortCounter(size=5_000)  # the partition's rows (5,500 and more)
    monkeypatch.setattr(graph_rows, "np", counter)
    start = 5_500
    for step in range(20):
        # Two rows onto nodes that hold rows already, one with a vector of its own.
        batch = np.concatenate([dup[3 * step : 3 * step + 2], unit_vectors(1, seed=100 + step)])
        for partition in (ann, exact):
            partition.add(rows(batch, start=start))
            partition.remove(np.array([start - 40, 3 * step + 1], dtype=np.int64))
        start += batch.shape[0]
        for q in (batch[0], batch[2], dup[3 * step + 2]):
            for select in (RowSelector(), RowSelector(user="u1")):
                _same_ranking(ann.nearest(q, 50, select), exact.nearest(q, 50, select))
    many = unit_vectors(4_200, seed=99)
    ann.add(rows(many, start=start))
    exact.add(rows(many, start=start))
    got, want = ann.nearest(many[0], 50, RowSelector()), exact.nearest(many[0], 50, RowSelector())
    assert [r[0] for r in got] == [r[0] for r in want]
    assert counter.large == 0
    assert ann.ann_status().exact_searches == 0


def test_forgetting_one_of_several_rows_sharing_a_vector(tmp_path: Path) -> None:
    dup = repeated()[:1_500]
    store = SQLiteStore(tmp_path / "m.db", ann=SYNC)
    ids = fill(store, dup)
    status = store.vector_index("acme")
    nodes = status.nodes
    assert status.state == "ready" and nodes < 1_500
    twins = np.flatnonzero((dup == dup[3]).all(axis=1))
    assert twins.size > 3 and twins[0] == 3
    assert nearest_ids(store, dup[3], twins.size) == [ids[i] for i in twins]
    assert store.forget(Scope("acme"), ids=[ids[3]]) == 1
    got = nearest_ids(store, dup[3], twins.size)
    assert ids[3] not in got and got[: twins.size - 1] == [ids[i] for i in twins[1:]]
    status = store.vector_index("acme", wait_s=None)
    assert (status.state, status.nodes, status.excluded) == ("ready", nodes, 0)
    # The last rows holding a vector: its node is excluded (one of many: no rebuild).
    assert store.forget(Scope("acme"), ids=[ids[i] for i in twins[1:]]) == twins.size - 1
    assert not set(nearest_ids(store, dup[3], 100)) & {ids[i] for i in twins}
    status = store.vector_index("acme", wait_s=None)
    assert (status.state, status.nodes, status.excluded) == ("ready", nodes, 1)
    store.close()


def test_a_vector_said_again_after_its_rows_were_forgotten_gets_a_node_of_its_own(
    tmp_path: Path,
) -> None:
    dup = repeated()[:1_500]
    store = SQLiteStore(tmp_path / "m.db", ann=SYNC)
    ids = fill(store, dup)
    nodes = store.vector_index("acme").nodes
    twins = np.flatnonzero((dup == dup[3]).all(axis=1))
    assert store.forget(Scope("acme"), ids=[ids[i] for i in twins]) == twins.size
    assert store.vector_index("acme", wait_s=None).excluded == 1  # its node, cleared
    again = fill(store, dup[3:4], start=10_000)
    # Found by the graph with its full score: not mapped onto the cleared node.
    status = store.vector_index("acme", wait_s=None)
    assert (status.nodes, status.excluded) == (nodes + 1, 1)
    best = store.nearest(Scope("acme"), dup[3], model=MODEL, filters=ALL, limit=1)
    assert [c.id for c in best] == again and best[0].score == pytest.approx(1.0, abs=1e-5)
    store.close()


def test_an_index_file_of_the_previous_format_is_rebuilt(
    tmp_path: Path, data: npt.NDArray[np.float32]
) -> None:
    index = HnswIndex(DIM, m=16, ef_construction=32)
    index.add(data[:100])
    old = index.dumps().replace(b'"format": 3', b'"format": 2')
    with pytest.raises(ValueError, match="format"):
        HnswIndex.loads(old, lambda prints: data[:100])
    path = tmp_path / "m.db"
    store = SQLiteStore(path, ann=SYNC)
    ids = fill(store, data[:1_000])
    assert store.vector_index("acme").state == "ready"
    store.close()
    (index_file,) = (tmp_path / "m.db.ann").glob("*.hnsw")
    index_file.write_bytes(index_file.read_bytes().replace(b'"format": 3', b'"format": 2'))
    for snapshot in (tmp_path / "m.db.ann").glob("*.part*"):
        snapshot.unlink()  # the partition is read from the rows, and the graph file with it
    reopened = SQLiteStore(path, ann=SYNC)
    status = reopened.vector_index("acme")
    assert status.state == "ready" and status.build_s is not None  # rebuilt, not misread
    assert nearest_ids(reopened, data[10])[0] == ids[10]
    reopened.close()


def test_rows_added_to_a_ready_graph_are_found_at_once_and_join_it_in_the_background(
    data: npt.NDArray[np.float32], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An add does not wait for the graph inserts (at 1M nodes they cost an ingest most of
    its time): the new rows are searched exactly beside the graph until they join it."""
    partition = built(data, replace(SYNC, background=True))
    assert partition.wait_ann(60)
    fresh = unit_vectors(300, seed=33)
    with monkeypatch.context() as held:
        held.setattr(partition, "_maybe_insert", lambda: None)  # the inserter waits
        partition.add(rows(fresh, start=4_000))
        assert partition.ann_status().nodes == 4_000
        assert partition.nearest(fresh[5], 1, RowSelector())[0][0] == "r4005"
    partition._maybe_insert()
    for i in (0, 150, 299):
        assert partition.nearest(fresh[i], 1, RowSelector())[0][0] == f"r{4_000 + i}"
        top = partition.nearest(fresh[i], 1, RowSelector(user=f"u{(4_000 + i) % 4}"))
        assert top[0][0] == f"r{4_000 + i}"
    assert partition.wait_ann(60)
    status = partition.ann_status()
    assert (status.state, status.nodes, status.exact_searches) == ("ready", 4_300, 0)
    assert partition.nearest(fresh[7], 1, RowSelector())[0][0] == "r4007"


def test_a_growing_graph_is_saved_again_without_a_rebuild(
    tmp_path: Path, data: npt.NDArray[np.float32]
) -> None:
    """A graph that has grown by an eighth since it was saved is saved again while the store
    is open: a new process (a CLI search) loads it instead of building one."""
    store = SQLiteStore(tmp_path / "m.db", ann=replace(SYNC, background=True))
    fill(store, data[:1_000])
    nearest_ids(store, data[0])  # loads the partition: its graph is built, then saved
    built_in = store.vector_index("acme", wait_s=None).build_s
    (saved,) = (tmp_path / "m.db.ann").iterdir()
    assert len(saved_prints(saved)) == 1_000
    more = fill(store, data[1_000:1_300], start=1_000)
    status = store.vector_index("acme", wait_s=None)
    assert (status.state, status.nodes, status.build_s) == ("ready", 1_300, built_in)
    assert len(saved_prints(saved)) == 1_300
    assert nearest_ids(store, data[1_200])[0] == more[200]
    store.close()


def test_each_reply_weight_keeps_its_own_saved_graph(
    tmp_path: Path, data: npt.NDArray[np.float32]
) -> None:
    """A process indexing answers with another reply weight saves its graph beside the
    default one instead of overwriting it; erasing a row removes both."""
    path = tmp_path / "m.db"
    store = SQLiteStore(path, ann=SYNC, reply_weight=DEFAULT_REPLY_WEIGHT)
    ids = fill(store, data[:1_000])
    assert store.vector_index("acme").state == "ready"
    store.close()
    (default_file,) = (tmp_path / "m.db.ann").glob("*.hnsw")
    saved = default_file.read_bytes()
    other = SQLiteStore(path, ann=SYNC, reply_weight=0.25)
    assert other.vector_index("acme").state == "ready"
    assert nearest_ids(other, data[7])[0] == ids[7]
    other.close()
    files = {p.name for p in (tmp_path / "m.db.ann").glob("*.hnsw")}
    assert files == {default_file.name, default_file.name.replace(".hnsw", "-r0.25.hnsw")}
    assert default_file.read_bytes() == saved  # the default weight's graph is untouched
    reopened = SQLiteStore(path, ann=SYNC, reply_weight=DEFAULT_REPLY_WEIGHT)
    assert reopened.vector_index("acme").build_s is None  # its own graph, not rebuilt
    assert reopened.forget(Scope("acme"), ids=[ids[3]]) == 1
    reopened.close()
    assert not [p for p in (tmp_path / "m.db.ann").glob("*.hnsw") if saved_prints(p) & set(
        fingerprints(data[3:4]).tolist())]  # fmt: skip


def test_an_erasure_waits_for_no_dump_and_a_graph_dumped_before_it_never_lands(
    tmp_path: Path, data: npt.NDArray[np.float32], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "m.db", ann=SYNC)
    ids = fill(store, data[:1_000])
    assert store.vector_index("acme").state == "ready"
    partition = store._partitions["acme"].partition
    dumping, release = threading.Event(), threading.Event()
    real_dump = partition.dump_ann
    held_out: list[bool] = []

    def slow_dump() -> Any:
        dumped = real_dump()  # the graph with row 3 still in it
        dumping.set()
        held_out.append(not release.wait(20))  # True: the erasure waited for this dump
        return dumped

    monkeypatch.setattr(partition, "dump_ann", slow_dump)
    store._saved_nodes.pop("acme")  # the save below has something new to write
    saver = threading.Thread(target=store._persist_index, args=("acme", partition))
    saver.start()
    assert dumping.wait(30)
    assert store.forget(Scope("acme"), ids=[ids[3]]) == 1  # returns while the dump is held
    release.set()
    saver.join(30)
    assert not saver.is_alive() and held_out == [False]
    erased = set(fingerprints(data[3:4]).tolist())
    assert not [p for p in (tmp_path / "m.db.ann").glob("*") if erased & saved_prints(p)]
    monkeypatch.undo()
    store.close()
    (saved,) = (tmp_path / "m.db.ann").glob("*.hnsw")  # the close's save, without row 3
    assert not erased & saved_prints(saved)
