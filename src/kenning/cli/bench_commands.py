"""``kenning bench ...``: benchmark commands (reports under --out)."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict

from kenning.bench.split import Part, check_part
from kenning.cli.inputs import positive
from kenning.embed.minilm import MiniLMEmbedder
from kenning.errors import InvalidInput
from kenning.settings import Settings

__all__ = ["add_parsers"]

_BENCH_STORE_HELP = (
    "run on this PostgreSQL database instead of a temporary SQLite file (the bench's tenant "
    "there is erased first)"
)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InvalidInput(f"--sizes {text!r} must be comma-separated integers") from exc
    if not sizes or any(s < 100 for s in sizes):
        raise InvalidInput("--sizes needs at least one size, each >= 100")
    return sizes


def add_parsers(sub: Any) -> None:
    """Add ``kenning bench`` and its benches, each with its handler."""
    p = sub.add_parser("bench", help="benchmarks (see `kenning bench --help`)")
    bench = p.add_subparsers(dest="bench", required=True, metavar="BENCH")
    _add_store_bench(bench)
    _add_dataset_benches(bench)
    _add_training_benches(bench)
    _add_synthetic_benches(bench)
    _add_load_bench(bench)
    _add_memory_bench(bench)
    _add_ingest_bench(bench)


def _add_store_bench(bench: Any) -> None:
    b = bench.add_parser("store", help="ingest throughput and search latency at 10k/100k events")
    b.add_argument("--out", required=True, help="directory for report.json and report.md")
    b.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    b.add_argument("--queries", type=positive, default=200, help="search queries per size")
    b.add_argument("--seed", type=int, default=7)
    b.add_argument(
        "--store",
        metavar="URL",
        help="measure SQLite and this PostgreSQL database side by side on the same events "
        "(each text embedded once, vectors reused by both; its tenant 'bench' is erased)",
    )
    b.add_argument(
        "--concurrent-writer",
        action="store_true",
        help="also time searches while another process writes to the same file",
    )
    b.add_argument(
        "--write-path-events", type=positive, default=3_000,
        help="events ingested with fact extraction off and on (write-path timing)",
    )  # fmt: skip
    b.add_argument(
        "--sentences", type=positive, default=1,
        help="sentences per synthetic event (more than one: events are embedded by sentence)",
    )  # fmt: skip
    b.add_argument(
        "--vector-cache", metavar="FILE",
        help="with --store: keep the vectors in FILE (SQLite) and reuse them in later runs",
    )  # fmt: skip
    b.add_argument(
        "--embed-only", action="store_true",
        help="with --store: embed (into --vector-cache) and stop; rerun to continue or measure",
    )  # fmt: skip
    b.set_defaults(handler=_store)


def _add_dataset_benches(bench: Any) -> None:
    """LoCoMo and LongMemEval retrieval recall."""
    b = bench.add_parser("locomo", help="retrieval recall on a LoCoMo file vs baselines")
    b.add_argument("--data", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--out", required=True)
    _add_part(b)
    b.add_argument("--store", metavar="URL", help=_BENCH_STORE_HELP)
    _add_search_overrides(b)
    b.set_defaults(handler=_locomo)
    b = bench.add_parser("longmemeval", help="retrieval recall on a LongMemEval file vs baselines")
    b.add_argument("--data", required=True, help="LongMemEval JSON file (.json or .json.gz)")
    b.add_argument("--out", required=True)
    b.add_argument("--store", metavar="URL", help=_BENCH_STORE_HELP)
    b.add_argument("--limit", type=positive, help="only the first N questions")
    _add_part(b)
    _add_search_overrides(b)
    b.set_defaults(handler=_longmemeval)
    b = bench.add_parser(
        "langgraph",
        help="KenningStore vs LangGraph's InMemoryStore and SqliteStore on LoCoMo: recall, "
        "put rate, search latency",
    )
    b.add_argument("--data", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--out", required=True)
    b.add_argument("--k", type=positive, default=10, help="results per search (recall@k)")
    b.add_argument("--batch", type=positive, default=32, help="puts per store.batch call")
    b.add_argument("--store", metavar="URL",
                   help="KenningStore on this PostgreSQL database (its bench tenant is erased "
                   "first) instead of a temporary SQLite file")  # fmt: skip
    _add_part(b)
    b.set_defaults(handler=_langgraph)


def _add_part(b: Any) -> None:
    """``--part``: the dataset benches run the tuning part, the validation part or both."""
    b.add_argument("--part", choices=("tuning", "validation", "all"), default="all",
                   help="dev-split part to run (all: both, each reported)")  # fmt: skip


def _add_search_overrides(b: Any) -> None:
    """The options of the dataset benches that change kenning's search (see
    :func:`_settings`), and ``--no-plots``."""
    b.add_argument("--fusion", choices=("rrf", "weighted"), help="override the fusion method")
    b.add_argument("--embed-text", choices=("content", "speaker", "speaker_date"),
                   help="override what is embedded for a turn")  # fmt: skip
    b.add_argument("--no-plots", action="store_true")


def _add_training_benches(bench: Any) -> None:
    """The re-ranker's training and the reindex comparison, on the dataset files."""
    b = bench.add_parser(
        "rerank", help="train the opt-in re-ranker on the tuning parts, choose it on validation"
    )
    b.add_argument("--locomo", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--longmemeval", required=True, help="LongMemEval JSON file (.json[.gz])")
    b.add_argument("--out", required=True, help="directory for the weights and the reports")
    b.add_argument("--l2", default="0.001,0.003,0.01,0.03,0.1",
                   help="comma-separated L2 strengths to fit (one model each)")  # fmt: skip
    b.add_argument("--depth", type=positive, default=30, help="candidates re-ordered")
    b.add_argument(
        "--vector-cache", metavar="FILE",
        help="keep the vectors in FILE (SQLite) and reuse them in later runs",
    )  # fmt: skip
    b.set_defaults(handler=_rerank)
    b = bench.add_parser(
        "reindex", help="a store of whole-message vectors reindexed, against a fresh ingest"
    )
    b.add_argument("--locomo", help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--longmemeval", help="LongMemEval JSON file (.json[.gz])")
    b.add_argument("--out", required=True)
    b.add_argument("--batch", type=positive, default=512, help="events per reindex batch")
    b.set_defaults(handler=_reindex)


def _add_synthetic_benches(bench: Any) -> None:
    """Benches on data kenning ships or generates."""
    b = bench.add_parser("reader", help="query reader precision/recall on labelled product queries")
    b.add_argument("--out", required=True)
    b.add_argument("--data", help="a labelled JSONL file (default: the set shipped with kenning)")
    b.set_defaults(handler=_reader)
    b = bench.add_parser("extraction", help="fact extraction on labelled self-statements")
    b.add_argument("--out", required=True)
    b.add_argument("--data", help="a labelled JSONL file or folder (default: the shipped set)")
    b.add_argument("--repeat", type=positive, default=3, help="timed passes over the set")
    b.add_argument(
        "--extractor", choices=("parse", "parse-entities", "rules"), default="parse",
        help="the self-statement reader scored: kenning's default (parse; the rules where "
        "spaCy is not installed), the parse with entity types, or the phrase rules",
    )  # fmt: skip
    b.set_defaults(handler=_extraction)
    b = bench.add_parser("recall", help="synthetic suite: facts said once, asked in other words")
    b.add_argument("--out", required=True)
    b.add_argument("--seed", type=int, default=0, help="first conversation seed")
    b.add_argument("--conversations", type=positive, default=10, help="seeded conversations")
    b.set_defaults(handler=_recall)
    b = bench.add_parser("staleness", help="stale facts after changes and revocations")
    b.add_argument("--out", required=True)
    b.add_argument("--users", type=positive, default=40, help="seeded users")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument(
        "--no-free-text",
        action="store_true",
        help="only the templated users, not the free-text conversations",
    )
    b.set_defaults(handler=_staleness)
    b = bench.add_parser(
        "revocation",
        help="withdrawals in other words: facts closed, false "
        "closures (labelled pairs, tuning and held-out)",
    )
    b.add_argument("--out", required=True)
    b.set_defaults(handler=_revocation)
    b = bench.add_parser("pins", help="pin survival in windows vs sliding window / summaries")
    b.add_argument("--out", required=True)
    b.add_argument("--threads", type=positive, default=200, help="seeded support threads")
    b.add_argument("--seed", type=int, default=0)
    b.set_defaults(handler=_pins)
    b = bench.add_parser(
        "task", help="a 300-event agent session: task state, findings and files in the window"
    )
    b.add_argument("--out", required=True)
    b.add_argument("--budget", type=positive, default=2_000, help="window budget in tokens")
    b.set_defaults(handler=_task)
    b = bench.add_parser("assemble", help="assemble latency for sessions of 100 to 100k events")
    b.add_argument("--out", required=True)
    b.add_argument("--sizes", default="100,1000,10000,100000", help="comma-separated sizes")
    b.add_argument("--calls", type=positive, default=200, help="timed calls per row")
    b.add_argument("--budget", type=positive, default=8_000, help="window budget in tokens")
    b.add_argument("--store", metavar="URL", help=_BENCH_STORE_HELP)
    b.set_defaults(handler=_assemble)


def _add_load_bench(bench: Any) -> None:
    b = bench.add_parser(
        "load", help="the server under 2,000 concurrent sessions (1 and N workers)"
    )
    b.add_argument("--out", required=True, help="directory for report.json and report.md")
    b.add_argument("--sessions", type=positive, default=2_000, help="concurrent sessions")
    b.add_argument("--tenants", type=positive, default=10, help="tenants the users spread over")
    b.add_argument("--duration", type=float, default=60.0, help="seconds of load per run")
    b.add_argument("--rps", default="20", help="offered turns/s, comma-separated to sweep")
    b.add_argument("--workers", default="1,2", help="server processes, comma-separated runs")
    b.add_argument("--no-model", action="store_true", help="serve without the MiniLM model")
    b.add_argument("--port", type=int, default=8765, help="loopback port of the server")
    b.add_argument(
        "--embed-window-ms",
        type=float,
        default=2.0,
        help="the server's embedding queue window (kenning serve --embed-window-ms)",
    )
    b.add_argument(
        "--embed-batch",
        type=positive,
        default=16,
        help="most texts per model call (kenning serve --embed-batch)",
    )
    b.add_argument("--store", metavar="URL",
                   help="serve this PostgreSQL database (its tenants t0..tN are erased before "
                   "each run) instead of a fresh SQLite file")  # fmt: skip
    b.set_defaults(handler=_load)


def _add_memory_bench(bench: Any) -> None:
    b = bench.add_parser(
        "memory", help="peak RSS: the model alone, LoCoMo ingested + search + assemble, 10k/100k"
    )
    b.add_argument("--out", required=True, help="directory for report.json and report.md")
    b.add_argument("--data", help="a LoCoMo file for the LoCoMo stage (skipped without it)")
    b.add_argument("--sizes", default="10000,100000", help="comma-separated synthetic sizes")
    b.add_argument("--vector-cache", metavar="FILE",
                   help="synthetic stages: vectors from this cache file (else hashed)")  # fmt: skip
    b.set_defaults(handler=_memory)


def _memory(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.memory_bench import run_memory_bench

    run_memory_bench(
        out, data=_data(args.data) if args.data else None, sizes=_sizes(args.sizes),
        vector_cache=Path(args.vector_cache) if args.vector_cache else None,
    )  # fmt: skip
    print((out / "report.md").read_text())
    return 0


def _add_ingest_bench(bench: Any) -> None:
    b = bench.add_parser(
        "ingest", help="write throughput per turn on LoCoMo, split by stage, vs LangGraph"
    )
    b.add_argument("--data", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--out", required=True, help="directory for report.json and report.md")
    b.add_argument("--repeats", type=positive, default=3, help="interleaved runs (medians)")
    b.add_argument("--turns", type=positive, help="only the first N turns")
    b.add_argument(
        "--server",
        action="store_true",
        help="also write each turn through a served process's HTTP API",
    )
    b.add_argument("--no-tokens", action="store_true", help="skip the token counts")
    b.set_defaults(handler=_ingest)


def _ingest(args: argparse.Namespace) -> int:
    out = _out(args.out)
    try:
        from kenning.bench.ingest_bench import run_ingest_bench
    except ImportError as exc:
        raise InvalidInput(f"bench ingest needs pip install 'kenning[langgraph]' ({exc})") from exc
    run_ingest_bench(
        _data(args.data), out, embedder=MiniLMEmbedder(), repeats=args.repeats,
        limit=args.turns, server=args.server, tokens=not args.no_tokens,
    )  # fmt: skip
    print((out / "report.md").read_text())
    return 0


def _store(args: argparse.Namespace) -> int:
    out = _out(args.out)
    if args.store is not None:
        return _backends(args, out)
    if args.vector_cache is not None or args.embed_only:
        raise InvalidInput("--vector-cache and --embed-only go with --store postgresql://…")
    from kenning.bench.store_bench import run_store_bench

    report = run_store_bench(
        out, sizes=_sizes(args.sizes), queries=args.queries, seed=args.seed,
        concurrent_writer=args.concurrent_writer, write_path_events=args.write_path_events,
        sentences=args.sentences,
    )  # fmt: skip
    print((out / "report.md").read_text())
    print(json.dumps(report["targets"], indent=2))
    return 0


def _backends(args: argparse.Namespace, out: Path) -> int:
    """``bench store --store URL``: SQLite and PostgreSQL side by side."""
    from kenning.bench.backends_bench import run_backends_bench

    url = _url(args.store)
    assert url is not None
    cache = None if args.vector_cache is None else Path(args.vector_cache)
    report = run_backends_bench(
        out, url=url, sizes=_sizes(args.sizes), queries=args.queries, seed=args.seed,
        vector_cache=cache, embed_only=args.embed_only,
    )  # fmt: skip
    if args.embed_only:
        print(json.dumps(report["embedding"]))
        return 0
    print((out / "report.md").read_text())
    return 0


def _load(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.load import run_load_bench

    run_load_bench(
        out, sessions=args.sessions, tenants=args.tenants, duration=args.duration,
        rps=[float(r) for r in args.rps.split(",")],
        workers=[int(w) for w in args.workers.split(",")], model=not args.no_model,
        port=args.port, store=_url(args.store), embed_window_ms=args.embed_window_ms,
        embed_batch=args.embed_batch,
    )  # fmt: skip
    print((out / "report.md").read_text())
    return 0


class _DatasetOptions(TypedDict):
    """What the dataset benches take from their shared options."""

    embedder: MiniLMEmbedder
    settings: Settings
    part: Part
    plots: bool
    store_url: str | None


def _dataset_options(args: argparse.Namespace) -> _DatasetOptions:
    return _DatasetOptions(
        embedder=MiniLMEmbedder(), settings=_settings(args), part=check_part(args.part),
        plots=not args.no_plots, store_url=_url(args.store),
    )  # fmt: skip


def _locomo(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.locomo_bench import run_locomo_bench

    run_locomo_bench(_data(args.data), out, **_dataset_options(args))
    print((out / "report.md").read_text())
    return 0


def _longmemeval(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.longmemeval_bench import run_longmemeval_bench

    run_longmemeval_bench(_data(args.data), out, limit=args.limit, **_dataset_options(args))
    print((out / "report.md").read_text())
    return 0


def _langgraph(args: argparse.Namespace) -> int:
    out = _out(args.out)
    try:
        from kenning.bench.langgraph_bench import run_langgraph_bench
    except ImportError as exc:
        raise InvalidInput(
            f"bench langgraph needs pip install 'kenning[langgraph]' ({exc})"
        ) from exc
    run_langgraph_bench(
        _data(args.data), out, embedder=MiniLMEmbedder(), k=args.k, batch=args.batch,
        part=check_part(args.part), store_url=_url(args.store),
    )  # fmt: skip
    print((out / "report.md").read_text())
    return 0


def _reindex(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.reindex_bench import run_reindex_bench

    files = {
        flag: None if path is None else _data(path, f"--{flag}")
        for flag, path in (("locomo", args.locomo), ("longmemeval", args.longmemeval))
    }
    run_reindex_bench(out, embedder=MiniLMEmbedder(), batch=args.batch, **files)
    print((out / "report.md").read_text())
    return 0


def _reader(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.reader_bench import run_reader_bench

    run_reader_bench(out, data=_data(args.data) if args.data else None)
    print((out / "report.md").read_text())
    return 0


def _extraction(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.extraction_bench import run_extraction_bench

    run_extraction_bench(out, extractor=args.extractor, data=args.data, repeat=args.repeat)
    print((out / "report.md").read_text())
    return 0


def _recall(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.recall_bench import run_recall_bench

    run_recall_bench(
        out, embedder=MiniLMEmbedder(), seed=args.seed, conversations=args.conversations
    )
    print((out / "report.md").read_text())
    return 0


def _staleness(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.staleness_bench import run_staleness_bench

    report = run_staleness_bench(
        out, embedder=MiniLMEmbedder(), users=args.users, seed=args.seed,
        free_text=not args.no_free_text,
    )  # fmt: skip
    print((out / "report.md").read_text())
    print(json.dumps(report["stale_rate"], indent=2))
    return 0


def _revocation(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.revocation_bench import run_revocation_bench

    run_revocation_bench(out, embedder=MiniLMEmbedder())
    print((out / "report.md").read_text())
    return 0


def _pins(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.context_bench import run_pins_bench

    run_pins_bench(out, threads=args.threads, seed=args.seed)
    print((out / "report.md").read_text())
    return 0


def _task(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.task_bench import run_task_bench

    run_task_bench(out, budget=args.budget)
    print((out / "report.md").read_text())
    return 0


def _assemble(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.context_bench import run_assemble_bench

    report = run_assemble_bench(
        out, embedder=MiniLMEmbedder(), sizes=_sizes(args.sizes), calls=args.calls,
        budget=args.budget, store_url=_url(args.store),
    )  # fmt: skip
    print((out / "report.md").read_text())
    print(json.dumps(report["targets"], indent=2))
    return 0


def _out(path: str) -> Path:
    """The report directory, checked before any bench starts (they write at the end)."""
    out = Path(path)
    existing = next((p for p in (out, *out.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise InvalidInput(f"--out {path}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidInput(f"--out {path}: {existing} is not writable")
    return out


def _l2s(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InvalidInput(f"--l2 {text!r} must be comma-separated numbers") from exc
    if not values or not all(0 < v < 1e6 for v in values):
        raise InvalidInput("--l2 needs at least one strength, each > 0")
    return values


def _rerank(args: argparse.Namespace) -> int:
    out = _out(args.out)
    from kenning.bench.rerank_bench import WEIGHTS_FILE, run_rerank_bench
    from kenning.bench.vector_cache import CachedEmbedder

    if args.depth < 2:
        raise InvalidInput("--depth must be at least 2")
    l2s = _l2s(args.l2)
    locomo = _data(args.locomo, "--locomo")
    longmemeval = _data(args.longmemeval, "--longmemeval")
    cache = None if args.vector_cache is None else Path(args.vector_cache)
    embedder = CachedEmbedder(MiniLMEmbedder(), cache)
    try:
        report = run_rerank_bench(
            locomo, longmemeval, out, embedder=embedder, l2s=l2s, depth=args.depth,
            progress=lambda line: print(line, flush=True),
        )  # fmt: skip
    finally:
        embedder.close()
    print((out / "report.md").read_text())
    print(f"weights: {out / WEIGHTS_FILE} ({report['chosen']})")
    return 0


def _url(store: str | None) -> str | None:
    from kenning.store.postgres import is_postgres_url, redact

    if store is not None and not is_postgres_url(store):
        raise InvalidInput(f"--store {redact(store)!r} is not a PostgreSQL URL (postgresql://...)")
    return store


def _data(path: str, flag: str = "--data") -> Path:
    data = Path(path)
    if not data.is_file():
        raise InvalidInput(f"{flag} {path} is not a file")
    return data


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings()
    if getattr(args, "fusion", None):
        settings = replace(settings, fusion=replace(settings.fusion, method=args.fusion))
    if getattr(args, "embed_text", None):
        settings = replace(settings, embed_text=args.embed_text)
    return settings
