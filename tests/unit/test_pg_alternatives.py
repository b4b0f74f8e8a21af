"""The store bench's recall of pgvector against exact search, with rows tied in distance."""

from __future__ import annotations

import pytest

from kenning.bench.pg_alternatives import recall_with_ties


def test_a_row_tied_with_the_tenth_distance_counts_as_found() -> None:
    exact = [0.1 * i for i in range(12)]  # 0.0 .. 1.1
    # The index returned another row at the 10th distance (a repeated text): a hit.
    found = [*exact[:9], exact[9]]
    assert recall_with_ties(found, exact) == 1.0


def test_rows_beyond_the_tenth_distance_are_misses() -> None:
    exact = [0.1 * i for i in range(12)]
    found = [*exact[:8], 1.0, 1.1]
    assert recall_with_ties(found, exact) == pytest.approx(0.8)


def test_fewer_rows_than_k() -> None:
    assert recall_with_ties([0.2, 0.3], [0.2, 0.3]) == 1.0
    assert recall_with_ties([0.2, 0.9], [0.2, 0.3]) == 0.5
    assert recall_with_ties([], []) == 1.0
