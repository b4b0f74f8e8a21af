"""``kenning bench ...``: benchmark commands (reports under --out)."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace
from pathlib import Path

from kenning.bench.split import check_part
from kenning.embed.minilm import MiniLMEmbedder
from kenning.errors import InvalidInput
from kenning.settings import Settings

__all__ = ["run"]


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InvalidInput(f"--sizes {text!r} must be comma-separated integers") from exc
    if not sizes or any(s < 100 for s in sizes):
        raise InvalidInput("--sizes needs at least one size, each >= 100")
    return sizes


def run(args: argparse.Namespace) -> int:
    out = _out(args.out)
    if args.bench == "store" and args.store is not None:
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
    if args.bench == "store" and (args.vector_cache is not None or args.embed_only):
        raise InvalidInput("--vector-cache and --embed-only go with --store postgresql://…")
    if args.bench == "store":
        from kenning.bench.store_bench import run_store_bench

        report = run_store_bench(
            out, sizes=_sizes(args.sizes), queries=args.queries, seed=args.seed,
            concurrent_writer=args.concurrent_writer, write_path_events=args.write_path_events,
            sentences=args.sentences,
        )  # fmt: skip
        print((out / "report.md").read_text())
        print(json.dumps(report["targets"], indent=2))
        return 0
    if args.bench == "load":
        from kenning.bench.load import run_load_bench

        run_load_bench(
            out, sessions=args.sessions, tenants=args.tenants, duration=args.duration,
            rps=[float(r) for r in args.rps.split(",")],
            workers=[int(w) for w in args.workers.split(",")], model=not args.no_model,
            port=args.port, store=_url(args.store),
        )  # fmt: skip
        print((out / "report.md").read_text())
        return 0
    if args.bench == "locomo":
        from kenning.bench.locomo_bench import run_locomo_bench

        run_locomo_bench(
            _data(args.data), out, embedder=MiniLMEmbedder(), settings=_settings(args),
            part=check_part(args.part), plots=not args.no_plots, store_url=_url(args.store),
        )  # fmt: skip
        print((out / "report.md").read_text())
        return 0
    if args.bench == "longmemeval":
        from kenning.bench.longmemeval_bench import run_longmemeval_bench

        run_longmemeval_bench(
            _data(args.data), out, embedder=MiniLMEmbedder(), settings=_settings(args),
            limit=args.limit, part=check_part(args.part), plots=not args.no_plots,
            store_url=_url(args.store),
        )  # fmt: skip
        print((out / "report.md").read_text())
        return 0
    if args.bench == "rerank":
        return _rerank(args, out)
    if args.bench == "reindex":
        from kenning.bench.reindex_bench import run_reindex_bench

        files = {
            flag: None if path is None else _data(path, f"--{flag}")
            for flag, path in (("locomo", args.locomo), ("longmemeval", args.longmemeval))
        }
        run_reindex_bench(out, embedder=MiniLMEmbedder(), batch=args.batch, **files)
        print((out / "report.md").read_text())
        return 0
    if args.bench == "reader":
        from kenning.bench.reader_bench import run_reader_bench

        run_reader_bench(out, data=_data(args.data) if args.data else None)
        print((out / "report.md").read_text())
        return 0
    if args.bench == "recall":
        from kenning.bench.recall_bench import run_recall_bench

        run_recall_bench(
            out, embedder=MiniLMEmbedder(), seed=args.seed, conversations=args.conversations
        )
        print((out / "report.md").read_text())
        return 0
    if args.bench == "staleness":
        from kenning.bench.staleness_bench import run_staleness_bench

        report = run_staleness_bench(
            out, embedder=MiniLMEmbedder(), users=args.users, seed=args.seed
        )
        print((out / "report.md").read_text())
        print(json.dumps(report["stale_rate"], indent=2))
        return 0
    if args.bench == "pins":
        from kenning.bench.context_bench import run_pins_bench

        run_pins_bench(out, threads=args.threads, seed=args.seed)
        print((out / "report.md").read_text())
        return 0
    if args.bench == "assemble":
        from kenning.bench.context_bench import run_assemble_bench

        report = run_assemble_bench(
            out, embedder=MiniLMEmbedder(), sizes=_sizes(args.sizes), calls=args.calls,
            budget=args.budget,
        )  # fmt: skip
        print((out / "report.md").read_text())
        print(json.dumps(report["targets"], indent=2))
        return 0
    raise InvalidInput(f"unknown bench {args.bench!r}")


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


def _rerank(args: argparse.Namespace, out: Path) -> int:
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
