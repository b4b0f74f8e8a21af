"""Frames (pure): what a clause's predicate states, by its lemma and its arguments.

Each frame reads one kind of predicate: "live in X" and "move to X" state a location, "work at
X" an employer and "work as X" an occupation, "have X" a child, a pet, a device or a condition
by what X names, "like X" a preference, "be X" whatever the complement names ("I'm vegan",
"I'm a nurse at St. Mary's", "I'm based in Melbourne", "my email is ..."), "stop", "quit",
"sell" and "leave" withdraw their object, "switch from X to Y" withdraws X and states Y. A
frame returns :class:`Reading` records; :func:`settle` then applies the clause's negation,
withdrawal and tense.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from kenning.longterm import lexicon as lx
from kenning.longterm import values as vs
from kenning.longterm.clauses import Clause
from kenning.longterm.parsed import Parsed, Token

__all__ = ["Reading", "read_clause", "settle"]

_MAX_WORDS = 7


@dataclass(frozen=True, slots=True)
class Reading:
    """One fact a clause states, before the clause's negation and tense are applied.

    Attributes:
        family: The family of fact (``location``, ``preference``, ...).
        kind: kenning's attribute for a single-valued family (``employer``), or the kind of a
            multi-valued one (``preference``: the attribute becomes ``preference:jazz``).
        span: The value as the sentence writes it.
        verb: A multi-valued fact's value ("likes", "has"); ``""`` for a single-valued one.
        revoke: It withdraws the fact.
        negated: It states that the fact does not hold ("I don't eat pork").
        change: A change of state, whose result holds though told in the past.
        anaphor: Its value is "it": the value of the clause before.
        qualifier: Where it holds ("at work").
    """

    family: str
    kind: str
    span: str
    verb: str = ""
    revoke: bool = False
    negated: bool = False
    change: bool = False
    anaphor: bool = False
    qualifier: str = ""


# family -> (kind, verb): single-valued families have no verb.
_KINDS = {
    "location": ("location", ""), "origin": ("hometown", ""), "employer": ("employer", ""),
    "occupation": ("occupation", ""), "name": ("name", ""), "age": ("age", ""),
    "relationship": ("relationship status", ""), "finance": ("income", ""),
    "contact": ("phone number", ""), "family": ("family", "has"), "pet": ("pet", "has"),
    "allergy": ("allergy", "allergic"), "health": ("condition", "has"),
    "hobby": ("hobby", "does"), "preference": ("preference", "likes"),
    "device": ("uses", "uses"), "language": ("language", "speaks"),
    "education": ("education", "studies"), "identity": ("is_a", "yes"), "diet": ("diet", "eats"),
}  # fmt: skip
_QUALIFIERS = {("at", "work"), ("at", "home"), ("for", "work"), ("on", "weekends"),
               ("at", "the office"), ("on", "weekdays")}  # fmt: skip
_GO_PLACES = frozenset("gym church mosque synagogue temple pool yoga pilates class classes "
                       "practice choir rehearsal rehearsals".split())  # fmt: skip
_CLUBS = frozenset("club team band choir group league orchestra society crew".split())
_NOT_WORK = frozenset("work home living fun money nights night days weekends free".split())
_NOT_ORGANISATIONS = frozenset({"PERSON", "DATE", "TIME"})  # fmt: skip
_MONEY = re.compile(r"\d|\$|€|£")
_DECADES = re.compile(r"\b(?:teens|twenties|thirties|forties|fifties|sixties|seventies|"
                      r"eighties|nineties)\b", re.IGNORECASE)  # fmt: skip


def fact(
    family: str,
    span: str,
    *,
    kind: str = "",
    verb: str | None = None,
    change: bool = False,
    revoke: bool = False,
    qualifier: str = "",
) -> Reading | None:
    """A reading of *family* with the value *span* (None if the span is empty or runs long)."""
    span = span.strip(" ,.!?;:'\"-")
    if not span or len(span.split()) > _MAX_WORDS:
        return None
    default_kind, default_verb = _KINDS[family]
    if family == "diet" and vs.obj(span) in lx.DIETS:
        default_kind, default_verb = "is_a", "yes"
    return Reading(
        family, kind or default_kind, span, default_verb if verb is None else verb,
        revoke=revoke, change=change, qualifier=qualifier,
    )  # fmt: skip


def _some(*found: Reading | None) -> list[Reading]:
    return [r for r in found if r is not None]


# -- arguments --------------------------------------------------------------------------------


def _preps(p: Parsed, token: Token, *words: str) -> list[Token]:
    """The objects of *token*'s prepositions among *words* ("live in X" -> X)."""
    out = []
    for prep in p.children(token, "prep", "agent", "dative"):
        if prep.lower in words:
            noun = p.child(prep, "pobj", "pcomp")
            if noun is not None:
                out.append(noun)
    return out


def _objects(p: Parsed, pred: Token) -> list[Token]:
    """*pred*'s direct objects with those coordinated with them ("Linux ... and a Mac")."""
    found = p.children(pred, "dobj")
    if not found:
        return []
    extra = [c for c in p.children(pred, "conj") if c.pos in ("NOUN", "PROPN")]
    return [v for head in found for v in vs.coordinated(p, head)] + extra


_ADVERBIAL = frozenset("so too much lot now anymore really more here there today lately again "
                       "well also still just".split())  # fmt: skip


def _loose_objects(p: Parsed, pred: Token) -> list[Token]:
    """What the tagger took for something else after a verb of liking ("I hate cilantro":
    cilantro/advmod, "I love anime": anime/npadvmod, "I love hiking": hiking/xcomp)."""
    for child in p.children(pred, "xcomp", "npadvmod", "advmod", "attr", "oprd", "acomp"):
        if child.i > pred.i and child.lower not in _ADVERBIAL and child.text.isalpha() and (
                child.pos in ("NOUN", "PROPN", "ADJ", "VERB")):  # fmt: skip
            return list(vs.coordinated(p, child))
    return []


def _mine(p: Parsed, head: Token) -> bool:
    """ "my job", "my dog": a particular thing of the speaker's, not a kind liked in general."""
    return any(m.lower in ("my", "our") for m in p.children(head, "poss"))


def _qualifier(p: Parsed, *tokens: Token) -> str:
    for token in tokens:
        for prep in p.children(token, "prep"):
            noun = p.child(prep, "pobj")
            if noun is not None:
                words = (prep.lower, p.span(p.subtree(noun)).lower())
                if words in _QUALIFIERS:
                    return " ".join(words)
    return ""


def _span(c: Clause, head: Token) -> str:
    return vs.span(c.parsed, head, entities=c.entities)


def _generic(p: Parsed, head: Token, *, definite_ok: bool = False) -> bool:
    """A thing in general, not one the conversation points at."""
    if vs.is_deictic(p, head) and head.text != "IT":
        return False
    return definite_ok or not vs.is_definite(p, head)


def _organisation(c: Clause, head: Token) -> bool:
    """Whether *head* names an organisation (or is a workplace: "a small bakery", "the
    hospital"); "a tiny robotics startup called Kinemo" by its noun or its name."""
    named = _named(c, head)
    if named is not head and _organisation(c, named):
        return True
    if c.entities and head.ent in ("ORG", "FAC"):
        return True
    # The small model reads many companies as places or nationalities ("Shopify", "Oracle"):
    # after "work at" or "be with", a proper noun is taken for an organisation unless it is
    # read as a person, a time or a number.
    if head.pos == "PROPN" and not (c.entities and head.ent in _NOT_ORGANISATIONS):
        return True
    return head.lemma.lower() in lx.WORKPLACE_NOUNS


def _place(c: Clause, head: Token) -> Token | None:
    """The place a noun names: itself when it is a place name, else a place named in it
    ("our new place in Utrecht" -> Utrecht)."""
    p = c.parsed
    if (c.entities and head.ent in ("GPE", "LOC", "FAC")) or head.pos == "PROPN":
        return head
    if head.text[:1].isupper() and head.text.isalnum():
        return head  # a capitalised name the tagger took for something else ("Town6"/CD)
    for inner in _preps(p, head, "in", "at", "near", "outside", "of"):
        found = _place(c, inner)
        if found is not None:
            return found
    if head.pos == "NOUN" and not vs.is_deictic(p, head) and head.lemma not in (
            "place", "house", "home", "apartment", "flat", "area", "city", "town"):  # fmt: skip
        return head
    return None


def _named(c: Clause, head: Token) -> Token:
    """ "a startup called Fernweh" -> Fernweh."""
    for acl in c.parsed.children(head, "acl"):
        if acl.lemma in ("call", "name"):
            name = c.parsed.child(acl, "oprd", "attr", "dobj", "xcomp")
            if name is not None:
                return name
    return head


def _verb_phrase(p: Parsed, verb: Token) -> str:
    """An activity as written: the verb with its particle and object ("bake sourdough",
    "helping the community"), without adverbs, prepositions or clauses after it; "" when
    its object points at the conversation ("making this cake") or it has a clause for one
    ("making it a better place")."""
    obj = p.child(verb, "dobj")
    if obj is None:
        if p.children(verb, "ccomp", "xcomp", "oprd", "attr"):
            return ""
        return p.span([verb, *p.children(verb, "prt")])
    if not _generic(p, obj, definite_ok=True):
        return ""
    return p.span([verb, *p.children(verb, "prt"), *_trimmed(p, obj)])


def _trimmed(p: Parsed, head: Token) -> list[Token]:
    """*head* with what depends on it, less prepositional phrases, clauses, coordination and
    appositions ("the community that I love" -> "the community")."""
    out = [head]
    for child in p.children(head):
        if child.dep not in ("prep", "relcl", "acl", "conj", "cc", "appos", "punct", "advcl"):
            out.extend(_trimmed(p, child))
    return out


# -- verbs -------------------------------------------------------------------------------------


def _live(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    places = _preps(p, pred, "in", "on", "near", "outside")
    where = any(a.lower == "where" for a in p.children(pred, "advmod"))
    if not places and pred.dep == "relcl" and where:
        places = [t for t in [p.head(pred)] if t is not None]
    found = (_place(c, h) for h in places)
    return _some(*(fact("location", _span(c, h)) for h in found if h is not None))


def _move(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if p.child(pred, "dobj") is not None:
        return []  # "I moved the meeting to Friday"
    holders = [pred, *p.children(pred, "advmod", "prt")]  # "moved back to Chicago"
    to = [h for t in holders for h in _preps(p, t, "to", "into")]
    if not to and any(a.lower == "in" for a in p.children(pred, "advmod", "prt")):
        head = p.head(pred)
        homes = p.children(head, "dobj") if head is not None and pred.dep == "conj" else []
        to = [h for home in homes for h in _preps(p, home, "in")]
    out = [fact("location", _span(c, t), change=True) for h in to if (t := _place(c, h))]
    away = [h for t in holders for h in _preps(p, t, "from")]
    away += [h for out_ in p.children(pred, "prep", "prt") if out_.lower == "out"
             for h in _preps(p, out_, "of")]  # fmt: skip
    froms = [t for h in away if (t := _place(c, h)) is not None]
    out += [fact("location", _span(c, t), change=True, revoke=True) for t in froms]
    return _some(*out)


def _origin(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if pred.lemma == "grow" and not any(t.lower == "up" for t in p.children(pred, "prt")):
        return []
    out = []
    for prep in p.children(pred, "prep"):
        head = p.child(prep, "pobj")
        place = _place(c, head) if head is not None and prep.lower in ("in", "on") else None
        if place is not None:
            now = any(a.lower == "now" for a in p.children(prep, "advmod"))
            out.append(fact("location" if now else "origin", _span(c, place), change=True))
    return _some(*out)


def _work(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    holders = [pred, *p.children(pred, "npadvmod", "dobj", "advmod")]
    # "work with" names an organisation only by its name ("I work with kids" does not).
    places = [h for t in holders for h in _preps(p, t, "at", "for")]
    places += [h for t in holders for h in _preps(p, t, "with") if h.pos == "PROPN"]
    out = [fact("employer", _span(c, _named(c, h))) for h in places
           if h.lower not in _NOT_WORK and (_organisation(c, h) or h.pos == "PROPN")
           and _generic(p, h, definite_ok=True)]  # fmt: skip
    out += [fact("occupation", _span(c, h)) for t in [pred, *places] for h in _preps(p, t, "as")]
    return _some(*out)


def _join(c: Clause) -> list[Reading]:
    p = c.parsed
    out = []
    for head in _objects(p, c.pred):
        if head.lemma.lower() in _CLUBS or any(w.lemma.lower() in _CLUBS for w in [head]):
            out.append(fact("hobby", _span(c, head), change=True))
        elif _organisation(c, head):
            out.append(fact("employer", _span(c, _named(c, head)), change=True))
    out += [fact("occupation", _span(c, h), change=True) for h in _preps(p, c.pred, "as")]
    return _some(*out)


def _hired(c: Clause) -> list[Reading]:
    places = _preps(c.parsed, c.pred, "by", "at")
    return _some(*(fact("employer", _span(c, _named(c, h)), change=True) for h in places
                   if _organisation(c, h)))  # fmt: skip


def _start(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    jobs = [o for o in p.children(pred, "dobj") if o.lemma.lower() in lx.JOB_NOUNS]
    places = [h for t in [pred, *jobs] for h in _preps(p, t, "at", "with", "for")]
    if not jobs and p.child(pred, "dobj") is not None:
        return []
    return _some(*(fact("employer", _span(c, _named(c, h)), change=True) for h in places
                   if _organisation(c, h)))  # fmt: skip


def _teach(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = [
        fact("employer", _span(c, _named(c, h)))
        for h in _preps(p, pred, "at")
        if _organisation(c, h)
    ]
    if p.child(pred, "dobj") is not None:
        out.append(fact("occupation", _verb_phrase(p, pred)))
    return _some(*out)


def _study(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    fields = [o for o in _objects(p, pred) if not p.children(o, "det", "poss")
              and (o.tag != "NNS" or o.lower.endswith(("ics", "maths")))]  # fmt: skip
    schools = [h for h in _preps(p, pred, "at", "in") if _organisation(c, h) or h.pos == "PROPN"]
    schools += [h for h in _preps(p, pred, "for") if h.lemma.lower() in lx.EDUCATION_NOUNS]
    return _some(*(fact("education", _span(c, h)) for h in [*fields, *schools]))


def _speak(c: Clause) -> list[Reading]:
    heads = _objects(c.parsed, c.pred)
    return _some(*(fact("language", _span(c, h), verb="speaks") for h in heads
                   if vs.classify(c.parsed, h, entities=c.entities) == "language"))  # fmt: skip


def _learn(c: Clause) -> list[Reading]:
    out = []
    for head in _objects(c.parsed, c.pred):
        family = vs.classify(c.parsed, head, entities=c.entities) or _activity(head)
        if family == "language":
            out.append(fact("language", _span(c, head), verb="is learning"))
        elif family == "hobby":
            out.append(fact("hobby", _span(c, head)))
    return _some(*out)


def _activity(head: Token) -> str | None:
    word = head.lemma.lower()
    return "hobby" if word in lx.ACTIVITIES or head.lower in lx.ACTIVITIES else None


def _light(c: Clause) -> list[Reading]:
    """play, do, practice, go, take: the activity is the object ("I play the guitar" ->
    guitar, "I go climbing" -> climbing, "I take yoga classes" -> yoga classes)."""
    p, pred = c.parsed, c.pred
    lemma = pred.lemma.lower()
    if lemma == "go":
        return _go(c)
    if pred.lower == "done":
        return [replace(r, revoke=True, change=True) for h in _preps(p, pred, "with")
                for r in _stopped_thing(c, h)]  # fmt: skip
    out = []
    for head in _objects(p, pred):
        if head.lemma.lower() in ("game", "match", "round") and _preps(p, head, "of"):
            head = _preps(p, head, "of")[0]  # "I've played 8 games of soccer"
        elif p.child(head, "nummod") is not None or any(
                d.lower == "some" for d in p.children(head, "det")):  # fmt: skip
            continue  # "doing some online shopping": a spell, not a pastime
        if not _generic(p, head, definite_ok=lemma == "play"):
            continue
        family = "hobby"
        if lemma == "take":
            family = vs.classify(p, head, entities=c.entities) or "hobby"
            if head.lemma.lower() not in ("class", "lesson", "course") or family not in (
                    "hobby", "education"):  # fmt: skip
                continue
        out.append(fact(family, _field(c, head)))
    return _some(*out)


def _field(c: Clause, head: Token) -> str:
    """ "an evening course in accounting": the field stays with a course, also where the
    parser hung it on the verb."""
    p = c.parsed
    span = _span(c, head)
    following = p.tokens[head.i + 1] if head.i + 1 < len(p) else None
    if head.lemma.lower() in ("course", "degree", "class") and following is not None and (
            following.lower == "in" and following.dep == "prep"):  # fmt: skip
        noun = p.child(following, "pobj")
        if noun is not None:
            return p.span([*vs.value_tokens(p, head, entities=c.entities), *p.subtree(noun)])
    return span


def _go(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if _preps(p, pred, "from"):
        return _switch(c)
    names = [h for h in _preps(p, pred, "by") if vs.is_name(h, entities=c.entities)]
    if names:
        return _some(fact("name", _span(c, names[0]), kind="preferred name"))
    doing = [x for x in p.children(pred, "xcomp", "advcl") if x.tag == "VBG" and x.i > pred.i]
    places = [h for h in _preps(p, pred, "to") if h.lemma.lower() in _GO_PLACES]
    return _some(*(fact("hobby", _span(c, h)) for h in [*doing, *places]))


def _like(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    verb = lx.LIKE_VERBS.get(pred.lemma.lower(), "likes")
    heads = _objects(p, pred) or _loose_objects(p, pred)
    first = heads[0] if heads else None
    if first is None or not (_generic(p, first, definite_ok=verb == "prefers")
                             or _own_activity(p, first)):  # fmt: skip
        return []
    if _mine(p, first) and not _own_activity(p, first):
        return []
    out = []
    for head in heads:
        agent = _preps(p, head, "by") if p.child(head, "auxpass") is not None else []
        if agent:  # "I prefer to be contacted by text"
            out += [fact("preference", _span(c, a), verb=verb) for a in agent]
        elif _own_activity(p, head):  # "I've been enjoying my spinning classes": done
            out.append(fact("hobby", _span(c, head)))
        elif head.pos in ("VERB", "AUX"):
            span = _verb_phrase(p, head)
            out += [fact("preference", span, verb=verb)] + [
                fact("preference", _verb_phrase(p, v), verb=verb)
                for v in p.children(head, "conj") if v.pos == "VERB"]  # fmt: skip
        elif _generic(p, head, definite_ok=verb == "prefers"):
            out.append(fact("preference", _span(c, head), verb=verb,
                            qualifier=_qualifier(p, head, pred)))  # fmt: skip
    return _some(*out)


def _own_activity(p: Parsed, head: Token) -> bool:
    mine = any(m.lower == "my" for m in p.children(head, "poss"))
    return mine and head.lemma.lower() in ("class", "lesson", "session", "practice", "training")


def _dislike(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if pred.lemma == "stand" and not (c.negated and p.child(pred, "aux")):
        return []
    heads = _objects(p, pred) or _loose_objects(p, pred)
    if not heads or not _generic(p, heads[0]) or _mine(p, heads[0]):
        return []
    found = [fact("preference", _span(c, h), verb="dislikes") for h in heads]
    return [replace(r, negated=True) for r in _some(*found)]


def _have(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    change = pred.lemma.lower() not in ("have", "own")
    out = []
    for head in _objects(p, pred):
        if vs.is_deictic(p, head) and head.lower not in ("pets",):
            continue
        family = vs.classify(p, head, entities=c.entities)
        if head.lemma.lower() in lx.JOB_NOUNS:
            places = [h for t in (head, pred) for h in _preps(p, t, "at", "with", "for")
                      if _organisation(c, h)]  # fmt: skip
            out += [fact("employer", _span(c, _named(c, h)), change=change) for h in places]
            if not places and p.children(head, "compound", "amod"):
                out.append(fact("occupation", _span(c, head), change=change))
        elif family == "relationship":
            out.append(fact("relationship", _span(c, head), kind="partner", change=change))
        elif family in ("family", "pet", "device", "health", "education", "allergy"):
            out.append(fact(family, _span(c, head), change=change))
    return _some(*out)


def _use(c: Clause) -> list[Reading]:
    p = c.parsed
    out = []
    for head in _objects(p, c.pred):
        if not _generic(p, head, definite_ok=False):
            continue
        family = vs.classify(p, head, entities=c.entities)
        product = head.pos == "PROPN" and not (c.entities and head.ent in ("PERSON", "GPE", "DATE"))
        if family == "device" or (family is None and product):
            out.append(fact("device", _span(c, head), qualifier=_qualifier(p, head, c.pred)))
    return _some(*out)


def _drive(c: Clause) -> list[Reading]:
    p = c.parsed
    out = [fact("device", _span(c, h), verb="drives") for h in _objects(p, c.pred)
           if _generic(p, h)]  # fmt: skip
    out += [
        fact("employer", _span(c, _named(c, h)))
        for h in _preps(p, c.pred, "for")
        if _organisation(c, h)
    ]
    return _some(*out)


def _run(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = []
    for head in _objects(p, pred):
        if head.lemma.lower() in ("marathon", "race", "5k", "10k", "ultra", "triathlon"):
            out.append(fact("hobby", _span(c, head)))
        elif head.lemma.lower() in lx.WORKPLACE_NOUNS and _generic(p, head):
            out.append(fact("employer", _span(c, _named(c, head))))
    habit = (c.tense == "perfect" and pred.tag == "VBG") or pred.tag in ("VBP", "VBZ")
    if not p.children(pred, "dobj") and habit and not p.children(pred, "prt"):
        out.append(fact("hobby", pred.text))
    return _some(*out)


def _hobby_verb(c: Clause) -> list[Reading]:
    """knit, bake, paint, volunteer...: the activity is the verb with its object as written
    ("I knit", "I bake sourdough"), when it is a habit: the simple present, or the present
    perfect ("I've been painting watercolors since 2018"), or begun ("I started surfing")."""
    p, pred = c.parsed, c.pred
    progressive = any(a.lemma == "be" for a in p.children(pred, "aux"))
    if pred.tag == "VBG" and c.tense == "present" and progressive:
        return []  # "I'm baking a cake": now, not a habit
    obj = p.child(pred, "dobj")
    if (obj is not None and not _generic(p, obj)) or _preps(p, pred, "about"):
        return []
    return _some(fact("hobby", _verb_phrase(p, pred)))


def _eat(c: Clause) -> list[Reading]:
    p = c.parsed
    out = []
    for head in _objects(p, c.pred):
        word = vs.obj(_span(c, head))
        if word in lx.DIETS or head.lemma.lower() in lx.FOODS or (c.negated and _generic(p, head)):
            out.append(fact("diet", _span(c, head)))
    return _some(*out)


def _avoid(c: Clause) -> list[Reading]:
    """ "I avoid gluten": a standing negative, in the family the object names."""
    p = c.parsed
    out = []
    for head in _objects(p, c.pred) or _loose_objects(p, c.pred):
        family = vs.classify(p, head, entities=c.entities)
        if family == "diet" or head.lemma.lower() in lx.FOODS:
            out.append(fact("diet", _span(c, head)))
    return [replace(r, negated=True) for r in _some(*out)]


def _graduate(c: Clause) -> list[Reading]:
    heads = _preps(c.parsed, c.pred, "from")
    return _some(*(fact("education", _span(c, h), change=True) for h in heads
                   if _organisation(c, h)))  # fmt: skip


def _health(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    words = {"suffer": ("from",), "diagnose": ("with",), "recover": ("from",),
             "struggle": ("with",), "battle": ()}[pred.lemma.lower()]  # fmt: skip
    heads = _preps(p, pred, *words) + _objects(p, pred)
    return _some(*(fact("health", _span(c, h), change=pred.lemma == "diagnose") for h in heads
                   if _generic(p, h)))  # fmt: skip


def _money(c: Clause, kind: str) -> list[Reading]:
    p, pred = c.parsed, c.pred
    heads = _objects(p, pred) + _preps(p, pred, "about", "around")
    out = []
    for head in heads:
        tokens = [t for t in p.subtree(head)]
        if not any(_MONEY.search(t.text) for t in tokens):
            continue
        extra = [t for a in p.children(head, "npadvmod") for t in p.subtree(a)]
        out.append(fact("finance", p.span(tokens + extra), kind=kind))
    return _some(*out)


def _earn(c: Clause) -> list[Reading]:
    return _money(c, "income")


def _owe(c: Clause) -> list[Reading]:
    return _money(c, "debt")


def _bank(c: Clause) -> list[Reading]:
    heads = _preps(c.parsed, c.pred, "with")
    return _some(*(fact("finance", _span(c, h), kind="bank") for h in heads))


def _pay(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if not any(t.lower == "off" for t in p.children(pred, "prt")):
        return []
    heads = [o for o in _objects(p, pred) if o.lemma.lower() in ("loan", "debt", "mortgage")]
    return _some(*(fact("finance", _span(c, h), kind="debt") for h in heads))


def _marry(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if pred.tag != "VBN" and pred.pos != "ADJ":
        return []
    if not p.children(pred, "auxpass", "aux") and pred.dep not in ("acomp", "ROOT"):
        return []
    return _some(fact("relationship", pred.lower, change=True))


def _retire(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = [fact("occupation", "retired", change=True)]
    for head in _preps(p, pred, "from"):
        span = _verb_phrase(p, head) if head.pos == "VERB" else _span(c, head)
        out.append(fact("occupation", span, change=True, revoke=True))
    return _some(*out)


def _call(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if not any(o.lower == "me" for o in p.children(pred, "dobj")):
        return []
    names = [t for t in p.children(pred, "oprd", "xcomp", "attr", "npadvmod", "dobj")
             if t.lower != "me" and t.pos == "PROPN"]  # fmt: skip
    return _some(*(fact("name", _span(c, n), kind="preferred name") for n in names[:1]))


def _reach(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if not any(o.lower == "me" for o in p.children(pred, "dobj")):
        return []
    out = []
    for prep in p.children(pred, "prep"):
        if prep.lower in ("at", "on", "via"):
            tokens = [t for t in p.subtree(prep) if t.i > prep.i and t.dep != "det"]
            text = p.span(tokens)
            out.append(fact("contact", text, kind=_contact_kind(text)))
    return _some(*out)


def _contact_kind(text: str) -> str:
    if "@" in text and "." in text.split("@")[-1]:
        return "email"
    if text.startswith("@"):
        return "handle"
    return "phone number" if sum(ch.isdigit() for ch in text) >= 5 else "address"


# -- withdrawals and changes -------------------------------------------------------------------


def _leave(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = []
    for head in p.children(pred, "dobj"):
        if head.lemma.lower() in lx.JOB_NOUNS:
            out += [fact("employer", _span(c, _named(c, h)), change=True, revoke=True)
                    for t in (head, pred) for h in _preps(p, t, "at", "with")
                    if _organisation(c, h)]  # fmt: skip
        elif _organisation(c, head) and head.pos == "PROPN":
            out.append(fact("employer", _span(c, _named(c, head)), change=True, revoke=True))
    return _some(*out) if out or pred.lemma != "quit" else _stop(c)


def _stop(c: Clause) -> list[Reading]:
    """stop, quit, give up, drop, sell, cancel + an object: the object is withdrawn, in the
    family it names ("I sold my car", "I dropped my Spanish class", "I gave up sugar")."""
    p, pred = c.parsed, c.pred
    if pred.lemma == "give" and not any(t.lower == "up" for t in p.children(pred, "prt")):
        return []
    heads = _objects(p, pred)
    if not heads:
        if p.children(pred, "xcomp", "ccomp"):
            return []  # "I stopped eating meat": the clause under it is read as withdrawn
        return [Reading("", "", "", revoke=True, change=True, anaphor=True)]
    out: list[Reading | None] = []
    for head in heads:
        if vs.is_deictic(p, head):
            out.append(Reading("", "", "", revoke=True, change=True, anaphor=True))
            continue
        family = vs.classify(p, head, entities=c.entities) or _activity(head)
        if family is not None:
            out.append(fact(family, _span(c, head), change=True, revoke=True))
    return _some(*out)


def _switch(c: Clause) -> list[Reading]:
    """switch/go from X to Y, replace X with Y, swap X for Y: X is withdrawn, Y stated, in the
    family the object or the values name ("switched my bank from HSBC to Revolut")."""
    p, pred = c.parsed, c.pred
    froms = _preps(p, pred, "from")
    holders = [pred, *p.children(pred, "prep")]
    tos = [h for t in holders for h in _preps(p, t, "to", "for", "with", "into")]
    tos += [x for x in p.children(pred, "advcl") if p.child(x, "aux") and x.tag == "VB"]
    named = p.child(pred, "dobj")
    if not froms and named is not None and tos:
        froms, named = [named], None
    family, kind = _switch_family(c, named, [*tos, *froms])
    if family is None:
        return []
    out = [_switched(c, h, family, kind, revoke=False) for h in tos]
    out += [_switched(c, h, family, kind, revoke=True) for h in froms]
    return _some(*out)


def _switch_family(
    c: Clause, named: Token | None, values: Iterable[Token]
) -> tuple[str | None, str]:
    p = c.parsed
    if named is not None:
        lemma = named.lemma.lower()
        own = lx.OWN_ATTRIBUTES.get(lemma)
        if own == "finance":
            return "finance", lemma
        if lemma in lx.JOB_NOUNS:
            return "employer", ""
        if lemma in lx.CONTACT_NOUNS:
            return "contact", lx.CONTACT_NOUNS[lemma]
        family = vs.classify(p, named, entities=c.entities)
        if family is not None:
            return family, ""
    for head in values:
        family = vs.classify(p, head, entities=c.entities) or _activity(head)
        if family is None and (head.text == "IT" or head.lower in lx.FIELDS):
            family = "occupation"
        if family is not None:
            return family, ""
    return None, ""


def _switched(c: Clause, head: Token, family: str, kind: str, *, revoke: bool) -> Reading | None:
    p = c.parsed
    if head.lemma.lower() == "diet":
        mods = [m for m in p.children(head, "amod", "compound")]
        span = p.span(mods) if mods else _span(c, head)
    elif head.pos == "VERB" and head.dep != "advcl":
        span = _verb_phrase(p, head)
    else:
        span = head.text if head.dep == "advcl" else _span(c, head)
    return fact(family, span, kind=kind, change=True, revoke=revoke)


def _retract(c: Clause) -> list[Reading]:
    """ "forget my old number 555-0199": the speaker's own thing, withdrawn."""
    p = c.parsed
    out = []
    for head in p.children(c.pred, "dobj"):
        if not any(m.lower in ("my", "our") for m in p.children(head, "poss")):
            continue
        if head.lemma.lower() in lx.CONTACT_NOUNS:
            shown = [t for child in p.children(head) if child.i > head.i or child.dep == "nummod"
                     if child.dep in ("nummod", "appos", "punct", "compound")
                     for t in p.subtree(child)]  # fmt: skip
            text = p.span([t for t in shown if t.pos != "PUNCT" or t.text == "-"])
            if text:
                out.append(fact("contact", text, kind=_contact_kind(text), revoke=True))
    return _some(*out)


def _listen(c: Clause) -> list[Reading]:
    """ "I've been listening to audiobooks": a kind of thing listened to (a bare plural, or "a
    lot of" one) is a pastime; "the soundtrack" is not."""
    p = c.parsed
    out = []
    for head in _preps(p, c.pred, "to"):
        if head.lemma.lower() in ("lot", "lots", "bunch", "ton", "tons"):
            head = next(iter(_preps(p, head, "of")), head)
        if p.children(head, "det", "poss") or head.pos != "NOUN":
            continue
        # a kind of recording listened to is a pastime; a kind of music, a taste
        out.append(fact("hobby" if head.tag == "NNS" else "preference", _span(c, head)))
    return _some(*out)


def _break(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if not any(t.lower == "up" for t in p.children(pred, "prt")):
        return []
    heads = [h for h in _preps(p, pred, "with") if h.lemma.lower() in lx.PARTNERS]
    return _some(*(fact("relationship", _span(c, h), kind="partner", change=True, revoke=True)
                   for h in heads))  # fmt: skip


# -- "be" ------------------------------------------------------------------------------------


def _copula(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if c.owner is not None:
        return _owned(c)
    if c.topic is not None:
        return _topic(c)
    out: list[Reading] = []
    for comp in p.children(pred, "attr", "oprd"):
        out += _be_noun(c, comp)
    for comp in p.children(pred, "acomp"):
        out += _be_adj(c, comp) if comp.pos != "PROPN" else []
    for prep in p.children(pred, "prep"):
        out += _be_prep(c, prep)
    for adv in p.children(pred, "advmod"):
        if adv.lower == "longer" and p.child(adv, "neg") is not None:
            gone = [r for prep in p.children(adv, "prep") for r in _be_prep(c, prep)]
            out += [replace(r, revoke=True, change=True) for r in gone]
    if not out and c.withdrawn and c.negated:
        out.append(Reading("", "", "", anaphor=True))  # "I'm not anymore"
    return out


def _be_noun(c: Clause, noun: Token) -> list[Reading]:
    p = c.parsed
    lemma = noun.lemma.lower()
    if lemma == "fan":
        return _fan(c, noun)
    if lemma in ("intolerant", "allergic"):
        return _be_adj(c, noun)
    if _capitalised_name(c, noun):
        return _some(fact("name", noun.text))
    if noun.pos == "NUM" or (noun.ent == "CARDINAL" and noun.text.isdigit()):
        return _some(fact("age", noun.text)) if noun.text.isdigit() else []
    named = vs.is_name(noun, entities=c.entities) and not p.children(noun, "det")
    if named and not (c.entities and noun.ent in ("NORP", "GPE", "ORG")):
        return _some(fact("name", _span(c, noun)))
    if vs.is_deictic(p, noun) or vs.is_definite(p, noun) or noun.pos not in ("NOUN", "PROPN"):
        return (
            _be_adj(c, noun) if noun.pos in ("NOUN", "ADJ") and not p.children(noun, "det") else []
        )
    return _be_role(c, noun)


def _be_role(c: Clause, noun: Token) -> list[Reading]:
    """ "I'm a nurse at St. Mary's", "I'm a single mom of twins", "I'm a grad student at
    Stanford", "I'm an introvert"."""
    p = c.parsed
    lemma = noun.lemma.lower()
    family = vs.classify(p, noun, entities=c.entities)
    out: list[Reading | None] = []
    states = [m for m in p.children(noun, "amod") if m.lower in lx.RELATIONSHIP_STATES]
    out += [fact("relationship", m.lower) for m in states]
    if lemma in lx.PARENT_NOUNS:
        kids = _preps(p, noun, "of")
        out += [fact("family", _span(c, noun) if k.pos == "NUM" else _span(c, k)) for k in kids]
        return _some(*out)
    if family in ("diet", "health"):
        return _some(*out, fact(family, _span(c, noun)))
    if lemma == "speaker":  # "a native Spanish speaker"
        spoken = [m for m in p.children(noun, "amod", "compound") if m.lower in lx.LANGUAGES]
        return _some(*out, *(fact("language", m.text) for m in spoken))
    if lemma in ("bit", "lot", "part", "kind", "sort", "member") or not p.children(noun, "det"):
        return _some(*out)
    student = lemma in ("student", "pupil")
    places = [h for h in _preps(p, noun, "at", "for", "with") if _organisation(c, h)]
    out += [fact("education" if student else "employer", _span(c, h)) for h in places]
    role = _span(c, noun) if not states else noun.text
    kind = "occupation" if places else "identity"
    out.append(fact(kind, role) if kind == "occupation" else fact("identity", role))
    return _some(*out)


def _capitalised_name(c: Clause, noun: Token) -> bool:
    """ "I'm Tomasz" where the tagger missed the proper noun: a capitalised word without a
    determiner, not a nationality, a language or a diet."""
    p = c.parsed
    if noun.pos != "NOUN" or not noun.text[:1].isupper() or noun.i == 0 or p.children(noun):
        return False
    if c.entities and noun.ent and noun.ent != "PERSON":
        return False
    word = noun.lower
    return word not in lx.LANGUAGES and word not in lx.DIETS and not word.endswith(("an", "ese"))


def _fan(c: Clause, noun: Token) -> list[Reading]:
    p = c.parsed
    heads = _preps(p, noun, "of") or [m for m in p.children(noun, "compound", "nmod")
                                      if m.i < noun.i][:1]  # fmt: skip
    out = []
    for head in heads:
        if head.dep in ("compound", "nmod"):
            first = min(t.i for t in p.subtree(head))
            tokens = [t for t in p.tokens[first : noun.i] if t.dep != "amod" or t.ent]
            out.append(fact("preference", p.span(tokens)))
        elif _generic(p, head):
            out.append(fact("preference", _span(c, head)))
    found = _some(*out)
    if c.negated:
        return [replace(r, verb="dislikes", negated=True) for r in found]
    return found


def _be_adj(c: Clause, adj: Token) -> list[Reading]:
    p = c.parsed
    word = adj.lower
    if adj.lemma.lower() == "allergic":
        heads = _preps(p, adj, "to") or p.children(adj, "xcomp")
        return _some(*(fact("allergy", _span(c, v), verb="allergic") for h in heads
                       for v in vs.coordinated(p, h)))  # fmt: skip
    if word == "intolerant":  # "lactose intolerant": the word before, however it was parsed
        before = p[adj.i - 1] if adj.i > 0 else None
        if before is None or not before.text.isalpha() or before.lower in lx.INTENSIFIERS:
            return []
        return _some(fact("allergy", before.text))
    if word in lx.RELATIONSHIP_STATES:
        out = [fact("relationship", word)]
        out += [
            fact(f, _span(c, h))
            for h in _preps(p, adj, "with")
            if (f := vs.classify(p, h, entities=c.entities)) in ("family", "pet")
        ]
        return _some(*out)
    if adj.lemma.lower() in ("base", "based", "locate", "located"):
        heads = _preps(p, adj, "in") + [h for o in _preps(p, adj, "out") for h in [o]]
        heads += [h for prep in p.children(adj, "prep") for q in p.children(prep, "prep")
                  for h in [p.child(q, "pobj")] if h is not None]  # fmt: skip
        return _some(*(fact("location", _span(c, t)) for h in heads if (t := _place(c, h))))
    return _be_state(c, adj)


def _be_state(c: Clause, adj: Token) -> list[Reading]:
    p = c.parsed
    word = vs.hyphenated(p, adj).lower()
    if word in lx.DIETS:
        return _some(fact("diet", word))
    if word in lx.HEALTH_ADJECTIVES:
        return _some(fact("health", word))
    if word in lx.OCCUPATION_ADJECTIVES:
        return _some(fact("occupation", _span(c, adj)))
    heads = _preps(p, adj, "with", "about")
    if word in ("obsessed", "passionate", "crazy") and heads:
        return _some(*(fact("preference", _span(c, h), verb="loves") for h in heads
                       if _generic(p, h) and not _mine(p, h)))  # fmt: skip
    if word == "done":
        heads = _preps(p, adj, "with")
        return [replace(r, revoke=True, change=True) for h in heads for r in _stopped_thing(c, h)]
    if word.isdigit():
        return _some(fact("age", word))
    if word == "old":  # "I'm 29 years old"
        years = [n for a in p.children(adj, "npadvmod") for n in p.children(a, "nummod")]
        return _some(*(fact("age", n.text) for n in years[:1] if n.text.isdigit()))
    if word == "fluent":
        langs = [v for h in _preps(p, adj, "in") for v in vs.coordinated(p, h)]
        return _some(*(fact("language", _span(c, h)) for h in langs
                       if vs.classify(p, h, entities=c.entities) == "language"))  # fmt: skip
    if (c.entities and adj.ent == "NORP") or (
        adj.pos == "ADJ" and adj.text[:1].isupper() and word.endswith(("an", "ese", "ish", "i"))
    ):
        return _some(fact("origin", adj.text, kind="nationality"))
    return []


def _stopped_thing(c: Clause, head: Token) -> list[Reading]:
    if vs.is_deictic(c.parsed, head):
        return []
    family = vs.classify(c.parsed, head, entities=c.entities) or _activity(head) or "preference"
    return _some(fact(family, _span(c, head)))


def _be_prep(c: Clause, prep: Token) -> list[Reading]:
    """ "be" with a preposition: in Lisbon, at Stripe, with Shopify, from Ohio, on a keto
    diet, into birdwatching, over Marvel movies, in a book club, in my late twenties."""
    p = c.parsed
    word = prep.lower
    head = p.child(prep, "pobj", "pcomp")
    if head is None:
        return []
    if word == "in":
        return _be_in(c, head)
    if word in ("at", "with") and _organisation(c, head) and (word == "at" or head.pos == "PROPN"):
        head = _named(c, head)
        studying = any(h.lemma.lower() in ("year", "semester", "term", "grade")
                       for h in _preps(p, c.pred, "in"))  # fmt: skip
        school = head.lemma.lower() in lx.SCHOOL_NOUNS or studying
        return _some(fact("education" if school else "employer", _span(c, head)))
    if word == "from":
        place = _place(c, head)
        return _some(fact("origin", _span(c, place))) if place is not None else []
    if word == "on":
        return _be_on(c, head)
    if word == "into" and _generic(p, head):
        family = "hobby" if head.lower.endswith("ing") else "preference"
        return _some(fact(family, _span(c, head)))
    if word == "over":
        if vs.is_deictic(p, head):
            return [Reading("", "", "", revoke=True, change=True, anaphor=True)]
        if not _generic(p, head):
            return []  # "over the moon"
        return [replace(r, revoke=True, change=True) for r in _over(c, head)]
    return []


def _over(c: Clause, head: Token) -> list[Reading]:
    p = c.parsed
    if head.lemma.lower() in lx.ALLERGY_NOUNS:
        what = [m for m in p.children(head, "compound", "amod", "nmod")]
        return _some(*(fact("allergy", m.text) for m in what[:1]))
    return _some(fact("preference", _span(c, head)))


def _be_in(c: Clause, head: Token) -> list[Reading]:
    p = c.parsed
    text = p.span(p.subtree(head))
    if _DECADES.search(text):
        return _some(fact("age", _span(c, head)))
    if head.lemma.lower() in _CLUBS:
        return _some(fact("hobby", _span(c, head)))
    if head.lemma.lower() == "year":
        schools = [
            h for h in _preps(p, head, "at", "of") if _organisation(c, h) or h.pos == "PROPN"
        ]
        return _some(*(fact("education", _span(c, h)) for h in schools))
    if head.lemma.lower() in ("code", "zip"):
        numbers = [t for t in p.subtree(head) if t.pos == "NUM" or t.text.isdigit()]
        return _some(*(fact("location", n.text) for n in numbers[:1]))
    place = _place(c, head)
    if place is None or (place.pos != "PROPN" and not (c.entities and place.ent in ("GPE", "LOC"))):
        return []
    if _temporary(c):
        return []
    return _some(fact("location", _span(c, place)))


def _temporary(c: Clause) -> bool:
    """ "I'm in Tokyo for a conference this week": a stay, not where the speaker lives."""
    p = c.parsed
    for token in p.subtree(c.pred):
        if token.lower in ("week", "weekend", "trip", "conference", "vacation", "holiday",
                           "today", "tonight", "visit", "business"):  # fmt: skip
            return True
    return False


def _be_on(c: Clause, head: Token) -> list[Reading]:
    p = c.parsed
    if head.lemma.lower() == "diet":
        mods = [m for m in p.children(head, "amod", "compound") if m.lower not in lx.EVALUATIVE]
        return _some(fact("diet", p.span(mods))) if mods else []
    family = vs.classify(p, head, entities=c.entities)
    if family == "device" or (head.pos == "PROPN" and head.ent not in ("PERSON", "GPE", "DATE")):
        return _some(fact("device", _span(c, head)))
    return []


def _owned(c: Clause) -> list[Reading]:
    """ "my X is Y": Y as what X names ("my email is ...", "my phone is a Galaxy S21", "my
    favourite colour is green", "my hobby is woodworking")."""
    p, owner = c.parsed, c.owner
    assert owner is not None
    values = p.children(c.pred, "attr", "acomp", "oprd") or [
        h for h in _preps(p, c.pred, "on")]  # fmt: skip
    if not values:
        return []
    value = values[0]
    lemma = owner.lemma.lower()
    favourite = any(m.lower in ("favorite", "favourite", "fave") for m in p.children(owner))
    if favourite:
        return _some(fact("preference", _value_of(c, value), kind=f"favorite {owner.lower}",
                          verb=""))  # fmt: skip
    rest = [t for t in p.tokens[c.pred.i + 1 :] if t.i in _clause_tokens(p, c.pred)]
    while rest and (rest[-1].pos == "PUNCT" and rest[-1].text != ")"):
        rest = rest[:-1]
    text = p.span([t for t in rest if not (t.i == rest[0].i and t.dep in ("det", "poss"))])
    digits = sum(ch.isdigit() for ch in text)
    kinds = {m.lower for m in p.children(owner, "compound", "amod", "nmod")}
    if lemma == "number" and kinds - {"phone", "cell", "mobile", "work", "home", "new", "old"}:
        return []  # "my passport number": not how to reach the speaker
    if lemma in lx.CONTACT_NOUNS and (
        digits >= 5 or "@" in text or lemma in ("address", "email", "e-mail")
    ):
        kind = lx.CONTACT_NOUNS[lemma] if lemma != "number" else "phone number"
        return _some(fact("contact", text, kind=kind))
    if lemma in lx.DEVICE_NOUNS or lemma == "phone":
        return _some(fact("device", _value_of(c, value)))
    family = lx.OWN_ATTRIBUTES.get(lemma)
    if family is None:
        return []
    kinds = {
        "name": "name",
        "age": "birthday" if lemma == "birthday" else "age",
        "finance": lemma,
        "origin": "nationality" if lemma == "nationality" else "",
    }
    span = text if family in ("age", "identity") else _value_of(c, value)
    return _some(fact(family, span, kind=kinds.get(family, "")))


def _clause_tokens(p: Parsed, pred: Token) -> set[int]:
    """The token indices of *pred*'s clause: its subtree less the clauses under it."""
    out = {pred.i}
    for child in p.children(pred):
        if child.dep not in ("advcl", "conj", "cc", "parataxis", "ccomp", "relcl"):
            out |= {t.i for t in p.subtree(child)}
    return out


def _located(c: Clause) -> list[Reading]:
    """ "We're based out of Melbourne", "I'm located in Austin"."""
    p, pred = c.parsed, c.pred
    heads = _preps(p, pred, "in", "near")
    heads += [h for out in p.children(pred, "prep") if out.lower == "out"
              for h in _preps(p, out, "of")]  # fmt: skip
    return _some(*(fact("location", _span(c, t)) for h in heads if (t := _place(c, h))))


def _value_of(c: Clause, value: Token) -> str:
    p = c.parsed
    if value.pos == "VERB":
        return _verb_phrase(p, value)
    tokens = [t for t in vs.value_tokens(p, value, entities=c.entities)]
    return p.span(tokens)


def _topic(c: Clause) -> list[Reading]:
    """ "Photography is my thing", "Thai food is my absolute favorite": the subject is the
    value of what the complement names."""
    p, topic = c.parsed, c.topic
    assert topic is not None
    for comp in p.children(c.pred, "attr"):
        if not any(m.lower in ("my", "our") for m in p.children(comp, "poss")):
            continue
        family = lx.OWN_NOUNS.get(comp.lemma.lower()) or lx.OWN_NOUNS.get(comp.lower)
        if any(m.lower in ("favorite", "favourite", "fave") for m in p.children(comp, "amod")):
            family = "preference"  # "Pizza is my favorite food"
        if family is not None:
            return _some(fact(family, _value_of(c, topic), verb="loves" if family ==
                              "preference" else None))  # fmt: skip
    return []


# -- dispatch --------------------------------------------------------------------------------

Frame = Callable[[Clause], list[Reading]]


def _table() -> dict[str, Frame]:
    table: dict[str, Frame] = {}
    groups: list[tuple[Iterable[str], Frame]] = [
        (("be", "become"), _copula), (lx.LIVE_VERBS, _live), (lx.MOVE_VERBS, _move),
        (lx.ORIGIN_VERBS, _origin), (lx.HOBBY_VERBS, _hobby_verb),
        (("work", "intern", "freelance"), _work), (("join",), _join), (("hire", "employ"), _hired),
        (("start", "begin"), _start), (("teach",), _teach), (("study", "major"), _study),
        (("speak",), _speak), (("learn",), _learn),
        (("play", "do", "practice", "practise", "go", "take"), _light), (lx.LIKE_VERBS, _like),
        (("hate", "dislike", "detest", "loathe", "despise", "stand"), _dislike),
        (("have", "own", "get", "adopt", "buy", "land"), _have), (("avoid",), _avoid),
        (("graduate",), _graduate), (("use",), _use),
        (("drive", "ride"), _drive), (("run",), _run), (("eat", "drink"), _eat),
        (("suffer", "diagnose", "recover", "struggle"), _health), (("earn", "make"), _earn),
        (("owe",), _owe), (("bank",), _bank), (("pay",), _pay),
        (("marry", "married", "divorce", "divorced", "engage", "engaged"), _marry),
        (("retire",), _retire), (("call",), _call), (("reach", "contact", "text"), _reach),
        (("leave", "quit"), _leave),
        (("stop", "drop", "give", "sell", "cancel", "abandon"), _stop),
        (("switch", "swap", "replace", "ditch", "trade", "change", "convert"), _switch),
        (("break",), _break), (("base", "locate"), _located), (("listen",), _listen),
        (lx.RETRACT_VERBS, _retract),
    ]  # fmt: skip
    for words, frame in groups:
        for word in words:
            table[word] = frame
    return table


_FRAMES = _table()


def read_clause(c: Clause) -> list[Reading]:
    """What *c* states by its predicate's frame (before :func:`settle`)."""
    pred = c.pred
    if pred.pos in ("ADJ",) and pred.dep == "ROOT":
        return _be_adj(c, pred)
    if pred.pos in ("NOUN", "PROPN"):
        return _fragment(c)
    if c.topic is not None and pred.lemma != "be":
        return []
    frame = _FRAMES.get(pred.lemma.lower()) or _FRAMES.get(pred.lower) or _by_stem(pred)
    found = frame(c) if frame is not None else []
    return found + _nots(c, found)


def _by_stem(pred: Token) -> Frame | None:
    """ "journaling" lemmatised as "journale": the frame of the word without "-ing"."""
    word = pred.lower
    if not word.endswith("ing"):
        return None
    return _FRAMES.get(word[:-3]) or _FRAMES.get(word[:-3] + "e")


def _fragment(c: Clause) -> list[Reading]:
    """ "Morning person here": a noun said of the speaker."""
    p, pred = c.parsed, c.pred
    if not any(a.lower == "here" for a in p.children(pred, "advmod")):
        return []
    return _some(fact("identity", _span(c, pred)))


def _nots(c: Clause, found: list[Reading]) -> list[Reading]:
    """ "I work at Bayer, not BASF", "I'm at Stripe now, not Square": the value after "not"
    is withdrawn, in the family of the one stated."""
    if not found or found[0].revoke:
        return []
    p = c.parsed
    first = found[0]
    out = []
    for neg in p.subtree(c.pred):
        if neg.dep != "neg" or neg.head == c.pred.i:
            continue
        after = next((t for t in p.tokens[neg.i + 1 :] if t.pos in ("PROPN", "NOUN")), None)
        if after is not None and after.pos == "PROPN":
            out.append(replace(first, span=_span(c, after), revoke=True, change=True))
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
        if r.revoke or c.stop:
            if c.negated and not c.stop:
                continue
            yield replace(r, revoke=True)
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
