"""Where each row of a search partition sits in its conversation (:class:`Position`), kept as
a sequence that a saved partition restores without building a tuple per row.

A restored partition holds its rows' positions as four arrays mapped from the snapshot; a
search reads the positions of its few hundred candidates only. Building all of them as tuples
at load cost a cold search at 100k events 0.16 s and a Position object per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from sys import intern
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.store.records import Position

__all__ = ["Positions", "saved_positions"]


class Positions:
    """The rows' positions in row order: the restored ones read from their arrays when asked
    for, then those added since (as given)."""

    __slots__ = ("_added", "_asks", "_author", "_base", "_seq", "_session", "_strings")

    def __init__(
        self, arrays: dict[str, npt.NDArray[Any]] | None = None,
        strings: Sequence[str | None] = (),
    ) -> None:  # fmt: skip
        empty = np.zeros(0, dtype=np.int64)
        found = arrays or {}
        self._session = found.get("pos_session", empty)
        self._author = found.get("pos_author", empty)
        self._seq = found.get("pos_seq", empty)
        self._asks = found.get("pos_asks", empty)
        lengths = {len(a) for a in (self._session, self._author, self._seq, self._asks)}
        if len(lengths) != 1:
            raise ValueError("saved positions' arrays differ in length")
        self._base = lengths.pop()
        # The strings are interned as the partition's own would be (ids of one session share).
        self._strings = [intern(s) if s is not None else s for s in strings]
        self._added: list[Position | None] = []

    def __len__(self) -> int:
        return self._base + len(self._added)

    def __getitem__(self, row: int) -> Position | None:
        """The position of *row* (0 ≤ row < len: the partition passes its own row numbers)."""
        if row >= self._base:
            return self._added[row - self._base]
        session = int(self._session[row])
        if session < 0:
            return None
        author = self._strings[int(self._author[row])] or ""
        return Position(self._strings[session], int(self._seq[row]), author, bool(self._asks[row]))

    def head(self, n: int) -> list[Position | None]:
        """The first *n* positions as a list."""
        return [self[row] for row in range(min(n, len(self)))]

    def extend(self, positions: Iterable[Position | None]) -> None:
        self._added.extend(positions)


def saved_positions(
    positions: Sequence[Position | None],
) -> tuple[dict[str, npt.NDArray[Any]], list[str | None]]:
    """Turn positions as arrays: a code into the strings (-1: no position) for the session and
    the author, the sequence number, whether the turn asks; and the strings."""
    strings: dict[str | None, int] = {}
    n = len(positions)
    session = np.full(n, -1, dtype=np.int32)
    writer = np.full(n, -1, dtype=np.int32)
    seq = np.zeros(n, dtype=np.int64)
    asks = np.zeros(n, dtype=np.bool_)
    for i, pos in enumerate(positions):
        if pos is not None:
            session[i] = strings.setdefault(pos.session, len(strings))
            writer[i] = strings.setdefault(pos.author, len(strings))
            seq[i], asks[i] = pos.seq, pos.asks
    arrays: dict[str, npt.NDArray[Any]] = {
        "pos_session": session,
        "pos_author": writer,
        "pos_seq": seq,
        "pos_asks": asks,
    }
    return arrays, list(strings)
