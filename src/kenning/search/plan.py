"""What a query asks for, read from its words before searching (rule-based, pure, no LLM).

* **Times it names** ("last Friday", "in March 2023"): records from then are preferred and the
  best records of that time join the candidates (:mod:`kenning.search.timeref`).
* **Several targets.** A question that counts, totals, averages, orders or compares ("how many
  times", "in total", "which came first, A or B"), asks for the time between two events ("how
  long had I been X when Y") or about a state that may have changed ("what do I currently
  use") needs several records, usually written in different conversations. Lifting the turns
  of the best-matching conversation would fill the top of the list with that one conversation
  and hide the others, so such a query uses ``FusionConfig.multi_target_session_weight``.
  Two or more quoted phrases ("the order of 'A', 'B' and 'C'") count as several targets too.

The cue words were chosen for what they mean; "and", "which" and number words are left out
because they just as often mark a single target ("What did Mel and her kids paint?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from kenning.search.timeref import TimeWindow, time_windows

__all__ = ["QueryPlan", "plan_query"]

# Counting, totals, averages, ordering and comparison: answers that need several records.
_MULTI_TARGET = re.compile(
    r"\b(?:how many|in total|total|altogether|combined|sum|average|times|first|order|or|"
    r"compare|compared|difference|between)\b"
)
# A duration between two events: "how long had I been X when I did Y".
_HOW_LONG = re.compile(r"\bhow long\b")
_SECOND_EVENT = re.compile(r"\b(?:when|before|after|since|until)\b")
# A present state that may have changed: its history is spread over time.
_CURRENT_STATE = re.compile(r"\b(?:currently|nowadays|these days|anymore|any more)\b")
# A quoted phrase: opened after a space, bracket or punctuation, closed before one, so the
# apostrophes of "I'm" or "the Smiths' house" are not quotes.
_QUOTED = re.compile(
    r"""(?:^|(?<=[\s(:,;]))['"\u2018\u201c][^'"\u2018\u2019\u201c\u201d]{2,}?"""
    r"""['"\u2019\u201d](?=[\s?.,!;:)]|$)"""
)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """A query read for search: the times it names and whether it has several targets."""

    text: str
    windows: tuple[TimeWindow, ...] = ()
    multi_target: bool = False


def plan_query(text: str, now: datetime) -> QueryPlan:
    """Read *text* (a search query) relative to *now*."""
    lowered = text.lower()
    how_long = _HOW_LONG.search(lowered)
    multi_target = bool(
        _MULTI_TARGET.search(lowered)
        or (how_long and _SECOND_EVENT.search(lowered, how_long.end()))
        or _CURRENT_STATE.search(lowered)
        or len(_QUOTED.findall(text)) >= 2
    )
    return QueryPlan(text=text, windows=time_windows(text, now), multi_target=multi_target)
