"""Frames of change (pure): what a clause withdraws or replaces.

"stop", "quit", "give up", "drop", "sell" and "cancel" withdraw their object in the family it
names ("I sold my car", "I gave up sugar"); "leave" an employer (or a place); "be laid off" or
"fired" an employer; "retire" an occupation; "break up with" a partner; "forget my old number"
a contact detail; "switch from X to Y", "replace X with Y", "swap X for Y" withdraw X and state
Y.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    mine,
    name_of,
    objects,
    organisation,
    preps,
    some,
    stopped_thing,
    value_span,
    verb_phrase,
)
from kenning.longterm.parsing.clauses import Clause
from kenning.longterm.parsing.parsed import Parsed, Token

__all__ = ["CHANGE_GROUPS", "lapsed", "shown", "switch"]


def _retire(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = [fact("occupation", "retired", change=True)]
    for head in preps(p, pred, "from"):
        span = verb_phrase(p, head) if head.pos == "VERB" else value_span(c, head)
        out.append(fact("occupation", span, change=True, revoke=True))
    return some(*out)


# What one leaves or quits in its own family: "I quit Twitter", "left my PhD program".
_LEFT_THINGS = frozenset({"device", "education", "pet", "relationship"})


def _leave(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = []
    for head in p.children(pred, "dobj"):
        if head.lemma.lower() in lx.JOB_NOUNS:
            named = [fact("employer", value_span(c, name_of(c, h)), change=True, revoke=True)
                     for t in (head, pred) for h in preps(p, t, "at", "with")
                     if organisation(c, h)]  # fmt: skip
            if span := _job_place(c, head):  # "I left my bank job"
                named.append(fact("employer", span, change=True, revoke=True))
            # "I quit my job": whatever employer is held
            out += named or [Reading("employer", "employer", "", revoke=True, change=True)]
        elif (family := vs.classify(p, head, entities=c.entities)) in _LEFT_THINGS:
            kind = "partner" if family == "relationship" else ""  # "I left my husband"
            out.append(fact(family or "", value_span(c, head), kind=kind, change=True,
                            revoke=True))  # fmt: skip
        elif head.lemma.lower() in lx.CLUBS or activity(head):  # "left the choir", "quit golf"
            out.append(fact("hobby", value_span(c, head), change=True, revoke=True))
        elif (c.entities and head.ent in ("GPE", "LOC")) or head.lower in lx.COUNTRIES:
            out.append(fact("location", value_span(c, head), change=True, revoke=True))
        elif organisation(c, head) and head.pos == "PROPN":
            out.append(fact("employer", value_span(c, name_of(c, head)), change=True, revoke=True))
    return some(*out) if out or pred.lemma != "quit" else _stop(c)


def _dismissed(c: Clause) -> list[Reading]:
    """ "I was laid off from Meta", "I got fired": the employer (named, or whichever is held)
    is withdrawn; only in the passive ("I fired my accountant" withdraws nothing of mine)."""
    p, pred = c.parsed, c.pred
    passive = p.children(pred, "auxpass", "nsubjpass") or any(
        a.lemma == "get" for a in p.children(pred, "aux"))  # fmt: skip
    if not passive or (pred.lemma == "lay" and not p.children(pred, "prt")):
        return []
    named = [fact("employer", value_span(c, name_of(c, h)), change=True, revoke=True)
             for h in preps(p, pred, "from", "at", "by") if organisation(c, h)]  # fmt: skip
    return some(*named) or [Reading("employer", "employer", "", revoke=True, change=True)]


def _resign(c: Clause) -> list[Reading]:
    """ "I resigned from Tesco", "I stepped down from my role at Oxfam": the employer named
    (by itself, or by the role's "at X") is withdrawn."""
    p, pred = c.parsed, c.pred
    if pred.lemma == "step" and not any(
        t.lower == "down" for t in p.children(pred, "prt", "advmod")
    ):
        return []
    heads = preps(p, pred, "from", "as", "at")
    places = [h for h in heads if h.lemma.lower() not in lx.JOB_NOUNS and organisation(c, h)]
    jobs = [h for h in heads if h.lemma.lower() in lx.JOB_NOUNS]
    places += [x for h in jobs for x in preps(p, h, "at", "with") if organisation(c, x)]
    out = [fact("employer", value_span(c, name_of(c, h)), change=True, revoke=True)
           for h in places]  # fmt: skip
    return some(*out, *(fact("employer", span, change=True, revoke=True)
                        for h in jobs if (span := _job_place(c, h))))  # fmt: skip


def _job_place(c: Clause, job: Token) -> str:
    """ "the council job", "my Google job": the workplace named before the job noun."""
    p = c.parsed
    named = [m for m in p.children(job, "compound", "nmod") if m.i < job.i]
    if not named or not (organisation(c, named[-1]) or named[-1].pos == "PROPN"):
        return ""
    return p.span([t for m in named for t in p.subtree(m)])


def _close(c: Clause) -> list[Reading]:
    """ "I closed my Chase account": the bank named is withdrawn."""
    p = c.parsed
    accounts = [o for o in objects(p, c.pred) if o.lemma.lower() == "account" and mine(p, o)]
    banks = [m for a in accounts for m in p.children(a, "compound") if m.pos == "PROPN"]
    return some(*(fact("finance", value_span(c, b), kind="bank", change=True, revoke=True)
                  for b in banks))  # fmt: skip


def _stop(c: Clause) -> list[Reading]:
    """stop, quit, give up or away, drop, sell, cancel + an object: the object is withdrawn, in the
    family it names ("I sold my car", "I dropped my Spanish class", "I gave up sugar")."""
    p, pred = c.parsed, c.pred
    # "gave up sugar", "gave our dog away"; not "gave my sister a book"
    away = p.children(pred, "prt", "advmod")
    if pred.lemma == "give" and not any(t.lower in ("up", "away") for t in away):
        return []
    heads = objects(p, pred)
    if pred.lemma == "drop" and preps(p, pred, "in", "on", "into", "onto", "off"):
        return []  # "I dropped my phone in the lake": let fall, not given up
    if pred.lemma == "give":  # "gave up on knitting"
        heads += [h for t in away for h in preps(p, t, "on")] + preps(p, pred, "on")
    if pred.lemma in ("drop", "rid"):  # "dropped out of my PhD", "got rid of my Apple Watch"
        outs = [t for t in p.children(pred, "prep", "prt", "advmod") if t.lower == "out"]
        heads += [h for t in [pred, *outs] for h in preps(p, t, "of")]
    if not heads:
        if p.children(pred, "xcomp", "ccomp"):
            return []  # "I stopped eating meat": the clause under it is read as withdrawn
        return [Reading("", "", "", revoke=True, change=True, anaphor=True)]
    out: list[Reading | None] = []
    for head in heads:
        if vs.is_deictic(p, head):
            out.append(Reading("", "", "", revoke=True, change=True, anaphor=True))
            continue
        head = _held_through(p, head)  # "my gym membership": the gym
        family = (lx.HABITS.get(head.lower) or vs.classify(p, head, entities=c.entities)
                  or activity(head))  # fmt: skip
        bare = head.pos == "NOUN" and not p.children(head, "det", "poss")
        if family is None and head.lemma.lower() in ("class", "course", "lesson", "program"):
            family = "education"  # "I dropped my evening class"
        if p.child(head, "nummod") is not None and family in (None, "hobby"):
            continue  # "I sold three paintings": things counted, not a pastime
        if family is None and (bare or head.lemma.lower() in lx.CLUBS):
            family = "hobby"  # "I quit netball", "quit the band": a pastime
        if family is None and head.pos == "PROPN" and (mine(p, head) or pred.lower != "quit"):
            family = "device"  # "gave away my PS5", "uninstalled TikTok": a thing of mine
        if family is not None:
            out.append(fact(family, value_span(c, head), change=True, revoke=True))
    return some(*out)


# Nouns through which one holds something else: "my gym membership", "my Netflix account".
_THROUGH = frozenset("membership subscription account plan pass".split())


def _held_through(p: Parsed, head: Token) -> Token:
    """The thing a membership or subscription is of ("gym" of "my gym membership")."""
    if head.lemma.lower() not in _THROUGH:
        return head
    of = [m for m in p.children(head, "compound") if m.i == head.i - 1]
    return of[0] if of else head


def _unsubscribed(c: Clause) -> list[Reading]:
    """ "I unsubscribed from Netflix", "came off the pill": withdrawn."""
    p, pred = c.parsed, c.pred
    if pred.lemma.lower() == "come" and pred.tag in ("VBP", "VBZ"):
        # "I come from Ohio" (a name; not "from a big family")
        homes = [h for h in preps(p, pred, "from") if h.pos == "PROPN" or h.lower in lx.COUNTRIES]
        return some(*(fact("origin", value_span(c, h)) for h in homes))
    if pred.lemma.lower() == "come":
        offs = [t for t in p.children(pred, "prt", "prep") if t.lower == "off"]
        heads = [h for t in offs for h in [*p.children(t, "pobj")]] + [
            o for o in p.children(pred, "dobj") if offs]  # fmt: skip
        return some(*(fact("health", value_span(c, h), change=True, revoke=True)
                       for h in heads if vs.medication(p, h)))  # fmt: skip
    heads = [_held_through(p, h) for h in preps(p, pred, "from")]
    found = (
        fact(f, value_span(c, h), change=True, revoke=True)
        for h in heads
        if (f := vs.classify(p, h, entities=c.entities) or activity(h)) is not None
    )
    return some(*found)


def _ended(c: Clause) -> list[Reading]:
    """ "I ended things with Jake", "we ended it": a partner no longer."""
    p, pred = c.parsed, c.pred
    if not any(o.lower in ("things", "it", "relationship") for o in p.children(pred, "dobj")):
        return []
    heads = [h for t in (pred, *p.children(pred, "dobj")) for h in preps(p, t, "with")]
    partners = [h for h in heads if h.pos == "PROPN" or h.lemma.lower() in lx.PARTNERS]
    return some(*(fact("relationship", value_span(c, h), kind="partner", change=True, revoke=True)
                   for h in partners))  # fmt: skip


def switch(c: Clause) -> list[Reading]:
    """switch/go from X to Y, replace X with Y, swap X for Y: X is withdrawn, Y stated, in the
    family the object or the values name ("switched my bank from HSBC to Revolut")."""
    p, pred = c.parsed, c.pred
    named = p.child(pred, "dobj")
    if named is None and pred.lemma.lower() == "trade":  # "traded in the Jeep for a Kia"
        named = next(iter(preps(p, pred, "in")), None)
    # "changed careers from law to medicine": the parser may hang the change on the object
    own = [pred, *([named] if named is not None else [])]
    froms = [h for t in own for h in preps(p, t, "from")]
    holders = [*own, *(q for t in own for q in p.children(t, "prep"))]
    tos = [_being(p, h) for t in holders for h in preps(p, t, "to", "for", "with", "into")]
    tos += [x for x in p.children(pred, "advcl") if p.child(x, "aux") and x.tag == "VB"]
    # "switched from teaching to UX design": the parser may hang "to Y" on X
    tos += [_being(p, h) for f in froms for h in preps(p, f, "to", "into")]
    froms = [_being(p, h) for h in froms]
    if not froms and named is not None and tos:
        froms, named = [named], None
    family, kind = _switch_family(c, named, [*tos, *froms])
    if family is None and pred.lemma.lower() == "trade" and froms:
        family = "device"  # "traded in the F-150 for a RAV4": a thing of one's own
    if family is None:
        return []
    out = [_switched(c, h, family, kind, revoke=False) for h in tos]
    out += [_switched(c, h, family, kind, revoke=True) for h in froms]
    if family == "occupation":  # "from sales to customer success at HubSpot": where, too
        places = [x for h in (pred, *tos) for x in preps(p, h, "at") if organisation(c, x)]
        out += [fact("employer", value_span(c, name_of(c, x)), change=True) for x in places]
    return some(*out)


def _being(p: Parsed, head: Token) -> Token:
    """ "from being a teacher to being a nurse": the role, not "being"."""
    if head.lemma == "be":
        return p.child(head, "attr", "acomp") or head
    return head


def _switch_family(
    c: Clause, named: Token | None, values: Iterable[Token]
) -> tuple[str | None, str]:
    p = c.parsed
    if named is not None:
        lemma = named.lemma.lower()
        own = lx.OWN_ATTRIBUTES.get(lemma)
        if own == "finance":
            return "finance", lemma
        if lemma in ("career", "profession", "field"):
            return "occupation", ""
        if lemma in lx.JOB_NOUNS:
            return "employer", ""
        if lemma in lx.CONTACT_NOUNS:
            return "contact", lx.CONTACT_NOUNS[lemma]
        family = vs.classify(p, named, entities=c.entities)
        if family is not None:
            return family, ""
    for head in values:
        if head.dep == "attr":  # "from being a teacher to being a nurse": roles
            return "identity", ""
        family = vs.classify(p, head, entities=c.entities) or activity(head)
        if family is None and (head.text == "IT" or head.lower in lx.FIELDS):
            family = "occupation"
        if family is not None:
            return family, ""
    return None, ""


def _switched(c: Clause, head: Token, family: str, kind: str, *, revoke: bool) -> Reading | None:
    p = c.parsed
    if head.lemma.lower() == "diet":
        mods = [m for m in p.children(head, "amod", "compound")]
        span = p.span(mods) if mods else value_span(c, head)
    elif head.pos == "VERB" and head.dep != "advcl":
        span = verb_phrase(p, head)
    else:
        span = head.text if head.dep == "advcl" else value_span(c, head)
    return fact(family, span, kind=kind, change=True, revoke=revoke)


def _retract(c: Clause) -> list[Reading]:
    """ "forget my old number 555-0199", "please forget my email address": the speaker's own
    contact detail, withdrawn (without a value: whatever is held)."""
    p = c.parsed
    out: list[Reading | None] = []
    for head in p.children(c.pred, "dobj"):
        lemma = head.lemma.lower()
        family = vs.classify(p, head, entities=c.entities)
        named = head.pos == "PROPN" and family == "device"  # "Deleted Tinder."
        if (mine(p, head) or named) and family in ("device", "pet"):  # "deleted my Instagram"
            thing = _held_through(p, head)  # "deleted my Twitter account": Twitter
            out.append(fact(family or "", value_span(c, thing), change=True, revoke=True))
        if mine(p, head) and (whole := _whole_attribute(head)) is not None:
            out.append(whole)  # "please forget my birthday": whatever is held
            continue
        if not mine(p, head) or lemma not in lx.CONTACT_NOUNS:
            continue
        if text := shown(p, head):
            out.append(fact("contact", text, kind=contact_kind(text), revoke=True))
        else:
            kind = contact_noun(p, head)
            out.append(Reading("contact", kind, "", revoke=True, change=True))
    return some(*out, *_retracted_about(c))


def shown(p: Parsed, head: Token) -> str:
    """The value written beside a contact noun ("my old number 555-0199"), "" for none."""
    beside = [t for child in p.children(head) if child.dep in ("nummod", "appos", "punct")
              and (child.i > head.i or child.dep == "nummod")
              for t in p.subtree(child)]  # fmt: skip
    return p.span([t for t in beside if t.pos != "PUNCT" or t.text == "-"])


def _retracted_about(c: Clause) -> list[Reading | None]:
    """ "scratch what I said about my job", "ignore what I told you about my diet": what the
    speaker said of their own thing, withdrawn (a job: whichever employer is held)."""
    p = c.parsed
    out: list[Reading | None] = []
    for about in p.subtree(c.pred):
        head = p.child(about, "pobj") if about.lower == "about" else None
        if head is None or not mine(p, head):
            continue
        if (whole := _whole_attribute(head)) is not None:
            out.append(whole)
            continue
        family = vs.classify(p, head, entities=c.entities) or activity(head)
        if family is not None:
            out.append(fact(family, value_span(c, head), change=True, revoke=True))
    return out


# The single-valued attributes a noun of the speaker's names, withdrawn as a whole ("forget my
# birthday", "ignore what I said about my job"): (family, attribute).
_WHOLE = {
    "name": ("name", "name"),
    "age": ("age", "age"),
    "occupation": ("occupation", "occupation"),
    "employer": ("employer", "employer"),
    "origin": ("origin", "hometown"),
}


def _whole_attribute(head: Token) -> Reading | None:
    """The withdrawal of whatever value the attribute *head* names holds (a job: the
    employer), or None where it names no single-valued attribute."""
    lemma = head.lemma.lower()
    family = "employer" if lemma in lx.JOB_NOUNS else lx.OWN_ATTRIBUTES.get(lemma)
    if family not in _WHOLE:
        return None
    name, attribute = _WHOLE[family]
    return Reading(name, attribute, "", revoke=True, change=True)


def _break(c: Clause) -> list[Reading]:
    """ "I broke up with my boyfriend", "my partner and I split", "Tom and I separated"."""
    p, pred = c.parsed, c.pred
    if pred.lemma.lower() == "break" and not any(t.lower == "up" for t in p.children(pred, "prt")):
        return []
    heads = [h for h in preps(p, pred, "with") if h.lemma.lower() in lx.PARTNERS]
    # "my girlfriend and I broke up", "Tom and I split up"
    before = [t for t in p.children(pred, "nsubj", "npadvmod") if t.i < pred.i]
    heads += [t for t in before if t.lemma.lower() in lx.PARTNERS and mine(p, t)]
    heads += [t for t in before if t.pos == "PROPN"
              and any(x.lower == "i" for x in p.children(t, "conj"))]  # fmt: skip
    return some(*(fact("relationship", value_span(c, h), kind="partner", change=True, revoke=True)
                   for h in heads))  # fmt: skip


# "barely touched chess in months", "haven't touched my guitar for years": let go of.
_SCARCELY = frozenset({"barely", "hardly", "scarcely", "rarely"})
_LONG_SPANS = frozenset({"months", "years", "ages", "weeks", "decades", "while", "forever"})


def lapsed(c: Clause) -> bool:
    """ "I haven't smoked in years", "haven't painted for months": a negated perfect over a
    long time is a habit let go of, not a denial."""
    if not c.negated or c.tense != "perfect":
        return False
    holders = [c.pred, *c.parsed.children(c.pred, "dobj")]
    return any(h.lower in _LONG_SPANS for t in holders for h in preps(c.parsed, t, "in", "for"))


def _lost_interest(c: Clause) -> list[Reading]:
    """ "I lost interest in chess", "I've lost my taste for sushi": withdrawn."""
    p = c.parsed
    heads = [h for o in objects(p, c.pred) if o.lemma.lower() in ("interest", "taste", "appetite")
             for h in preps(p, o, "in", "for")]  # fmt: skip
    heads += [h for o in objects(p, c.pred) if o.lemma.lower() in ("interest", "taste")
              for h in preps(p, c.pred, "in", "for")]  # fmt: skip
    if any(o.lemma.lower() in lx.JOB_NOUNS and mine(p, o) for o in objects(p, c.pred)):
        return [Reading("employer", "employer", "", revoke=True, change=True)]  # "lost my job"
    return [replace(r, revoke=True, change=True) for h in heads for r in stopped_thing(c, h)]


def _untouched(c: Clause) -> list[Reading]:
    """ "I haven't touched the piano in years", "barely touched chess for months": a pastime
    (or a thing of one's own) let go of, withdrawn. Only with the long time it has lasted:
    "I didn't touch the cake" withdraws nothing."""
    p, pred = c.parsed, c.pred
    scarcely = any(a.lower in _SCARCELY for a in p.children(pred, "advmod"))
    spans = [h for h in preps(p, pred, "in", "for") if h.lower in _LONG_SPANS]
    if not (scarcely or c.negated) or not spans:
        return []
    out = []
    for head in objects(p, pred):
        family = activity(head) or vs.classify(p, head, entities=c.entities)
        if family in ("hobby", "device", "language"):
            # negated: the "not" is the withdrawal, not a denial of it
            out.append(fact(family, value_span(c, head), change=True, revoke=True))
    return [replace(r, negated=c.negated) for r in some(*out)]


CHANGE_GROUPS: list[tuple[Iterable[str], Frame]] = [
    (("retire",), _retire), (("leave", "quit"), _leave),
    (("stop", "drop", "give", "sell", "cancel", "abandon", "rehome", "rid", "uninstall"), _stop),
    (("switch", "swap", "replace", "ditch", "trade", "change", "convert"), switch),
    (("break", "split", "separate"), _break), (("lose",), _lost_interest),
    (("unsubscribe", "come"), _unsubscribed), (("end",), _ended),
    (lx.RETRACT_VERBS, _retract), (("lay", "fire", "sack"), _dismissed),
    (("resign", "step"), _resign), (("close",), _close), (("touch",), _untouched),
]  # fmt: skip
"""The verbs of change (lemmas) with their frames."""
