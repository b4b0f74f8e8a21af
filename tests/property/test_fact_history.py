"""A user's facts do not depend on the order their history was read in.

The same statements, each dated by when it was said, are added in a random order, one event at
a time, and read for facts after each; the facts that end up current, and every fact's history
(value, status, validity, what replaced it, how often it was said), are those of reading them
in time order. On real SQLite and real PostgreSQL, with the real model (near duplicates).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning import Memory, Scope, Settings
from kenning.longterm.service import LongTermSettings
from kenning.records import FactStatus
from tests.conftest import MemoEmbedder, open_store

USER = Scope("acme", "dana")
# Facts are read in the foreground after each event, in the order the events were added.
FOREGROUND = Settings(longterm=LongTermSettings(extract=False))


def _at(year: int, month: int) -> datetime:
    return datetime(year, month, 1, 12, tzinfo=UTC)


# What Dana said over two years, each with when she said it.
SAID = (
    ("I work at Netflix.", _at(2024, 1)),
    ("I love jazz.", _at(2024, 3)),
    ("I live in Lisbon.", _at(2024, 6)),
    ("I work at Google.", _at(2025, 2)),
    ("Forget that I like jazz.", _at(2025, 4)),
    ("I live in Lisbon.", _at(2025, 5)),
    ("I moved to Porto.", _at(2026, 2)),
    ("I love jazz.", _at(2026, 3)),
    ("I live in Porto.", _at(2026, 4)),
)

History = set[tuple[object, ...]]


def _history(memory: Memory) -> History:
    """Every fact of the user, with what replaced it by value instead of by id."""
    facts = memory.store.facts(USER, statuses=None)
    value_of = {f.id: f.value for f in facts}
    return {
        (f.attribute, f.value, f.status.value, f.valid_from, f.valid_to,
         value_of.get(f.superseded_by or ""), f.reinforced, len(f.sources))
        for f in facts
    }  # fmt: skip


def _read(memory: Memory, order: list[int]) -> History:
    for n, i in enumerate(order):
        text, at = SAID[i]
        memory.add_events(Scope("acme", "dana", f"s{n}"), [{"role": "user", "content": text,
                                                            "at": at}])  # fmt: skip
        memory.facts.extract_all()
    return _history(memory)


def _current(history: History) -> set[tuple[object, object]]:
    return {(h[0], h[1]) for h in history if h[2] == FactStatus.ACTIVE.value}


@pytest.fixture(scope="module")
def in_time_order(real_embedder: MemoEmbedder, tmp_path_factory: pytest.TempPathFactory) -> History:
    store = open_store("sqlite-memory", tmp_path_factory.mktemp("order"))
    with Memory(store, embedder=real_embedder, settings=FOREGROUND) as memory:
        return _read(memory, list(range(len(SAID))))


def test_the_history_read_in_time_order(in_time_order: History) -> None:
    assert _current(in_time_order) == {
        ("employer", "Google"), ("location", "Porto"), ("preference:jazz", "loves"),
    }  # fmt: skip
    lisbon = [h for h in in_time_order if h[1] == "Lisbon"]
    assert lisbon == [("location", "Lisbon", "superseded", _at(2024, 6), _at(2026, 2), "Porto",
                       2, 2)]  # fmt: skip
    jazz = sorted((h for h in in_time_order if h[0] == "preference:jazz"), key=lambda h: h[3])
    assert [(h[2], h[3], h[4]) for h in jazz] == [
        ("revoked", _at(2024, 3), _at(2025, 4)), ("active", _at(2026, 3), None),
    ]  # fmt: skip


@pytest.mark.parametrize("backend", ["sqlite-memory", "postgresql"])
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(order=st.permutations(list(range(len(SAID)))))
def test_any_order_of_reading_gives_the_same_history(
    backend: str,
    order: list[int],
    in_time_order: History,
    real_embedder: MemoEmbedder,
    tmp_path: Path,
) -> None:
    store = open_store(backend, tmp_path)
    with Memory(store, embedder=real_embedder, settings=FOREGROUND) as memory:
        assert _read(memory, order) == in_time_order
