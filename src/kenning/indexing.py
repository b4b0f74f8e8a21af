"""What gets indexed for a record: the text that is embedded, and the chunks a long record is
indexed as (pure)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kenning.records import Event, NewEvent, Role, event_label

__all__ = [
    "CONTEXT_CHARS",
    "IndexedText",
    "chunk_spans",
    "embedding_text",
    "texts_to_embed",
    "with_context",
]

# How much of the preceding turn goes into a turn's embedded text: its end, which is what the
# turn usually answers.
CONTEXT_CHARS = 400


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


@dataclass(frozen=True, slots=True)
class IndexedText:
    """A text embedded for a record: the whole record (``span`` None) or one of its chunks."""

    text: str
    span: tuple[int, int] | None = None


def texts_to_embed(
    event: NewEvent | Event,
    *,
    mode: str,
    previous: str | None = None,
    chunk_chars: int,
) -> list[IndexedText]:
    """What is embedded for *event*: one text, or one per chunk when it is long.

    *previous* is the embedded text of the session's preceding turn when turns are embedded
    with their context (see :func:`with_context`); chunks are embedded on their own.
    """
    spans = chunk_spans(event.content, size=chunk_chars)
    if not spans:
        return [IndexedText(with_context(embedding_text(event, mode), previous))]
    return [
        IndexedText(embedding_text(replace(event, content=event.content[a:b]), mode), (a, b))
        for a, b in spans
    ]
