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
from datetime import datetime
from pathlib import Path
from typing import Any

from kenning.compaction.summarizer import Summarizer
from kenning.context.service import WorkingContext
from kenning.context.window import ContextWindow
from kenning.embed.base import Embedder
from kenning.errors import InvalidInput
from kenning.ingest import EventLike, IngestPipeline
from kenning.longterm.procedures import Procedures
from kenning.longterm.retention import Retention
from kenning.longterm.service import LongTermMemory
from kenning.longterm.worker import FactWorker
from kenning.records import Event, Scope, to_utc
from kenning.reindexing import ReindexReport, reindex
from kenning.search.engine import SearchEngine
from kenning.search.filters import parse_filters
from kenning.search.hits import SearchResults
from kenning.settings import Settings
from kenning.store.protocol import Store

__all__ = ["Memory"]


class _Default:
    """Marks "use the default embedder" apart from an explicit ``None`` (no embeddings)."""


DEFAULT = _Default()


_MAX_SEQ = 2**63 - 1  # a sequence number is a 64-bit integer in both stores


class Memory:
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
        self._facts = LongTermMemory(store, embedder, self._settings.longterm)
        self._fact_worker = FactWorker(self._facts, store, threads=self._settings.longterm.workers)
        self._retention = Retention(store)
        self._procedures = Procedures(store)
        self._context = WorkingContext(
            store,
            search=lambda scope, query, k, kinds: self.search(scope, query, k=k, kinds=kinds),
            longterm=self._facts,
            procedures=self._procedures,
            settings=self._settings.context,
            compaction=self._settings.compaction,
            rules=self._settings.pin_rules,
            summarizer=summarizer,
        )
        self._ingest = IngestPipeline(
            store, embedder, self._settings, pins=self._context,
            after_write=self._fact_worker.wake if self._settings.longterm.extract else None,
        )  # fmt: skip

    @classmethod
    def open(
        cls,
        path: str | Path = "kenning.db",
        *,
        embedder: Embedder | _Default | None = DEFAULT,
        settings: Settings | None = None,
        summarizer: Summarizer | None = None,
    ) -> Memory:
        """Open (or create) a memory: a SQLite file (the embedded default), or a PostgreSQL
        database given as a URL (``postgresql://user:password@host:5432/dbname``).

        A PostgreSQL database is migrated on open when the URL's role owns kenning's tables;
        see :class:`~kenning.store.postgres.store.PostgresStore` and ``docs/scaling.md``.
        The default embedder is the local MiniLM model, loaded on first use. Pass
        ``embedder=None`` for lexical search only, or any :class:`~kenning.embed.Embedder`.
        The default summarizer is the extractive one (no LLM); see
        :class:`kenning.compaction.llm.LLMSummarizer`. Compactions queued before a restart
        resume in the background.
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
        memory._context.resume()
        if settings.longterm.extract:
            memory._fact_worker.resume()  # events written before a restart are read too
        return memory

    @property
    def store(self) -> Store:
        return self._store

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    @property
    def facts(self) -> LongTermMemory:
        """Long-term facts of users: reads as of a time, history, remember, revoke, prune (see
        :class:`~kenning.longterm.service.LongTermMemory`). Extraction from new events runs
        in the background (``Settings.longterm.extract``)."""
        return self._facts

    @property
    def procedures(self) -> Procedures:
        """Versioned playbooks bound to their tool schemas (drift is reported)."""
        return self._procedures

    @property
    def retention(self) -> Retention:
        """Tenant policies (consent defaults, retention), legal holds, and the purge."""
        return self._retention

    @property
    def extraction(self) -> FactWorker:
        """The background fact-extraction pool (its size, busy threads and counts; ``resume``
        looks for unread events another process left)."""
        return self._fact_worker

    def wait_for_facts(self, timeout: float | None = None) -> bool:
        """Block until background fact extraction is idle; True if it is."""
        return self._fact_worker.wait(timeout)

    @property
    def context(self) -> WorkingContext:
        """Pins, task state, summaries and compaction of sessions (see
        :class:`~kenning.context.service.WorkingContext`)."""
        return self._context

    # -- writes ----------------------------------------------------------------------------

    def add_events(self, scope: Scope, events: Iterable[EventLike]) -> list[Event]:
        """Append events to the session of *scope*, atomically, and index them for search.

        Returns the events written; an event whose ``idempotency_key`` the session already
        holds is skipped (not returned), so a retry adds nothing twice. Pins extracted from
        the events are committed with them.

        Raises :class:`~kenning.errors.InvalidInput` (nothing is written) if any event is
        invalid. If the embedding model is unavailable the events are still recorded and the
        search over them is lexical until :meth:`reindex` embeds them.
        """
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        scope.require_session()
        return self.ingest([(scope, e) for e in events])

    def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        """Append events of several sessions in one atomic batch (used by bulk import).

        Returns the events written, in order; an event whose ``idempotency_key`` its session
        already holds is skipped and not returned. The pins extracted from the events are
        committed in the same transaction. See :class:`~kenning.ingest.IngestPipeline`.
        """
        return self._ingest.ingest(items)

    # -- reads -----------------------------------------------------------------------------

    def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        """The events of the session of *scope*, in sequence order (only those after
        *after_seq*, a sequence number from 0 to 2**63 - 1, when given).

        Raises :class:`~kenning.errors.InvalidInput` for an *after_seq* out of that range.
        """
        if after_seq is not None and (
            not isinstance(after_seq, int)
            or isinstance(after_seq, bool)
            or not 0 <= after_seq <= _MAX_SEQ
        ):
            raise InvalidInput(f"after_seq must be an integer from 0 to {_MAX_SEQ}")
        return self._store.events(scope.require_session(), after_seq=after_seq)

    def search(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 10,
        min_score: float = 0.0,
        filters: Mapping[str, object] | None = None,
        kinds: Iterable[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        now: datetime | None = None,
    ) -> SearchResults:
        """Hybrid search (BM25 + vector cosine, fused, lifted by session and conversational
        partner, with an access bonus; see :class:`~kenning.search.fusion.FusionConfig`).

        Only records inside *scope* are ever scored: a tenant-only scope searches the tenant,
        a user scope that user's sessions, a session scope that session. Facts among the hits
        are weighed by how recently they were mentioned or used (``memory.facts.weigh``).

        Raises :class:`~kenning.errors.InvalidInput` for an empty or oversized query, a bad
        ``k`` or ``min_score``, and :class:`~kenning.errors.InvalidFilter` for bad filters.
        """
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
        when = to_utc(now, what="now")
        results = self._engine.search(
            scope, query, k=k, min_score=min_score, filters=parsed, now=when
        )
        if "fact" in parsed.kinds:
            results = self._facts.weigh(scope, results, min_score=min_score, now=when)
        return results

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

    def forget(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        before: datetime | str | float | None = None,
    ) -> int:
        """Erase records in *scope* from every index (text, FTS, vectors, caches), and what
        derives from them: pins they were the source of, summaries covering them, token totals;
        erasing a whole session, user or tenant also erases its pins, summaries, task state,
        compaction jobs and audit log.

        With no options everything in *scope* is erased: a tenant, a user's data, or one
        session. Returns the number of records erased.
        """
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        if ids is not None and (isinstance(ids, str) or not all(isinstance(i, str) for i in ids)):
            raise InvalidInput("ids must be a list of record ids")
        cutoff = None if before is None else to_utc(before, what="before")
        erased = self._store.forget(scope, ids=None if ids is None else list(ids), before=cutoff)
        self._context.forgot()
        return erased

    # -- working context -------------------------------------------------------------------

    def assemble(
        self,
        scope: Scope,
        *,
        budget_tokens: int,
        model: str,
        reserve_output_tokens: int = 0,
        system: str,
        goal: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        query: str | None = None,
        retrieve_from: Scope | None = None,
    ) -> ContextWindow:
        """Build the window for the next model call of the session of *scope*.

        Tiers fill in order — system policy, goal and task state, tool schemas (most relevant
        to the query first when not all fit), pins, the recent tail (whole messages; the latest
        user input always), summaries, retrieved memories (cited) — and a piece that does not
        fit is skipped without taking room from an earlier tier. Counts are exact for
        *model*'s tokenizer, chat framing included, and the window never exceeds
        ``budget_tokens - reserve_output_tokens``.

        Retrieved memories come from the session itself (older turns than the tail) unless
        *retrieve_from* names a wider scope of the same tenant, e.g. ``Scope(tenant, user)``
        for the user's other sessions: episodes stay session-scoped unless the caller asks.

        Reads pressure from the session's running token totals: at the warn threshold it logs,
        at compact it queues a background compaction, at hard it compacts before returning.

        Raises:
            InvalidInput: a bad budget, model, system policy, tool schema or query.
            InvalidScope: *retrieve_from* is not a scope of the window's tenant.
            ScopeConflict: the session belongs to another user of the tenant.
            BudgetError: the system policy and the latest user input alone exceed the budget.

        Example:
            >>> window = memory.assemble(scope, budget_tokens=2_000, model="gpt-4o",
            ...                          system="You are a support agent.")  # doctest: +SKIP
        """
        return self._context.assemble(
            scope, budget_tokens=budget_tokens, model=model,
            reserve_output_tokens=reserve_output_tokens, system=system, goal=goal, tools=tools,
            query=query, retrieve_from=retrieve_from,
        )  # fmt: skip

    def close(self) -> None:
        """Finish background work (compaction, fact extraction, access records) and close
        the store."""
        self._fact_worker.close()
        self._context.close()
        self._engine.close()
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
