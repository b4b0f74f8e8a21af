"""Verb frames (pure) for where one lives, works and studies: "live in X", "move to X",
"work at X", "join X", "get hired by X", "start at X", "teach X", "study X", "enrol at X".
:mod:`~kenning.longterm.parsing.verbs` puts :data:`HOME_WORK_GROUPS` in its table beside the
other verbs.
"""

from __future__ import annotations

from collections.abc import Iterable

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.arguments import (
    Frame,
    Reading,
    activity,
    clefted,
    fact,
    field_named,
    generic,
    name_of,
    objects,
    organisation,
    place_of,
    preps,
    some,
    value_span,
    verb_phrase,
)
from kenning.longterm.parsing.clauses import Clause
from kenning.longterm.parsing.parsed import Parsed, Token

__all__ = ["HOME_WORK_GROUPS"]


_NOT_WORK = frozenset("work home living fun money nights night days weekends free".split())


def _live(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if c.owner is not None:
        return []  # "my team lives in Linear", "our stuff lives in the garage": not the speaker
    places = preps(p, pred, "in", "on", "near", "outside")
    # "I live with my partner in Leeds": the place hung on whom one lives with
    places += [h for w in preps(p, pred, "with") for h in preps(p, w, "in")]
    where = any(a.lower == "where" for a in p.children(pred, "advmod"))
    if not places and pred.dep == "relcl" and where:
        places = [t for t in [p.head(pred)] if t is not None]
    if not places and where:  # "Berlin is where I live now"
        places = [t for t in [clefted(p, pred, None)] if t is not None]
    found = (place_of(c, h) or _typed_place(c, h) for h in places)
    settled = pred.lemma.lower() == "settle"  # "we finally settled in Rotterdam": a move
    return some(*(fact("location", value_span(c, h), change=settled) for h in found
                  if h is not None))  # fmt: skip


def _move(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if p.child(pred, "dobj") is not None:
        return []  # "I moved the meeting to Friday"
    if any(t.lower == "on" for t in p.children(pred, "prt", "advmod")):
        return _moved_on(c)
    holders = [pred, *p.children(pred, "advmod", "prt")]  # "moved back to Chicago"
    to = [h for t in holders for h in preps(p, t, "to", "into")]
    if not to and any(a.lower == "in" for a in p.children(pred, "advmod", "prt")):
        head = p.head(pred)
        homes = p.children(head, "dobj") if head is not None and pred.dep == "conj" else []
        # "moved back in with my parents in Plymouth": the place of whom one moved in with
        homes += preps(p, pred, "with")
        to = [h for home in homes for h in preps(p, home, "in")]
    moved = _moved_to_another(c, to, [h for t in holders for h in preps(p, t, "from")])
    if moved:
        return some(*moved)
    told, role = _role_told(c)
    if told:
        # "I moved to Aldi, same role, store manager", "moved to Google as a PM": a new employer
        return some(*(fact("employer", value_span(c, h), change=True) for h in to
                       if h.pos == "PROPN"), role)  # fmt: skip
    out = [fact("location", value_span(c, t), change=True) for h in to
           if (t := place_of(c, h) or _typed_place(c, h))]  # fmt: skip
    away = [h for t in holders for h in preps(p, t, "from")]
    away += [h for out_ in p.children(pred, "prep", "prt") if out_.lower == "out"
             for h in preps(p, out_, "of")]  # fmt: skip
    froms = [t for h in away if (t := place_of(c, h)) is not None]
    out += [fact("location", value_span(c, t), change=True, revoke=True) for t in froms]
    return some(*out)


# Nouns after "live in" that are no place, for text typed in lower case.
_NOT_PLACES = frozenset("fear hope sin denial peace harmony luxury poverty comfort style town "
                        "squalor hiding exile limbo debt love panic dread".split())  # fmt: skip


def _typed_place(c: Clause, head: Token) -> Token | None:
    """ "i live in denver now", "moved to lisbon": a place name typed in lower case, in a
    sentence with no capital but "I" (a bare noun, not "in fear" or "in town")."""
    p = c.parsed
    lower = not any(t.text[:1].isupper() for t in p.tokens if t.lower not in ("i", "i'm"))
    bare = head.pos in ("NOUN", "PROPN") and not p.children(head, "det", "poss", "amod")
    return head if lower and bare and head.lower not in _NOT_PLACES else None


def _role_told(c: Clause) -> tuple[bool, Reading | None]:
    """Whether a move is told with a role ("as a PM", ", same role, store manager"), which
    makes it a move to another employer, and the role where it is named."""
    p, pred = c.parsed, c.pred
    roles = [h for h in preps(p, pred, "as") if vs.role(p, h)]
    asides = [t for t in p.children(pred, "npadvmod", "appos") if t.lemma.lower() in lx.JOB_NOUNS]
    roles += [
        a for t in asides for a in p.children(t, "appos") if a.lemma.lower() in lx.OCCUPATIONS
    ]
    if roles:
        return True, fact("occupation", value_span(c, roles[0]), change=True)
    return bool(asides), None


def _moved_to_another(c: Clause, to: list[Token], away: list[Token]) -> list[Reading | None]:
    """ "I've moved to oil painting", "moved from tennis to padel": a move to a pastime or a
    tool, not a place, is a switch in the family either value names (what it moved from is
    withdrawn)."""
    p = c.parsed
    if not to or any(h.pos == "PROPN" and h.lower not in lx.DIETS for h in to):
        return []
    named = (activity(h) or vs.classify(p, h, entities=c.entities) for h in [*to, *away])
    family = next((f for f in named if f is not None), None)
    # a named device may be an employer ("moved to Spotify"): only common nouns
    common = all(h.pos == "NOUN" or h.lower in lx.DIETS for h in to)  # "from keto to paleo"
    if family != "hobby" and not (family in ("device", "diet") and common):
        return []
    return [fact(family, value_span(c, h), change=True, revoke=revoke)
            for heads, revoke in ((to, False), (away, True)) for h in heads]  # fmt: skip


def _moved_on(c: Clause) -> list[Reading]:
    """ "I've moved on from my role at Deliveroo": the employer (of the role, or named) is
    left; a place is not meant."""
    p = c.parsed
    heads = preps(p, c.pred, "from")
    places = [x for h in heads for x in ([h] if h.lemma.lower() not in lx.JOB_NOUNS
              else preps(p, h, "at", "with")) if organisation(c, x)]  # fmt: skip
    return some(*(fact("employer", value_span(c, name_of(c, h)), change=True, revoke=True)
                   for h in places))  # fmt: skip


def _work(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    holders = [pred, *p.children(pred, "npadvmod", "dobj", "advmod")]
    # "working as a barista at Blue Bottle": the place hangs on the role
    holders += [h for t in holders for h in preps(p, t, "as")]
    # "work with" names an organisation only by its name ("I work with kids" does not).
    places = [h for t in holders for h in preps(p, t, "at", "for")]
    places += [h for t in holders for h in preps(p, t, "with") if h.pos == "PROPN"]
    places = [clefted(p, pred, h) or h for h in places]  # "Deutsche Bahn is who I work for"
    places += _worked_at(p, pred)
    out = [fact("employer", value_span(c, name_of(c, h))) for h in places
           if h.lower not in _NOT_WORK and (organisation(c, h) or h.pos == "PROPN")
           and generic(p, h, definite_ok=True)]  # fmt: skip
    out += [
        fact("occupation", value_span(c, h)) for t in [pred, *places] for h in preps(p, t, "as")
    ]
    # "I work sales", "i work retail at Target": a line of work as the bare object (not "I
    # work nights", "work miracles")
    fields = [
        t for t in p.children(pred, "dobj", "advmod", "npadvmod")
        if t.i > pred.i and t.lower in lx.FIELDS and not p.children(t, "det", "poss")
    ]  # fmt: skip
    out += [fact("occupation", t.text) for t in fields[:1]]
    # "I don't work there anymore": whatever employer is held (not "my phone doesn't work")
    if not out and c.withdrawn and c.owner is None:
        return [Reading("employer", "employer", "")]
    return some(*out)


def _worked_at(p: Parsed, pred: Token) -> list[Token]:
    """ "the bakery I work at", "the hospital I work for": the noun a relative clause with a
    stranded "at"/"for" describes is the workplace."""
    noun = p.head(pred)
    if pred.dep != "relcl" or noun is None or noun.pos not in ("NOUN", "PROPN"):
        return []
    if noun.lower in ("company", "firm", "business", "organisation", "organization"):
        return []  # "the company I work for": names no one
    stranded = [t for t in p.children(pred, "prep") if t.lower in ("at", "for")
                and p.child(t, "pobj") is None]  # fmt: skip
    return [noun] if stranded else []


def _join(c: Clause) -> list[Reading]:
    p = c.parsed
    out = []
    for head in objects(p, c.pred):
        if head.lemma.lower() in lx.CLUBS or any(w.lemma.lower() in lx.CLUBS for w in [head]):
            out.append(fact("hobby", value_span(c, head), change=True))
        elif organisation(c, head):
            out.append(fact("employer", value_span(c, name_of(c, head)), change=True))
    out += [fact("occupation", value_span(c, h), change=True) for h in preps(p, c.pred, "as")]
    return some(*out)


def _hired(c: Clause) -> list[Reading]:
    p = c.parsed
    places = preps(p, c.pred, "by", "at")
    out = [fact("employer", value_span(c, name_of(c, h)), change=True) for h in places
           if organisation(c, h)]  # fmt: skip
    roles = [h for t in [c.pred, *places] for h in preps(p, t, "as")]  # "hired ... as a planner"
    return some(*out, *(fact("occupation", value_span(c, h), change=True) for h in roles))


def _start(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    jobs = [o for o in p.children(pred, "dobj") if o.lemma.lower() in lx.JOB_NOUNS]
    places = [h for t in [pred, *jobs] for h in preps(p, t, "at", "with", "for")]
    # "started a data analytics bootcamp", "began a master's in law": studies begun
    studies = [o for o in p.children(pred, "dobj")
               if vs.classify(p, o, entities=c.entities) == "education"
               and not _pointed_at(p, o)]  # fmt: skip
    if studies:
        return some(*(fact("education", field_named(c, o), change=True) for o in studies))
    if not jobs and p.child(pred, "dobj") is not None:
        return []
    employers = [h for h in places if organisation(c, h)]
    # "I just started at Spotify as a data engineer": the role, where a workplace is named
    roles = [h for t in [pred, *jobs, *employers] for h in preps(p, t, "as")] if employers else []
    return some(*(fact("employer", value_span(c, name_of(c, h)), change=True) for h in employers),
                *(fact("occupation", value_span(c, h), change=True) for h in roles))  # fmt: skip


def _pointed_at(p: Parsed, head: Token) -> bool:
    """ "the course", "that class": one the conversation points at, named by nothing else."""
    pointed = any(d.lower in ("the", "this", "that") for d in p.children(head, "det"))
    return pointed and not p.children(head, "compound", "amod", "prep", "nmod")


def _teach(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = [
        fact("employer", value_span(c, name_of(c, h)))
        for h in preps(p, pred, "at")
        if organisation(c, h)
    ]
    if p.child(pred, "dobj") is not None:
        out.append(fact("occupation", verb_phrase(p, pred)))
    return some(*out)


def _study(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    fields = [o for o in objects(p, pred) if not p.children(o, "det", "poss")
              and (o.tag != "NNS" or o.lower.endswith(("ics", "maths")))]  # fmt: skip
    if pred.lemma.lower() in ("major", "minor", "specialise", "specialize"):
        fields += preps(p, pred, "in")  # "majoring in chemistry": the field, not a place
    schools = [h for h in preps(p, pred, "at", "in") if organisation(c, h) or h.pos == "PROPN"]
    schools += [h for h in preps(p, pred, "for") if h.lemma.lower() in lx.EDUCATION_NOUNS]
    return some(*(fact("education", value_span(c, h)) for h in dict.fromkeys([*fields, *schools])))


def _enrolled(c: Clause) -> list[Reading]:
    """ "I'm enrolled in a coding bootcamp", "enrolled at the Open University": a course or a
    school the speaker studies at."""
    p = c.parsed
    heads = [
        h
        for h in preps(p, c.pred, "in", "at", "on")
        if organisation(c, h) or vs.classify(p, h, entities=c.entities) == "education"
    ]
    return some(*(fact("education", value_span(c, h), change=True) for h in heads))


#: These frames by the verbs (lemmas) they read.
HOME_WORK_GROUPS: list[tuple[Iterable[str], Frame]] = [
    (lx.LIVE_VERBS, _live), (lx.MOVE_VERBS, _move),
    (("work", "intern", "freelance", "deliver", "moonlight"), _work),
    (("join",), _join), (("hire", "employ", "poach", "headhunt", "recruit"), _hired),
    (("start", "begin"), _start), (("teach",), _teach), (("study", "major"), _study),
    (("enrol", "enroll"), _enrolled),
]  # fmt: skip
