"""Current values above the turns they replaced (the pure core of kenning.longterm.current)."""

from __future__ import annotations

from datetime import UTC, datetime

from kenning.longterm.current import current_first, replacements
from kenning.records import Fact, FactStatus, Role, Scope
from kenning.search.hits import Hit

AT = datetime(2026, 1, 1, tzinfo=UTC)
USER = Scope("t", "u")


def _hit(hit_id: str, score: float, kind: str = "event") -> Hit:
    return Hit(hit_id, kind, score, {}, hit_id, Role.USER, Scope("t", "u", "s"), 1, AT)


def _fact(fact_id: str, attribute: str, value: str, status: FactStatus, *sources: str) -> Fact:
    return Fact(fact_id, USER, "user", attribute, value, f"{attribute} {value}", status=status,
                sources=sources, source_event_id=sources[0])  # fmt: skip


def test_a_turn_with_only_stale_values_gets_its_current_value_from_outside_the_hits() -> None:
    hits = [_hit("lisbon-turn", 0.8), _hit("other", 0.7)]
    out = current_first(hits, {"lisbon-turn": "porto"}, {"porto": _hit("porto", 0, "fact")}, k=3)
    assert [(h.id, h.score) for h in out] == [("porto", 0.8), ("lisbon-turn", 0.8), ("other", 0.7)]


def test_a_mixed_turn_is_passed_only_by_a_current_value_the_search_found() -> None:
    found = {"porto": _hit("porto", 0, "fact")}
    hits = [_hit("lisbon-and-fish", 0.8), _hit("other", 0.7)]
    out = current_first(hits, {"lisbon-and-fish": "porto"}, found, k=3, mixed={"lisbon-and-fish"})
    assert [h.id for h in out] == ["lisbon-and-fish", "other"]
    hits.append(_hit("porto", 0.2, "fact"))
    out = current_first(hits, {"lisbon-and-fish": "porto"}, found, k=3, mixed={"lisbon-and-fish"})
    assert [h.id for h in out] == ["porto", "lisbon-and-fish", "other"]


def test_replacements_marks_a_turn_that_also_states_something_still_true() -> None:
    said = [
        _fact("f-lisbon", "location", "Lisbon", FactStatus.SUPERSEDED, "t1"),
        _fact("f-jazz", "preference:jazz", "likes", FactStatus.ACTIVE, "t1"),
        _fact("f-berlin", "location", "Berlin", FactStatus.SUPERSEDED, "t0"),
    ]
    porto = _fact("f-porto", "location", "Porto", FactStatus.ACTIVE, "t2")
    replaced, mixed = replacements(["t0", "t1"], said, {porto.key: porto}, facts=True)
    assert replaced == {"t0": "f-porto", "t1": "f-porto"}
    assert mixed == {"t1"}
    replaced, _ = replacements(["t0", "t1"], said, {porto.key: porto}, facts=False)
    assert replaced == {"t0": "t2", "t1": "t2"}
