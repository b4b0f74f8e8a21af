"""``kenning bench pins`` and ``kenning bench assemble``: the working context, measured.

``pins``: seeded support threads (:mod:`kenning.bench.support_threads`) are ingested through the
public API in chunks; after each chunk a window is assembled and every required value (order
id, amount, currency, approval id, obligation) is looked for in it. A field survives in a thread
when it is in every window. Systems, all at the same budget:

- ``kenning``: ``Memory.assemble`` with its defaults (pins, summaries, tail);
- ``summary_only``: the same compaction and summaries, with the pins tier capped to nothing;
- ``sliding_window``: the system policy plus the newest whole messages that fit.

Retrieval is off for all three, so only what the window keeps by itself is measured.

``assemble``: the latency of ``Memory.assemble`` on sessions of 100 to 100k events, without
and with retrieval, after the session has been compacted once (reported as setup).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kenning.bench.harness import erase_bench_tenants
from kenning.bench.metrics import percentiles
from kenning.bench.report import heading, table, write_files
from kenning.bench.support_threads import APPROVAL_TOOL, SupportThread, generate_thread
from kenning.context.assembler import ContextSettings
from kenning.context.window import Tier, TierCaps
from kenning.embed.base import Embedder
from kenning.memory import Memory
from kenning.records import Scope, TenantPolicy
from kenning.settings import Settings
from kenning.store.sqlite.store import SQLiteStore
from kenning.tokens.chat import count_messages, message_tokens
from kenning.tokens.messages import event_messages
from kenning.tokens.routing import tokenizer_for

__all__ = ["run_assemble_bench", "run_pins_bench", "sliding_window"]

MODEL = "gpt-4o"
SYSTEM = "You are a support agent. Use the exact ids and amounts recorded in this context."
BUDGETS = (1_000, 2_000, 4_000, 8_000)
CHECKPOINTS = 6
SYSTEMS = ("kenning", "summary_only", "sliding_window")
ASSEMBLE_COLUMNS = ("p50_ms", "p95_ms", "p99_ms", "first_call_s", "window_tokens", "vector_index")


def _window_settings(system: str) -> Settings:
    context = ContextSettings(retrieve=False, background=False)
    if system == "summary_only":
        context = replace(context, caps=replace(TierCaps(), pins=0.0))
    return Settings(context=context)


def sliding_window(
    memory: Memory, scope: Scope, budget: int, *, policy: str = SYSTEM
) -> list[dict[str, Any]]:
    """The sliding-window baseline: the system *policy* and the newest whole messages that
    fit in *budget*."""
    tokenizer = tokenizer_for(MODEL)
    system = {"role": "system", "content": policy}
    used = count_messages(tokenizer, [system])
    tail: list[dict[str, Any]] = []
    for event in reversed(memory.get_session(scope)):
        messages = event_messages(event)
        cost = sum(message_tokens(tokenizer, m) for m in messages)
        if used + cost > budget:
            break
        used += cost
        tail[:0] = messages
    return [system, *tail]


def _thread_survival(
    memory: Memory, system: str, thread: SupportThread, index: int
) -> dict[str, bool]:
    scope = Scope("pins", f"user{index}", f"thread{index}")
    memory.add_events(scope, list(thread.head))
    chunk = max(1, len(thread.chatter) // CHECKPOINTS)
    alive = {field.name: True for field in thread.required}
    for start in range(0, len(thread.chatter), chunk):
        memory.add_events(scope, list(thread.chatter[start : start + chunk]))
        if system == "sliding_window":
            messages = sliding_window(memory, scope, thread.budget)
        else:
            window = memory.assemble(scope, budget_tokens=thread.budget, model=MODEL, system=SYSTEM)
            if window.tokens > thread.budget:
                raise AssertionError(f"window over budget: {window.tokens} > {thread.budget}")
            messages = [dict(m) for m in window.messages]
        text = "\n".join(m.get("content") or "" for m in messages)
        for field in thread.required:
            alive[field.name] = alive[field.name] and any(r in text for r in field.renderings)
    return alive


def run_pins_bench(out: Path, *, threads: int = 200, seed: int = 0) -> dict[str, Any]:
    """Pin survival of kenning against a sliding window and summary-only compaction."""
    out.mkdir(parents=True, exist_ok=True)
    data = [generate_thread(seed + i, budget=BUDGETS[i % len(BUDGETS)]) for i in range(threads)]
    results: dict[str, list[dict[str, bool]]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for system in SYSTEMS:
            with Memory.open(
                Path(tmp) / f"{system}.db", embedder=None, settings=_window_settings(system)
            ) as memory:
                # The support desk's host trusts its approval tool: its approvals are pins.
                trusted = TenantPolicy(authoritative_tools=(APPROVAL_TOOL,))
                memory.retention.set_policy("pins", trusted)
                results[system] = [
                    _thread_survival(memory, system, thread, i)
                    for i, thread in enumerate(tqdm(data, desc=system, unit="thread"))
                ]
    fields = [f.name for f in data[0].required]

    def rate(rows: Sequence[dict[str, bool]]) -> float:
        return sum(sum(r.values()) for r in rows) / max(1, sum(len(r) for r in rows))

    report: dict[str, Any] = {
        "bench": "pins",
        "threads": threads,
        "seed": seed,
        "budgets": list(BUDGETS),
        "checkpoints_per_thread": CHECKPOINTS,
        "events": sum(len(t.head) + len(t.chatter) for t in data),
        "pin_survival": {s: round(rate(results[s]), 4) for s in SYSTEMS},
        "by_budget": {
            str(b): {
                s: round(
                    rate([r for r, t in zip(results[s], data, strict=True) if t.budget == b]), 4
                )
                for s in SYSTEMS
            }
            for b in BUDGETS
        },
        "by_field": {
            f: {s: round(sum(r[f] for r in results[s]) / threads, 4) for s in SYSTEMS}
            for f in fields
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_files(out, report, _pins_markdown(report))
    return report


def _pins_markdown(report: dict[str, Any]) -> str:
    budgets = report["budgets"]
    by_budget = [
        [
            system,
            report["pin_survival"][system],
            *[report["by_budget"][str(b)][system] for b in budgets],
        ]
        for system in SYSTEMS
    ]
    by_field = [
        [field, *[values[s] for s in SYSTEMS]] for field, values in report["by_field"].items()
    ]
    lines = [
        *heading("kenning bench pins"),
        f"{report['threads']} seeded support threads ({report['events']} events), budgets "
        f"{', '.join(map(str, budgets))} tokens ({MODEL}), a window after each of "
        f"{report['checkpoints_per_thread']} chatter chunks. A field survives when it is in "
        "every window of its thread. Retrieval off.",
        "",
        *table(["system", "pin survival", *[f"{b} tok" for b in budgets]], by_budget),
        "",
        *table(["field", *SYSTEMS], by_field),
        "",
        f"Run time: {report['seconds']} s.",
    ]
    return "\n".join(lines) + "\n"


def _session_events(n: int, seed: int) -> list[dict[str, Any]]:
    head = list(generate_thread(seed, budget=BUDGETS[-1]).head)
    pool = generate_thread(seed + 1, budget=BUDGETS[-1], chatter_tokens_per_budget=40).chatter
    events = head[: min(n, len(head))]
    i = 0
    while len(events) < n:
        events.append(dict(pool[i % len(pool)]))
        i += 1
    return events


def _scope(size: int, tenant: str = "bench") -> Scope:
    return Scope(tenant, "user", f"session{size}")


def run_assemble_bench(
    out: Path,
    *,
    embedder: Embedder,
    sizes: Sequence[int] = (100, 1_000, 10_000, 100_000),
    calls: int = 200,
    budget: int = 8_000,
    seed: int = 0,
    store_url: str | None = None,
) -> dict[str, Any]:
    """Assemble latency per session size, retrieval excluded and included; on PostgreSQL
    (*store_url*) also the round trips, statements and transactions of one window."""
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, Any] = {}
    tenant = "bench"
    if store_url is not None:
        erase_bench_tenants(store_url, [tenant])  # a run starts from nothing
    with tempfile.TemporaryDirectory() as tmp:
        places: dict[int, str | Path] = {
            size: store_url or Path(tmp) / f"s{size}.db" for size in sizes
        }
        for size in sizes:
            events = _session_events(size, seed)
            started = time.perf_counter()
            with Memory.open(places[size], embedder=embedder) as memory:
                for start in tqdm(range(0, size, 1_000), desc=f"ingest {size}", unit="k"):
                    memory.add_events(_scope(size, tenant), events[start : start + 1_000])
            rows[str(size)] = {"events": size, "ingest_s": round(time.perf_counter() - started, 2)}
        for label, retrieve in (("without_retrieval", False), ("with_retrieval", True)):
            settings = Settings(context=ContextSettings(retrieve=retrieve))
            memories = {
                s: Memory.open(places[s], embedder=embedder, settings=settings) for s in sizes
            }
            try:
                _time_windows(memories, rows, label, calls=calls, budget=budget, seed=seed,
                              tenant=tenant)  # fmt: skip
                if store_url is not None:
                    for size, memory in memories.items():
                        rows[str(size)][label]["wire"] = _wire(memory, _scope(size, tenant), budget)
            finally:
                for memory in memories.values():
                    memory.close()
    p99 = {s: rows[s]["without_retrieval"]["p99_ms"] for s in rows}
    targets: dict[str, Any] = {}
    if "10000" in p99:
        targets["p99_10k_without_retrieval_ms"] = {"value": p99["10000"], "target": 5.0,
                                                    "met": p99["10000"] <= 5.0}  # fmt: skip
    if "1000" in p99 and "100000" in p99:
        ratio = p99["100000"] / p99["1000"]
        targets["p99_100k_over_1k"] = {"value": round(ratio, 2), "target": 2.0, "met": ratio <= 2.0}
    report = {"bench": "assemble", "model": MODEL, "budget": budget, "calls": calls,
              "backend": "sqlite" if store_url is None else "postgresql",
              "sizes": rows, "targets": targets}  # fmt: skip
    write_files(out, report, _assemble_markdown(report))
    return report


def _time_windows(
    memories: dict[int, Memory], rows: dict[str, Any], label: str, *, calls: int, budget: int,
    seed: int, tenant: str,
) -> None:  # fmt: skip
    """Time *calls* windows per size into ``rows[size][label]``, after a first call that
    compacts (timed apart, as is the wait for a large tenant's vector index)."""
    retrieve = label == "with_retrieval"
    queries = [e["content"] for e in _session_events(400, seed + 7)[-200:]]
    for size, memory in memories.items():
        first = time.perf_counter()
        memory.assemble(_scope(size, tenant), budget_tokens=budget, model=MODEL, system=SYSTEM)
        memory.context.wait_for_compaction()
        index = "off"
        if retrieve and isinstance(memory.store, SQLiteStore):
            # A large tenant's HNSW index builds in the background: time after it.
            index = memory.store.vector_index(tenant, wait_s=None).state
        rows[str(size)][label] = {
            "first_call_s": round(time.perf_counter() - first, 2),
            "vector_index": index,
        }
    times: dict[int, list[float]] = {s: [] for s in memories}
    windows = {}
    # Round robin over the sizes, so the machine's noise falls on all of them alike.
    # Each call retrieves for a new query (no query-vector cache hits).
    for i in tqdm(range(calls), desc=label, unit="round"):
        for size, memory in memories.items():
            query = f"{queries[i % len(queries)]} (call {i}, size {size})"
            t0 = time.perf_counter()
            windows[size] = memory.assemble(
                _scope(size, tenant), budget_tokens=budget, model=MODEL, system=SYSTEM,
                query=query,
            )  # fmt: skip
            times[size].append((time.perf_counter() - t0) * 1_000)
    for size, window in windows.items():
        rows[str(size)][label].update(
            {
                **{f"{k}_ms": round(v, 3) for k, v in percentiles(times[size]).items()},
                "mean_ms": round(statistics.fmean(times[size]), 3),
                "window_tokens": window.tokens,
                "pressure": window.pressure.value,
                "summaries": window.tiers[Tier.SUMMARIES].included,
            }
        )


def _wire(memory: Memory, scope: Scope, budget: int) -> dict[str, dict[str, int]]:
    """What one window sends to PostgreSQL: with nothing new since the last window, and
    after a new turn (whose tokens the window counts first)."""
    from kenning.bench.round_trips import counting

    query = "what did we agree about the refund?"
    found: dict[str, dict[str, int]] = {}
    for case in ("unchanged", "after_a_turn"):
        if case == "after_a_turn":
            memory.add_events(scope, [{"role": "user", "content": "And the refund, any news?"}])
        with counting() as count:
            memory.assemble(scope, budget_tokens=budget, model=MODEL, system=SYSTEM, query=query)
        found[case] = {
            "round_trips": count.round_trips, "statements": count.statements,
            "transactions": count.transactions, "read_transactions": count.read_only,
        }  # fmt: skip
    return found


def _assemble_markdown(report: dict[str, Any]) -> str:
    lines = [
        *heading("kenning bench assemble"),
        f"`Memory.assemble` on {report.get('backend', 'sqlite')} for {report['model']} with a "
        f"{report['budget']}-token budget, "
        f"{report['calls']} calls per row (round robin over the sizes), after the session was "
        "compacted once (the first call, timed apart, which also waits for a large tenant's "
        "vector index). With retrieval, each call searches the user's memories for a new "
        "query, so the query embedding (the local model) is in every call.",
        "",
        *table(
            ["events", "retrieval", "p50 ms", "p95 ms", "p99 ms", "first call s",
             "window tokens", "vector index"],
            [[size, retrieval, *[row[label][key] for key in ASSEMBLE_COLUMNS]]
             for size, row in report["sizes"].items()
             for label, retrieval in (("without_retrieval", "no"), ("with_retrieval", "yes"))],
            cell=str,
        ),
    ]  # fmt: skip
    wire = [
        [size, retrieval, case, *counts.values()]
        for size, row in report["sizes"].items()
        for label, retrieval in (("without_retrieval", "no"), ("with_retrieval", "yes"))
        for case, counts in row[label].get("wire", {}).items()
    ]
    if wire:
        lines += ["", "What one window sends to PostgreSQL (the calling thread only):", ""]
        lines += table(
            ["events", "retrieval", "case", "round trips", "statements", "transactions",
             "read transactions"], wire, cell=str,
        )  # fmt: skip
    lines += ["", "Targets:", ""]
    for name, t in report["targets"].items():
        lines.append(
            f"- {name}: {t['value']} (target {t['target']}, {'met' if t['met'] else 'NOT met'})"
        )
    return "\n".join(lines) + "\n"
