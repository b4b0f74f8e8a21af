"""Frames (pure): what a clause states, by its predicate, and how it holds now.

:func:`read_clause` finds the frame of a clause's predicate (a verb's in
:mod:`~kenning.longterm.parsing.verbs`, "be" in :mod:`~kenning.longterm.parsing.copula`);
:func:`settle` applies the clause's tense, negation and withdrawal to what it read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.arguments import (
    Frame,
    Reading,
    activity,
    contact_kind,
    contact_noun,
    fact,
    preps,
    some,
    value_span,
)
from kenning.longterm.parsing.changes import lapsed, shown
from kenning.longterm.parsing.clauses import Clause, contrastive
from kenning.longterm.parsing.copula import be_adjective, be_prep, copula, fan
from kenning.longterm.parsing.parsed import Token
from kenning.longterm.parsing.verbs import VERB_FRAMES

__all__ = ["Reading", "read_clause", "settle"]


def _participle(c: Clause) -> list[Reading]:
    """ "I'm obsessed with true crime": a participle read as the adjective it is."""
    return be_adjective(c, c.pred)


_FRAMES: dict[str, Frame] = {**VERB_FRAMES, "be": copula, "become": copula, "obsess": _participle}


def read_clause(c: Clause) -> list[Reading]:
    """What *c* states by its predicate's frame (before :func:`settle`)."""
    pred = c.pred
    if pred.pos in ("ADJ",) and pred.dep == "ROOT":
        return be_adjective(c, pred)
    if pred.pos in ("NOUN", "PROPN"):
        return _fragment(c)
    if pred.pos == "ADP" and pred.dep == "ROOT" and c.parsed.child(pred, "nsubj") is None:
        # "in Chicago now": read as after "I'm"
        return be_prep(c, pred)
    if c.topic is not None and pred.lemma.lower() in ("give", "make"):
        return _reaction(c, c.topic)
    if c.topic is not None and pred.lemma.lower() in ("keep", "help"):
        return _sustains(c, c.topic)
    told = c.topic is not None or c.owner is not None  # "doctor switched me", "my GP put me"
    if told and pred.lemma.lower() in ("switch", "put", "start", "take", "change"):
        return _prescribed(c)
    if c.topic is not None and pred.lemma != "be":
        return []
    if (joined := _hyphen_state(c)) is not None:
        return be_adjective(c, joined)
    if c.owner is not None and pred.lemma.lower() in ("die", "pass"):
        return _gone(c, c.owner)
    if c.owner is not None and (dead := _dead_contact(c, c.owner)) is not None:
        return [dead]
    if c.owner is not None and pred.lemma.lower() in ("steal", "lose") and pred.tag == "VBN":
        return _taken_away(c, c.owner)
    frame = _FRAMES.get(pred.lemma.lower()) or _FRAMES.get(pred.lower) or _by_stem(pred)
    found = frame(c) if frame is not None else []
    if not found:
        found = _line_of_work(c) or _used_for(c)
    if (
        not found
        and c.withdrawn
        and any(o.lower in ("it", "that") for o in c.parsed.children(pred, "dobj"))
    ):
        # "yoga is gone, I don't do it anymore": what "it" names, no longer so
        found = [Reading("", "", "", change=True, anaphor=True)]
    return found + _nots(c, found)


# Work told by its activity alone: "I'm freelancing now", "I'm no longer teaching".
_WORKING = lx.FIELDS | {"freelancing", "contracting", "consulting", "nursing", "tutoring"}


def _line_of_work(c: Clause) -> list[Reading]:
    """ "I'm freelancing now", "I'm no longer teaching": a line of work, said in the
    progressive with nothing after it, held now or withdrawn (not "I'm teaching a class")."""
    p, pred = c.parsed, c.pred
    if pred.tag != "VBG" or pred.lower not in _WORKING or p.children(pred, "dobj", "prep"):
        return []
    now = any(a.lower in lx.CURRENT_ADVERBS | {"days"}
              for a in p.children(pred, "advmod", "npadvmod"))  # fmt: skip
    if not (now or c.withdrawn):
        return []
    return some(fact("occupation", pred.lower, change=True))


# What a food does to someone who cannot take it: "gives me hives", "makes me sick".
_SYMPTOMS = frozenset("hives rash rashes reaction reactions migraine migraines headache headaches "
                      "sick ill bloated nauseous eczema cramps".split())  # fmt: skip


def _reaction(c: Clause, food: Token) -> list[Reading]:
    """ "Shellfish gives me hives", "Gluten makes me really sick": the speaker's intolerance
    of a food (as "I'm allergic to shellfish"), not of something in particular."""
    p = c.parsed
    if not any(t.lower == "me" for t in p.children(c.pred, "dative", "dobj", "nsubj", "ccomp")
               for t in [t, *p.subtree(t)]):  # fmt: skip
        return []
    said = {t.lower for t in p.subtree(c.pred) if t.i > c.pred.i}
    if not said & _SYMPTOMS or p.children(food, "det", "poss"):
        return []
    if vs.classify(p, food, entities=c.entities) != "diet" and food.lemma.lower() not in lx.FOODS:
        return []
    return some(fact("allergy", value_span(c, food), verb="allergic"))


def _sustains(c: Clause, doing: Token) -> list[Reading]:
    """ "Gardening keeps me sane", "Yoga helps me unwind": a pastime, told by what it does for
    the speaker (an activity or a gerund; not "Work keeps me busy")."""
    p = c.parsed
    if not any(o.lower == "me" for o in p.children(c.pred, "dobj", "nsubj", "ccomp")
               for o in [o, *p.subtree(o)]) or p.children(doing, "det", "poss"):  # fmt: skip
        return []
    gerund = doing.lower.endswith("ing") and doing.lower not in ("thing", "morning", "evening")
    return some(fact("hobby", doing.text)) if activity(doing) or gerund else []


def _prescribed(c: Clause) -> list[Reading]:
    """ "my doctor put me on statins", "switched me from amlodipine to losartan", "took me off
    warfarin": a medicine the speaker takes now (or no longer)."""
    p, pred = c.parsed, c.pred
    if not any(o.lower == "me" for o in p.children(pred, "dobj")):
        return []
    out = []
    for word, revoke in (("on", False), ("to", False), ("from", True), ("off", True)):
        holders = [pred, *p.children(pred, "prt")]
        for head in (h for t in holders for h in preps(p, t, word)):
            if vs.medication(p, head):
                out.append(fact("health", value_span(c, head), change=True, revoke=revoke))
    return some(*out)


def _hyphen_state(c: Clause) -> Token | None:
    """ "I've been gluten-free for years" parsed with "gluten" as the verb: the adjective
    the hyphen joins it to."""
    p, pred = c.parsed, c.pred
    if pred.pos != "VERB" or pred.i + 1 >= len(p):
        return None
    if p[pred.i + 1].text != "-":  # "I'm gluten intolerant": "gluten" as the verb too
        after = p[pred.i + 1]
        return after if after.lower in ("intolerant", "allergic") and after.head == pred.i else None
    joined = p[pred.i + 2] if pred.i + 2 < len(p) else None
    return joined if joined is not None and joined.pos == "ADJ" and joined.head == pred.i else None


# Verbs whose "with"/"on" names company or time, not a thing used.
_NOT_USING = frozenset("work meet partner volunteer live stay be start deal agree go".split())


def _used_for(c: Clause) -> list[Reading]:
    """ "I cycle to work on a Brompton", "I record podcasts with a Shure SM7B": a named thing
    of one's own that a habit is done with (the simple present; a name after "a"/"my")."""
    p, pred = c.parsed, c.pred
    if pred.tag not in ("VBP", "VBZ") or pred.lemma.lower() in _NOT_USING or c.negated:
        return []
    out = []
    holders = [pred, *p.children(pred, "dobj")]  # "record podcasts with a Shure SM7B"
    for head in (h for t in holders for h in preps(p, t, "on", "with")):
        owned = any(d.lower in ("a", "an", "my") for d in p.children(head, "det", "poss"))
        named = head.pos == "PROPN" or any(m.pos == "PROPN" for m in p.children(head, "compound"))
        if named and owned and head.lower not in _WEEKDAYS:
            out.append(fact("device", value_span(c, head)))
    return some(*out)


_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())


def _gone(c: Clause, owner: Token) -> list[Reading]:
    """ "My cat passed away", "our dog died": the pet (or the person) is withdrawn."""
    family = vs.classify(c.parsed, owner, entities=c.entities)
    if family not in ("pet", "family", "relationship"):
        return []
    kind = "partner" if family == "relationship" else ""
    found = fact(family, value_span(c, owner), kind=kind, change=True, revoke=True)
    return some(found)


# What a contact detail no longer in use is: "my number is dead".
_DEAD = frozenset("dead gone inactive disconnected deactivated closed defunct".split())


def _dead_contact(c: Clause, owner: Token) -> Reading | None:
    """ "My email doesn't work anymore", "my old number 555-0133 is dead": the contact detail
    named (or of that kind, whichever is held), withdrawn."""
    p, pred = c.parsed, c.pred
    lemma = owner.lemma.lower()
    if lemma not in lx.CONTACT_NOUNS or lemma in ("phone", "mobile", "cell", "mail"):
        return None  # "my phone is dead": the device, or its battery
    text = shown(p, owner)  # "my old number 555-0133 is dead"
    if not text and any(m.lower in ("old", "previous", "former") for m in p.children(owner)):
        return None  # "my old number doesn't work": one already replaced, not the one held
    kind = contact_kind(text) if text else contact_noun(p, owner)
    if pred.lemma.lower() == "work" and c.withdrawn:
        return Reading("contact", kind, text, change=True)  # withdrawn by the clause's "anymore"
    dead = any(a.lower in _DEAD for a in p.children(pred, "acomp"))
    if pred.lemma == "be" and dead and not c.negated:
        return Reading("contact", kind, text, revoke=True, change=True)
    return None


def _taken_away(c: Clause, owner: Token) -> list[Reading]:
    """ "my iPad got stolen", "my bike was stolen": a thing of one's own no longer held."""
    if vs.classify(c.parsed, owner, entities=c.entities) != "device":
        return []
    return some(fact("device", value_span(c, owner), change=True, revoke=True))


def _by_stem(pred: Token) -> Frame | None:
    """ "journaling" lemmatised as "journale": the frame of the word without "-ing" (or
    "-ed")."""
    word = pred.lower
    if word.endswith("ed") and pred.tag in ("VBD", "VBN"):  # "uninstalled" as "uninstalle"
        return _FRAMES.get(word[:-2]) or _FRAMES.get(word[:-1]) or _FRAMES.get(word[:-3])
    if not word.endswith("ing"):
        return None
    return _FRAMES.get(word[:-3]) or _FRAMES.get(word[:-3] + "e")


def _fragment(c: Clause) -> list[Reading]:
    """A noun said of the speaker without a verb, read as after "I'm": "Morning person here",
    "Vegan now", "Not a fan of cilantro", "Severe nut allergy here"."""
    p, pred = c.parsed, c.pred
    if pred.lemma.lower() == "fan":
        return fan(c, pred)
    if not p.children(pred, "det", "poss") and (found := be_adjective(c, pred)):
        return found
    if not any(a.lower == "here" for a in p.children(pred, "advmod")):
        return []
    if pred.lemma.lower() in lx.ALLERGY_NOUNS:
        what = [t for m in p.children(pred, "compound", "nmod") for t in p.subtree(m)]
        return some(fact("allergy", p.span(what)))
    # "Speech therapist here": a role is an occupation, anything else who they are
    family = "occupation" if vs.role(p, pred) else "identity"
    return some(fact(family, value_span(c, pred)))


def _nots(c: Clause, found: list[Reading]) -> list[Reading]:
    """ "I work at Bayer, not BASF", "I'm at Stripe now, not Square": the value after ", not"
    is withdrawn, in the family of the one stated (however the parser hung the "not")."""
    if not found or found[0].revoke:
        return []
    p = c.parsed
    out = []
    for neg in p.subtree(c.pred):
        if neg.dep == "neg" and contrastive(p, neg):
            after = p[neg.i + 1]
            head = next((t for t in p.tokens[neg.i + 1 :] if t.pos in ("PROPN", "NOUN")), after)
            out.append(replace(found[0], span=value_span(c, head), revoke=True, change=True))
    return out


def settle(c: Clause, readings: Iterable[Reading]) -> Iterator[Reading]:
    """*readings* of *c* as they hold now: nothing from the past unless it is a change,
    withdrawn ones as revocations, negated ones as negated facts (where the family keeps
    them)."""
    for r in readings:
        if c.stop:
            r = replace(r, change=True)
        if c.tense == "before" or (c.tense == "past" and not (r.change or r.revoke)):
            continue
        if lapsed(c) and r.family in ("hobby", "health", "diet", "device", "language"):
            yield replace(r, revoke=True, negated=False, change=True)  # "haven't smoked in years"
            continue
        if r.revoke or c.stop:
            # A negated withdrawal withdraws nothing ("I didn't quit"), unless the "not" is
            # the withdrawal itself ("I haven't touched chess in years": negated).
            if c.negated and not c.stop and not r.negated:
                continue
            yield replace(r, revoke=True, negated=r.negated and not c.negated)
        elif c.withdrawn or c.retracted:
            yield replace(r, revoke=True, negated=False)
        elif c.negated or r.negated:
            negated = _negated(r)
            if negated is not None:
                yield negated
        else:
            yield r


def _negated(r: Reading) -> Reading | None:
    """The negated fact, where a family keeps one: a dislike, "no pork", "no car"."""
    if r.family == "preference":
        return replace(r, verb="dislikes", negated=True)
    if r.family in ("diet", "device", "pet", "family", "language") and r.kind != "is_a":
        return replace(r, negated=True)
    return None
