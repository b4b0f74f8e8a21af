"""What frames read a clause with (pure): the :class:`Reading` record, and the arguments of a
predicate as values: its objects and prepositional objects, a value's span, whether a noun
names a thing in general or one the conversation points at, an organisation, a place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.clauses import Clause
from kenning.longterm.parsing.parsed import Parsed, Token

__all__ = [
    "Frame",
    "Reading",
    "activity",
    "clause_tokens",
    "contact_kind",
    "contact_noun",
    "fact",
    "field_named",
    "generic",
    "loose_objects",
    "mine",
    "name_of",
    "objects",
    "organisation",
    "place_of",
    "preps",
    "qualifier",
    "school_named",
    "some",
    "stopped_thing",
    "trimmed",
    "value_of",
    "value_span",
    "verb_phrase",
]

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


_TIMES = frozenset("january february march april may june july august september october "
                   "november december spring summer autumn fall winter".split())  # fmt: skip


_NOT_ORGANISATIONS = frozenset({"PERSON", "DATE", "TIME"})  # fmt: skip


Frame = Callable[[Clause], list[Reading]]
"""Reads what a clause states by its predicate."""


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


def some(*found: Reading | None) -> list[Reading]:
    return [r for r in found if r is not None]


def preps(p: Parsed, token: Token, *words: str) -> list[Token]:
    """The objects of *token*'s prepositions among *words* ("live in X" -> X)."""
    out = []
    for prep in p.children(token, "prep", "agent", "dative"):
        if prep.lower in words:
            noun = p.child(prep, "pobj", "pcomp")
            if noun is not None:
                out.append(noun)
    return out


def objects(p: Parsed, pred: Token) -> list[Token]:
    """*pred*'s direct objects with those coordinated with them ("Linux ... and a Mac")."""
    found = p.children(pred, "dobj")
    # A second object after a comma is an aside ("not doing CrossFit anymore, too many
    # injuries"), not one more thing done.
    found = [o for o in found if not any(t.text == "," for t in p.tokens[found[0].i : o.i])]
    if not found:
        return []
    extra = [c for c in p.children(pred, "conj") if c.pos in ("NOUN", "PROPN")]
    return [v for head in found for v in vs.coordinated(p, head)] + extra


_ADVERBIAL = frozenset("so too much lot now anymore really more here there today lately again "
                       "well also still just".split())  # fmt: skip


def loose_objects(p: Parsed, pred: Token) -> list[Token]:
    """What the tagger took for something else after a verb of liking ("I hate cilantro":
    cilantro/advmod, "I love anime": anime/npadvmod, "I love hiking": hiking/xcomp)."""
    for child in p.children(pred, "xcomp", "npadvmod", "advmod", "attr", "oprd", "acomp"):
        if child.i > pred.i and child.lower not in _ADVERBIAL and child.text.isalpha() and (
                child.pos in ("NOUN", "PROPN", "ADJ", "VERB")):  # fmt: skip
            return list(vs.coordinated(p, child))
    return []


_WH = frozenset({"who", "what", "which", "where"})


def clefted(p: Parsed, pred: Token, found: Token | None) -> Token | None:
    """What a wh-word stands for in a cleft: "Berlin is where I live", "Deutsche Bahn is who
    I work for", "Excel is what I use" give Berlin, Bahn, Excel for *found* (the wh-word, or
    None where the clause has no argument of its own)."""
    head = p.head(pred)
    if found is not None and found.lower not in _WH:
        return None
    if head is None or head.lemma != "be" or pred.dep not in ("ccomp", "advcl", "relcl"):
        return None
    subject = p.child(head, "nsubj")
    if subject is None or subject.i > pred.i or subject.pos not in ("PROPN", "NOUN"):
        return None
    return subject


def mine(p: Parsed, head: Token) -> bool:
    """ "my job", "my dog": a particular thing of the speaker's, not a kind liked in general."""
    return any(m.lower in ("my", "our") for m in p.children(head, "poss"))


def qualifier(p: Parsed, *tokens: Token) -> str:
    for token in tokens:
        for prep in p.children(token, "prep"):
            noun = p.child(prep, "pobj")
            if noun is not None:
                words = (prep.lower, p.span(p.subtree(noun)).lower())
                if words in _QUALIFIERS:
                    return " ".join(words)
    return ""


def value_span(c: Clause, head: Token) -> str:
    return vs.span(c.parsed, head, entities=c.entities)


def generic(p: Parsed, head: Token, *, definite_ok: bool = False) -> bool:
    """A thing in general, not one the conversation points at."""
    if vs.is_deictic(p, head) and head.text != "IT":
        return False
    return definite_ok or not vs.is_definite(p, head)


def organisation(c: Clause, head: Token) -> bool:
    """Whether *head* names an organisation (or is a workplace: "a small bakery", "the
    hospital"); "a tiny robotics startup called Kinemo" by its noun or its name."""
    named = name_of(c, head)
    if named is not head and organisation(c, named):
        return True
    if c.entities and head.ent in ("ORG", "FAC"):
        return True
    if any(t.pos == "NUM" for t in c.parsed.children(head, "nummod", "appos", "compound")):
        return False  # "at Gate 12", "at Terminal 5": a spot, not a workplace
    # The small model reads many companies as places or nationalities ("Shopify", "Oracle"):
    # after "work at" or "be with", a proper noun is taken for an organisation unless it is
    # read as a person, a time or a number.
    if head.pos == "PROPN" and not (c.entities and head.ent in _NOT_ORGANISATIONS):
        return True
    return head.lemma.lower() in lx.WORKPLACE_NOUNS


def place_of(c: Clause, head: Token) -> Token | None:
    """The place a noun names: itself when it is a place name, else a place named in it
    ("our new place in Utrecht" -> Utrecht)."""
    p = c.parsed
    if head.text[:1].isdigit() or head.lower in _TIMES:
        return None  # "born in the 90s", "moved in 2019", "in March": a time, not a place
    if (c.entities and head.ent in ("GPE", "LOC", "FAC")) or head.pos == "PROPN":
        return head
    if head.text[:1].isupper() and head.text.isalnum():
        return head  # a capitalised name the tagger took for something else ("Town6"/CD)
    for inner in preps(p, head, "in", "at", "near", "outside", "of"):
        found = place_of(c, inner)
        if found is not None:
            return found
    # A common noun is a place with its article ("the suburbs", "a village by the sea");
    # without one it is rather a thing or a pastime ("I've moved to oil painting").
    placed = p.children(head, "det", "poss")
    if head.pos == "NOUN" and placed and not vs.is_deictic(p, head) and head.lemma not in (
            "place", "house", "home", "apartment", "flat", "area", "city", "town"):  # fmt: skip
        return head
    return None


def name_of(c: Clause, head: Token) -> Token:
    """ "a startup called Fernweh" -> Fernweh."""
    for acl in c.parsed.children(head, "acl"):
        if acl.lemma in ("call", "name"):
            name = c.parsed.child(acl, "oprd", "attr", "dobj", "xcomp")
            if name is not None:
                return name
    return head


def verb_phrase(p: Parsed, verb: Token) -> str:
    """An activity as written: the verb with its particle and object ("bake sourdough",
    "helping the community"), without adverbs, prepositions or clauses after it; "" when
    its object points at the conversation ("making this cake") or it has a clause for one
    ("making it a better place")."""
    obj = p.child(verb, "dobj")
    if obj is None:
        if p.children(verb, "ccomp", "xcomp", "oprd", "attr"):
            return ""
        if verb.lemma.lower() == "go":  # "going to concerts", "going on long walks": where
            for prep in (t for t in p.children(verb, "prep") if t.lower in ("to", "on")):
                to = p.child(prep, "pobj")
                if to is not None and generic(p, to, definite_ok=True):
                    return p.span([verb, prep, *trimmed(p, to)])
            return ""  # "I love going": nowhere named
        return p.span([verb, *p.children(verb, "prt")])
    if not generic(p, obj, definite_ok=True):
        return ""
    return p.span([verb, *p.children(verb, "prt"), *trimmed(p, obj)])


def trimmed(p: Parsed, head: Token) -> list[Token]:
    """*head* with what depends on it, less prepositional phrases, clauses, coordination and
    appositions ("the community that I love" -> "the community")."""
    out = [head]
    for child in p.children(head):
        if child.dep not in ("prep", "relcl", "acl", "conj", "cc", "appos", "punct", "advcl"):
            out.extend(trimmed(p, child))
    return out


def activity(head: Token) -> str | None:
    word = head.lemma.lower()
    return "hobby" if word in lx.ACTIVITIES or head.lower in lx.ACTIVITIES else None


def contact_noun(p: Parsed, head: Token) -> str:
    """The kind of contact detail a noun names ("email address" -> ``email``, "cell number"
    -> ``phone number``), "" for none."""
    for word in [m.lower for m in p.children(head, "compound")] + [head.lemma.lower()]:
        if word in lx.CONTACT_NOUNS:
            return lx.CONTACT_NOUNS[word]
    return ""


def contact_kind(text: str) -> str:
    if "@" in text and "." in text.split("@")[-1]:
        return "email"
    if text.startswith("@"):
        return "handle"
    return "phone number" if sum(ch.isdigit() for ch in text) >= 5 else "address"


def stopped_thing(c: Clause, head: Token) -> list[Reading]:
    """What "done with" or "over" withdraws: a thing of a family, or a taste; not a particular
    thing of the speaker's that names no family ("done with my homework")."""
    if vs.is_deictic(c.parsed, head) or head.lemma.lower() == "be":
        return []  # "done with being vegan": the clause under "being" is read withdrawn
    family = vs.classify(c.parsed, head, entities=c.entities) or activity(head)
    if family is None and head.lower in lx.FIELDS:
        family = "occupation"  # "done with teaching"
    if family is None and mine(c.parsed, head):
        return []
    return some(fact(family or "preference", value_span(c, head)))


def clause_tokens(p: Parsed, pred: Token) -> set[int]:
    """The token indices of *pred*'s clause: its subtree less the clauses under it."""
    out = {pred.i}
    for child in p.children(pred):
        if child.dep not in ("advcl", "conj", "cc", "parataxis", "ccomp", "relcl"):
            out |= {t.i for t in p.subtree(child)}
    return out


def value_of(c: Clause, value: Token) -> str:
    p = c.parsed
    if value.pos == "VERB":
        return verb_phrase(p, value)
    tokens = [t for t in vs.value_tokens(p, value, entities=c.entities)]
    return p.span(tokens)


def school_named(c: Clause, head: Token) -> bool:
    """Whether *head* names a school by its name ("Leeds University", "the Open University")."""
    words = {t.lower for t in c.parsed.subtree(head)}
    return bool(words & lx.SCHOOL_NOUNS) and organisation(c, head)


def field_named(c: Clause, head: Token) -> str:
    """ "an evening course in accounting": the field stays with a course, also where the
    parser hung it on the verb."""
    p = c.parsed
    span = value_span(c, head)
    after = head.i + 1 + sum(1 for t in p.children(head, "case") if t.i > head.i)  # "master's"
    following = p.tokens[after] if after < len(p) else None
    if head.lemma.lower() in lx.EDUCATION_NOUNS | {"class"} and following is not None and (
            following.lower == "in" and following.dep == "prep"):  # fmt: skip
        noun = p.child(following, "pobj")
        if noun is not None:  # the field without what hangs on it ("at UCL")
            field = vs.value_tokens(p, noun, entities=c.entities)
            return p.span([*vs.value_tokens(p, head, entities=c.entities), *field])
    return span
