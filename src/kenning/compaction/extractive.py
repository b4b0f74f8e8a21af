"""The default summarizer: deterministic, extractive, no LLM.

Each event is cut into sentences (a tool result into its scalar ``key=value`` fields); a
sentence is kept in the first section whose cues it shows — constraints and preferences,
goals (the user asking), open obligations (promises and pending actions), decisions, facts
(anything carrying a number or an id, and tool results) — and dropped as chatter otherwise.
Repeats (the same status dump ten times) become one item whose range spans them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from kenning.compaction.body import Section, SummaryBody, SummaryItem, SummaryResult
from kenning.compaction.summarizer import SummaryRequest
from kenning.records import Event, Role

__all__ = ["ExtractiveSummarizer"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MAX_SENTENCE = 240
_MAX_FIELDS = 12

_CUES: tuple[tuple[Section, re.Pattern[str], frozenset[Role] | None], ...] = (
    (
        Section.CONSTRAINTS,
        re.compile(
            r"\b(must(?:n't| not)?|never|always|do not|don't|only|at most|at least|"
            r"no later than|deadline|prefer(?:s|red)?|preference|allergic|budget|"
            r"not allowed|required?)\b",
            re.IGNORECASE,
        ),
        None,
    ),
    (
        Section.GOALS,
        re.compile(
            r"\b(i want|i'd like|i would like|i need|help me|trying to|my goal|looking to|"
            r"please|can you|could you|i'm asking)\b",
            re.IGNORECASE,
        ),
        frozenset({Role.USER}),
    ),
    (
        Section.OBLIGATIONS,
        re.compile(
            r"\b(i will|i'll|we will|we'll|will (?:send|call|email|refund|cancel|follow)|"
            r"pending|waiting for|awaiting|follow[- ]up|to do|remind|by (?:monday|tuesday|"
            r"wednesday|thursday|friday|tomorrow|tonight))\b",
            re.IGNORECASE,
        ),
        None,
    ),
    (
        Section.DECISIONS,
        re.compile(
            r"\b(approved|rejected|denied|decided|agreed|confirmed|chose|chosen|granted|"
            r"refunded|cancell?ed|escalated|declined|accepted)\b",
            re.IGNORECASE,
        ),
        None,
    ),
    (
        Section.FACTS,
        re.compile(r"\d|\b[A-Z]{2,}[-_#]?[A-Z0-9]*\d"),
        None,
    ),
)


def _scalars(value: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield from _scalars(value[key], f"{prefix}{key}.")
    elif isinstance(value, list):
        for i, item in enumerate(value[:_MAX_FIELDS]):
            yield from _scalars(item, f"{prefix}{i}.")
    elif value is not None and value != "":
        yield f"{prefix[:-1]}={value}"


def _tool_sentence(event: Event) -> str | None:
    payload: Any = event.tool_result
    if payload is None:
        try:
            payload = json.loads(event.content)
        except ValueError:
            return None
    if not isinstance(payload, Mapping | list):
        return None
    fields = list(_scalars(payload))[:_MAX_FIELDS]
    if not fields:
        return None
    name = event.tool_name or "tool"
    return f"{name} returned " + ", ".join(fields)


def _sentences(event: Event) -> Iterator[str]:
    if event.role is Role.TOOL:
        compact = _tool_sentence(event)
        if compact is not None:
            yield compact[:_MAX_SENTENCE]
            return
    for raw in _SENTENCE.split(event.content):
        text = " ".join(raw.split())
        if len(text) >= 3:
            yield text if len(text) <= _MAX_SENTENCE else text[: _MAX_SENTENCE - 1] + "…"


def _section(event: Event, sentence: str) -> Section | None:
    for section, cue, roles in _CUES:
        if (roles is None or event.role in roles) and cue.search(sentence):
            return section
    if event.role is Role.TOOL:
        return Section.FACTS
    return None


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w#€$£¥.,-]+", " ", text.lower()).split())


class ExtractiveSummarizer:
    """Deterministic extractive summaries (see the module docstring)."""

    @property
    def name(self) -> str:
        return "extractive"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        found: dict[Section, dict[str, SummaryItem]] = {s: {} for s in Section}
        for event in request.events:
            speaker = "tool" if event.role is Role.TOOL else event.role.value
            for sentence in _sentences(event):
                section = _section(event, sentence)
                if section is None:
                    continue
                key = _norm(sentence)
                items = found[section]
                seen = items.get(key)
                if seen is None:
                    text = sentence if event.role is Role.TOOL else f"{speaker}: {sentence}"
                    items[key] = SummaryItem(text=text, first_seq=event.seq, last_seq=event.seq)
                else:
                    items[key] = SummaryItem(seen.text, seen.first_seq, event.seq)
        body = SummaryBody(
            **{
                section.value: tuple(sorted(items.values(), key=lambda i: i.first_seq))
                for section, items in found.items()
            }
        )
        return SummaryResult(body=body, summarizer=self.name)
