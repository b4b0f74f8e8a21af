"""Consolidation rules (pure): what a new fact draft does to the facts already held.

For the draft's subject, attribute and qualifier (its *key*):

1. A revocation closes the active fact of the key (status ``revoked``, ``valid_to`` set),
   when its value matches what the revocation names (or the revocation names none).
2. The same value again (case, spacing and articles ignored) reinforces the active fact:
   its count and last-seen time, and the new source. No row is added.
3. A near duplicate — an active fact of the same subject and attribute family whose statement
   is at least ``near_duplicate`` cosine-similar — reinforces that fact too.
4. A new value supersedes the active fact of the key: the old one gets ``valid_to`` and
   ``superseded_by`` and keeps its history. An inferred draft never supersedes an explicit or
   tool fact (the explicit statement wins); it is dropped.
5. A different qualifier is a different key: "at work I use a Mac" leaves "at home I use Linux".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kenning.records import Fact, FactDraft, FactSource, FactStatus

__all__ = ["Decision", "decide", "family", "same_value"]

_ARTICLES = re.compile(r"^(?:a|an|the|my)\s+")


def same_value(a: str, b: str) -> bool:
    """Equal once case, spacing and a leading article are ignored."""

    def norm(text: str) -> str:
        return _ARTICLES.sub("", " ".join(text.lower().split())).strip(" .")

    return norm(a) == norm(b)


def family(attribute: str) -> str:
    """The kind of an attribute: ``preference`` for ``preference:jazz``."""
    return attribute.partition(":")[0]


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a draft: ``insert`` it (closing ``supersede``), ``reinforce`` a fact,
    ``revoke`` facts, or ``drop`` it (with the reason)."""

    action: str
    fact_id: str | None = None
    supersede: tuple[str, ...] = ()
    revoke: tuple[str, ...] = ()
    reason: str = ""


def _outranks(current: Fact, draft: FactDraft) -> bool:
    return draft.source is FactSource.INFERRED and current.source is not FactSource.INFERRED


def decide(
    draft: FactDraft,
    current: Sequence[Fact],
    neighbours: Sequence[Fact],
    *,
    similarity: Callable[[Fact], float] | None = None,
    near_duplicate: float = 0.9,
) -> Decision:
    """Decide what *draft* does, given the active facts of its key (*current*) and the active
    facts of the same subject and attribute family (*neighbours*, for near duplicates).
    *similarity* gives the cosine between the draft's statement and a fact's."""
    active = [f for f in current if f.status is FactStatus.ACTIVE and f.key == draft.key]
    if draft.revoke:
        named = [f for f in active if not draft.value or same_value(f.value, draft.value)]
        multi = ":" in draft.attribute  # the object is in the attribute: any value goes
        doomed = active if multi else named
        if not doomed:
            return Decision("drop", reason="nothing active to revoke")
        return Decision("revoke", revoke=tuple(f.id for f in doomed))
    for fact in active:
        if same_value(fact.value, draft.value):
            return Decision("reinforce", fact_id=fact.id)
    if similarity is not None:
        kin = [
            f
            for f in neighbours
            if f.status is FactStatus.ACTIVE
            and f.subject == draft.subject
            and family(f.attribute) == family(draft.attribute)
            and f.qualifier == draft.qualifier
        ]
        best = max(kin, key=similarity, default=None)
        # A multi-valued fact about the same thing in other words ("likes hiking in the Alps" /
        # "likes hiking in the Swiss Alps"), or the same value said differently.
        if (
            best is not None
            and similarity(best) >= near_duplicate
            and (best.key == draft.key or ":" in draft.attribute)
        ):
            return Decision("reinforce", fact_id=best.id)
    if any(_outranks(f, draft) for f in active):
        return Decision("drop", reason="an explicit fact outranks this inferred one")
    return Decision("insert", supersede=tuple(f.id for f in active))
