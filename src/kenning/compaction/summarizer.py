"""The ``Summarizer`` protocol: turn a range of episode events (plus the session's pins) into a
structured :class:`~kenning.compaction.body.SummaryBody`.

Two implementations ship: the deterministic extractive default
(:mod:`kenning.compaction.extractive`, no LLM) and an LLM summarizer over any
OpenAI-compatible chat endpoint (:mod:`kenning.compaction.llm`) that falls back to the
extractive one on any failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kenning.compaction.body import SummaryResult
from kenning.records import Event, Pin

__all__ = ["Summarizer", "SummaryRequest"]


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What to summarize.

    Attributes:
        events: the covered events in sequence order (the episode is the source, never only a
            previous summary).
        pins: the session's current pins; a summary need not repeat them, since pins are shown
            on their own, but it may refer to them.
        level: 1 for a segment summary, 2 for a session summary.
        first_seq, last_seq: the covered range.
        max_tokens: the size the summary should stay under (the caller trims to it).
    """

    events: Sequence[Event]
    pins: Sequence[Pin]
    level: int
    first_seq: int
    last_seq: int
    max_tokens: int


@runtime_checkable
class Summarizer(Protocol):
    """Summarizes a range of events. Must not raise for content reasons: implementations that
    can fail (network, model) fall back to a deterministic path and say so in the result."""

    @property
    def name(self) -> str: ...

    def summarize(self, request: SummaryRequest) -> SummaryResult: ...
