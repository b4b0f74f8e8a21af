"""Compaction policy: which event ranges become summaries, at which level, at what size.
Pure, no I/O.

Levels: the newest events stay raw (``keep_recent`` of the budget); older raw events are cut
into segments of at most ``segment`` of the budget, each summarized at level 1; when more than
``max_segments`` level-1 summaries are active, everything summarized so far is regenerated from
the episode as one level-2 session summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kenning.checks import check_numbers

__all__ = ["CompactionSettings", "plan_segments"]


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """Sizes as fractions of the window's usable budget.

    Attributes:
        keep_recent: raw tokens left uncompacted at the end of the session.
        segment: the most raw tokens one level-1 summary covers.
        segment_summary: the size a level-1 summary is trimmed to.
        session_summary: the size the level-2 session summary is trimmed to.
        max_segments: active level-1 summaries before they are merged into a session summary.
        min_summary_tokens: a floor for both summary sizes on small budgets.
        lease_s: how long a worker holds a job before another may take it over; a working
            worker renews its lease every third of it.
        workers: background compaction threads per process (a bounded pool: further jobs wait
            in the persisted queue, never in memory).
        keep_turns: the last this many events always stay raw.
        min_turns: a session with fewer events is never summarized.
        min_ratio: a summary must be this many times smaller than what it covers; one that
            is not is rejected and the fallback summarizer runs.
    """

    keep_recent: float = 0.35
    segment: float = 0.5
    segment_summary: float = 0.06
    session_summary: float = 0.12
    max_segments: int = 3
    min_summary_tokens: int = 96
    lease_s: float = 300.0
    keep_turns: int = 4
    min_turns: int = 6
    min_ratio: float = 2.0
    workers: int = 1

    def __post_init__(self) -> None:
        fractions = ("keep_recent", "segment", "segment_summary", "session_summary")
        check_numbers(self, fractions, low=0, high=1, above=True)
        check_numbers(self, "max_segments", low=1, integer=True)
        check_numbers(self, "min_summary_tokens", low=16, integer=True)
        check_numbers(self, ("keep_turns", "min_turns"), low=0, integer=True)
        check_numbers(self, "min_ratio", low=1, high=100)
        check_numbers(self, "lease_s", low=1, high=86_400)
        check_numbers(self, "workers", low=1, high=64, integer=True)

    def tokens(self, share: float, budget: int) -> int:
        return max(self.min_summary_tokens, int(share * budget))


def plan_segments(
    ledger: Sequence[tuple[int, int]], *, keep_from: int, segment_tokens: int
) -> list[tuple[int, int]]:
    """Cut the raw events before *keep_from* into ``(first_seq, last_seq)`` segments.

    *ledger* holds ``(seq, tokens)`` of the raw (not yet summarized) events in order. A segment
    closes before the event that would take it over *segment_tokens*; an event larger than
    that is a segment of its own.
    """
    segments: list[tuple[int, int]] = []
    first = last = None
    size = 0
    for seq, n in ledger:
        if seq >= keep_from:
            break
        if first is not None and size + n > segment_tokens:
            assert last is not None
            segments.append((first, last))
            first, size = None, 0
        if first is None:
            first = seq
        last, size = seq, size + n
    if first is not None and last is not None:
        segments.append((first, last))
    return segments
