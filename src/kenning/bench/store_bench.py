"""``kenning bench store``: ingest throughput with embeddings and search latency by store size.

Everything is measured in one process against baselines taken in the same run: the ingest rate
is compared with the raw model throughput measured just before and just after it, and search
cost at the largest size is compared with the smallest. The machine may be shared and noisy,
so reports give medians and percentiles, never single timings.

Vector search switches to an HNSW index once the tenant holds ``AnnConfig.min_rows`` vectors.
Before timing a size the bench waits for that index (and reports the wait); at the largest
size it also times, each on a fresh store over the same file, a from-scratch build, a restart
that loads the saved index, and exact search with the index disabled, and compares the vector
candidates of both paths (recall@10 / @100 against exact).
"""

from __future__ import annotations

import resource
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from kenning.bench.concurrent_bench import concurrent_markdown, run_concurrent_phase
from kenning.bench.metrics import percentiles
from kenning.bench.report import heading, table, write_files
from kenning.bench.synthetic import synthetic_events, synthetic_queries
from kenning.embed.minilm import MiniLMEmbedder
from kenning.errors import ModelUnavailable
from kenning.longterm.parsing.parser import SpacyParser
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import NewEvent, Scope
from kenning.search.engine import SearchEngine
from kenning.search.filters import parse_filters
from kenning.settings import Settings
from kenning.store.ann import AnnConfig
from kenning.store.sqlite.store import SQLiteStore

__all__ = ["run_store_bench"]

TARGET_INGEST_RATIO = 0.8
TARGET_P95_MS = 25.0
TARGET_SCALING = 4.0
SCOPES = ("tenant_scope", "user_scope")
COMPONENTS = ("embed_query", "bm25", "vector")


def _rss_mb() -> float:
    """Current resident set size in MiB (Linux), else the peak."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * resource.getpagesize() / 2**20
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _raw_throughput(embedder: MiniLMEmbedder, texts: Sequence[str], batch: int = 64) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start : start + batch])
    return len(texts) / (time.perf_counter() - started)


def _vector_paths(memory: Memory) -> tuple[int, int]:
    store = memory.store
    assert isinstance(store, SQLiteStore)
    status = store.vector_index("bench")
    return status.ann_searches, status.exact_searches


def _partition_rows(memory: Memory) -> int:
    """Rows of the tenant's partition: one per event, or per sentence of an event of several."""
    store = memory.store
    assert isinstance(store, SQLiteStore)
    return store.partition_status("bench").rows


def _latency(memory: Memory, scopes: Sequence[Scope], queries: Sequence[str]) -> dict[str, Any]:
    embedder = memory.embedder
    assert isinstance(embedder, MiniLMEmbedder)
    for query in queries[:10]:  # warm-up: loads the vector partition and caches
        memory.search(scopes[0], query)
    total, embed_ms, lexical_ms, vector_ms = [], [], [], []
    model = memory.store.model()
    assert model is not None
    filters = parse_filters(None)
    ann_before, exact_before = _vector_paths(memory)
    for i, query in enumerate(queries):
        scope = scopes[i % len(scopes)]
        started = time.perf_counter()
        memory.search(scope, query, k=10)
        total.append((time.perf_counter() - started) * 1000)
        t0 = time.perf_counter()
        vec = embedder.embed([query])[0]
        t1 = time.perf_counter()
        memory.store.lexical(scope, query, filters=filters, limit=100)
        t2 = time.perf_counter()
        memory.store.nearest(scope, vec, model=model, filters=filters, limit=100)
        t3 = time.perf_counter()
        embed_ms.append((t1 - t0) * 1000)
        lexical_ms.append((t2 - t1) * 1000)
        vector_ms.append((t3 - t2) * 1000)
    ann_after, exact_after = _vector_paths(memory)
    return {
        "search_ms": percentiles(total),
        "lexical_worker": _overlap(memory, scopes, queries),
        "components_ms_p50": {
            "embed_query": percentiles(embed_ms)["p50"],
            "bm25": percentiles(lexical_ms)["p50"],
            "vector": percentiles(vector_ms)["p50"],
        },
        "queries": len(queries),
        # Two vector searches per query (inside search, and the timed component).
        "vector_searches": {"hnsw": ann_after - ann_before, "exact": exact_after - exact_before},
    }


def _overlap(memory: Memory, scopes: Sequence[Scope], queries: Sequence[str]) -> dict[str, Any]:
    """What running the lexical search on a worker while the query is embedded buys: the same
    searches through an engine with the worker and one without, alternating, fresh query
    vectors for both (each engine caches its own)."""
    on, off = (
        SearchEngine(memory.store, memory.store, memory.embedder, fusion=memory.settings.fusion,
                     track_access=False, overlap=overlap)
        for overlap in (True, False)
    )  # fmt: skip
    filters = parse_filters(None)
    times: dict[bool, list[float]] = {True: [], False: []}
    now = datetime.now(UTC)
    try:
        for i, query in enumerate(queries):
            scope = scopes[i % len(scopes)]
            for engine, key in ((on, True), (off, False)) if i % 2 else ((off, False), (on, True)):
                started = time.perf_counter()
                engine.search(scope, query, k=10, min_score=0.0, filters=filters, now=now)
                times[key].append((time.perf_counter() - started) * 1000)
    finally:
        on.close()
        off.close()
    with_worker, inline = percentiles(times[True]), percentiles(times[False])
    return {
        "with_worker_ms": with_worker,
        "inline_ms": inline,
        "p50_ratio_worker_over_inline": round(with_worker["p50"] / inline["p50"], 3),
    }


def _after_write(
    memory: Memory, queries: Sequence[str], *, seed: int, writes: int = 60, sentences: int = 1
) -> dict[str, Any]:
    """Tenant searches right after a small write (two events: a turn and its reply) against
    searches with nothing written since, alternating, each with a query of its own (query
    embedding included): what following the tenant's own writes costs a search."""
    fresh = synthetic_events(2 * writes, seed=seed, sentences=sentences)
    after, settled = [], []
    for i in range(writes):
        started = time.perf_counter()
        memory.search(Scope("bench"), queries[(2 * i) % len(queries)], k=10)
        settled.append((time.perf_counter() - started) * 1000)
        memory.ingest(
            [ev.item(session=f"written-{ev.session}") for ev in (next(fresh), next(fresh))]
        )
        started = time.perf_counter()
        memory.search(Scope("bench"), queries[(2 * i + 1) % len(queries)], k=10)
        after.append((time.perf_counter() - started) * 1000)
    after_ms, settled_ms = percentiles(after), percentiles(settled)
    return {
        "writes": writes,
        "events_per_write": 2,
        "after_write_ms": after_ms,
        "settled_ms": settled_ms,
        "p50_ratio_after_over_settled": round(after_ms["p50"] / settled_ms["p50"], 3),
    }


def _write_path(
    embedder: MiniLMEmbedder, *, seed: int, events: int = 3_000, sentences: int = 1
) -> dict[str, Any]:
    """Ingest the same events into fresh stores with fact extraction and consolidation off
    and on (alternating, three times each), timing on-runs until extraction is done.

    The statement parser is loaded before the runs, as the embedding model is: a process
    loads each once (its load time is reported on its own, not spread over one run)."""
    parser_load_s = _load_parser()
    stream = list(synthetic_events(events, seed=seed + 500, sentences=sentences))
    rows = [ev.item() for ev in stream]
    rates: dict[bool, list[float]] = {False: [], True: []}
    facts = 0
    for extract in (False, True) * 3:
        settings = Settings(track_access=False, longterm=LongTermSettings(extract=extract))
        with tempfile.TemporaryDirectory(prefix="kenning-write-") as tmp:
            memory = Memory.open(Path(tmp) / "w.db", embedder=embedder, settings=settings)
            started = time.perf_counter()
            for at in range(0, len(rows), 256):
                memory.ingest(rows[at : at + 256])
            if extract:
                memory.wait_for_facts()
                facts = len(memory.store.facts(Scope("bench"), statuses=None))
            rates[extract].append(len(rows) / (time.perf_counter() - started))
            memory.close()
    off, on = float(np.median(rates[False])), float(np.median(rates[True]))
    return {
        "events": len(rows),
        "facts_written": facts,
        "events_per_s_without_extraction": round(off, 1),
        "events_per_s_with_extraction": round(on, 1),
        "ratio": round(on / off, 3),
        "parser_load_s": parser_load_s,
        "runs": {
            "off": [round(r, 1) for r in rates[False]],
            "on": [round(r, 1) for r in rates[True]],
        },
    }


def _load_parser() -> float | None:
    """Seconds to load the statement parser's pipeline (None: spaCy is not installed, and
    extraction reads with the phrase rules)."""
    started = time.perf_counter()
    try:
        SpacyParser().load()
    except ModelUnavailable:
        return None
    return round(time.perf_counter() - started, 2)


def _wait_for_index(memory: Memory) -> dict[str, Any]:
    store = memory.store
    assert isinstance(store, SQLiteStore)
    started = time.perf_counter()
    status = store.vector_index("bench", wait_s=None)
    return {
        "state": status.state,
        "nodes": status.nodes,
        "last_build_s": None if status.build_s is None else round(status.build_s, 2),
        "wait_s": round(time.perf_counter() - started, 2),
    }


def _open_status(path: Path, embedder: MiniLMEmbedder, ann: AnnConfig) -> dict[str, Any]:
    """Time a fresh store over *path* until its tenant partition and index are ready."""
    started = time.perf_counter()
    memory = Memory.open(path, embedder=embedder, settings=Settings(ann=ann, track_access=False))
    status = _wait_for_index(memory)
    status["open_to_ready_s"] = round(time.perf_counter() - started, 2)
    memory.close()
    return status


def _recall(
    ann: Memory, exact: Memory, embedder: MiniLMEmbedder, queries: Sequence[str]
) -> dict[str, Any]:
    """Vector candidates (depth 10 and 100) and final top-10 of both paths, compared."""
    model = ann.store.model()
    assert model is not None
    filters = parse_filters(None)
    scope = Scope("bench")
    at10: list[float] = []
    at100: list[float] = []
    tie10: list[float] = []
    tie100: list[float] = []
    same_top10 = 0
    for query in queries:
        vec = embedder.embed([query])[0]
        got = ann.store.nearest(scope, vec, model=model, filters=filters, limit=100)
        want = exact.store.nearest(scope, vec, model=model, filters=filters, limit=100)
        for depth, ids, ties in ((10, at10, tie10), (100, at100, tie100)):
            g, w = got[:depth], want[:depth]
            ids.append(len({c.id for c in g} & {c.id for c in w}) / max(1, len(w)))
            # Identical texts embed identically: a different row with the cut-off score is
            # an equally good candidate, so also count hits scoring at least the k-th exact.
            floor = w[-1].score - 1e-6 if w else 0.0
            ties.append(sum(c.score >= floor for c in g) / max(1, len(w)))
        hits = [h.id for h in ann.search(scope, query, k=10)]
        same_top10 += hits == [h.id for h in exact.search(scope, query, k=10)]
    return {
        "vector_recall_at_10": round(sum(at10) / len(at10), 4),
        "vector_recall_at_100": round(sum(at100) / len(at100), 4),
        "vector_recall_at_10_by_score": round(sum(tie10) / len(tie10), 4),
        "vector_recall_at_100_by_score": round(sum(tie100) / len(tie100), 4),
        "search_top10_identical": round(same_top10 / len(queries), 4),
        "queries": len(queries),
    }


def run_store_bench(
    out: Path,
    *,
    sizes: Sequence[int] = (10_000, 100_000),
    queries: int = 200,
    seed: int = 7,
    progress: bool = True,
    ann: AnnConfig | None = None,
    concurrent_writer: bool = False,
    write_path_events: int = 3_000,
    sentences: int = 1,
) -> dict[str, Any]:
    """Run the benchmark, write ``out/report.json`` and ``out/report.md``, return the report.

    With *concurrent_writer*, the largest size is also searched from a fresh store while
    another process writes to the same file (:mod:`kenning.bench.concurrent_bench`).
    *write_path_events* events are ingested with fact extraction off and on to time the
    write path. Each event holds *sentences* sentences (more than one: kenning embeds it by
    sentence, :mod:`kenning.indexing`); the raw model's baseline embeds such events whole.
    """
    from tqdm import tqdm

    sizes = sorted(set(sizes))
    out.mkdir(parents=True, exist_ok=True)
    embedder = MiniLMEmbedder()
    t0 = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - t0
    probe = [
        e.content
        for e in synthetic_events(1024, seed=seed + 1000, tenant="probe", sentences=sentences)
    ]
    _raw_throughput(embedder, probe[:128])  # warm-up
    raw_before = _raw_throughput(embedder, probe)

    report: dict[str, Any] = {
        "bench": "store",
        "machine_note": "rates and latencies from one process on this machine; see medians",
        "model": {"id": embedder.model_id, "load_s": round(load_s, 3), "threads": embedder.threads},
        "sentences_per_event": sentences,
        "sizes": {},
    }
    query_texts = synthetic_queries(queries, seed=seed + 1)
    ann = ann or AnnConfig()
    report["ann_config"] = {
        "min_rows": ann.min_rows,
        "min_fraction": ann.min_fraction,
        "m": ann.m,
        "ef_construction": ann.ef_construction,
        "ef_search": ann.ef_search,
        "build_threads": ann.build_threads,
    }
    with tempfile.TemporaryDirectory(prefix="kenning-bench-") as tmp:
        db = Path(tmp) / "bench.db"
        memory = Memory.open(db, embedder=embedder, settings=Settings(ann=ann))
        stored = 0
        ingest_s = 0.0
        first_rate = None
        stream = synthetic_events(sizes[-1], seed=seed, sentences=sentences)
        users: list[str] = []
        bar = tqdm(total=sizes[-1], unit="ev", desc="ingest", disable=not progress)
        for size in sizes:
            distinct: set[str] = set()
            started_size = stored
            while stored < size:
                batch = []
                for _ in range(min(256, size - stored)):
                    ev = next(stream)
                    distinct.add(ev.content)
                    users.append(ev.user)
                    batch.append(
                        (
                            Scope(ev.tenant, ev.user, ev.session),
                            NewEvent(
                                ev.role, ev.content, at=ev.at, metadata={"speaker": ev.speaker}
                            ),
                        )
                    )
                started = time.perf_counter()
                memory.ingest(batch)
                ingest_s += time.perf_counter() - started
                stored += len(batch)
                bar.update(len(batch))
            rate = stored / ingest_s
            if first_rate is None:
                first_rate = rate
            bar.set_postfix_str(f"waiting for the vector index at {size}")
            index = _wait_for_index(memory)
            bar.set_postfix_str(f"measuring search at {size}")
            tenant_scope = [Scope("bench")]
            user_scopes = [Scope("bench", u) for u in sorted(set(users))[:50]]
            entry = {
                "events": stored,
                "distinct_texts_in_stage": len(distinct),
                "stage_events": stored - started_size,
                "ingest_events_per_s_cumulative": round(rate, 1),
                "vector_index": index,
                "tenant_scope": _latency(memory, tenant_scope, query_texts),
                "user_scope": _latency(memory, user_scopes, query_texts),
                "partition_rows": _partition_rows(memory),
                "rss_mb": round(_rss_mb(), 1),
                "db_mb": round((Path(tmp) / "bench.db").stat().st_size / 2**20, 1),
            }
            report["sizes"][str(size)] = entry
        bar.close()
        report["peak_rss_mb_before_comparisons"] = round(_peak_rss_mb(), 1)
        if index["state"] == "ready":
            report["largest_size_index"] = _index_comparisons(
                db, memory, embedder, ann, query_texts
            )
        else:
            memory.close()
        # Last, on a store of its own: it adds events, whose facts may close others and start
        # a graph rebuild, and a store closed during a rebuild saves no graph for the restart.
        written = Memory.open(db, embedder=embedder, settings=Settings(ann=ann))
        try:
            _wait_for_index(written)
            report["after_write"] = _after_write(
                written, query_texts, seed=seed + 3000, sentences=sentences
            )
        finally:
            written.close()
        if concurrent_writer:
            phases = [synthetic_queries(queries, seed=seed + 100 + i) for i in range(4)]
            report["concurrent_writer"] = run_concurrent_phase(
                db, embedder, phases, Settings(ann=ann)
            )
    report["write_path"] = _write_path(
        embedder, seed=seed, events=write_path_events, sentences=sentences
    )
    raw_after = _raw_throughput(embedder, probe)
    raw = (raw_before + raw_after) / 2
    assert first_rate is not None
    small, large = str(sizes[0]), str(sizes[-1])
    p95_large = report["sizes"][large]["tenant_scope"]["search_ms"]["p95"]
    p50_ratio = (
        report["sizes"][large]["tenant_scope"]["search_ms"]["p50"]
        / report["sizes"][small]["tenant_scope"]["search_ms"]["p50"]
    )
    p95_ratio = p95_large / report["sizes"][small]["tenant_scope"]["search_ms"]["p95"]
    report["ingest"] = {
        "raw_model_sentences_per_s": {
            "before": round(raw_before, 1),
            "after": round(raw_after, 1),
            "mean": round(raw, 1),
        },
        "ingest_events_per_s_first_stage": round(first_rate, 1),
        "ratio_to_raw": round(first_rate / raw, 3),
    }
    report["targets"] = {
        "ingest_ratio_ge_0.8": first_rate / raw >= TARGET_INGEST_RATIO,
        "write_path_with_facts_ratio_ge_0.8": report["write_path"]["ratio"] >= TARGET_INGEST_RATIO,
        f"search_p95_at_{large}_le_25ms": p95_large <= TARGET_P95_MS,
        f"search_p50_ratio_{large}_vs_{small}_le_4": p50_ratio <= TARGET_SCALING,
        f"search_p95_ratio_{large}_vs_{small}_le_4": p95_ratio <= TARGET_SCALING,
    }
    report["ratios"] = {
        "p50_large_over_small": round(p50_ratio, 2),
        "p95_large_over_small": round(p95_ratio, 2),
    }
    report["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    write_files(out, report, _markdown(report))
    return report


def _index_comparisons(
    db: Path, memory: Memory, embedder: MiniLMEmbedder, ann: AnnConfig, queries: Sequence[str]
) -> dict[str, Any]:
    """At the largest size, one store at a time over the same file (a search records access,
    and a write by one open store makes every other reload its partitions): a restart that
    loads the saved index, the vector candidates of HNSW and exact search compared (no access
    recorded), exact search latency, and a from-scratch build."""
    # Closing the memory, not only its store: its fact readers are still reading the ingest
    # and stop at their next step (the next store resumes them) instead of reading on from a
    # closed store. The store saves the index beside the file as it closes.
    memory.close()
    saved = sorted(Path(f"{db}.ann").glob("*.hnsw"))
    out: dict[str, Any] = {
        "saved_index_mb": round(sum(p.stat().st_size for p in saved) / 2**20, 1),
    }
    quiet = Settings(ann=ann, track_access=False)
    started = time.perf_counter()
    restarted = Memory.open(db, embedder=embedder, settings=quiet)
    out["restart"] = _wait_for_index(restarted)
    out["restart"]["open_to_ready_s"] = round(time.perf_counter() - started, 2)
    exact_quiet = replace(quiet, ann=replace(ann, enabled=False))
    exact = Memory.open(db, embedder=embedder, settings=exact_quiet)
    out["recall_vs_exact"] = _recall(restarted, exact, embedder, queries)
    restarted.close()
    exact.close()
    exact = Memory.open(db, embedder=embedder, settings=Settings(ann=replace(ann, enabled=False)))
    out["exact_tenant_scope"] = _latency(exact, [Scope("bench")], queries)
    exact.close()
    out["fresh_build"] = _open_status(db, embedder, replace(ann, persist=False))
    return out


def _markdown(report: dict[str, Any]) -> str:
    ing = report["ingest"]
    raw = ing["raw_model_sentences_per_s"]
    lines = [
        *heading("kenning bench store"),
        f"Model: `{report['model']['id']}` (load {report['model']['load_s']} s, "
        f"{report['model']['threads']} threads). Synthetic support conversations, one tenant, "
        f"{report['sentences_per_event']} sentence(s) per event.",
        "",
        "## Ingest with embeddings",
        "",
        *table(["measure", "value"], [
            ["raw model throughput, batch 64, events embedded whole (before / after)",
             f"{raw['before']} / {raw['after']} texts/s"],
            ["kenning ingest, first stage", f"{ing['ingest_events_per_s_first_stage']} events/s"],
            ["ratio to raw (target >= 0.8)", ing["ratio_to_raw"]],
        ], cell=str),
        "",
        "## Search latency (k=10, query embedding included)",
        "",
        *table(
            ["events", "rows", "scope", "p50 ms", "p95 ms", "p99 ms", "embed p50", "bm25 p50",
             "vector p50", "RSS MiB"],
            _latency_rows(report),
            cell=str,
        ),
    ]  # fmt: skip
    written = report["after_write"]
    lines += [
        "",
        f"Tenant search at {list(report['sizes'])[-1]} events right after a write of "
        f"{written['events_per_write']} events, against one with nothing written since "
        f"({written['writes']} of each, alternating): p50 / p95 "
        f"{written['after_write_ms']['p50']:.2f} / {written['after_write_ms']['p95']:.2f} ms "
        f"vs {written['settled_ms']['p50']:.2f} / {written['settled_ms']['p95']:.2f} ms "
        f"(p50 ratio {written['p50_ratio_after_over_settled']}).",
        "",
        "## Vector index",
        "",
        f"HNSW config: {report['ann_config']}. The bench waits for a running build before "
        "timing a size.",
        "",
        *table(
            ["events", "index state", "nodes", "last build s", "wait s",
             "tenant searches hnsw/exact", "user searches hnsw/exact"],
            _index_rows(report),
            cell=str,
        ),
    ]  # fmt: skip
    cmp = report.get("largest_size_index")
    if cmp is not None:
        ex = cmp["exact_tenant_scope"]
        rec = cmp["recall_vs_exact"]
        lines += [
            "",
            "At the largest size, each on a fresh store over the same file:",
            "",
            f"- exact search (index disabled), tenant scope: p50 {ex['search_ms']['p50']:.2f} / "
            f"p95 {ex['search_ms']['p95']:.2f} / p99 {ex['search_ms']['p99']:.2f} ms, "
            f"vector p50 {ex['components_ms_p50']['vector']:.2f} ms",
            f"- HNSW vs exact: vector recall@10 {rec['vector_recall_at_10']}, "
            f"recall@100 {rec['vector_recall_at_100']} by id; counting rows tied with the "
            f"k-th exact score {rec['vector_recall_at_10_by_score']} / "
            f"{rec['vector_recall_at_100_by_score']}; identical top-10 search results for "
            f"{rec['search_top10_identical']} of {rec['queries']} queries",
            f"- from-scratch build: {cmp['fresh_build']['last_build_s']} s "
            f"(open to ready {cmp['fresh_build']['open_to_ready_s']} s)",
            f"- restart with the saved index ({cmp['saved_index_mb']} MiB): state "
            f"{cmp['restart']['state']}, open to ready {cmp['restart']['open_to_ready_s']} s, "
            f"rebuilt: {cmp['restart']['last_build_s'] is not None}",
        ]
    lines += _worker_lines(report)
    wp = report["write_path"]
    lines += [
        "",
        "## Write path with fact extraction and consolidation",
        "",
        f"{wp['events']} events into fresh stores (alternating, three runs each, medians; "
        "with extraction timed until every fact is read and consolidated, no LLM): "
        f"{wp['events_per_s_without_extraction']} events/s without, "
        f"{wp['events_per_s_with_extraction']} with ({wp['facts_written']} facts), ratio "
        f"{wp['ratio']} (target >= 0.8). The statement parser was loaded before the runs: "
        + (
            "not installed (the phrase rules read)."
            if wp.get("parser_load_s") is None
            else f"{wp['parser_load_s']} s, once per process."
        ),
    ]
    if "concurrent_writer" in report:
        lines += concurrent_markdown(report["concurrent_writer"])
    lines += [
        "",
        f"Ratios largest/smallest size: p50 {report['ratios']['p50_large_over_small']}, "
        f"p95 {report['ratios']['p95_large_over_small']} (target <= 4).",
        "",
        "## Targets",
        "",
    ]
    lines += [f"- {name}: {'met' if ok else 'NOT met'}" for name, ok in report["targets"].items()]
    lines.append(
        f"\nPeak RSS: {report['peak_rss_mb_before_comparisons']} MiB before the comparison "
        f"stores, {report['peak_rss_mb']} MiB overall."
    )
    return "\n".join(lines) + "\n"


def _latency_rows(report: dict[str, Any]) -> list[list[object]]:
    """Search latency per size and scope (milliseconds to two decimals)."""
    rows: list[list[object]] = []
    for size, entry in report["sizes"].items():
        for scope in SCOPES:
            ms, parts = entry[scope]["search_ms"], entry[scope]["components_ms_p50"]
            times = [ms["p50"], ms["p95"], ms["p99"], *[parts[c] for c in COMPONENTS]]
            rows.append([size, entry["partition_rows"], scope.replace("_scope", ""),
                         *[f"{t:.2f}" for t in times], entry["rss_mb"]])  # fmt: skip
    return rows


def _index_rows(report: dict[str, Any]) -> list[list[object]]:
    """The vector index per size, and how many searches took it or the exact path."""
    rows: list[list[object]] = []
    for size, entry in report["sizes"].items():
        idx = entry["vector_index"]
        paths = [entry[s]["vector_searches"] for s in SCOPES]
        rows.append([size, idx["state"], idx["nodes"], idx["last_build_s"], idx["wait_s"],
                     *[f"{p['hnsw']}/{p['exact']}" for p in paths]])  # fmt: skip
    return rows


def _worker_lines(report: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "## The lexical worker",
        "",
        "The same searches through an engine that runs BM25 on a worker while the query is "
        "embedded, and one that runs every step on the caller's thread (alternating).",
        "",
    ]
    rows: list[list[object]] = []
    for size, entry in report["sizes"].items():
        for scope in SCOPES:
            w = entry[scope]["lexical_worker"]
            on, off = w["with_worker_ms"], w["inline_ms"]
            rows.append([
                size, scope.replace("_scope", ""), f"{on['p50']:.2f} / {on['p95']:.2f}",
                f"{off['p50']:.2f} / {off['p95']:.2f}", w["p50_ratio_worker_over_inline"],
            ])  # fmt: skip
    header = ["events", "scope", "with worker p50 / p95 ms", "inline p50 / p95 ms", "p50 ratio"]
    return lines + table(header, rows, cell=str)
