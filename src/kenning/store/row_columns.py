"""Per-row columns of a search partition that a snapshot restores without a Python object per
row: each row's record id and where it sits in its conversation (:class:`Position`).

A restored partition holds them as arrays mapped from the snapshot; a search reads those of
its few hundred candidates only. Building them all at load (a tuple and a string per row, the
ids through the snapshot's JSON header) cost a cold search at 100k events about 0.2 s, and
held an object per row for the life of the process.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from sys import intern
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.store.records import Position

__all__ = ["Positions", "RowIds", "saved_ids", "saved_positions"]


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


class RowIds:
    """The rows' record ids in row order: the restored ones decoded from the snapshot's UTF-8
    bytes when asked for, then those added since."""

    __slots__ = ("_added", "_base", "_bytes", "_ends")

    def __init__(self, arrays: dict[str, npt.NDArray[Any]] | None = None) -> None:
        found = arrays or {}
        self._bytes = found.get("id_bytes", np.zeros(0, dtype=np.uint8))
        self._ends = found.get("id_ends", np.zeros(0, dtype=np.int64))
        self._base = len(self._ends)
        if self._base and int(self._ends[-1]) != len(self._bytes):
            raise ValueError("saved ids' ends do not match their bytes")
        self._added: list[str] = []

    def __len__(self) -> int:
        return self._base + len(self._added)

    def __getitem__(self, row: int) -> str:
        """The id of *row* (0 ≤ row < len: the partition passes its own row numbers)."""
        if row >= self._base:
            return self._added[row - self._base]
        start = int(self._ends[row - 1]) if row else 0
        return self._bytes[start : int(self._ends[row])].tobytes().decode()

    def head(self, n: int) -> list[str]:
        """The first *n* ids as a list."""
        return [self[row] for row in range(min(n, len(self)))]

    def extend(self, ids: Iterable[str]) -> None:
        self._added.extend(ids)


def saved_ids(ids: Sequence[str]) -> dict[str, npt.NDArray[Any]]:
    """Record ids as arrays: their UTF-8 bytes end to end, and where each one ends."""
    encoded = [i.encode() for i in ids]
    return {
        "id_bytes": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "id_ends": np.cumsum([len(e) for e in encoded], dtype=np.int64),
    }
