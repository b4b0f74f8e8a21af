"""``kenning bench ingest``: where a turn's write time goes, beside a peer and a baseline.

Every turn of a LoCoMo file is written as an agent loop writes it, with kenning's defaults,
into a fresh SQLite store (one search per conversation first, so the store's search partition
is loaded and kept current by each write, as it is in a loop that also reads). Systems, each
run in turn in one process with one shared :class:`~kenning.embed.minilm.MiniLMEmbedder`:

- ``kenning_event``: one ``add_events`` per turn, vectors deferred (the default,
  :mod:`kenning.vectors`); its time runs until every vector is stored (``Memory.flush``), and
  ``acknowledged`` rates count the loop alone;
- ``kenning_event_sync``: the same with ``Settings(defer_vectors=False)``: each call embeds
  its texts before its commit;
- ``kenning_session``: one ``add_events`` per session (all its turns);
- ``kenning_server`` (``--server``): one ``POST /v1/sessions/{id}/events`` per turn to a
  ``kenning serve`` process on loopback (its own model, one worker);
- ``baseline``: each turn embedded once, whole (``"<speaker>: <text>"``), one call per turn;
- ``langgraph_inmemory``: LangGraph's ``InMemoryStore``, one ``put`` per turn, indexed on the
  same text, its embedding function the same embedder.

The systems run *repeats* times, interleaved, and each figure is the median over the runs; the
ratio to LangGraph is the median of each run's ratio. A kenning row's time per turn is split by
:func:`kenning.telemetry.stage` timers: ``model`` (the write's embedding call), ``plan``
(sentence units, chunks), ``pins``, ``sql`` (the transaction and the vector look-up),
``index`` (the loaded partition's catch-up: lexical postings and vectors) and ``other``;
``facts`` is the background fact reading, which overlaps the loop, and ``drained`` rates count
the loop and the wait until fact reading is done. Token figures are exact, not timed: each
turn's index texts (as ingest plans them, repeated texts embedded once) are tokenized and
grouped into model calls as the embedder groups them. ``CPU ms/turn`` is the process's CPU
time (every thread) over the timed part, per turn: on a machine whose cores other work shares,
it moves less than the wall clock. The same stages are also counted in CPU time (the CPU of
the thread that ran each, until fact reading is drained): the wall split of a background
stage counts the time it waited for a core, its CPU split does not; ``rest`` is the process's
CPU outside the stages, mostly onnxruntime's own pool threads.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kenning.bench.datasets import Conversation, load_locomo
from kenning.bench.locomo_bench import TENANT
from kenning.bench.locomo_bench import _rows as locomo_rows
from kenning.bench.report import heading, table, write_files
from kenning.embed.minilm import MiniLMEmbedder
from kenning.indexing import embedding_text, index_plan
from kenning.memory import Memory
from kenning.records import NewEvent, Role, Scope
from kenning.settings import Settings
from kenning.telemetry import collect_stages

__all__ = ["run_ingest_bench"]

Rows = list[tuple[Scope, NewEvent]]
Sessions = list[Rows]
STAGES = ("model", "plan", "pins", "sql", "index", "other")
CPU_STAGES = ("model", "plan", "pins", "sql", "index", "facts", "rest")


def _sessions(conversations: Sequence[Conversation], limit: int | None) -> Sessions:
    """The turns as kenning writes them (``kenning bench locomo``'s rows), by session."""
    sessions: Sessions = []
    left = limit if limit is not None else -1
    for conv in conversations:
        for scope, event in locomo_rows(conv):
            if left == 0:
                return sessions
            left -= 1
            if not sessions or sessions[-1][0][0] != scope:
                sessions.append([])
            sessions[-1].append((scope, event))
    return sessions


@contextlib.contextmanager
def _memory(embedder: MiniLMEmbedder, sessions: Sessions, *, defer: bool) -> Iterator[Memory]:
    """A fresh SQLite memory whose users' search partition is loaded, and whose fact reader
    has read one turn (the parser loads once per process, not inside the first run)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(defer_vectors=defer)
        memory = Memory.open(str(Path(tmp) / "ingest.db"), embedder=embedder, settings=settings)
        try:
            warm = [{"role": "user", "content": "I moved to Lisbon in May. I work as a nurse."}]
            memory.add_events(Scope("warm", "warm", "warm"), warm)
            memory.wait_for_facts()
            for scope in {Scope(s.tenant, s.user) for s, _ in (rows[0] for rows in sessions)}:
                memory.search(scope, "warm up", k=1)
            yield memory
        finally:
            memory.close()


def _kenning(
    embedder: MiniLMEmbedder, sessions: Sessions, *, per_session: bool, defer: bool = True
) -> dict[str, Any]:
    """Write every turn (one call per turn or per session); time, stages, drained time. The
    time counts the wait until every deferred vector is stored (``Memory.flush``)."""
    turns = sum(len(rows) for rows in sessions)
    with _memory(embedder, sessions, defer=defer) as memory, collect_stages() as stages:
        cpu = time.process_time()
        started = time.perf_counter()
        for rows in sessions:
            if per_session:
                memory.add_events(rows[0][0], [event for _, event in rows])
            else:
                for scope, event in rows:
                    memory.add_events(scope, [event])
        acked_s = time.perf_counter() - started
        memory.flush()
        loop_s = time.perf_counter() - started
        cpu_s = time.process_time() - cpu
        memory.wait_for_facts()
        drained_s = time.perf_counter() - started
        drained_cpu_s = time.process_time() - cpu
        seconds, own = dict(stages.seconds), dict(stages.own_seconds)
        cpu_by_stage, own_cpu = dict(stages.cpu_seconds), dict(stages.own_cpu_seconds)
    # The index stage runs inside "store" on the write path and inside "facts" for facts'
    # rows: only the part inside "store" belongs to a turn's write.
    store, sql = seconds.get("store", 0.0), own.get("store", 0.0)
    split = {
        "model": seconds.get("model", 0.0), "plan": seconds.get("plan", 0.0),
        "pins": seconds.get("pins", 0.0), "index": store - sql, "sql": sql,
    }  # fmt: skip
    split["other"] = loop_s - sum(split.values())
    return {
        "turns": turns, "seconds": loop_s, "drained_seconds": drained_s,
        "acked_seconds": acked_s, "cpu_seconds": cpu_s,
        "ms_per_turn": {k: 1000 * v / turns for k, v in split.items()},
        "facts_ms_per_turn": 1000 * seconds.get("facts", 0.0) / turns,
        "cpu_split_ms": _cpu_split(cpu_by_stage, own_cpu, drained_cpu_s, turns),
    }  # fmt: skip


def _cpu_split(
    cpu: dict[str, float], own: dict[str, float], total_s: float, turns: int
) -> dict[str, float]:
    """CPU ms per turn by stage, each the CPU of the thread that ran it, up to the point fact
    reading is drained; ``rest`` is the process's CPU outside them: onnxruntime's own pool
    threads (a model call runs on its caller and on them), the loop and the writer's glue."""
    split = {
        "model": cpu.get("model", 0.0), "plan": cpu.get("plan", 0.0),
        "pins": cpu.get("pins", 0.0), "sql": own.get("store", 0.0),
        "index": cpu.get("store", 0.0) - own.get("store", 0.0), "facts": cpu.get("facts", 0.0),
    }  # fmt: skip
    # "index" also runs inside "facts" (its facts' rows): counted there, not in "index".
    inside = sum(cpu.get(k, 0.0) for k in ("model", "plan", "pins", "store", "facts"))
    split["rest"] = total_s - inside
    return {k: 1000 * v / turns for k, v in split.items()}


def _baseline(embedder: MiniLMEmbedder, sessions: Sessions) -> dict[str, Any]:
    """Each turn embedded once, whole, one model call per turn."""
    texts = [embedding_text(event, "speaker") for rows in sessions for _, event in rows]
    cpu = time.process_time()
    started = time.perf_counter()
    for text in texts:
        embedder.embed([text])
    seconds = time.perf_counter() - started
    return {"turns": len(texts), "seconds": seconds, "cpu_seconds": time.process_time() - cpu}


def _langgraph(embedder: MiniLMEmbedder, sessions: Sessions) -> dict[str, Any]:
    """LangGraph's InMemoryStore, one put per turn, embedding with *embedder*."""
    from langgraph.store.memory import InMemoryStore

    def embed(texts: list[str]) -> list[list[float]]:
        result: list[list[float]] = embedder.embed(texts).tolist()
        return result

    index: Any = {"dims": embedder.dimension, "embed": embed, "fields": ["text"]}
    store = InMemoryStore(index=index)
    turns = 0
    cpu = time.process_time()
    started = time.perf_counter()
    for rows in sessions:
        for scope, event in rows:
            namespace = (scope.tenant, scope.user or "", scope.session or "")
            store.put(namespace, f"t{turns}", {"text": embedding_text(event, "speaker")})
            turns += 1
    seconds = time.perf_counter() - started
    return {"turns": turns, "seconds": seconds, "cpu_seconds": time.process_time() - cpu}


def token_figures(
    embedder: MiniLMEmbedder, sessions: Sessions, settings: Settings, *, per_session: bool
) -> dict[str, float]:
    """Tokens run through the model per turn as kenning writes *sessions* (whole turns, units,
    padding, model calls), beside embedding each turn once, whole."""
    seen: set[str] = set()
    tokens = dict.fromkeys(
        ("whole", "unit", "padding", "plain_padding", "calls", "by_units", "baseline"), 0
    )
    for rows in sessions:
        for call in [rows] if per_session else [[row] for row in rows]:
            fresh: dict[str, str] = {}
            for _, event in call:
                plan = index_plan(event, mode=settings.embed_text,
                                  chunk_chars=settings.chunk_chars,
                                  unit_chars=settings.index_unit_chars)  # fmt: skip
                tokens["by_units"] += bool(plan.chunks)
                kind = "unit" if plan.chunks else "whole"
                new = [h for h in plan.texts if h not in seen]
                seen.update(new)
                fresh.update((h, kind) for h in new)
                for lengths in embedder.segment_lengths([plan.texts[h] for h in new]):
                    tokens[kind] += sum(lengths)
                tokens["baseline"] += sum(
                    embedder.segment_lengths([embedding_text(event, "speaker")])[0]
                )
            _count_calls(embedder, call, settings, fresh, tokens)
    turns = max(1, sum(len(rows) for rows in sessions))
    run = tokens["whole"] + tokens["unit"]
    return {
        "turns_by_units": round(tokens["by_units"] / turns, 3),
        "tokens_per_turn": round(run / turns, 2),
        "whole_tokens_per_turn": round(tokens["whole"] / turns, 2),
        "unit_tokens_per_turn": round(tokens["unit"] / turns, 2),
        "padding_per_turn": round(tokens["padding"] / turns, 2),
        "padding_share": round(tokens["padding"] / max(1, run + tokens["padding"]), 4),
        "padding_per_turn_ungrouped": round(tokens["plain_padding"] / turns, 2),
        "model_calls_per_turn": round(tokens["calls"] / turns, 3),
        "baseline_tokens_per_turn": round(tokens["baseline"] / turns, 2),
    }


def _count_calls(
    embedder: MiniLMEmbedder, call: Rows, settings: Settings, fresh: dict[str, str],
    tokens: dict[str, int],
) -> None:  # fmt: skip
    """Add the model calls and the padding of one write (its *fresh* texts) to *tokens*."""
    texts: dict[str, str] = {}
    for _, event in call:
        plan = index_plan(event, mode=settings.embed_text, chunk_chars=settings.chunk_chars,
                          unit_chars=settings.index_unit_chars)  # fmt: skip
        texts.update((h, t) for h, t in plan.texts.items() if h in fresh)
    if not texts:
        return
    lengths = np.array(
        [n for rows in embedder.segment_lengths(list(texts.values())) for n in rows],
        dtype=np.intp,
    )
    from kenning.embed.minilm import length_batches  # not in releases before it: --no-tokens

    for group in length_batches(lengths, embedder.batch_size):
        tokens["calls"] += 1
        tokens["padding"] += int(lengths[group].max()) * len(group) - int(lengths[group].sum())
    # as calls were made before length_batches: sorted rows, batch_size at a time
    ordered = np.sort(lengths)
    for begin in range(0, len(ordered), embedder.batch_size):
        group = ordered[begin : begin + embedder.batch_size]
        tokens["plain_padding"] += int(group.max()) * len(group) - int(group.sum())


@contextlib.contextmanager
def _served(work: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """``kenning serve`` (one worker, a fresh database) and an API key of the bench tenant."""

    import httpx

    from kenning.bench.load import start_server, stop_server, wait_ready

    with socket_port() as port:
        url = f"http://127.0.0.1:{port}"
    server, token = start_server(work, port, ["--db", str(work / "served.db"), "--workers", "1"])
    try:
        wait_ready(url, server)
        admin = {"Authorization": f"Bearer {token}"}
        r = httpx.post(f"{url}/v1/admin/keys", json={"tenant": TENANT}, headers=admin)
        r.raise_for_status()
        yield url, {"Authorization": f"Bearer {r.json()['key']}"}
    finally:
        stop_server(server)


@contextlib.contextmanager
def socket_port() -> Iterator[int]:
    """A free loopback port (released when the block ends, for the server to take)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def _server(sessions: Sessions) -> dict[str, Any]:
    """One ``POST .../events`` per turn to a served process, after one warm-up turn."""
    import httpx

    with (
        tempfile.TemporaryDirectory() as tmp,
        _served(Path(tmp)) as (url, auth),
        httpx.Client(base_url=url, headers=auth, timeout=60) as client,
    ):
        warm = {"user": "warm", "events": [{"role": "user", "content": "warming up"}]}
        client.post("/v1/sessions/warm/events", json=warm).raise_for_status()
        turns = 0
        started = time.perf_counter()
        for rows in sessions:
            for scope, event in rows:
                body = {"user": scope.user, "events": [{
                    "role": str(Role(event.role).value), "content": event.content,
                    "at": event.at.isoformat() if event.at else None,
                    "metadata": dict(event.metadata)}]}  # fmt: skip
                client.post(f"/v1/sessions/{scope.session}/events", json=body).raise_for_status()
                turns += 1
        return {"turns": turns, "seconds": time.perf_counter() - started}


Runner = Callable[[MiniLMEmbedder, Sessions], dict[str, Any]]


def _runners(server: bool) -> dict[str, Runner]:
    runners: dict[str, Runner] = {
        "kenning_event": lambda e, s: _kenning(e, s, per_session=False),
        "kenning_event_sync": lambda e, s: _kenning(e, s, per_session=False, defer=False),
        "kenning_session": lambda e, s: _kenning(e, s, per_session=True),
        "baseline": _baseline,
        "langgraph_inmemory": _langgraph,
    }
    if server:
        runners["kenning_server"] = lambda _, s: _server(s)
    return runners


def _median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The medians of one system's runs: turns/s, ms per turn and its split."""
    rates = [r["turns"] / r["seconds"] for r in runs]
    row: dict[str, Any] = {
        "turns": runs[0]["turns"], "runs": len(runs),
        "turns_per_s": round(statistics.median(rates), 1),
        "turns_per_s_runs": [round(x, 1) for x in rates],
        "ms_per_turn": round(statistics.median(1000 * r["seconds"] / r["turns"] for r in runs), 2),
    }  # fmt: skip
    if all("cpu_seconds" in r for r in runs):
        row["cpu_ms_per_turn"] = round(
            statistics.median(1000 * r["cpu_seconds"] / r["turns"] for r in runs), 2
        )
    if "ms_per_turn" in runs[0]:
        row["split_ms"] = {
            k: round(statistics.median(r["ms_per_turn"][k] for r in runs), 2) for k in STAGES
        }
        row["facts_ms_per_turn"] = round(statistics.median(r["facts_ms_per_turn"] for r in runs), 2)
        row["cpu_split_ms"] = {
            k: round(statistics.median(r["cpu_split_ms"][k] for r in runs), 2) for k in CPU_STAGES
        }
        row["drained_turns_per_s"] = round(
            statistics.median(r["turns"] / r["drained_seconds"] for r in runs), 1
        )
        row["acked_turns_per_s"] = round(
            statistics.median(r["turns"] / r["acked_seconds"] for r in runs), 1
        )
    return row


def run_ingest_bench(
    data: Path, out: Path, *, embedder: MiniLMEmbedder, repeats: int = 3,
    limit: int | None = None, server: bool = False, tokens: bool = True,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:  # fmt: skip
    """Run the systems *repeats* times over the LoCoMo file *data* (its first *limit* turns);
    write ``report.json`` and ``report.md`` under *out* and return the report."""
    conversations, _ = load_locomo(data)
    sessions = _sessions(conversations, limit)
    embedder.embed(["warm up"])
    runners = _runners(server)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in runners}
    for repeat in range(repeats):
        for name, runner in runners.items():
            runs[name].append(runner(embedder, sessions))
            last = runs[name][-1]
            progress(
                f"run {repeat + 1}/{repeats} {name}: {last['turns'] / last['seconds']:.1f} turns/s"
            )
    systems = {name: _median_row(r) for name, r in runs.items()}
    peer = runs["langgraph_inmemory"]
    report: dict[str, Any] = {
        "dataset": "locomo", "data": str(data), "turns": systems["baseline"]["turns"],
        "sessions": len(sessions), "repeats": repeats, "model": embedder.model_id,
        "threads": embedder.threads, "systems": systems,
        "vs_langgraph": {
            name: round(statistics.median(
                (p["seconds"] / p["turns"]) / (r["seconds"] / r["turns"])
                for r, p in zip(rs, peer, strict=True)), 3)
            for name, rs in runs.items() if name != "langgraph_inmemory"
        },
    }  # fmt: skip
    if tokens:
        settings = Settings()
        report["tokens"] = {
            mode: token_figures(embedder, sessions, settings, per_session=mode == "session")
            for mode in ("event", "session")
        }
    write_files(out, report, _markdown(report))
    return report


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        *heading(f"kenning bench ingest ({report['data']})"),
        f"{report['turns']} turns in {report['sessions']} sessions, written into a fresh store; "
        f"model {report['model']} ({report['threads']} threads), the same for every system; "
        f"medians of {report['repeats']} interleaved runs.", "",
    ]  # fmt: skip
    rows: list[list[object]] = []
    for name, row in report["systems"].items():
        split = row.get("split_ms", {})
        rows.append([
            name, row["turns_per_s"], row["ms_per_turn"],
            *(split.get(k, "") for k in STAGES), row.get("facts_ms_per_turn", ""),
            row.get("drained_turns_per_s", ""), row.get("acked_turns_per_s", ""),
            row.get("cpu_ms_per_turn", ""), report["vs_langgraph"].get(name, 1.0),
        ])  # fmt: skip
    lines += table(
        ["system", "turns/s", "ms/turn", *(f"{k} ms" for k in STAGES), "facts ms (background)",
         "drained turns/s", "acknowledged turns/s", "CPU ms/turn", "× LangGraph"], rows,
        cell=lambda c: f"{c:.2f}" if isinstance(c, float) else str(c),
    )  # fmt: skip
    cpu_rows = [
        [name, row.get("cpu_ms_per_turn", ""), *(row["cpu_split_ms"][k] for k in CPU_STAGES)]
        for name, row in report["systems"].items() if "cpu_split_ms" in row
    ]  # fmt: skip
    if cpu_rows:
        note = (
            "CPU ms per turn by stage (the CPU of the thread that ran it, until fact reading is "
            "drained; rest: onnxruntime's pool threads and the glue):"
        )
        lines += ["", note, ""]
        lines += table(
            ["system", "CPU ms/turn", *(f"{k} CPU ms" for k in CPU_STAGES)],
            cpu_rows,
            cell=lambda c: f"{c:.2f}" if isinstance(c, float) else str(c),
        )
    if "tokens" in report:
        keys = list(report["tokens"]["event"])
        lines += ["", "Tokens run through the model per turn (exact, from the index plan):", ""]
        lines += table(
            ["write", *keys],
            [[mode, *(v[k] for k in keys)] for mode, v in report["tokens"].items()],
        )
    return "\n".join(lines) + "\n"
