"""``kenning bench reindex``: a store written under older settings, rebuilt by ``reindex``,
against a store ingested under today's settings.

The LoCoMo turns are ingested twice into fresh SQLite files: once with every message embedded
whole (``unit_chars=0``: how kenning indexed before sentence units), once with the defaults.
The first is then reindexed under the defaults. Every question is searched in both (k=10, at
the conversation's last session date), before and after the reindex, and the bench counts the
questions whose top 10 are the same as the fresh store's. It times the reindex against the
model embedding the same texts in the same batches, in the same process, so the ratio is
what the rebuild adds to the model's own work.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from kenning.bench import locomo_bench as loc
from kenning.bench.datasets import load_locomo
from kenning.bench.harness import TURNS, ingest_rows, safe_id
from kenning.bench.report import table
from kenning.bench.vector_cache import CachedEmbedder
from kenning.embed.base import Embedder
from kenning.indexing import index_plan
from kenning.memory import Memory
from kenning.records import Scope
from kenning.settings import Settings
from kenning.store.sqlite.store import SQLiteStore

__all__ = ["run_reindex_bench"]


def run_reindex_bench(
    data: Path, out: Path, *, embedder: Embedder, batch: int = 512
) -> dict[str, Any]:
    """Run the bench on a LoCoMo file; write ``report.json`` and ``report.md`` under *out*."""
    conversations, questions = load_locomo(data)
    rows = [row for conv in conversations for row in loc._rows(conv)]
    now_of = {c.id: loc.conversation_now(c) for c in conversations}
    asked = [q for q in questions if q.evidence_turns]
    settings = Settings(track_access=False)
    old_settings = Settings(track_access=False, unit_chars=0)
    with tempfile.TemporaryDirectory(prefix="kenning-reindex-") as tmp:
        old_path, fresh_path = Path(tmp, "old.db"), Path(tmp, "fresh.db")
        memo = CachedEmbedder(embedder)  # each text embedded once, but for the timed pass
        with Memory(_store(old_path, old_settings), embedder=memo, settings=old_settings) as m:
            ingest_rows(m, rows, batch=batch)
        before, rows_old = _rankings(old_path, memo, settings, asked, now_of)
        # The texts the reindex will embed, embedded by the model alone in the same batches:
        # the baseline the rebuild is measured against.
        todo = _texts_to_embed(old_path, settings)
        started = time.perf_counter()
        for start in range(0, len(todo), batch):
            embedder.embed(todo[start : start + batch])
        model_s = time.perf_counter() - started
        with Memory(_store(old_path, settings), embedder=embedder, settings=settings) as m:
            started = time.perf_counter()
            report = m.reindex(loc.TENANT, batch=batch)
            reindex_s = time.perf_counter() - started
        after, rows_after = _rankings(old_path, memo, settings, asked, now_of)
        with Memory(_store(fresh_path, settings), embedder=memo, settings=settings) as m:
            ingest_rows(m, rows, batch=batch)
        fresh, rows_fresh = _rankings(fresh_path, memo, settings, asked, now_of)
    result = {
        "bench": "reindex",
        "data": data.name,
        "turns": len(rows),
        "questions": len(asked),
        "batch": batch,
        "reindex": {
            "checked": report.checked,
            "rebuilt": report.rebuilt,
            "relinked": report.relinked,
            "embedded": report.embedded,
            "seconds": round(reindex_s, 3),
        },
        "model_seconds_same_texts": round(model_s, 3),
        "texts_to_embed": len(todo),
        "ratio_reindex_to_model": round(reindex_s / model_s, 3) if model_s > 0 else None,
        "partition_rows": {"before": rows_old, "after": rows_after, "fresh": rows_fresh},
        "top10_same_as_fresh": {
            "before": sum(b == f for b, f in zip(before, fresh, strict=True)),
            "after": sum(a == f for a, f in zip(after, fresh, strict=True)),
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "report.md").write_text(_markdown(result))
    return result


def _store(path: Path, settings: Settings) -> SQLiteStore:
    return SQLiteStore(path, reply_weight=settings.index_reply_weight)


def _texts_to_embed(path: Path, settings: Settings) -> list[str]:
    """The distinct texts the default settings embed for the store's events that it lacks."""
    store = _store(path, settings)
    try:
        model = store.model()
        assert model is not None
        plans = [
            index_plan(
                layout.event, mode=settings.embed_text, chunk_chars=settings.chunk_chars,
                unit_chars=settings.index_unit_chars,
            ).texts
            for layout in store.index_layouts(loc.TENANT, after=0, limit=10**9)
        ]  # fmt: skip
        texts = {h: t for plan in plans for h, t in plan.items()}
        return sorted({texts[h] for h in store.missing_vectors(loc.TENANT, model, list(texts))})
    finally:
        store.close()


def _rankings(
    path: Path,
    embedder: Embedder,
    settings: Settings,
    asked: list[Any],
    now_of: dict[str, Any],
) -> tuple[list[list[str]], int]:
    """Each question's top 10 turns (LoCoMo dia ids), and the tenant's partition rows."""
    store = _store(path, settings)
    with Memory(store, embedder=embedder, settings=settings) as memory:
        rankings = [
            [
                str(h.metadata["dia_id"])
                for h in memory.search(
                    Scope(loc.TENANT, safe_id(q.conversation_id)), q.text, k=10,
                    now=now_of[q.conversation_id], kinds=TURNS,
                )
            ]
            for q in asked
        ]  # fmt: skip
        return rankings, store.partition_status(loc.TENANT).rows


def _markdown(r: dict[str, Any]) -> str:
    re = r["reindex"]
    rows: list[list[object]] = [
        ["events checked / rebuilt / relinked", f"{re['checked']} / {re['rebuilt']} / "
         f"{re['relinked']}"],
        ["texts embedded", str(re["embedded"])],
        ["reindex seconds; the model alone on the same texts", f"{re['seconds']:.2f}; "
         f"{r['model_seconds_same_texts']:.2f} (ratio {r['ratio_reindex_to_model']})"],
        ["partition rows: before / after / fresh ingest", "{before} / {after} / {fresh}".format(
            **r["partition_rows"])],
        ["questions whose top 10 equal the fresh store's: before / after", "{} / {} of {}".format(
            r["top10_same_as_fresh"]["before"], r["top10_same_as_fresh"]["after"],
            r["questions"])],
    ]  # fmt: skip
    return (
        f"# kenning bench reindex ({r['data']}, {r['turns']} turns, batch {r['batch']})\n\n"
        "A store with every message embedded whole, reindexed under the default settings, "
        "against a store ingested under them.\n\n" + "\n".join(table(["", "value"], rows)) + "\n"
    )
