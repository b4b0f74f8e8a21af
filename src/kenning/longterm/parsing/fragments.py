"""Statements told in fragments (pure): a subject left out, a fact finished in a second
sentence without a verb.

People chatting leave out the "I" ("Live in Seoul, work remotely for a US company", "Love
hiking on weekends", "doing intermittent fasting"). The text shell
(:mod:`kenning.longterm.statements`) writes the "I" back before an opening verb of state or
habit ("I'm" before a gerund) and parses that; :func:`speaker_restored` then keeps the
reading only where the parse makes the restored "I" the subject of that verb, in the present,
with no one addressed: an imperative to the assistant ("Tell me about Seoul", "Help
me write ...", "Play some jazz") is no statement of the speaker's.

People also finish a statement in the sentence after it, without a verb: "I started uni!
Engineering at Monash.", "I finally changed jobs. Designer at a small agency now."
:func:`continued` reads such a fragment (a noun with a preposition) in the family that the
first-person statement before it opened (studies, work, a home), and only where the fragment
fits that family (a field of study, a role, a place): "I started uni! Party at Jake's
tonight." states nothing more.
"""

from __future__ import annotations

from typing import Final

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.arguments import (
    Reading,
    fact,
    organisation,
    place_of,
    preps,
    some,
    value_span,
)
from kenning.longterm.parsing.clauses import Clause, Sentence
from kenning.longterm.parsing.parsed import Parsed, Token
from kenning.records import USER

__all__ = ["HABIT_VERBS", "STATE_VERBS", "continued", "speaker_restored"]

STATE_VERBS: Final = (
    lx.LIVE_VERBS
    | lx.WORK_VERBS
    | frozenset(lx.LIKE_VERBS)
    | lx.DISLIKE_VERBS
    | frozenset({"speak", "teach", "study", "own", "rent", "commute"})
)
"""Verbs of a state the speaker is in, told without a subject ("Live in Seoul", "Love
hiking", "Speak French and German"): an assistant is seldom asked to do them."""

HABIT_VERBS: Final = lx.HOBBY_VERBS | lx.LIGHT_HOBBY_VERBS | lx.USE_VERBS | frozenset({"eat"})
"""Verbs of a habit: told without a subject only with a mark of habit ("Play tennis on
weekends", "Run every morning"), since bare they are as often a request ("Play some jazz",
"Use bullet points")."""

# Who a clause told without a subject may address: then it is a request, not a statement.
_ADDRESSED = frozenset({"me", "us", "you", "yourself"})
_PLEASE = frozenset({"please", "pls", "plz"})
_HABIT_ADVERBS = frozenset(
    "now daily weekly nightly usually mostly often regularly always religiously sometimes "
    "occasionally still currently".split()
)
_HABIT_DETERMINERS = frozenset({"every", "each", "most"})
_HABIT_TIMES = frozenset(
    "weekends weekdays mornings evenings nights sundays saturdays mondays tuesdays wednesdays "
    "thursdays fridays weekend".split()
)


def speaker_restored(p: Parsed) -> bool:
    """Whether *p*, a sentence told without its subject and parsed with an "I" written before
    it, is the speaker's statement: the "I" is the subject of a verb of state, or of a habit
    told with its mark, in the present, and nothing in the clause addresses the listener.

    >>> speaker_restored(Parsed.of("", ()))
    False
    """
    first = p.tokens[0] if p.tokens else None
    verb = p.head(first) if first is not None and first.text == "I" else None
    if first is None or verb is None or first.dep != "nsubj" or verb.dep != "ROOT":
        return False
    if verb.pos != "VERB" or verb.tag not in ("VBP", "VB", "VBG"):
        return False
    if any(t.lower in _PLEASE or (t.lower in _ADDRESSED and t.pos == "PRON") for t in p.tokens):
        return False  # "Tell me about Seoul", "Play some jazz for us", "Love you"
    if verb.tag == "VBG":
        return _progressive(p, verb)
    word = verb.lower
    if word in STATE_VERBS:
        return True
    return word in HABIT_VERBS and _habitual(p, verb)


def _progressive(p: Parsed, verb: Token) -> bool:
    """ "I'm doing intermittent fasting", restored from "doing intermittent fasting": the
    "'m" is the gerund's auxiliary, and no other verb lacks its subject ("Cooking is my
    passion" has the gerund for one: "I'm cooking is my passion" is no clause)."""
    if not any(a.lemma == "be" and a.i == 1 for a in p.children(verb, "aux")):
        return False
    finite = ("VBZ", "VBD", "VBP")
    return not any(t.tag in finite and t.i > verb.i and p.child(t, "nsubj", "expl") is None
                   and t.dep not in ("aux", "auxpass") for t in p.tokens)  # fmt: skip


def _habitual(p: Parsed, verb: Token) -> bool:
    """A mark of habit on *verb* or its complement: "on weekends", "every day", "daily"."""
    holders = [verb, *p.children(verb, "xcomp", "dobj")]
    for holder in holders:
        for child in p.children(holder):
            if child.dep == "advmod" and child.lower in _HABIT_ADVERBS:
                return True
            if child.dep == "npadvmod" and (
                child.lower in _HABIT_TIMES
                or any(d.lower in _HABIT_DETERMINERS for d in p.children(child, "det", "amod"))
            ):
                return True
            if child.dep == "prep" and any(
                o.lower in _HABIT_TIMES for o in p.children(child, "pobj")
            ):
                return True
    return False


# -- a fact finished in the next sentence ------------------------------------------------------

# Verbs that open a topic of studies, work or a home by their object: "started uni", "got a
# new job", "changed jobs", "went back to school".
_OPENING_VERBS = frozenset(
    "start begin change switch get land find accept take go return enrol enroll finish "
    "move relocate".split()
)
# Subjects of study told by their name: besides lines of work ("engineering", "law").
_SUBJECTS = frozenset(
    "science history art arts literature philosophy chemistry physics biology maths math "
    "mathematics psychology economics english music medicine dentistry pharmacy nursing "
    "education linguistics geography politics sociology anthropology film drama".split()
)
_SUBJECT_ENDINGS = ("ology", "ics", "istry", "onomy", "graphy")


def continued(previous: Sentence, fragment: Sentence) -> list[Reading]:
    """What *fragment*, a sentence without a verb, adds to the first-person statement
    *previous* right before it: a field of study and its school ("I started uni! Engineering
    at Monash."), a role and its workplace ("I changed jobs. Designer at a small agency
    now."), a place ("We moved! Tiny flat in Hackney."). Nothing when the fragment has a
    verb, asks, or does not fit the family *previous* opened.

    >>> continued(Sentence(Parsed.of("", ())), Sentence(Parsed.of("", ())))
    []
    """
    if fragment.question or fragment.sarcastic or previous.sarcastic or previous.question:
        return []
    q = fragment.parsed
    root = next((t for t in q.tokens if t.dep == "ROOT"), None)
    # "Nursing at Deakin": a field the tagger reads as a gerund is still no verb
    named = root is not None and root.tag == "VBG" and _field(root)
    if any(t.pos in ("VERB", "AUX") and not (named and t is root) for t in q.tokens):
        return []
    topic = _topic(previous)
    if root is None or topic is None or (root.pos not in ("NOUN", "PROPN", "ADJ") and not named):
        return []
    c = Clause(fragment, root, USER)
    if topic == "education":
        return _studies(c, root)
    if topic == "work":
        return _work(c, root)
    return _home(c)


def _topic(previous: Sentence) -> str | None:
    """The family a first-person statement opens without saying all of it: ``education``
    ("I started uni"), ``work`` ("I changed jobs", "I got a new job") or ``home`` ("We
    moved!", without where to)."""
    p = previous.parsed
    for verb in p.tokens:
        subjects = p.children(verb, "nsubj")
        if verb.pos != "VERB" or not any(s.lower in ("i", "we") for s in subjects):
            continue
        if verb.lemma.lower() not in _OPENING_VERBS or p.child(verb, "neg") is not None:
            continue
        words = {t.lemma.lower() for t in p.subtree(verb)} | {t.lower for t in p.subtree(verb)}
        if words & lx.SCHOOL_NOUNS or words & (lx.EDUCATION_NOUNS - {"major", "minor"}):
            return "education"
        if words & lx.JOB_NOUNS:
            return "work"
        where = [t for t in p.children(verb, "prep", "prt", "advmod") if t.lower in _WHERE_TO]
        if verb.lemma.lower() in lx.MOVE_VERBS and not where:
            return "home"
    return None


_WHERE_TO = frozenset({"to", "into", "in", "back", "out", "away"})


def _studies(c: Clause, root: Token) -> list[Reading]:
    """ "Engineering at Monash": the field, and the school it is studied at."""
    if not _field(root):
        return []
    p = c.parsed
    schools = [h for h in preps(p, root, "at", "in") if organisation(c, h) or h.pos == "PROPN"]
    return some(*(fact("education", value_span(c, h), change=True) for h in [root, *schools]))


def _field(token: Token) -> bool:
    """A field of study or a line of work: "engineering", "nursing", "psychology"."""
    words = (token.lower, token.lemma.lower())
    return any(w in lx.FIELDS or w in _SUBJECTS or w in lx.LANGUAGES
               or w.endswith(_SUBJECT_ENDINGS) for w in words)  # fmt: skip


def _work(c: Clause, root: Token) -> list[Reading]:
    """ "Designer at a small agency now": the role, and the workplace it is held at."""
    p = c.parsed
    if not vs.role(p, root):
        return []
    places = [h for h in preps(p, root, "at", "for", "with") if organisation(c, h)]
    return some(
        fact("occupation", value_span(c, root), change=True),
        *(fact("employer", value_span(c, h), change=True) for h in places),
    )


def _home(c: Clause) -> list[Reading]:
    """ "Tiny flat in Hackney": the place the speaker moved to."""
    p = c.parsed
    heads = [h for t in p.tokens if t.dep == "prep" and t.lower == "in"
             for h in p.children(t, "pobj")]  # fmt: skip
    return some(*(fact("location", value_span(c, place), change=True) for h in heads
                  if (place := place_of(c, h)) is not None and place.pos == "PROPN"))  # fmt: skip
