"""Rows' positions restored from a snapshot's arrays read back as the positions saved, row by
row, with the rows added since after them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.store.records import Position
from kenning.store.row_columns import Positions, RowIds, saved_ids, saved_positions

positions = st.one_of(
    st.none(),
    st.builds(
        Position,
        st.one_of(st.none(), st.sampled_from(["s1", "s2", "s3"])),
        st.integers(min_value=0, max_value=2**40),
        st.sampled_from(["", "user", "Caroline", "tool:refunds"]),
        st.booleans(),
    ),
)


@given(st.lists(positions, max_size=40), st.lists(positions, max_size=10))
def test_restored_positions_read_back_as_saved(
    saved: list[Position | None], added: list[Position | None]
) -> None:
    arrays, strings = saved_positions(saved)
    restored = Positions(arrays, strings)
    restored.extend(added)
    want = saved + added
    assert len(restored) == len(want)
    got = [restored[row] for row in range(len(want))]
    assert got == want
    assert [type(p.seq) for p in got if p] == [int for p in want if p]
    assert [type(p.asks) for p in got if p] == [bool for p in want if p]
    assert restored.head(len(saved)) == saved
    assert restored.head(len(want) + 5) == want


def test_a_new_partitions_positions_are_those_added() -> None:
    fresh = Positions()
    assert len(fresh) == 0
    fresh.extend([Position("s1", 3, "user", True), None])
    assert fresh[0] == Position("s1", 3, "user", True)
    assert fresh[1] is None
    assert fresh.head(2) == [Position("s1", 3, "user", True), None]


def test_arrays_of_different_lengths_are_refused() -> None:
    arrays, strings = saved_positions([Position("s1", 1, "user")])
    arrays["pos_seq"] = arrays["pos_seq"][:0]
    with pytest.raises(ValueError, match="length"):
        Positions(arrays, strings)


@given(st.lists(st.text(max_size=12), max_size=40), st.lists(st.text(max_size=12), max_size=10))
def test_restored_ids_read_back_as_saved(saved: list[str], added: list[str]) -> None:
    ids = RowIds(saved_ids(saved))
    ids.extend(added)
    want = saved + added
    assert len(ids) == len(want)
    assert [ids[row] for row in range(len(want))] == want
    assert ids.head(len(saved)) == saved
    assert ids.head(len(want) + 3) == want


def test_ids_whose_ends_do_not_match_their_bytes_are_refused() -> None:
    arrays = saved_ids(["evt_01", "évt_02"])
    arrays["id_bytes"] = arrays["id_bytes"][:-1]
    with pytest.raises(ValueError, match="ends"):
        RowIds(arrays)
