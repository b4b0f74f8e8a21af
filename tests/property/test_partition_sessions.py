"""Whole-session cosine under a filter equals the cosine of the filtered rows' weighted sum,
computed by brute force (the partition groups the sums by sorting, not row by row, and takes
a session that keeps most of its rows as its running sum less the rows left out)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.store.partition import IndexRows, Partition, RowSelector

DIM = 8


@st.composite
def partitions(
    draw: st.DrawFn,
) -> tuple[IndexRows, tuple[str, ...], tuple[str, ...], float | None, list[str]]:
    n = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    has_vector = rng.random(n) < 0.85
    vectors[~has_vector] = 0.0
    sessions = [f"s{int(rng.integers(0, 5))}" for _ in range(n)]
    rows = IndexRows(
        ids=[f"r{i}" for i in range(n)],
        rowids=np.arange(1, n + 1, dtype=np.int64),
        vectors=vectors,
        has_vector=has_vector,
        texts=[f"text {i}" for i in range(n)],
        labels=[""] * n,
        users=["u"] * n,
        sessions=sessions,
        roles=[("user", "assistant")[int(rng.integers(0, 2))] for _ in range(n)],
        kinds=[("event", "fact")[int(rng.random() < 0.15)] for _ in range(n)],
        ats=np.arange(n, dtype=np.float64),
        weights=rng.uniform(0.2, 1.0, n).astype(np.float32),
    )
    roles = draw(st.sampled_from([(), ("user",), ("assistant",)]))
    kinds = draw(st.sampled_from([(), ("event",), ("fact",)]))
    since = draw(st.one_of(st.none(), st.floats(0, n)))
    wanted = draw(st.lists(st.sampled_from([f"s{i}" for i in range(6)]), min_size=1, max_size=6))
    return rows, roles, kinds, since, wanted


@settings(max_examples=200, deadline=None)
@given(partitions())
def test_filtered_session_cosine_matches_brute_force(
    case: tuple[IndexRows, tuple[str, ...], tuple[str, ...], float | None, list[str]],
) -> None:
    rows, roles, kinds, since, wanted = case
    partition = Partition(DIM)
    partition.add(rows)
    query = np.random.default_rng(1).standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    select = RowSelector(roles=roles, kinds=kinds, since=since)
    got = {name: cosine for name, _, cosine in partition.sessions([], query, select, wanted)}
    for name in dict.fromkeys(wanted):
        if name not in rows.sessions:
            assert name not in got
            continue
        chosen = [
            i for i, session in enumerate(rows.sessions)
            if session == name and rows.has_vector[i]
            and (not roles or rows.roles[i] in roles) and (not kinds or rows.kinds[i] in kinds)
            and (since is None or rows.ats[i] >= since)
        ]  # fmt: skip
        assert rows.weights is not None
        total = sum((rows.vectors[i] * rows.weights[i] for i in chosen), np.zeros(DIM))
        norm = float(np.linalg.norm(total))
        expected = float(total @ query / norm) if norm > 0 else 0.0
        assert abs(got[name] - expected) < 1e-5, (name, got[name], expected)


def test_a_kind_the_partition_lacks_does_not_stand_for_every_kind() -> None:
    """Session BM25 statistics are kept per selection by kind: asking first for a kind no row
    has must not leave its empty statistics behind for a search of every kind."""
    rows = IndexRows(
        ids=["a", "b", "c"],
        rowids=np.arange(1, 4, dtype=np.int64),
        vectors=np.zeros((3, DIM), dtype=np.float32),
        has_vector=np.zeros(3, dtype=np.bool_),
        texts=["refund the lamp", "refund the kettle", "hello there"],
        labels=[""] * 3,
        users=["u"] * 3,
        sessions=["s1", "s1", "s2"],
        roles=["user"] * 3,
        kinds=["event"] * 3,
        ats=np.arange(3, dtype=np.float64),
    )
    fresh, used = Partition(DIM), Partition(DIM)
    fresh.add(rows)
    used.add(rows)
    wanted = ["s1", "s2"]
    missing = used.sessions(["refund"], None, RowSelector(kinds=("procedure",)), wanted)
    assert all(lexical == 0.0 for _, lexical, _ in missing)
    expected = fresh.sessions(["refund"], None, RowSelector(), wanted)
    assert expected[0][1] > 0.0
    assert used.sessions(["refund"], None, RowSelector(), wanted) == expected
