"""What gets indexed for a record: the text that is embedded (pure)."""

from __future__ import annotations

from kenning.records import Event, NewEvent, Role, event_label

__all__ = ["CONTEXT_CHARS", "embedding_text", "with_context"]

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
