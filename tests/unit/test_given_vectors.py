"""Given vectors that are already float32 at unit length are taken as they are, without a
float64 copy; any others (another type, a zero or tiny vector, a length off 1, numbers not
finite) take the full check, which refuses or normalises them as before."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kenning.errors import InvalidInput
from kenning.records import Scope
from kenning.search.documents import Documents, _packed, _unit_float32, unit_vectors
from kenning.store.records import DocumentWrite, IndexText
from kenning.store.sqlite.store import SQLiteStore


def _unit(vec: np.ndarray) -> np.ndarray:
    return (vec / np.linalg.norm(vec)).astype(np.float32)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 8), elements=st.floats(width=32)))
def test_the_quick_path_takes_only_finite_unit_float32(vec: np.ndarray) -> None:
    dims = _unit_float32([vec])
    if dims is not None:
        wide = vec.astype(np.float64)
        assert np.isfinite(wide).all() and abs(np.linalg.norm(wide) - 1) <= 1e-3
        assert dims == vec.shape[0]


def test_which_vectors_take_the_quick_path() -> None:
    one = _unit(np.arange(1, 5, dtype=np.float32))
    assert _unit_float32([one, one]) == 4
    assert _unit_float32([one, one.astype(np.float64)]) is None
    assert _unit_float32([one, _unit(np.ones(3, dtype=np.float32))]) is None
    assert _unit_float32([np.zeros(4, dtype=np.float32)]) is None
    assert _unit_float32([np.full(4, 1e-30, dtype=np.float32)]) is None  # squares underflow
    assert _unit_float32([np.full(4, 3e38, dtype=np.float32)]) is None  # squares overflow
    assert _unit_float32([one * 2]) is None
    assert _unit_float32([np.array([np.nan, 1, 0, 0], dtype=np.float32)]) is None


@pytest.mark.parametrize(
    ("vector", "stored"),
    [
        (np.full(4, 1e-30, dtype=np.float32), np.full(4, 0.5, dtype=np.float32)),
        (np.full(4, 3e38, dtype=np.float32), np.full(4, 0.5, dtype=np.float32)),
        (np.full(4, 0.5, dtype=np.float32), np.full(4, 0.5, dtype=np.float32)),
    ],
)
def test_vectors_are_stored_at_unit_length(vector: np.ndarray, stored: np.ndarray) -> None:
    with SQLiteStore(":memory:") as store:
        docs = Documents(store, embedder=None)
        texts = (IndexText("t", "x", vector),)
        docs.put(Scope("acme"), [DocumentWrite(("n",), "k", {"t": "x"}, texts=texts)], model="m")
        with store._read(None) as conn:
            [(blob,)] = conn.execute("SELECT vec FROM document_texts").fetchall()
    assert np.allclose(np.frombuffer(blob, dtype=np.float32), stored, atol=1e-6)


def test_a_vector_that_is_not_finite_is_refused() -> None:
    with SQLiteStore(":memory:") as store, pytest.raises(InvalidInput, match="not finite"):
        Documents(store, embedder=None).put(
            Scope("acme"),
            [DocumentWrite(("n",), "k", {"t": "x"}, texts=(
                IndexText("t", "x", np.array([np.inf, 0], dtype=np.float32)),))],
            model="m",
        )  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.floats(), st.integers(-(2**70), 2**70), st.booleans()),
                 min_size=3, max_size=3),
        min_size=1, max_size=4,
    )
)  # fmt: skip
def test_lists_of_numbers_read_as_numpy_reads_them(rows: list[list[object]]) -> None:
    packed = _packed(rows)
    assert packed is not None
    expected = np.asarray(rows, dtype=np.float64)
    assert packed.shape == expected.shape
    assert np.array_equal(packed, expected, equal_nan=True)


def test_what_is_not_a_list_of_number_lists_is_left_to_numpy() -> None:
    assert _packed([[1.0, 2.0], [3.0]]) is None  # ragged
    assert _packed([[1.0, "2"]]) is None
    assert _packed([[1.0, 2**2000]]) is None
    assert _packed([(1.0, 2.0)]) is None
    assert _packed(np.ones((2, 2))) is None
    assert _packed([]) is None
    with pytest.raises(InvalidInput, match="lists of numbers of one length"):
        unit_vectors([[1.0, 2.0], [3.0]], None, "embed")
    with pytest.raises(InvalidInput, match="not finite"):
        unit_vectors([[1.0, float("inf")]], None, "embed")
    assert np.allclose(unit_vectors([[3, 4]], 2, "embed"), [[0.6, 0.8]])
