"""Does the statement reader generalise? A development probe of everyday sentences written for
it (``data/reader_probe.jsonl``, :mod:`tests.unit.reader_probe`; not taken from, nor paraphrased
from, the labelled self-statement set), read by the real parser (spaCy's small English
pipeline, part of ``kenning[dev]``).

The probe covers every family the reader knows, with assertions, negations, the past ("used
to", "until"), withdrawals ("no longer", "stopped", "switched from X to Y", "forget that ...",
"scratch that") and sentences that state nothing (questions, plans, other people, chat), in
varied wording: openers, contractions, fragments, lower case, no final stop, emoji.

It is split in two by the SHA-256 of each sentence: the reader is fixed only from misses in
the "fix" half (each sentence a test; the misses left are listed and expected to fail), and
the "check" half measures whether those fixes carry over (one test with a floor on how many it
reads as labelled; its misses are not looked at one by one).
"""

from __future__ import annotations

import pytest

from tests.reading import read_facts
from tests.unit.reader_probe import PROBE, Facts, half

# Misses of the "fix" half that are left: each is expected to fail until the reader reads it.
FIX_HALF_MISSES = frozenset(
    {
        "I switched from Deloitte to KPMG.",  # an employer or a bank? nothing says which
        "I'm a second-year law student.",
        "I love classical music and old movies.",
        "My phone number changed, it's 555-9000 now.",
        "Scratch that, I'm in Lyon not Nice.",  # "Nice" is hung outside the clause
        "Because I live in Kyoto, I bike everywhere.",  # "bike" is read as a pastime
        "I'm not with Anna anymore.",  # with or without entities, a name reads as a company
        "I'm not vegetarian any more, I eat chicken now.",  # "'m" is parsed under "vegetarian"
        "I write code in Go.",  # read as a pastime, "write code"
        "My username is sky_walker.",
    }
)
# How many sentences of the "check" half the reader reads as labelled (a floor: it may rise).
CHECK_HALF_FLOOR = 242


def _fix_cases() -> list[object]:
    return [
        pytest.param(text, facts, id=text[:60],
                     marks=[pytest.mark.xfail(strict=True)] if text in FIX_HALF_MISSES else [])
        for text, facts in PROBE
        if half(text) == "fix"
    ]  # fmt: skip


def test_the_probe_has_both_halves_and_every_sentence_once() -> None:
    texts = [text for text, _ in PROBE]
    assert len(texts) == len(set(texts)) >= 200
    assert {t for t in texts if half(t) == "fix"} >= FIX_HALF_MISSES
    assert {half(t) for t in texts} == {"fix", "check"}


@pytest.mark.parametrize(("text", "facts"), _fix_cases())
def test_fix_half_sentences_are_read_as_labelled(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


# Sentences written after the rules they check (not part of the probe's measure).
@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("I'm learning Italian now - slow going but fun.",
         {("language:italian", "is learning", False)}),
        ("I live in Ghent - lovely city.", {("location", "Ghent", False)}),
        ("I quit my job \u2014 best decision ever.", {("employer", "", True)}),
        ("I've got type 1 diabetes.", {("condition:type 1 diabetes", "has", False)}),
        ("I fired my accountant.", set()),
        ("I got fired last week.", {("employer", "", True)}),
        ("I love the beach we went to.", set()),
        ("I hate the cold.", {("preference:cold", "dislikes", False)}),
        ("I'm turning 30 next week.", set()),
        ("I bought a new e-bike.", {("uses:e-bike", "uses", False)}),
        ("Huge fan of the Lakers.", {("preference:lakers", "likes", False)}),
        ("Really nice weather today.", set()),
        # A statement with a question typed after it, with or without its mark.
        ("I live in Brighton so there are loads of cafes, which ones are safe?",
         {("location", "Brighton", False)}),
        ("I'm allergic to penicillin, what should I tell the dentist",
         {("allergy:penicillin", "allergic", False)}),
        ("Should I move to Oslo, is it expensive?", set()),
        # Occupations are one at a time; identities are among others.
        ("I'm a vet so my evenings are short, I want something quick.",
         {("occupation", "vet", False)}),
        ("I'm assistant manager at a hotel.",
         {("occupation", "assistant manager", False), ("employer", "hotel", False)}),
        ("I'm an introvert.", {("is_a:introvert", "yes", False)}),
        ("I got promoted to shift supervisor!", {("occupation", "shift supervisor", False)}),
        ("got a job as a librarian at the city library",
         {("occupation", "librarian", False)}),
        ("I took a job at Amazon.", {("employer", "Amazon", False)}),
        ("I deliver for DHL now.", {("employer", "DHL", False)}),
        # Announcements, asides and fragments.
        ("update: joined Razorpay!", {("employer", "Razorpay", False)}),
        ("I moved to Leipzig btw, much cheaper.", {("location", "Leipzig", False)}),
        ("living in Melbourne now, the light here is unreal.",
         {("location", "Melbourne", False)}),
        ("we moved back to Poland, we're in Gdansk now.", {("location", "Gdansk", False)}),
        # a pastime taken up in place of another, not a place
        ("I've moved to oil painting.", {("hobby:oil painting", "does", False)}),
        # Withdrawals.
        ("gave up on knitting, it never clicked.", {("hobby:knitting", "does", True)}),
        ("I quit netball.", {("hobby:netball", "does", True)}),
        ("forget what I said about my job.", {("employer", "", True)}),
        ("not vegan anymore, long story", {("is_a:vegan", "yes", True)}),
        ("not doing CrossFit anymore, too many injuries", {("hobby:crossfit", "does", True)}),
        ("I'm not vegetarian anymore, doctor said I needed more iron",
         {("is_a:vegetarian", "yes", True)}),
        ("i'm no longer married, the divorce went through in March",
         {("relationship status", "married", True)}),
        ("I quit Twitter and I feel so much better", {("uses:twitter", "uses", True)}),
        ("I left Microsoft to join a robotics startup",
         {("employer", "Microsoft", True), ("employer", "robotics startup", False)}),
        ("quit the band in October", {("hobby:band", "does", True)}),
        ("I left the choir last spring", {("hobby:choir", "does", True)}),
        ("we rehomed the rabbit", {("pet:rabbit", "has", True)}),
        ("my girlfriend and I broke up, so scrap the plans",
         {("partner", "girlfriend", True)}),
        ("As a paramedic, what's the best shoe for long shifts?",
         {("occupation", "paramedic", False)}),
        ("As a result, I stayed home.", set()),
        ("I'm a Kiwi living in Berlin",
         {("nationality", "Kiwi", False), ("location", "Berlin", False)}),
        ("we finally settled in Rotterdam", {("location", "Rotterdam", False)}),
        ("I have a PS5 and a Switch",
         {("uses:ps5", "uses", False), ("uses:switch", "uses", False)}),
        ("I speak Portuguese and a bit of Italian",
         {("language:portuguese", "speaks", False), ("language:italian", "speaks", False)}),
        ("I'm in a barbershop quartet", {("hobby:barbershop quartet", "does", False)}),
        ("I have a tree nut allergy.", {("allergy:tree nut", "allergic", False)}),
        ("severe peanut allergy here, so no satay please",
         {("allergy:peanut", "allergic", False)}),
        ("I'm Leila, 34, I live in Toronto.",
         {("name", "Leila", False), ("age", "34", False), ("location", "Toronto", False)}),
        ("I traded in the Jeep for a Kia Niro",
         {("uses:jeep", "uses", True), ("uses:kia niro", "uses", False)}),
        ("Joined Deloitte in March as a consultant.",
         {("employer", "Deloitte", False), ("occupation", "consultant", False)}),
        ("Engineer at Bosch, based in Stuttgart.",
         {("employer", "Bosch", False), ("occupation", "engineer", False)}),
        ("Teacher at the school asked me to help.", set()),
        ("I'm not married anymore, so what filing status do I use?",
         {("relationship status", "married", True)}),
        ("I work for the NHS as a physio; can you help me with this?",
         {("employer", "NHS", False), ("occupation", "physio", False)}),
        ("I left Spain last year and now live in Ireland.",
         {("location", "Spain", True), ("location", "Ireland", False)}),
        ("I work nights at an Amazon warehouse.", {("employer", "Amazon warehouse", False)}),
        ("I've got three teenagers and one bathroom.",
         {("family:three teenagers", "has", False)}),
        ("I have a Garmin Forerunner 255.", {("uses:garmin forerunner 255", "uses", False)}),
        ("I have a phone case.", set()),
        ("Gave away my PS5, I just wasn't playing it.", {("uses:ps5", "uses", True)}),
        ("I got rid of my Apple Watch.", {("uses:apple watch", "uses", True)}),
        ("I've moved on from my role at Deliveroo.", {("employer", "Deliveroo", True)}),
        ("Deleted Tinder.", {("uses:tinder", "uses", True)}),
        ("please delete the app from my phone", set()),
        ("Berlin is where I live now, so convert the prices to euros.",
         {("location", "Berlin", False)}),
        ("Deutsche Bahn is who I work for.", {("employer", "Deutsche Bahn", False)}),
        ("Excel is what I use for budgeting.", {("uses:excel", "uses", False)}),
        ("I'm on the data team at Zalando.", {("employer", "Zalando", False)}),
        ("I'm the sous chef at Noma now.",
         {("employer", "Noma", False), ("occupation", "sous chef", False)}),
        ("I'm the manager.", set()),
        ("We're hoping to relocate to Vancouver eventually.", set()),
        ("Hoping to adopt a cat after we move.", set()),
        ("Help me write a short bio: I'm an illustrator.",
         {("occupation", "illustrator", False)}),
        ("I got hired by the City of Toronto as a planner.",
         {("employer", "City of Toronto", False), ("occupation", "planner", False)}),
        ("sold the Vespa, got a little Honda Jazz.",
         {("uses:vespa", "uses", True), ("uses:honda jazz", "uses", False)}),
    ],
)  # fmt: skip
def test_rules_made_from_the_probe_hold_on_new_wordings(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


# Issue 27's everyday wordings, written for the rules of 2026-12-03 (verb classes, attribute
# families, dependency patterns), none taken from a labelled set; with hard negatives beside.
@pytest.mark.parametrize(
    ("text", "facts"),
    [
        # where one is from: nationality nouns, a homeland by name, not a team
        ("I'm a Scot living in London.",
         {("nationality", "Scot", False), ("location", "London", False)}),
        ("I'm a proud Texan.", {("nationality", "Texan", False)}),
        ("I'm from the IT department, calling about your ticket.", set()),
        # medicines, by list or by their generic-name stem, and as a doctor prescribes them
        ("I take insulin twice a day.", {("condition:insulin", "has", False)}),
        ("I'm on blood thinners now.", {("condition:blood thinners", "has", False)}),
        ("I stopped taking metformin.", {("condition:metformin", "has", True)}),
        ("My GP put me on atorvastatin.", {("condition:atorvastatin", "has", False)}),
        ("doctor switched me from amlodipine to losartan",
         {("condition:losartan", "has", False), ("condition:amlodipine", "has", True)}),
        ("I take the bus to work.", set()),
        # habits given up, in their families; a lapse over years
        ("I quit vaping.", {("condition:vaping", "has", True)}),
        ("I haven't smoked in years.", {("condition:smoker", "has", True)}),
        ("I don't drink anymore.", {("diet:drinking", "eats", True)}),
        # languages listed, named as one's own, learned in lessons
        ("I'm bilingual, Spanish and English.",
         {("language:spanish", "speaks", False), ("language:english", "speaks", False)}),
        ("Portuguese is my first language.", {("language:portuguese", "speaks", False)}),
        ("I've been taking Arabic classes.", {("language:arabic", "is learning", False)}),
        ("I sign ASL.", {("language:asl", "speaks", False)}),
        # home, and places typed in lower case
        ("Tokyo is home now.", {("location", "Tokyo", False)}),
        ("Home for me is a tiny studio in Queens now.", {("location", "Queens", False)}),
        ("Home for my parents is Leeds.", set()),
        ("Paris is home to many artists.", set()),
        ("i live in denver these days", {("location", "denver", False)}),
        ("We bought a house in Halifax!", {("location", "Halifax", False)}),
        ("I live with my partner in Leeds.", {("location", "Leeds", False)}),
        ("Our team lives in Slack.", set()),
        # studies: majoring, enrolment, a field at a school
        ("I'm majoring in chemistry.", {("education:chemistry", "studies", False)}),
        ("I'm enrolled in a coding bootcamp.", {("education:coding bootcamp", "studies", False)}),
        ("I'm doing engineering at Delft University.",
         {("education:engineering", "studies", False),
          ("education:delft university", "studies", False)}),
        ("I'm studying law at King's College.",
         {("education:law", "studies", False), ("education:king's college", "studies", False)}),
        ("I graduated in nursing last year.", {("education:nursing", "studies", False)}),
        # work: the workplace a relative clause names, new hires, fields done, lines of work
        ("The bakery I work at closed for the holidays.", {("employer", "bakery", False)}),
        ("I'm the newest hire at Canva.", {("employer", "Canva", False)}),
        ("I got poached by Atlassian.", {("employer", "Atlassian", False)}),
        ("I do marketing at Google.",
         {("occupation", "marketing", False), ("employer", "Google", False)}),
        ("I'm a Berlin-based photographer.",
         {("occupation", "photographer", False), ("location", "Berlin", False)}),
        ("I'm a stay-at-home mom.", {("occupation", "stay-at-home mom", False)}),
        ("I moved to Google as a designer.",
         {("employer", "Google", False), ("occupation", "designer", False)}),
        ("I moved to Berlin for a new job.", {("location", "Berlin", False)}),
        ("I'm no longer nursing.", {("occupation", "nursing", True)}),
        ("I'm done being a teacher.", {("occupation", "teacher", True)}),
        ("I lost my job last month.", {("employer", "", True)}),
        ("Employer's SAP, I'm in procurement.", {("employer", "SAP", False)}),
        ("new number: 555-0199", {("phone number", "555-0199", False)}),
        ("Address is required for the form.", set()),
        # diets, food that makes one ill, pets kept
        ("I follow a Mediterranean diet.", {("diet:mediterranean diet", "eats", False)}),
        ("I do intermittent fasting.", {("diet:intermittent fasting", "eats", False)}),
        ("I only eat halal meat.", {("is_a:halal", "yes", False)}),
        ("I'm cutting out sugar.", {("diet:no sugar", "eats", False)}),
        ("I'm off sugar now.", {("diet:sugar", "eats", True)}),
        ("I moved from keto to paleo.", {("is_a:paleo", "yes", False), ("is_a:keto", "yes", True)}),
        ("Shellfish gives me hives.", {("allergy:shellfish", "allergic", False)}),
        ("This song makes me sick.", set()),
        ("I'm gluten intolerant.", {("allergy:gluten", "allergic", False)}),
        ("I keep chickens.", {("pet:chickens", "has", False)}),
        # pastimes, and what is none
        ("I knit a lot.", {("hobby:knit", "does", False)}),
        ("I'm part of a running club.", {("hobby:running club", "does", False)}),
        ("I do all my banking online.", set()),
        ("I play a key role in the project.", set()),
        ("I run late a lot.", set()),
        ("I sold three paintings at the fair.", set()),
        # relationships: a partner named when one is seeing someone, splits
        ("so I've been seeing someone for a few months, her name's Priya, she's great",
         {("partner", "Priya", False)}),
        ("I'm seeing Tom tonight.", set()),
        ("Tom and I broke up.", {("partner", "Tom", True)}),
        ("My wife and I separated.", {("partner", "wife", True)}),
        ("I'm widowed.", {("relationship status", "widowed", False)}),
        # withdrawals in other wordings; things let fall are not given up
        ("I uninstalled Instagram.", {("uses:instagram", "uses", True)}),
        ("I'm through with Spotify.", {("uses:spotify", "uses", True)}),
        ("I lost interest in chess.", {("hobby:chess", "does", True)}),
        ("I dropped my evening class.", {("education:evening class", "studies", True)}),
        ("I dropped my phone in the lake.", set()),
        # things named in passing: used for a habit, bought; a child told by their age
        ("I record podcasts with a Shure SM7B.", {("uses:shure sm7b", "uses", False)}),
        ("I bought a Steam Deck last month.", {("uses:steam deck", "uses", False)}),
        ("I play tennis with a friend.", {("hobby:tennis", "does", False)}),
        ("We have a 3-year-old and a newborn.",
         {("family:3-year-old", "has", False), ("family:newborn", "has", False)}),
        ("My bike was stolen last night.", {("uses:bike", "uses", True)}),
        ("My wallet got stolen.", set()),
        # more withdrawals: "not ... now", memberships, unsubscribing, coming off, ending things
        ("I'm not a vegetarian now.", {("is_a:vegetarian", "yes", True)}),
        ("I've cancelled my gym membership.", {("hobby:gym", "does", True)}),
        ("I unsubscribed from Netflix.", {("uses:netflix", "uses", True)}),
        ("I came off the pill last year.", {("condition:pill", "has", True)}),
        ("I'm out of the band.", {("hobby:band", "does", True)}),
        ("I ended things with Jake.", {("partner", "Jake", True)}),
        ("I left my husband.", {("partner", "husband", True)}),
        ("I come from Ohio.", {("hometown", "Ohio", False)}),
        ("I come from a big family.", set()),
        ("I'm not hungry now.", set()),
        # passing states and idioms are not who one is
        ("I'm a mess today, sorry.", set()),
        ("I'm a big believer in second chances.", set()),
        ("I'm at Gate 12.", set()),
        ("I'm on Saturdays.", set()),
    ],
)  # fmt: skip
def test_everyday_wordings_written_for_issue_27(text: str, facts: Facts) -> None:
    assert read_facts(text) == facts


def test_check_half_is_read_as_labelled_at_least_as_often_as_measured() -> None:
    check = [(text, facts) for text, facts in PROBE if half(text) == "check"]
    read = sum(read_facts(text) == facts for text, facts in check)
    assert read >= CHECK_HALF_FLOOR, f"{read} of {len(check)} read as labelled"
