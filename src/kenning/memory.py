"""The Python facade: ``Memory.open(path)`` and the operations an agent calls.

``Memory`` validates input where it enters, then drives a :class:`~kenning.store.Store`, an
:class:`~kenning.embed.Embedder` and the pure search core. It holds no state of its own beyond
those and a worker thread that runs the lexical query while the query is embedded.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.compaction.records import AuditEntry
from kenning.compaction.summarizer import Summarizer
from kenning.context.service import WorkingContext
from kenning.context.task import TaskState, TaskUpdate
from kenning.context.window import ContextWindow
from kenning.embed.base import Embedder
from kenning.errors import InvalidInput, ModelUnavailable
from kenning.indexing import embedding_text, with_context
from kenning.records import (
    Event,
    JSONScalar,
    NewEvent,
    Pin,
    PinKind,
    PinStatus,
    Scope,
    Summary,
    content_hash,
    to_utc,
)
from kenning.search.filters import Filters, parse_filters
from kenning.search.fusion import (
    Fused,
    FusionConfig,
    ItemStats,
    add_bonuses,
    fuse,
    max_bonus,
    session_scores,
)
from kenning.search.hits import Hit, SearchResults
from kenning.search.plan import plan_query
from kenning.search.timeref import TimeWindow
from kenning.settings import Settings
from kenning.store.protocol import Candidate, EventWrite, ModelInfo, Store

__all__ = ["Memory"]

log = logging.getLogger("kenning")

EventLike = NewEvent | Mapping[str, Any]
_QUERY_CACHE = 256


class _Default:
    """Marks "use the default embedder" apart from an explicit ``None`` (no embeddings)."""


DEFAULT = _Default()


def _as_new_event(value: EventLike) -> NewEvent:
    if isinstance(value, NewEvent):
        return value
    if isinstance(value, Mapping):
        return NewEvent.from_mapping(value)
    raise InvalidInput(f"an event must be a NewEvent or a mapping, not {type(value).__name__}")


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
        self._pool: ThreadPoolExecutor | None = None
        self._query_vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._query_lock = threading.Lock()
        self._context = WorkingContext(
            store,
            search=lambda scope, query, k: self.search(scope, query, k=k),
            settings=self._settings.context,
            compaction=self._settings.compaction,
            rules=self._settings.pin_rules,
            summarizer=summarizer,
        )

    @classmethod
    def open(
        cls,
        path: str | Path = "kenning.db",
        *,
        embedder: Embedder | _Default | None = DEFAULT,
        settings: Settings | None = None,
        summarizer: Summarizer | None = None,
    ) -> Memory:
        """Open (or create) an embedded memory in one SQLite file.

        The default embedder is the local MiniLM model, loaded on first use. Pass
        ``embedder=None`` for lexical search only, or any :class:`~kenning.embed.Embedder`.
        The default summarizer is the extractive one (no LLM); see
        :class:`kenning.compaction.llm.LLMSummarizer`. Compactions queued before a restart
        resume in the background.
        """
        from kenning.store.sqlite.store import SQLiteStore

        if isinstance(embedder, _Default):
            from kenning.embed.minilm import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        settings = settings or Settings()
        memory = cls(
            SQLiteStore(path, ann=settings.ann),
            embedder=embedder,
            settings=settings,
            summarizer=summarizer,
        )
        memory._context.resume()
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

    def _model(self) -> ModelInfo | None:
        if self._embedder is None:
            return None
        return ModelInfo(model_id=self._embedder.model_id, dimension=self._embedder.dimension)

    # -- writes ----------------------------------------------------------------------------

    def add_events(self, scope: Scope, events: Iterable[EventLike]) -> list[Event]:
        """Append events to the session of *scope*, atomically, and index them for search.

        Raises :class:`~kenning.errors.InvalidInput` (nothing is written) if any event is
        invalid. If the embedding model is unavailable the events are still recorded and the
        search over them is lexical until they are embedded.
        """
        if not isinstance(scope, Scope):
            raise InvalidInput("scope must be a kenning.Scope")
        scope.require_session()
        return self.ingest([(scope, e) for e in events])

    def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        """Append events of several sessions in one atomic batch (used by bulk import)."""
        limit = self._settings.max_content_chars
        mode = self._settings.embed_text
        events: list[tuple[Scope, NewEvent]] = []
        for scope, raw in items:
            if not isinstance(scope, Scope):
                raise InvalidInput("scope must be a kenning.Scope")
            scope.require_session()
            events.append((scope, _as_new_event(raw).validated(max_chars=limit)))
        writes: list[EventWrite] = []
        texts: list[str] = []
        previous: dict[tuple[str, str | None], str | None] = {}
        for scope, event in events:
            own = embedding_text(event, mode)
            text = own
            if self._settings.embed_context:
                key = (scope.tenant, scope.session)
                if key not in previous:
                    tail = self._store.events(scope, tail=1)
                    previous[key] = embedding_text(tail[0], mode) if tail else None
                text = with_context(own, previous[key])
                previous[key] = own
            texts.append(text)
            writes.append(EventWrite(scope=scope, event=event, embed_hash=content_hash(text)))
        if not writes:
            return []
        model = self._model()
        vectors = self._vectors_for(writes, texts, model) if model is not None else None
        added = self._store.append_events(
            writes, model=model if vectors is not None else None, vectors=vectors
        )
        self._context.pins_from_events(added)
        return added

    def _vectors_for(
        self, writes: Sequence[EventWrite], texts: Sequence[str], model: ModelInfo
    ) -> dict[tuple[str, str], npt.NDArray[np.float32]] | None:
        """Embed each text this store lacks a vector for, once per (tenant, text)."""
        assert self._embedder is not None
        by_tenant: dict[str, dict[str, str]] = {}
        for write, text in zip(writes, texts, strict=True):
            assert write.embed_hash is not None
            by_tenant.setdefault(write.scope.tenant, {})[write.embed_hash] = text
        todo: list[tuple[str, str]] = []
        for tenant, hashes in by_tenant.items():
            for digest in self._store.missing_vectors(tenant, model, list(hashes)):
                todo.append((tenant, digest))
        if not todo:
            return {}
        unique = list(dict.fromkeys(by_tenant[t][h] for t, h in todo))
        try:
            matrix = self._embedder.embed(unique)
        except ModelUnavailable as exc:
            log.warning("embedding model unavailable, events stored without vectors: %s", exc)
            return None
        row = {text: i for i, text in enumerate(unique)}
        return {(t, h): matrix[row[by_tenant[t][h]]] for t, h in todo}

    # -- reads -----------------------------------------------------------------------------

    def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        """The events of the session of *scope*, in sequence order."""
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
        """Hybrid search (BM25 + vector cosine, fused, with recency and access bonuses).

        Only records inside *scope* are ever scored: a tenant-only scope searches the tenant,
        a user scope that user's sessions, a session scope that session.

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
        config = self._settings.fusion
        plan = plan_query(query, when)
        windows = plan.windows if config.time_weight > 0 else ()
        if plan.multi_target:
            config = replace(config, session_weight=config.multi_target_session_weight)
        degraded, reason = False, None
        qvec = None
        if self._model() is not None and config.vector_weight > 0:
            try:
                qvec = self._query_vector(query)
            except ModelUnavailable as exc:
                degraded, reason = True, f"vector search unavailable: {exc}"
        fused = self._fused(scope, query, qvec, parsed, windows, config, max(config.candidates, k))
        hits = self._rank(
            scope, fused, k=k, min_score=min_score, now=when, config=config,
            windows=windows,
        )  # fmt: skip
        if hits and self._settings.track_access:
            # Access stats are soft data: recorded off the caller's path.
            self._worker().submit(self._store.touch, scope, [h.id for h in hits], at=when)
        return SearchResults(hits=tuple(hits), degraded=degraded, reason=reason, plan=plan)

    def _query_vector(self, query: str) -> npt.NDArray[np.float32]:
        """The query's embedding; an agent assembling several windows per turn asks the same
        question again, so recent query vectors are kept (the model is the slow part)."""
        assert self._embedder is not None
        with self._query_lock:
            found = self._query_vectors.get(query)
            if found is not None:
                self._query_vectors.move_to_end(query)
                return found
        vector: npt.NDArray[np.float32] = self._embedder.embed([query])[0]
        with self._query_lock:
            self._query_vectors[query] = vector
            if len(self._query_vectors) > _QUERY_CACHE:
                self._query_vectors.popitem(last=False)
        return vector

    def _fused(
        self,
        scope: Scope,
        text: str,
        qvec: npt.NDArray[np.float32] | None,
        filters: Filters,
        windows: Sequence[TimeWindow],
        config: FusionConfig,
        limit: int,
    ) -> list[Fused]:
        """Candidates of one query text, fused (best first), before bonuses."""
        lexical, vector = self._candidates(scope, text, qvec, filters, limit)
        for window in windows:
            # Records of the named time may match too weakly to be among the best of the
            # whole scope; the best of the window itself are candidates too.
            inside = _within(filters, window)
            if inside is not None:
                more_lexical, more_vector = self._candidates(scope, text, qvec, inside, limit)
                lexical = _union(lexical, more_lexical)
                vector = _union(vector, more_vector)
        sessions = {}
        if config.session_weight > 0 and scope.session is None:
            wanted = list(dict.fromkeys(c.session for c in [*lexical, *vector]))
            model = self._model() if qvec is not None else None
            sessions = session_scores(
                self._store.sessions(scope, text, qvec, model=model, sessions=wanted), config
            )
        return fuse(lexical, vector, config=config, sessions=sessions)

    def _rank(
        self,
        scope: Scope,
        base: Sequence[Fused],
        *,
        k: int,
        min_score: float,
        now: datetime,
        config: FusionConfig,
        windows: Sequence[TimeWindow] = (),
    ) -> list[Hit]:
        """Add bonuses to fused candidates, cut at *min_score* and *k*, load the winners.

        A bonus adds at most ``max_bonus``, so a candidate more than that below the k-th base
        score cannot enter the top k: only the others ("contenders") are loaded, once, and
        serve both the bonuses and the hits.
        """
        if not base:
            return []
        floor = base[min(k, len(base)) - 1].score - max_bonus(config, windows)
        contenders = [f.id for f in base if f.score >= floor]
        items = {item.id: item for item in self._store.items(scope, contenders)}
        stats = {key: ItemStats(at=i.at, access_count=i.access_count) for key, i in items.items()}
        fused = add_bonuses(base, config=config, stats=stats, now=now, windows=windows, limit=k)
        out = []
        for f in fused:
            item = items.get(f.id)
            if item is None or f.score < min_score:  # erased since scoring, or too weak
                continue
            out.append(
                Hit(
                    id=item.id, kind=item.kind, score=f.score, scores=dict(f.scores),
                    content=item.text, role=item.role, scope=item.scope, seq=item.seq,
                    at=item.at, metadata=item.metadata, tags=item.tags,
                )
            )  # fmt: skip
        return out

    def _candidates(
        self,
        scope: Scope,
        query: str,
        qvec: npt.NDArray[np.float32] | None,
        filters: Filters,
        limit: int,
    ) -> tuple[list[Candidate], list[Candidate]]:
        """The best *limit* records of each signal: BM25 (on the worker) and cosine."""
        config = self._settings.fusion
        lexical_future = None
        if config.lexical_weight > 0:
            lexical_future = self._worker().submit(
                self._store.lexical, scope, query, filters=filters, limit=limit
            )
        vector: list[Candidate] = []
        model = self._model()
        if qvec is not None and model is not None and config.vector_weight > 0:
            vector = list(
                self._store.nearest(scope, qvec, model=model, filters=filters, limit=limit)
            )
        lexical = list(lexical_future.result()) if lexical_future is not None else []
        return lexical, vector

    def _worker(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-lexical")
        return self._pool

    def count_tokens(self, scope: Scope, *, model: str) -> dict[str, int]:
        """Exact token counts of the session's events for *model*'s tokenizer, by event id.

        Counts are cached per record and encoding, so a long session is counted once; an
        approximate tokenizer (model families without a public one) is cached under its own
        labelled name. Per-message chat overhead is not included (see
        :func:`kenning.tokens.count_messages`).
        """
        from kenning.tokens.routing import tokenizer_for

        tokenizer = tokenizer_for(model)
        events = self.get_session(scope)
        ids = [e.id for e in events]
        counts = self._store.token_counts(scope, ids, tokenizer.name)
        missing = [e for e in events if e.id not in counts]
        if missing:
            fresh = dict(
                zip(
                    (e.id for e in missing),
                    tokenizer.count_many([e.content for e in missing]),
                    strict=True,
                )
            )
            self._store.put_token_counts(scope, tokenizer.name, fresh)
            counts.update(fresh)
        return {i: counts[i] for i in ids}

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
    ) -> ContextWindow:
        """Build the window for the next model call of the session of *scope*.

        Tiers fill in order — system policy, goal and task state, tool schemas (most relevant
        to the query first when not all fit), pins, the recent tail (whole messages; the latest
        user input always), summaries, retrieved memories (cited) — and a piece that does not
        fit is skipped without taking room from an earlier tier. Counts are exact for
        *model*'s tokenizer, chat framing included, and the window never exceeds
        ``budget_tokens - reserve_output_tokens``.

        Reads pressure from the session's running token totals: at the warn threshold it logs,
        at compact it queues a background compaction, at hard it compacts before returning.

        Raises:
            InvalidInput: a bad budget, model, system policy, tool schema or query.
            BudgetError: the system policy and the latest user input alone exceed the budget.

        Example:
            >>> window = memory.assemble(scope, budget_tokens=2_000, model="gpt-4o",
            ...                          system="You are a support agent.")  # doctest: +SKIP
        """
        return self._context.assemble(
            scope, budget_tokens=budget_tokens, model=model,
            reserve_output_tokens=reserve_output_tokens, system=system, goal=goal, tools=tools,
            query=query,
        )  # fmt: skip

    def set_pin(
        self,
        scope: Scope,
        kind: PinKind | str,
        value: str,
        *,
        key: str | None = None,
        amount: Decimal | str | None = None,
        currency: str | None = None,
        status: PinStatus | str = PinStatus.OPEN,
        source_event_id: str | None = None,
        metadata: Mapping[str, JSONScalar] | None = None,
    ) -> Pin:
        """Pin a typed value in the session (authorizations, approvals, goals...).

        *key* names the pin (default ``"{kind}:{value}"``); setting an existing key to another
        value or status writes a new version and keeps the old one in history. Amounts are
        Decimals with an ISO-4217 *currency*.
        """
        return self._context.set_pin(
            scope, kind, value, key=key, amount=amount, currency=currency, status=status,
            source_event_id=source_event_id, metadata=metadata,
        )  # fmt: skip

    def close_pin(self, scope: Scope, key: str) -> Pin:
        """Close a pin (e.g. a fulfilled obligation); raises NotFound for an unknown key."""
        return self._context.close_pin(scope, key)

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        """Current pins in *scope* (a session, a user or a tenant); every version with
        *history*."""
        return self._context.pins(scope, history=history)

    def update_task(self, scope: Scope, update: TaskUpdate) -> TaskState:
        """Merge *update* into the session's task state (rules in kenning.context.task)."""
        return self._context.update_task(scope, update)

    def task_state(self, scope: Scope) -> TaskState:
        return self._context.task_state(scope)

    def compact(
        self, scope: Scope, *, budget_tokens: int, model: str, summarizer: Summarizer | None = None
    ) -> list[Summary]:
        """Compact the session now (what the policy says is due); return new summaries."""
        return self._context.compact(
            scope, budget_tokens=budget_tokens, model=model, summarizer=summarizer
        )

    def summaries(self, scope: Scope) -> list[Summary]:
        """The session's active summaries, oldest range first."""
        return self._context.summaries(scope)

    def compaction_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        """The session's compaction audit log, oldest first."""
        return self._context.compaction_log(scope, limit=limit)

    def wait_for_compaction(self, timeout: float | None = None) -> bool:
        """Block until background compaction is idle; True if it is."""
        return self._context.wait_for_compaction(timeout)

    @property
    def pressure_events(self) -> Mapping[str, int]:
        """How often each pressure level was met since open (warn, compact, hard)."""
        return dict(self._context.metrics)

    def close(self) -> None:
        self._context.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _within(filters: Filters, window: TimeWindow) -> Filters | None:
    """*filters* narrowed to *window* (None when they do not overlap)."""
    since = window.start if filters.since is None else max(filters.since, window.start)
    until = window.end if filters.until is None else min(filters.until, window.end)
    if since > until:
        return None
    return replace(filters, since=since, until=until)


def _union(first: Sequence[Candidate], second: Sequence[Candidate]) -> list[Candidate]:
    """Candidates of both lists, each once (a record's score is the same in both)."""
    seen = {c.id for c in first}
    return [*first, *(c for c in second if c.id not in seen)]
