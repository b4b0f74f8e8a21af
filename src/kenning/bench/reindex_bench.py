"""``kenning bench reindex``: a store written under older settings, rebuilt by ``reindex``,
against a store ingested under today's settings.

A dataset's turns (LoCoMo's, or LongMemEval's user turns, one tenant per question as its
bench has them) are ingested twice into fresh SQLite files: once with every message embedded
whole (``unit_chars=0``: how kenning indexed before sentence units), once with the defaults.
The first is then reindexed under the defaults, tenant by tenant. Every question is searched
in both (k=10, at the question's own ``now``), before and after the reindex, and the bench
counts the questions whose top 10 are the same as the fresh store's. It times the reindex
against the model alone embedding the same texts, in calls of ``batch`` texts (a reindex
makes one call per page of ``batch`` events), in the same process, so the ratio is about what
the rebuild adds to the model's own work.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kenning.bench import locomo_bench as loc
from kenning.bench import longmemeval_bench as lme
from kenning.bench.datasets import load_locomo, load_longmemeval
from kenning.bench.harness import TURNS, ingest_rows, safe_id
from kenning.bench.report import heading, table, write_files
from kenning.bench.vector_cache import CachedEmbedder, embedded_texts
from kenning.embed.base import Embedder
from kenning.errors import InvalidInput
from kenning.memory import Memory
from kenning.records import NewEvent, Scope, content_hash
from kenning.reindexing import ReindexReport
from kenning.settings import Settings
from kenning.store.sqlite.store import SQLiteStore

__all__ = ["run_reindex_bench"]


@dataclass(frozen=True, slots=True)
class _Dataset:
    """What the bench needs of a dataset: its rows, tenants, and questions (scope, text, now)
    with the metadata key that names a turn."""

    name: str
    rows: list[tuple[Scope, NewEvent]]
    tenants: list[str]
    asked: Sequence[tuple[Scope, str, datetime | None]]
    turn_key: str


def run_reindex_bench(
    out: Path,
    *,
    embedder: Embedder,
    locomo: Path | None = None,
    longmemeval: Path | None = None,
    batch: int = 512,
) -> dict[str, Any]:
    """Run the bench on the given dataset files; write ``report.json`` and ``report.md``."""
    if locomo is None and longmemeval is None:
        raise InvalidInput("give --locomo FILE, --longmemeval FILE or both")
    # Both files are read before anything is embedded: a wrong file fails at once.
    datasets = [] if locomo is None else [_locomo(locomo)]
    if longmemeval is not None:
        datasets.append(_longmemeval(longmemeval))
    results = [_run(d, embedder, batch) for d in datasets]
    report = {"bench": "reindex", "batch": batch, "datasets": results}
    write_files(out, report, _markdown(report))
    return report


def _locomo(path: Path) -> _Dataset:
    conversations, questions = load_locomo(path)
    now_of = {c.id: loc.conversation_now(c) for c in conversations}
    asked = [
        (Scope(loc.TENANT, safe_id(q.conversation_id)), q.text, now_of[q.conversation_id])
        for q in questions
        if q.evidence_turns
    ]
    rows = [row for conv in conversations for row in loc._rows(conv)]
    return _Dataset(path.name, rows, [loc.TENANT], asked, "dia_id")


def _longmemeval(path: Path) -> _Dataset:
    questions = load_longmemeval(path)
    rows = [row for q in questions for row in lme._rows(q)]
    asked = [(Scope(lme.tenant_of(q)), q.text, q.question_date) for q in questions]
    tenants = list(dict.fromkeys(lme.tenant_of(q) for q in questions))
    return _Dataset(path.name, rows, tenants, asked, "turn_id")


def _run(data: _Dataset, embedder: Embedder, batch: int) -> dict[str, Any]:
    settings = Settings(track_access=False)
    old_settings = Settings(track_access=False, unit_chars=0)
    with tempfile.TemporaryDirectory(prefix="kenning-reindex-") as tmp:
        old_path, fresh_path = Path(tmp, "old.db"), Path(tmp, "fresh.db")
        memo = CachedEmbedder(embedder)  # each text embedded once, but for the timed pass
        with Memory(_store(old_path, old_settings), embedder=memo, settings=old_settings) as m:
            ingest_rows(m, data.rows, batch=batch)
        before, rows_old = _rankings(old_path, memo, settings, data)
        # The texts the reindex will embed, embedded by the model alone: the baseline the
        # rebuild is measured against.
        todo = _texts_to_embed(old_path, settings, data)
        started = time.perf_counter()
        for texts in todo:
            for start in range(0, len(texts), batch):
                embedder.embed(texts[start : start + batch])
        model_s = time.perf_counter() - started
        reports: list[ReindexReport] = []
        with Memory(_store(old_path, settings), embedder=embedder, settings=settings) as m:
            started = time.perf_counter()
            reports = [m.reindex(tenant, batch=batch) for tenant in data.tenants]
            reindex_s = time.perf_counter() - started
        after, rows_after = _rankings(old_path, memo, settings, data)
        with Memory(_store(fresh_path, settings), embedder=memo, settings=settings) as m:
            ingest_rows(m, data.rows, batch=batch)
        fresh, rows_fresh = _rankings(fresh_path, memo, settings, data)
    return {
        "data": data.name,
        "tenants": len(data.tenants),
        "turns": len(data.rows),
        "questions": len(data.asked),
        "reindex": {
            "checked": sum(r.checked for r in reports),
            "rebuilt": sum(r.rebuilt for r in reports),
            "relinked": sum(r.relinked for r in reports),
            "embedded": sum(r.embedded for r in reports),
            "seconds": round(reindex_s, 3),
        },
        "model_seconds_same_texts": round(model_s, 3),
        "texts_to_embed": sum(len(t) for t in todo),
        "ratio_reindex_to_model": round(reindex_s / model_s, 3) if model_s > 0 else None,
        "partition_rows": {"before": rows_old, "after": rows_after, "fresh": rows_fresh},
        "top10_same_as_fresh": {
            "before": sum(b == f for b, f in zip(before, fresh, strict=True)),
            "after": sum(a == f for a, f in zip(after, fresh, strict=True)),
        },
    }


def _store(path: Path, settings: Settings) -> SQLiteStore:
    return SQLiteStore(path, reply_weight=settings.index_reply_weight)


def _texts_to_embed(path: Path, settings: Settings, data: _Dataset) -> list[list[str]]:
    """Per tenant, the distinct texts the settings embed for its events that the store lacks
    (the embedding cache is per tenant, so a reindex embeds them tenant by tenant)."""
    store = _store(path, settings)
    try:
        model = store.model()
        assert model is not None
        out = []
        for tenant in data.tenants:
            texts = embedded_texts([r for r in data.rows if r[0].tenant == tenant], settings)
            by_hash = {content_hash(t): t for t in texts}
            out.append([by_hash[h] for h in store.missing_vectors(tenant, model, list(by_hash))])
        return out
    finally:
        store.close()


def _rankings(
    path: Path, embedder: Embedder, settings: Settings, data: _Dataset
) -> tuple[list[list[str]], int]:
    """Each question's top 10 turns (by the dataset's turn ids), and the partition rows."""
    store = _store(path, settings)
    with Memory(store, embedder=embedder, settings=settings) as memory:
        rankings = [
            [
                str(h.metadata[data.turn_key])
                for h in memory.search(scope, text, k=10, now=now, kinds=TURNS)
            ]
            for scope, text, now in data.asked
        ]
        rows = sum(store.partition_status(tenant).rows for tenant in data.tenants)
        return rankings, rows


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        *heading(f"kenning bench reindex (batch {report['batch']})"),
        "A store with every message embedded whole, reindexed under the default settings, "
        "against a store ingested under them.",
        "",
    ]
    header = ["", "events checked / rebuilt / relinked", "texts embedded",
              "reindex s; the model alone on the same texts", "partition rows before / after / "
              "fresh", "top 10 equal to the fresh store's, before / after"]  # fmt: skip
    rows: list[list[object]] = []
    for r in report["datasets"]:
        re, rows_of, same = r["reindex"], r["partition_rows"], r["top10_same_as_fresh"]
        rows.append([
            f"{r['data']} ({r['turns']} turns, {r['tenants']} tenants)",
            f"{re['checked']} / {re['rebuilt']} / {re['relinked']}",
            re["embedded"],
            f"{re['seconds']:.2f}; {r['model_seconds_same_texts']:.2f} "
            f"(ratio {r['ratio_reindex_to_model']})",
            f"{rows_of['before']} / {rows_of['after']} / {rows_of['fresh']}",
            f"{same['before']} / {same['after']} of {r['questions']}",
        ])  # fmt: skip
    return "\n".join([*lines, *table(header, rows), ""])
