"""Does the statement reader generalise? A development probe of everyday sentences written for
it (not taken from, nor paraphrased from, the labelled self-statement set), read by the real
parser (spaCy's small English pipeline, part of ``kenning[dev]``).

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

import hashlib
from datetime import UTC, datetime

import pytest

from kenning.longterm.parsing.parser import SpacyParser
from kenning.longterm.statements import ParsedStatements
from kenning.records import USER, Event, Role, Scope

SAID = datetime(2026, 1, 10, 12, tzinfo=UTC)
Facts = set[tuple[str, str, bool]]

# (sentence, the facts about the speaker it states: (attribute, value, revoke)), in kenning's
# attribute names (see kenning.longterm.parsing.reader).
PROBE: list[tuple[str, Facts]] = [
    ("so yeah, I live in Leeds these days", {("location", "Leeds", False)}),
    ("Currently based in Nairobi.", {("location", "Nairobi", False)}),
    ("we live just outside Utrecht", {("location", "Utrecht", False)}),
    ("I've been living in Montreal for about six years now.", {("location", "Montreal", False)}),
    ("Oh btw I moved to Denver in the spring", {("location", "Denver", False)}),
    ("Home is Glasgow for me now.", {("location", "Glasgow", False)}),
    ("I no longer live in Phoenix.", {("location", "Phoenix", True)}),
    ("Moved out of Boston two years ago, I'm in Austin now.",
     {("location", "Austin", False), ("location", "Boston", True)}),
    ("I used to live in Tokyo.", set()),
    ("I lived in Madrid until 2019.", set()),
    ("We relocated from Dublin to Galway.",
     {("location", "Dublin", True), ("location", "Galway", False)}),
    ("i live in hamburg", {("location", "hamburg", False)}),
    ("Settled in Perth after years of travelling 🙂", {("location", "Perth", False)}),
    ("I don't live in Chicago anymore.", {("location", "Chicago", True)}),
    ("Honestly, I reside in Cape Town.", {("location", "Cape Town", False)}),
    ("My family lives in Manila but I live in Singapore.", {("location", "Singapore", False)}),
    ("I work for Spotify.", {("employer", "Spotify", False)}),
    ("These days I'm at Shopify as a product manager.",
     {("employer", "Shopify", False), ("occupation", "product manager", False)}),
    ("I'm a nurse.", {("is_a:nurse", "yes", False)}),
    ("i'm a high school teacher", {("is_a:high school teacher", "yes", False)}),
    ("I work as a paralegal at a small law firm.",
     {("employer", "small law firm", False), ("occupation", "paralegal", False)}),
    ("Just started a new job at Deutsche Bank!", {("employer", "Deutsche Bank", False)}),
    ("I left Microsoft in March.", {("employer", "Microsoft", True)}),
    ("I worked at IBM until last year.", set()),
    ("I used to be an accountant.", set()),
    ("I no longer work at Amazon.", {("employer", "Amazon", True)}),
    ("I'm not at Oracle anymore.", {("employer", "Oracle", True)}),
    ("Got hired at Pfizer last month", {("employer", "Pfizer", False)}),
    ("I'm an electrician by trade.", {("is_a:electrician", "yes", False)}),
    ("I'm a freelance photographer.", {("is_a:freelance photographer", "yes", False)}),
    ("I switched from Deloitte to KPMG.",
     {("employer", "Deloitte", True), ("employer", "KPMG", False)}),
    ("Work-wise, I'm a data analyst.", {("is_a:data analyst", "yes", False)}),
    ("I'm a software engineer and I work at Atlassian.",
     {("employer", "Atlassian", False), ("is_a:software engineer", "yes", False)}),
    ("Quit my job at the bank last week.", {("employer", "bank", True)}),
    ("I'm retired now.", {("occupation", "retired", False)}),
    ("I'm a stay-at-home dad.", {("is_a:stay-at-home dad", "yes", False)}),
    ("I study chemistry at McGill.",
     {("education:chemistry", "studies", False), ("education:mcgill", "studies", False)}),
    ("I'm doing a master's in economics.", {("education:master's in economics", "studies", False)}),
    ("I'm a second-year law student.", {("is_a:law student", "yes", False)}),
    ("I have a PhD in physics.", {("education:phd in physics", "studies", False)}),
    ("I graduated from Stanford.", {("education:stanford", "studies", False)}),
    ("I dropped out of college.", {("education:college", "studies", True)}),
    ("Majoring in biology at the moment.", {("education:biology", "studies", False)}),
    ("I speak Portuguese and a bit of Italian.",
     {("language:italian", "speaks", False), ("language:portuguese", "speaks", False)}),
    ("I'm learning Korean on Duolingo.", {("language:korean", "is learning", False)}),
    ("I'm a native Polish speaker.", {("language:polish", "speaks", False)}),
    ("My German is pretty rusty, I don't speak it anymore.", {("language:german", "speaks", True)}),
    ("I don't speak any French.", {("language:no french", "speaks", False)}),
    ("I'm fluent in Japanese.", {("language:japanese", "speaks", False)}),
    ("I gave up learning Mandarin.", {("language:mandarin", "is learning", True)}),
    ("I'm bilingual in English and Arabic.",
     {("language:arabic", "speaks", False), ("language:english", "speaks", False)}),
    ("I play chess most evenings.", {("hobby:chess", "does", False)}),
    ("I do yoga every morning.", {("hobby:yoga", "does", False)}),
    ("I go bouldering on weekends.", {("hobby:bouldering", "does", False)}),
    ("I knit.", {("hobby:knit", "does", False)}),
    ("I play the violin in a local orchestra.", {("hobby:violin", "does", False)}),
    ("i play football every sunday", {("hobby:football", "does", False)}),
    ("I don't play tennis anymore.", {("hobby:tennis", "does", True)}),
    ("I quit running after my knee injury.", {("hobby:running", "does", True)}),
    ("I used to paint a lot.", set()),
    ("I stopped going to the gym.", {("hobby:gym", "does", True)}),
    ("I've been doing pottery since last year.", {("hobby:pottery", "does", False)}),
    ("I'm really into photography.", {("preference:photography", "likes", False)}),
    ("Gardening is my thing.", {("hobby:gardening", "does", False)}),
    ("I surf whenever I can.", {("hobby:surf", "does", False)}),
    ("I took up salsa dancing.", {("hobby:salsa dancing", "does", False)}),
    ("I no longer play the piano.", {("hobby:piano", "does", True)}),
    ("I love blues music.", {("preference:blues music", "loves", False)}),
    ("I love the blues.", {("preference:blues", "loves", False)}),
    ("I like sushi.", {("preference:sushi", "likes", False)}),
    ("I hate mornings.", {("preference:mornings", "dislikes", False)}),
    ("I really don't like horror movies.", {("preference:horror movies", "dislikes", False)}),
    ("I adore Italian food.", {("preference:italian food", "loves", False)}),
    ("I prefer tea over coffee.", {("preference:tea", "prefers", False)}),
    ("I'm a big fan of jazz.", {("preference:jazz", "likes", False)}),
    ("I can't stand country music.", {("preference:country music", "dislikes", False)}),
    ("I enjoy hiking and camping.",
     {("preference:camping", "likes", False), ("preference:hiking", "likes", False)}),
    ("i love k-pop", {("preference:k-pop", "loves", False)}),
    ("I don't like spicy food anymore.", {("preference:spicy food", "likes", True)}),
    ("I'm not into video games anymore.", {("preference:video games", "likes", True)}),
    ("I used to love anime.", set()),
    ("Forget that I said I like opera.", {("preference:opera", "likes", True)}),
    ("I love sci-fi novels.", {("preference:sci-fi novels", "loves", False)}),
    ("I love classical music and old movies.",
     {("preference:classical music", "loves", False), ("preference:old movies", "loves", False)}),
    ("I'm obsessed with true crime podcasts.",
     {("preference:true crime podcasts", "loves", False)}),
    ("I love dark chocolate 🍫", {("preference:dark chocolate", "loves", False)}),
    ("Not a fan of cilantro.", {("preference:cilantro", "dislikes", False)}),
    ("I like the Beatles.", {("preference:beatles", "likes", False)}),
    ("My favorite band is Radiohead.", {("favorite band", "Radiohead", False)}),
    ("I'm more of a cat person.", {("preference:cats", "likes", False)}),
    ("I'm vegetarian.", {("is_a:vegetarian", "yes", False)}),
    ("Vegan now.", {("is_a:vegan", "yes", False)}),
    ("I don't eat pork.", {("diet:no pork", "eats", False)}),
    ("I don't drink alcohol.", {("diet:no alcohol", "eats", False)}),
    ("I stopped drinking coffee.", {("diet:coffee", "eats", True)}),
    ("I'm not vegan anymore.", {("is_a:vegan", "yes", True)}),
    ("I gave up sugar in January.", {("diet:sugar", "eats", True)}),
    ("I eat keto.", {("is_a:keto", "yes", False)}),
    ("I've been pescatarian for years.", {("is_a:pescatarian", "yes", False)}),
    ("I keep halal.", {("is_a:halal", "yes", False)}),
    ("I avoid dairy.", {("diet:no dairy", "eats", False)}),
    ("I no longer eat red meat.", {("diet:red meat", "eats", True)}),
    ("I went vegan last year.", {("is_a:vegan", "yes", False)}),
    ("I quit drinking.", {("diet:drinking", "eats", True)}),
    ("I used to be vegetarian.", set()),
    ("i'm gluten-free", {("is_a:gluten-free", "yes", False)}),
    ("I'm allergic to penicillin.", {("allergy:penicillin", "allergic", False)}),
    ("I have a shellfish allergy.", {("allergy:shellfish", "allergic", False)}),
    ("I'm allergic to cats and dust.",
     {("allergy:cats", "allergic", False), ("allergy:dust", "allergic", False)}),
    ("i'm lactose intolerant", {("allergy:lactose", "allergic", False)}),
    ("I'm not allergic to nuts anymore.", {("allergy:nuts", "allergic", True)}),
    ("Severe tree nut allergy here.", {("allergy:tree nut", "allergic", False)}),
    ("I outgrew my egg allergy.", {("allergy:egg", "allergic", True)}),
    ("I have hay fever.", {("condition:hay fever", "has", False)}),
    ("I have type 2 diabetes.", {("condition:type 2 diabetes", "has", False)}),
    ("I was diagnosed with ADHD last year.", {("condition:adhd", "has", False)}),
    ("I'm asthmatic.", {("condition:asthmatic", "has", False)}),
    ("I suffer from migraines.", {("condition:migraines", "has", False)}),
    ("I quit smoking.", {("condition:smoker", "has", True)}),
    ("I've got chronic back pain.", {("condition:chronic back pain", "has", False)}),
    ("I'm pregnant!", {("condition:pregnant", "has", False)}),
    ("I don't have asthma anymore.", {("condition:asthma", "has", True)}),
    ("I'm deaf in one ear.", {("condition:deaf", "has", False)}),
    ("I have three kids.", {("family:three kids", "has", False)}),
    ("I've got a daughter.", {("family:daughter", "has", False)}),
    ("We have twins.", {("family:twins", "has", False)}),
    ("I have two older brothers.", {("family:two older brothers", "has", False)}),
    ("I'm a mom of two.", {("family:mom of two", "has", False)}),
    ("I don't have kids.", {("family:no kids", "has", False)}),
    ("I'm an only child.", {("is_a:only child", "yes", False)}),
    ("We just had a baby boy!", {("family:baby boy", "has", False)}),
    ("I have a dog named Biscuit.", {("pet:dog", "has", False)}),
    ("We've got two cats.", {("pet:two cats", "has", False)}),
    ("I adopted a rescue greyhound.", {("pet:rescue greyhound", "has", False)}),
    ("Our hamster died last week.", {("pet:hamster", "has", True)}),
    ("I don't have any pets.", {("pet:no pets", "has", False)}),
    ("I have a parrot.", {("pet:parrot", "has", False)}),
    ("i got a puppy", {("pet:puppy", "has", False)}),
    ("We gave our dog away.", {("pet:dog", "has", True)}),
    ("I'm married.", {("relationship status", "married", False)}),
    ("I'm single.", {("relationship status", "single", False)}),
    ("I got divorced in 2022.", {("relationship status", "divorced", False)}),
    ("I have a girlfriend.", {("partner", "girlfriend", False)}),
    ("I'm engaged!", {("relationship status", "engaged", False)}),
    ("My husband and I live in Oslo.", {("location", "Oslo", False)}),
    ("I broke up with my boyfriend.", {("partner", "boyfriend", True)}),
    ("I'm not single anymore.", {("relationship status", "single", True)}),
    ("We got married in June.", {("relationship status", "married", False)}),
    ("I use Linux.", {("uses:linux", "uses", False)}),
    ("I have an iPhone.", {("uses:iphone", "uses", False)}),
    ("I drive a Toyota.", {("uses:toyota", "drives", False)}),
    ("I switched from Windows to Mac.",
     {("uses:mac", "uses", False), ("uses:windows", "uses", True)}),
    ("I sold my car.", {("uses:car", "uses", True)}),
    ("I don't have a car.", {("uses:no car", "uses", False)}),
    ("I use a Pixel 8.", {("uses:pixel 8", "uses", False)}),
    ("I ride an e-bike to work.", {("uses:e-bike", "drives", False)}),
    ("I don't use Facebook anymore.", {("uses:facebook", "uses", True)}),
    ("I got a new laptop, a ThinkPad.", {("uses:laptop", "uses", False)}),
    ("I own a Kindle.", {("uses:kindle", "uses", False)}),
    ("My email is jo.king@example.com.", {("email", "jo.king@example.com", False)}),
    ("My number is 07700 900123.", {("phone number", "07700 900123", False)}),
    ("You can reach me at 555-2368.", {("phone number", "555-2368", False)}),
    ("My new email is sam@work.io", {("email", "sam@work.io", False)}),
    ("Please delete my phone number.", {("phone number", "", True)}),
    ("my address is 12 Elm Street, Springfield",
     {("address", "12 Elm Street, Springfield", False)}),
    ("My name is Priya.", {("name", "Priya", False)}),
    ("I'm Tomasz.", {("name", "Tomasz", False)}),
    ("Call me Jo.", {("preferred name", "Jo", False)}),
    ("hey, it's Marco here", {("name", "Marco", False)}),
    ("Everyone calls me Bea.", {("preferred name", "Bea", False)}),
    ("I go by Alex.", {("preferred name", "Alex", False)}),
    ("I'm 34.", {("age", "34", False)}),
    ("I just turned 40.", {("age", "40", False)}),
    ("I'm 52 years old.", {("age", "52", False)}),
    ("I'll be 30 next month.", set()),
    ("I'm from Kenya.", {("hometown", "Kenya", False)}),
    ("I grew up in Lagos.", {("hometown", "Lagos", False)}),
    ("I was born in Seoul.", {("hometown", "Seoul", False)}),
    ("I'm originally from Cork.", {("hometown", "Cork", False)}),
    ("I'm Brazilian.", {("nationality", "Brazilian", False)}),
    ("Born and raised in Manchester.", {("hometown", "Manchester", False)}),
    ("I'm an introvert.", {("is_a:introvert", "yes", False)}),
    ("I'm a night owl.", {("is_a:night owl", "yes", False)}),
    ("I'm Catholic.", {("is_a:catholic", "yes", False)}),
    ("I'm gay.", {("is_a:gay", "yes", False)}),
    ("I'm a morning person.", {("is_a:morning person", "yes", False)}),
    ("I'm a huge nerd.", {("is_a:nerd", "yes", False)}),
    ("I'm not religious anymore.", {("is_a:religious", "yes", True)}),
    ("Scratch that, I live in Bristol.", {("location", "Bristol", False)}),
    ("Forget that I work at Uber.", {("employer", "Uber", True)}),
    ("Ignore what I said about being vegan.", {("is_a:vegan", "yes", True)}),
    ("Actually, I'm not married.", {("relationship status", "married", True)}),
    ("Forget what I said about having a cat.", {("pet:cat", "has", True)}),
    ("Do you think I should move to Berlin?", set()),
    ("What's the best way to learn Spanish?", set()),
    ("I might move to Canada someday.", set()),
    ("I'm thinking about getting a dog.", set()),
    ("I want to learn the guitar.", set()),
    ("My sister lives in Rome.", set()),
    ("My boss is a vegan.", set()),
    ("My friend works at Google.", set()),
    ("Thanks, that helps a lot!", set()),
    ("Can you recommend a good book?", set()),
    ("I'd love to visit Japan.", set()),
    ("I'm going to Paris next week.", set()),
    ("I need a new phone.", set()),
    ("I watched a great movie last night.", set()),
    ("I love that suggestion.", set()),
    ("I think it's going to rain.", set()),
    ("lol that's hilarious", set()),
    ("I had pasta for lunch.", set()),
    ("I went to a concert yesterday.", set()),
    ("My dad used to work at Ford.", set()),
    ("I'm tired today.", set()),
    ("I'm at the airport right now.", set()),
    ("I'm in a meeting.", set()),
    ("Should I learn Python or Java?", set()),
    ("I wish I lived near the sea.", set()),
    ("If I had a dog I'd call it Max.", set()),
    ("I hope to retire in Spain.", set()),
    ("I'm planning to quit my job.", set()),
    ("We're considering moving to Portugal.", set()),
    ("Is it healthy to be vegan?", set()),
    ("I was in London for a conference.", set()),
    ("I love you guys!", set()),
    ("I like your idea.", set()),
    ("I'm happy with the answer.", set()),
    ("I read the article you sent.", set()),
    ("Ugh, I hate this weather.", set()),
    ("I'm sure it'll be fine.", set()),
    ("I'm cooking dinner right now.", set()),
    ("Ok cool.", set()),
    ("My brother just moved to Oslo.", set()),
    ("My cousin is allergic to peanuts.", set()),
    ("Where should I live?", set()),
    ("I got a parking ticket today.", set()),
    ("I love the new update!", set()),
    ("I'm looking for a job in marketing.", set()),
]  # fmt: skip

# Misses of the "fix" half that are left: each is expected to fail until the reader reads it.
FIX_HALF_MISSES = frozenset(
    {
        "Home is Glasgow for me now.",
        "I switched from Deloitte to KPMG.",  # an employer or a bank? nothing says which
        "I'm a second-year law student.",
        "I love classical music and old movies.",
        "I quit drinking.",
        "I have type 2 diabetes.",  # the parser takes "have" for an auxiliary of "type"
    }
)
# How many sentences of the "check" half the reader reads as labelled (a floor: it may rise).
CHECK_HALF_FLOOR = 91


def half(text: str) -> str:
    """ "fix" or "check", by the sentence's SHA-256."""
    return "fix" if int(hashlib.sha256(text.encode()).hexdigest(), 16) % 2 == 0 else "check"


_READER: list[ParsedStatements] = []


def _read(text: str) -> Facts:
    if not _READER:
        _READER.append(ParsedStatements(SpacyParser()))
    event = Event(id="e0", scope=Scope("t", "u", "s"), seq=1, role=Role.USER, content=text,
                  at=SAID)  # fmt: skip
    return {(d.attribute, d.value, d.revoke) for d in _READER[0].read([event]) if d.subject == USER}


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
    assert _read(text) == facts


def test_check_half_is_read_as_labelled_at_least_as_often_as_measured() -> None:
    check = [(text, facts) for text, facts in PROBE if half(text) == "check"]
    read = sum(_read(text) == facts for text, facts in check)
    assert read >= CHECK_HALF_FLOOR, f"{read} of {len(check)} read as labelled"
