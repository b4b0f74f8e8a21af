"""Event ids sort by creation in a process, so search's id tie-break keeps write order."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from kenning.records import core
from kenning.records.core import new_event_id

_FORMAT = re.compile(r"ev_[0-9a-f]{32}")


def test_ids_are_unique_and_sort_in_the_order_they_were_made() -> None:
    ids = [new_event_id() for _ in range(50_000)]  # many share a millisecond
    assert all(_FORMAT.fullmatch(i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert sorted(ids) == ids


def _clock(values: list[int]) -> Iterator[int]:
    yield from values
    while True:
        yield values[-1]


def test_a_clock_stepped_back_or_a_crowded_millisecond_never_reorders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ms = 1_000_000_000_000
    steps = iter(_clock([ms * 1_000_000, (ms - 5_000) * 1_000_000]))
    monkeypatch.setattr(core, "_ID_CLOCK", core._IdClock())
    monkeypatch.setattr(core.time, "time_ns", lambda: next(steps))
    # The clock goes back 5 s after the first id, then stands still for 70,000 more: the
    # sequence runs out once and borrows the next millisecond.
    ids = [new_event_id() for _ in range(70_001)]
    assert sorted(ids) == ids
    assert len(set(ids)) == len(ids)
    assert ids[-1][3:15] == f"{ms + 1:012x}"
