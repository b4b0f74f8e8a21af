"""Verb frames (pure) for pastimes and languages: "play X", "do X", "go X-ing", "take up X",
"pick up X", "knit", "run", "follow X", "learn X", "speak X", and "go"/"turn" as "become" ("I
went vegan"). :mod:`~kenning.longterm.parsing.verbs` puts :data:`PASTIME_GROUPS` in its table
beside the other verbs.
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
    fact,
    field_named,
    generic,
    mine,
    name_of,
    objects,
    organisation,
    preps,
    school_named,
    some,
    stopped_thing,
    value_span,
    verb_phrase,
)
from kenning.longterm.parsing.changes import switch
from kenning.longterm.parsing.clauses import Clause
from kenning.longterm.parsing.parsed import Parsed, Token

__all__ = ["PASTIME_GROUPS", "become", "hobby_verb", "light"]


_GO_PLACES = frozenset("gym church mosque synagogue temple pool yoga pilates class classes "
                       "practice choir rehearsal rehearsals".split())  # fmt: skip


def _follow(c: Clause) -> list[Reading]:
    """ "I follow a Mediterranean diet", "I follow a low FODMAP plan": a diet; "I follow the
    Premier League", "I follow cricket": a sport or a competition the speaker likes."""
    p = c.parsed
    diets = [o for o in objects(p, c.pred) if o.lemma.lower() in ("diet", "plan", "regime")
             and vs.classify(p, o, entities=c.entities) == "diet"]  # fmt: skip
    sports = [o for o in objects(p, c.pred) if o.lemma.lower() in _COMPETITIONS
              or (activity(o) and not p.children(o, "det", "poss"))]  # fmt: skip
    return some(*(fact("diet", value_span(c, o)) for o in diets),
                *(fact("preference", value_span(c, o)) for o in sports))  # fmt: skip


_COMPETITIONS = frozenset("league cup championship championships tour series".split())


def _speak(c: Clause) -> list[Reading]:
    p = c.parsed
    heads = objects(p, c.pred)
    # "a bit of Italian", "a little Spanish"
    heads += [h for t in heads if t.lemma.lower() in _AMOUNTS for h in preps(p, t, "of")]
    return some(*(fact("language", _spoken(c, h), verb="speaks") for h in heads
                   if vs.classify(p, h, entities=c.entities) == "language"))  # fmt: skip


def _spoken(c: Clause, head: Token) -> str:
    """The language itself, without how well it is spoken ("fluent German" -> German)."""
    if head.lower in lx.LANGUAGES:
        return head.text
    return value_span(c, head)


_AMOUNTS = frozenset("bit little lot touch smattering".split())


def _learn(c: Clause) -> list[Reading]:
    out = []
    for head in objects(c.parsed, c.pred):
        family = vs.classify(c.parsed, head, entities=c.entities) or activity(head)
        if family == "language":
            out.append(fact("language", value_span(c, head), verb="is learning"))
        elif family == "hobby":
            out.append(fact("hobby", value_span(c, head)))
    return some(*out)


def light(c: Clause) -> list[Reading]:
    """play, do, practice, go, take: the activity is the object ("I play the guitar" ->
    guitar, "I go climbing" -> climbing, "I take yoga classes" -> yoga classes)."""
    p, pred = c.parsed, c.pred
    lemma = pred.lemma.lower()
    if lemma == "go":
        return _go(c)
    if pred.lower == "done":
        return [replace(r, revoke=True, change=True) for h in preps(p, pred, "with")
                for r in stopped_thing(c, h)]  # fmt: skip
    if lemma == "take" and any(t.lower == "up" for t in p.children(pred, "prt")):
        return _taken_up(c)
    out = []
    for head in objects(p, pred):
        if (spoken := _language_lessons(p, head)) is not None:
            out.append(fact("language", spoken, verb="is learning"))
            continue
        if head.lemma.lower() in ("game", "match", "round") and preps(p, head, "of"):
            head = preps(p, head, "of")[0]  # "I've played 8 games of soccer"
        elif p.child(head, "nummod") is not None or any(
                d.lower == "some" for d in p.children(head, "det")):  # fmt: skip
            continue  # "doing some online shopping": a spell, not a pastime
        if head.lemma.lower() in ("role", "part"):
            continue  # "I play a key role in the project"
        kind = vs.classify(p, head, entities=c.entities)
        if lemma == "do" and mine(p, head) and kind != "education":
            continue  # "I do all my banking online", "doing my taxes": a chore, not a pastime
        if lemma == "do" and kind in ("diet", "device"):
            out.append(fact(kind, value_span(c, head)))  # "I do intermittent fasting", "Duolingo"
            continue
        studies = kind == "education"
        # "I'm doing the CELTA course": a course is named with its article
        if not generic(p, head, definite_ok=lemma == "play" or (studies and lemma == "do")):
            continue
        family = "hobby"
        if studies and lemma in ("do", "take"):
            family = "education"  # "I'm doing a master's in economics", "taking a course"
        elif lemma == "take":
            family = vs.classify(p, head, entities=c.entities) or "hobby"
            if head.lemma.lower() not in ("class", "lesson", "course") or family not in (
                    "hobby", "education"):  # fmt: skip
                continue
        if lemma == "do" and head.lower in lx.FIELDS and family == "hobby":
            out += _field_done(c, head)  # "I do marketing at Google": work, not a pastime
            continue
        out.append(fact(family, field_named(c, head)))
        if family == "education":  # "doing a PhD at Leeds University": the school too
            # "my PhD in chemistry at UCL": the "at" may hang on the field
            holders = [pred, head, *preps(p, head, "in")]
            out += [fact("education", value_span(c, h)) for t in holders
                    for h in preps(p, t, "at") if school_named(c, h)]  # fmt: skip
    return some(*out)


def _field_done(c: Clause, field: Token) -> list[Reading | None]:
    """ "I do marketing at Google" (occupation, employer), "doing engineering at Delft
    University" (what and where the speaker studies)."""
    p = c.parsed
    places = [h for t in (c.pred, field) for h in preps(p, t, "at", "for") if organisation(c, h)]
    schools = [h for h in places if school_named(c, h)]
    if schools:
        return [fact("education", field.text), *(fact("education", value_span(c, h))
                                                  for h in schools)]  # fmt: skip
    return [fact("occupation", field.text),
            *(fact("employer", value_span(c, name_of(c, h))) for h in places)]  # fmt: skip


def _language_lessons(p: Parsed, head: Token) -> str | None:
    """ "taking Japanese lessons", "doing French classes": the language being learned (a
    class of one's own, "my Spanish class", is a course: education)."""
    if head.lemma.lower() not in ("lesson", "class", "course", "tutoring") or mine(p, head):
        return None
    spoken = [m for m in p.children(head, "compound", "amod") if m.lower in lx.LANGUAGES]
    return spoken[0].text if spoken else None


def _taken_up(c: Clause) -> list[Reading]:
    """ "I've taken up knitting", "took up the cello": a pastime begun; "took up the offer"
    (a particular thing, not a pastime) and "took up a job" state none."""
    p = c.parsed
    heads = [
        h for h in objects(p, c.pred)
        if generic(p, h, definite_ok=True) and h.lemma.lower() not in lx.JOB_NOUNS
        and (activity(h) or not vs.is_definite(p, h))
    ]  # fmt: skip
    if not heads:
        # "Since I took up woodworking my garage is full": the gerund, whatever the parser
        # hangs on it
        heads = [x for x in p.children(c.pred, "xcomp") if x.tag == "VBG" and x.i > c.pred.i]
        return some(*(fact("hobby", x.text, change=True) for x in heads))
    return some(*(fact("hobby", value_span(c, h), change=True) for h in heads))


def _picked_up(c: Clause) -> list[Reading]:
    """ "I picked up the guitar again", "picked up running": a pastime begun, where it is
    one by name (not "picked up milk", "picked up my kids")."""
    p = c.parsed
    if not any(t.lower == "up" for t in p.children(c.pred, "prt")):
        return []
    heads = [*objects(p, c.pred), *p.children(c.pred, "xcomp")]
    return some(*(fact("hobby", h.text if h.pos == "VERB" else value_span(c, h), change=True)
                  for h in heads if activity(h) and not mine(p, h)))  # fmt: skip


def become(c: Clause) -> list[Reading]:
    """ "I went vegan", "turned pescatarian", "I just turned 40": go and turn as "become",
    with a diet or (for turn) an age for complement."""
    p, pred = c.parsed, c.pred
    out = []
    for comp in p.children(pred, "dobj", "acomp", "oprd", "attr"):
        word = vs.hyphenated(p, comp).lower()
        if word in lx.DIETS:
            out.append(fact("diet", word, change=True))
        elif pred.lemma.lower() == "turn" and comp.text.isdigit():
            out.append(fact("age", comp.text, change=True))
    return some(*out)


def _go(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if preps(p, pred, "from"):
        return switch(c)
    if became := become(c):
        return became
    names = [h for h in preps(p, pred, "by") if vs.is_name(h, entities=c.entities)]
    if names:
        return some(fact("name", value_span(c, names[0]), kind="preferred name"))
    doing = [
        x for x in p.children(pred, "xcomp", "advcl", "dobj") if x.tag == "VBG" and x.i > pred.i
    ]
    places = [h for h in preps(p, pred, "to") if h.lemma.lower() in _GO_PLACES]
    if (kind := _gone_doing(p, pred)) and (not doing or kind.endswith(f" {doing[0].text}")):
        # "go rock climbing", "go ballroom dancing", "go fly fishing": the kind, whole
        return some(fact("hobby", kind), *(fact("hobby", value_span(c, h)) for h in places))
    return some(*(fact("hobby", value_span(c, h)) for h in [*doing, *places]))


def _gone_doing(p: Parsed, pred: Token) -> str:
    """The two or three words right after "go" that end in an "-ing" word and name a kind of
    it ("rock climbing", "fly fishing"); "" for any other words."""
    words = p.tokens[pred.i + 1 : pred.i + 4]
    for n, word in enumerate(words):
        if word.lower.endswith("ing") and word.text.isalpha() and len(word.text) > 4:
            run = words[: n + 1]
            kinds = ("NOUN", "PROPN", "ADJ", "VERB")
            complements = p.children(word, "acomp", "dobj", "attr", "ccomp", "xcomp")
            if (
                all(t.pos in kinds and t.text.isalpha() for t in run)
                and run[0].tag != "VBG"
                and run[0].lower not in ("home", "back", "out", "away", "off")
                and not complements  # "go home feeling tired"
            ):
                return p.span(run)
            return ""
        if word.pos not in ("NOUN", "PROPN", "ADJ", "VERB") or not word.text.isalpha():
            return ""
    return ""


def _run(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    out = []
    for head in objects(p, pred):
        if head.lemma.lower() in ("marathon", "race", "5k", "10k", "ultra", "triathlon"):
            out.append(fact("hobby", value_span(c, head)))
        elif head.lemma.lower() in lx.WORKPLACE_NOUNS and generic(p, head):
            out.append(fact("employer", value_span(c, name_of(c, head))))
    habit = (c.tense == "perfect" and pred.tag == "VBG") or pred.tag in ("VBP", "VBZ")
    late = any(
        t.lower in ("late", "out", "low", "short") for t in p.subtree(pred) if t.i == pred.i + 1
    )
    if not p.children(pred, "dobj") and habit and not p.children(pred, "prt") and not late:
        out.append(fact("hobby", pred.text))  # not "I run late", "we run out of milk"
    return some(*out)


def hobby_verb(c: Clause) -> list[Reading]:
    """knit, bake, paint, volunteer...: the activity is the verb with its object as written
    ("I knit", "I bake sourdough"), when it is a habit: the simple present, or the present
    perfect ("I've been painting watercolors since 2018"), or begun ("I started surfing")."""
    p, pred = c.parsed, c.pred
    progressive = any(a.lemma == "be" for a in p.children(pred, "aux"))
    if pred.tag == "VBG" and c.tense == "present" and progressive:
        return []  # "I'm baking a cake": now, not a habit
    obj = p.child(pred, "dobj")
    # "I paint a lot lately"; not "I bake a lot better now", a comparison
    compared = any(a.tag in ("JJR", "RBR") or a.pos == "ADJ"
                   for a in p.children(pred, "advmod", "acomp"))  # fmt: skip
    if obj is not None and obj.lemma.lower() in _AMOUNTS and not compared:
        return some(fact("hobby", pred.lower))  # "I knit a lot": how much, not what
    if (obj is not None and not generic(p, obj)) or preps(p, pred, "about"):
        return []
    return some(fact("hobby", verb_phrase(p, pred)))


#: These frames by the verbs (lemmas) they read.
PASTIME_GROUPS: list[tuple[Iterable[str], Frame]] = [
    (lx.HOBBY_VERBS, hobby_verb), (("speak", "sign"), _speak), (("follow",), _follow),
    (("learn",), _learn), (("play", "do", "practice", "practise", "go"), light),
    (("pick",), _picked_up), (("run",), _run),
]  # fmt: skip
