"""The answer-and-question mix of kenning.store.replies: what a mixed row scores, and which rows
of a partition query are mixed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kenning.store.lexical_index import BM25_B, BM25_K1, LexicalIndex, _idf
from kenning.store.replies import (
    QUESTION_TERM_WEIGHT,
    Question,
    apply_replies,
    author,
    check_reply_weight,
    mix_replies,
)
from kenning.text import stem

_VEC = arrays(np.float32, 8, elements=st.floats(-1, 1, width=32)).filter(
    lambda v: float(np.linalg.norm(v)) > 1e-2
)


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


@settings(max_examples=200, deadline=None)
@given(own=_VEC, before=_VEC, query=_VEC, weight=st.floats(0.05, 4.0))
def test_a_mixed_row_scores_its_own_and_the_question_s_cosine(
    own: np.ndarray, before: np.ndarray, query: np.ndarray, weight: float
) -> None:
    v, b, q = _unit(own), _unit(before), _unit(query)
    rows = np.stack([v, v])
    mix_replies(rows, b[None, :], [1], weight)
    assert rows[0] == pytest.approx(v)  # rows not named stay as they were
    assert float(np.linalg.norm(rows[1])) == pytest.approx(1.0, abs=1e-5)
    norm = math.sqrt(max(1 + weight**2 + 2 * weight * float(v @ b), 0.0))
    if norm < 1e-3:
        return  # the question is the answer's opposite: nothing is left to point anywhere
    expected = (float(q @ v) + weight * float(q @ b)) / norm
    assert float(rows[1] @ q) == pytest.approx(expected, abs=1e-4)


def _row(
    rowid: int, author_label: str, before: tuple[int, str, bool] | None, chunk: int | None = None
) -> list[object]:
    """A partition query row: rowid 0, role 4, label 9, chunk 10, the turn before at 11-14."""
    row: list[object] = [rowid, f"id{rowid}", "u", "s", "user", "event", 0.0, b"", f"t{rowid}"]
    row += [author_label, chunk]
    if before is None:
        return [*row, None, None, None, None]
    b_rowid, b_label, asks = before
    return [*row, b_rowid, b_label, "user", asks]


def test_only_an_answer_to_someone_else_s_question_is_mixed() -> None:
    e = np.eye(4, dtype=np.float32)
    rows = [
        _row(1, "Ann", None),  # nothing before it
        _row(2, "Bob", (1, "Ann", True)),  # answers Ann's question
        _row(3, "Bob", (2, "Bob", True)),  # goes on after its own question
        _row(4, "Ann", (3, "Bob", False)),  # replies to a statement
        _row(5, "Ann", (9, "Bob", True)),  # answers a question read earlier: fetched
        _row(6, "Bob", (8, "Ann", True)),  # its question has no vector: none fetched
    ]
    vectors = np.stack([e[0], e[1], e[1], e[1], e[2], e[2]])
    has_vector = np.ones(len(rows), dtype=np.bool_)
    asked: list[list[int]] = []

    def fetch(rowids: list[int]) -> dict[int, Question]:
        asked.append(rowids)
        return {9: Question(e[3], "read before?")}

    replies = apply_replies(rows, vectors, has_vector, 0.7, fetch)
    assert replies.before.tolist() == [-1, 1, -1, -1, 9, -1]
    assert replies.questions == [None, "t1", None, None, "read before?", None]
    assert asked == [[8, 9]]  # one read, for the questions not among the rows
    assert vectors[1] == pytest.approx(_unit(e[1] + 0.7 * e[0]))
    assert vectors[4] == pytest.approx(_unit(e[2] + 0.7 * e[3]))
    assert (vectors[[2, 3]] == e[1]).all() and (vectors[5] == e[2]).all()


def test_a_question_is_mixed_in_as_it_was_read_not_as_mixed() -> None:
    e = np.eye(3, dtype=np.float32)
    # Bob answers Ann's question with a question, which Ann answers: Ann's answer takes Bob's
    # question as read, not Bob's question already pulled toward Ann's.
    rows = [
        _row(1, "Ann", None),
        _row(2, "Bob", (1, "Ann", True)),
        _row(3, "Ann", (2, "Bob", True)),
    ]
    vectors = e.copy()
    apply_replies(rows, vectors, np.ones(3, dtype=np.bool_), 1.0, lambda ids: {})
    assert vectors[2] == pytest.approx(_unit(e[2] + e[1]))
    assert vectors[1] == pytest.approx(_unit(e[1] + e[0]))


def test_no_weight_mixes_nothing_and_reads_nothing() -> None:
    rows = [_row(1, "Ann", None), _row(2, "Bob", (1, "Ann", True))]
    vectors = np.eye(2, dtype=np.float32)

    def fetch(rowids: list[int]) -> dict[int, Question]:
        raise AssertionError("nothing to read")

    replies = apply_replies(rows, vectors, np.ones(2, dtype=np.bool_), 0.0, fetch)
    assert replies.before.tolist() == [-1, -1] and replies.questions == [None, None]
    assert (vectors == np.eye(2)).all()


def test_author_is_the_label_else_the_role() -> None:
    assert author("Ann", "user") == "Ann"
    assert author("", "assistant") == "assistant"
    assert author(None, "tool") == "tool"


@pytest.mark.parametrize("weight", [-0.1, 4.01, float("nan"), float("inf"), True, "0.5"])
def test_a_weight_outside_0_to_4_is_refused(weight: object) -> None:
    with pytest.raises(ValueError):
        check_reply_weight(weight)  # type: ignore[arg-type]
    assert check_reply_weight(0) == 0.0
    assert check_reply_weight(4) == 4.0


def test_an_answer_holds_the_question_s_words_at_the_set_weight() -> None:
    index = LexicalIndex()
    index.add(
        ["did you visit the Louvre?", "yes, last Tuesday!", "yes, last Tuesday!"],
        ["", "", ""],
        [None, "Did you visit the Louvre? Yes?", None],
    )
    term = stem("louvre")
    scores = index.scores([term])
    assert scores is not None
    assert scores[2] == 0.0  # the same answer without its question
    # BM25 of the answer with tf = QUESTION_TERM_WEIGHT and its own length (3 words of 11).
    idf = _idf(3, 2)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * 3 / (11 / 3))
    tf = QUESTION_TERM_WEIGHT
    assert scores[1] == pytest.approx(idf * tf * (BM25_K1 + 1) / (tf + norm) / idf, rel=1e-5)
    # A word the answer has already ("yes") is not counted again.
    yes = index.scores([stem("yes")])
    assert yes is not None and yes[1] == pytest.approx(yes[2])
