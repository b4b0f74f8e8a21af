"""The statement reader (real parser) on how people mention and withdraw things in passing:
a partner or child named beside the relation, a withdrawal of a whole attribute, a gerund's
"me" under a withdrawal, a lower-case imperative the tagger reads as a noun. The sentences are
written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kenning.longterm.parsing.parser import SpacyParser
from kenning.longterm.statements import ParsedStatements
from kenning.records import USER, Event, Role, Scope

SAID = datetime(2026, 2, 3, 9, tzinfo=UTC)


def _read(text: str) -> set[tuple[str, str, bool]]:
    event = Event(id="e0", scope=Scope("t", "u", "s"), seq=1, role=Role.USER, content=text,
                  at=SAID)  # fmt: skip
    drafts = ParsedStatements(SpacyParser()).read([event])
    return {(d.attribute, d.value, d.revoke) for d in drafts if d.subject == USER}


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("my girlfriend Aiko is flying in on friday, any date night ideas?",
         {("partner", "girlfriend Aiko", False)}),
        ("Booking a surprise spa day for my husband Marco, 20 years this summer.",
         {("partner", "husband Marco", False)}),
        ("our daughter, Zoe, keeps waking up at 5am.", {("family:daughter zoe", "has", False)}),
        ("my son Felix thinks dinosaurs are the best thing ever",
         {("family:son felix", "has", False)}),
    ],
)  # fmt: skip
def test_a_partner_or_child_named_in_passing_is_the_users(
    text: str, facts: set[tuple[str, str, bool]]
) -> None:
    assert _read(text) == facts


@pytest.mark.parametrize(
    "text",
    ["My ex-husband Marco still calls every week.", "my late wife Dora loved gardening.",
     "My brother Idris moved to Cardiff.", "Is my son Felix too young for judo?",
     "I met my cousin Lea for lunch."],
)  # fmt: skip
def test_a_former_partner_a_sibling_or_a_question_names_no_partner_or_child(text: str) -> None:
    assert not {f for f in _read(text) if f[0] == "partner" or f[0].startswith("family:")}


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("scratch what I told you about my job, the offer fell through",
         {("employer", "", True)}),
        ("Please forget my birthday.", {("age", "", True)}),
        ("ignore what I said about my hometown", {("hometown", "", True)}),
        ("forget the part about me playing chess, that was my dad",
         {("hobby:chess", "does", True)}),
        ("Ignore the bit about us owning a parrot.", {("pet:parrot", "has", True)}),
    ],
)  # fmt: skip
def test_withdrawals_of_a_whole_attribute_or_of_me_doing_something(
    text: str, facts: set[tuple[str, str, bool]]
) -> None:
    assert _read(text) == facts


@pytest.mark.parametrize(
    "text",
    ["my boss hates me working from home", "Help me learning the chords.",
     "scratch that, wrong chat"],
)  # fmt: skip
def test_a_gerund_of_me_outside_a_withdrawal_states_nothing(text: str) -> None:
    assert _read(text) == set()


def test_hay_fever_is_a_condition() -> None:
    assert _read("I get hay fever every May.") | _read("I have hay fever.") >= {
        ("condition:hay fever", "has", False)
    }


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("moved in with my aunt in Galway for the winter", {("location", "Galway", False)}),
        ("I haven't touched my violin in years.", {("hobby:violin", "does", True)}),
        ("barely touched golf for months, work ate my weekends",
         {("hobby:golf", "does", True)}),
        ("Pottery is over for me, I don't do it anymore.", {("hobby:pottery", "does", True)}),
        ("our youngest arrived on monday, so that makes three kids now",
         {("family:three kids", "has", False)}),
        ("a rescue from the shelter, so three cats now", {("pet:three cats", "has", False)}),
    ],
)  # fmt: skip
def test_moves_lapses_withdrawn_its_and_new_counts(
    text: str, facts: set[tuple[str, str, bool]]
) -> None:
    assert _read(text) == facts


@pytest.mark.parametrize(
    "text",
    ["I didn't touch the leftovers.", "I haven't touched the report yet.",
     "my sister has two dogs now", "They have four grandchildren now.",
     "I don't do it anymore."],
)  # fmt: skip
def test_a_short_pause_a_count_of_others_or_an_unnamed_it_withdraws_nothing(text: str) -> None:
    assert _read(text) == set()


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("I've moved to bouldering, my knees thank me", {("hobby:bouldering", "does", False)}),
        ("moved from squash to padel this spring",
         {("hobby:padel", "does", False), ("hobby:squash", "does", True)}),
        ("I wear glasses for reading.", {("uses:glasses", "uses", False)}),
        ("got contact lenses last month", {("uses:contact lenses", "uses", False)}),
        ("We moved to Tallinn in June.", {("location", "Tallinn", False)}),
    ],
)  # fmt: skip
def test_a_move_to_a_pastime_or_a_worn_thing_is_no_move_of_home(
    text: str, facts: set[tuple[str, str, bool]]
) -> None:
    assert _read(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("started a UX research bootcamp last week, loving it",
         {("education:ux research bootcamp", "studies", False)}),
        ("I'm doing the CELTA certificate this spring.",
         {("education:celta certificate", "studies", False)}),
        ("still on my old Kindle, the battery lasts forever",
         {("uses:kindle", "uses", False)}),
        ("Still in Bristol, same flat.", {("location", "Bristol", False)}),
    ],
)  # fmt: skip
def test_studies_begun_and_states_told_with_still(
    text: str, facts: set[tuple[str, str, bool]]
) -> None:
    assert _read(text) == facts


@pytest.mark.parametrize(
    "text",
    ["I started the course yesterday.", "still at the office, ugh",
     "Still on the fence about it, any thoughts?"],
)  # fmt: skip
def test_a_course_pointed_at_or_a_passing_whereabouts_states_nothing(text: str) -> None:
    assert _read(text) == set()


def test_a_thing_of_ones_own_kept_is_still_used() -> None:
    assert _read("I'm keeping my Fiat, it still runs.") == {("uses:fiat", "uses", False)}
    assert _read("I keep kosher.") == {("is_a:kosher", "yes", False)}


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("Sofia and I split up last year, we divorced in March",
         {("relationship status", "divorced", False), ("partner", "", True)}),
        ("my husband and I moved to Valencia in the autumn", {("location", "Valencia", False)}),
        ("We married on a beach in 2019.", {("relationship status", "married", False)}),
    ],
)  # fmt: skip
def test_someone_and_i_speaks_for_the_user_and_a_divorce_ends_the_partner(
    text: str, facts: set[tuple[str, str, bool]]
) -> None:
    assert _read(text) == facts


def test_a_liking_the_tagger_reads_as_an_interjection_is_still_read() -> None:
    assert _read("I really like halloumi.") == {("preference:halloumi", "likes", False)}


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("I'm vegan these days, so please stop offering me cheese boards.",
         {("is_a:vegan", "yes", False)}),
        ("Quick note: I'm allergic to peanuts, so stop adding them to my order.",
         {("allergy:peanuts", "allergic", False)}),
    ],
)  # fmt: skip
def test_a_statement_before_a_request_to_stop_something_holds(
    text: str, facts: set[tuple[str, str, bool]]
) -> None:
    """The parser hangs the statement under "stop" (a ccomp before its head); the "so"
    between them makes the statement the reason for the request, not what is stopped."""
    assert facts <= _read(text)
    assert not {f for f in _read(text) if f[2]}  # nothing withdrawn
