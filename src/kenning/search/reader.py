"""The query reader: how search reads a query before it searches.

A reader turns the query text and the search's ``now`` into a :class:`QueryPlan`: the times the
query names (soft time windows) and whether it has several targets (which switches the session
lift to ``FusionConfig.multi_target_session_weight``). It is a small protocol so that another
reader (a learned classifier, an LLM behind a cache, rules for another language) can replace the
default through ``Settings(reader=...)`` without touching the search pipeline. A reader must be
pure and cheap: it runs on every search, before any I/O.

Example::

    >>> from datetime import datetime, UTC
    >>> plan = RuleReader().read("how many orders did I place last month?",
    ...                          datetime(2026, 3, 11, tzinfo=UTC))
    >>> plan.multi_target, [w.phrase for w in plan.windows]
    (True, ['last month'])
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from kenning.search.plan import QueryPlan, plan_query

__all__ = ["QueryReader", "RuleReader"]


@runtime_checkable
class QueryReader(Protocol):
    """Reads a search query: ``read(text, now) -> QueryPlan``. Pure; no I/O."""

    def read(self, text: str, now: datetime) -> QueryPlan:
        """The plan of *text*, with times relative to *now*."""
        ...


@dataclass(frozen=True, slots=True)
class RuleReader:
    """The default reader: English rules (:func:`kenning.search.plan.plan_query`), no model."""

    def read(self, text: str, now: datetime) -> QueryPlan:
        """The plan of *text*, with times relative to *now*."""
        return plan_query(text, now)
