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
from kenning.search.documents import Documents, _unit_float32
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
