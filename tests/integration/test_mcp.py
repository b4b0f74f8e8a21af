"""A real MCP client session (the official SDK's client) against kenning's MCP server: over
stdio (``kenning mcp`` as a subprocess) and over streamable HTTP at ``/mcp`` of the server. It
lists the tools and calls each one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from kenning import Memory, Scope
from tests.served import serve

DANA = Scope("acme", "dana", "s1")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_memory", {"query": "broken order"}),
    ("search_conversation", {"role": "user"}),
    ("set_pin", {"kind": "entity_id", "value": "A-1042"}),
    ("close_pin", {"key": "entity_id:A-1042"}),
    ("replace_goal", {"goal": "Refund A-1042", "constraints": ["refund to card"]}),
    (
        "update_investigation",
        {
            "hypotheses": [
                {"text": "double charge", "status": "rejected", "reason": "one is a hold"}
            ]
        },
    ),
    ("remember_fact", {"attribute": "preferred language", "value": "Portuguese"}),
    ("revoke_fact", {}),  # the id of the fact remembered just before
    ("read_profile", {}),
]


def _seed(path: Path) -> None:
    with Memory.open(path, embedder=None) as memory:
        memory.add_events(DANA, [{"role": "user", "content": "My order A-1042 arrived broken"}])


def _payload(result: types.CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


async def _exercise(session: ClientSession) -> None:
    await session.initialize()
    listed = await session.list_tools()
    assert [t.name for t in listed.tools] == [name for name, _ in CALLS]
    assert all(t.input_schema["type"] == "object" for t in listed.tools)
    remembered = None
    for name, arguments in CALLS:
        if name == "revoke_fact":
            arguments = {"fact_id": remembered}
        result = await session.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        if name == "remember_fact":
            remembered = _payload(result)["id"]
    assert _payload(await session.call_tool("read_profile", {}))["facts"] == []  # revoked
    hits = _payload(await session.call_tool("search_memory", {"query": "broken order"}))
    assert hits["hits"][0]["content"] == "My order A-1042 arrived broken"
    refused = await session.call_tool("set_pin", {"kind": "approval", "value": "approved"})
    assert refused.is_error and _payload(refused)["error"]["code"] == "tool_refused"


def test_stdio_session_lists_and_calls_every_tool(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    _seed(db)
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "kenning.cli.main",
            "mcp",
            "--db",
            str(db),
            "--tenant",
            "acme",
            "--user",
            "dana",
            "--session",
            "s1",
            "--no-model",
        ],
        env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH")},
    )

    async def run() -> None:
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await _exercise(session)

    anyio.run(run)
    with Memory.open(db, embedder=None) as memory:
        assert memory.context.task_state(DANA).task == "Refund A-1042"


def test_streamable_http_session_is_authorized_and_bound(tmp_path: Path) -> None:
    db = tmp_path / "mcp-http.db"
    _seed(db)
    with Memory.open(db, embedder=None) as memory, serve(memory) as served:
        key = served.key("acme")

        async def run(headers: dict[str, str]) -> None:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(f"{served.url}/mcp", http_client=http) as (read, write, *_),
                ClientSession(read, write) as session,
            ):
                await _exercise(session)

        bound = {"Authorization": f"Bearer {key}", "Kenning-User": "dana",
                 "Kenning-Session": "s1"}  # fmt: skip
        anyio.run(run, bound)
        assert memory.context.task_state(DANA).task == "Refund A-1042"
        with httpx2.Client() as http:
            r = http.post(f"{served.url}/mcp", json={"jsonrpc": "2.0", "id": 1,
                                                     "method": "tools/list"})  # fmt: skip
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
            r = http.post(f"{served.url}/mcp", headers={"Authorization": f"Bearer {key}"},
                          json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})  # fmt: skip
            assert r.status_code == 422 and "Kenning-Session" in r.json()["error"]["message"]
