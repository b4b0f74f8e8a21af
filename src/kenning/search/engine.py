"""The search pipeline: read the query, gather candidates, fuse, add bonuses, load the winners.

:class:`SearchEngine` is the I/O shell around the pure core (a query reader,
:mod:`kenning.search.reader`, and :mod:`kenning.search.fusion`): it asks the store for
candidates of both signals, for any time the query names as well, and for whole-session
scores, then loads only the records that can still reach the top k. Input is validated by
:class:`~kenning.memory.Memory` before it gets here.

When the query still has to be embedded, the lexical candidates are searched on a worker
thread meanwhile (the model releases the GIL for most of its work); a query whose vector is
cached runs every step on the caller's thread. What the worker buys depends on free cores:
``kenning bench store`` times it against every step inline, and on a busy 2-core machine it
bought about 1% (p50 ratio 0.99), the embedding being CPU-bound itself.
After the embedding, the search's store calls share one read snapshot
(:meth:`~kenning.store.protocol.SearchIndex.reading`): candidates, session scores and records
come from one committed state (but for lexical candidates already read on the worker). Which
results were returned is recorded afterwards by a background
:class:`~kenning.search.access.AccessRecorder`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from itertools import chain
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from kenning.embed.base import Embedder
from kenning.errors import InvalidInput, ModelUnavailable
from kenning.records import Filters, Scope
from kenning.search.access import AccessRecorder
from kenning.search.fusion import (
    Fused,
    FusionConfig,
    ItemStats,
    add_bonuses,
    best_first,
    contenders,
    fuse_scores,
    partner_lift,
    session_scores,
)
from kenning.search.hits import Hit, SearchResults
from kenning.search.loaded import admits_item, hit_of
from kenning.search.reader import QueryReader, RuleReader
from kenning.search.rerank import Reranker, RerankModel, RerankRecord, features
from kenning.search.timeref import TimeWindow
from kenning.store.protocol import EventLog, SearchIndex
from kenning.store.records import Candidate, Item, ModelInfo, Position

__all__ = ["SearchEngine"]

_QUERY_CACHE = 256
_session = attrgetter("session")
_PARTNER_DEPTH = 30
"""The partner lift applies among the best max(3 * k, this) candidates."""


@dataclass(frozen=True, slots=True)
class _Ask:
    """What one search asks of each signal: at most *limit* candidates of *scope* that pass
    *filters*, and of each of *also* (the times the query names)."""

    scope: Scope
    query: str
    filters: Filters
    also: Sequence[Filters]
    limit: int


class SearchEngine:
    """Hybrid search over one store's search index and records.

    *overlap* runs the lexical search on a worker thread while the query is embedded (off:
    every step on the caller's thread, for measuring what the worker buys). *track_access*
    records which results were returned. *rerank_model* is the re-ranker used when
    ``FusionConfig.rerank`` is on (None: the one shipped with kenning, read on first use).
    """

    def __init__(
        self,
        index: SearchIndex,
        records: EventLog,
        embedder: Embedder | None,
        *,
        fusion: FusionConfig,
        reader: QueryReader | None = None,
        rerank_model: Reranker | None = None,
        track_access: bool = True,
        overlap: bool = True,
    ) -> None:
        self._index = index
        self._records = records
        self._embedder = embedder
        self._fusion = fusion
        self._reader = reader or RuleReader()
        self._rerank_model = rerank_model
        self._overlap = overlap
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._access = AccessRecorder(index) if track_access else None
        self._query_vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._query_lock = threading.Lock()

    @property
    def fusion(self) -> FusionConfig:
        return self._fusion

    def flush_access(self) -> None:
        """Write the access records still queued (tests, shutdown)."""
        if self._access is not None:
            self._access.flush()

    def close(self) -> None:
        """Write queued access records and stop the worker threads."""
        if self._access is not None:
            self._access.close()
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _worker(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kenning-lexical")
            return self._pool

    def model(self) -> ModelInfo | None:
        """The embedder's model id and dimension (None without an embedder)."""
        if self._embedder is None:
            return None
        return ModelInfo(model_id=self._embedder.model_id, dimension=self._embedder.dimension)

    def search(self, scope: Scope, query: str, *, k: int, min_score: float, filters: Filters,
               now: datetime) -> SearchResults:  # fmt: skip
        """The top *k* records of *scope* for *query*, best first (see ``Memory.search``)."""
        config = self._fusion
        plan = self._reader.read(query, now)
        windows = plan.windows if config.time_weight > 0 else ()
        if plan.multi_target:
            config = replace(config, session_weight=config.multi_target_session_weight)
        limit = max(config.candidates, k)
        # In a search for events, facts are keys to the turns they were read from.
        as_keys = config.fact_key_weight > 0 and "event" in filters.kinds
        as_keys = as_keys and "fact" not in filters.kinds
        asked = filters
        if as_keys:
            filters = replace(filters, kinds=(*filters.kinds, "fact"))
        # Records of a named time may match too weakly to be among the best of the whole
        # scope; the best of the window itself are candidates too.
        narrowed = (_within(filters, window) for window in windows)
        also = [f for f in narrowed if f is not None]
        ask = _Ask(scope, query, filters, also, limit)
        found, qvec, reason = self._embed(ask, config)
        # Everything after the embedding reads one snapshot (the worker's lexical search, if
        # any, read its own).
        with self._index.reading(scope):
            lexical = found
            if lexical is None:
                lexical = self._lexical(ask)
            vector = self._nearest(ask, qvec)
            signals = self._fuse(scope, query, qvec, asked, lexical, vector, config)
            records = _Records(self._records, scope)
            if as_keys:
                facts = {c.id for c in chain(lexical, vector) if c.kind == "fact"}
                weight = config.fact_key_weight
                fused = self._facts_as_keys(records, signals, facts, asked, weight, ahead=k)
                signals = replace(signals, fused=fused)
            hits = self._rank(
                records, signals, query=query, k=k, min_score=min_score, now=now,
                config=config, windows=windows,
            )  # fmt: skip
        if hits and self._access is not None:
            self._access.record(scope, [h.id for h in hits], at=now)
        degraded = reason is not None
        return SearchResults(hits=tuple(hits), degraded=degraded, reason=reason, plan=plan)

    def _embed(
        self, ask: _Ask, config: FusionConfig
    ) -> tuple[list[Candidate] | None, npt.NDArray[np.float32] | None, str | None]:
        """The query's vector (None when the vector signal is off, or with the reason the model
        was unavailable) and, when they were searched on the worker meanwhile, the lexical
        candidates (else None)."""
        wants_vector = self.model() is not None and config.vector_weight > 0
        # Lexical searches start first and run on a worker while the query is embedded; with
        # its vector known there is nothing to wait for, and handing work to a thread would
        # only add its cost.
        qvec = self._cached_vector(ask.query) if wants_vector else None
        behind = wants_vector and self._overlap and qvec is None
        early = None
        if behind and config.lexical_weight > 0:
            early = self._worker().submit(self._lexical, ask)
        reason = None
        if wants_vector and qvec is None:
            try:
                qvec = self._query_vector(ask.query)
            except ModelUnavailable as exc:
                reason = f"vector search unavailable: {exc}"
        # The worker's lexical candidates are taken before the search's snapshot is opened: a
        # store that serialises reads (SQLite in memory) would otherwise make each wait for
        # the other.
        found = early.result() if early is not None else None
        return found, qvec, reason

    def _cached_vector(self, query: str) -> npt.NDArray[np.float32] | None:
        """The query's embedding if it was made recently: an agent assembling several windows
        per turn asks the same question again (the model is the slow part)."""
        with self._query_lock:
            found = self._query_vectors.get(query)
            if found is not None:
                self._query_vectors.move_to_end(query)
            return found

    def _query_vector(self, query: str) -> npt.NDArray[np.float32]:
        """Embed the query and keep its vector for :meth:`_cached_vector`."""
        assert self._embedder is not None
        vector: npt.NDArray[np.float32] = self._embedder.embed([query])[0]
        with self._query_lock:
            self._query_vectors[query] = vector
            if len(self._query_vectors) > _QUERY_CACHE:
                self._query_vectors.popitem(last=False)
        return vector

    def _fuse(
        self,
        scope: Scope,
        query: str,
        qvec: npt.NDArray[np.float32] | None,
        filters: Filters,
        lexical: Sequence[Candidate],
        vector: Sequence[Candidate],
        config: FusionConfig,
    ) -> _Signals:
        """The candidates fused (best first, not yet explained), with their sessions' scores,
        before bonuses; and what was fused."""
        sessions = {}
        if config.session_weight > 0 and scope.session is None:
            wanted = list(dict.fromkeys(map(_session, chain(lexical, vector))))
            model = self.model() if qvec is not None else None
            sessions = session_scores(
                self._index.sessions(
                    scope, query, qvec, model=model, sessions=wanted, filters=filters
                ),
                config,
            )
        fusion = fuse_scores(lexical, vector, config=config, sessions=sessions)
        return _Signals(
            fused=fusion.ranked, explain=fusion.explain, position=fusion.position,
            lexical=list(lexical), vector=list(vector), sessions=sessions,
        )  # fmt: skip

    def _facts_as_keys(
        self,
        records: _Records,
        signals: _Signals,
        facts: set[str],
        filters: Filters,
        weight: float,
        ahead: int,
    ) -> list[Fused]:
        """Replace each fact candidate by the turn it was read from: the turn scores at least
        *weight* times the fact's score (if the caller's filters admit the turn).

        The best *ahead* other candidates are read with the facts: the hits come from among
        them, and a fact's source turn is often one of them too, so one read serves all three.
        """
        fused = signals.fused
        found = [f for f in fused if f.id in facts]
        if not found:
            return list(fused)
        head = [f.id for f in fused[: ahead + len(found)]]
        loaded = records.load([*(f.id for f in found), *head])
        sources = {
            f.id: loaded[f.id].metadata.get("source_event_id") for f in found if f.id in loaded
        }
        lift: dict[str, float] = {}
        for f in found:
            source = sources.get(f.id)
            if isinstance(source, str):
                lift[source] = max(lift.get(source, 0.0), weight * f.score)
        events = records.load(list(lift))
        out = {f.id: f for f in fused if f.id not in facts}
        for item in events.values():
            admitted = admits_item(filters, item)
            score = lift[item.id]
            held = out.get(item.id)
            if not admitted or (held is not None and held.score >= score):
                continue
            was = signals.explain(held).scores if held is not None else {}
            scores = {**was, "fact": score, "score": score}
            out[item.id] = Fused(id=item.id, score=score, scores=scores)
        ranked = list(out.values())
        best_first(ranked)
        return ranked

    def _rank(
        self,
        records: _Records,
        signals: _Signals,
        *,
        query: str,
        k: int,
        min_score: float,
        now: datetime,
        config: FusionConfig,
        windows: Sequence[TimeWindow] = (),
    ) -> list[Hit]:
        """Lift partners, add bonuses to fused candidates, cut at *min_score* and *k*, load
        the winners.

        Bonuses are bounded, so only the candidates that can still enter the top k
        (:func:`~kenning.search.fusion.contenders`; the time bonus counts only for records
        whose time may lie in a named window) are loaded, once, and serve both the bonuses
        and the hits. The partner lift moves the best ``max(3 * k, 30)`` candidates (counting
        the time bonus they will surely get) before any is loaded: a weak answer can rise next
        to the question it answers, and the index gives each turn's place in its
        conversation with the candidate (a fact's source turn that is no candidate itself has
        no place there and is not lifted). It lifts by relevance (fused scores); bonuses come
        after, so a record's popularity does not pass to its partner. With the re-ranker on,
        the best of the re-ranker's depth are loaded too (its features read the records).
        """
        if not signals.fused:
            return []
        # Times matter only to place records inside or outside a time the query names.
        times = None
        if windows:
            times = {c.id: c.at for c in (*signals.lexical, *signals.vector) if c.at is not None}
        model = self._reranker() if config.rerank else None
        base, positions = self._lifted(signals, k=k, config=config, windows=windows, times=times)
        read = model.depth if model is not None else 0  # the re-ranker's features read records
        wanted = contenders(base, k=k, config=config, windows=windows, times=times, depth=read)
        items = records.load(wanted)
        # Only loaded records can reach the top k: the others score below the floor and get
        # no bonus. Dropping them here spares the next steps a full sort.
        base = [signals.explain(f) for f in base if f.id in items]
        stats = {key: ItemStats(at=i.at, access_count=i.access_count) for key, i in items.items()}
        fused = add_bonuses(base, config=config, stats=stats, now=now, windows=windows)
        if model is not None:
            fused = _reranked(
                model, fused, signals, items, positions, query=query, method=config.method,
                windows=windows,
            )  # fmt: skip
        return _hits(fused[:k], items, min_score)

    def _lifted(
        self,
        signals: _Signals,
        *,
        k: int,
        config: FusionConfig,
        windows: Sequence[TimeWindow],
        times: Mapping[str, float] | None,
    ) -> tuple[list[Fused], dict[str, Position]]:
        """The fused candidates, partners lifted among those a lift or the re-ranker may move
        (no other can reach the top k), and the places of those in their conversations."""
        base = signals.fused
        depth = self._depth(config, k)
        if not depth:
            return base, {}
        moved = contenders(base, k=k, config=config, windows=windows, times=times, depth=depth)
        found = zip(moved, map(signals.position, moved), strict=True)
        positions = {key: place for key, place in found if place is not None}
        held = set(moved)
        # Explained once loaded (in _rank): most of those moved are not.
        base = [f for f in base if f.id in held]
        if config.partner_weight > 0:
            base = partner_lift(base, positions, config.partner_weight)
        return base, positions

    def _depth(self, config: FusionConfig, k: int) -> int:
        """How many of the best candidates a partner lift or the re-ranker may move."""
        if config.partner_weight <= 0 and not config.rerank:
            return 0
        model = self._reranker() if config.rerank else None
        return max(3 * k, _PARTNER_DEPTH, model.depth if model is not None else 0)

    def _reranker(self) -> Reranker:
        return self._rerank_model if self._rerank_model is not None else _shipped_model()

    def _lexical(self, ask: _Ask) -> list[Candidate]:
        """The lexical candidates (none when the lexical signal is off)."""
        if self._fusion.lexical_weight <= 0:
            return []
        return self._index.lexical(
            ask.scope, ask.query, filters=ask.filters, limit=ask.limit, also=ask.also,
            also_limit=self._also(ask.limit),
        )  # fmt: skip

    def _nearest(self, ask: _Ask, qvec: npt.NDArray[np.float32] | None) -> list[Candidate]:
        model = self.model()
        if qvec is None or model is None or self._fusion.vector_weight <= 0:
            return []
        return self._index.nearest(
            ask.scope, qvec, model=model, filters=ask.filters, limit=ask.limit, also=ask.also,
            also_limit=self._also(ask.limit),
        )  # fmt: skip

    def _also(self, limit: int) -> int:
        """How many candidates each time the query names adds (never more than the scope's)."""
        return min(limit, self._fusion.window_candidates)


def _within(filters: Filters, window: TimeWindow) -> Filters | None:
    """*filters* narrowed to *window* (None when they do not overlap)."""
    since = window.start if filters.since is None else max(filters.since, window.start)
    until = window.end if filters.until is None else min(filters.until, window.end)
    if since > until:
        return None
    return replace(filters, since=since, until=until)


def _reranked(
    model: Reranker,
    fused: list[Fused],
    signals: _Signals,
    items: Mapping[str, Item],
    positions: Mapping[str, Position],
    *,
    query: str,
    method: str,
    windows: Sequence[TimeWindow],
) -> list[Fused]:
    """*fused* re-ordered by *model* from the features of its best ``model.depth``."""
    x = features(
        fused[: model.depth], query=query, method=method, lexical=signals.lexical,
        vector=signals.vector, sessions=signals.sessions, windows=windows,
        records={key: RerankRecord(at=items[key].at, position=place, text=items[key].text)
                 for key, place in positions.items() if key in items},
    )  # fmt: skip
    ordered = model.order(fused, x)
    # A re-ranker is pluggable: one that drops or repeats a candidate would return hits that
    # were never ranked, or the same record twice.
    if len(ordered) != len(fused) or {f.id for f in ordered} != {f.id for f in fused}:
        raise InvalidInput("the re-ranker must return a re-ordering of the candidates it was given")
    return ordered


def _hits(fused: Sequence[Fused], items: Mapping[str, Item], min_score: float) -> list[Hit]:
    """The loaded records of *fused* as hits, those under *min_score* left out."""
    out = []
    for f in fused:
        item = items.get(f.id)
        if item is None or f.score < min_score:  # erased since scoring, or too weak
            continue
        out.append(hit_of(item, f.score, f.scores))
    return out


class _Records:
    """The records one search has loaded, by id: a fact's source turn, loaded to be lifted
    by the fact, is often a contender for the hits too and is read once."""

    __slots__ = ("_loaded", "_log", "_scope")

    def __init__(self, log: EventLog, scope: Scope) -> None:
        self._log = log
        self._scope = scope
        self._loaded: dict[str, Item] = {}

    def load(self, ids: Sequence[str]) -> dict[str, Item]:
        """The records among *ids* that exist in the scope, by id."""
        loaded = self._loaded
        missing = [key for key in ids if key not in loaded]
        if missing:
            loaded.update((item.id, item) for item in self._log.items(self._scope, missing))
        return {key: loaded[key] for key in ids if key in loaded}


@dataclass(frozen=True, slots=True)
class _Signals:
    """Fused candidates (explained on demand) and what they were fused from (the re-ranker's
    features need both)."""

    fused: list[Fused]
    explain: Callable[[Fused], Fused]
    position: Callable[[str], Position | None]
    lexical: list[Candidate]
    vector: list[Candidate]
    sessions: dict[str | None, float]


@lru_cache(maxsize=1)
def _shipped_model() -> RerankModel:
    """The re-ranker shipped with kenning, read once on first use (never at import)."""
    return RerankModel.load()
