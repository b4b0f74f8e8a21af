"""Current values above the turns they replaced (the pure core of kenning.longterm.current)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from kenning.longterm.current import (
    about_the_user,
    current_first,
    newer_first,
    own_first,
    replacements,
)
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


def test_newer_studies_or_things_used_take_the_older_ones_places() -> None:
    def said(fact_id: str, attribute: str, day: int, qualifier: str = "") -> Fact:
        fact = _fact(fact_id, attribute, "uses", FactStatus.ACTIVE, f"t-{fact_id}")
        return replace(fact, qualifier=qualifier, valid_from=AT + timedelta(days=day))

    facts = {f.id: f for f in [
        said("kindle", "uses:kindle", 1), said("turn", "x", 0), said("kobo", "uses:kobo", 40),
        said("jazz", "preference:jazz", 50), said("techno", "preference:techno", 80),
        said("work-mac", "uses:mac", 60, "at work"),
        said("city", "location", 70),
    ]}  # fmt: skip
    hits = [_hit(i, 1.0 - n / 10, "fact") for n, i in enumerate(
        ["kindle", "jazz", "work-mac", "kobo", "city", "techno"])]  # fmt: skip
    out = newer_first(hits, facts)
    # the newer reader takes the older one's place; a taste, another qualifier and a
    # single-valued fact keep theirs, and every hit keeps its score
    assert [h.id for h in out] == ["kobo", "jazz", "work-mac", "kindle", "city", "techno"]
    assert {h.id: h.score for h in out} == {h.id: h.score for h in hits}
    closed = {**facts, "kobo": replace(facts["kobo"], status=FactStatus.SUPERSEDED)}
    assert [h.id for h in newer_first(hits, closed)] == [h.id for h in hits]


def test_a_question_about_the_user_puts_their_own_facts_before_those_about_others() -> None:
    friend = replace(_fact("f-friend", "uses:vespa", "uses", FactStatus.ACTIVE, "t1"),
                     subject="friend")  # fmt: skip
    mine = _fact("f-mine", "uses:bike", "uses", FactStatus.ACTIVE, "t2")
    facts = {f.id: f for f in (friend, mine)}
    hits = [_hit("f-friend", 0.6, "fact"), _hit("turn", 0.5), _hit("f-mine", 0.4, "fact")]
    assert [h.id for h in own_first(hits, facts)] == ["f-mine", "turn", "f-friend"]
    assert about_the_user("how do I get to work?")
    assert about_the_user("What's my favourite film?")
    assert not about_the_user("what does my friend ride?")
    assert not about_the_user("where did she move?")
    assert not about_the_user("the weather in Oslo")
