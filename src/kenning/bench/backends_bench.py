"""``kenning bench store --store postgresql://...``: SQLite and PostgreSQL side by side.

Both stores get the same synthetic events in the same order, batch by batch and alternating
which store goes first, so noise on a shared machine falls on both alike. Each distinct text
is embedded once, before any store is timed, and both stores reuse those vectors: the ingest
rates are the stores' own (writes, indexing), not the model's, and the report says so. Search
latency includes embedding the query (the same cached vector for both stores) and is measured
alternating between the stores, query by query, at each size, in a tenant scope and in user
scopes. PostgreSQL's in-database alternatives (pgvector HNSW, ``tsvector`` ranking) are timed
on the same rows (:mod:`kenning.bench.pg_alternatives`).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kenning.bench.harness import erase_bench_tenants
from kenning.bench.metrics import percentiles
from kenning.bench.pg_alternatives import measure_alternatives
from kenning.bench.report import heading, table, write_files
from kenning.bench.synthetic import synthetic_events, synthetic_queries
from kenning.bench.vector_cache import CachedEmbedder, embedded_texts
from kenning.embed.minilm import MiniLMEmbedder
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import Scope
from kenning.settings import Settings
from kenning.store.postgres import redact
from kenning.store.postgres.store import PostgresStore
from kenning.store.sqlite.store import SQLiteStore

__all__ = ["run_backends_bench"]

TENANT = "bench"
BACKENDS = ("sqlite", "postgresql")


def _wait_ready(memory: Memory) -> float:
    store = memory.store
    assert isinstance(store, SQLiteStore | PostgresStore)
    started = time.perf_counter()
    store.vector_index(TENANT, wait_s=None)
    return round(time.perf_counter() - started, 2)


def _latencies(
    memories: dict[str, Memory], scopes: Sequence[Scope], queries: Sequence[str]
) -> dict[str, dict[str, float]]:
    for memory in memories.values():  # warm-up: caches, partitions
        for query in queries[:10]:
            memory.search(scopes[0], query)
    times: dict[str, list[float]] = {name: [] for name in memories}
    order = list(memories)
    for i, query in enumerate(queries):
        scope = scopes[i % len(scopes)]
        for name in order if i % 2 else order[::-1]:
            started = time.perf_counter()
            memories[name].search(scope, query, k=10)
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: percentiles(values) for name, values in times.items()}


def run_backends_bench(
    out: Path,
    *,
    url: str,
    sizes: Sequence[int] = (10_000, 100_000),
    queries: int = 200,
    seed: int = 7,
    alternatives: bool = True,
    alternatives_max_size: int = 100_000,
    progress: bool = True,
    vector_cache: Path | None = None,
    embed_only: bool = False,
) -> dict[str, Any]:
    """Run the side-by-side benchmark, write ``out/report.json`` and ``out/report.md``.

    The PostgreSQL database at *url* must be one kenning may use for benchmarks: its tenant
    ``bench`` is erased first (and at the end). The in-database alternatives create (and drop)
    indexes, which needs the URL's role to own kenning's tables; they are timed at sizes up to
    *alternatives_max_size*. With *vector_cache* the vectors are also kept in that file and
    read back by later runs (see :mod:`kenning.bench.vector_cache`); *embed_only* stops once
    they are all there, so the embedding of a large run can be done over several sittings.
    """
    from tqdm import tqdm

    sizes = sorted(set(sizes))
    out.mkdir(parents=True, exist_ok=True)
    embedder = CachedEmbedder(MiniLMEmbedder(), vector_cache)
    events = list(synthetic_events(sizes[-1], seed=seed))
    query_texts = synthetic_queries(queries, seed=seed + 1)
    # Fact extraction off: with it on, the stores were still reading facts from the backlog
    # while searches were timed, so every search caught its partition up first (200k events,
    # 60 profiled searches: 42 vs 10 ms p50). The write path with facts is `kenning bench store
    # --write-path-events`.
    settings = Settings(longterm=LongTermSettings(extract=False))
    rows = [e.item() for e in events]
    # What a store embeds is not the raw text (speaker, date, chunks): computed by the same
    # function ingest uses, then embedded once (or read from the cache file).
    texts = [*embedded_texts(rows, settings), *query_texts]
    started = time.perf_counter()
    with tqdm(total=len(texts), unit="text", desc="embed once", disable=not progress) as bar:
        embedded_now = embedder.prepare(texts, progress=bar.update)
    embed_s = time.perf_counter() - started
    report: dict[str, Any] = {
        "bench": "store-backends",
        "postgresql": redact(url),
        "vectors": "each distinct text embedded once up front and reused by both stores: "
        "ingest rates exclude the model; fact extraction off",
        "embedding": {
            "distinct_texts": embedder.cached,
            "seconds": round(embed_s, 1),
            "embedded_now": embedded_now,
            "read_from_cache_file": embedder.cached - embedded_now,
        },
        "sizes": {},
    }
    if embed_only:
        embedder.close()
        (out / "embedding.json").write_text(json.dumps(report["embedding"], indent=2) + "\n")
        return report
    with tempfile.TemporaryDirectory(prefix="kenning-bench-") as tmp:
        erase_bench_tenants(url, [TENANT])
        memories = {
            "sqlite": Memory.open(Path(tmp) / "bench.db", embedder=embedder, settings=settings),
            "postgresql": Memory.open(url, embedder=embedder, settings=settings),
        }
        ingest_s = dict.fromkeys(BACKENDS, 0.0)
        stored = 0
        step_from, step_s = 0, dict(ingest_s)
        bar = tqdm(total=sizes[-1], unit="ev", desc="ingest", disable=not progress)
        try:
            for size in sizes:
                while stored < size:
                    batch = rows[stored : min(size, stored + 256)]
                    order = BACKENDS if (stored // 256) % 2 else BACKENDS[::-1]
                    for name in order:
                        t0 = time.perf_counter()
                        memories[name].ingest(batch)
                        ingest_s[name] += time.perf_counter() - t0
                    stored += len(batch)
                    bar.update(len(batch))
                bar.set_postfix_str(f"measuring at {size}")
                entry: dict[str, Any] = {
                    "events": stored,
                    "ingest_events_per_s": {n: round(stored / ingest_s[n], 1) for n in BACKENDS},
                    # Rate over this size's own events: the overall rate hides how it falls.
                    "step_ingest_events_per_s": {
                        n: round((stored - step_from) / (ingest_s[n] - step_s[n]), 1)
                        for n in BACKENDS
                    },
                    "index_wait_s": {n: _wait_ready(memories[n]) for n in BACKENDS},
                }
                users = sorted({e.user for e in events[:stored]})[:50]
                entry["tenant_scope_ms"] = _latencies(memories, [Scope(TENANT)], query_texts)
                entry["user_scope_ms"] = _latencies(
                    memories, [Scope(TENANT, u) for u in users], query_texts
                )
                # tsvector ranking took ~1 s per query at 100k events; at 1M its 200 queries
                # alone would take most of an hour, so the alternatives stop at a size cap.
                if alternatives and size <= alternatives_max_size:
                    entry["postgresql_in_database"] = measure_alternatives(
                        url, memories["postgresql"], embedder, query_texts, users
                    )
                report["sizes"][str(size)] = entry
                step_from, step_s = stored, dict(ingest_s)
        finally:
            bar.close()
            for memory in memories.values():
                memory.close()
            embedder.close()
        erase_bench_tenants(url, [TENANT])
    write_files(out, report, _markdown(report))
    return report


def _ms(latency: dict[str, float]) -> str:
    return f"{latency['p50']:.2f} / {latency['p95']:.2f} / {latency['p99']:.2f}"


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        *heading("kenning bench store: SQLite and PostgreSQL side by side"),
        f"PostgreSQL: `{report['postgresql']}`. Vectors: {report['vectors']} "
        f"({report['embedding']['distinct_texts']} distinct texts: "
        f"{report['embedding']['embedded_now']} embedded in this run "
        f"({report['embedding']['seconds']} s with any cache reads), "
        f"{report['embedding']['read_from_cache_file']} read from a vector cache file). "
        "Same events, same order, stores alternating.",
        "",
        *table(
            ["events", "store", "ingest events/s overall (this step)",
             "tenant p50 / p95 / p99 ms", "user p50 / p95 / p99 ms", "index wait s"],
            [[size, name,
              f"{entry['ingest_events_per_s'][name]} "
              f"({entry.get('step_ingest_events_per_s', {}).get(name, '-')})",
              _ms(entry["tenant_scope_ms"][name]), _ms(entry["user_scope_ms"][name]),
              entry["index_wait_s"][name]]
             for size, entry in report["sizes"].items()
             for name in BACKENDS],
            cell=str,
        ),
    ]  # fmt: skip
    lines += ["", "Ratios PostgreSQL / SQLite (same run):", ""]
    for size, entry in report["sizes"].items():
        ing = entry["ingest_events_per_s"]
        t, u = entry["tenant_scope_ms"], entry["user_scope_ms"]
        lines.append(
            f"- {size}: ingest {ing['postgresql'] / ing['sqlite']:.2f}x the rate; search p50 "
            f"tenant {t['postgresql']['p50'] / t['sqlite']['p50']:.2f}x, user "
            f"{u['postgresql']['p50'] / u['sqlite']['p50']:.2f}x"
        )
    alt = [(s, e["postgresql_in_database"]) for s, e in report["sizes"].items()
           if "postgresql_in_database" in e]  # fmt: skip
    if alt:
        from kenning.bench.pg_alternatives import alternatives_markdown

        lines += alternatives_markdown(alt)
        skipped = [s for s, e in report["sizes"].items() if "postgresql_in_database" not in e]
        if skipped:
            lines += ["", f"(In-database alternatives not timed at {', '.join(skipped)} events: "
                      "above the size cap, where tsvector ranking alone would take most of an "
                      "hour.)"]  # fmt: skip
    return "\n".join(lines) + "\n"
