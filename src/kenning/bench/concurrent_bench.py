"""``kenning bench store --concurrent-writer``: a searching process beside a writing one.

The reader searches a database file while another process appends to it. Reported: the
reader's latency alone, beside each kind of writer, and alone again (so noise on a shared
machine shows), how many times the reader had to load its tenant partition (once: later
writes arrive as deltas), and how many of the writer's events the reader saw.

Two writers: one that embeds with the real model (the usual ingest; on a small machine it
competes for the CPU) and one without a model (only the database and the lexical index), which
isolates what sharing the file costs from what sharing the processor costs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kenning.bench.metrics import percentiles
from kenning.embed.base import Embedder
from kenning.memory import Memory
from kenning.records import Scope
from kenning.settings import Settings
from kenning.store.sqlite.store import SQLiteStore

__all__ = ["run_concurrent_phase"]

_WRITER = textwrap.dedent(
    """
    import sys, time
    from kenning import Memory, Scope, Settings
    path, stop_file, model = sys.argv[1], sys.argv[2], sys.argv[3] == "model"
    memory = Memory.open(path, **({} if model else {"embedder": None}))
    i = 0
    while True:
        try:
            open(stop_file).close()
            break
        except FileNotFoundError:
            pass
        memory.ingest([
            (Scope("bench", f"writer-{i % 50}", f"writer-s{i % 500}"),
             {"role": "user", "content": f"writer note {i}: my order W-{i} arrived damaged"})
            for i in range(i, i + 8)
        ])
        if i == 0:
            print("writing", flush=True)
        i += 8
        time.sleep(0.005)
    memory.close()
    print(i)
    """
)


def _search_times(memory: Memory, queries: Sequence[str]) -> list[float]:
    scope = Scope("bench")
    out = []
    for query in queries:
        started = time.perf_counter()
        memory.search(scope, query, k=10)
        out.append((time.perf_counter() - started) * 1000)
    return out


def _with_writer(
    db: Path, memory: Memory, queries: Sequence[str], *, model: bool
) -> tuple[list[float], int]:
    stop = db.with_name(f"stop-{os.getpid()}-{model}")
    stop.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db), str(stop), "model" if model else "none"],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        # Timing starts once the writer has loaded and written its first batch (a fixed
        # wait timed a loading writer on a busy machine: none of its events were written).
        assert writer.stdout is not None
        if writer.stdout.readline().strip() != "writing":
            raise RuntimeError("the concurrent writer exited before writing")
        times = _search_times(memory, queries)
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=120)
        stop.unlink(missing_ok=True)
    return times, int(out.strip() or 0)


def run_concurrent_phase(
    db: Path, embedder: Embedder, queries: Sequence[Sequence[str]], settings: Settings
) -> dict[str, Any]:
    """Time the reader's searches alone and beside each writer over the file *db*.

    *queries* holds one list per phase (alone, beside each writer, alone again): distinct
    queries, so no phase is served from the query-vector cache another one filled.
    """
    memory = Memory.open(db, embedder=embedder, settings=settings)
    store = memory.store
    assert isinstance(store, SQLiteStore)
    try:
        store.vector_index("bench", wait_s=None)
        for query in queries[0][:10]:
            memory.search(Scope("bench"), f"warm-up {query}")  # partition, model, caches
        # Facts still being read from the ingested events would land during the phases and
        # be counted as rows the writers wrote.
        memory.wait_for_facts()
        before = store.partition_status("bench")
        rows_before = before.rows
        phases: dict[str, Any] = {}
        phases["alone"] = percentiles(_search_times(memory, queries[0]))
        writers = (("writer_without_model", False), ("writer_with_model", True))
        for (name, model), texts in zip(writers, queries[1:3], strict=True):
            times, written = _with_writer(db, memory, texts, model=model)
            phases[name] = {**percentiles(times), "events_written": written}
        phases["alone_again"] = percentiles(_search_times(memory, queries[3]))
        # One more search sees whatever the writers committed last.
        memory.search(Scope("bench"), "one more search")
        after = store.partition_status("bench")
        written = sum(p["events_written"] for n, p in phases.items() if n.startswith("writer"))
        return {
            "queries_per_phase": len(queries[0]),
            "latency_ms": phases,
            "p95_ratio_with_model_writer": round(
                phases["writer_with_model"]["p95"] / phases["alone"]["p95"], 2
            ),
            "p95_ratio_without_model_writer": round(
                phases["writer_without_model"]["p95"] / phases["alone"]["p95"], 2
            ),
            "reader_partition_loads": after.loads - before.loads,
            "reader_catch_ups": after.catch_ups - before.catch_ups,
            "events_written_by_writers": written,
            "events_seen_by_reader": after.rows - rows_before,
        }
    finally:
        memory.close()


def concurrent_markdown(result: dict[str, Any]) -> list[str]:
    """Report lines of the concurrent phase."""
    lat = result["latency_ms"]
    lines = [
        "",
        "## A second process writing to the same file",
        "",
        "The reader searches the tenant (k=10, query embedding included) while another process "
        "appends events to it.",
        "",
        "| reader | p50 ms | p95 ms | p99 ms | writer events |",
        "|---|---|---|---|---|",
    ]
    for name in ("alone", "writer_without_model", "writer_with_model", "alone_again"):
        p = lat[name]
        written = p.get("events_written", "")
        lines.append(
            f"| {name.replace('_', ' ')} | {p['p50']:.2f} | {p['p95']:.2f} | {p['p99']:.2f} "
            f"| {written} |"
        )
    lines += [
        "",
        f"p95 beside the writer / alone: {result['p95_ratio_without_model_writer']} without a "
        f"model, {result['p95_ratio_with_model_writer']} with one (2 cores: the model writer "
        "takes one). Reader partition loads during the run: "
        f"{result['reader_partition_loads']} (deltas applied: {result['reader_catch_ups']}); "
        f"events written {result['events_written_by_writers']}, seen by the reader "
        f"{result['events_seen_by_reader']}.",
    ]
    return lines
