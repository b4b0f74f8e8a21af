"""``kenning bench load``: the server under many concurrent sessions, with one and N workers.

For each worker count and each offered rate it starts ``kenning serve`` on loopback (a fresh
database, the real model unless ``--no-model``), creates a key for each tenant through the
admin API, and runs the load generator (:mod:`kenning.bench.load_driver`) in a separate
process. Afterwards it reads queue lag from ``/readyz`` and the server processes' RSS, stops
the server, and checks the database: every event the server acknowledged is stored exactly
once. The report gives throughput, p50/p95/p99 of append and assemble, errors by kind, lost
and duplicated events, the acknowledged events of each wall-clock second (``acked_per_s``:
epoch second to count, which shows an outage and the recovery after it), and the highest
offered rate whose assemble p99 met the target.

Both processes share the machine: on 2 cores the generator's own CPU is part of the numbers.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from kenning.bench.harness import erase_bench_tenants
from kenning.bench.report import heading, table, write_files
from kenning.errors import InvalidInput
from kenning.records import Scope
from kenning.store.open import open_store

__all__ = ["run_load_bench", "start_server", "stop_server", "wait_ready"]

TARGET_P99_MS = 150.0


def _pct(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "count": 0}
    arr = np.asarray(values)
    return {
        "p50": round(float(np.percentile(arr, 50)), 2),
        "p95": round(float(np.percentile(arr, 95)), 2),
        "p99": round(float(np.percentile(arr, 99)), 2),
        "count": len(values),
    }


def _server_usage(pid: int) -> tuple[float, float]:
    """(RSS in MB, CPU seconds used so far) of the server and its worker processes."""
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
        rss = float(sum(p.memory_info().rss for p in procs)) / 2**20
        cpu = sum(p.cpu_times().user + p.cpu_times().system for p in procs)
        return round(rss, 1), float(cpu)
    except psutil.Error:
        return 0.0, 0.0


def _server_side_ms(log: Path) -> dict[str, dict[str, float]]:
    """Percentiles of the time each request spent inside the server, by route (from its JSON
    request log): the client's latency minus this is queueing and the generator's own lag."""
    by_route: dict[str, list[float]] = {}
    for line in log.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("message") == "request" and "/sessions/" in str(entry.get("route")):
            by_route.setdefault(str(entry["route"]).rsplit("/", 1)[-1], []).append(entry["ms"])
    return {route: _pct(values) for route, values in by_route.items()}


def wait_ready(url: str, server: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RuntimeError("the server did not become ready")


def check_port_free(port: int) -> None:
    """Raise InvalidInput if something listens on 127.0.0.1:*port*: a server left running
    (by a bench that was killed, say) would answer the bench's requests in place of the one
    it starts, and refuse its admin token."""
    with socket.socket() as probe:
        # Without SO_REUSEADDR, a port the previous run's server closed a moment ago (its
        # connections in TIME_WAIT) would read as taken.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise InvalidInput(
                f"port {port} on 127.0.0.1 is in use (a kenning serve left running?): "
                "stop that process or pass --port"
            ) from None


def start_server(work: Path, port: int, flags: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    """``kenning serve`` on *port* with *flags*, without rate limits or MCP, its admin token
    in ``work/admin`` and its output in ``work/server.log``; returns the process and the
    token (wait for it with :func:`wait_ready`)."""
    check_port_free(port)
    token = secrets.token_hex(16)
    (work / "admin").write_text(token)
    cmd = [
        sys.executable, "-m", "kenning.cli.main", "serve", "--port", str(port),
        "--admin-token-file", str(work / "admin"), "--rate", "100000", "--burst", "100000",
        "--no-mcp", *flags,
    ]  # fmt: skip
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="1")
    with open(work / "server.log", "wb") as log:
        server = subprocess.Popen(cmd, stdout=log, stderr=log, env=env)
    return server, token


def stop_server(server: subprocess.Popen[bytes]) -> None:
    """Stop a served process as an operator would (SIGINT: it drains and exits), killing it
    only if it has not ended within a minute."""
    server.send_signal(signal.SIGINT)
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _warm(url: str, key: str) -> None:
    """One turn per tenant before timing: the tokenizer, the model and the tenant's search
    partition are loaded once per process, not inside the measured percentiles."""
    auth = {"Authorization": f"Bearer {key}"}
    for _ in range(4):  # with several workers, each process is likely to see one
        httpx.post(f"{url}/v1/sessions/warm/events", headers=auth, timeout=60, json={
            "user": "warm", "events": [{"role": "user", "content": "warming up order A-1"}]},
        ).raise_for_status()  # fmt: skip
        httpx.post(f"{url}/v1/sessions/warm/assemble", headers=auth, timeout=60, json={
            "user": "warm", "budget_tokens": 2000, "model": "gpt-4o", "system": "warm"},
        ).raise_for_status()  # fmt: skip


def _verify(location: str, acked: dict[str, list[str]]) -> tuple[int, int]:
    """(lost, duplicated): acknowledged ids missing from the store, and ids stored twice."""
    lost = duplicated = 0
    store = open_store(location)
    try:
        for label, ids in acked.items():
            tenant, user, session = label.split("/")
            stored = Counter(e.idempotency_key for e in store.events(Scope(tenant, user, session)))
            lost += sum(1 for i in ids if stored[i] == 0)
            duplicated += sum(n - 1 for n in stored.values() if n > 1)
    finally:
        store.close()
    return lost, duplicated


def _one_run(
    work: Path, *, workers: int, rps: float, sessions: int, tenants: int, duration: float,
    model: bool, port: int, store: str | None = None, embed_window_ms: float = 2.0,
    embed_batch: int = 16,
) -> dict[str, Any]:  # fmt: skip
    if store is None:
        location, where = str(work / "load.db"), ["--db", str(work / "load.db")]
    else:
        location, where = store, ["--store", store]
        # Each run starts from nothing: the bench tenants are erased first.
        erase_bench_tenants(store, [f"t{t}" for t in range(tenants)])
    url = f"http://127.0.0.1:{port}"
    flags = [
        *where, "--workers", str(workers), "--max-in-flight", "4096",
        "--embed-window-ms", str(embed_window_ms), "--embed-batch", str(embed_batch),
        *([] if model else ["--no-model"]),
    ]  # fmt: skip
    server, token = start_server(work, port, flags)
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="1")
    try:
        wait_ready(url, server)
        admin = {"Authorization": f"Bearer {token}"}
        keys = []
        for t in range(tenants):
            r = httpx.post(f"{url}/v1/admin/keys", json={"tenant": f"t{t}"}, headers=admin)
            r.raise_for_status()
            keys.append(r.json()["key"])
            _warm(url, keys[-1])
        cfg = {
            "url": url, "keys": keys, "tenants": tenants, "sessions": sessions, "rps": rps,
            "duration": duration, "budget": 2000, "result": str(work / "driver.json"),
        }  # fmt: skip
        (work / "driver-config.json").write_text(json.dumps(cfg))
        load_before = os.getloadavg()[0]
        _, cpu_before = _server_usage(server.pid)
        driver_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "kenning.bench.load_driver", str(work / "driver-config.json")],
            check=True, env=env,
        )  # fmt: skip
        driver_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rss, cpu_after = _server_usage(server.pid)
        load_after = os.getloadavg()[0]
        result = json.loads((work / "driver.json").read_text())
        ready = httpx.get(f"{url}/readyz", timeout=10).json()
    finally:
        stop_server(server)
    lost, duplicated = _verify(location, result["acked"])
    server_side = _server_side_ms(work / "server.log")
    driver_cpu = (driver_after.ru_utime + driver_after.ru_stime) - (
        driver_before.ru_utime + driver_before.ru_stime
    )
    turns = max(1, result["turns"])
    errors = sum(result["errors"].values())
    requests = len(result["append_ms"]) + len(result["assemble_ms"])
    assemble = _pct(result["assemble_ms"])
    return {
        "workers": workers,
        "store": "sqlite" if store is None else "postgresql",
        "sessions": sessions,
        "tenants": tenants,
        "offered_rps": rps,
        "offered_requests_per_s": round(rps * 3, 1),
        "duration_s": round(result["elapsed_s"], 1),
        "throughput_rps": round(requests / result["elapsed_s"], 1),
        "turns": result["turns"],
        "late_turns": result["late_turns"],
        "append_ms": _pct(result["append_ms"]),
        "assemble_ms": assemble,
        "errors": errors,
        "error_kinds": result["errors"],
        "retries": result["retries"],
        "acknowledged": sum(len(v) for v in result["acked"].values()),
        "acked_per_s": result["acked_per_s"],
        "lost": lost,
        "duplicated": duplicated,
        "queue_at_end": ready["checks"].get("queue", {}),
        "extraction_at_end": ready["checks"].get("extraction", {}),
        "rss_mb": rss,
        "server_side_ms": server_side,
        "server_cpu_ms_per_turn": round(1000 * (cpu_after - cpu_before) / turns, 1),
        "driver_cpu_ms_per_turn": round(1000 * driver_cpu / turns, 1),
        "loadavg_1m": [round(load_before, 2), round(load_after, 2)],
        "model": "MiniLM-L6 int8" if model else "none (lexical only)",
        "embed_window_ms": embed_window_ms,
        "embed_batch": embed_batch,
        "meets_target": errors == 0
        and lost == 0
        and duplicated == 0
        and assemble["p99"] <= TARGET_P99_MS,
    }


def _row(run: dict[str, Any]) -> list[object]:
    """One run's cells in the report's table."""
    a, s = run["append_ms"], run["assemble_ms"]
    inside = run["server_side_ms"].get("assemble", {})
    return [
        run["workers"], f"{run['offered_rps']:g}", f"{run['throughput_rps']:g}",
        f"{a['p50']:g} / {a['p95']:g} / {a['p99']:g}",
        f"{s['p50']:g} / {s['p95']:g} / {s['p99']:g}",
        f"{inside.get('p50', 0):g} / {inside.get('p99', 0):g}",
        run["errors"], run["lost"], run["duplicated"],
        f"{run['queue_at_end'].get('lag_s', 0):g}", f"{run['rss_mb']:g}",
        f"{run['server_cpu_ms_per_turn']:g}",
        f"{run['loadavg_1m'][0]:g}-{run['loadavg_1m'][1]:g}",
        "yes" if run["meets_target"] else "no",
    ]  # fmt: skip


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        *heading("kenning bench load"),
        f"{report['sessions']} sessions over {report['tenants']} tenants on "
        f"{report['store']}, "
        f"{report['duration_s']:g} s per run, embedding queue window "
        f"{report['embed_window_ms']:g} ms, at most {report['embed_batch']} texts a model call; "
        "a turn = append user message + assemble "
        "(2,000-token budget, gpt-4o) + append reply. Target: 0 errors, 0 lost or duplicated, "
        f"assemble p99 <= {TARGET_P99_MS:g} ms.",
        "",
        *table(
            ["workers", "offered turns/s", "req/s done", "append p50/p95/p99 ms",
             "assemble p50/p95/p99 ms", "assemble in server p50/p99", "errors", "lost", "dup",
             "queue lag s", "RSS MB", "server CPU ms/turn", "load avg", "meets"],
            [_row(run) for run in report["runs"]],
        ),
    ]  # fmt: skip
    lines += [
        "",
        "The load average is the machine's (2 cores), before and after the run: other work "
        "on the machine counts in it. 'in server' is the time inside the server (its request "
        "log); the rest of the client's latency is waiting for a CPU or a thread.",
        "",
        "Highest offered load meeting the target, by workers:",
    ]
    for workers, rps in report["best_offered_rps"].items():
        lines.append(f"- {workers} worker(s): {rps if rps is not None else 'none'} turns/s")
    return "\n".join(lines) + "\n"


def run_load_bench(
    out: Path,
    *,
    sessions: int = 2_000,
    tenants: int = 10,
    duration: float = 60.0,
    rps: list[float] | None = None,
    workers: list[int] | None = None,
    model: bool = True,
    port: int = 8765,
    store: str | None = None,
    embed_window_ms: float = 2.0,
    embed_batch: int = 16,
) -> dict[str, Any]:
    """Run every (workers, rps) pair; write ``report.json`` and ``report.md`` under *out*.

    Each server gathers concurrent requests' texts into one model call: it waits up to
    *embed_window_ms* for them, at most *embed_batch* texts a call (``kenning serve
    --embed-window-ms/--embed-batch``).

    With *store* (a PostgreSQL URL) every run serves that database, its bench tenants erased
    first; otherwise a fresh SQLite file per run. ``report.json`` holds the issue's summary
    fields for the highest-load run that met the target (or the lowest-load run if none did) at
    the top, and every run under ``runs``.
    """
    out.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    for w in workers or [1, 2]:
        for r in sorted(rps or [20.0]):
            with tempfile.TemporaryDirectory(prefix="kenning-load-") as tmp:
                run = _one_run(
                    Path(tmp), workers=w, rps=r, sessions=sessions, tenants=tenants,
                    duration=duration, model=model, port=port, store=store,
                    embed_window_ms=embed_window_ms, embed_batch=embed_batch,
                )  # fmt: skip
            runs.append(run)
            print(json.dumps({k: run[k] for k in ("workers", "offered_rps", "throughput_rps",
                  "append_ms", "assemble_ms", "errors", "lost", "duplicated", "meets_target")}),
                  flush=True)  # fmt: skip
    best: dict[str, float | None] = {}
    for w in sorted({run["workers"] for run in runs}):
        met = [run["offered_rps"] for run in runs if run["workers"] == w and run["meets_target"]]
        best[str(w)] = max(met) if met else None
    met_runs = [run for run in runs if run["meets_target"]]
    headline = (
        max(met_runs, key=lambda r: (r["offered_rps"], -r["workers"])) if met_runs else runs[0]
    )
    report = {
        "errors": headline["errors"],
        "lost": headline["lost"],
        "duplicated": headline["duplicated"],
        "assemble_ms": headline["assemble_ms"],
        "append_ms": headline["append_ms"],
        "sessions": sessions,
        "offered_rps": headline["offered_rps"],
        "workers": headline["workers"],
        "tenants": tenants,
        "store": "sqlite" if store is None else "postgresql",
        "duration_s": duration,
        "embed_window_ms": embed_window_ms,
        "embed_batch": embed_batch,
        "target_assemble_p99_ms": TARGET_P99_MS,
        "best_offered_rps": best,
        "runs": runs,
    }
    write_files(out, report, _markdown(report))
    return report
