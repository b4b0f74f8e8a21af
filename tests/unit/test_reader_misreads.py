"""Misreadings of the statement reader fixed from sentences written for them (not taken from,
nor paraphrased from, a labelled set), each beside hard negatives, read by the real parser
(spaCy's small English pipeline, part of ``kenning[dev]``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kenning.longterm.parsing.parser import SpacyParser
from kenning.longterm.statements import ParsedStatements
from kenning.records import USER, Event, Role, Scope

SAID = datetime(2026, 1, 10, 12, tzinfo=UTC)
Facts = set[tuple[str, str, bool]]

_READER: list[ParsedStatements] = []


def _read(text: str) -> Facts:
    if not _READER:
        _READER.append(ParsedStatements(SpacyParser()))
    event = Event(id="e0", scope=Scope("t", "u", "s"), seq=1, role=Role.USER, content=text,
                  at=SAID)  # fmt: skip
    return {(d.attribute, d.value, d.revoke) for d in _READER[0].read([event]) if d.subject == USER}


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # quitting or leaving a pastime, whatever the tagger makes of its name
        ("I quit badminton.", {("hobby:badminton", "does", True)}),
        ("I've quit yoga for good.", {("hobby:yoga", "does", True)}),
        ("I left the choir in March.", {("hobby:choir", "does", True)}),
        ("I quit Google.", {("employer", "Google", True)}),
        ("I quit my job.", {("employer", "", True)}),
    ],
)  # fmt: skip
def test_withdrawals(text: str, facts: Facts) -> None:
    assert _read(text) == facts
