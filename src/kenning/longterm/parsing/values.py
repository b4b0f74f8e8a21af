"""Values in a parsed sentence (pure): a value's span, cut at its entity or noun-phrase
boundary, and the family a bare noun names.

A value is a noun phrase without its determiner, possessive, evaluative modifiers ("my old
ThinkPad" -> ``ThinkPad``, "a very loud parrot" -> ``parrot``), prepositional phrases,
relative clauses and appositions ("a small bakery in Porto" -> ``small bakery``); numerals and
words that name the kind stay (``two kids``, ``golden retriever``, ``type 1 diabetes``). A
named entity is taken whole ("St. Mary's", "Tesla Model 3").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing.parsed import Parsed, Token

__all__ = [
    "classify",
    "coordinated",
    "is_deictic",
    "is_name",
    "noun_of",
    "obj",
    "role",
    "span",
    "value_tokens",
]

# Heads whose "in X" names what they are in ("a master's in economics").
_FIELD_HEADS = (
    frozenset(
        {
            "master",
            "master's",
            "masters",
            "bachelor",
            "bachelor's",
            "degree",
            "phd",
            "course",
            "diploma",
            "major",
            "minor",
        }
    )
    | lx.PARENT_NOUNS
)
_ARTICLE = re.compile(r"^(?:a|an|the|my|our|some|any)\s+", re.IGNORECASE)


def span(p: Parsed, head: Token, *, entities: bool = True) -> str:
    """The value whose head is *head*, as written (see the module's rules)."""
    return p.span(value_tokens(p, head, entities=entities))


def value_tokens(p: Parsed, head: Token, *, entities: bool = True) -> list[Token]:
    """The tokens of the value headed by *head*: its entity if it is part of one (and
    *entities*), else the head with the modifiers that name its kind."""
    kept = [head, *_left(p, head)]
    first = min(t.i for t in kept)
    if first >= 2 and p[first].pos == "NUM" and p[first - 1].lower in _GRADED:
        kept.append(p[first - 1])  # "type 2 diabetes", "stage 3 cancer"
    if entities and head.ent and head.pos in ("PROPN", "NOUN", "NUM", "ADJ"):
        kept.extend(_entity(p, head))
    for child in p.children(head):
        if child.i < head.i:
            continue
        if (
            child.dep in ("compound", "nummod", "case")
            or (child.dep == "punct" and child.text == "-")
            or (child.dep == "prep" and child.lower in ("in", "of") and head.lower in _FIELD_HEADS)
            or _name_of_place(p, head, child)
            or _ampersand(p, head, child)
        ):
            kept.extend(p.subtree(child))
    return sorted({t.i: t for t in kept}.values(), key=lambda t: t.i)


# Words that grade a condition by the number after them.
_GRADED = frozenset({"type", "stage", "grade", "level", "class"})


def _ampersand(p: Parsed, head: Token, child: Token) -> bool:
    """ "Baker & Finch", "Procter & Gamble": one name joined by "&", not two."""
    if (
        head.pos != "PROPN"
        or child.dep not in ("cc", "conj")
        or child.pos not in ("PROPN", "CCONJ")
    ):
        return False
    joint = next((t for t in p.children(head, "cc") if t.text == "&"), None)
    return joint is not None and (child is joint or child.i == joint.i + 1)


def _name_of_place(p: Parsed, head: Token, child: Token) -> bool:
    """ "the City of Toronto", "the Bank of England": a capitalised name that goes on with "of"
    and another name."""
    if head.pos != "PROPN" or child.dep != "prep" or child.lower != "of":
        return False
    named = p.child(child, "pobj")
    return named is not None and named.pos == "PROPN"


def _left(p: Parsed, head: Token) -> list[Token]:
    """*head*'s left modifiers that name its kind, nearest first, up to the first that
    does not (a determiner, a possessive, an evaluative or intensified adjective)."""
    out: list[Token] = []
    for child in reversed([c for c in p.children(head) if c.i < head.i]):
        if child.dep == "poss" and child.pos == head.pos == "PROPN" and p.child(child, "case"):
            out.extend(p.subtree(child))  # "King's College", "St. Mary's Hospital": one name
            break
        if child.dep in ("det", "poss", "predet", "prep", "advmod", "neg", "punct", "cc"):
            if child.dep == "punct" and child.text == "-":
                continue
            break
        if child.dep == "amod" and _evaluative(p, child):
            break
        if child.lower in ("based", "born", "bred", "raised"):
            break  # "a Leipzig-based photographer": where, not what kind (read as a place)
        if child.dep not in ("compound", "amod", "nummod", "nmod", "quantmod", "npadvmod"):
            break
        out.extend(p.subtree(child))
    return out


def _evaluative(p: Parsed, adjective: Token) -> bool:
    if adjective.lower in lx.EVALUATIVE:
        return True
    return any(c.dep == "advmod" and c.lower in lx.INTENSIFIERS for c in p.children(adjective))


def _entity(p: Parsed, head: Token) -> list[Token]:
    """The run of tokens around *head* with its entity type (one entity, as the parser read
    it), without a leading article."""
    first = last = head.i
    while first > 0 and p[first - 1].ent == head.ent and p[first - 1].dep != "det":
        first -= 1
    while last + 1 < len(p) and p[last + 1].ent == head.ent and p[last + 1].pos != "PUNCT":
        last += 1
    tokens = list(p.tokens[first : last + 1])
    while tokens and tokens[0].lower in ("the", "a", "an", "my", "our"):
        tokens = tokens[1:]
    # An entity that is mostly not this value (the parser joined two) is not used.
    if any(t.dep in ("prep", "cc", "conj") for t in tokens if t.i != head.i):
        return []
    return tokens


def hyphenated(p: Parsed, token: Token) -> str:
    """*token* with the words joined to it by hyphens before it ("gluten-free")."""
    start = token.i
    while (
        start >= 2
        and p[start - 1].text == "-"
        and not p[start - 2].space
        and not p[start - 1].space
    ):
        start -= 2
    return p.span(list(p.tokens[start : token.i + 1]))


def obj(text: str) -> str:
    """A value as the object part of an attribute: lower case, no leading article."""
    return _ARTICLE.sub("", " ".join(text.lower().split())).strip(" .,!?'\"")


_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})


def coordinated(p: Parsed, head: Token) -> Iterator[Token]:
    """*head* and the values of its kind coordinated with it ("French and Spanish", "hiking,
    camping"; a noun's conjunct that is a verb is a clause of its own)."""
    yield head
    for child in p.children(head, "conj"):
        same = (child.pos in _NOMINAL) == (head.pos in _NOMINAL) or (
            child.lower.endswith("ing") and head.lower.endswith("ing")
        )  # "reading and writing"
        if same and not p.child(child, "neg"):
            yield from coordinated(p, child)


def is_deictic(p: Parsed, head: Token) -> bool:
    """Whether *head* points at the conversation or at something named before ("it", "that
    idea", "this series", "your work") rather than a thing in general."""
    if head.pos == "PRON" or head.lower in lx.DEICTIC:
        return True
    for child in p.children(head, "det", "poss"):
        if child.lower in ("this", "that", "these", "those", "your", "his", "her", "their",
                           "its", "which", "what"):  # fmt: skip
            return True
        if child.dep == "poss" and child.pos in ("PROPN", "NOUN"):
            return True  # "the library's app": someone else's
    return False


def is_definite(p: Parsed, head: Token) -> bool:
    """ "the X" for a common noun: a particular thing of the conversation, not a kind."""
    # A capitalised noun after "the" is a name the tagger missed ("the Beatles").
    named = head.text[:1].isupper() and head.i > 0
    if head.lower in lx.GENERIC_WITH_THE and all(c.dep == "det" for c in p.children(head)):
        return False  # "I love the blues", "I hate the cold": the kind, in general
    return (
        head.pos == "NOUN"
        and not head.ent
        and not named
        and any(c.lower == "the" for c in p.children(head, "det"))
    )


def is_name(token: Token, *, entities: bool = True) -> bool:
    """A proper name: a PERSON entity, or (without entities) a capitalised proper noun."""
    if entities and token.ent:
        return token.ent == "PERSON"
    return token.pos == "PROPN" and token.text[:1].isupper()


def role(p: Parsed, noun: Token) -> bool:
    """Whether *noun* names a paid line of work: "nurse", or an agent noun with what it works
    on before it ("dog walker", "house sitter"; not "a hard worker")."""
    lemma = noun.lemma.lower()
    if lemma in lx.OCCUPATIONS:
        return True
    if lemma not in lx.WORK_AGENTS and noun.lower not in lx.WORK_AGENTS:
        return False
    before = [m for m in p.children(noun, "compound") if m.i == noun.i - 1]
    return any(m.pos in ("NOUN", "PROPN") for m in before)


def noun_of(p: Parsed, token: Token) -> Token:
    """The noun a preposition or a possessive points at (*token* itself otherwise)."""
    if token.dep == "prep" or token.pos == "ADP":
        found = p.child(token, "pobj", "pcomp")
        if found is not None:
            return found
    return token


def medication(p: Parsed, head: Token) -> bool:
    """Whether *head* names a medicine taken over time ("insulin", "blood thinners")."""
    mods = {c.lower for c in p.children(head) if c.dep in ("compound", "amod")}
    words = {head.lower, head.lemma.lower()} | {f"{m} {head.lower}" for m in mods}
    the = any(d.lower == "the" for d in p.children(head, "det"))
    if words & lx.MEDICATIONS or (the and head.lower == "pill"):  # "on the pill"
        return True
    # a medicine by its generic name ("amlodipine"), not a word that happens to end alike
    word = head.lower
    return head.pos in ("NOUN", "PROPN") and len(word) > 6 and word.endswith(lx.MEDICINE_STEMS)


def classify(p: Parsed, head: Token, *, entities: bool = True) -> str | None:
    """The family a bare value names by its head noun ("two kids" -> family, "parrot" ->
    pet, "Pixel 8" -> device), None when it names none of them."""
    word, lemma = head.lower, head.lemma.lower()
    modifiers = {c.lower for c in p.children(head) if c.dep in ("compound", "amod")}
    words = {word, lemma} | {f"{m} {lemma}" for m in modifiers}
    if words & lx.PARTNERS:
        return "relationship"
    counted = any(c.dep == "nummod" for c in p.children(head))  # "two boys"
    if words & lx.FAMILY_NOUNS or (
        (modifiers & lx.FAMILY_NOUNS or counted) and lemma in ("boy", "girl")
    ):
        return "family"  # "a baby girl"
    if words & lx.PETS:
        return "pet"
    if words & lx.ALLERGY_NOUNS:
        return "allergy"
    hurt = bool(modifiers & lx.INJURIES) and lemma in lx.BODY_PARTS  # "a herniated disc"
    if words & lx.HEALTH_NOUNS or words & lx.HEALTH_ADJECTIVES or words & lx.MEDICATIONS or hurt:
        return "health"
    if words & lx.DIETS or words & lx.DIET_PRACTICES or (lemma == "diet" and modifiers):
        return "diet"
    if words & lx.LANGUAGES or (entities and head.ent == "LANGUAGE"):
        return "language"
    if lemma in ("class", "lesson", "lessons", "course"):
        if modifiers & lx.LANGUAGES:
            return "education"
        if modifiers & lx.ACTIVITIES:
            return "hobby"  # "my yoga class"
    if words & lx.EDUCATION_NOUNS:
        return "education"
    compounds = p.children(head, "compound")
    makers = {c.lower for c in compounds} | {word}
    brands = {c.lower for c in compounds if c.pos == "PROPN"}
    if (
        words & lx.DEVICE_NOUNS
        or makers & lx.VEHICLE_MAKERS
        or brands & lx.DEVICE_NOUNS  # "a Garmin Forerunner 255", not "a phone case"
        or (entities and head.ent == "PRODUCT")
    ):
        return "device"
    if words & lx.FOODS:
        return "diet"
    return None
