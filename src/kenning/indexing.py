"""What gets indexed for a record: the text that is embedded, the sentence units a record of
several sentences is embedded as, and the chunks a long record is indexed as (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kenning.records import Event, NewEvent, Role, content_hash, event_label
from kenning.store.records import Chunk

__all__ = [
    "CONTEXT_CHARS",
    "DEFAULT_UNIT_CHARS",
    "IndexPlan",
    "IndexedText",
    "chunk_spans",
    "embedding_text",
    "index_plan",
    "texts_to_embed",
    "unit_spans",
    "with_context",
]

# How much of the preceding turn goes into a turn's embedded text: its end, which is what the
# turn usually answers.
CONTEXT_CHARS = 400
# The shortest sentence unit: shorter sentences join the next one (measured among 25, 60 and
# 120 on the tuning parts of both dev sets; docs/benchmarks.md).
DEFAULT_UNIT_CHARS = 60
# A sentence ends at ". ", "! " or "? " (any whitespace after the mark), or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def embedding_text(event: NewEvent | Event, mode: str) -> str:
    """The text embedded for *event* under *mode* (see ``Settings.embed_text``).

    Prefixing the speaker (and the date) lets a question that names a person or a day match
    the turn's vector, not only its words.
    """
    if mode == "content":
        return event.content
    label = event_label(event) or Role(event.role).value
    text = f"{label}: {event.content}"
    if mode == "speaker_date" and event.at is not None:
        text = f"[{event.at:%Y-%m-%d}] {text}"
    return text


def with_context(text: str, previous: str | None) -> str:
    """*text* followed by the end of the previous turn of its session, marked as such.

    A reply like "Yes, last Tuesday!" carries its meaning in the turn it answers; embedding the
    two together lets a question about that meaning find the reply. The turn's own text comes
    first (measured: better than the context first, docs/benchmarks.md).
    """
    if not previous:
        return text
    if len(previous) > CONTEXT_CHARS:
        previous = "…" + previous[-CONTEXT_CHARS:]
    return f"{text}\n(in reply to) {previous}"


def _cut(text: str, start: int, limit: int) -> int:
    """Where a chunk starting at *start* should end, at most at *limit*: the last paragraph
    break, else sentence end, else whitespace in the second half of the window."""
    if limit >= len(text):
        return len(text)
    floor = start + (limit - start) // 2
    for mark in ("\n\n", "\n", ". ", "? ", "! ", " "):
        at = text.rfind(mark, floor, limit)
        if at >= 0:
            return at + len(mark)
    return limit


def chunk_spans(text: str, *, size: int) -> list[tuple[int, int]]:
    """The ``(start, stop)`` spans a long text is indexed as; ``[]`` when it is short.

    A text longer than twice *size* characters is cut into pieces of at most *size*, at
    paragraph, sentence or word boundaries where there are any; each piece repeats the last
    tenth of the one before, so a phrase across a cut is still found whole.

    >>> chunk_spans("short", size=100)
    []
    >>> chunk_spans("word " * 10, size=10)
    [(0, 10), (10, 20), (20, 30), (30, 40), (40, 50)]
    """
    if len(text) <= 2 * size:
        return []
    overlap = size // 10
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        stop = _cut(text, start, start + size)
        spans.append((start, stop))
        if stop >= len(text):
            break
        nxt = stop - overlap
        space = text.find(" ", nxt, stop)
        start = space + 1 if space >= 0 else nxt
        start = max(start, spans[-1][0] + 1)
    return spans


def unit_spans(text: str, *, min_chars: int) -> list[tuple[int, int]]:
    """The ``(start, stop)`` spans of the sentence units of *text*; ``[]`` when it has one.

    Sentences end at ".", "!" or "?" followed by whitespace, or at a line break. A sentence
    shorter than *min_chars* joins the one after it (the last joins the one before), so a unit
    is a statement, not a fragment like "Thanks!" whose meaning lies in the rest; a text
    shorter than twice *min_chars* is one unit. A unit has no whitespace at either end; the
    whitespace between joined sentences stays in it.

    >>> unit_spans("I moved to Lisbon in May. My new office is near the river.", min_chars=20)
    [(0, 25), (26, 58)]
    >>> unit_spans("Thanks! That works.", min_chars=20)
    []
    """
    breaks = [(end.start(), end.end()) for end in _SENTENCE_END.finditer(text)]
    pieces: list[list[int]] = []
    start = 0
    for stop, after in [*breaks, (len(text), len(text))]:
        piece = text[start:stop]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            pieces.append([start + lead, start + len(piece.rstrip())])
        start = after
    units: list[list[int]] = []
    for span in pieces:
        if units and units[-1][1] - units[-1][0] < min_chars:
            units[-1][1] = span[1]
        else:
            units.append(span)
    if len(units) > 1 and units[-1][1] - units[-1][0] < min_chars:
        last = units.pop()
        units[-1][1] = last[1]
    return [(a, b) for a, b in units] if len(units) > 1 else []


@dataclass(frozen=True, slots=True)
class IndexedText:
    """A text embedded for a record: the whole record (``span`` None), one of its chunks, or
    one of its sentence units. A chunk is its own lexical document (``lexical``); a unit is
    not: the whole record is the lexical document of a record embedded by units."""

    text: str
    span: tuple[int, int] | None = None
    lexical: bool = True


def texts_to_embed(
    event: NewEvent | Event, *, mode: str, previous: str | None = None, chunk_chars: int,
    unit_chars: int = DEFAULT_UNIT_CHARS,
) -> list[IndexedText]:  # fmt: skip
    """What is embedded for *event*: one text, one per chunk when it is long, or one per
    sentence unit (:func:`unit_spans`) when it holds several.

    A long record's chunks and a record's sentence units are embedded on their own. A record
    of several sentences is found by its best-matching unit: a statement made in passing ("By
    the way, my landlord raised the rent to 1,450 EUR") is not drowned by the rest of its
    message.
    *unit_chars* is the shortest unit (0: records are embedded whole, as they are when turns
    are embedded with their context). *previous* is the embedded text of the session's
    preceding turn when turns are embedded with their context (see :func:`with_context`).
    """
    spans, lexical = chunk_spans(event.content, size=chunk_chars), True
    if not spans and unit_chars:
        spans, lexical = unit_spans(event.content, min_chars=unit_chars), False
    if not spans:
        return [IndexedText(with_context(embedding_text(event, mode), previous))]
    return [
        IndexedText(
            embedding_text(replace(event, content=event.content[a:b]), mode), (a, b), lexical
        )
        for a, b in spans
    ]


@dataclass(frozen=True, slots=True)
class IndexPlan:
    """How a record is to be indexed: the hash of its one embedded text (*embed_hash*) or its
    *chunks* (chunks of a long record, or sentence units), and each embedded text by hash."""

    embed_hash: str | None
    chunks: tuple[Chunk, ...]
    texts: dict[str, str]

    def same_rows(self, embed_hash: str | None, chunks: tuple[Chunk, ...]) -> bool:
        """True if a record indexed with *embed_hash* and *chunks* already has these rows."""
        return (self.embed_hash, self.chunks) == (embed_hash, chunks)


def index_plan(
    event: NewEvent | Event, *, mode: str, previous: str | None = None, chunk_chars: int,
    unit_chars: int = DEFAULT_UNIT_CHARS,
) -> IndexPlan:  # fmt: skip
    """The index rows of *event* under these settings (see :func:`texts_to_embed`): what
    ingest writes, and what ``kenning reindex`` compares the stored rows with."""
    indexed = texts_to_embed(
        event, mode=mode, previous=previous, chunk_chars=chunk_chars, unit_chars=unit_chars
    )
    hashes = [content_hash(t.text) for t in indexed]
    chunks = tuple(
        Chunk(t.span[0], t.span[1], h, lexical=t.lexical)
        for h, t in zip(hashes, indexed, strict=True)
        if t.span is not None
    )
    texts = {h: t.text for h, t in zip(hashes, indexed, strict=True)}
    return IndexPlan(None if chunks else hashes[0], chunks, texts)
