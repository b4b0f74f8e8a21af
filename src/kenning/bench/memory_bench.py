"""``kenning bench memory``: the peak RSS of a process serving a store, with the model loaded.

Each stage runs in a fresh child process (``python -m kenning.bench.memory_bench``) that sets
itself up as ``kenning serve`` does (:mod:`kenning.runtime`) and reports its own peak RSS
(``VmHWM``), its RSS after each step and the peak reached by then:

- ``model``: the MiniLM model loaded and one text embedded, the model held;
- ``locomo``: a LoCoMo file ingested as an agent loop writes it (one ``add_events`` per
  turn, fact extraction on), background work awaited, then a search and an assemble per
  conversation (the first search loads the partition, the first assemble the token counter);
- ``events:N``: *N* synthetic events ingested in batches of 256, then searches and an
  assemble. Their vectors come from the vector cache file (``--vector-cache``; texts missing
  from it are embedded and added) or, without one, are unit vectors drawn from each text's
  hash, so a 100k run embeds no text: RSS does not depend on the vectors' values. The model
  is loaded either way, and embeds every search query.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kenning.bench.report import heading, table, write_files
from kenning.embed.base import DelegatingEmbedder, Embedder, Matrix
from kenning.errors import InvalidInput
from kenning.records import NewEvent, Scope

__all__ = ["TARGET_MB", "run_memory_bench"]

#: The issue's bound for the LoCoMo stage (issue 32).
TARGET_MB = 350.0
_SYSTEM = "You are a helpful assistant."


def _status_mb() -> dict[str, float]:
    """This process's VmRSS and VmHWM (peak) in MB, from /proc (Linux)."""
    out: dict[str, float] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = round(int(value.split()[0]) / 1024, 1)
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out = {"VmRSS": round(peak, 1), "VmHWM": round(peak, 1)}
    return out


class _HashedVectors(DelegatingEmbedder):
    """The loaded model's identity; each text's vector a unit vector drawn from its hash."""

    def embed(self, texts: Sequence[str]) -> Matrix:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())
            row = np.random.default_rng(seed).standard_normal(self.dimension)
            rows.append(row / np.linalg.norm(row))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dimension)


class _Checkpoints:
    """RSS after each step, and the peak so far: the step whose peak rises set it."""

    def __init__(self) -> None:
        self.rss: dict[str, float] = {}
        self.peak: dict[str, float] = {}

    def __call__(self, step: str) -> None:
        status = _status_mb()
        self.rss[step] = status["VmRSS"]
        self.peak[step] = status["VmHWM"]


def _model() -> Embedder:
    from kenning.embed.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    return embedder


def _stage_locomo(data: Path, work: Path, mark: _Checkpoints) -> dict[str, Any]:
    from kenning.bench import locomo_bench as loc
    from kenning.bench.datasets import load_locomo
    from kenning.memory import Memory
    from kenning.store.sqlite.store import SQLiteStore

    embedder = _model()
    mark("model")
    conversations, _ = load_locomo(data)
    memory = Memory(SQLiteStore(work / "memory.db"), embedder=embedder)
    started = time.perf_counter()
    turns = 0
    try:
        for conversation in conversations:
            for scope, event in loc._rows(conversation):
                memory.add_events(scope, [event])
                turns += 1
        memory.wait_for_facts()
        rate = turns / (time.perf_counter() - started)
        mark("ingested")
        # The first search loads the partition, the first assemble the token counter.
        for i, conversation in enumerate(conversations):
            scope, _ = loc._rows(conversation)[-1]
            memory.search(Scope(scope.tenant, scope.user), "what did they talk about last time?")
            if i == 0:
                mark("first search")
        mark("searched")
        for i, conversation in enumerate(conversations):
            scope, _ = loc._rows(conversation)[-1]
            memory.assemble(scope, budget_tokens=2000, model="gpt-4o", system=_SYSTEM)
            if i == 0:
                mark("first assemble")
        mark("assembled")
    finally:
        memory.close()
    return {"turns": turns, "turns_per_s": round(rate, 1)}


def _stage_events(
    count: int, work: Path, vector_cache: Path | None, mark: _Checkpoints
) -> dict[str, Any]:
    from kenning.bench.synthetic import synthetic_events, synthetic_queries
    from kenning.bench.vector_cache import CachedEmbedder
    from kenning.memory import Memory
    from kenning.store.sqlite.store import SQLiteStore

    model = _model()
    mark("model")
    embedder = (
        CachedEmbedder(model, vector_cache) if vector_cache is not None else _HashedVectors(model)
    )
    memory = Memory(SQLiteStore(work / "memory.db"), embedder=embedder)
    users: set[str] = set()
    try:
        batch: list[tuple[Scope, NewEvent]] = []
        for ev in synthetic_events(count):
            users.add(ev.user)
            batch.append(ev.item())
            if len(batch) == 256:
                memory.ingest(batch)
                batch = []
        memory.ingest(batch)
        memory.wait_for_facts()
        mark("ingested")
        # Queries go through the model itself, as a served search's do.
        searcher = Memory(memory.store, embedder=model, settings=memory.settings)
        for query, user in zip(synthetic_queries(20), sorted(users), strict=False):
            searcher.search(Scope("bench", user), query)
        searcher.search(Scope("bench"), "refund for a broken order")
        mark("searched")
        last = Scope("bench", ev.user, ev.session)
        memory.assemble(last, budget_tokens=2000, model="gpt-4o", system=_SYSTEM)
        mark("assembled")
    finally:
        memory.close()
        if isinstance(embedder, CachedEmbedder):
            embedder.close()
    return {"events": count, "vectors": "cache file" if vector_cache else "hashed"}


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one stage in this (fresh) process and report its RSS."""
    from kenning.runtime import configure_heap

    configure_heap()
    mark = _Checkpoints()
    mark("start")
    stage = str(spec["stage"])
    with tempfile.TemporaryDirectory(prefix="kenning-memory-") as tmp:
        if stage == "model":
            model = _model()
            mark("model")  # while the model is held, as a serving process holds it
            facts: dict[str, Any] = {"model": model.model_id}
        elif stage == "locomo":
            facts = _stage_locomo(Path(spec["data"]), Path(tmp), mark)
        else:
            cache = spec.get("vector_cache")
            facts = _stage_events(
                int(stage.split(":")[1]), Path(tmp), Path(cache) if cache else None, mark
            )
    return {
        "stage": stage, "peak_rss_mb": _status_mb()["VmHWM"], "rss_mb": mark.rss,
        "peak_mb": mark.peak, **facts,
    }  # fmt: skip


def _run_child(spec: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "kenning.bench.memory_bench", json.dumps(spec)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the {spec['stage']} stage failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _markdown(report: dict[str, Any]) -> str:
    rows = []
    for run in report["stages"]:
        steps = ", ".join(f"{k} {v:g}" for k, v in run["rss_mb"].items())
        peaks = ", ".join(f"{k} {v:g}" for k, v in run.get("peak_mb", {}).items())
        rows.append([run["stage"], f"{run['peak_rss_mb']:g}", steps, peaks])
    lines = [
        *heading("kenning bench memory"),
        "Peak RSS (VmHWM) of one fresh process per stage, set up as `kenning serve` is; "
        "RSS after each step, and the peak so far. LoCoMo: one `add_events` per turn, then a "
        f"search and an assemble per conversation. Target for LoCoMo: <= {TARGET_MB:g} MB.",
        "",
        *table(["stage", "peak RSS MB", "RSS MB after each step", "peak MB so far"], rows),
    ]
    return "\n".join(lines) + "\n"


def run_memory_bench(
    out: Path,
    *,
    data: Path | None,
    sizes: Sequence[int] = (10_000, 100_000),
    vector_cache: Path | None = None,
) -> dict[str, Any]:
    """Run the stages (``model``; ``locomo`` when *data* is given; ``events:N`` for each of
    *sizes*), each in a fresh child process; write ``report.json`` and ``report.md``.

    Raises:
        InvalidInput: a size is not positive.
    """
    if any(n < 1 for n in sizes):
        raise InvalidInput("every size must be a positive number of events")
    specs: list[dict[str, Any]] = [{"stage": "model"}]
    if data is not None:
        specs.append({"stage": "locomo", "data": str(data)})
    cache = str(vector_cache) if vector_cache is not None else None
    specs += [{"stage": f"events:{n}", "vector_cache": cache} for n in sizes]
    stages = []
    for spec in specs:
        stages.append(_run_child(spec))
        print(json.dumps(stages[-1]), flush=True)
    report = {"target_mb": TARGET_MB, "stages": stages}
    write_files(out, report, _markdown(report))
    return report


if __name__ == "__main__":
    print(json.dumps(_child(json.loads(sys.argv[1]))))
