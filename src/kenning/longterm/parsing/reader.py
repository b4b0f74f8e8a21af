"""The statement reader (pure): the facts a parsed sentence states about the speaker.

It reads each clause (:mod:`~kenning.longterm.parsing.clauses`: subject, modality, negation,
tense), finds what the clause's predicate states (:mod:`~kenning.longterm.parsing.frames`), and
turns each reading into a :class:`~kenning.records.FactDraft` with kenning's attribute names:
single-valued ``location``, ``employer``, ``occupation``, ``name``, ``age``, ``hometown``,
``nationality``, ``relationship status``, ``partner``, ``income``, ``bank``, ``debt``, contact
kinds (``email``, ``phone number``, ``address``) and ``favorite X``; multi-valued ones carry
their object (``preference:jazz``, ``allergy:peanuts``, ``condition:asthma``, ``is_a:vegan``,
``diet:fish``, ``uses:linux``, ``family:two kids``, ``pet:dog``, ``language:spanish``,
``hobby:pottery``, ``education:law``), and a standing negative puts "no" before the object
(``diet:no pork``, ``uses:no car``; a dislike is ``preference:X`` = ``dislikes``).

Nothing here loads a model: the parser shell (:mod:`~kenning.longterm.parsing.parser`) makes
the :class:`~kenning.longterm.parsing.parsed.Parsed` records, and tests build them by hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime

from kenning.longterm.extract import stated_start, statement
from kenning.longterm.parsing import lexicon as lx
from kenning.longterm.parsing import values as vs
from kenning.longterm.parsing.arguments import Reading, activity, fact
from kenning.longterm.parsing.clauses import Clause, Sentence, clauses, follows_from, sentence_of
from kenning.longterm.parsing.fragments import continued
from kenning.longterm.parsing.frames import read_clause, settle
from kenning.longterm.parsing.parsed import Parsed, Token
from kenning.longterm.parsing.repairs import repaired
from kenning.records import USER, FactCategory, FactDraft, FactSource

__all__ = ["read_continuation", "read_statements"]

_CATEGORIES = {
    "allergy": FactCategory.HEALTH, "health": FactCategory.HEALTH,
    "finance": FactCategory.FINANCE, "relationship": FactCategory.RELATIONSHIP,
    "family": FactCategory.RELATIONSHIP,
}  # fmt: skip


def read_statements(
    parsed: Parsed, *, said: datetime, speaker: str | None = None, entities: bool = True
) -> list[FactDraft]:
    """The facts *parsed* states about its speaker (subject ``user``) and about people it
    names ("my sister is a vegan": subject ``sister``), as said at *said*.

    Args:
        parsed: One sentence (or a few, read together).
        said: When it was said: a fact holds from then, or from the start the sentence
            names ("since 2020", "last month").
        speaker: The speaker's name, if known: a clause about that name is about the user.
        entities: Whether the parse carries entity types (they decide what "at Stripe" or
            "in Lisbon" names; without them proper nouns do).

    >>> read_statements(Parsed.of("", ()), said=datetime(2026, 1, 1))
    []
    """
    parsed = repaired(parsed)
    sentence = sentence_of(parsed, speaker=speaker, entities=entities)
    start = stated_start(parsed.text, said)
    out: dict[tuple[str, str, str, bool], FactDraft] = {}
    previous: Reading | None = None
    for clause in clauses(sentence):
        if _consumed(parsed, clause.pred):
            continue
        found = [r for r in (_resolve(r, previous) for r in read_clause(clause)) if r is not None]
        previous = next((r for r in reversed(found) if r.family), None) or _topic(clause, previous)
        for reading in settle(clause, found):
            draft = _draft(reading, clause.subject, hedged=clause.hedged, start=start)
            # The later clause has the last word: "we moved back to Poland, we're in Gdansk now".
            key = (draft.subject, draft.attribute, draft.qualifier, draft.revoke)
            out.pop(key, None)
            out[key] = draft
    extra = [*_for_me(sentence), *_as_a(sentence), *_named_kin(sentence), *_counted_now(sentence)]
    for reading in extra:
        draft = _draft(reading, USER, hedged=False, start=start)
        out.setdefault((draft.subject, draft.attribute, draft.qualifier, draft.revoke), draft)
    return list(out.values())


def read_continuation(
    previous: Parsed,
    fragment: Parsed,
    *,
    said: datetime,
    speaker: str | None = None,
    entities: bool = True,
) -> list[FactDraft]:
    """The facts *fragment*, a sentence without a verb, adds to the first-person statement
    *previous* said right before it ("I started uni! Engineering at Monash.": education
    engineering and Monash; see :func:`~kenning.longterm.parsing.fragments.continued`).

    >>> read_continuation(Parsed.of("", ()), Parsed.of("", ()), said=datetime(2026, 1, 1))
    []
    """
    first = sentence_of(repaired(previous), speaker=speaker, entities=entities)
    then = sentence_of(repaired(fragment), speaker=speaker, entities=entities)
    start = stated_start(fragment.text, said)
    return [_draft(r, USER, hedged=False, start=start) for r in continued(first, then)]


def _consumed(p: Parsed, pred: Token) -> bool:
    """A clause that is the argument of another's frame, read there: "from teaching" (of
    "retired"), "playing games" (of "love")."""
    head = p.head(pred)
    if head is None:
        return False
    if head.lower == "from" and head.dep == "prep":
        return True
    if follows_from(p, pred):
        return False
    liking = head.lemma.lower() in lx.LIKE_VERBS or head.lemma.lower() in (
        "hate", "dislike", "detest", "loathe", "despise")  # fmt: skip
    if liking and pred.dep in ("xcomp", "dobj", "ccomp", "npadvmod", "conj"):
        return True
    return pred.dep == "conj" and _consumed(p, head)


def _resolve(reading: Reading, previous: Reading | None) -> Reading | None:
    """An "it" takes the value of the clause before ("I used to love anime but I'm over it
    now"); with none before, it states nothing."""
    if not reading.anaphor:
        return reading
    if previous is None:
        return None
    return replace(previous, revoke=reading.revoke or previous.revoke, change=True,
                   anaphor=False, negated=False)  # fmt: skip


def _topic(clause: Clause, previous: Reading | None) -> Reading | None:
    """What a later "it" refers to after a clause that states nothing of its own but names a
    pastime or a thing as its subject: "yoga is gone, I don't do it anymore"."""
    if clause.topic is None:
        return previous
    p = clause.parsed
    family = activity(clause.topic) or vs.classify(p, clause.topic, entities=clause.entities)
    if family not in ("hobby", "device", "diet", "pet", "language"):
        return previous
    return fact(family, vs.span(p, clause.topic, entities=clause.entities)) or previous


# Who a count "now" may be told by: "that makes four grandchildren now", "so two dogs now".
_COUNT_SUBJECTS = frozenset({"that", "this", "it", "which", "we", "i"})


def _counted_now(sentence: Sentence) -> Iterator[Reading]:
    """ "so that makes four grandchildren now", "a collie cross, so two dogs now": a new count
    of the speaker's children or pets told by itself, without "we have". Not when someone else
    is the subject ("my brother has three kids now")."""
    p = sentence.parsed
    if sentence.sarcastic or sentence.question:
        return
    for token in p.tokens:
        number = p.child(token, "nummod")
        if token.pos != "NOUN" or number is None or p.children(token, "poss"):
            continue
        family = vs.classify(p, token, entities=sentence.entities)
        if family not in ("family", "pet"):
            continue
        head = p.head(token)
        holders = [token] if head is None else [token, head]
        if not any(a.lower == "now" for h in holders for a in p.children(h, "advmod")):
            continue
        subjects = p.children(head, "nsubj") if head is not None and head is not token else []
        if any(s.lower not in _COUNT_SUBJECTS for s in subjects):
            continue
        verbless = (
            token.dep in ("appos", "conj") and head is not None and head.pos in ("NOUN", "PROPN")
        )
        told = head is None or head is token or head.lemma.lower() in ("make", "be")
        if not (told or verbless):
            continue
        found = fact(family, p.span([number, token]))
        if found is not None:
            yield found


def _for_me(sentence: Sentence) -> Iterator[Reading]:
    """ "No dairy for me" (a standing negative), "No more tennis for me" (a withdrawal)."""
    p = sentence.parsed
    if sentence.sarcastic or sentence.question:
        return
    for token in p.tokens:
        if token.pos != "NOUN" or not any(
            o.lower == "me"
            for prep in p.children(token, "prep")
            if prep.lower == "for"
            for o in p.children(prep, "pobj")
        ):
            continue
        mods = p.children(token, "det", "neg", "amod", "advmod")
        more = any(m.lower == "more" for m in mods)
        no = [d for m in mods for d in [m, *p.children(m, "neg", "det")] if d.lower == "no"]
        if not no:
            continue
        family = vs.classify(p, token, entities=sentence.entities)
        family = family or ("hobby" if token.lower in lx.ACTIVITIES else "preference")
        reading = _bare(family, token.text)
        yield replace(reading, revoke=True) if more else _negative(reading)


# A relation that no longer holds, or not yet: "my ex-wife Ana", "my late husband Tom".
_PAST_RELATION = frozenset({"ex", "late", "former", "future", "deceased", "previous", "old"})


def _named_kin(sentence: Sentence) -> Iterator[Reading]:
    """ "my husband Tom wants ...", "our son, Ben, is 9": a partner or a child of the speaker
    named in passing, whatever the clause says of them. The name is kept with the relation
    ("husband Tom"); a partner is one at a time, children are each their own."""
    p = sentence.parsed
    if sentence.sarcastic or sentence.question:
        return
    for token in p.tokens:
        relation = token.lemma.lower()
        partner = relation in lx.PARTNERS
        if token.pos != "NOUN" or not (partner or relation in lx.CHILDREN):
            continue
        name = _name_of(sentence, token)
        # "my wife Laura" may parse as the name with "wife" its compound and "my" its own.
        owned = [token] if name is None or token.dep != "compound" else [token, name]
        if name is None or not any(
            o.lower in lx.POSSESSIVE for t in owned for o in p.children(t, "poss")
        ):
            continue
        mods = [m for t in owned for m in p.children(t, "amod", "compound", "advmod")]
        if any(m.lower.removesuffix("-") in _PAST_RELATION for m in mods) or "-" in token.lower:
            continue
        span = f"{token.lower} {name.text}"
        found = fact("relationship", span, kind="partner") if partner else fact("family", span)
        if found is not None:
            yield found


def _name_of(sentence: Sentence, relation: Token) -> Token | None:
    """The name set beside a relation noun: its apposition ("my wife, Laura"), or a proper
    noun right after it ("my son Ben")."""
    p = sentence.parsed
    after = [t for t in p.children(relation, "appos", "compound", "npadvmod") if t.i > relation.i]
    nxt = p[relation.i + 1] if relation.i + 1 < len(p) else None
    if not after and nxt is not None and relation.i in (nxt.head, nxt.i - 1):
        # the name as the next word's own head ("my son Ben"), or as the head of "wife"
        after = [nxt] if nxt.head == relation.i or relation.head == nxt.i else []
    name = after[0] if after else None
    if name is None or name.pos != "PROPN" or not name.text[:1].isupper():
        return None
    return None if name.lower in lx.GREETINGS | lx.FIRST_PERSON | _DAYS else name


_DAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december".split()
)


# "As a result, ...", "as a rule": links between sentences, not what the speaker is.
_AS_A_LINKS = frozenset(
    "result rule matter whole consequence reminder aside bonus favor favour treat joke "
    "precaution start change side note kid child teenager teen boy girl".split()
)


def _as_a(sentence: Sentence) -> Iterator[Reading]:
    """ "As a writer, my laptop is my lifeline": an opening "as a ..." the speaker says of
    themselves (the sentence speaks in the first person)."""
    p = sentence.parsed
    if sentence.sarcastic or len(p) < 4 or p[0].lower != "as" or p[1].lower not in ("a", "an"):
        return
    noun = p.child(p[0], "pobj")
    if noun is not None:  # "As a vegan runner, ...": the diet is the speaker's
        for mod in p.children(noun, "compound", "amod"):
            if mod.lower in lx.DIETS and (diet := fact("diet", mod.lower)) is not None:
                yield diet
    # "As a paramedic, what's the best shoe?": an occupation frames the speaker's question.
    role = noun is not None and vs.role(p, noun)
    if (
        noun is None
        or noun.pos != "NOUN"
        or noun.lemma.lower() in _AS_A_LINKS
        or not (role or any(t.lower in ("i", "my", "me") for t in p.tokens))
    ):
        return
    found = fact("occupation" if role else "identity", vs.span(p, noun, entities=sentence.entities))
    if found is not None:
        yield found
    for place in (h for prep in p.children(noun, "prep") if prep.lower == "at"
                  for h in p.children(prep, "pobj")):  # fmt: skip
        where = fact("employer", vs.span(p, place, entities=sentence.entities))
        if where is not None and (
            place.pos == "PROPN" or place.lemma.lower() in lx.WORKPLACE_NOUNS
        ):
            yield where


def _bare(family: str, word: str) -> Reading:
    found = fact(family, word)
    assert found is not None
    return found


def _negative(reading: Reading) -> Reading:
    if reading.family == "preference":
        return replace(reading, verb="dislikes", negated=True)
    return replace(reading, negated=True)


def _draft(reading: Reading, subject: str, *, hedged: bool, start: datetime) -> FactDraft:
    """*reading* as kenning stores it (see the module's attribute names)."""
    if reading.verb:
        thing = vs.obj(reading.span)
        if reading.negated and reading.family != "preference":
            thing = f"no {thing}"
        attribute, value = f"{reading.kind}:{thing}", reading.verb
    else:
        attribute, value = reading.kind, reading.span
    category = _CATEGORIES.get(reading.family, FactCategory.GENERAL)
    if subject != USER and subject.split()[0] in lx.KIN:
        category = FactCategory.RELATIONSHIP
    return FactDraft(
        subject=subject, attribute=attribute, value=value,
        text=statement(subject, attribute, value, reading.qualifier),
        qualifier=reading.qualifier, category=category, revoke=reading.revoke,
        source=FactSource.INFERRED if hedged else FactSource.EXPLICIT,
        confidence=0.6 if hedged else 1.0, valid_from=start,
    )  # fmt: skip
