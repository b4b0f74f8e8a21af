"""Records loaded from a store, as a search sees them: whether filters admit them, and hits.

Kept apart from :mod:`kenning.search.hits` and :mod:`kenning.search.filters`, which the client
and the tools use without a store.
"""

from __future__ import annotations

from collections.abc import Mapping

from kenning.records import Filters
from kenning.search.filters import admits
from kenning.search.hits import Hit
from kenning.store.records import Item

__all__ = ["admits_item", "hit_of"]


def admits_item(filters: Filters, item: Item) -> bool:
    """True if a loaded record passes *filters* (:func:`~kenning.search.filters.admits`)."""
    return admits(filters, kind=item.kind, role=item.role, at=item.at, tags=item.tags,
                  metadata=item.metadata)  # fmt: skip


def hit_of(item: Item, score: float, scores: Mapping[str, float]) -> Hit:
    """A loaded record as a hit with these scores."""
    return Hit(
        id=item.id, kind=item.kind, score=score, scores=dict(scores), content=item.text,
        role=item.role, scope=item.scope, seq=item.seq, at=item.at, metadata=item.metadata,
        tags=item.tags,
    )  # fmt: skip
