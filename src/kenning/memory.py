"""The Python facade: ``Memory.open(path)`` and the operations an agent calls.

``Memory`` validates input where it enters, then forwards to the objects that own each
operation over one :class:`~kenning.store.Store` and :class:`~kenning.embed.Embedder`: the
write pipeline (:mod:`kenning.ingest`), the search engine (:mod:`kenning.search.engine`), the
working context (:mod:`kenning.context.service`) and long-term memory
(:mod:`kenning.longterm`). The facade holds what an agent calls on every turn — add events,
search, assemble a window, forget; pins, task state, summaries and compaction are reached
through :attr:`Memory.context`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from kenning.api import EventLike, MemoryAPI, MemoryParts
from kenning.compaction.summarizer import Summarizer
from kenning.context.actions import FileTools
from kenning.context.api import session_of
from kenning.context.service import WorkingContext
from kenning.context.window import ContextWindow
from kenning.embed.base import Embedder
from kenning.errors import InvalidInput, VectorsPending
from kenning.ingest import IngestPipeline
from kenning.longterm.current import CurrentFirst
from kenning.longterm.procedures import Procedures
from kenning.longterm.retention import Retention
from kenning.longterm.service import LongTermMemory
from kenning.longterm.worker import FactWorker
from kenning.records import Event, Quota, Scope, check_year, to_utc
from kenning.reindexing import ReindexReport, reindex
from kenning.search.engine import SearchEngine
from kenning.search.filters import parse_filters
from kenning.search.hits import SearchResults
from kenning.settings import Settings
from kenning.store.protocol import DocumentStore, Store, documents_of
from kenning.telemetry import content, scope_attributes, traced
from kenning.vectors import VectorWriter

__all__ = ["Memory"]


class _Default:
    """Marks "use the default embedder" apart from an explicit ``None`` (no embeddings)."""


DEFAULT = _Default()


_MAX_SEQ = 2**63 - 1  # a sequence number is a 64-bit integer in both stores


class Memory(MemoryParts[WorkingContext, LongTermMemory, Procedures, Retention], MemoryAPI):
    """kenning's memory over one store.

    >>> from kenning import Memory, Scope
    >>> with Memory.open(":memory:", embedder=None) as memory:  # lexical only, no model
    ...     scope = Scope("acme", "u1", "s1")
    ...     _ = memory.add_events(scope, [{"role": "user", "content": "Refund order A-123"}])
    ...     memory.search(scope, "refund")[0].content
    'Refund order A-123'
    """

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
        summarizer: Summarizer | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings or Settings()
        self._engine = SearchEngine(
            store,
            store,
            embedder,
            fusion=self._settings.fusion,
            reader=self._settings.reader,
            rerank_model=self._settings.rerank_model,
            track_access=self._settings.track_access,
        )
        facts = LongTermMemory(store, embedder, self._settings.longterm)
        self._current = CurrentFirst(store)
        procedures = Procedures(store)
        context = WorkingContext(
            store,
            search=lambda scope, query, k, kinds: self.search(scope, query, k=k, kinds=kinds),
            longterm=facts,
            procedures=procedures,
            settings=self._settings.context,
            compaction=self._settings.compaction,
            rules=self._settings.pin_rules,
            summarizer=summarizer,
            authoritative=lambda tenant: store.tenant_policy(tenant).authoritative_tools,
            file_tools=lambda tenant: FileTools.of(store.tenant_policy(tenant)),
        )
        super().__init__(context, facts, procedures, Retention(store))
        self._fact_worker = FactWorker(facts, store, threads=self._settings.longterm.workers)
        self._vectors: VectorWriter | None = None
        if embedder is not None and self._settings.defer_vectors:
            self._vectors = VectorWriter(store, embedder, max_texts=self._settings.vector_batch)
        self._ingest = IngestPipeline(
            store, embedder, self._settings, pins=context,
            after_write=self._fact_worker.wake if self._settings.longterm.extract else None,
            writer=self._vectors,
        )  # fmt: skip

    @classmethod
    def open(
        cls,
        path: str | Path = "kenning.db",
        *,
        embedder: Embedder | _Default | None = DEFAULT,
        settings: Settings | None = None,
        summarizer: Summarizer | None = None,
        resume: bool = True,
    ) -> Memory:
        """Open (or create) a memory: a SQLite file (the embedded default), or a PostgreSQL
        database given as a URL (``postgresql://user:password@host:5432/dbname``).

        A PostgreSQL database is migrated on open when the URL's role owns kenning's tables;
        see :class:`~kenning.store.postgres.store.PostgresStore` and ``docs/scaling.md``.
        The default embedder is the local MiniLM model, loaded on first use. Pass
        ``embedder=None`` for lexical search only, or any :class:`~kenning.embed.Embedder`.
        The default summarizer is the extractive one (no LLM); see
        :class:`kenning.compaction.llm.LLMSummarizer`. Compactions queued before a restart
        resume in the background, and events no process has read for facts yet are read
        (with ``Settings.longterm.extract``); ``resume=False`` leaves that work to a
        long-running process, as a one-shot command that only reads or writes a few rows
        should (``kenning search``, ``kenning pins``, ``kenning export``).
        """
        from kenning.store.open import open_store

        settings = settings or Settings()
        store = open_store(path, ann=settings.ann, reply_weight=settings.index_reply_weight)
        if isinstance(embedder, _Default):
            from kenning.embed.minilm import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        memory = cls(
            store,
            embedder=embedder,
            settings=settings,
            summarizer=summarizer,
        )
        if resume:
            memory._context.resume()
        if resume and settings.longterm.extract:
            memory._fact_worker.resume()  # events written before a restart are read too
        return memory

    @property
    def store(self) -> Store:
        return self._store

    @property
    def documents(self) -> DocumentStore:
        """The store's namespaced JSON documents (:class:`~kenning.store.protocol.DocumentStore`,
        what :class:`kenning.integrations.langgraph.KenningStore` keeps). ``forget`` of a
        tenant or a user erases the documents they own; the retention purge and the sweep
        remove expired ones."""
        return documents_of(self._store)

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    @property
    def extraction(self) -> FactWorker:
        """The background fact-extraction pool (its size, busy threads and counts; ``resume``
        looks for unread events another process left)."""
        return self._fact_worker

    def flush(self, tenant: str | None = None) -> None:
        """Wait until the vectors of the events this memory wrote for *tenant* before the call
        (None: for every tenant) are stored, then embed what the store still lists as pending
        for *tenant* (left by a process that died, by another process, or by a failed model
        call; None: the tenants whose texts failed), looked up on the tenant's first flush,
        after a failure and at most every ``kenning.vectors.RECHECK_S`` seconds. Searches do
        this for their tenant themselves; with ``Settings(defer_vectors=False)`` there is
        nothing to wait for.

        Raises:
            VectorsPending: the embedding model failed on them (again); the events stay
                stored and found by their words, and the next flush tries again.
        """
        if self._vectors is not None:
            if tenant is not None:
                Scope(tenant)  # a valid tenant id, or InvalidScope
            self._vectors.flush(tenant)

    def wait_for_facts(self, timeout: float | None = None) -> bool:
        """Block until background fact extraction is idle; True if it is."""
        return self._fact_worker.wait(timeout)

    # -- writes ----------------------------------------------------------------------------

    def add_events(
        self, scope: Scope, events: Iterable[EventLike], *, quota: Quota | None = None
    ) -> list[Event]:
        """See :meth:`kenning.api.MemoryAPI.add_events`; with *quota*, a batch that would
        take the tenant past it raises :class:`~kenning.errors.QuotaExceeded` and nothing is
        written (the store checks it in the write's transaction)."""
        session_of(scope)
        return self.ingest([(scope, e) for e in events], quota=quota)

    @traced("create_memory", lambda self, items, **_: _batch_attributes(self, items),
            lambda written: {"gen_ai.memory.record.count": len(written)})  # fmt: skip
    def ingest(
        self, items: Sequence[tuple[Scope, EventLike]], *, quota: Quota | None = None
    ) -> list[Event]:
        """Append events of several sessions in one atomic batch (used by bulk import).

        Returns the events written, in order; an event whose ``idempotency_key`` its session
        already holds is skipped and not returned. The pins extracted from the events are
        committed in the same transaction. With *quota*, a batch that would take a tenant
        past it raises :class:`~kenning.errors.QuotaExceeded` and nothing is written. See
        :class:`~kenning.ingest.IngestPipeline`.
        """
        return self._ingest.ingest(items, quota=quota)

    # -- reads -----------------------------------------------------------------------------

    def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        if after_seq is not None and (
            not isinstance(after_seq, int)
            or isinstance(after_seq, bool)
            or not 0 <= after_seq <= _MAX_SEQ
        ):
            raise InvalidInput(f"after_seq must be an integer from 0 to {_MAX_SEQ}")
        return self._store.events(scope.require_session(), after_seq=after_seq)

    @traced("search_memory", lambda self, scope, query, k=10, **_: {
        **_store_attributes(self, scope), "kenning.search.k": k,
        **content("gen_ai.memory.query.text", query)},
        lambda found: {"gen_ai.memory.record.count": len(found.hits),
                       "kenning.degraded": found.degraded})  # fmt: skip
    def search(self, scope: Scope, query: str, *, k: int = 10, min_score: float = 0.0,
               filters: Mapping[str, object] | None = None, kinds: Iterable[str] | None = None,
               since: datetime | str | float | None = None,
               until: datetime | str | float | None = None,
               now: datetime | None = None) -> SearchResults:  # fmt: skip
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty: pass the text to search for")
        if len(query) > self._settings.max_query_chars:
            raise InvalidInput(
                f"query has {len(query)} characters, over the maximum of "
                f"{self._settings.max_query_chars}"
            )
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self._settings.max_k:
            raise InvalidInput(f"k must be an integer between 1 and {self._settings.max_k}")
        if (
            isinstance(min_score, bool)
            or not isinstance(min_score, int | float)
            or not math.isfinite(min_score)
        ):
            raise InvalidInput("min_score must be a finite number")
        parsed = parse_filters(filters, kinds=kinds, since=since, until=until)
        # Relative times ("3 years ago") are read against it: it must stay in the calendar.
        when = check_year(to_utc(now, what="now"), "now")
        pending = self._flush_for_search(scope.tenant)
        results = self._engine.search(
            scope, query, k=k, min_score=min_score, filters=parsed, now=when
        )
        if pending is not None:
            reason = "; ".join(r for r in (results.reason, pending) if r)
            results = replace(results, degraded=True, reason=reason)
        if "fact" in parsed.kinds:
            results = self._facts.weigh(scope, results, min_score=min_score, now=when)
        return self._current.apply(scope, results, filters=parsed, k=k)

    def _flush_for_search(self, tenant: str) -> str | None:
        """Read your writes: the tenant's pending vectors are stored before a search reads.
        If the model failed on them, the search goes on without them (found by their words)
        and says why (its reason)."""
        if self._vectors is None:
            return None
        try:
            self._vectors.flush(tenant)
        except VectorsPending as exc:
            return str(exc)
        return None

    def reindex(
        self,
        tenant: str,
        *,
        batch: int = 512,
        stop: Callable[[], bool] | None = None,
        progress: Callable[[ReindexReport], None] | None = None,
    ) -> ReindexReport:
        """Rebuild the index rows of *tenant*'s events that differ from what ingest writes
        under this memory's settings: events written before sentence units or with other
        embedding settings, and events stored while the embedding model was down. Search
        keeps serving; each batch of *batch* events is committed whole, *stop* is asked
        between batches. Running it again changes nothing. See :mod:`kenning.reindexing`.
        """
        return reindex(
            self._store, self._embedder, self._settings, tenant, batch=batch, stop=stop,
            progress=progress,
        )  # fmt: skip

    # -- erasure and lifecycle -------------------------------------------------------------

    @traced("delete_memory", lambda self, scope, **_: _store_attributes(self, scope),
            lambda erased: {"gen_ai.memory.record.count": erased})  # fmt: skip
    def forget(self, scope: Scope, *, ids: Sequence[str] | None = None,
               before: datetime | str | float | None = None) -> int:  # fmt: skip
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        if ids is not None and (isinstance(ids, str) or not all(isinstance(i, str) for i in ids)):
            raise InvalidInput("ids must be a list of record ids")
        cutoff = None if before is None else to_utc(before, what="before")
        erased = self._store.forget(scope, ids=None if ids is None else list(ids), before=cutoff)
        self._context.forgot()
        return erased

    # -- working context -------------------------------------------------------------------

    @traced("assemble_window", lambda self, scope, *, budget_tokens, model, **_: {
        **_store_attributes(self, scope), "gen_ai.request.model": model,
        "kenning.window.budget": budget_tokens},
        lambda window: window_attributes(window))  # fmt: skip
    def assemble(self, scope: Scope, *, budget_tokens: int, model: str,
                 reserve_output_tokens: int = 0, system: str, goal: str | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None, query: str | None = None,
                 retrieve_from: Scope | None = None) -> ContextWindow:  # fmt: skip
        return self._context.assemble(
            scope, budget_tokens=budget_tokens, model=model,
            reserve_output_tokens=reserve_output_tokens, system=system, goal=goal, tools=tools,
            query=query, retrieve_from=retrieve_from,
        )  # fmt: skip

    def close(self) -> None:
        """Finish background work (compaction, fact extraction, access records) and close
        the store."""
        if self._vectors is not None:
            self._vectors.close()  # what fails stays pending in the store for the next open
        self._fact_worker.close()
        self._context.close()
        self._engine.close()
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _store_attributes(memory: Memory, scope: object) -> dict[str, str]:
    out = {"gen_ai.memory.store.id": memory.store.backend}
    if isinstance(scope, Scope):
        out.update(scope_attributes(scope))
    return out


def _batch_attributes(memory: Memory, items: Sequence[tuple[Scope, EventLike]]) -> dict[str, Any]:
    scopes = {scope for scope, _ in items if isinstance(scope, Scope)}
    first = next(iter(scopes)) if len(scopes) == 1 else None
    return {**_store_attributes(memory, first), "kenning.events.given": len(items)}


def window_attributes(window: ContextWindow) -> dict[str, Any]:
    """A window's figures as span attributes: tokens in all and per tier, pressure, whether
    it is degraded."""
    out: dict[str, Any] = {
        "kenning.window.tokens": window.tokens, "kenning.window.pressure": window.pressure.value,
        "kenning.degraded": window.degraded,
    }  # fmt: skip
    for tier, account in window.tiers.items():
        out[f"kenning.window.tier.{tier.value}.tokens"] = account.tokens
    return out
