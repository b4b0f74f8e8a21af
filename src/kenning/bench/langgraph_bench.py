"""``kenning bench langgraph``: ``KenningStore`` beside LangGraph's own stores on LoCoMo.

Every turn of a LoCoMo file is one item (namespace ``("locomo", <conversation>)``, key the
turn's id, value ``{"text": "<speaker>: <turn>", ...}``, indexed on ``text``); every question
with evidence is one search of its conversation's namespace (``limit=k``). Recall@k is scored
as ``kenning bench locomo`` scores turns (the share of the question's evidence turns among the
first k). The stores run one after the other in one process, with the same embedding function:
kenning's MiniLM model behind a memo that is filled first, so put rates and search latencies
measure the stores and the embedding cost is reported once, apart. Puts go in batches of
*batch* items through ``store.batch``; each search is timed alone.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from kenning.bench.datasets import LOCOMO_CATEGORIES, Conversation, Question, load_locomo
from kenning.bench.harness import safe_id
from kenning.bench.metrics import mean, percentiles, recall_fraction_at_k
from kenning.bench.report import heading, write_files
from kenning.bench.split import Part, in_part
from kenning.embed.base import Embedder
from kenning.integrations.langgraph import KenningStore
from kenning.memory import Memory
from kenning.records import Scope

__all__ = ["run_langgraph_bench"]

TENANT = "bench-langgraph"
Embed = Callable[[list[str]], list[list[float]]]


def _memo_embed(embedder: Embedder, texts: Sequence[str]) -> tuple[Embed, float]:
    """An embedding function serving *texts* (embedded now, in batches) from a memo, and the
    seconds the embedding took; a text outside the memo is embedded when asked."""
    memo: dict[str, list[float]] = {}
    started = time.perf_counter()
    unique = list(dict.fromkeys(texts))
    for start in range(0, len(unique), 256):
        part = unique[start : start + 256]
        memo.update(zip(part, embedder.embed(part).tolist(), strict=True))
    seconds = time.perf_counter() - started

    def embed(batch: list[str]) -> list[list[float]]:
        missing = [t for t in batch if t not in memo]
        if missing:
            memo.update(zip(missing, embedder.embed(missing).tolist(), strict=True))
        return [memo[t] for t in batch]

    return embed, seconds


def _items(conversations: Sequence[Conversation]) -> list[PutOp]:
    return [
        PutOp(("locomo", safe_id(conv.id)), turn.id,
              {"text": f"{turn.speaker}: {turn.text}", "speaker": turn.speaker,
               "session": turn.session_id, "at": turn.at.isoformat()})
        for conv in conversations for turn in conv.turns
    ]  # fmt: skip


@contextlib.contextmanager
def _stores(
    embed: Embed, dims: int, workdir: Path, store_url: str | None
) -> Iterator[dict[str, BaseStore | str]]:
    """The stores side by side (a store that cannot be built is a string saying why)."""
    index: Any = {"dims": dims, "embed": embed, "fields": ["text"]}
    location = store_url or str(workdir / "kenning.db")
    memory = Memory.open(location, embedder=None)
    memory.forget(Scope(TENANT))  # a database kept from an earlier run starts empty
    stores: dict[str, BaseStore | str] = {
        "kenning": KenningStore(memory, tenant=TENANT, index=index, own_memory=True),
        "langgraph_inmemory": InMemoryStore(index=index),
    }
    with contextlib.closing(_sqlite_connection(workdir / "langgraph.db")) as conn:
        stores["langgraph_sqlite"] = _sqlite_store(conn, embed, dims)
        try:
            yield stores
        finally:
            store = stores["kenning"]
            assert isinstance(store, KenningStore)
            store.close()


def _sqlite_connection(path: Path) -> Any:
    """A connection for LangGraph's SqliteStore, which loads the sqlite-vec extension: the
    standard library's when this Python can load extensions (a pyenv build cannot), else
    pysqlite3's (``kenning[bench]``); None when neither can."""
    import importlib
    import sqlite3

    module: Any = sqlite3
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        try:
            module = importlib.import_module("pysqlite3.dbapi2")
        except ImportError:
            return None
    return module.connect(str(path), check_same_thread=False, isolation_level=None)


def _sqlite_store(conn: Any, embed: Embed, dims: int) -> BaseStore | str:
    """LangGraph's SqliteStore on *conn* (the same embedding, its own ``text_fields`` key), or
    why it cannot run here."""
    if conn is None:
        return "this Python's sqlite3 cannot load extensions: pip install pysqlite3-binary"
    try:
        from langgraph.store.sqlite import SqliteStore
    except ImportError as exc:  # the extra that brings it is not installed
        return f"not installed: pip install 'kenning[langgraph]' ({exc})"
    index: Any = {"dims": dims, "embed": embed, "text_fields": ["text"]}
    store = SqliteStore(conn, index=index)
    store.setup()
    return store


def _measure(
    store: BaseStore, puts: Sequence[PutOp], questions: Sequence[Question], *, k: int,
    batch: int, progress: Callable[[str], None],
) -> dict[str, Any]:  # fmt: skip
    """Put every item, then run every question: recall@k, put rate, search latency."""
    started = time.perf_counter()
    for start in range(0, len(puts), batch):
        store.batch(puts[start : start + batch])
    put_s = time.perf_counter() - started
    progress(f"  {len(puts)} puts in {put_s:.1f} s")
    recalls: list[tuple[int, float]] = []
    latencies: list[float] = []
    for question in questions:
        namespace = ("locomo", safe_id(question.conversation_id))
        started = time.perf_counter()
        hits = store.search(namespace, query=question.text, limit=k)
        latencies.append((time.perf_counter() - started) * 1000)
        ranked = [hit.key for hit in hits]
        recalls.append(
            (question.category, recall_fraction_at_k(ranked, question.evidence_turns, k))
        )
    return {
        f"recall@{k}": round(mean(r for _, r in recalls), 4),
        "by_category": {
            f"{cat} {LOCOMO_CATEGORIES[cat]}": round(mean(r for c, r in recalls if c == cat), 4)
            for cat in sorted({c for c, _ in recalls})
        },
        "put": {"items": len(puts), "seconds": round(put_s, 3),
                "per_s": round(len(puts) / put_s, 1)},
        "search_ms": {name: round(value, 3) for name, value in percentiles(latencies).items()},
    }  # fmt: skip


def run_langgraph_bench(
    data: Path, out: Path, *, embedder: Embedder, k: int = 10, batch: int = 32,
    part: Part = "all", store_url: str | None = None,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:  # fmt: skip
    """Run the stores over the LoCoMo file *data*; write ``report.json`` and ``report.md``
    under *out* and return the report. *store_url*: KenningStore on this PostgreSQL database
    (its bench tenant is erased first) instead of a temporary SQLite file."""
    from kenning.bench.locomo_bench import locomo_parts

    conversations, questions = load_locomo(data)
    part_of = locomo_parts(conversations)
    conversations = [c for c in conversations if in_part(part_of[c.id], part)]
    questions = [
        q for q in questions if in_part(part_of[q.conversation_id], part) and q.evidence_turns
    ]
    puts = _items(conversations)
    texts = [str(op.value["text"]) for op in puts if op.value] + [q.text for q in questions]
    embed, embed_s = _memo_embed(embedder, texts)
    report: dict[str, Any] = {
        "dataset": "locomo", "data": str(data), "part": part,
        "conversations": len(conversations), "items": len(puts), "questions": len(questions),
        "k": k, "put_batch": batch, "kenning_backend": "postgresql" if store_url else "sqlite",
        "embedding": {"model": embedder.model_id, "texts": len(set(texts)),
                      "seconds": round(embed_s, 2),
                      "ms_per_text": round(embed_s * 1000 / max(1, len(set(texts))), 3)},
        "systems": {},
    }  # fmt: skip
    with (
        tempfile.TemporaryDirectory() as tmp,
        _stores(embed, embedder.dimension, Path(tmp), store_url) as stores,
    ):
        for name, store in stores.items():
            progress(name)
            report["systems"][name] = (
                {"skipped": store} if isinstance(store, str)
                else _measure(store, puts, questions, k=k, batch=batch, progress=progress)
            )  # fmt: skip
    report["vs_sqlite"] = _ratios(report["systems"], k)
    write_files(out, report, _markdown(report))
    return report


def _ratios(systems: dict[str, Any], k: int) -> dict[str, float]:
    """kenning's figures over SqliteStore's (put rate: higher is better; latency: lower)."""
    ours, theirs = systems.get("kenning", {}), systems.get("langgraph_sqlite", {})
    if "put" not in ours or "put" not in theirs:
        return {}
    return {
        f"recall@{k}": round(ours[f"recall@{k}"] / max(theirs[f"recall@{k}"], 1e-9), 3),
        "put_rate": round(ours["put"]["per_s"] / theirs["put"]["per_s"], 3),
        "search_p50": round(ours["search_ms"]["p50"] / theirs["search_ms"]["p50"], 3),
        "search_p95": round(ours["search_ms"]["p95"] / theirs["search_ms"]["p95"], 3),
    }


def _markdown(report: dict[str, Any]) -> str:
    k = report["k"]
    lines = [
        *heading(f"kenning bench langgraph ({report['data']}, part {report['part']})"),
        f"{report['items']} items (one per turn) in {report['conversations']} conversations, "
        f"{report['questions']} questions; puts in batches of {report['put_batch']}; KenningStore "
        f"on {report['kenning_backend']}. Embedding ({report['embedding']['model']}, the same "
        f"for every store, done once before): {report['embedding']['ms_per_text']} ms a text.",
        "", f"| store | recall@{k} | puts/s | search p50 ms | search p95 ms |",
        "|---|---|---|---|---|",
    ]  # fmt: skip
    for name, entry in report["systems"].items():
        if "skipped" in entry:
            lines.append(f"| {name} | {entry['skipped']} | | | |")
            continue
        lines.append(
            f"| {name} | {entry[f'recall@{k}']:.3f} | {entry['put']['per_s']:.0f} | "
            f"{entry['search_ms']['p50']:.2f} | {entry['search_ms']['p95']:.2f} |"
        )
    if report["vs_sqlite"]:
        ratios = ", ".join(f"{key} {value}x" for key, value in report["vs_sqlite"].items())
        lines += ["", f"KenningStore over SqliteStore: {ratios}."]
    return "\n".join(lines) + "\n"
