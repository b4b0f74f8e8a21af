"""Consolidation (pure): what new statements do to a user's facts.

A fact draft is a statement about a key (subject, attribute, qualifier), dated when it was said
or by the time it names. The key's history is refolded with it (:mod:`kenning.longterm.timeline`):

1. the same value again (case, spacing and articles ignored) reinforces the fact that holds it:
   its count, its last mention and its sources; no row is added;
2. a near duplicate — an active fact of the same subject and attribute family whose statement
   is at least ``near_duplicate`` cosine-similar — is a statement of that fact's key and value,
   so it reinforces that fact too;
3. a new value supersedes the fact that held when it was said: the old one gets ``valid_to``
   and ``superseded_by`` and keeps its history. A value said before the one that holds now
   (a history read out of order) takes its place in the past and leaves the current one as it
   is. An inferred value never supersedes an explicit or tool fact (it is dropped);
4. a withdrawal closes the fact holding its value when it was said (``revoked``); a multi-valued
   key (``preference:jazz``) closes whatever value holds. A withdrawal in other words closes
   the fact it refers to (:func:`withdrawn_kin`: "forget that I like jazz" closes "I love jazz
   music"). One that finds nothing is kept as a zero-length ``revoked`` record, so the value
   said earlier but read later still ends there;
5. a new count of the same thing replaces the old count (:func:`recounted`: "two kids" after
   "one kid", "four grandchildren" after "three"), though each count is a key of its own;
6. a different qualifier is a different key: "at work I use a Mac" leaves "at home I use Linux".

The outcome is the difference between the stored rows of each key and its refolded history:
rows to insert (possibly already closed), rows to revise, and rows no longer needed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from kenning.longterm.parsing.lexicon import DIETS, LANGUAGES
from kenning.longterm.timeline import Said, Segment, fold, lay_out, said_by, same_value
from kenning.records import Fact, FactDraft, FactStatus
from kenning.store.records import FactInsert, FactState

__all__ = [
    "KeyChanges", "core", "family", "key_changes", "names_another", "names_part_of", "nearest_kin",
    "numbers", "recounted", "said", "withdrawn_kin",
]  # fmt: skip

_WORD = re.compile(r"[a-z0-9]+")
_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve").split()
_FUNCTION_WORDS = frozenset({"a", "an", "the", "my", "our", "no", "some", "any"})


def family(attribute: str) -> str:
    """The kind of an attribute: ``preference`` for ``preference:jazz``."""
    return attribute.partition(":")[0]


def core(fact: Fact | FactDraft) -> str:
    """What two facts are compared on: the object of a multi-valued attribute, else the
    value (templates would make every "lives in X" look alike)."""
    _, sep, thing = fact.attribute.partition(":")
    return thing if sep else fact.value


def _words(text: str) -> frozenset[str]:
    """The content words of *text*, a plural's final s dropped ("cats" is "cat")."""
    words = (w for w in _WORD.findall(text.lower()) if w not in _FUNCTION_WORDS)
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def numbers(text: str) -> tuple[str, ...]:
    """The numbers *text* names, in order, digits or words: values that name other numbers are
    other values however alike they read ("555-0100" and "555-0199", "two kids" and "three").

    >>> numbers("555-0100"), numbers("Two kids"), numbers("jazz")
    (('555', '0100'), ('2',), ())
    """
    words = _WORD.findall(text.lower())
    return tuple(
        str(_NUMBER_WORDS.index(w)) if w in _NUMBER_WORDS else w for w in words
        if w.isdigit() or w in _NUMBER_WORDS
    )  # fmt: skip


def names_part_of(withdrawn: str, held: str) -> bool:
    """Whether every content word of *withdrawn* is in *held*: "jazz" names part of "jazz
    music", "a cat" of "two cats"; "two kids" not of "three kids".

    >>> names_part_of("jazz", "jazz music"), names_part_of("two kids", "three kids")
    (True, False)
    >>> names_part_of("country music", "country"), names_part_of("jazz piano", "jazz")
    (True, False)
    """
    words = _words(withdrawn)
    # "country music" names "country": a head that only says what kind of thing it is
    named = words - _KIND_HEADS or words
    return bool(words) and named <= _words(held)


# Heads that name the kind of a taste rather than the taste ("country music", "Thai food").
_KIND_HEADS = frozenset(
    "music food cuisine dish dishe movie film show book game series genre stuff".split()
)


def abbreviates(one: str, other: str) -> bool:
    """Whether one of two values is the initials of the other ("CS" and "computer science",
    "ML" and "machine learning"): the same thing, however unlike their embeddings read.

    >>> abbreviates("cs", "computer science"), abbreviates("ml", "machine learning")
    (True, True)
    >>> abbreviates("jazz", "jazz music")
    False
    """
    for short, long in ((one, other), (other, one)):
        letters = short.replace(".", "").lower()
        words = _WORD.findall(long.lower())
        fits = 2 <= len(letters) <= 5 and " " not in letters and len(words) == len(letters)
        if fits and "".join(w[0] for w in words) == letters:
            return True
    return False


def withdrawn_kin(
    draft: FactDraft, active: Sequence[Fact], similarity: Callable[[Fact], float], threshold: float
) -> Fact | None:
    """The active fact a withdrawal refers to in other words ("forget that I like jazz" and
    "I love jazz music"), if it names no held value exactly: same subject, attribute family
    and qualifier, and the withdrawn thing names part of the held one or their statements are
    at least *threshold* similar. The most similar such fact."""
    if not draft.revoke:
        return None
    kin = [
        f for f in active
        if f.status is FactStatus.ACTIVE and f.subject == draft.subject
        and family(f.attribute) == family(draft.attribute) and f.qualifier == draft.qualifier
    ]  # fmt: skip
    multi = ":" in draft.attribute
    if any(f.key == draft.key and (multi or same_value(f.value, draft.value)) for f in kin):
        return None  # the key's own history settles it
    matches = [
        f for f in kin
        if names_part_of(core(draft), core(f)) or abbreviates(core(draft), core(f))
        or (similarity(f) >= threshold and not names_another(core(draft), core(f)))
    ]  # fmt: skip
    return max(matches, key=similarity, default=None)


# Closed sets of names, one member never another however alike their embeddings read.
_NAMED_KINDS = (LANGUAGES, DIETS)


def names_another(one: str, other: str) -> bool:
    """Whether two values name different members of one closed set of names (languages,
    diets): "Spanish" is never "Portuguese", nor "vegan" "vegetarian", where "Spanish" is
    "Spanish lessons".

    >>> names_another("spanish", "portuguese"), names_another("vegan", "vegetarian")
    (True, True)
    >>> names_another("spanish", "spanish lessons"), names_another("no meat", "vegetarian")
    (False, False)
    """
    words, others = _WORD.findall(one.lower()), _WORD.findall(other.lower())
    for kind in _NAMED_KINDS:
        named, named_other = kind.intersection(words), kind.intersection(others)
        if named and named_other and not named & named_other:
            return True
    return False


def _counted(text: str) -> frozenset[str]:
    """What *text* counts: its content words without the numbers ("two kids" -> kid)."""
    return frozenset(w for w in _words(text) if not w.isdigit() and w not in _NUMBER_WORDS)


def recounted(draft: FactDraft, held: Sequence[Fact | FactDraft]) -> list[Fact | FactDraft]:
    """The held statements that count what *draft* counts in another number: "I have one
    kid" for "now we have two kids" (same subject, attribute family and qualifier, both
    multi-valued, the same words but for their numbers). A count replaces a count; "two
    daughters" leaves "three kids" alone.

    >>> one = FactDraft("user", "family:one kid", "has", "The user has one kid")
    >>> two = FactDraft("user", "family:two kids", "has", "The user has two kids")
    >>> [d.attribute for d in recounted(two, [one])]
    ['family:one kid']
    >>> recounted(FactDraft("user", "family:two daughters", "has", ""), [one])
    []
    """
    mine = numbers(core(draft))
    if draft.revoke or ":" not in draft.attribute or not mine:
        return []
    things = _counted(core(draft))
    return [
        h for h in held
        if (h.status is FactStatus.ACTIVE if isinstance(h, Fact) else not h.revoke)
        and h.subject == draft.subject and h.qualifier == draft.qualifier
        and ":" in h.attribute and family(h.attribute) == family(draft.attribute)
        and h.attribute != draft.attribute and numbers(core(h)) not in ((), mine)
        and _counted(core(h)) == things
    ]  # fmt: skip


def said(draft: FactDraft, at: datetime, *, value: str | None = None) -> Said:
    """The statement a draft makes, dated by the time it names or else when it was said."""
    return Said(
        at=draft.valid_from or at, value=draft.value if value is None else value,
        revoke=draft.revoke, origin=draft.source, template=draft,
        sources=(draft.source_event_id,) if draft.source_event_id else (),
    )  # fmt: skip


def nearest_kin(
    draft: FactDraft, active: Sequence[Fact], similarity: Callable[[Fact], float], threshold: float
) -> Fact | None:
    """The active fact *draft* restates in other words ("likes hiking in the Alps" / "likes
    hiking in the Swiss Alps"), if any: same subject, attribute family and qualifier, the same
    numbers, no other name of a closed set ("Spanish" / "Portuguese"), a statement at least
    *threshold* similar, and the same key or a multi-valued attribute."""
    if draft.revoke:
        return None
    kin = [
        f
        for f in active
        if f.status is FactStatus.ACTIVE
        and f.subject == draft.subject
        and family(f.attribute) == family(draft.attribute)
        and f.qualifier == draft.qualifier
        and numbers(core(f)) == numbers(core(draft))
        and not names_another(core(f), core(draft))
    ]
    best = max(kin, key=similarity, default=None)
    if best is None or similarity(best) < threshold:
        return None
    return best if best.key == draft.key or ":" in draft.attribute else None


@dataclass(frozen=True, slots=True)
class KeyChanges:
    """What one key's refolded history writes."""

    inserts: tuple[FactInsert, ...]
    revisions: tuple[tuple[str, FactState], ...]
    withdrawn: tuple[str, ...]


def key_changes(
    key: tuple[str, str, str],
    rows: Sequence[Fact],
    new: Sequence[Said],
    times: dict[str, datetime],
    *,
    new_id: Callable[[], str],
    expires: Callable[[datetime], datetime | None],
) -> KeyChanges:
    """Refold *key*'s stored *rows* (*times*: when their source events were said) with the
    *new* statements, and return the writes that make the stored history the refolded one."""
    statements = [s for fact in rows for s in said_by(fact, times)] + list(new)
    segments = fold(statements, multi=":" in key[1])
    layout = lay_out(segments, rows, new_id)

    def state(segment: Segment) -> FactState:
        return FactState(
            valid_from=segment.start, valid_to=segment.end, status=segment.status,
            superseded_by=None if segment.next is None else layout.row_of(segment.next),
            reinforced=max(1, segment.mentions), sources=segment.sources,
            last_seen=segment.last_seen,
        )  # fmt: skip

    revisions = tuple(
        (fact.id, state(segment))
        for fact, segment in layout.kept
        if _state_of(fact) != state(segment)
    )
    inserts = tuple(
        FactInsert(
            id=fact_id,
            draft=_draft_for(segment),
            expires_at=expires(segment.start),
            state=state(segment),
        )
        for fact_id, segment in layout.added
    )
    return KeyChanges(inserts, revisions, tuple(f.id for f in layout.dropped))


def _state_of(fact: Fact) -> FactState:
    return FactState(
        valid_from=fact.valid_from, valid_to=fact.valid_to, status=fact.status,
        superseded_by=fact.superseded_by, reinforced=fact.reinforced, sources=fact.sources,
        last_seen=fact.last_seen or fact.valid_from,
    )  # fmt: skip


def _draft_for(segment: Segment) -> FactDraft:
    """The draft a new row is written from: the first statement's (a new draft, or the fact a
    refolded history split off), starting when the segment starts."""
    opening = next((s for s in segment.statements if not s.revoke), segment.statements[0])
    template = opening.template
    first = segment.sources[0] if segment.sources else None
    if isinstance(template, FactDraft):
        return replace(template, valid_from=segment.start, source_event_id=first)
    assert template is not None
    return FactDraft(
        subject=template.subject, attribute=template.attribute, value=template.value,
        text=template.text, qualifier=template.qualifier, source=template.source,
        confidence=template.confidence, category=template.category, tags=template.tags,
        revoke=segment.withdrawal, valid_from=segment.start, source_event_id=first,
    )  # fmt: skip
