"""Statements told in fragments, as people chat: the subject left out, a discourse opener
typed in lower case before the clause, a fact finished in a second sentence without a verb.
Sentences written for this work (none taken from, nor paraphrased from, a labelled set), each
rule beside hard negatives, read by the real parser (spaCy's small English pipeline, part of
``kenning[dev]``)."""

from __future__ import annotations

import pytest

from kenning.longterm.parsing.fragments import speaker_restored
from kenning.longterm.parsing.parser import SpacyParser
from kenning.longterm.statements import candidate_sentences
from tests.reading import Facts, read_facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a verb of state told without its subject is the speaker's
        ("Live in Seoul, work remotely for a US company",
         {("location", "Seoul", False), ("employer", "US company", False)}),
        ("Work remotely for a German startup.", {("employer", "German startup", False)}),
        ("Love hiking on weekends", {("preference:hiking", "loves", False)}),
        ("Really love Korean food.", {("preference:korean food", "loves", False)}),
        ("Don't like olives.", {("preference:olives", "dislikes", False)}),
        ("Speak French and German, learning Italian.",
         {("language:french", "speaks", False), ("language:german", "speaks", False),
          ("language:italian", "is learning", False)}),
        ("Rent a flat in Hackney.", {("location", "Hackney", False)}),
        ("Love hiking on weekends, any trail tips?", {("preference:hiking", "loves", False)}),
        # a verb of habit, with its mark of habit
        ("Play tennis on weekends.", {("hobby:tennis", "does", False)}),
        # changes told in the past were read before, and still are
        ("Moved to Denver last spring.", {("location", "Denver", False)}),
        ("Started a new job at Shopify!", {("employer", "Shopify", False)}),
        # a trip is no home
        ("Just got back from Japan", set()),
        ("Got back from Lisbon last night, exhausted.", set()),
        # requests and imperatives addressed to the assistant
        ("Tell me about Seoul", set()),
        ("Find flights to Denver", set()),
        ("Remind me to call mom", set()),
        ("Help me write a cover letter", set()),
        ("Play some jazz", set()),
        ("Play me something relaxing.", set()),
        ("Use bullet points please.", set()),
        ("Speak to me in French.", set()),
        ("Love you!", set()),
        ("Love this song!", set()),
        # questions, and words that are not the verb
        ("Live in Seoul?", set()),
        ("Work from home or the office, which is better?", set()),
        ("Live music at the Fox tonight.", set()),
        ("Work is crazy this week.", set()),
        ("Study tips for finals.", set()),
        ("Like I said, the meeting is at 3.", set()),
        ("Like most people, my mom hates spiders.", set()),
        ("Love is blind.", set()),
        ("Live and learn.", set()),
        ("Run the numbers for me.", set()),
        ("Eat more vegetables, the doctor says.", set()),
        ("Love the new update, thanks!", set()),
        # about someone named before, or in the third person
        ("My parents retired last year. Live in Spain now.", set()),
        ("My brother is great. Works at Google.", set()),
        ("Lives in Seoul.", set()),
    ],
)  # fmt: skip
def test_a_subject_left_out(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a gerund told without its "I'm" is read as with it, plans and events included
        ("doing keto these days, any snack ideas?", {("is_a:keto", "yes", False)}),
        ("Recovering from a torn ligament, walking with a cane.",
         {("condition:torn ligament", "has", False)}),
        ("Learning Korean these days.", {("language:korean", "is learning", False)}),
        ("Playing bass in a covers band these days.", {("hobby:bass", "does", False)}),
        ("Thinking of moving to Denver.", set()),
        ("Going to Paris next week.", set()),
        ("Looking for a new job.", set()),
        ("Reading a great book about Rome.", set()),
        ("Meeting at 3 tomorrow.", set()),
        ("Making pasta tonight, any tips?", set()),
        # a gerund that is a subject, and nouns in -ing
        ("Cooking is my passion.", {("hobby:cooking", "does", False)}),
        ("Running keeps me sane.", {("hobby:running", "does", False)}),
        ("Morning! Quick question.", set()),
        ("Wedding was lovely.", set()),
        ("Something came up.", set()),
        # about someone named before
        ("My sister is pregnant. Expecting twins in May.", set()),
    ],
)  # fmt: skip
def test_a_gerund_without_its_subject(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("fyi i moved to Seattle", {("location", "Seattle", False)}),
        # a place typed in lower case after a verb of moving, which the parser took for a verb
        ("btw we relocated to denver", {("location", "denver", False)}),
        ("i moved to portland last year", {("location", "portland", False)}),
        ("i moved to study", set()),
        ("i moved to help my mum", set()),
        ("btw im vegan now", {("is_a:vegan", "yes", False)}),
        ("tbh i work at a bakery", {("employer", "bakery", False)}),
        ("ok so i moved to Austin", {("location", "Austin", False)}),
        ("lol my name is Sam", {("name", "Sam", False)}),
        ("ngl ive been learning Spanish", {("language:spanish", "is learning", False)}),
        # openers before a sentence told without its subject
        ("Btw moved to Denver last month", {("location", "Denver", False)}),
        ("FYI just moved to Denver", {("location", "Denver", False)}),
        ("Tbh living in Berlin now", {("location", "Berlin", False)}),
        ("Ok so not vegan anymore", {("is_a:vegan", "yes", True)}),
        ("update: not vegan anymore", {("is_a:vegan", "yes", True)}),
        ("lol love hiking on weekends", {("preference:hiking", "loves", False)}),
        # a soft opener that is no opener, and a hedge that stays one
        ("so tired of my job", set()),
        ("btw can you find flights to Denver", set()),
        ("fyi tell me about Seoul", set()),
        ("K-pop is my thing.", {("hobby:k-pop", "does", False)}),
    ],
)  # fmt: skip
def test_discourse_openers(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


def test_openers_are_left_out_before_the_parse() -> None:
    assert candidate_sentences("fyi i moved to Seattle") == ["I moved to Seattle."]
    assert candidate_sentences("btw love hiking on weekends") == ["I love hiking on weekends."]
    assert candidate_sentences("so tired of my job") == ["so tired of my job."]
    assert candidate_sentences("Random House is my employer.") == ["Random House is my employer."]
    assert candidate_sentences("random but i moved to Austin") == ["I moved to Austin."]


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("I started uni! Engineering at Monash.",
         {("education:engineering", "studies", False), ("education:monash", "studies", False)}),
        ("I went back to school. Nursing at Deakin.",
         {("education:nursing", "studies", False), ("education:deakin", "studies", False)}),
        ("I finally changed jobs. Designer at a small agency now.",
         {("occupation", "Designer", False), ("employer", "small agency", False)}),
        ("I got a new job! Nurse at the Royal Infirmary.",
         {("occupation", "Nurse", False), ("employer", "Royal Infirmary", False)}),
        ("We moved! Tiny flat in Hackney.", {("location", "Hackney", False)}),
        # the fragment does not fit the family, asks, has a verb, or follows no such statement
        ("I started uni! Party at Jake's tonight.", set()),
        ("I finally changed jobs. Coffee at 3?", set()),
        ("I changed jobs. Lunch at Nando's to celebrate.", set()),
        ("I started uni! Mum cried at the gate.", set()),
        ("My sister started uni. Engineering at Monash.", set()),
        ("I love my course. Engineering at Monash.", set()),
        ("We moved to Leeds! Dinner in Hackney first.", {("location", "Leeds", False)}),
        ("I didn't change jobs. Designer at a small agency.", set()),
        ("Can you help? Designer at a small agency.", set()),
    ],
)  # fmt: skip
def test_a_fact_finished_in_the_next_sentence(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


def test_the_restored_subject_must_be_the_verbs() -> None:
    parser = SpacyParser()
    told, asked, habit = parser.parse(
        ["I live in Seoul.", "I tell me about Seoul.", "I play some jazz."]
    )
    assert speaker_restored(told)
    assert not speaker_restored(asked)
    assert not speaker_restored(habit)
