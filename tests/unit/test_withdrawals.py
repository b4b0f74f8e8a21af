"""Which held fact a withdrawal in other words refers to (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from kenning.longterm.consolidate import names_another, names_part_of, nearest_kin, withdrawn_kin
from kenning.records import USER, Fact, FactDraft, FactStatus, Scope

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _held(attribute: str, value: str = "likes", **kw: object) -> Fact:
    fields: dict[str, object] = {"subject": USER, **kw}
    return Fact(id=attribute, scope=Scope("t", "u", "s"), attribute=attribute, value=value,
                text="", valid_from=AT, **fields)  # type: ignore[arg-type]  # fmt: skip


def _withdrawal(attribute: str, value: str = "") -> FactDraft:
    return FactDraft(subject=USER, attribute=attribute, value=value, text="", revoke=True)


def _kin(draft: FactDraft, held: list[Fact], sims: dict[str, float] | None = None) -> str | None:
    found = withdrawn_kin(draft, held, lambda f: (sims or {}).get(f.id, 0.0), 0.75)
    return None if found is None else found.id


def test_the_withdrawn_thing_naming_part_of_a_held_one_closes_it() -> None:
    held = [_held("preference:jazz music"), _held("preference:blues")]
    assert _kin(_withdrawal("preference:jazz"), held) == "preference:jazz music"
    assert _kin(_withdrawal("pet:a cat"), [_held("pet:two cats")]) == "pet:two cats"
    assert not names_part_of("two kids", "three kids") and not names_part_of("", "jazz")


def test_other_words_close_a_fact_only_when_similar_enough() -> None:
    held = [_held("hobby:jogging"), _held("hobby:swimming")]
    sims = {"hobby:jogging": 0.8, "hobby:swimming": 0.5}
    assert _kin(_withdrawal("hobby:running"), held, sims) == "hobby:jogging"
    assert _kin(_withdrawal("hobby:running"), held, {"hobby:jogging": 0.74}) is None


def test_only_the_same_subject_family_qualifier_and_live_facts_count() -> None:
    draft = _withdrawal("preference:jazz")
    assert _kin(draft, [_held("hobby:jazz music")]) is None
    assert _kin(draft, [_held("preference:jazz music", qualifier="at work")]) is None
    assert _kin(draft, [_held("preference:jazz music", subject="sister")]) is None
    assert _kin(draft, [_held("preference:jazz music", status=FactStatus.SUPERSEDED)]) is None
    asserted = FactDraft(subject=USER, attribute="preference:jazz", value="likes", text="")
    assert withdrawn_kin(asserted, [_held("preference:jazz music")], lambda f: 1.0, 0.75) is None


def test_a_withdrawal_of_a_held_key_is_left_to_that_key() -> None:
    assert _kin(_withdrawal("preference:jazz"), [_held("preference:jazz")]) is None
    # A single-valued key: another wording of the held value is that value.
    employer = [_held("employer", "Google LLC")]
    assert _kin(_withdrawal("employer", "Google"), employer) == "employer"
    assert _kin(_withdrawal("employer", "google llc"), employer) is None
    assert _kin(_withdrawal("employer", "Netflix"), employer) is None


def test_other_names_of_a_closed_set_are_never_the_same_thing() -> None:
    spanish = _withdrawal("language:spanish")
    assert _kin(spanish, [_held("language:portuguese")], {"language:portuguese": 0.9}) is None
    assert _kin(spanish, [_held("language:spanish lessons")]) == "language:spanish lessons"
    vegan = _withdrawal("is_a:vegan")
    assert _kin(vegan, [_held("is_a:vegetarian")], {"is_a:vegetarian": 0.9}) is None
    # other wordings still close by their likeness: "no meat" / "vegetarian"
    meat = _withdrawal("diet:no meat")
    assert _kin(meat, [_held("diet:vegetarian")], {"diet:vegetarian": 0.8}) == "diet:vegetarian"
    assert names_another("french", "no french") is False
    assert names_another("spanish", "portuguese") and not names_another("jazz", "blues")


def test_a_restatement_in_another_name_of_a_closed_set_is_another_fact() -> None:
    learning = FactDraft(subject=USER, attribute="language:portuguese", value="is learning",
                         text="")  # fmt: skip
    held = [_held("language:spanish", "is learning")]
    assert nearest_kin(learning, held, lambda f: 0.95, 0.9) is None
    again = FactDraft(subject=USER, attribute="language:spanish", value="is learning", text="")
    assert nearest_kin(again, held, lambda f: 0.95, 0.9) is not None
