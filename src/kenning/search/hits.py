"""What a search returns: hits with per-signal scores and provenance."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kenning.records import JSONScalar, Role, Scope
from kenning.search.plan import QueryPlan

__all__ = ["Hit", "SearchResults"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the record, its fused score, each signal's score, and provenance."""

    id: str
    kind: str
    score: float
    scores: Mapping[str, float]
    content: str
    role: Role
    scope: Scope
    seq: int | None
    at: datetime
    metadata: Mapping[str, JSONScalar] = field(default_factory=dict)
    tags: tuple[str, ...] = ()

    @property
    def user(self) -> str | None:
        return self.scope.user

    @property
    def session(self) -> str | None:
        return self.scope.session

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (used by ``kenning search --json``)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "score": round(self.score, 6),
            "scores": {k: round(v, 6) for k, v in self.scores.items()},
            "content": self.content,
            "role": self.role.value,
            "tenant": self.scope.tenant,
            "user": self.scope.user,
            "session": self.scope.session,
            "seq": self.seq,
            "at": self.at.isoformat(),
            "metadata": dict(self.metadata),
            "tags": list(self.tags),
        }


@dataclass(frozen=True, slots=True)
class SearchResults:
    """Hits, best first. ``degraded`` says a signal was unavailable (e.g. the embedding model);
    ``plan`` is how the query was read (the times it names, whether it has several targets).

    Iterating, ``len`` and indexing go to ``hits``.
    """

    hits: tuple[Hit, ...]
    degraded: bool = False
    reason: str | None = None
    plan: QueryPlan | None = None

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]
