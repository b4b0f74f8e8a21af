"""Search filters as a validated record: what a search may score, applied before ranking.

Parsed from user input by :func:`kenning.search.filters.parse_filters`; each backend renders
it into its own query language.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kenning.records.core import JSONScalar, Role

__all__ = ["KINDS", "Filters"]

KINDS = ("event", "fact")
"""The record kinds a search can return: turns and tool events, and long-term facts."""


@dataclass(frozen=True, slots=True)
class Filters:
    """Constraints applied inside every search query, before any scoring."""

    roles: tuple[Role, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: tuple[tuple[str, tuple[JSONScalar, ...]], ...] = ()
    kinds: tuple[str, ...] = KINDS
    since: datetime | None = None
    until: datetime | None = None

    @property
    def needs_sql(self) -> bool:
        """True when the filter can only be evaluated by the database (tags, metadata)."""
        return bool(self.tags or self.metadata)
