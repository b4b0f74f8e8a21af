"""The write path behind ``Memory.add_events`` and ``Memory.ingest``: events in, stored and
indexed.

For a batch (one session or several), :class:`IngestPipeline` validates every event before
anything is written, plans each one's index rows as search will read them
(:func:`kenning.indexing.index_plan`: sentence units, chunks, the end of the turn before it),
asks for the pins the extraction rules find in it, embeds only the texts the store holds no
vector for, and appends events, pins and new vectors in one transaction
(:meth:`~kenning.store.protocol.EventLog.append_events`); with deferred vectors
(:mod:`kenning.vectors`, the default for ``Memory``) it commits the events first and a
background writer embeds their texts. If the embedding model is down the
events are still stored, without vectors: search over them is lexical until
``Memory.reindex`` embeds them. After a write, whoever reads new events (fact extraction) is
told.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kenning.api import EventLike
from kenning.embed.base import Embedder
from kenning.errors import InvalidInput, ModelUnavailable
from kenning.indexing import embedding_text, index_plan
from kenning.records import Event, NewEvent, PinDraft, Quota, Scope, new_event_id
from kenning.settings import Settings
from kenning.store.protocol import EventLog
from kenning.store.records import EventWrite, ModelInfo
from kenning.telemetry import stage
from kenning.vectors import VectorWriter

__all__ = ["EventLike", "IngestPipeline", "PinSource"]

log = logging.getLogger("kenning")

# (tenant, content hash) -> the text embedded under that hash
_Texts = dict[tuple[str, str], str]


class PinSource(Protocol):
    """Where the pins of an event about to be written come from (``memory.context``)."""

    def pin_drafts(self, scope: Scope, event: NewEvent, *, event_id: str) -> list[PinDraft]: ...


def _as_new_event(value: EventLike) -> NewEvent:
    if isinstance(value, NewEvent):
        return value
    if isinstance(value, Mapping):
        return NewEvent.from_mapping(value)
    raise InvalidInput(f"an event must be a NewEvent or a mapping, not {type(value).__name__}")


@dataclass(slots=True, eq=False)
class IngestPipeline:
    """Validates, plans, embeds and appends batches of events to one event log.

    *pins* gives each event's pins (committed with it); *after_write* is called after a batch
    wrote at least one event (``Memory`` passes the fact extractor's wake-up when extraction
    is on). With a *writer* (deferred vectors, :mod:`kenning.vectors`) a batch commits its
    events with the texts they still need listed as pending, and the writer embeds them
    after; without one, the texts are embedded before the commit.
    """

    log: EventLog
    embedder: Embedder | None
    settings: Settings
    _: KW_ONLY
    pins: PinSource
    after_write: Callable[[], None] | None = None
    writer: VectorWriter | None = None

    def model(self) -> ModelInfo | None:
        """The embedder's model id and dimension (None without an embedder)."""
        if self.embedder is None:
            return None
        return ModelInfo(model_id=self.embedder.model_id, dimension=self.embedder.dimension)

    def ingest(
        self, items: Sequence[tuple[Scope, EventLike]], *, quota: Quota | None = None
    ) -> list[Event]:
        """Append events of one or several sessions in one atomic batch.

        Returns the events written, in order; an event whose ``idempotency_key`` its session
        already holds is skipped and not returned. The pins extracted from the events are
        committed in the same transaction.

        Raises :class:`~kenning.errors.InvalidInput` (nothing is written) if any event or
        scope is invalid, :class:`~kenning.errors.QuotaExceeded` (nothing is written) if the
        batch would take a tenant past *quota*.
        """
        writes, texts = self._plan(self._validated(items))
        if not writes:
            return []
        model = self.model()
        missing = self._missing(texts, model) if model is not None else {}
        # A batch that fills a model call by itself (a bulk import) is embedded in the call
        # that writes it: the writer gains nothing by taking it.
        writer = self.writer
        if writer is not None and model is not None and len(missing) < writer.max_texts:
            written = self._append_deferred(writes, missing, writer, quota)
        else:
            vectors = self._vectors_for(missing) if model is not None else None
            with stage("store"):
                written = self.log.append_events(
                    writes, model=model if vectors is not None else None, vectors=vectors,
                    quota=quota,
                )  # fmt: skip
        if written and self.after_write is not None:
            self.after_write()
        return written

    def _validated(self, items: Sequence[tuple[Scope, EventLike]]) -> list[tuple[Scope, NewEvent]]:
        """Every event checked before any is planned: one bad event writes nothing."""
        limit = self.settings.max_content_chars
        events: list[tuple[Scope, NewEvent]] = []
        for index, (scope, raw) in enumerate(items):
            try:
                if not isinstance(scope, Scope):
                    raise InvalidInput("scope must be a kenning.Scope")
                scope.require_session()
                events.append((scope, _as_new_event(raw).validated(max_chars=limit)))
            except InvalidInput as exc:
                # Which event of the batch: the first bad one, and nothing is written.
                raise type(exc)(f"event {index}: {exc}") from exc
        return events

    def _plan(self, events: Sequence[tuple[Scope, NewEvent]]) -> tuple[list[EventWrite], _Texts]:
        """Each event's write (index rows, pins, a fresh id) and the texts its rows embed.

        With ``embed_context`` a turn's embedded text carries the end of the turn before it:
        the session's stored last event for the first turn of a batch, the batch's previous
        turn after that.
        """
        settings = self.settings
        mode = settings.embed_text
        writes: list[EventWrite] = []
        texts: _Texts = {}
        previous: dict[tuple[str, str | None], str | None] = {}
        for scope, event in events:
            key = (scope.tenant, scope.session)
            if settings.embed_context and key not in previous:
                tail = self.log.events(scope, tail=1)
                previous[key] = embedding_text(tail[0], mode) if tail else None
            with stage("plan"):
                plan = index_plan(
                    event, mode=mode,
                    previous=previous.get(key) if settings.embed_context else None,
                    chunk_chars=settings.chunk_chars, unit_chars=settings.index_unit_chars,
                )  # fmt: skip
            previous[key] = embedding_text(event, mode)
            texts.update(((scope.tenant, h), text) for h, text in plan.texts.items())
            event_id = new_event_id()
            with stage("pins"):
                pins = tuple(self.pins.pin_drafts(scope, event, event_id=event_id))
            writes.append(
                EventWrite(
                    scope=scope, event=event, embed_hash=plan.embed_hash,
                    id=event_id, chunks=plan.chunks,
                    pins=pins,
                )
            )  # fmt: skip
        return writes, texts

    def _append_deferred(
        self, writes: list[EventWrite], todo: _Texts, writer: VectorWriter, quota: Quota | None
    ) -> list[Event]:
        """Commit the events with the texts they still need (*todo*) listed as pending, then
        hand those texts to the background writer (:mod:`kenning.vectors`)."""
        with stage("store"):
            written = self.log.append_events(writes, quota=quota, pending=todo)
        by_tenant: dict[str, dict[str, str]] = {}
        for (tenant, digest), text in todo.items():
            by_tenant.setdefault(tenant, {})[digest] = text
        for tenant, pending in by_tenant.items():
            writer.submit(tenant, pending)
        return written

    def _missing(self, texts: _Texts, model: ModelInfo) -> _Texts:
        """The texts among *texts* this store holds no vector for (content-hash reuse)."""
        by_tenant: dict[str, list[str]] = {}
        for tenant, digest in texts:
            by_tenant.setdefault(tenant, []).append(digest)
        with stage("store"):
            return {
                (tenant, digest): texts[(tenant, digest)]
                for tenant, hashes in by_tenant.items()
                for digest in self.log.missing_vectors(tenant, model, hashes)
            }

    def _vectors_for(
        self, missing: _Texts
    ) -> dict[tuple[str, str], npt.NDArray[np.float32]] | None:
        """Embed the texts the store lacks a vector for (*missing*), each distinct text once;
        None when the embedding model is unavailable (the events are stored without
        vectors)."""
        assert self.embedder is not None
        if not missing:
            return {}
        todo = list(missing)
        unique = list(dict.fromkeys(missing.values()))
        try:
            with stage("model"):
                matrix = self.embedder.embed(unique)
        except ModelUnavailable as exc:
            log.warning("embedding model unavailable, events stored without vectors: %s", exc)
            return None
        row = {text: i for i, text in enumerate(unique)}
        return {key: matrix[row[missing[key]]] for key in todo}
