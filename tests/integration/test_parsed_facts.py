"""Facts read by parsing what users say, end to end: events in, current facts and profile out
(issue 27's moves and withdrawals in everyday wording), on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenning import Memory, Scope
from kenning.records import FactStatus
from tests.pg import PG_URL, fresh_postgres

T0 = datetime(2026, 1, 5, 9, tzinfo=UTC)
SAM = Scope("acme", "sam")


@pytest.fixture(params=["sqlite", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Memory:
    if request.param == "postgresql":
        fresh_postgres()
        return Memory.open(PG_URL, embedder=None)
    return Memory.open(tmp_path / "parsed.db", embedder=None)


def _said(memory: Memory, session: str, text: str, *, days: int) -> None:
    turn = {"role": "user", "content": text, "at": T0 + timedelta(days=days)}
    memory.add_events(Scope("acme", "sam", session), [turn])
    assert memory.wait_for_facts(60)


def _current(memory: Memory) -> dict[str, str]:
    return {f.attribute: f.value for f in memory.facts.list(SAM)}


def test_moves_told_after_openers_replace_the_old_city(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I live in Berlin and I work at Siemens as an engineer.", days=0)
        assert _current(memory) == {
            "location": "Berlin", "employer": "Siemens", "occupation": "engineer"}  # fmt: skip
        _said(memory, "s2", "Big news: I moved to Lisbon last month.", days=40)
        assert _current(memory)["location"] == "Lisbon"
        _said(memory, "s3", "Hello again, it's Sam. Quick update: I moved to Porto last week.",
              days=80)  # fmt: skip
        current = _current(memory)
        assert (current["location"], current["name"]) == ("Porto", "Sam")
        assert memory.facts.profile(SAM).biography["location"] == "Porto"
        history = [f for f in memory.facts.list(SAM, include_closed=True)
                   if f.attribute == "location"]  # fmt: skip
        assert {(f.value, f.status) for f in history} == {
            ("Berlin", FactStatus.SUPERSEDED), ("Lisbon", FactStatus.SUPERSEDED),
            ("Porto", FactStatus.ACTIVE)}  # fmt: skip
        # "last week" dates the move: it held from a week before it was told.
        [porto] = [f for f in history if f.value == "Porto"]
        assert porto.valid_from == T0 + timedelta(days=80 - 7)


def test_a_withdrawal_in_other_words_closes_the_fact(memory: Memory) -> None:
    with memory:
        _said(memory, "s1", "I love jazz. I play the guitar.", days=0)
        assert set(_current(memory)) == {"preference:jazz", "hobby:guitar"}
        _said(memory, "s2", "I don't listen to jazz anymore", days=3)
        assert set(_current(memory)) == {"hobby:guitar"}
        [jazz] = [f for f in memory.facts.list(SAM, include_closed=True)
                  if f.attribute == "preference:jazz"]  # fmt: skip
        assert jazz.status is FactStatus.REVOKED
