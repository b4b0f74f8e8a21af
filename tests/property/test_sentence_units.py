"""Sentence units (kenning.indexing.unit_spans) and rows without a lexical document.

A text's units cover every sentence of it once and in order, each unit (when there are
several) at least the shortest allowed; a lexical index with document-less rows scores every
query exactly as one built without them, removed rows included."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.indexing import unit_spans
from kenning.store.lexical_index import LexicalIndex

_SENTENCE = st.text(alphabet="abc xyz,", min_size=1, max_size=40)
_END = st.sampled_from([". ", "! ", "? ", "\n", "\n\n", ".", "... ", "?! "])


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(_SENTENCE, _END), min_size=1, max_size=8))
    return "".join(s + e for s, e in parts)


@settings(max_examples=400, deadline=None)
@given(texts(), st.integers(1, 80))
def test_units_cover_the_text_in_order_and_are_never_fragments(text: str, min_chars: int) -> None:
    spans = unit_spans(text, min_chars=min_chars)
    if not spans:
        return
    assert len(spans) >= 2
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(b <= c for (_, b), (c, _) in pairwise(spans))
    assert all(b - a >= min_chars for a, b in spans)
    assert all(text[a:b].strip() == text[a:b] for a, b in spans)
    # Nothing but sentence breaks lies between units: every word is in exactly one unit.
    assert text.split() == " ".join(text[a:b] for a, b in spans).split()


def test_a_short_text_is_one_unit_and_a_statement_in_passing_is_its_own() -> None:
    assert unit_spans("Thanks! That works for me.", min_chars=60) == []
    assert unit_spans("One line only, however long it is without a break", min_chars=10) == []
    text = (
        "I'm looking for some tips on decluttering my wardrobe before the move. "
        "By the way, I just got back from my cousin's wedding in Lisbon."
    )
    [first, (c, d)] = unit_spans(text, min_chars=60)
    assert first[0] == 0
    assert text[c:d] == "By the way, I just got back from my cousin's wedding in Lisbon."


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from("abcd"), max_size=5)), max_size=30),
    st.lists(st.integers(0, 29), max_size=8),
    st.lists(st.sampled_from("abcd"), min_size=1, max_size=3),
)
def test_rows_without_a_document_change_no_score(
    rows: list[tuple[bool, list[str]]], removed: list[int], query: list[str]
) -> None:
    with_docless, plain = LexicalIndex(), LexicalIndex()
    kept: list[int] = []  # positions in with_docless of the rows that have a document
    for has_text, words in rows:
        text = " ".join(words)
        with_docless.add([text if has_text else None], [""])
        if has_text:
            kept.append(len(with_docless) - 1)
            plain.add([text], [""])
    gone = [i for i in dict.fromkeys(removed) if i < len(with_docless)]
    with_docless.remove(np.array(gone, dtype=np.int64))
    plain.remove(np.array([kept.index(i) for i in gone if i in kept], dtype=np.int64))
    a, b = with_docless.scores(query), plain.scores(query)
    if b is None:
        assert a is None or not a.any()
        return
    assert a is not None
    np.testing.assert_allclose(a[kept], b, rtol=1e-6)
    docless = np.setdiff1d(np.arange(len(with_docless)), kept)
    assert not a[docless].any()
