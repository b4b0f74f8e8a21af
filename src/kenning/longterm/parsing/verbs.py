"""Verb frames (pure): what a clause states by its verb and the verb's arguments.

"have X" states a child, a pet, a device or a condition by what X names, "like X" a
preference, "was born in X" an origin. Pastimes and languages ("play X", "do X", "go X-ing",
"take up X", "speak X") are read in :mod:`~kenning.longterm.parsing.pastimes`, where one
lives, works and studies ("live in X", "move to X", "work at X", "study X") in
:mod:`~kenning.longterm.parsing.home_work`, the verbs of change ("stop", "leave", "switch from
X to Y") in :mod:`~kenning.longterm.parsing.changes`; :data:`VERB_FRAMES` has them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.arguments import (
    Frame,
    Reading,
    clefted,
    contact_kind,
    fact,
    generic,
    loose_objects,
    mine,
    name_of,
    objects,
    organisation,
    place_of,
    preps,
    qualifier,
    some,
    value_span,
    verb_phrase,
)
from kenning.longterm.parsing.changes import CHANGE_GROUPS
from kenning.longterm.parsing.clauses import Clause
from kenning.longterm.parsing.home_work import HOME_WORK_GROUPS
from kenning.longterm.parsing.parsed import Parsed, Token
from kenning.longterm.parsing.pastimes import PASTIME_GROUPS, become, hobby_verb, light

__all__ = ["VERB_FRAMES"]


_HOMES = frozenset("house flat apartment condo home place bungalow cottage townhouse".split())


_MONEY = re.compile(r"\d|\$|€|£")


def _origin(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if pred.lemma == "grow" and not any(t.lower == "up" for t in p.children(pred, "prt")):
        return []
    if pred.lemma == "bear" and pred.lower != "born":
        return _dislike(c)  # "I can't bear jazz fusion"
    out = []
    for prep in p.children(pred, "prep"):
        head = p.child(prep, "pobj")
        place = place_of(c, head) if head is not None and prep.lower in ("in", "on") else None
        if place is not None:
            now = any(a.lower == "now" for a in p.children(prep, "advmod"))
            out.append(fact("location" if now else "origin", value_span(c, place), change=True))
    return some(*out)


# Whom one may be seeing or dating without naming them yet.
_SOMEONE = frozenset("someone somebody guy girl woman man boy lady".split())


def _dating(c: Clause) -> list[Reading]:
    """ "I've been seeing someone, her name's Priya", "I'm dating Tom": the partner of now,
    where a name is given. Only in the progressive: "I saw someone" is an event."""
    p, pred = c.parsed, c.pred
    # "I'm not seeing Tom anymore": no longer a partner (read withdrawn by the clause)
    if pred.tag != "VBG" or (c.negated and not c.withdrawn):
        return []
    partner = p.child(pred, "dobj")
    if partner is None or not (partner.lower in _SOMEONE or partner.pos == "PROPN"):
        return []
    if pred.lemma.lower() == "see" and partner.lower not in _SOMEONE and not c.withdrawn:
        return []  # "I'm seeing Tom tonight": a plan
    # "I'm seeing someone" alone names nobody to keep
    name = partner if partner.pos == "PROPN" else _named_after(p)
    return some(fact("relationship", name.text, kind="partner")) if name is not None else []


def _named_after(p: Parsed) -> Token | None:
    """The name "her name's X" or "his name is X" gives in the same sentence."""
    for token in p.tokens:
        if token.lower != "name" or not any(o.lower in ("her", "his", "their")
                                             for o in p.children(token, "poss")):  # fmt: skip
            continue
        after = [t for t in p.tokens[token.i + 1 : token.i + 4] if t.pos == "PROPN"]
        if after and after[0].text[:1].isupper():
            return after[0]
    return None


def _cut(c: Clause) -> list[Reading]:
    """ "I've cut out sugar", "I'm cutting out dairy": a food avoided from now on."""
    if not any(t.lower == "out" for t in c.parsed.children(c.pred, "prt", "advmod", "prep")):
        return []
    heads = objects(c.parsed, c.pred)
    heads += [h for t in c.parsed.children(c.pred, "prep") if t.lower == "out"
              for h in c.parsed.children(t, "pobj")]  # fmt: skip
    found = [fact("diet", value_span(c, h), change=True) for h in heads
             if h.lemma.lower() in lx.FOODS or h.lower in lx.FOODS]  # fmt: skip
    return [replace(r, negated=True) for r in some(*found)]


def _like(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    verb = lx.LIKE_VERBS.get(pred.lemma.lower(), "likes")
    heads = objects(p, pred) or loose_objects(p, pred)
    first = heads[0] if heads else None
    if first is None or not (generic(p, first, definite_ok=verb == "prefers")
                             or _own_activity(p, first)):  # fmt: skip
        return []
    if mine(p, first) and not _own_activity(p, first):
        return []
    out = []
    for head in heads:
        agent = preps(p, head, "by") if p.child(head, "auxpass") is not None else []
        if agent:  # "I prefer to be contacted by text"
            out += [fact("preference", value_span(c, a), verb=verb) for a in agent]
        elif _own_activity(p, head):  # "I've been enjoying my spinning classes": done
            out.append(fact("hobby", value_span(c, head)))
        elif head.pos in ("VERB", "AUX"):
            span = verb_phrase(p, head)
            out += [fact("preference", span, verb=verb)] + [
                fact("preference", verb_phrase(p, v), verb=verb)
                for v in p.children(head, "conj") if v.pos == "VERB"]  # fmt: skip
        elif generic(p, head, definite_ok=verb == "prefers"):
            out.append(fact("preference", value_span(c, head), verb=verb,
                            qualifier=qualifier(p, head, pred)))  # fmt: skip
    return some(*out)


def _own_activity(p: Parsed, head: Token) -> bool:
    mine = any(m.lower == "my" for m in p.children(head, "poss"))
    return mine and head.lemma.lower() in ("class", "lesson", "session", "practice", "training")


def _dislike(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if pred.lemma in ("stand", "bear") and not (c.negated and p.child(pred, "aux")):
        return []
    heads = objects(p, pred) or loose_objects(p, pred)
    if not heads or not generic(p, heads[0]) or mine(p, heads[0]):
        return []
    found = [fact("preference", verb_phrase(p, h) if h.pos == "VERB" else value_span(c, h),
                  verb="dislikes") for h in heads]  # fmt: skip
    return [replace(r, negated=True) for r in some(*found)]


def _have(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    change = pred.lemma.lower() not in ("have", "own")
    out = []
    heads = objects(p, pred)
    # Coordinated things share the family one of them names: "a PS5 and a Switch".
    shared = next((f for h in heads if (f := vs.classify(p, h, entities=c.entities))), None)
    for head in heads:
        if vs.is_deictic(p, head) and head.lower not in ("pets",):
            continue
        family = vs.classify(p, head, entities=c.entities) or (
            shared if len(heads) > 1 and head.pos == "PROPN" else None
        )
        if head.lemma.lower() in lx.JOB_NOUNS:
            places = [h for t in (head, pred) for h in preps(p, t, "at", "with", "for")
                      if organisation(c, h)]  # fmt: skip
            out += [fact("employer", value_span(c, name_of(c, h)), change=change) for h in places]
            roles = [h for t in (head, pred) for h in preps(p, t, "as")]  # "a job as a nurse"
            out += [fact("occupation", value_span(c, h), change=change) for h in roles]
            mods = p.children(head, "compound", "amod")
            kinds = [m for m in mods if m.lower not in lx.EVALUATIVE]
            if not places and not roles and kinds:  # "a nursing job"; not "a new job"
                out.append(fact("occupation", value_span(c, head), change=change))
        elif family == "relationship":
            out.append(fact("relationship", value_span(c, head), kind="partner", change=change))
        elif head.lemma.lower() in ("loan", "mortgage", "debt"):
            out.append(fact("finance", value_span(c, head), kind="debt", change=change))
        elif family == "allergy" and head.lemma.lower() in lx.ALLERGY_NOUNS:
            what = [m for m in p.children(head, "compound", "amod", "nmod") if m.i < head.i]
            what = [m for m in what if m.lower not in ("severe", "mild", "bad", "serious")]
            if what:  # "a peanut allergy", "a tree nut allergy"
                out.append(fact("allergy", p.span(what), change=change))
        elif head.lemma.lower() in _HOMES and pred.lemma.lower() in ("buy", "get", "own", "rent"):
            # "we bought a house in Halifax": where the speaker lives (not "a house for my mum")
            places = [
                t
                for h in preps(p, head, "in") + preps(p, pred, "in")
                if (t := place_of(c, h)) is not None and not preps(p, head, "for")
            ]
            out += [fact("location", value_span(c, t), change=True) for t in places[:1]]
        elif pred.lemma.lower() == "own" and head.lemma.lower() in lx.WORKPLACE_NOUNS:
            out.append(fact("employer", value_span(c, head)))
        elif family is None and _aged(p, head):
            out.append(fact("family", vs.hyphenated(p, head)))  # "we have a 3-year-old"
        elif (
            family is None
            and pred.lemma.lower() in ("buy", "get")
            and head.pos == "PROPN"
            and any(d.lower in ("a", "an") for d in p.children(head, "det"))
        ):
            out.append(fact("device", value_span(c, head), change=True))  # "bought a Steam Deck"
        elif family in ("family", "pet", "device", "health", "education", "allergy"):
            out.append(fact(family, value_span(c, head), change=change or _born(c, head)))
    return some(*out)


def _rent(c: Clause) -> list[Reading]:
    """ "We're renting a flat in Glasgow": where the speaker lives (a car or a room for a
    trip says nothing)."""
    return [r for r in _have(c) if r.family == "location"]


def _aged(p: Parsed, head: Token) -> bool:
    """ "a 3-year-old", "a six-month-old": a child told by their age."""
    years = [a for a in p.children(head, "npadvmod") if a.lemma.lower() in ("year", "month")]
    return head.lower == "old" and any(p.child(y, "nummod") is not None for y in years)


def _take(c: Clause) -> list[Reading]:
    """ "I took a job at Amazon" (as "got a job"); else "take" as a light verb ("I take
    ballet classes")."""
    heads = objects(c.parsed, c.pred)
    if any(o.lemma.lower() in lx.JOB_NOUNS for o in heads):
        return _have(c)
    # "I take insulin", "stopped taking antidepressants": a treatment kept up (health)
    drugs = [h for h in heads if vs.medication(c.parsed, h) and not mine(c.parsed, h)]
    if drugs:
        return some(*(fact("health", value_span(c, h)) for h in drugs))
    return light(c)


def _promoted(c: Clause) -> list[Reading]:
    """ "I got promoted to shift supervisor", "promoted to manager at the hotel": the new
    occupation (and the employer, where named)."""
    p = c.parsed
    out = [fact("occupation", value_span(c, h), change=True) for h in preps(p, c.pred, "to")]
    for verb in p.children(c.pred, "xcomp"):  # "to shift supervisor" misread as a verb
        to = next((a for a in p.children(verb, "aux") if a.lower == "to"), None)
        if to is not None and not out:
            out.append(fact("occupation", p.span([t for t in p.subtree(verb) if t.i > to.i]),
                            change=True))  # fmt: skip
    out += [fact("employer", value_span(c, name_of(c, h)), change=True)
            for t in [c.pred, *preps(p, c.pred, "to")] for h in preps(p, t, "at")
            if organisation(c, h)]  # fmt: skip
    return some(*out)


def _born(c: Clause, head: Token) -> bool:
    """ "We just had a baby", "I had twins in May": a child had, in the past, is born (a
    change that holds now)."""
    p = c.parsed
    births = ("baby", "twins", "triplets", "son", "daughter")
    had = c.pred.tag == "VBD" and c.pred.lemma.lower() == "have"
    return had and any(t.lemma.lower() in births for t in p.subtree(head))


def _use(c: Clause) -> list[Reading]:
    p = c.parsed
    out = []
    for head in objects(p, c.pred):
        head = clefted(p, c.pred, head) or head  # "Excel is what I use for budgeting"
        if not generic(p, head, definite_ok=False):
            continue
        family = vs.classify(p, head, entities=c.entities)
        product = head.pos == "PROPN" and not (c.entities and head.ent in ("PERSON", "GPE", "DATE"))
        if family == "device" or (family is None and product):
            out.append(fact("device", value_span(c, head), qualifier=qualifier(p, head, c.pred)))
    return some(*out)


def _drive(c: Clause) -> list[Reading]:
    p = c.parsed
    out = [fact("device", value_span(c, h), verb="drives") for h in objects(p, c.pred)
           if generic(p, h)]  # fmt: skip
    out += [
        fact("employer", value_span(c, name_of(c, h)))
        for h in preps(p, c.pred, "for")
        if organisation(c, h)
    ]
    return some(*out)


def _code(c: Clause) -> list[Reading]:
    """ "I code in Python": the language is a tool the speaker uses."""
    tools = preps(c.parsed, c.pred, "in")
    if tools:
        return some(*(fact("device", value_span(c, t)) for t in tools if t.pos == "PROPN"
                      or t.lower in lx.DEVICE_NOUNS))  # fmt: skip
    return hobby_verb(c)


def _eat(c: Clause) -> list[Reading]:
    p = c.parsed
    out = []
    if c.pred.lemma.lower() == "drink" and not objects(p, c.pred) and not loose_objects(p, c.pred):
        return some(fact("diet", "drinking"))  # "I don't drink (anymore)": alcohol
    for head in objects(p, c.pred) or loose_objects(p, c.pred):
        word = vs.obj(value_span(c, head))
        kinds = [m for m in p.children(head, "amod", "compound") if m.lower in lx.DIETS]
        if kinds and not c.negated:  # "I only eat halal meat": the diet, not the food
            out.append(fact("diet", kinds[0].lower))
            continue
        if word in lx.DIETS or head.lemma.lower() in lx.FOODS or (c.negated and generic(p, head)):
            out.append(fact("diet", value_span(c, head)))
    return some(*out)


def _avoid(c: Clause) -> list[Reading]:
    """ "I avoid gluten": a standing negative, in the family the object names."""
    p = c.parsed
    out = []
    for head in objects(p, c.pred) or loose_objects(p, c.pred):
        family = vs.classify(p, head, entities=c.entities)
        if family == "diet" or head.lemma.lower() in lx.FOODS:
            out.append(fact("diet", value_span(c, head)))
    return [replace(r, negated=True) for r in some(*out)]


def _graduate(c: Clause) -> list[Reading]:
    heads = [h for h in preps(c.parsed, c.pred, "from") if organisation(c, h)]
    # "I graduated in nursing": the field (not "in 2019", "in May")
    heads += [h for h in preps(c.parsed, c.pred, "in") if generic(c.parsed, h)
              and h.pos == "NOUN" and not h.text[:1].isdigit()]  # fmt: skip
    # "graduated from Edinburgh with a law degree": the degree too
    heads += [h for h in preps(c.parsed, c.pred, "with")
              if vs.classify(c.parsed, h, entities=c.entities) == "education"]  # fmt: skip
    return some(*(fact("education", value_span(c, h), change=True) for h in heads))


def _health(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    words = {"suffer": ("from",), "diagnose": ("with",), "recover": ("from",),
             "struggle": ("with",), "deal": ("with",), "cope": ("with",),
             "battle": ()}[pred.lemma.lower()]  # fmt: skip
    heads = preps(p, pred, *words) + objects(p, pred)
    return some(*(fact("health", value_span(c, h), change=pred.lemma == "diagnose") for h in heads
                   if generic(p, h)))  # fmt: skip


def _money(c: Clause, kind: str) -> list[Reading]:
    p, pred = c.parsed, c.pred
    heads = objects(p, pred) + preps(p, pred, "about", "around")
    out = []
    for head in heads:
        tokens = [t for t in p.subtree(head)]
        if not any(_MONEY.search(t.text) for t in tokens):
            continue
        extra = [t for a in p.children(head, "npadvmod") for t in p.subtree(a)]
        out.append(fact("finance", p.span(tokens + extra), kind=kind))
    return some(*out)


def _earn(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if any(o.lower == "living" for o in p.children(pred, "dobj")):
        # "I make my living as a tattoo artist", "I earn a living as a translator"
        holders = [pred, *p.children(pred, "dobj")]
        return some(*(fact("occupation", value_span(c, h)) for t in holders
                      for h in preps(p, t, "as")))  # fmt: skip
    return _money(c, "income")


def _owe(c: Clause) -> list[Reading]:
    return _money(c, "debt")


def _bank(c: Clause) -> list[Reading]:
    heads = preps(c.parsed, c.pred, "with")
    return some(*(fact("finance", value_span(c, h), kind="bank") for h in heads))


def _pay(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if not any(t.lower == "off" for t in p.children(pred, "prt")):
        return []
    heads = [o for o in objects(p, pred) if o.lemma.lower() in ("loan", "debt", "mortgage")]
    return some(*(fact("finance", value_span(c, h), kind="debt") for h in heads))


def _marry(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if pred.tag == "VBD" and pred.lemma.lower() in ("marry", "divorce"):
        return _married(c)
    if pred.tag != "VBN" and pred.pos != "ADJ":
        return []
    if not p.children(pred, "auxpass", "aux") and pred.dep not in ("acomp", "ROOT"):
        return []
    return some(fact("relationship", pred.lower, change=True))


def _married(c: Clause) -> list[Reading]:
    """ "We married in June", "Laura and I divorced in the spring", "I divorced my husband":
    the state the change leaves; a divorce also ends whichever partner is held."""
    state = "married" if c.pred.lemma.lower() == "marry" else "divorced"
    out = [fact("relationship", state, change=True)]
    if state == "divorced":
        out.append(Reading("relationship", "partner", "", revoke=True, change=True))
    return some(*out)


def _call(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if not any(o.lower == "me" for o in p.children(pred, "dobj")):
        return []
    names = [t for t in p.children(pred, "oprd", "xcomp", "attr", "npadvmod", "dobj")
             if t.lower != "me" and t.pos == "PROPN"]  # fmt: skip
    return some(*(fact("name", value_span(c, n), kind="preferred name") for n in names[:1]))


def _reach(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if not any(o.lower == "me" for o in p.children(pred, "dobj")):
        return []
    out = []
    for prep in p.children(pred, "prep"):
        if prep.lower in ("at", "on", "via"):
            tokens = [t for t in p.subtree(prep) if t.i > prep.i and t.dep != "det"]
            text = p.span(tokens)
            out.append(fact("contact", text, kind=contact_kind(text)))
    return some(*out)


def _listen(c: Clause) -> list[Reading]:
    """ "I've been listening to audiobooks": a kind of thing listened to (a bare plural, or "a
    lot of" one) is a pastime; "the soundtrack" is not."""
    p = c.parsed
    out = []
    for head in preps(p, c.pred, "to"):
        if head.lemma.lower() in ("lot", "lots", "bunch", "ton", "tons"):
            head = next(iter(preps(p, head, "of")), head)
        if p.children(head, "det", "poss") or head.pos != "NOUN":
            continue
        # a kind of recording listened to is a pastime; a kind of music, a taste
        out.append(fact("hobby" if head.tag == "NNS" else "preference", value_span(c, head)))
    return some(*out)


def _smoke(c: Clause) -> list[Reading]:
    """ "I smoke": a smoker (health); "I used to smoke but I quit" withdraws it."""
    if c.parsed.child(c.pred, "dobj") is not None:
        return []
    return some(fact("health", "smoker"))


def _keep(c: Clause) -> list[Reading]:
    """ "I keep kosher"; "I'm keeping my Volvo": a thing of one's own, still held."""
    p = c.parsed
    heads = [*objects(p, c.pred), *loose_objects(p, c.pred)]
    kept = [h for h in heads if mine(p, h) and vs.classify(p, h, entities=c.entities) == "device"]
    pets = [h for h in heads if not mine(p, h) and vs.classify(p, h, entities=c.entities) == "pet"]
    return some(*(fact("diet", h.lower) for h in heads if h.lower in lx.DIETS),
                *(fact("pet", value_span(c, h)) for h in pets),  # "I keep chickens"
                *(fact("device", value_span(c, h)) for h in kept))  # fmt: skip


def _located(c: Clause) -> list[Reading]:
    """ "We're based out of Melbourne", "I'm located in Austin"."""
    p, pred = c.parsed, c.pred
    heads = preps(p, pred, "in", "near")
    heads += [h for out in p.children(pred, "prep") if out.lower == "out"
              for h in preps(p, out, "of")]  # fmt: skip
    return some(*(fact("location", value_span(c, t)) for h in heads if (t := place_of(c, h))))


# -- dispatch --------------------------------------------------------------------------------


def _table() -> dict[str, Frame]:
    """Each verb (a lemma) with its frame."""
    table: dict[str, Frame] = {}
    groups: list[tuple[Iterable[str], Frame]] = [
        *PASTIME_GROUPS, (lx.ORIGIN_VERBS, _origin),
        (("promote",), _promoted), (("see", "date"), _dating), (("cut",), _cut),
        (("take",), _take),
        (lx.LIKE_VERBS, _like),
        (("hate", "dislike", "detest", "loathe", "despise", "stand"), _dislike),
        (("have", "own", "get", "adopt", "buy", "land"), _have), (("avoid",), _avoid),
        (("graduate",), _graduate), (("use", "wear"), _use), (("rent",), _rent),
        (("drive", "ride"), _drive), (("eat", "drink"), _eat),
        (("suffer", "diagnose", "recover", "struggle", "deal", "cope"), _health),
        (("earn", "make"), _earn),
        (("owe",), _owe), (("bank",), _bank), (("pay",), _pay),
        (("marry", "married", "divorce", "divorced", "engage", "engaged", "widow"), _marry),
        (("call",), _call),
        (("reach", "contact", "text", "email", "message"), _reach),
        (("smoke",), _smoke), (("keep",), _keep),
        (("base", "locate"), _located), (("listen",), _listen),
        (("code", "program"), _code), (("turn",), become),
    ]  # fmt: skip
    groups += HOME_WORK_GROUPS + CHANGE_GROUPS
    for words, frame in groups:
        for word in words:
            table[word] = frame
    return table


VERB_FRAMES: dict[str, Frame] = _table()
"""The frame of each verb (by lemma)."""
