"""An answer is indexed with the question it answers.

"Yes, last Tuesday!" carries its meaning in the question before it. When a turn follows a turn
of its session that someone else wrote and that asks something (holds a question mark), the
partition scores it by ``normalize(v + w · v_before)``: the direction of its own text, pulled
toward the question. A reply to a statement is left alone: "That sounds lovely" after a fact
would only come to look like the fact (measured: mixing every reply cost the recall suite 3 of
its 200 questions, the question-only rule none).

The answer's lexical row also holds the question's words it lacks, each at
:data:`QUESTION_TERM_WEIGHT` of an occurrence, so "when did they visit the Louvre" finds the
answer by its words too.

A turn embedded by sentence units (:mod:`kenning.indexing`) takes part on both sides: each of an
answer's units is pulled toward the question, and a question's vector is the direction of its
units together (their unit vectors summed, then normalised). A long record indexed as chunks
takes no part.

The stored vectors stay the embeddings of each text alone (a text is embedded once, and erasing
a turn removes its vector), so the mix is made where a partition is built, and made again when
the question is erased. Measured on LoCoMo and LongMemEval in ``docs/benchmarks.md`` ("An
answer indexed with the question it answers").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_REPLY_WEIGHT",
    "QUESTION_TERM_WEIGHT",
    "Question",
    "Replies",
    "apply_replies",
    "author",
    "check_reply_weight",
    "mix_replies",
    "questions",
]

F32 = npt.NDArray[np.float32]

# Chosen on LoCoMo's tuning part among 0.3, 0.5, 0.7 and 1.0 (docs/benchmarks.md).
DEFAULT_REPLY_WEIGHT = 0.7
# What each of the question's words (those the answer lacks) adds to the answer's lexical term
# frequency; chosen on LoCoMo's tuning part among 0.15, 0.3, 0.5 and 1.0 (docs/benchmarks.md).
QUESTION_TERM_WEIGHT = 0.5


class Question(NamedTuple):
    """A question as an answer's row needs it: its vector and its text."""

    vector: F32
    text: str


class Replies(NamedTuple):
    """Per partition row: the rowid of the question mixed in (-1: none) and its text."""

    before: npt.NDArray[np.int64]
    questions: list[str | None]


def check_reply_weight(weight: float) -> float:
    """*weight* if it can weigh a question in its answer's vector (0 turns the mix off)."""
    if not isinstance(weight, int | float) or isinstance(weight, bool) or not 0 <= weight <= 4:
        raise ValueError("reply weight must be a number from 0 to 4")
    return float(weight)


def author(label: str | None, role: str) -> str:
    """Who wrote a row: its label (speaker, name or tool), else its role."""
    return label or role


def mix_replies(
    vectors: F32,
    before: F32,
    replies: Sequence[int] | npt.NDArray[np.intp],
    weight: float,
) -> None:
    """Pull the rows *replies* of *vectors* toward the matching rows of *before*, in place:
    each becomes ``normalize(v + weight · b)`` with both sides taken at unit length."""
    if weight <= 0 or len(replies) == 0:
        return
    index = np.asarray(replies, dtype=np.intp)
    own = _unit(vectors[index])
    mixed = own + np.float32(weight) * _unit(before)
    vectors[index] = _unit(mixed)


def questions(rows: Sequence[tuple[int, F32, str]]) -> dict[int, Question]:
    """Questions by rowid from ``(rowid, vector, text)`` rows: one per whole record, or one per
    sentence unit of a record (its vector is then their directions summed, normalised)."""
    grouped: dict[int, tuple[list[F32], str]] = {}
    for rowid, vector, text in rows:
        grouped.setdefault(rowid, ([], text))[0].append(vector)
    return {
        rowid: Question(vectors[0] if len(vectors) == 1 else _direction(vectors), text)
        for rowid, (vectors, text) in grouped.items()
    }


def _direction(vectors: Sequence[F32]) -> F32:
    """The unit vector of the sum of *vectors* taken at unit length."""
    summed: F32 = _unit(np.stack(vectors)).sum(axis=0)
    norm = float(np.linalg.norm(summed))
    return summed / np.float32(norm) if norm > 0 else summed


def apply_replies(
    rows: Sequence[Sequence[Any]],
    vectors: F32,
    has_vector: npt.NDArray[np.bool_],
    weight: float,
    fetch: Callable[[list[int]], dict[int, Question]],
) -> Replies:
    """Mix each answer among partition *rows* with the question it answers (its vector in
    place, see :func:`mix_replies`); return which question each row took, and its text (the
    lexical index adds its words to the answer's, :data:`QUESTION_TERM_WEIGHT`).

    Both backends' partition queries give a row's own rowid, role, text, label and chunk
    number at 0, 4, 8, 9 and 10, then the turn before it at 11-14 (rowid, label, role, whether
    it holds a question mark; NULL when the row is a chunk of a long record or the turn just
    before it is one, or is no event). A question is read from its own rows among *rows* (a
    partition load reads the turns of a session together; a record embedded by sentence units
    has a row per unit, the first holding its text), else by *fetch* (rowid -> question;
    absent: none).
    """
    before = np.full(len(rows), -1, dtype=np.int64)
    texts: list[str | None] = [None] * len(rows)
    if weight <= 0:
        return Replies(before, texts)
    vectored = has_vector.tolist()  # a list reads faster than numpy scalars, row by row
    answers = [
        j
        for j, r in enumerate(rows)
        if vectored[j]
        and r[11] is not None
        and r[14]
        and author(r[12], r[13]) != author(r[9], r[4])
    ]
    if not answers:
        return Replies(before, texts)
    asked = {int(rows[j][11]) for j in answers}
    # Copied before any row is mixed; a unit without text (not the first) adds its vector.
    own = [(j, r) for j, r in enumerate(rows) if r[0] in asked and vectored[j]]
    first = {r[0]: r[8] for _, r in own if r[8] is not None}
    here = questions([(r[0], vectors[j].copy(), first.get(r[0], "")) for j, r in own])
    fetched = fetch(sorted(asked - here.keys())) if asked - here.keys() else {}
    mixed, toward = [], []
    for j in answers:
        rowid = int(rows[j][11])
        question = here.get(rowid) or fetched.get(rowid)
        if question is None:
            continue
        mixed.append(j)
        toward.append(question.vector)
        before[j] = rowid
        texts[j] = question.text
    if mixed:
        mix_replies(vectors, np.stack(toward), mixed, weight)
    return Replies(before, texts)


def _unit(matrix: F32) -> F32:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: F32 = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return out
