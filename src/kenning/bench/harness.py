"""What every dataset bench shares: the systems under test, ingest, timed search, memory blocks.

The system under test is kenning's default retrieval path (``Memory.search`` with default
settings); the baselines are the same path with one signal switched off, so every system
shares the data, the embedder and the ingest (:class:`BenchStores`). The only bench-specific
setting is
``track_access=False``: access bonuses would otherwise make each answer depend on the
questions asked before it.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from kenning.bench.metrics import mean, percentiles
from kenning.embed.base import Embedder
from kenning.memory import Memory
from kenning.records import Event, NewEvent, Scope
from kenning.search.fusion import FusionConfig
from kenning.search.hits import Hit
from kenning.settings import Settings
from kenning.store.protocol import Store
from kenning.store.sqlite.store import SQLiteStore
from kenning.tokens.base import Tokenizer

__all__ = [
    "DATASET_SYSTEMS",
    "DEFAULT_K",
    "SEARCH_SYSTEMS",
    "TURNS",
    "BenchStores",
    "Run",
    "erase_bench_tenants",
    "format_memory_block",
    "ingest_rows",
    "memory_line",
    "own_search_ms",
    "recent_window",
    "safe_id",
    "settings_for",
]

DEFAULT_K = 10
SEARCH_SYSTEMS = ("kenning", "bm25", "vector")
# The dataset benches also run kenning without facts as keys to their turns.
DATASET_SYSTEMS = ("kenning", "kenning_nofacts", "bm25", "vector")
# The datasets' gold labels are turns: every system ranks events, never facts.
TURNS = ("event",)
_SAFE_RE = re.compile(r"[^A-Za-z0-9._:@-]")


class BenchStores:
    """The stores a dataset bench's systems search, over one copy of the data.

    Each system gets a store that indexes as its settings say: kenning's partitions index each
    answer with the question it answers (``Settings.reply_weight``), the single-signal baselines
    search every vector as it is, as a plain vector search would. By default the data is a
    temporary SQLite file (several stores follow one file), removed on :meth:`close`; with
    *location*, the PostgreSQL database there (its bench *tenants* are erased first).
    """

    def __init__(self, location: str | None, tenants: Iterable[str]) -> None:
        self._location = location
        self._dir = (
            tempfile.TemporaryDirectory(prefix="kenning-bench-") if location is None else None
        )
        self._stores: dict[float, Store] = {}
        if location is not None:
            erase_bench_tenants(location, tenants)

    def store(self, reply_weight: float) -> Store:
        """The store whose partitions index with *reply_weight*."""
        if reply_weight not in self._stores:
            if self._dir is not None:
                path = Path(self._dir.name) / "bench.db"
                self._stores[reply_weight] = SQLiteStore(path, reply_weight=reply_weight)
            else:
                from kenning.store.postgres.store import PostgresStore

                assert self._location is not None
                self._stores[reply_weight] = PostgresStore(
                    self._location, reply_weight=reply_weight
                )
        return self._stores[reply_weight]

    def memory(self, system: str, embedder: Embedder, settings: Settings | None) -> Memory:
        """A :class:`Memory` of *system* (see :func:`settings_for`) on its store."""
        chosen = settings_for(system, settings)
        return Memory(self.store(chosen.index_reply_weight), embedder=embedder, settings=chosen)

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores.clear()
        if self._dir is not None:
            self._dir.cleanup()


def erase_bench_tenants(location: str, tenants: Iterable[str]) -> None:
    """Erase the bench *tenants* from the PostgreSQL database at *location*, so a run starts
    from nothing."""
    from kenning.store.postgres.store import PostgresStore

    with PostgresStore(location) as store:
        for tenant in dict.fromkeys(tenants):
            store.forget(Scope(tenant))


def safe_id(raw: str) -> str:
    """Map a dataset id onto kenning's id alphabet (stable, collision-safe)."""
    cleaned = _SAFE_RE.sub("_", raw).lstrip("._:@-") or "id"
    if cleaned != raw or len(cleaned) > 100:
        digest = hashlib.blake2b(raw.encode(), digest_size=4).hexdigest()
        cleaned = f"{cleaned[:100]}-{digest}"
    return cleaned


def settings_for(system: str, base: Settings | None = None) -> Settings:
    """Settings of a search system: kenning's defaults; ``kenning_nofacts``, the same without
    facts as keys to their turns; or one signal alone (no bonuses, no facts)."""
    # The dataset is imported in bulk batches, embedded before each commit: its embedding
    # counts are the batch's, and recall does not depend on when vectors are written.
    base = replace(base or Settings(), track_access=False, defer_vectors=False)
    if system == "kenning":
        return base
    # Only the full system reads facts from the turns; the others search what it wrote.
    base = replace(base, longterm=replace(base.longterm, extract=False))
    if system == "kenning_nofacts":
        return replace(base, fusion=replace(base.fusion, fact_key_weight=0.0))
    # Baselines are the plain signal: no session blend, no query reading, no bonuses, every
    # vector searched as it is.
    plain = FusionConfig(
        session_weight=0.0,
        multi_target_session_weight=0.0,
        partner_weight=0.0,
        rerank=False,
        sole_best_floor=0.0,
        recency_weight=0.0,
        access_weight=0.0,
        time_weight=0.0,
        fact_key_weight=0.0,
    )
    if system == "bm25":
        fusion = replace(plain, lexical_weight=1.0, vector_weight=0.0)
    elif system == "vector":
        fusion = replace(plain, lexical_weight=0.0, vector_weight=1.0)
    else:
        raise ValueError(f"unknown system {system!r}")
    return replace(base, fusion=fusion, reply_weight=0.0)


def ingest_rows(
    memory: Memory,
    rows: Sequence[tuple[Scope, NewEvent]],
    *,
    batch: int = 512,
    progress: Callable[[int], Any] | None = None,
) -> tuple[list[Event], float]:
    """Ingest through the public API in atomic batches; return the events and events/s.

    The rate counts the writes; background fact extraction is then waited for, untimed, so
    every search sees the same facts (``kenning bench store`` measures the write path with
    extraction on)."""
    events: list[Event] = []
    started = time.perf_counter()
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        events.extend(memory.ingest(chunk))
        if progress is not None:
            progress(len(chunk))
    elapsed = time.perf_counter() - started
    memory.wait_for_facts()
    return events, (len(rows) / elapsed if elapsed > 0 else float("inf"))


BLOCK_HEADER = "Relevant memories (id | session | time):"


def memory_line(record_id: str, session: str | None, at: datetime, who: object, text: str) -> str:
    """One cited line of a memory block."""
    return f"- [{record_id} | {session} | {at:%Y-%m-%d %H:%M}] {who}: {text}"


def format_memory_block(hits: Sequence[Hit]) -> str:
    """The retrieved-memory block as an agent would receive it: one cited line per hit."""
    lines = [BLOCK_HEADER]
    for hit in hits:
        who = hit.metadata.get("speaker") or hit.role.value
        lines.append(memory_line(hit.id, hit.scope.session, hit.at, who, hit.content))
    return "\n".join(lines)


def recent_window(
    events_newest_first: Sequence[Event], budget: int, tokenizer: Tokenizer
) -> list[Event]:
    """The most recent events whose cited lines fit in *budget* tokens (with the header)."""
    used = tokenizer.count(BLOCK_HEADER)
    out = []
    for event in events_newest_first:
        who = event.metadata.get("speaker") or event.role.value
        line = memory_line(event.id, event.scope.session, event.at, who, event.content)
        cost = tokenizer.count(line) + 1
        if used + cost > budget:
            break
        used += cost
        out.append(event)
    return out


@dataclass
class Run:
    """Per-system accumulators of one bench run, and the recency baseline's windows."""

    rankings: dict[str, list[list[str]]] = field(default_factory=dict)
    search_ms: dict[str, list[float]] = field(default_factory=dict)
    block_tokens: dict[str, list[int]] = field(default_factory=dict)
    own_ms: dict[str, list[float]] = field(default_factory=dict)
    window_turns: list[int] = field(default_factory=list)
    window_recall: list[float] = field(default_factory=list)

    def record(self, system: str, ranking: list[str], ms: float | None, block: int | None) -> None:
        self.rankings.setdefault(system, []).append(ranking)
        if ms is not None:
            self.search_ms.setdefault(system, []).append(ms)
        if block is not None:
            self.block_tokens.setdefault(system, []).append(block)

    def record_window(
        self,
        history: Sequence[Event],
        ranked: Sequence[Event],
        evidence: frozenset[str],
        *,
        dataset_ids: Mapping[str, str],
        budget: int,
        tokenizer: Tokenizer,
    ) -> None:
        """Record the recency baseline for one question: its ranking is *ranked* (newest
        first); its window, the newest events of *history* that fit kenning's token *budget*,
        counts in turns and, where *evidence* is given, in the share of the evidence inside it
        (event ids mapped to the dataset's by *dataset_ids*)."""
        window = recent_window(history, budget, tokenizer)
        self.record("recent_window", [dataset_ids[e.id] for e in ranked], None, budget)
        self.window_turns.append(len(window))
        if evidence:
            inside = {dataset_ids[e.id] for e in window} & evidence
            self.window_recall.append(len(inside) / len(evidence))

    def scored(self, system: str, scores: dict[str, Any]) -> dict[str, Any]:
        """*scores* of *system* with the tokens of its memory blocks and, for a search system,
        its search latency added."""
        blocks = self.block_tokens[system]
        scores["context_tokens"] = {"mean": mean(blocks), "p95": percentiles(blocks)["p95"]}
        if system in self.search_ms:
            scores["search_ms"] = percentiles(self.search_ms[system])
        return scores


def own_search_ms(memory: Memory, scope: Scope, query: str, **kw: Any) -> float:
    """Milliseconds of kenning's own work for a k = DEFAULT_K search: the same search is run
    twice and the second is timed, when the query's vector is already cached, so the time is
    search minus query embedding."""
    kw.setdefault("kinds", TURNS)
    memory.search(scope, query, k=DEFAULT_K, **kw)
    started = time.perf_counter()
    memory.search(scope, query, k=DEFAULT_K, **kw)
    return (time.perf_counter() - started) * 1000


def timed_search(
    memory: Memory, scope: Scope, query: str, *, k: int, tokenizer: Tokenizer, **kw: Any
) -> tuple[list[Hit], float, int]:
    """Search turns (facts serve as keys to them, see ``FusionConfig.fact_key_weight``),
    returning the hits, the latency in ms and the tokens of the top-k block."""
    kw.setdefault("kinds", TURNS)
    started = time.perf_counter()
    hits = list(memory.search(scope, query, k=max(k, DEFAULT_K), **kw))
    ms = (time.perf_counter() - started) * 1000
    return hits, ms, tokenizer.count(format_memory_block(hits[:DEFAULT_K]))
