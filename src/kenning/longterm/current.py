"""Current values rank above the turns they replaced.

A turn that states a value the user has since changed ("I live in Lisbon", before "I moved to
Porto") matches a question about that value as well as it ever did, often better than the
fact that holds now. After a search, each such turn among the hits gets the record that holds
the current value placed just above it: the current fact when facts are searched, else the
turn the current fact was read from. The stale turn stays among the hits, one place lower, so
"where did I live before?" and searches bounded in time still find it; a query about a past
state (:attr:`~kenning.search.plan.QueryPlan.asks_past`), or one bounded before the current
value began, is left as it was ranked.

A turn that also states something still true ("I live in Lisbon and I love jazz") is stale
only for a question the current value answers: its current value is placed above it only when
the search found that value itself among the hits, never loaded from outside them (a question
about jazz does not need to hear where the user lives now).

Studies and the things one uses are kept as a fact per value ("studies biology", later
"studies a master's in bioinformatics"; "uses glasses", later "uses contact lenses"), though a
newer one often took the older one's place without the user saying the older one ended. Among
the facts a search found, those of one user's subject, family (of these two) and qualifier are
therefore ordered newest first in the places they hold (:func:`newer_first`). Tastes, pastimes,
family and pets are held side by side, and keep the order the search gave them.

A question the user asks about themselves ("what do I drive?") is answered by their own facts,
not by what they said of someone else ("my friend just bought a Tesla"): when the query speaks
in the first person and names no one else, the user's own facts take the places of the facts
the search found before those about other people (:func:`own_first`).

A turn can state a value the user has since changed without the reader having read a value from
it ("it's an iPhone 11", "that's where I live"), so nothing links it to the fact that replaced
it. In a search that includes facts, each fact the search found is therefore also placed above
the same user's turns said before the fact began (:func:`facts_lead`); the set of hits is the
same, only their order changes (its effect on the free-text staleness set is in
``docs/benchmarks.md``).
:func:`current_first` is the pure core; :class:`CurrentFirst` reads what it needs.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from kenning.longterm.parsing.lexicon import RELATIONS
from kenning.records import USER, Fact, FactStatus, Filters, Scope
from kenning.search.hits import Hit, SearchResults
from kenning.search.loaded import admits_item, hit_of
from kenning.store.protocol import EventLog, FactStore

__all__ = [
    "CurrentFirst", "CurrentReads", "about_the_user", "current_first", "facts_lead", "newer_first",
    "own_first", "replacements",
]  # fmt: skip


class CurrentReads(FactStore, EventLog, Protocol):
    """What :class:`CurrentFirst` reads: the facts stated in the hits' turns, and records."""


def current_first(
    hits: Sequence[Hit], replaced: Mapping[str, str], found: Mapping[str, Hit], k: int,
    *, mixed: Collection[str] = (),
) -> list[Hit]:  # fmt: skip
    """*hits* (best first) with, above each stale turn (a key of *replaced*), the record
    holding its current value (the value): moved up when it ranks lower, else taken from
    *found* (not for a *mixed* turn, one that also states something still true); scored as
    the stale turn. Cut at *k*.

    >>> from datetime import datetime, UTC
    >>> from kenning.records import Role
    >>> def hit(i, score):
    ...     return Hit(i, "event", score, {}, i, Role.USER, Scope("t", "u", "s"), 1,
    ...                datetime(2026, 1, 1, tzinfo=UTC))
    >>> out = current_first([hit("lisbon", .8), hit("x", .7), hit("porto", .5)],
    ...                     {"lisbon": "porto"}, {}, k=3)
    >>> [(h.id, h.score) for h in out]
    [('porto', 0.8), ('lisbon', 0.8), ('x', 0.7)]
    """
    out = list(hits)
    placed: set[str] = set()
    i = 0
    while i < len(out):
        stale = out[i]
        target = replaced.get(stale.id)
        if target is None or target in placed:
            i += 1
            continue
        placed.add(target)
        at = next((j for j, h in enumerate(out) if h.id == target), None)
        outside = None if stale.id in mixed else found.get(target)
        lifted = outside if at is None else out.pop(at) if at > i else None
        if lifted is None:  # already above, or not in reach of this search
            i += 1
            continue
        scores = {**lifted.scores, "current": stale.score, "score": stale.score}
        out.insert(i, replace(lifted, score=stale.score, scores=scores))
        i += 2
    return out[:k]


def facts_lead(hits: Sequence[Hit]) -> list[Hit]:
    """*hits* (best first) with each fact placed above the same user's turns said before the
    fact began: a current fact that the search found answers for now, where an older turn
    may state what it replaced without the reader having read a value from it ("it's an
    iPhone 11", "that's where I live"). The turns keep their order; scores are kept.

    >>> from datetime import datetime, UTC
    >>> from kenning.records import Role
    >>> def hit(i, kind, day):
    ...     return Hit(i, kind, 1.0, {}, i, Role.USER, Scope("t", "u", "s"), 1,
    ...                datetime(2026, 1, day, tzinfo=UTC))
    >>> out = facts_lead([hit("old", "event", 1), hit("new", "event", 9), hit("f", "fact", 5)])
    >>> [h.id for h in out]
    ['f', 'old', 'new']
    """
    out = list(hits)
    for fact in [h for h in hits if h.kind == "fact"]:
        at = out.index(fact)
        older = next(
            (i for i, h in enumerate(out[:at])
             if h.kind == "event" and h.scope.user == fact.scope.user and h.at < fact.at),
            None,
        )  # fmt: skip
        if older is not None:
            out.insert(older, out.pop(at))
    return out


# Multi-valued families whose newer value often replaces an older one unsaid.
_REPLACED_SILENTLY = frozenset({"education", "uses"})


def newer_first(hits: Sequence[Hit], facts: Mapping[str, Fact]) -> list[Hit]:
    """*hits* (best first) with the active facts of studies and things used (*facts*, by id)
    of each user, subject, family and qualifier reordered newest first (by ``valid_from``) in
    the places they hold; every other hit keeps its place, every hit its score.

    >>> from datetime import datetime, UTC
    >>> from kenning.records import Role
    >>> def fact(i, thing, day):
    ...     return Fact(i, Scope("t", "u"), "user", f"education:{thing}", "studies", thing,
    ...                 valid_from=datetime(2026, 1, day, tzinfo=UTC))
    >>> def hit(i):
    ...     return Hit(i, "fact", 1.0, {}, i, Role.USER, Scope("t", "u"), None,
    ...                datetime(2026, 1, 1, tzinfo=UTC))
    >>> found = {"old": fact("old", "law", 1), "new": fact("new", "medicine", 9)}
    >>> [h.id for h in newer_first([hit("old"), hit("x"), hit("new")], found)]
    ['new', 'x', 'old']
    """
    groups: dict[tuple[str | None, str, str, str], list[int]] = {}
    for at, hit in enumerate(hits):
        fact = facts.get(hit.id) if hit.kind == "fact" else None
        family = fact.attribute.partition(":")[0] if fact is not None else ""
        if fact is None or fact.status is not FactStatus.ACTIVE or family not in _REPLACED_SILENTLY:
            continue
        groups.setdefault((hit.user, fact.subject, family, fact.qualifier), []).append(at)
    out = list(hits)
    for places in groups.values():
        members = sorted((hits[at] for at in places),
                         key=lambda h: facts[h.id].valid_from, reverse=True)  # fmt: skip
        for at, member in zip(places, members, strict=True):
            out[at] = member
    return out


_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|am i|do i)\b")
_SOMEONE_ELSE = re.compile(
    r"\b(?:" + "|".join(sorted(RELATIONS | {"he", "she", "they", "his", "her", "their"}))
    + r")(?:'s)?\b"
)  # fmt: skip


def about_the_user(query: str) -> bool:
    """Whether *query* asks about the user alone: in the first person, naming no one else.

    >>> about_the_user("what do I drive?"), about_the_user("where does my sister live?")
    (True, False)
    """
    lowered = query.lower()
    return bool(_FIRST_PERSON.search(lowered)) and not _SOMEONE_ELSE.search(lowered)


def own_first(hits: Sequence[Hit], facts: Mapping[str, Fact]) -> list[Hit]:
    """*hits* (best first) with the user's own facts (*facts*, by id; subject ``user``) in the
    first of the places the facts hold, and the facts about other people after them, each
    in its order; every other hit keeps its place, every hit its score."""
    places = [at for at, h in enumerate(hits) if h.kind == "fact" and h.id in facts]
    mine = [hits[at] for at in places if facts[hits[at].id].subject == USER]
    others = [hits[at] for at in places if facts[hits[at].id].subject != USER]
    out = list(hits)
    for at, hit in zip(places, [*mine, *others], strict=True):
        out[at] = hit
    return out


def replacements(
    turns: Sequence[str], said: Sequence[Fact], current: Mapping[tuple[str, str, str], Fact],
    *, facts: bool,
) -> tuple[dict[str, str], set[str]]:  # fmt: skip
    """The stale turns among *turns*, each with the record that holds its current value:
    the current fact (*facts*: facts are searched) or the turn it was read from; and which of
    them are mixed (they also state a fact still true). *said* are the facts stated in
    *turns*, *current* the active facts of their keys."""
    wanted = set(turns)
    still_true = {s for f in said if f.status is FactStatus.ACTIVE for s in f.sources}
    out: dict[str, str] = {}
    for fact in said:
        now = current.get(fact.key) if fact.status is FactStatus.SUPERSEDED else None
        target = None if now is None else now.id if facts else now.source_event_id
        if target is None:
            continue
        for turn in fact.sources:
            if turn in wanted and turn != target:
                out.setdefault(turn, target)
    return out, still_true & set(out)


class CurrentFirst:
    """Reads the facts stated in a search's turns and places current values above stale
    turns (:func:`current_first`)."""

    def __init__(self, store: CurrentReads) -> None:
        self._store = store

    def apply(self, scope: Scope, results: SearchResults, *, filters: Filters, k: int
              ) -> SearchResults:  # fmt: skip
        """*results* of a search of *scope* under *filters*, current values first (a search
        of a whole tenant: each user's turns against that user's facts)."""
        plan = results.plan
        if plan is not None and plan.asks_past:
            return results
        bound = min((w.end for w in plan.windows), default=None) if plan is not None else None
        bound = min(filter(None, (bound, filters.until)), default=None)
        results = self._replaced_first(scope, results, bound, filters=filters, k=k)
        if bound is not None or "fact" not in filters.kinds:
            return results
        facts = self._facts_of(scope, results.hits)
        hits = newer_first(results.hits, facts)
        if plan is not None and about_the_user(plan.text):
            hits = own_first(hits, facts)
        return replace(results, hits=tuple(facts_lead(hits)))

    def _facts_of(self, scope: Scope, hits: Sequence[Hit]) -> dict[str, Fact]:
        """The facts among *hits*, by id, read from each one's user."""
        by_user: dict[str, list[str]] = {}
        for hit in hits:
            if hit.kind == "fact" and hit.user is not None:
                by_user.setdefault(hit.user, []).append(hit.id)
        return {
            f.id: f
            for user, ids in by_user.items()
            for f in self._store.facts(Scope(scope.tenant, user), ids=ids)
        }

    def _replaced_first(
        self, scope: Scope, results: SearchResults, bound: datetime | None, *,
        filters: Filters, k: int,
    ) -> SearchResults:  # fmt: skip
        """*results* with the records holding current values above the turns whose values
        they replaced (:func:`current_first`)."""
        by_user: dict[str, list[str]] = {}
        for hit in results.hits:
            if hit.kind == "event" and hit.scope.user is not None:
                by_user.setdefault(hit.scope.user, []).append(hit.id)
        replaced: dict[str, str] = {}
        mixed: set[str] = set()
        for user, turns in by_user.items():
            found, both = self._replacements(Scope(scope.tenant, user), turns, bound, filters)
            replaced.update(found)
            mixed |= both
        if not replaced:
            return results
        have = {h.id for h in results.hits}
        missing = sorted({t for t in replaced.values() if t not in have})
        loaded = {
            item.id: hit_of(item, 0.0, {})
            for item in self._store.items(scope, missing)
            if admits_item(filters, item)
        }
        hits = current_first(results.hits, replaced, loaded, k, mixed=mixed)
        return replace(results, hits=tuple(hits))

    def _replacements(
        self, user: Scope, turns: Sequence[str], bound: datetime | None, filters: Filters
    ) -> tuple[dict[str, str], set[str]]:
        """:func:`replacements` for one user's *turns*; only values that held before
        *bound* (the end of the time the search is bounded to) count as current."""
        said = self._store.facts(user, sources=turns, statuses=None)
        keys = list({f.key for f in said if f.status is FactStatus.SUPERSEDED})
        if not keys:
            return {}, set()
        current = {
            f.key: f for f in self._store.facts(user, keys=keys)
            if bound is None or f.valid_from is None or f.valid_from < bound
        }  # fmt: skip
        return replacements(turns, said, current, facts="fact" in filters.kinds)
