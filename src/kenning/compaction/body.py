"""Structured summaries: what a summarizer returns and what a :class:`~kenning.Summary` holds.

A summary is five sections (goals, facts learned, decisions, open obligations, constraints and
preferences); every item names the event range it came from, so a reader can go back to the
episode. Pure data: no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kenning.errors import InvalidInput

__all__ = ["KEEP_ORDER", "SECTION_TITLES", "Section", "SummaryBody", "SummaryItem", "SummaryResult"]


class Section(enum.StrEnum):
    GOALS = "goals"
    FACTS = "facts"
    DECISIONS = "decisions"
    OBLIGATIONS = "obligations"
    CONSTRAINTS = "constraints"


SECTION_TITLES: Mapping[Section, str] = {
    Section.GOALS: "Goals",
    Section.FACTS: "Facts learned",
    Section.DECISIONS: "Decisions",
    Section.OBLIGATIONS: "Open obligations / pending actions",
    Section.CONSTRAINTS: "Constraints and preferences",
}

# When a summary must shrink, items leave in this order (last section first).
KEEP_ORDER: tuple[Section, ...] = (
    Section.OBLIGATIONS,
    Section.GOALS,
    Section.DECISIONS,
    Section.CONSTRAINTS,
    Section.FACTS,
)


@dataclass(frozen=True, slots=True)
class SummaryItem:
    """One statement of a summary and the events (first..last sequence) it came from."""

    text: str
    first_seq: int
    last_seq: int

    def render(self) -> str:
        span = (
            f"#{self.first_seq}"
            if self.first_seq == self.last_seq
            else (f"#{self.first_seq}-{self.last_seq}")
        )
        return f"- {self.text} [{span}]"


@dataclass(frozen=True, slots=True)
class SummaryBody:
    """The five sections of a structured summary."""

    goals: tuple[SummaryItem, ...] = ()
    facts: tuple[SummaryItem, ...] = ()
    decisions: tuple[SummaryItem, ...] = ()
    obligations: tuple[SummaryItem, ...] = ()
    constraints: tuple[SummaryItem, ...] = ()

    def section(self, name: Section) -> tuple[SummaryItem, ...]:
        items: tuple[SummaryItem, ...] = getattr(self, name.value)
        return items

    def items(self) -> Iterator[tuple[Section, SummaryItem]]:
        for name in Section:
            for item in self.section(name):
                yield name, item

    def __len__(self) -> int:
        return sum(len(self.section(name)) for name in Section)

    def render(self, *, first_seq: int, last_seq: int, level: int) -> str:
        """The text a window shows: a header with the covered range, then each section."""
        what = "Segment summary" if level == 1 else "Session summary"
        lines = [f"{what} of events #{first_seq}-{last_seq}:"]
        for name in Section:
            items = self.section(name)
            if items:
                lines.append(f"{SECTION_TITLES[name]}:")
                lines.extend(item.render() for item in items)
        if len(lines) == 1:
            lines.append("- (small talk only)")
        return "\n".join(lines)

    def without_last(self) -> SummaryBody:
        """A copy with the least important item removed (used to fit a token target)."""
        for name in reversed(KEEP_ORDER):
            items = self.section(name)
            if items:
                return self.replace(name, items[:-1])
        return self

    def replace(self, name: Section, items: Sequence[SummaryItem]) -> SummaryBody:
        fields = {s.value: self.section(s) for s in Section}
        fields[name.value] = tuple(items)
        return SummaryBody(**fields)

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        return {
            name.value: [
                {"text": i.text, "first_seq": i.first_seq, "last_seq": i.last_seq}
                for i in self.section(name)
            ]
            for name in Section
        }

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], *, first_seq: int | None = None, last_seq: int | None = None
    ) -> SummaryBody:
        """Parse a body; item ranges are clamped into ``first_seq..last_seq`` when given.

        Raises :class:`~kenning.errors.InvalidInput` if the shape is wrong (a summarizer's
        output is input like any other).
        """
        if not isinstance(data, Mapping):
            raise InvalidInput("a summary body must be an object of sections")
        unknown = set(data) - {s.value for s in Section}
        if unknown:
            raise InvalidInput(f"unknown summary sections {sorted(unknown)}")
        fields: dict[str, tuple[SummaryItem, ...]] = {}
        for name in Section:
            raw = data.get(name.value, [])
            if not isinstance(raw, list):
                raise InvalidInput(f"summary section {name.value!r} must be a list")
            items = []
            for entry in raw:
                items.append(_item(entry, name, first_seq, last_seq))
            fields[name.value] = tuple(items)
        return cls(**fields)


def _item(entry: object, name: Section, lo: int | None, hi: int | None) -> SummaryItem:
    if not isinstance(entry, Mapping):
        raise InvalidInput(f"items of summary section {name.value!r} must be objects")
    text = entry.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"an item of summary section {name.value!r} has no text")
    first, last = entry.get("first_seq", lo), entry.get("last_seq", hi)
    if (
        isinstance(first, bool)
        or isinstance(last, bool)
        or not isinstance(first, int)
        or not isinstance(last, int)
    ):
        raise InvalidInput(f"an item of summary section {name.value!r} lacks its event range")
    if lo is not None:
        first, last = max(first, lo), max(last, lo)
    if hi is not None:
        first, last = min(first, hi), min(last, hi)
    if first > last:
        first, last = last, first
    return SummaryItem(text=" ".join(text.split()), first_seq=first, last_seq=last)


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """What a summarizer produced, which summarizer actually did it, and why it fell back."""

    body: SummaryBody
    summarizer: str
    fallback_reason: str | None = None
