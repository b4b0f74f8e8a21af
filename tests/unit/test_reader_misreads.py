"""Misreadings of the statement reader fixed from sentences written for them (not taken from,
nor paraphrased from, a labelled set), each beside hard negatives, read by the real parser
(spaCy's small English pipeline, part of ``kenning[dev]``)."""

from __future__ import annotations

import pytest

from kenning.longterm.statements import candidate_sentences
from tests.reading import Facts, read_facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # quitting or leaving a pastime, whatever the tagger makes of its name
        ("I quit badminton.", {("hobby:badminton", "does", True)}),
        ("I've quit yoga for good.", {("hobby:yoga", "does", True)}),
        ("I left the choir in March.", {("hobby:choir", "does", True)}),
        ("I quit Google.", {("employer", "Google", True)}),
        ("I quit my job.", {("employer", "", True)}),
    ],
)  # fmt: skip
def test_withdrawals(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # "switched from X to Y" where the parser hangs "to Y" on X; where, when named
        ("I switched from teaching to UX design.",
         {("occupation", "UX design", False), ("occupation", "teaching", True)}),
        ("I switched from nursing to research at Pfizer.",
         {("occupation", "research", False), ("occupation", "nursing", True),
          ("employer", "Pfizer", False)}),
        ("I switched from iPhone to Android.",
         {("uses:android", "uses", False), ("uses:iphone", "uses", True)}),
        # an agent noun with what it works on is a line of work; without one, who one is
        ("I'm a dog walker.", {("occupation", "dog walker", False)}),
        ("I work as a house painter.", {("occupation", "house painter", False)}),
        ("Cabinet maker here, what finish for oak?", {("occupation", "Cabinet maker", False)}),
        ("I'm a hard worker.", {("is_a:hard worker", "yes", False)}),
        ("I'm a dog lover.", {("is_a:dog lover", "yes", False)}),
        # a pastime taken up, however the parser hangs the gerund; not an offer taken up
        ("Since I took up climbing my hands are wrecked.", {("hobby:climbing", "does", False)}),
        ("I took up the cello.", {("hobby:cello", "does", False)}),
        ("I took up the offer.", set()),
        ("I've taken up the challenge.", set()),
        # a job told only as new names no occupation
        ("I got a new job.", set()),
        ("I got a nursing job.", {("occupation", "nursing job", False)}),
    ],
)  # fmt: skip
def test_roles_and_pastimes(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a line of work as the bare object of "work"
        ("I work sales.", {("occupation", "sales", False)}),
        ("I work construction, mostly roofing.", {("occupation", "construction", False)}),
        ("I work retail at Walmart.",
         {("occupation", "retail", False), ("employer", "Walmart", False)}),
        ("I work nights.", set()),
        ("I work hard.", set()),
        ("I work the sales floor.", set()),
        ("Do you work retail?", set()),
    ],
)  # fmt: skip
def test_work_with_a_bare_field(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


def test_a_full_stop_typed_without_its_space_ends_a_sentence() -> None:
    assert candidate_sentences("I moved to Lisbon.I love it here.") == [
        "I moved to Lisbon.", "I love it here."]  # fmt: skip
    assert candidate_sentences("Big news!I got a job at Stripe.") == ["I got a job at Stripe."]
    assert candidate_sentences("I write Node.js at work.") == ["I write Node.js at work."]
    assert candidate_sentences("I live near St.Mary's.") == ["I live near St.Mary's."]
    assert read_facts("Quick update: we moved to Porto.My wife loves it.") == {
        ("location", "Porto", False)}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a sentence-final stop the tokenizer keeps on an abbreviation
        ("I dropped out of my PhD.", {("education:phd", "studies", True)}),
        ("I moved to the U.S.", {("location", "U.S", False)}),
        # a second allergen whose first word the tagger took for an adjective
        ("I'm allergic to penicillin and bee stings.",
         {("allergy:penicillin", "allergic", False), ("allergy:bee stings", "allergic", False)}),
        ("I'm allergic to shellfish and very annoyed.", {("allergy:shellfish", "allergic", False)}),
        # "my partner and I split": the noun and "I" the verb's subject, not a root of its own
        ("My wife and I split up in March.", {("partner", "wife", True)}),
        ("My sister and I went vegan.", {("is_a:vegan", "yes", False)}),
        # the speaker among others: "me and X"
        ("Me and my sister live in Cork.", {("location", "Cork", False)}),
        ("Help me and my wife plan a trip.", set()),
        # "go" + the kind of an activity, whole
        ("We go ballroom dancing on Thursdays.", {("hobby:ballroom dancing", "does", False)}),
        ("I go fly fishing most weekends.", {("hobby:fly fishing", "does", False)}),
        ("I often go swimming.", {("hobby:swimming", "does", False)}),
        ("We go camping every summer.", {("hobby:camping", "does", False)}),
        ("I go home feeling tired.", set()),
        ("I'm going shopping tomorrow.", set()),
    ],
)  # fmt: skip
def test_misparses_read_through(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # "Being X, ...?": the speaker's state, said to frame a question
        ("Being allergic to penicillin, what antibiotics are safe?",
         {("allergy:penicillin", "allergic", False)}),
        ("Being vegan, where do I get B12?", {("is_a:vegan", "yes", False)}),
        ("Being honest, what do you think?", set()),
        # "I'm out doing X" told as a habit, not of the moment
        ("On Sundays I'm out cycling with friends.", {("hobby:cycling", "does", False)}),
        ("I'm out running most mornings.", {("hobby:running", "does", False)}),
        ("I'm out shopping, call me later.", set()),
        # a place among siblings counts them
        ("I'm the eldest of three sisters.", {("family:three sisters", "has", False)}),
        ("I'm the middle child of four siblings.", {("family:four siblings", "has", False)}),
        ("I'm the youngest of three kids.", set()),
    ],
)  # fmt: skip
def test_states_and_habits_told_in_passing(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a pastime told by what it does for the speaker, or as part of them
        ("Knitting keeps me calm in the evenings.", {("hobby:knitting", "does", False)}),
        ("Yoga helps me unwind.", {("hobby:yoga", "does", False)}),
        ("Work keeps me busy.", set()),
        ("Swimming helps my back.", set()),
        ("Painting is a big part of my life.", {("hobby:painting", "does", False)}),
        ("Cooking's a huge part of me.", {("hobby:cooking", "does", False)}),
        ("Family is a big part of my life.", set()),
        ("The meeting is part of my routine.", set()),
    ],
)  # fmt: skip
def test_pastimes_told_by_what_they_are_to_the_speaker(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a pet named by a participle the parser took for a clause of its own
        ("We have a golden retriever called Max.", {("pet:golden retriever", "has", False)}),
        ("We adopted a rescue greyhound called Pip.", {("pet:rescue greyhound", "has", False)}),
        ("I have a friend called Jo.", set()),
        # a home rented; a car rented for a trip says nothing
        ("We're renting a flat in Glasgow now.", {("location", "Glasgow", False)}),
        ("We're renting a car for the trip.", set()),
        # the degree one graduated with
        ("I graduated from Leeds with a history degree.",
         {("education:leeds", "studies", False), ("education:history degree", "studies", False)}),
        # the language, without how well
        ("I speak fluent German.", {("language:german", "speaks", False)}),
        # a role named with a workplace begun
        ("I just started at Spotify as a data engineer.",
         {("employer", "Spotify", False), ("occupation", "data engineer", False)}),
        # "X isn't my thing": a dislike; "not my passion anymore": withdrawn
        ("Horror movies aren't my thing.", {("preference:horror movies", "dislikes", False)}),
        ("Golf is not my passion anymore.", {("hobby:golf", "does", True)}),
        ("That isn't my problem.", set()),
    ],
)  # fmt: skip
def test_everyday_statements_written_for_the_reader(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # a partner no longer seen; a plan to see someone is nothing
        ("I'm not seeing Tom anymore.", {("partner", "Tom", True)}),
        ("I'm seeing Tom tonight.", set()),
        ("I'm not seeing Tom tonight.", set()),
        # "after all" corrects what was said
        ("I'm not allergic to nuts after all.", {("allergy:nuts", "allergic", True)}),
        ("I'm a nurse after all.", {("occupation", "nurse", False)}),
        # a sport or a competition followed, and no longer
        ("I follow cricket closely.", {("preference:cricket", "likes", False)}),
        ("I don't follow the Premier League anymore.",
         {("preference:premier league", "likes", True)}),
        ("I follow her on Instagram.", set()),
        ("I follow the recipe.", set()),
        # an account deleted is the thing it is of
        ("I deleted my Twitter account.", {("uses:twitter", "uses", True)}),
        # a contact detail that no longer works
        ("My email doesn't work anymore.", {("email", "", True)}),
        ("My old email doesn't work anymore.", set()),
        ("My old number 555-0133 is dead.", {("phone number", "555-0133", True)}),
        ("My phone doesn't work anymore.", set()),
        ("My laptop is old.", set()),
    ],
)  # fmt: skip
def test_withdrawals_in_more_wordings(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # "going" with where it goes; nowhere named is nothing
        ("I love going to concerts.", {("preference:going to concerts", "loves", False)}),
        ("I hate going to the dentist.",
         {("preference:going to the dentist", "dislikes", False)}),
        ("I love going.", set()),
        # "a lot" says how much, whatever adverb follows; a comparison is no amount
        ("I've been painting a lot lately.", {("hobby:painting", "does", False)}),
        # a pastime picked up by name; not milk, nor one's kids
        ("I picked up the guitar again last month.", {("hobby:guitar", "does", False)}),
        ("I picked up milk.", set()),
        ("I picked up my kids from school.", set()),
        # back in a place named, now; "back in 2010" is the past
        ("I'm back in Leeds now.", {("location", "Leeds", False)}),
        ("I'll be back in London next week.", set()),
        ("Back in 2010 I lived in Rome.", set()),
        ("I was back in Leeds for Christmas.", set()),
    ],
)  # fmt: skip
def test_pastimes_and_places_in_more_wordings(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # "Name's Dev": a self-introduction; not a name talked about
        ("Name's Dev, by the way.", {("name", "Dev", False)}),
        ("The name is misleading.", set()),
        ("The name's not important.", set()),
        # one's job told by where it is; not what it is like
        ("My new job is with Shopify.", {("employer", "Shopify", False)}),
        ("My job is at the office today.", set()),
        ("My job is stressful.", set()),
        # one's own home told by where it is
        ("Our new place is in Hackney.", {("location", "Hackney", False)}),
        ("My flat is in Leith.", {("location", "Leith", False)}),
        ("My parents' house is in York.", set()),
        ("My place is in chaos.", set()),
        ("Our office is in Berlin.", set()),
        # studies done as one's own ("doing my PhD"), the field without what hangs on it
        ("I'm doing my PhD in chemistry.", {("education:phd in chemistry", "studies", False)}),
        # (a school named only by its initials is not read as one)
        ("I'm doing my PhD in chemistry at UCL.",
         {("education:phd in chemistry", "studies", False)}),
        ("I'm doing my taxes.", set()),
    ],
)  # fmt: skip
def test_homes_and_studies_of_ones_own(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts
