"""Partition rows as both backends' partition queries return them.

Each row: rowid, id, user, session, role, kind, at (epoch seconds), vector, text, label, chunk
number (NULL for a whole record), then the turn before it (see :mod:`kenning.store.replies`),
then the record's own sequence number (NULL outside a session's sequence) and whether its
whole text holds a question mark.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from sys import intern
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.store.partition import IndexRows
from kenning.store.records import Position
from kenning.store.replies import Question, apply_replies, author

__all__ = ["index_rows", "turn_position"]

F32 = npt.NDArray[np.float32]


def index_rows(
    rows: Sequence[Sequence[Any]],
    dimension: int,
    *,
    stack: Callable[[list[Any]], F32],
    reply_weight: float,
    fetch: Callable[[list[int]], dict[int, Question]],
) -> IndexRows:
    """The partition's :class:`IndexRows` for *rows*: *stack* turns the backend's vector values
    into a matrix; answers are mixed with their questions by *reply_weight* (*fetch* reads a
    question that is not among the rows)."""
    has_vector = np.array([r[7] is not None for r in rows], dtype=np.bool_)
    weights = None
    if any(r[10] is not None for r in rows):
        # The chunks of one record share its place in the session centroid.
        per_record = Counter(r[0] for r in rows)
        weights = np.array([1.0 / per_record[r[0]] for r in rows], dtype=np.float32)
    matrix = np.zeros((len(rows), dimension), dtype=np.float32)
    if dimension and has_vector.any():
        matrix[has_vector] = stack([r[7] for r in rows if r[7] is not None])
    replies = apply_replies(rows, matrix, has_vector, reply_weight, fetch)
    return IndexRows(
        ids=[r[1] for r in rows],
        rowids=np.array([r[0] for r in rows], dtype=np.int64),
        vectors=matrix,
        has_vector=has_vector if dimension else np.zeros(len(rows), dtype=np.bool_),
        texts=[r[8] for r in rows],
        labels=[r[9] for r in rows],
        users=[r[2] for r in rows],
        sessions=[r[3] for r in rows],
        roles=[r[4] for r in rows],
        kinds=[r[5] for r in rows],
        ats=np.array([r[6] for r in rows], dtype=np.float64),
        weights=weights,
        before=replies.before,
        questions=replies.questions,
        positions=[turn_position(r[3], r[15], r[9], r[4], r[16]) for r in rows],
    )


def turn_position(
    session: str | None, seq: int | None, label: str | None, role: str, asks: object
) -> Position | None:
    """A record's place in its conversation from its stored columns (None outside a session's
    sequence). Its strings are interned: a session's turns share one session id and a few
    authors."""
    if seq is None or session is None:
        return None
    return Position(intern(session), int(seq), intern(author(label, role)), bool(asks))
