"""The history of one fact key, recomputed from what was said and when (pure).

A key (subject, attribute, qualifier) is a timeline of statements: a value asserted, or a value
withdrawn, each dated by when it was said (or by the time it names: "since 2020"). Folded in
time order they give the key's segments:

- the same value again reinforces the segment that holds it;
- another value closes the segment that holds (``superseded``) and opens its own, except that
  an inferred value never replaces an explicit or tool one (it is dropped);
- a withdrawal closes the segment holding its value (``revoked``); one that finds nothing to
  close is kept as a zero-length ``revoked`` record, so a statement of that value said
  earlier but read later still ends where the withdrawal was said.

Because the fold orders statements by their own time, reading a history in any order gives
the same segments: importing "I moved to Porto" (February) before "I live in Lisbon" (June of
the year before) leaves Porto current and Lisbon closed when Porto began. A stored fact row
brings back the statements it stands for (its start, each later mention, its withdrawal), so
a timeline is refolded whenever a statement arrives, and the store writes the difference.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from kenning.records import Fact, FactDraft, FactSource, FactStatus

__all__ = ["Layout", "Said", "Segment", "fold", "lay_out", "said_by", "same_value"]

_ARTICLES = re.compile(r"^(?:a|an|the|my)\s+")


def same_value(a: str, b: str) -> bool:
    """Equal once case, spacing and a leading article are ignored."""

    def norm(text: str) -> str:
        return _ARTICLES.sub("", " ".join(text.lower().split())).strip(" .")

    return norm(a) == norm(b)


@dataclass(frozen=True, slots=True)
class Said:
    """One statement about a key: *value* asserted (or withdrawn, *revoke*) at *at*.

    *sources* are the events it was said in; *mentions* how many statements it stands for (a
    stored fact's first one counts the mentions that left no source of their own); *row* the
    stored fact it is part of (None for a new statement); *template* what a new fact row
    opened by it is made from.
    """

    at: datetime
    value: str
    revoke: bool = False
    sources: tuple[str, ...] = ()
    origin: FactSource = FactSource.EXPLICIT
    row: str | None = None
    template: FactDraft | Fact | None = None
    mentions: int = 1

    @property
    def order(self) -> tuple[datetime, int, str]:
        """Time order; at one time a withdrawal comes first ("switched from X to Y")."""
        return (self.at, 0 if self.revoke else 1, " ".join(self.value.lower().split()))


@dataclass(slots=True)
class Segment:
    """A stretch of the timeline: *value* from *start* until *end* (None: still holds), with
    the statements that make it up. *next* is the segment that superseded it."""

    value: str
    start: datetime
    statements: list[Said]
    end: datetime | None = None
    status: FactStatus = FactStatus.ACTIVE
    next: Segment | None = field(default=None, repr=False)

    @property
    def withdrawal(self) -> bool:
        """A zero-length record of a withdrawal that found nothing to close."""
        return self.status is FactStatus.REVOKED and self.end == self.start

    @property
    def sources(self) -> tuple[str, ...]:
        """The events the value was stated in (a withdrawal record: the withdrawal's)."""
        said = [s for s in self.statements if not s.revoke] or self.statements
        return tuple(dict.fromkeys(src for s in said for src in s.sources))

    @property
    def last_seen(self) -> datetime:
        return max(s.at for s in self.statements if not s.revoke) if self.mentions else self.start

    @property
    def mentions(self) -> int:
        """How often the value was stated (a withdrawal record counts none)."""
        return sum(s.mentions for s in self.statements if not s.revoke)


def fold(statements: Sequence[Said], *, multi: bool = False) -> list[Segment]:
    """The key's segments in time order. *multi*: the key's object is in its attribute
    (``preference:jazz``), so a withdrawal closes whatever value holds."""
    segments: list[Segment] = []
    open_: Segment | None = None
    for said in sorted(statements, key=lambda s: s.order):
        if said.revoke:
            if open_ is not None and (
                multi or not said.value or same_value(open_.value, said.value)
            ):
                open_.end, open_.status = said.at, FactStatus.REVOKED
                open_.statements.append(said)
                open_ = None
            elif said.value:
                segments.append(Segment(said.value, said.at, [said], said.at, FactStatus.REVOKED))
            continue
        if open_ is not None and same_value(open_.value, said.value):
            open_.statements.append(said)
            continue
        if open_ is not None and _outranks(open_, said):
            continue
        segment = Segment(said.value, said.at, [said])
        if open_ is not None:
            open_.end, open_.status, open_.next = said.at, FactStatus.SUPERSEDED, segment
        segments.append(segment)
        open_ = segment
    return segments


def _outranks(holding: Segment, said: Said) -> bool:
    """An inferred value never replaces one the user stated or a tool returned."""
    return said.origin is FactSource.INFERRED and any(
        s.origin is not FactSource.INFERRED for s in holding.statements if not s.revoke
    )


def said_by(fact: Fact, times: dict[str, datetime]) -> list[Said]:
    """The statements a stored fact row stands for: its value from its start, each later
    mention (*times* gives each source event's time), and the withdrawal that ended it."""
    if fact.status is FactStatus.REVOKED and fact.valid_to == fact.valid_from:
        return [Said(fact.valid_from, fact.value, revoke=True, sources=fact.sources,
                     row=fact.id, template=fact)]  # fmt: skip
    later = [s for s in fact.sources if (at := times.get(s)) is not None and at > fact.valid_from]
    first = tuple(s for s in fact.sources if s not in later)
    out = [Said(fact.valid_from, fact.value, sources=first, origin=fact.source, row=fact.id,
                template=fact, mentions=max(1, fact.reinforced - len(later)))]  # fmt: skip
    out += [Said(times[s], fact.value, sources=(s,), origin=fact.source, row=fact.id,
                 template=fact) for s in later]  # fmt: skip
    if fact.status is FactStatus.REVOKED and fact.valid_to is not None:
        out.append(Said(fact.valid_to, fact.value, revoke=True, row=fact.id, template=fact))
    return out


@dataclass(slots=True)
class Layout:
    """Which stored row holds each segment: *kept* rows (each with the segment it now holds),
    *added* rows (a new id for a segment no row holds), and *dropped* rows no segment holds
    any more (merged into another, or a withdrawal record whose value was found)."""

    kept: list[tuple[Fact, Segment]] = field(default_factory=list)
    added: list[tuple[str, Segment]] = field(default_factory=list)
    dropped: list[Fact] = field(default_factory=list)

    def row_of(self, segment: Segment) -> str:
        for fact, held in self.kept:
            if held is segment:
                return fact.id
        return next(fact_id for fact_id, held in self.added if held is segment)


def lay_out(segments: Sequence[Segment], rows: Sequence[Fact], new_id: Callable[[], str]) -> Layout:
    """Give each segment the first stored row among its statements not taken yet (so a fact
    keeps its id while its history is refolded), else a new id. A withdrawal record stays
    one only: a segment that holds a value takes a row that held one."""
    by_id = {fact.id: fact for fact in rows}
    layout = Layout()
    taken: set[str] = set()
    for segment in segments:
        said = segment.statements if segment.withdrawal else [
            s for s in segment.statements if not s.revoke
        ]  # fmt: skip
        row = next((s.row for s in said if s.row and s.row not in taken), None)
        if row is not None and row in by_id:
            taken.add(row)
            layout.kept.append((by_id[row], segment))
        else:
            layout.added.append((new_id(), segment))
    layout.dropped = [fact for fact in rows if fact.id not in taken]
    return layout
