"""The frames of "be" (pure): what a clause states by its complement.

"I'm vegan", "I'm a nurse at St. Mary's", "I'm based in Melbourne", "I'm into birdwatching",
"I'm over Marvel movies", "my email is ...", "Photography is my thing".
"""

from __future__ import annotations

import re
from dataclasses import replace

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.arguments import (
    Reading,
    activity,
    clause_tokens,
    contact_noun,
    fact,
    generic,
    mine,
    name_of,
    organisation,
    place_of,
    preps,
    some,
    stopped_thing,
    value_of,
    value_span,
)
from kenning.longterm.parsing.clauses import Clause, contrastive
from kenning.longterm.parsing.parsed import Parsed, Token

__all__ = ["be_adjective", "be_prep", "copula", "fan", "named_place"]

_DECADES = re.compile(r"\b(?:teens|twenties|thirties|forties|fifties|sixties|seventies|"
                      r"eighties|nineties)\b", re.IGNORECASE)  # fmt: skip


def copula(c: Clause) -> list[Reading]:
    p, pred = c.parsed, c.pred
    if c.owner is not None:
        return _owned(c)
    if c.topic is not None:
        return _topic(c)
    out: list[Reading] = []
    for comp in p.children(pred, "attr", "oprd"):
        if any(contrastive(p, n) for n in p.children(comp, "neg")):
            continue  # "I'm with Monzo now, not Barclays": read with what it is set against
        for each in vs.coordinated(p, comp):  # "I'm a vegan and a runner"
            out += _be_noun(c, each)
    for comp in p.children(pred, "acomp"):
        each_one = list(vs.coordinated(p, comp))
        if any(a.lower in _MULTILINGUAL for a in each_one):  # "bilingual, English and Tagalog"
            each_one = [a for a in each_one if a.lower not in lx.LANGUAGES]
        for each in each_one:  # "I'm diabetic and vegetarian"
            out += be_adjective(c, each) if each.pos != "PROPN" else []
    for prep in p.children(pred, "prep"):
        out += be_prep(c, prep)
    for adv in p.children(pred, "advmod"):
        if adv.lower == "back":  # "I'm back in London after two years in Tokyo"
            out += [r for prep in preps_of(p, adv, "in") for r in be_prep(c, prep)]
        if adv.lower == "longer" and p.child(adv, "neg") is not None:
            gone = [r for prep in p.children(adv, "prep") for r in be_prep(c, prep)]
            out += [replace(r, revoke=True, change=True) for r in gone]
    if not out and (doing := _out_doing(c)) is not None:
        out.append(doing)
    if not out and c.withdrawn and c.negated:
        out.append(Reading("", "", "", anaphor=True))  # "I'm not anymore"
    return out


# Places among siblings: "the oldest of five", "the middle one of three kids".
_RANKS = frozenset("oldest eldest youngest middle second third fourth only".split())
_SIBLINGS = frozenset({"sibling", "brother", "sister"})


def _one_of(c: Clause, noun: Token) -> list[Reading]:
    """ "I'm the oldest of five siblings", "the middle child of four siblings": the siblings
    counted, the speaker among them."""
    p = c.parsed
    if noun.lower not in _RANKS and not any(m.lower in _RANKS for m in p.children(noun, "amod")):
        return []
    # siblings only: "the youngest of three kids" counts no children of the speaker's
    kin = [h for h in preps(p, noun, "of") if h.lemma.lower() in _SIBLINGS and p.child(h, "nummod")]
    return some(*(fact("family", value_span(c, h)) for h in kin))


def preps_of(p: Parsed, token: Token, *words: str) -> list[Token]:
    """*token*'s prepositions among *words* (the prepositions, not their objects)."""
    return [t for t in p.children(token, "prep") if t.lower in words]


def _out_doing(c: Clause) -> Reading | None:
    """ "Every weekend I'm out sailing": a pastime told as a habit (not "I'm out shopping",
    said of the moment)."""
    p, pred = c.parsed, c.pred
    if not any(a.lower == "out" for a in p.children(pred, "advmod")):
        return None
    doing = [x for x in p.children(pred, "attr", "advcl", "xcomp") if x.tag == "VBG"]
    habit = any(
        t.lower in ("every", "most") or (t.lower.endswith("s") and t.lower[:-1] in _WEEKDAYS)
        for t in p.tokens
    )
    return fact("hobby", doing[0].text) if doing and habit else None


def _be_noun(c: Clause, noun: Token) -> list[Reading]:
    """What "I'm <noun>" says, with where the speaker lives when the noun does ("I'm a Kiwi
    living in Berlin")."""
    p = c.parsed
    lives = [a for a in p.children(noun, "acl", "amod")
             if a.lemma.lower() in lx.LIVE_VERBS | {"living", "base", "based"}]  # fmt: skip
    # "a Kiwi living in Berlin", "a Brit in Madrid", "a Hamburg-based illustrator"
    homes = [h for h in (*preps(p, noun, "in"), *(h for a in lives for h in preps(p, a, "in")),
                         *(m for a in lives for m in p.children(a, "npadvmod")))
             if named_place(c, h) is not None and not _temporary(c)]  # fmt: skip
    # "I'm Leila, 34, ...": an age beside the name
    ages = [a.text for a in p.children(noun, "appos") if a.text.isdigit() and 0 < int(a.text) < 120]
    found = _be_noun_itself(c, noun) or _one_of(c, noun)
    return found + some(
        *(fact("location", value_span(c, h)) for h in homes), *(fact("age", a) for a in ages)
    )


def _be_noun_itself(c: Clause, noun: Token) -> list[Reading]:
    p = c.parsed
    lemma = noun.lemma.lower()
    if lemma == "fan":
        return fan(c, noun)
    if lemma in ("intolerant", "allergic"):
        return be_adjective(c, noun)
    if lemma in ("part", "member"):  # "I'm part of a running club", "a member of a choir"
        clubs = [h for h in preps(p, noun, "of") if h.lemma.lower() in lx.CLUBS]
        return some(*(fact("hobby", value_span(c, h)) for h in clubs))
    if _capitalised_name(c, noun):
        return some(fact("name", noun.text))
    if noun.pos == "NUM" or (noun.ent == "CARDINAL" and noun.text.isdigit()):
        return some(fact("age", noun.text)) if noun.text.isdigit() else []
    named = vs.is_name(noun, entities=c.entities) and not p.children(noun, "det")
    if named and noun.lower in lx.LANGUAGES:
        return []  # "English": a language or a nationality, not a name
    if named and not (c.entities and noun.ent in ("NORP", "GPE", "ORG")):
        return some(fact("name", value_span(c, noun)))
    if noun.pos == "NOUN" and not p.children(noun, "det") and (found := be_adjective(c, noun)):
        return found  # "I'm trans" (trans/NNS): an adjective the tagger took for a noun
    # "I'm the sous chef at Noma": a role, definite where there is one of it there
    the_role = lemma in lx.OCCUPATIONS | _STAFF and bool(preps(p, noun, "at", "for"))
    if (
        vs.is_deictic(p, noun)
        or noun.pos not in ("NOUN", "PROPN")
        or (vs.is_definite(p, noun) and not the_role)
    ):
        return (
            be_adjective(c, noun)
            if noun.pos in ("NOUN", "ADJ") and not p.children(noun, "det")
            else []
        )
    return _be_role(c, noun)


def _be_role(c: Clause, noun: Token) -> list[Reading]:
    """ "I'm a nurse at St. Mary's", "I'm a single mom of twins", "I'm a grad student at
    Stanford", "I'm an introvert"."""
    p = c.parsed
    lemma = noun.lemma.lower()
    if (nationality := _demonym(p, noun)) is not None:
        return some(fact("origin", nationality, kind="nationality"))
    family = vs.classify(p, noun, entities=c.entities)
    out: list[Reading | None] = []
    states = [m for m in p.children(noun, "amod") if m.lower in lx.RELATIONSHIP_STATES]
    out += [fact("relationship", m.lower) for m in states]
    if lemma in lx.PARENT_NOUNS:
        if "stay-at-home" in p.span(p.subtree(noun)).lower().replace(" ", ""):
            out.append(fact("occupation", f"stay-at-home {noun.text}"))  # a line of work
        kids = preps(p, noun, "of")
        out += [
            fact(f, value_span(c, h))
            for h in preps(p, noun, "with")
            if (f := vs.classify(p, h, entities=c.entities)) in ("family", "pet")
        ]
        out += [
            fact("family", value_span(c, noun) if k.pos == "NUM" else value_span(c, k))
            for k in kids
        ]
        return some(*out)
    if family in ("diet", "health"):
        return some(*out, fact(family, value_span(c, noun)))
    if lemma == "speaker":  # "a native Spanish speaker"
        spoken = [m for m in p.children(noun, "amod", "compound") if m.lower in lx.LANGUAGES]
        return some(*out, *(fact("language", m.text) for m in spoken))
    is_role = vs.role(p, noun)
    bare_role = is_role and noun.pos == "NOUN"  # "I'm assistant manager"
    if lemma in ("bit", "lot", "part", "kind", "sort", "member") or not (
        p.children(noun, "det") or bare_role
    ):
        return some(*out)
    student = lemma in lx.STUDENTS
    places = [h for h in preps(p, noun, "at", "for", "with") if organisation(c, h)]
    if not places and not is_role and _passing(c, noun):
        return some(*out)  # "a mess today", "a believer in second chances", "a sucker for X"
    if lemma in _STAFF:  # "the newest hire at Canva": where, not a role
        return some(*out, *(fact("employer", value_span(c, h)) for h in places))
    out += [fact("education" if student else "employer", value_span(c, h)) for h in places]
    role = value_span(c, noun) if not states else noun.text
    kind = "occupation" if places or is_role else "identity"
    out.append(fact(kind, role) if kind == "occupation" else fact("identity", role))
    return some(*out)


# Nouns that say one works somewhere without saying what one does there.
_STAFF = frozenset({"hire", "employee", "staffer", "recruit", "starter", "joiner"})


def _passing(c: Clause, noun: Token) -> bool:
    """ "I'm a mess today", "a big believer in second chances", "a sucker for thrillers": a
    state of the moment, or a noun that takes its own complement, not who one is."""
    p = c.parsed
    if preps(p, noun, "in", "for", "of", "about", "on") or p.children(noun, "acl", "relcl"):
        return True
    near = [t for t in (*p.children(c.pred, "npadvmod", "advmod"), *p.children(noun, "npadvmod"))]
    return any(t.lower in ("today", "tonight", "now", "lately", "sometimes") for t in near)


def _demonym(p: Parsed, noun: Token) -> str | None:
    """ "a Kiwi", "a proud Texan", "a New Yorker": where the speaker is from, as written
    (without the words that judge it)."""
    before = [m for m in p.children(noun, "compound", "amod") if m.i == noun.i - 1]
    for words in ([*before, noun], [noun]):
        if " ".join(t.lower for t in words) in lx.DEMONYMS:
            return p.span(words)
    return None


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


def fan(c: Clause, noun: Token) -> list[Reading]:
    """ "a big fan of jazz", "a Taylor Swift fan": a preference; a dislike when negated."""
    p = c.parsed
    heads = preps(p, noun, "of") or [m for m in p.children(noun, "compound", "nmod")
                                      if m.i < noun.i][:1]  # fmt: skip
    out = []
    for head in heads:
        if head.dep in ("compound", "nmod"):
            first = min(t.i for t in p.subtree(head))
            tokens = [t for t in p.tokens[first : noun.i] if t.dep != "amod" or t.ent]
            out.append(fact("preference", p.span(tokens)))
        elif generic(p, head):
            out.append(fact("preference", value_span(c, head)))
    found = some(*out)
    if c.negated:
        return [replace(r, verb="dislikes", negated=True) for r in found]
    return found


def _noun_run(p: Parsed, start: Token) -> str:
    """The words from *start* to the first noun after it ("bee stings"), "" where a word
    that is no adjective or noun comes first."""
    for t in p.tokens[start.i :]:
        if t.pos in ("NOUN", "PROPN"):
            return p.span(p.tokens[start.i : t.i + 1])
        if t.pos != "ADJ":
            return ""
    return ""


def be_adjective(c: Clause, adj: Token) -> list[Reading]:
    p = c.parsed
    word = adj.lower
    if adj.lemma.lower() == "allergic":
        heads = preps(p, adj, "to") or p.children(adj, "xcomp")
        # "allergic to shellfish and pollen" with "to shellfish" misread as an infinitive
        conjs = [x for h in heads if h.pos == "VERB" for x in p.children(h, "conj")]
        heads += [x for x in conjs if x.pos == "NOUN"]
        # "... and bee stings" with "bee" taken for an adjective: the words up to the noun
        runs = [_noun_run(p, x) for x in conjs if x.pos != "NOUN"]
        values = [v for h in heads for v in vs.coordinated(p, h)]
        # "to penicillin and bee stings" read as one phrase with "penicillin and bee" its
        # modifier: two things
        split = [(m, v) for v in values for m in p.children(v, "nmod", "compound")
                 if m.i < v.i and p.child(m, "cc") and p.child(m, "conj")]  # fmt: skip
        runs += [p.span(p.tokens[p.children(m, "conj")[0].i : v.i + 1]) for m, v in split]
        spans = [m.text for m, _ in split] or [value_span(c, v) for v in values]
        return some(*(fact("allergy", span, verb="allergic") for span in spans),
                    *(fact("allergy", run, verb="allergic") for run in runs if run))  # fmt: skip
    if word == "intolerant":  # "lactose intolerant": the word before, however it was parsed
        at = adj.i - 2 if adj.i > 1 and p[adj.i - 1].text == "-" else adj.i - 1
        before = p[at] if at >= 0 else None
        if before is None or not before.text.isalpha() or before.lower in lx.INTENSIFIERS:
            return []
        return some(fact("allergy", before.text))
    if word in lx.RELATIONSHIP_STATES:
        out = [fact("relationship", word)]
        out += [
            fact(f, value_span(c, h))
            for h in preps(p, adj, "with")
            if (f := vs.classify(p, h, entities=c.entities)) in ("family", "pet")
        ]
        return some(*out)
    if adj.lemma.lower() in ("base", "based", "locate", "located"):
        heads = preps(p, adj, "in") + [h for o in preps(p, adj, "out") for h in [o]]
        heads += [h for prep in p.children(adj, "prep") for q in p.children(prep, "prep")
                  for h in [p.child(q, "pobj")] if h is not None]  # fmt: skip
        return some(*(fact("location", value_span(c, t)) for h in heads if (t := place_of(c, h))))
    return _be_state(c, adj)


def _be_state(c: Clause, adj: Token) -> list[Reading]:
    p = c.parsed
    word = vs.hyphenated(p, adj).lower()
    if word in lx.DIETS:
        return some(fact("diet", word))
    if word in lx.HEALTH_ADJECTIVES:
        return some(fact("health", word))
    if word in lx.OCCUPATION_ADJECTIVES:
        return some(fact("occupation", value_span(c, adj)))
    heads = preps(p, adj, "with", "about")
    if word in ("obsessed", "passionate", "crazy") and heads:
        return some(*(fact("preference", value_span(c, h), verb="loves") for h in heads
                       if generic(p, h) and not mine(p, h)))  # fmt: skip
    if word in ("done", "through", "finished"):  # "I'm through with Spotify"
        heads = preps(p, adj, "with")
        return [replace(r, revoke=True, change=True) for h in heads for r in stopped_thing(c, h)]
    if word.isdigit():
        return some(fact("age", word))
    if word == "old":  # "I'm 29 years old"
        years = [n for a in p.children(adj, "npadvmod") for n in p.children(a, "nummod")]
        return some(*(fact("age", n.text) for n in years[:1] if n.text.isdigit()))
    if word in lx.IDENTITY_ADJECTIVES:
        return some(fact("identity", word))
    if word in _MULTILINGUAL or word == "conversational":
        langs = [v for h in preps(p, adj, "in") for v in vs.coordinated(p, h)]
        found = some(*(fact("language", value_span(c, h)) for h in langs
                       if vs.classify(p, h, entities=c.entities) == "language"))  # fmt: skip
        return found or some(*(fact("language", t.text) for t in _listed_languages(c, adj)))
    if (c.entities and adj.ent == "NORP") or (
        adj.pos == "ADJ" and adj.text[:1].isupper() and word.endswith(("an", "ese", "ish", "i"))
    ):
        return some(fact("origin", adj.text, kind="nationality"))
    return []


# Common nouns that name where someone is from: "from a small village", "from the coast".
_HOMELANDS = frozenset("village town city countryside suburbs coast island north south east west "
                       "midwest farm country mountains valley".split())  # fmt: skip
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday weekend".split())
_MULTILINGUAL = frozenset({"fluent", "bilingual", "trilingual", "multilingual", "polyglot"})
_LIST_GLUE = frozenset({",", ":", "-", "and", "&", "plus", "(", ")", "both"})


def _listed_languages(c: Clause, adj: Token) -> list[Token]:
    """The languages listed right after "bilingual" ("I'm trilingual: English, French and
    Arabic"), however the parser hung them."""
    out = []
    for token in c.parsed.tokens[adj.i + 1 :]:
        if token.lower in lx.LANGUAGES:
            out.append(token)
        elif token.lower not in _LIST_GLUE:
            break
    return out


def be_prep(c: Clause, prep: Token) -> list[Reading]:
    """ "be" with a preposition: in Lisbon, at Stripe, with Shopify, from Ohio, on a keto
    diet, into birdwatching, over Marvel movies, in a book club, in my late twenties."""
    p = c.parsed
    word = prep.lower
    head = p.child(prep, "pobj", "pcomp")
    if word == "out" and (clubs := [h for q in preps(p, prep, "of") for h in [q]
                                    if h.lemma.lower() in lx.CLUBS]):  # fmt: skip
        return some(*(fact("hobby", value_span(c, h), change=True, revoke=True) for h in clubs))
    if word == "through":  # "I'm through with Spotify": done with it
        return [replace(r, revoke=True, change=True) for h in preps(p, prep, "with")
                for r in stopped_thing(c, h)]  # fmt: skip
    if head is None:
        return []
    if word == "in":
        return _be_in(c, head)
    if word == "with" and head.lemma.lower() in lx.PARTNERS and mine(p, head):
        return some(
            fact("relationship", value_span(c, head), kind="partner")
        )  # "with my boyfriend"
    # "I'm at Stripe", "I'm at a startup called Fernweh"; not "I'm at the office right now"
    placed = organisation(c, head) and not vs.is_definite(p, head)
    at_work = head.pos == "PROPN" or head.lemma.lower() in lx.WORKPLACE_NOUNS  # "with a startup"
    if word in ("at", "with") and placed and (word == "at" or at_work):
        head = name_of(c, head)
        studying = any(h.lemma.lower() in ("year", "semester", "term", "grade")
                       for h in preps(p, c.pred, "in"))  # fmt: skip
        school = head.lemma.lower() in lx.SCHOOL_NOUNS or studying
        return some(fact("education" if school else "employer", value_span(c, head)))
    if word == "from":
        place = place_of(c, head)
        if place is None or not (place.pos == "PROPN" or place.lemma.lower() in _HOMELANDS
                                 or (c.entities and place.ent in ("GPE", "LOC"))):  # fmt: skip
            return []  # "I'm from the IT department": a team, not a homeland
        return some(fact("origin", value_span(c, place)))
    if word == "off" and generic(p, head, definite_ok=False):
        # "I'm off sugar now", "off Twitter for good": given up
        family = vs.classify(p, head, entities=c.entities)
        family = "diet" if head.lemma.lower() in lx.FOODS else family
        if family in ("diet", "device", "health"):
            return some(fact(family, value_span(c, head), change=True, revoke=True))
        return []
    if word == "on" and head.lemma.lower() in lx.CLUBS:  # "on the data team at Zalando"
        places = [h for h in preps(p, head, "at", "with") if organisation(c, h)]
        return some(*(fact("employer", value_span(c, name_of(c, h))) for h in places))
    if word == "on":
        return _be_on(c, head)
    if word == "into" and generic(p, head):
        family = "hobby" if head.lower.endswith("ing") else "preference"
        return some(fact(family, value_span(c, head)))
    if word == "over":
        if vs.is_deictic(p, head):
            return [Reading("", "", "", revoke=True, change=True, anaphor=True)]
        if not generic(p, head):
            return []  # "over the moon"
        return [replace(r, revoke=True, change=True) for r in _over(c, head)]
    return []


def _over(c: Clause, head: Token) -> list[Reading]:
    p = c.parsed
    if head.lemma.lower() in lx.ALLERGY_NOUNS:
        what = [m for m in p.children(head, "compound", "amod", "nmod")]
        return some(*(fact("allergy", m.text) for m in what[:1]))
    return some(fact("preference", value_span(c, head)))


def _be_in(c: Clause, head: Token) -> list[Reading]:
    p = c.parsed
    text = p.span(p.subtree(head))
    if _DECADES.search(text):
        return some(fact("age", value_span(c, head)))
    if head.lemma.lower() in lx.CLUBS:
        return some(fact("hobby", value_span(c, head)))
    if head.lemma.lower() == "year":
        schools = [h for h in preps(p, head, "at", "of") if organisation(c, h) or h.pos == "PROPN"]
        return some(*(fact("education", value_span(c, h)) for h in schools))
    if head.lemma.lower() in ("code", "zip"):
        numbers = [t for t in p.subtree(head) if t.pos == "NUM" or t.text.isdigit()]
        return some(*(fact("location", n.text) for n in numbers[:1]))
    place = named_place(c, head)
    if place is None or _temporary(c):
        return []
    return some(fact("location", value_span(c, place)))


def named_place(c: Clause, head: Token) -> Token | None:
    """The place *head* names by name (Lisbon, Philly), not a common noun ("in a band",
    "in sales") and not a team ("in Marketing")."""
    place = place_of(c, head)
    if place is None or place.lower in lx.DEPARTMENTS:
        return None
    if place.pos == "PROPN" or (c.entities and place.ent in ("GPE", "LOC")):
        return place
    # The small tagger misreads some names ("Philly"/RB, "Leeds"/NNS): a capitalised word
    # inside the sentence, not an acronym, is still a name.
    word = place.text
    inside = place.i > 0 and c.parsed[place.i - 1].text not in (".", "!", "?", ":")
    return place if inside and word[:1].isupper() and not word.isupper() else None


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
        return some(fact("diet", p.span(mods))) if mods else []
    if vs.medication(p, head):  # "I'm on blood thinners"
        return some(fact("health", value_span(c, head)))
    family = vs.classify(p, head, entities=c.entities)
    if head.lemma.lower().rstrip("s") in _WEEKDAYS:
        return []  # "I'm on Saturdays": when, not a thing used
    if family == "device" or (head.pos == "PROPN" and head.ent not in ("PERSON", "GPE", "DATE")):
        return some(fact("device", value_span(c, head)))
    return []


# One's own home, told by where it is: "my flat is in Leith", "our new place is in Hackney".
_OWN_HOMES = frozenset("place flat apartment house home condo".split())


def _owned(c: Clause) -> list[Reading]:
    """ "my X is Y": Y as what X names ("my email is ...", "my phone is a Galaxy S21", "my
    favourite colour is green", "my hobby is woodworking", "my birthday is March 3rd")."""
    p, owner = c.parsed, c.owner
    assert owner is not None
    values = p.children(c.pred, "attr", "acomp", "oprd") or preps(p, c.pred, "on")
    lemma = owner.lemma.lower()
    favourite = any(m.lower in ("favorite", "favourite", "fave") for m in p.children(owner))
    said = _said(c)
    if lemma in lx.CONTACT_NOUNS and not favourite and said:
        # Read as written, whatever the parse makes of it: "555-0100" is often no attribute.
        return _contact(c, owner, said)
    if lemma in lx.JOB_NOUNS and (places := [h for h in preps(p, c.pred, "at", "with", "for")
                                             if organisation(c, h)
                                             and not vs.is_definite(p, h)]):  # fmt: skip
        # "My job is at a hospital in Leeds": where the speaker works
        return some(*(fact("employer", value_span(c, name_of(c, h))) for h in places))
    if lemma in _OWN_HOMES:  # "our new place is in Hackney": where the speaker lives
        homes = [t for h in preps(p, c.pred, "in") if (t := named_place(c, h)) is not None]
        return some(*(fact("location", value_span(c, t)) for t in homes[:1]))
    if not values:  # "my pronouns are she/her": read as written
        family = lx.OWN_ATTRIBUTES.get(lemma)
        return some(fact(family, said)) if family in ("identity", "age") else []
    value = values[0]
    if favourite:
        return some(fact("preference", value_of(c, value), kind=f"favorite {owner.lower}", verb=""))
    if lemma in lx.DEVICE_NOUNS:  # "my phone is a Pixel"; not "my phone is dead"
        return some(fact("device", value_of(c, value))) if value.pos != "ADJ" else []
    family = lx.OWN_ATTRIBUTES.get(lemma)
    if family is None:
        return []
    if (
        family == "occupation"
        and value.pos == "ADJ"
        and value.lower not in lx.OCCUPATION_ADJECTIVES
    ):
        return []  # "my job is stressful": what it is like, not what it is
    kind = {"age": "birthday" if lemma == "birthday" else "age", "finance": lemma,
            "origin": "nationality" if lemma == "nationality" else ""}.get(family, "")  # fmt: skip
    return some(fact(family, said if family in ("age", "identity") else value_of(c, value),
                     kind=kind))  # fmt: skip


def _said(c: Clause) -> str:
    """Everything the clause says after "is", as written ("14 Elm Street, Dublin",
    "they/them", "March 3rd"), without a leading article and the closing punctuation."""
    p = c.parsed
    rest = [t for t in p.tokens[c.pred.i + 1 :] if t.i in clause_tokens(p, c.pred)]
    while rest and rest[-1].pos == "PUNCT" and rest[-1].text != ")":
        rest = rest[:-1]
    while rest and (rest[0].dep in ("det", "poss") or rest[0].lower == "on"):
        rest = rest[1:]  # "a", "my", "on June 5th"
    return p.span(rest)


def _contact(c: Clause, owner: Token, said: str) -> list[Reading]:
    """ "my email is ...", "my number is 555-0148"; "my phone is a Pixel" names a device and
    "my passport number is ..." no way to reach the speaker."""
    p, lemma = c.parsed, owner.lemma.lower()
    kinds = {m.lower for m in p.children(owner, "compound", "amod", "nmod")}
    if lemma == "number" and kinds - {"phone", "cell", "mobile", "work", "home", "new", "old"}:
        return []
    reachable = sum(ch.isdigit() for ch in said) >= 5 or "@" in said
    if reachable or lemma in ("address", "email", "e-mail"):
        return some(fact("contact", said, kind=contact_noun(p, owner)))
    if lemma == "phone":
        values = p.children(c.pred, "attr", "acomp", "oprd")
        return some(*(fact("device", value_of(c, v)) for v in values[:1]))
    return []


def _topic(c: Clause) -> list[Reading]:
    """ "Photography is my thing", "Thai food is my absolute favorite": the subject is the
    value of what the complement names."""
    p, topic = c.parsed, c.topic
    assert topic is not None
    if (home := _home(c, topic)) is not None:
        return some(fact("location", value_span(c, home)))
    for comp in p.children(c.pred, "attr"):
        if _part_of_me(p, comp, c.pred) and (activity(topic) or topic.lower.endswith("ing")):
            return some(fact("hobby", value_of(c, topic)))  # "Music is a big part of my life"
        if not any(m.lower in ("my", "our") for m in p.children(comp, "poss")):
            continue
        family = lx.OWN_NOUNS.get(comp.lemma.lower()) or lx.OWN_NOUNS.get(comp.lower)
        if any(m.lower in ("favorite", "favourite", "fave") for m in p.children(comp, "amod")):
            family = "preference"  # "Pizza is my favorite food"
        if family is not None and c.negated and not c.withdrawn and family == "hobby":
            # "Horror movies aren't my thing": a dislike (read so by the clause's "not")
            return some(fact("preference", value_of(c, topic)))
        if family is not None:
            return some(fact(family, value_of(c, topic), verb="loves" if family ==
                              "preference" else None))  # fmt: skip
    return []


def _part_of_me(p: Parsed, comp: Token, pred: Token) -> bool:
    """ "a huge part of me", "a big part of my life": what the speaker is made of (the "of"
    hung on the part, or on the verb)."""
    if comp.lemma.lower() != "part":
        return False
    of = preps(p, comp, "of") + preps(p, pred, "of")
    return any(h.lower in ("me", "us") or (h.lemma.lower() in ("life", "identity", "routine")
                                            and mine(p, h)) for h in of)  # fmt: skip


def _home(c: Clause, topic: Token) -> Token | None:
    """ "Home is Dublin now", "Tokyo's been home for a year": the named place that "home" is
    (the speaker's, with "for me" or nobody else named); not "home is where the heart is"."""
    p = c.parsed
    comps = p.children(c.pred, "attr") + [
        a for a in p.children(c.pred, "advmod") if a.lower == "home"
    ]  # "Tokyo's been home"
    owners = [o for t in (topic, *comps) for o in p.children(t, "poss")]
    owners += p.children(topic, "det")
    if any(o.lower not in lx.POSSESSIVE for o in owners):
        return None  # "her home is Paris", "the home is ..."
    fors = preps(p, c.pred, "for") + [h for t in (topic, *comps) for h in preps(p, t, "for")]
    for other in fors:
        kin = {other.lower, other.lemma.lower()} & lx.RELATIONS
        someone = other.pos in ("PRON", "PROPN") or bool(kin)
        if other.lower not in ("me", "us") and someone:
            return None  # "home for my parents is Leeds"
    if topic.lemma.lower() == "home":  # "Home is Dublin", "home is a flat in Leith"
        places = [h for comp in comps for h in [comp, *preps(p, comp, "in")]]
        return next((pl for h in places if (pl := named_place(c, h)) is not None), None)
    if any(comp.lemma.lower() == "home" for comp in comps):
        return named_place(c, topic)
    return None
