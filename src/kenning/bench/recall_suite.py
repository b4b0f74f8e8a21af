"""A seeded synthetic recall suite: facts planted in chatter, then asked about in other words.

Pure and deterministic: :func:`generate_conversation` builds, from a seed alone, a conversation
of user and assistant turns in which a number of specific personal facts ("my sister's name is
Ingrid", "I left the car on level 4, row K", "the wifi password is maple-river-42") are planted
among small talk, some of it about the same topics without the fact (hard negatives). Each fact
comes with one recall question phrased differently from the fact (a paraphrase that avoids the
fact's key words where that is natural). Every fact's value occurs in exactly one turn.

Example::

    conversation = generate_conversation(3)
    conversation.turns[conversation.facts[0].turn].text   # the planted fact
    conversation.facts[0].question                         # how it is asked later
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from kenning.errors import InvalidInput

__all__ = ["FACT_KINDS", "PlantedFact", "RecallConversation", "RecallTurn", "generate_conversation"]


@dataclass(frozen=True, slots=True)
class RecallTurn:
    """One turn: ``role`` is ``"user"`` or ``"assistant"``; ``fact`` indexes the planted fact."""

    role: str
    text: str
    at: datetime
    fact: int | None = None


@dataclass(frozen=True, slots=True)
class PlantedFact:
    """A fact planted in the conversation and the question that recalls it.

    Attributes:
        kind: The fact's category, e.g. ``"sister_name"``.
        value: The specific detail; it occurs in exactly one turn of the conversation.
        text: The user turn stating the fact.
        question: The recall question, phrased differently from ``text``.
        turn: Index of the fact's turn in ``RecallConversation.turns``.
    """

    kind: str
    value: str
    text: str
    question: str
    turn: int


@dataclass(frozen=True, slots=True)
class RecallConversation:
    """A generated conversation: its seed, turns in order, and the planted facts."""

    seed: int
    turns: tuple[RecallTurn, ...]
    facts: tuple[PlantedFact, ...]


@dataclass(frozen=True, slots=True)
class _Kind:
    facts: tuple[str, ...]
    questions: tuple[str, ...]
    value: Callable[[random.Random], str]


def _pick(words: str, sep: str = "|") -> Callable[[random.Random], str]:
    options = tuple(words.split(sep))
    return lambda rng: rng.choice(options)


def _letters(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(n))


_WEEKDAYS: Final = "Monday Tuesday Wednesday Thursday Friday".split()
_MONTHS: Final = (
    "January February March April May June July August September October November December"
).split()


def _time(rng: random.Random) -> str:
    return f"{rng.randrange(8, 12)}:{rng.choice(('05', '15', '20', '35', '40', '50'))} am"


def _date(rng: random.Random) -> str:
    return f"{rng.choice(_MONTHS)} {rng.randrange(2, 29)}"


def _wifi_password(rng: random.Random) -> str:
    first = rng.choice(("maple", "otter", "cobalt", "quartz", "ember"))
    second = rng.choice(("river", "falcon", "lantern", "meadow", "harbor"))
    return f"{first}-{second}-{rng.randrange(10, 99)}"


def _handle(rng: random.Random) -> str:
    first = rng.choice(("spoke", "gravel", "crank", "derailleur"))
    second = rng.choice(("wizard", "nomad", "otter", "pilot"))
    return f"{first}_{second}{rng.randrange(10, 99)}"


FACT_KINDS: Final[dict[str, _Kind]] = {
    "sister_name": _Kind(
        ("My sister's name is {v}.", "By the way, my sister is called {v}."),
        ("What's my sibling called?", "Remind me what my female sibling goes by?"),
        _pick("Ingrid|Marisol|Thandiwe|Océane|Annika|Rosalind|Yevgenia|Ottilie|Saoirse|Lucinda"),
    ),
    "parking": _Kind(
        ("I left the car on {v} of the parking garage.", "Note for later: I parked on {v}."),
        ("Where did I leave my vehicle?", "Which floor and row is my ride on?"),
        lambda rng: f"level {rng.randrange(2, 9)}, row {rng.choice('BDFHKMQRTW')}",
    ),
    "wifi": _Kind(
        ("The wifi password is {v}.", "Our home wifi password is {v}, in case you need it."),
        ("What's the code to get online at the house?", "How do I connect to the internet here?"),
        _wifi_password,
    ),
    "dentist": _Kind(
        ("My dentist appointment is on {v}.", "I booked the dentist for {v}."),
        ("When do I get my teeth checked?", "What time is my appointment with the tooth doctor?"),
        lambda rng: f"{rng.choice(_WEEKDAYS)} at {_time(rng)}",
    ),
    "allergy": _Kind(
        ("I'm allergic to {v}, so I have to be careful.", "Heads up: I have a {v} allergy."),
        ("Which food could give me a bad reaction?", "What should I avoid eating?"),
        _pick("peanuts|shellfish|sesame|kiwi fruit|buckwheat|mustard seeds|lupin flour"),
    ),
    "dog_name": _Kind(
        ("Our dog is called {v}.", "We named our new puppy {v}."),
        ("What do we call our pet?", "What's the name of the family hound?"),
        _pick("Biscuit|Pepperoni|Waffles|Juniper|Nugget|Barnaby|Pickles|Marmalade"),
    ),
    "locker": _Kind(
        ("My gym locker combination is {v}.", "The code for my locker at the gym is {v}."),
        (
            "Which numbers open my locker at the fitness center?",
            "How do I get into my storage box where I work out?",
        ),
        lambda rng: f"{rng.randrange(10, 40)}-{rng.randrange(10, 40)}-{rng.randrange(10, 40)}",
    ),
    "gate": _Kind(
        ("My flight on Friday leaves from gate {v}.", "The boarding pass says gate {v}."),
        ("Where do I board my plane at the airport?", "Which departure gate do I go to?"),
        lambda rng: f"{rng.choice('ABCDEF')}{rng.randrange(11, 60)}",
    ),
    "colour": _Kind(
        ("My favourite colour is {v}.", "If you ever need to know, I love the colour {v}."),
        ("Which shade do I like best?", "What hue is my top pick?"),
        _pick("teal|burgundy|mustard yellow|lavender|forest green|coral|slate blue"),
    ),
    "manager": _Kind(
        ("My manager's name is {v}.", "I report to {v} at work."),
        ("Who is my boss?", "Who do I answer to at my job?"),
        _pick(
            "Bartholomew Reyes|Henrietta Okafor|Desmond Varga|Philippa Lindqvist|"
            "Cornelius Abara|Wilhelmina Sato"
        ),
    ),
    "plate": _Kind(
        ("My car's licence plate is {v}.", "The number plate on my car reads {v}."),
        ("What's the registration on my vehicle?", "What letters and digits identify my auto?"),
        lambda rng: f"{_letters(rng, 2)}{rng.randrange(10, 99)} {_letters(rng, 3)}",
    ),
    "mom_birthday": _Kind(
        ("My mom's birthday is on {v}.", "Mum celebrates her birthday on {v}."),
        ("When was my mother born?", "On what day does my mother turn a year older?"),
        _date,
    ),
    "hotel_room": _Kind(
        ("We're staying in room {v} at the hotel.", "Our hotel room number is {v}."),
        (
            "Which door is ours where we're lodging this trip?",
            "Where are we sleeping on this trip?",
        ),
        lambda rng: str(rng.randrange(101, 999)),
    ),
    "spare_key": _Kind(
        ("The spare key is hidden under the {v}.", "We keep the spare key beneath the {v}."),
        ("Where do we keep the extra house key?", "If I'm locked out, where do I look?"),
        _pick("blue flowerpot|garden gnome|loose brick by the shed|bird bath|stone frog"),
    ),
    "blood_type": _Kind(
        ("My blood type is {v}.", "For the record, I'm blood type {v}."),
        ("What blood group am I?", "If I need a transfusion, which group matches me?"),
        _pick("A negative|B positive|AB negative|O negative|AB positive"),
    ),
    "door_code": _Kind(
        ("The door code for the office is {v}.", "To get into the office you type {v}."),
        (
            "What do I punch in to enter the workplace building?",
            "How do I get through the entrance at work?",
        ),
        lambda rng: f"{rng.randrange(1000, 9999)}#",
    ),
    "landlord": _Kind(
        ("My landlord's phone number is {v}.", "You can reach my landlord on {v}."),
        (
            "How do I contact the person I rent my flat from?",
            "What's the number for the owner of my apartment?",
        ),
        lambda rng: f"0{rng.randrange(7100, 7999)} {rng.randrange(100000, 999999)}",
    ),
    "medication": _Kind(
        ("I take {v} every morning.", "Every day after breakfast I have my {v}."),
        ("Which pill do I have each day when I wake up?", "What medicine is part of my routine?"),
        _pick("levothyroxine|metformin|lisinopril|atorvastatin|omeprazole|sertraline"),
    ),
    "restaurant": _Kind(
        ("My favourite restaurant is {v}.", "The place we always go for dinner is {v}."),
        ("Where do I most like to eat out?", "Which spot do we pick for a meal out?"),
        _pick("Trattoria Vellutina|The Copper Kettle|Sakura Teien|Casa Alarcón|Le Petit Hibou"),
    ),
    "school": _Kind(
        ("My son goes to {v}.", "Our boy is enrolled at {v}."),
        ("Which school does my kid attend?", "Where does my child have his lessons?"),
        _pick("Oakridge Elementary|Willowbrook Primary|St. Aldric's Academy|Harborview School"),
    ),
    "shoe_size": _Kind(
        ("I wear size {v} shoes.", "My shoe size is {v}."),
        ("What footwear size should I buy?", "Which size sneakers fit me?"),
        lambda rng: f"EU {rng.randrange(36, 47)}",
    ),
    "book": _Kind(
        ("I'm currently reading {v}.", "Right now I'm halfway through {v}."),
        ("Which novel am I in the middle of?", "What's on my nightstand at the moment?"),
        _pick(
            "The Glass Orchard|Salt and Sparrows|A Map of Quiet Rooms|The Ninth Lighthouse|"
            "Winter at Kessock"
        ),
    ),
    "meeting_room": _Kind(
        (
            "The quarterly review is in conference room {v}.",
            "We hold the quarterly review in meeting room {v}.",
        ),
        (
            "Where is the three-monthly business review held?",
            "Which room is booked for the review every quarter?",
        ),
        _pick("Aurora|Basalt|Cedar|Delta Nine|Everest|Fjord"),
    ),
    "vet": _Kind(
        ("Our vet is {v}.", "We take our animals to {v}."),
        ("Which animal doctor do we use?", "Where do the pets get their checkups?"),
        _pick(
            "Greenpaw Veterinary Clinic|Dr. Imogen Falk|Riverside Animal Hospital|"
            "Whiskers & Tails Clinic"
        ),
    ),
    "anniversary": _Kind(
        ("Our wedding anniversary is on {v}.", "My partner and I got married on {v}."),
        ("When did I tie the knot?", "What date should I plan an anniversary surprise for?"),
        _date,
    ),
    "train": _Kind(
        ("I take the {v} train to work.", "My commuter train leaves at {v}."),
        ("What time does my commute depart?", "When do I have to be on the platform?"),
        lambda rng: f"{rng.randrange(6, 9)}:{rng.randrange(0, 60):02d}",
    ),
    "username": _Kind(
        ("My username on the cycling forum is {v}.", "On the bike forum I post as {v}."),
        ("What handle do I use online for bicycle talk?", "What's my screen name for cycling?"),
        _handle,
    ),
    "coffee": _Kind(
        ("My usual coffee order is {v}.", "At the café I always get {v}."),
        ("What drink do I normally ask the barista for?", "What's my go-to at the coffee shop?"),
        _pick("an oat flat white|a double cortado|an iced hazelnut latte|a cardamom cappuccino"),
    ),
}
"""Fact kinds: statement templates, paraphrased questions and a value generator for each."""

_LEAD_INS: Final = ("", "", "", "Oh, before I forget: ", "Random thing, but ", "Quick note: ")

# Small talk; some lines touch a fact's topic without stating it (hard negatives). No digits and
# no fact values, so each value occurs only in its fact's turn.
_USER_CHATTER: Final = (
    "My sister and I argued about which movie to watch last weekend.",
    "The parking garage was packed this morning, it took ages to find a space.",
    "The wifi at the coffee shop keeps dropping, so annoying.",
    "I really should book a check-up at some point, it's been a while.",
    "Work has been hectic this week with all the deadlines.",
    "I'm thinking about taking a cooking class in the spring.",
    "The weather was lovely today, we went for a long walk in the park.",
    "Do you have any tips for sleeping better?",
    "Our neighbours are renovating their kitchen and it's so loud.",
    "I watched a documentary about octopuses last night.",
    "My last flight was delayed by three hours, never again with that airline.",
    "I should really go to the gym more often.",
    "The hotel breakfast on our last trip was surprisingly good.",
    "Can you recommend a podcast for the commute?",
    "I finally finished painting the spare bedroom.",
    "My manager wants everyone back in the office more often.",
    "The dog next door barks all night long.",
    "I'm trying to drink less coffee these days.",
    "I keep forgetting where I put my reading glasses.",
    "We might repaint the front door a brighter shade.",
    "The school run was pure chaos today.",
    "I need new running shoes soon, mine are falling apart.",
    "My mom called and we chatted for an hour about nothing in particular.",
    "I've been meaning to start a vegetable garden.",
    "The traffic on the ring road was terrible again.",
    "I tried a new bakery near the station and the croissants were great.",
    "Books are piling up on my nightstand faster than I can read them.",
    "We're thinking about getting a second pet.",
    "My phone battery barely lasts the afternoon now.",
    "I started learning a few words of Portuguese.",
)
_ASSISTANT_REPLIES: Final = (
    "Got it, I'll keep that in mind.",
    "Thanks for telling me, noted.",
    "That sounds frustrating; I hope it gets better soon.",
    "Happy to help. Anything else on your mind?",
    "That sounds like a lovely day.",
    "A consistent bedtime and no screens for an hour before sleep usually help.",
    "Good luck with that, let me know how it goes.",
    "Interesting! Octopuses are remarkably clever animals.",
    "A short walk after lunch can do wonders for your energy.",
    "Understood. I'll remember that for you.",
    "Oh nice, that's a fun project.",
    "That's a good idea; small steps add up.",
    "Sorry to hear that. Is there anything I can do?",
    "Sounds great, enjoy it!",
    "Noted! Feel free to ask me about it any time.",
)


def generate_conversation(
    seed: int,
    *,
    facts: int = 20,
    turns: int = 50,
    start: datetime | None = None,
) -> RecallConversation:
    """Generate the conversation of *seed*: *turns* turns with *facts* planted facts.

    User turns are the facts and small talk in a seeded order; assistant replies follow some of
    them so that the total is *turns*. Turns are one minute apart from *start* (default: a date
    derived from the seed).

    Raises:
        InvalidInput: *facts* is more than the number of fact kinds, or *turns* leaves no room
            for the facts.
    """
    if not 1 <= facts <= len(FACT_KINDS):
        raise InvalidInput(f"facts must be between 1 and {len(FACT_KINDS)}, got {facts}")
    if not facts <= turns <= facts + len(_USER_CHATTER) + len(_ASSISTANT_REPLIES):
        raise InvalidInput(
            f"turns must be between {facts} and "
            f"{facts + len(_USER_CHATTER) + len(_ASSISTANT_REPLIES)} for {facts} facts"
        )
    rng = random.Random(seed)
    at = start or datetime(2026, 1, 1, 9, 0, tzinfo=UTC) + timedelta(days=seed % 3650)
    while True:
        # A draw is kept only if every fact value occurs in exactly one turn (almost always).
        conversation = _draw(seed, rng, facts, turns, at)
        if all(
            sum(fact.value in turn.text for turn in conversation.turns) == 1
            for fact in conversation.facts
        ):
            return conversation


def _draw(
    seed: int, rng: random.Random, facts: int, turns: int, at: datetime
) -> RecallConversation:
    kinds = rng.sample(sorted(FACT_KINDS), facts)
    chatter_turns = turns - facts
    replies = min(len(_ASSISTANT_REPLIES), chatter_turns // 2)
    user_chatter = rng.sample(_USER_CHATTER, chatter_turns - replies)
    user_items: list[tuple[int | None, str]] = [(None, text) for text in user_chatter]
    planted: list[tuple[str, str, str, str]] = []
    values: set[str] = set()
    for index, kind in enumerate(kinds):
        spec = FACT_KINDS[kind]
        value = _fresh_value(spec, rng, values)
        values.add(value)
        lead = rng.choice(_LEAD_INS)
        text = rng.choice(spec.facts).format(v=value)
        if lead and not text.startswith(("I ", "I'", "Mum ")):
            text = lead + text[0].lower() + text[1:]
        elif lead:
            text = lead + text
        planted.append((kind, value, text, rng.choice(spec.questions)))
        user_items.append((index, text))
    rng.shuffle(user_items)
    reply_after = set(rng.sample(range(len(user_items)), replies))
    reply_texts = rng.sample(_ASSISTANT_REPLIES, replies)
    out: list[RecallTurn] = []
    fact_turn: dict[int, int] = {}
    for position, (fact, text) in enumerate(user_items):
        if fact is not None:
            fact_turn[fact] = len(out)
        out.append(RecallTurn("user", text, at + timedelta(minutes=len(out)), fact))
        if position in reply_after:
            reply = reply_texts.pop()
            out.append(RecallTurn("assistant", reply, at + timedelta(minutes=len(out))))
    return RecallConversation(
        seed=seed,
        turns=tuple(out),
        facts=tuple(
            PlantedFact(kind=kind, value=value, text=text, question=question, turn=fact_turn[i])
            for i, (kind, value, text, question) in enumerate(planted)
        ),
    )


def _fresh_value(spec: _Kind, rng: random.Random, taken: set[str]) -> str:
    """A value that no other fact's value contains or is contained in."""
    for _ in range(1000):
        value = spec.value(rng)
        if not any(value in other or other in value for other in taken):
            return value
    raise AssertionError("could not draw a distinct fact value")  # pragma: no cover
