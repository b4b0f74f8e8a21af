"""The statement reader as the reader tests call it: one user turn read for the user's facts,
with the real spaCy pipeline (loaded once per test process)."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

from kenning.longterm.parsing.parser import SpacyParser
from kenning.longterm.statements import ParsedStatements
from kenning.records import USER, Event, Role, Scope

SAID = datetime(2026, 1, 10, 12, tzinfo=UTC)
Facts = set[tuple[str, str, bool]]


@cache
def _reader() -> ParsedStatements:
    return ParsedStatements(SpacyParser())


def read_facts(text: str) -> Facts:
    """``(attribute, value, revoke)`` of each fact about the user that *text*, a user's turn
    said at :data:`SAID`, states."""
    event = Event(id="e0", scope=Scope("t", "u", "s"), seq=1, role=Role.USER, content=text,
                  at=SAID)  # fmt: skip
    return {(d.attribute, d.value, d.revoke) for d in _reader().read([event]) if d.subject == USER}
