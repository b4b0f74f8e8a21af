"""What gets indexed for a record: the text that is embedded (pure)."""

from __future__ import annotations

from kenning.records import NewEvent, Role, event_label

__all__ = ["embedding_text"]


def embedding_text(event: NewEvent, mode: str) -> str:
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
