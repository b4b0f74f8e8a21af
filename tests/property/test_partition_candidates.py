"""A partition's candidates equal a brute-force ranking: under the scope's selection and then
under each extra selection (a time the query names), the top k by score (ties by insertion
order), each record listed once where it is first listed; removed rows and rows without a
vector never appear among the vector candidates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.store.partition import IndexRows, Partition, RowSelector

DIM = 8
WORDS = ("alpha", "beta", "gamma", "delta")


@st.composite
def cases(
    draw: st.DrawFn,
) -> tuple[IndexRows, list[int], RowSelector, list[RowSelector], int, list[str]]:
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    has_vector = rng.random(n) < 0.8
    vectors[~has_vector] = 0.0
    rows = IndexRows(
        ids=[f"r{i}" for i in range(n)],
        rowids=np.arange(1, n + 1, dtype=np.int64),
        vectors=vectors,
        has_vector=has_vector,
        texts=[" ".join(rng.choice(WORDS, int(rng.integers(1, 5)))) for _ in range(n)],
        labels=[""] * n,
        users=[f"u{int(rng.integers(0, 3))}" for _ in range(n)],
        sessions=[f"s{int(rng.integers(0, 4))}" for _ in range(n)],
        roles=["user"] * n,
        kinds=["event"] * n,
        ats=rng.uniform(0, 100, n),
    )
    removed = draw(st.lists(st.integers(1, n), max_size=n // 3, unique=True))
    user = draw(st.sampled_from([None, "u0", "u1"]))
    select = RowSelector(user=user)
    windows = draw(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 40)), max_size=3))
    also = [RowSelector(user=user, since=start, until=start + width) for start, width in windows]
    k = draw(st.integers(1, 12))
    terms = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
    return rows, removed, select, also, k, terms


def _selected(rows: IndexRows, removed: set[int], select: RowSelector) -> list[int]:
    return [
        i for i in range(len(rows.ids))
        if int(rows.rowids[i]) not in removed
        and (select.user is None or rows.users[i] == select.user)
        and (select.since is None or rows.ats[i] >= select.since)
        and (select.until is None or rows.ats[i] <= select.until)
    ]  # fmt: skip


def _expected(
    scores: np.ndarray, chosen_lists: list[list[int]], k: int, keep: np.ndarray
) -> list[str]:
    out: list[str] = []
    for chosen in chosen_lists:
        ranked = sorted((i for i in chosen if keep[i]), key=lambda i: (-scores[i], i))[:k]
        out += [f"r{i}" for i in ranked if f"r{i}" not in out]
    return out


@settings(max_examples=300, deadline=None)
@given(cases())
def test_candidates_match_a_brute_force_ranking(
    case: tuple[IndexRows, list[int], RowSelector, list[RowSelector], int, list[str]],
) -> None:
    rows, removed, select, also, k, terms = case
    partition = Partition(DIM)
    partition.add(rows)
    partition.remove(np.asarray(removed, dtype=np.int64))
    gone = set(removed)
    chosen = [_selected(rows, gone, s) for s in (select, *also)]
    query = np.random.default_rng(7).standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)

    cosines = rows.vectors @ query
    got = partition.nearest(query, k, select, also)
    assert [c.id for c in got] == _expected(cosines, chosen, k, rows.has_vector)
    for cand in got:
        assert abs(cand.score - cosines[int(cand.id[1:])]) < 1e-5

    scores = partition._lexical.scores(terms)
    if scores is None:
        assert partition.lexical(terms, k, select, also) == []
        return
    lexical = partition.lexical(terms, k, select, also)
    assert [c.id for c in lexical] == _expected(scores, chosen, k, scores > 0)
    for cand in lexical:
        assert cand.score == scores[int(cand.id[1:])]
        assert cand.at == rows.ats[int(cand.id[1:])]


@st.composite
def records_of_rows(draw: st.DrawFn) -> tuple[IndexRows, list[int], int]:
    """Records of one to four rows each (a long record's chunks, a message's sentence units):
    the rows of a record share its id and rowid."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=30))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = sum(sizes)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if draw(st.booleans()):  # equal rows: ties decided by insertion order
        vectors[rng.random(n) < 0.3] = vectors[0]
    rows = IndexRows(
        ids=[f"r{i}" for i in owner],
        rowids=owner.astype(np.int64) + 1,
        vectors=vectors,
        has_vector=np.ones(n, dtype=np.bool_),
        texts=["alpha"] * n,
        labels=[""] * n,
        users=["u0"] * n,
        sessions=["s0"] * n,
        roles=["user"] * n,
        kinds=["event"] * n,
        ats=np.zeros(n),
        weights=np.array([1.0 / sizes[i] for i in owner], dtype=np.float32),
    )
    removed = draw(st.lists(st.integers(1, len(sizes)), max_size=len(sizes) // 3, unique=True))
    return rows, removed, draw(st.integers(1, 12))


@settings(max_examples=300, deadline=None)
@given(records_of_rows())
def test_a_record_of_several_rows_is_listed_once_by_its_best_row(
    case: tuple[IndexRows, list[int], int],
) -> None:
    rows, removed, k = case
    partition = Partition(DIM)
    partition.add(rows)
    partition.remove(np.asarray(removed, dtype=np.int64))
    query = np.random.default_rng(3).standard_normal(DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    cosines = (partition._matrix[: len(rows.ids)] @ query).tolist()
    best: dict[str, tuple[float, int]] = {}
    for i, key in enumerate(rows.ids):
        if int(rows.rowids[i]) in removed:
            continue
        if key not in best or (-cosines[i], i) < best[key]:
            best[key] = (-cosines[i], i)
    expected = sorted(best, key=best.__getitem__)[:k]
    got = partition.nearest(query, k, RowSelector())
    assert [c.id for c in got] == expected
    assert [c.score for c in got] == [-best[key][0] for key in expected]
