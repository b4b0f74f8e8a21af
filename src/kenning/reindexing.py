"""Rebuilding a tenant's index rows under the current settings (``kenning reindex``).

What ingest embeds for an event depends on settings: sentence units (``unit_chars``), a turn's
context (``embed_context``), the chunk size, what text is embedded (``embed_text``). Events
written under other settings, or while the embedding model was down (stored without vectors,
found by their words only), keep those rows until they are rebuilt. This pass reads the
tenant's events in order, plans each one's rows as ingest would now
(:func:`kenning.indexing.index_plan`), embeds only the texts the store lacks, and rewrites the
events whose rows differ, a batch per transaction. Search keeps serving throughout: each
batch replaces its events' rows in one commit, and every process's partition follows it.

An event's rows also decide how the turn after it is indexed (an answer is mixed with the
question before it, :mod:`kenning.store.replies`), so that turn is indexed again too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kenning.embed.base import Embedder
from kenning.errors import InvalidInput
from kenning.indexing import IndexPlan, embedding_text, index_plan
from kenning.records import Event, Scope
from kenning.settings import Settings
from kenning.store.protocol import EventLog, Reindexing
from kenning.store.records import IndexChange, IndexLayout, ModelInfo

__all__ = ["ReindexReport", "ReindexStore", "reindex"]


class ReindexStore(Reindexing, EventLog, Protocol):
    """What reindexing uses of a store: the events' index rows, and the events and vectors
    they are planned from."""


@dataclass(frozen=True, slots=True)
class ReindexReport:
    """What a reindex did: events *checked*, *rebuilt* (rows or vectors changed), *relinked*
    (indexed again because the turn before them was rebuilt) and texts *embedded*."""

    tenant: str
    checked: int = 0
    rebuilt: int = 0
    relinked: int = 0
    embedded: int = 0


def reindex(
    store: ReindexStore,
    embedder: Embedder | None,
    settings: Settings,
    tenant: str,
    *,
    batch: int = 512,
    stop: Callable[[], bool] | None = None,
    progress: Callable[[ReindexReport], None] | None = None,
) -> ReindexReport:
    """Rebuild the index rows of *tenant*'s events that differ from what ingest would write
    now; return what was done. *stop* is asked between batches (a batch is committed whole);
    *progress* gets the running report after each batch. Running it again changes nothing.
    """
    Scope(tenant)  # a valid tenant id, or InvalidScope
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InvalidInput("batch must be an integer >= 1")
    if embedder is None:
        raise InvalidInput("reindexing needs the embedding model (a Memory with an embedder)")
    # The store refuses another model's vectors (ModelMismatch) at the first batch's lookup.
    model = ModelInfo(embedder.model_id, embedder.dimension)
    report = ReindexReport(tenant)
    planner = _Planner(store, settings, tenant)
    cursor = 0
    while stop is None or not stop():
        page = store.index_layouts(tenant, after=cursor, limit=batch)
        if not page:
            break
        cursor = page[-1].cursor
        plans = [(layout, planner.plan(layout.event)) for layout in page]
        hashes = {h: text for _, plan in plans for h, text in plan.texts.items()}
        missing = set(store.missing_vectors(tenant, model, list(hashes)))
        changes, rebuilt, relinked = _changes(plans, missing, planner)
        texts, vectors = _embed_missing(embedder, hashes, missing)
        if changes:
            store.reindex_events(tenant, changes, model=model, vectors=vectors)
        report = replace(
            report,
            checked=report.checked + len(page),
            rebuilt=report.rebuilt + rebuilt,
            relinked=report.relinked + relinked,
            embedded=report.embedded + len(texts),
        )
        if progress is not None:
            progress(report)
    return report


def _changes(
    plans: Sequence[tuple[IndexLayout, IndexPlan]], missing: set[str], planner: _Planner
) -> tuple[list[IndexChange], int, int]:
    """The events of a batch to index again: those whose rows differ from their plan or lack
    a vector (rebuilt), and those after a rebuilt turn (relinked); with both counts."""
    changes: list[IndexChange] = []
    rebuilt = relinked = 0
    for layout, plan in plans:
        changed = not plan.same_rows(layout.embed_hash, layout.chunks)
        changed = changed or any(h in missing for h in plan.texts)
        if changed:
            rebuilt += 1
            planner.rebuilt(layout.event)
        elif planner.follows_rebuilt(layout.event):
            relinked += 1
        else:
            continue
        changes.append(IndexChange(layout.event.id, plan.embed_hash, plan.chunks))
    return changes, rebuilt, relinked


def _embed_missing(
    embedder: Embedder, hashes: Mapping[str, str], missing: set[str]
) -> tuple[list[str], dict[str, npt.NDArray[np.float32]]]:
    """The texts the store lacks a vector for, each once, and their vectors by hash."""
    texts = list(dict.fromkeys(hashes[h] for h in hashes if h in missing))
    if not texts:
        return texts, {}
    matrix = embedder.embed(texts)
    row = {text: i for i, text in enumerate(texts)}
    return texts, {h: matrix[row[hashes[h]]] for h in hashes if h in missing}


class _Planner:
    """Plans events in a session's order, remembering what the turn before each embedded (its
    context) and which turns were rebuilt (the turn after one is indexed again)."""

    def __init__(self, store: EventLog, settings: Settings, tenant: str) -> None:
        self._store = store
        self._settings = settings
        self._tenant = tenant
        # Per session: the last event planned (its seq and embedded text).
        self._last: dict[tuple[str | None, str | None], tuple[int, str]] = {}
        self._rebuilt: set[tuple[str | None, str | None, int]] = set()

    def plan(self, event: Event) -> IndexPlan:
        settings = self._settings
        mode = settings.embed_text
        previous = self._previous(event) if settings.embed_context else None
        self._last[(event.scope.user, event.scope.session)] = (
            event.seq,
            embedding_text(event, mode),
        )
        return index_plan(
            event, mode=mode, previous=previous, chunk_chars=settings.chunk_chars,
            unit_chars=settings.index_unit_chars,
        )  # fmt: skip

    def _previous(self, event: Event) -> str | None:
        """The embedded text of the turn just before *event* in its session (its context)."""
        known = self._last.get((event.scope.user, event.scope.session))
        if known is not None and known[0] == event.seq - 1:
            return known[1]
        if event.seq <= 1:
            return None
        before = self._store.events(event.scope, after_seq=event.seq - 2, limit=1)
        if before and before[0].seq == event.seq - 1:
            return embedding_text(before[0], self._settings.embed_text)
        return None

    def follows_rebuilt(self, event: Event) -> bool:
        return (event.scope.user, event.scope.session, event.seq - 1) in self._rebuilt

    def rebuilt(self, event: Event) -> None:
        self._rebuilt.add((event.scope.user, event.scope.session, event.seq))
