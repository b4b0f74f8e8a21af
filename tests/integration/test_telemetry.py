"""OpenTelemetry spans, read with the SDK's in-memory exporter: the memory operations' names,
parents and attributes, embedded and for a request through the server; no content and no tenant
name unless the host turns them on.

Each case runs in a fresh interpreter: a process has one global tracer provider, and the rest
of the suite must run without one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

PRELUDE = """
import hashlib, json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from kenning import Memory, Scope
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
DANA = Scope("acme", "dana", "s1")
def dump():
    spans = [{"name": s.name, "id": s.context.span_id, "trace": s.context.trace_id,
              "parent": s.parent.span_id if s.parent else None,
              "kind": s.kind.name, "status": s.status.status_code.name,
              "attributes": dict(s.attributes)} for s in exporter.get_finished_spans()]
    print(json.dumps(spans, default=str))
"""


def run(tmp_path: Path, body: str) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "PYTHONPATH", "HOME")}
    env["HF_HUB_OFFLINE"] = "1"
    # The repository root, for tests.served (the child runs in a temporary directory).
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    script = PRELUDE + textwrap.dedent(body) + "\ndump()\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    spans: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return spans


def named(spans: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [s for s in spans if s["name"] == name]


def test_memory_operations_make_spans_with_the_genai_attributes(tmp_path: Path) -> None:
    spans = run(tmp_path, """
        with Memory.open("m.db", embedder=None) as memory:
            memory.add_events(DANA, [{"role": "user", "content": "Refund order A-1042 please"}])
            memory.search(Scope("acme", "dana"), "refund", k=3)
            memory.assemble(DANA, budget_tokens=500, model="gpt-4o", system="You help.")
            memory.forget(DANA)
    """)  # fmt: skip
    tenant = __import__("hashlib").sha256(b"acme").hexdigest()[:16]
    write_id = named(spans, "create_memory")[0]["id"]
    write = named(spans, "create_memory")[0]["attributes"]
    assert write == {
        "gen_ai.operation.name": "create_memory", "gen_ai.memory.store.id": "sqlite",
        "kenning.tenant": tenant, "kenning.scope.kind": "session",
        "gen_ai.conversation.id": "s1", "kenning.events.given": 1,
        "gen_ai.memory.record.count": 1,
    }  # fmt: skip
    search = named(spans, "search_memory")[0]["attributes"]
    assert search["kenning.scope.kind"] == "user" and search["kenning.search.k"] == 3
    assert search["gen_ai.memory.record.count"] == 1 and search["kenning.degraded"] is False
    assert "gen_ai.memory.query.text" not in search  # no content by default
    window = named(spans, "assemble_window")[0]["attributes"]
    assert window["gen_ai.request.model"] == "gpt-4o" and window["kenning.window.budget"] == 500
    assert window["kenning.window.tokens"] > 0 and window["kenning.window.pressure"] == "ok"
    assert window["kenning.window.tier.tail.tokens"] > 0
    assert named(spans, "delete_memory")[0]["attributes"]["gen_ai.memory.record.count"] == 1
    # The store's transactions are children of the operation that opened them.
    writes = [s for s in named(spans, "kenning.store.write") if s["parent"] == write_id]
    assert writes and writes[0]["attributes"]["db.system.name"] == "sqlite"
    assert "acme" not in json.dumps(spans) and "Refund" not in json.dumps(spans)


def test_content_and_tenant_names_only_when_the_host_asks(tmp_path: Path) -> None:
    spans = run(tmp_path, """
        from kenning.telemetry import configure
        configure(record_content=True, hash_tenants=False)
        with Memory.open("m.db", embedder=None) as memory:
            memory.add_events(DANA, [{"role": "user", "content": "Refund order A-1042 please"}])
            memory.search(DANA, "refund order")
    """)  # fmt: skip
    search = named(spans, "search_memory")[0]["attributes"]
    assert search["gen_ai.memory.query.text"] == "refund order"
    assert search["kenning.tenant"] == "acme"


def test_postgresql_transactions_are_traced_too(tmp_path: Path, pg_url: str) -> None:
    spans = run(tmp_path, f"""
        with Memory.open({pg_url!r}, embedder=None) as memory:
            memory.add_events(DANA, [{{"role": "user", "content": "hello"}}])
            memory.search(DANA, "hello")
    """)  # fmt: skip
    search = named(spans, "search_memory")[0]
    assert search["attributes"]["gen_ai.memory.store.id"] == "postgresql"
    reads = [s for s in named(spans, "kenning.store.read") if s["parent"] == search["id"]]
    assert reads and reads[0]["attributes"]["db.system.name"] == "postgresql"


def test_without_a_tracer_provider_nothing_is_started(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "PYTHONPATH", "HOME")}
    script = (
        "from kenning import telemetry\n"
        "with telemetry.span('x', {}) as s:\n"
        "    print(type(s).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == "_NullSpan", done.stderr


def test_a_failed_operation_ends_its_span_with_an_error(tmp_path: Path) -> None:
    spans = run(tmp_path, """
        from kenning import InvalidInput
        with Memory.open("m.db", embedder=None) as memory:
            try:
                memory.search(DANA, "   ")
            except InvalidInput:
                pass
    """)  # fmt: skip
    failed = named(spans, "search_memory")[0]
    assert failed["status"] == "ERROR" and failed["attributes"]["error.type"] == "invalid_input"


def test_compaction_and_fact_extraction_are_traced(tmp_path: Path) -> None:
    spans = run(tmp_path, """
        with Memory.open("m.db", embedder=None) as memory:
            memory.add_events(DANA, [{"role": "user", "content": "I moved to Munich last month"}])
            memory.wait_for_facts(60)
            turns = [{"role": "user" if n % 2 == 0 else "assistant",
                      "content": f"Turn {n}: a fairly long line about shipping and returns"}
                     for n in range(40)]
            memory.add_events(DANA, turns)
            memory.assemble(DANA, budget_tokens=250, model="gpt-4o", system="You help.")
            memory.wait_for_facts(60)
    """)  # fmt: skip
    extraction = named(spans, "extract_facts")
    assert extraction and extraction[0]["attributes"]["kenning.scope.kind"] == "session"
    compaction = named(spans, "compact_session")
    assert compaction, [s["name"] for s in spans]
    assert compaction[0]["attributes"]["gen_ai.memory.record.count"] >= 1


def test_a_request_through_the_server_is_the_parent_of_its_operations(tmp_path: Path) -> None:
    spans = run(tmp_path, """
        import httpx
        from kenning.server import ServerSettings
        from tests.served import ADMIN, serve
        with Memory.open("m.db", embedder=None) as memory:
            with serve(memory, ServerSettings(admin_token=ADMIN, otel=True)) as served:
                key = served.key("acme")
                exporter.clear()
                r = httpx.post(f"{served.url}/v1/sessions/s1/events",
                               headers={"Authorization": f"Bearer {key}",
                                        "traceparent": "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"},
                               json={"user": "dana", "events": [{"role": "user", "content": "hi"}]})
                assert r.status_code == 200, r.text
    """)  # fmt: skip
    (request,) = named(spans, "POST /v1/sessions/{session}/events")
    assert request["kind"] == "SERVER" and request["attributes"]["http.response.status_code"] == 200
    assert request["attributes"]["http.route"] == "/v1/sessions/{session}/events"
    assert request["trace"] == int("ab" * 16, 16)  # the caller's trace continues
    by_id = {s["id"]: s for s in spans}
    write = named(spans, "create_memory")[0]
    ancestors = []
    while write["parent"] in by_id:
        write = by_id[write["parent"]]
        ancestors.append(write["name"])
    assert ancestors[-1] == request["name"] and write["trace"] == request["trace"]
