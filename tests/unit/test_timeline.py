"""The fold of one fact key's statements (pure): by the time things were said."""

from __future__ import annotations

from datetime import UTC, datetime

from kenning.longterm.timeline import Said, fold, lay_out
from kenning.records import Fact, FactSource, FactStatus, Scope


def _at(month: int) -> datetime:
    return datetime(2026, month, 1, tzinfo=UTC)


def _shape(statements: list[Said], *, multi: bool = False) -> list[tuple[object, ...]]:
    return [
        (s.value, s.start.month, s.end and s.end.month, s.status.value, s.mentions)
        for s in fold(statements, multi=multi)
    ]


def test_a_value_said_again_reinforces_and_another_supersedes() -> None:
    said = [Said(_at(1), "Lisbon"), Said(_at(3), "lisbon "), Said(_at(5), "Porto")]
    assert _shape(said) == [("Lisbon", 1, 5, "superseded", 2), ("Porto", 5, None, "active", 1)]


def test_the_order_of_reading_does_not_matter() -> None:
    said = [Said(_at(5), "Porto"), Said(_at(1), "Lisbon"), Said(_at(7), "Porto", revoke=True),
            Said(_at(9), "Porto")]  # fmt: skip
    expected = _shape(sorted(said, key=lambda s: s.at))
    assert _shape(said) == _shape(list(reversed(said))) == expected
    assert expected == [
        ("Lisbon", 1, 5, "superseded", 1), ("Porto", 5, 7, "revoked", 1),
        ("Porto", 9, None, "active", 1),
    ]  # fmt: skip


def test_a_withdrawal_that_finds_nothing_is_kept_until_its_value_comes() -> None:
    assert _shape([Said(_at(4), "jazz", revoke=True)]) == [("jazz", 4, 4, "revoked", 0)]
    both = [Said(_at(4), "jazz", revoke=True), Said(_at(2), "jazz")]
    assert _shape(both) == [("jazz", 2, 4, "revoked", 1)]


def test_a_multi_valued_key_withdraws_whatever_holds() -> None:
    said = [Said(_at(1), "loves"), Said(_at(2), "likes", revoke=True)]
    assert _shape(said, multi=True) == [("loves", 1, 2, "revoked", 1)]
    assert _shape(said) == [("loves", 1, None, "active", 1), ("likes", 2, 2, "revoked", 0)]


def test_an_inferred_value_never_replaces_a_stated_one() -> None:
    said = [Said(_at(1), "Netflix"), Said(_at(2), "Google", origin=FactSource.INFERRED)]
    assert _shape(said) == [("Netflix", 1, None, "active", 1)]


def test_a_refolded_history_keeps_its_rows() -> None:
    scope = Scope("acme", "dana", "s1")
    lisbon = Fact(id="f1", scope=scope, subject="user", attribute="location", value="Lisbon",
                  text="", valid_from=_at(1))  # fmt: skip
    said = [Said(_at(1), "Lisbon", row="f1", template=lisbon), Said(_at(3), "Porto")]
    layout = lay_out(fold(said), [lisbon], new_id=lambda: "f2")
    assert [(f.id, s.status) for f, s in layout.kept] == [("f1", FactStatus.SUPERSEDED)]
    assert [(i, s.value) for i, s in layout.added] == [("f2", "Porto")]
    assert layout.dropped == []
