"""What a query asks for, read from its words before searching (rule-based, pure, no LLM).

* **Times it names** ("last Friday", "in March 2023"): records from then are preferred and the
  best records of that time join the candidates (:mod:`kenning.search.timeref`).
* **A state of the past** ("where did I live before?", "my previous job", "what did I use to
  eat"): what held then is the answer, so a turn stating a value the user has since changed
  keeps its place (see :mod:`kenning.longterm.current`).
* **Several targets.** A question that counts, totals or averages ("how many", "in total"),
  compares two things ("the difference between A and B", "which did I like better, A or B"),
  asks for the order of two events or the time between them ("was A before or after B", "how
  long had I been X when Y"), for every X ("all the", "every"), or about a state that may
  have changed ("currently", "these days", "is it still …?") needs several records, usually
  written in different conversations. Lifting the turns of the best-matching conversation
  would fill the top of the list with that one conversation and hide the others, so such a
  query uses ``FusionConfig.multi_target_session_weight``.

The cues are phrases, not single words, and were checked on kenning's labelled product
queries (``kenning bench reader``): the bare words "or", "first", "order", "times",
"between" and "total" mark single-target queries far more often than not ("the status of my
order", "my first job", "tea or coffee", "the order total"), so each counts only inside a
phrase that carries the meaning. "And", "which" and number words are left out for the same
reason ("What did Omar and his team ship?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from kenning.search.timeref import TimeWindow, time_windows

__all__ = ["QueryPlan", "plan_query"]

_COMPARATIVE = (
    r"(?:first|earlier|later|sooner|before|after|more|less|most|least|better|best|worse|"
    r"worst|bigger|smaller|cheaper|longer|shorter|faster|slower|higher|lower|older|newer)"
)
_PERIOD = r"(?:minutes?|hours?|days?|weeks?|months?|years?|time)"
# Counting, totals, averages, comparisons, order and lists: answers that need several records.
_MULTI_TARGET = re.compile(
    r"\b(?:how many|how often|more than once|number of times|in total|altogether|"
    r"total (?:of|amount|number|cost|price|time|distance|count|spend|spent)|"
    r"combined|sum of|add up|adds up|average|on average|compare|compared|comparison|versus|"
    r"difference between|differences between|changed between|"
    rf"{_PERIOD} between|in what order|the order in which|before or after|after or before|"
    r"earlier or later|all the|all of the|all of my|all my|"
    r"every(?!\s*(?:time|day|week|month|year|morning|evening|night|other|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)\b))\b"
)
# "Which/who … better …, A or B?": a choice between alternatives by a comparison or an order.
# Three linear scans, one after the other, so a long query costs no backtracking.
_WHICH = re.compile(r"\b(?:which|who)\b")
_COMPARISON = re.compile(rf"\b{_COMPARATIVE}\b")
_OR = re.compile(r"\bor\b")
# A duration between two events: "how long had I been X when I did Y".
_HOW_LONG = re.compile(r"\bhow long\b")
_SECOND_EVENT = re.compile(r"\b(?:when|before|after|since|until)\b")
# A present state that may have changed: its history is spread over time.
_CURRENT_STATE = re.compile(r"\b(?:current|currently|nowadays|these days|anymore|any more)\b")
# A yes/no question whether something still holds ("Is my plan still active?", "Do I still
# play?"); "why is it still late" asks about one state, not its history.
_STILL = re.compile(r"^\s*(?:is|are|am|do|does|have|has|was|were)\b[^?.!]*\bstill\b")
# A state that held before the present one ("how old" asks an age, not about the past).
_PAST_STATE = re.compile(
    r"\b(?:before|previous|previously|formerly|former|originally|at first|at the time|"
    r"back then|prior to|used to|use to|no longer|in the past|(?:my|our|the) old)\b"
)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """A query read for search: the times it names, whether it has several targets, and
    whether it asks about a state of the past."""

    text: str
    windows: tuple[TimeWindow, ...] = ()
    multi_target: bool = False
    asks_past: bool = False


def _which_or(lowered: str) -> bool:
    which = _WHICH.search(lowered)
    if which is None:
        return False
    comparison = _COMPARISON.search(lowered, which.end())
    return comparison is not None and _OR.search(lowered, comparison.end()) is not None


def plan_query(text: str, now: datetime) -> QueryPlan:
    """Read *text* (a search query) relative to *now*."""
    lowered = text.lower()
    how_long = _HOW_LONG.search(lowered)
    multi_target = bool(
        _MULTI_TARGET.search(lowered)
        or _which_or(lowered)
        or (how_long and _SECOND_EVENT.search(lowered, how_long.end()))
        or _CURRENT_STATE.search(lowered)
        or _STILL.search(lowered)
    )
    return QueryPlan(
        text=text, windows=time_windows(text, now), multi_target=multi_target,
        asks_past=bool(_PAST_STATE.search(lowered)),
    )  # fmt: skip
