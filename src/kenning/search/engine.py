"""The search pipeline: read the query, gather candidates, fuse, add bonuses, load the winners.

:class:`SearchEngine` is the I/O shell around the pure core (the settings' query reader,
:mod:`kenning.search.reader`, and :mod:`kenning.search.fusion`): it asks the store for
candidates of both signals, for any time the query names as well, and for whole-session
scores, then loads only the records that can still reach the top k. Input is validated by
:class:`~kenning.memory.Memory` before it gets here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from kenning.embed.base import Embedder
from kenning.errors import ModelUnavailable
from kenning.records import Scope
from kenning.search.filters import Filters
from kenning.search.fusion import (
    Fused,
    FusionConfig,
    ItemStats,
    Position,
    add_bonuses,
    fuse,
    max_bonus,
    partner_lift,
    session_scores,
)
from kenning.search.hits import Hit, SearchResults
from kenning.search.rerank import RerankModel, RerankRecord, features, rerank
from kenning.search.timeref import TimeWindow
from kenning.settings import Settings
from kenning.store.protocol import Candidate, Item, ModelInfo, Store

__all__ = ["SearchEngine"]

_QUERY_CACHE = 256
_PARTNER_DEPTH = 30
"""The partner lift applies among the best max(3 * k, this) candidates."""


class SearchEngine:
    """Hybrid search over one store. *worker* gives the thread that runs the lexical query
    while the query is embedded (and records access off the caller's path)."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        settings: Settings,
        worker: Callable[[], ThreadPoolExecutor],
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings
        self._worker = worker
        self._query_vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._query_lock = threading.Lock()

    def model(self) -> ModelInfo | None:
        """The embedder's model id and dimension (None without an embedder)."""
        if self._embedder is None:
            return None
        return ModelInfo(model_id=self._embedder.model_id, dimension=self._embedder.dimension)

    def search(
        self,
        scope: Scope,
        query: str,
        *,
        k: int,
        min_score: float,
        filters: Filters,
        now: datetime,
    ) -> SearchResults:
        """The top *k* records of *scope* for *query*, best first (see ``Memory.search``)."""
        config = self._settings.fusion
        plan = self._settings.reader.read(query, now)
        windows = plan.windows if config.time_weight > 0 else ()
        if plan.multi_target:
            config = replace(config, session_weight=config.multi_target_session_weight)
        degraded, reason = False, None
        qvec = None
        if self.model() is not None and config.vector_weight > 0:
            try:
                qvec = self._query_vector(query)
            except ModelUnavailable as exc:
                degraded, reason = True, f"vector search unavailable: {exc}"
        signals = self._fused(
            scope, query, qvec, filters, windows, config, max(config.candidates, k)
        )
        hits = self._rank(
            scope, signals, query=query, k=k, min_score=min_score, now=now, config=config,
            windows=windows,
        )  # fmt: skip
        if hits and self._settings.track_access:
            # Access stats are soft data: recorded off the caller's path.
            self._worker().submit(self._store.touch, scope, [h.id for h in hits], at=now)
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
        query: str,
        qvec: npt.NDArray[np.float32] | None,
        filters: Filters,
        windows: Sequence[TimeWindow],
        config: FusionConfig,
        limit: int,
    ) -> _Signals:
        """The query's candidates, fused (best first), before bonuses; and what was fused."""
        lexical, vector = self._candidates(scope, query, qvec, filters, limit)
        for window in windows:
            # Records of the named time may match too weakly to be among the best of the
            # whole scope; the best of the window itself are candidates too.
            inside = _within(filters, window)
            if inside is not None:
                more_lexical, more_vector = self._candidates(scope, query, qvec, inside, limit)
                lexical = _union(lexical, more_lexical)
                vector = _union(vector, more_vector)
        sessions = {}
        if config.session_weight > 0 and scope.session is None:
            wanted = list(dict.fromkeys(c.session for c in [*lexical, *vector]))
            model = self.model() if qvec is not None else None
            sessions = session_scores(
                self._store.sessions(scope, query, qvec, model=model, sessions=wanted), config
            )
        fused = fuse(lexical, vector, config=config, sessions=sessions)
        return _Signals(fused=fused, lexical=lexical, vector=vector, sessions=sessions)

    def _rank(
        self,
        scope: Scope,
        signals: _Signals,
        *,
        query: str,
        k: int,
        min_score: float,
        now: datetime,
        config: FusionConfig,
        windows: Sequence[TimeWindow] = (),
    ) -> list[Hit]:
        """Add bonuses to fused candidates, lift partners, cut at *min_score* and *k*, load the
        winners.

        A bonus adds at most ``max_bonus``, so a candidate more than that below the k-th base
        score cannot enter the top k: only the others ("contenders") are loaded, once, and
        serve both the bonuses and the hits. With the partner lift or the re-ranker on, the
        best ``max(3 * k, 30)`` candidates are loaded too: a weak answer can rise next to the
        question it answers, the re-ranker can lift a record from below the top k, and both
        need each record's place in its conversation.
        """
        base = signals.fused
        if not base:
            return []
        floor = base[min(k, len(base)) - 1].score - max_bonus(config, windows)
        contenders = [f.id for f in base if f.score >= floor]
        model = _rerank_model(self._settings) if config.rerank else None
        if config.partner_weight > 0 or model is not None:
            depth = max(3 * k, _PARTNER_DEPTH, model.depth if model is not None else 0)
            head = (f.id for f in base[:depth])
            contenders = list(dict.fromkeys([*contenders, *head]))
        items = {item.id: item for item in self._store.items(scope, contenders)}
        stats = {key: ItemStats(at=i.at, access_count=i.access_count) for key, i in items.items()}
        fused = add_bonuses(base, config=config, stats=stats, now=now, windows=windows)
        positions = {
            key: Position(session=i.scope.session, seq=i.seq, author=_author(i), asks="?" in i.text)
            for key, i in items.items()
        }
        if config.partner_weight > 0:
            fused = partner_lift(fused, positions, config.partner_weight)
        if model is not None:
            head_fused = fused[: model.depth]
            x = features(
                head_fused, query=query, method=config.method, lexical=signals.lexical,
                vector=signals.vector, sessions=signals.sessions, windows=windows,
                records={key: RerankRecord(at=items[key].at, position=place,
                                           text=items[key].text)
                         for key, place in positions.items()},
            )  # fmt: skip
            fused = rerank(fused, x, model)
        fused = fused[:k]
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
        model = self.model()
        if qvec is not None and model is not None and config.vector_weight > 0:
            vector = list(
                self._store.nearest(scope, qvec, model=model, filters=filters, limit=limit)
            )
        lexical = list(lexical_future.result()) if lexical_future is not None else []
        return lexical, vector


@dataclass(frozen=True, slots=True)
class _Signals:
    """Fused candidates and what they were fused from (the re-ranker's features need both)."""

    fused: list[Fused]
    lexical: list[Candidate]
    vector: list[Candidate]
    sessions: dict[str | None, float]


@lru_cache(maxsize=1)
def _shipped_model() -> RerankModel:
    """The re-ranker shipped with kenning, read once on first use (never at import)."""
    return RerankModel.load()


def _rerank_model(settings: Settings) -> RerankModel:
    return settings.rerank_model if settings.rerank_model is not None else _shipped_model()


def _author(item: Item) -> str:
    """Who wrote *item*: its speaker or name (metadata), else its role."""
    for key in ("speaker", "name"):
        value = item.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return item.role.value


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
