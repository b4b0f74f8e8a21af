"""``kenning mcp install``: the configuration written for each coding agent starts kenning's
MCP server (the official MCP SDK's stdio client plays the agent), lists the memory tools and
keeps what the agent stores in the user's data directory; a user's other settings survive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from kenning import Memory, Scope

TOOLS = ["search_memory", "search_conversation", "set_pin", "close_pin", "replace_goal",
         "update_investigation", "remember_fact", "revoke_fact", "read_profile"]  # fmt: skip


def install(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "PYTHONPATH")}
    env |= {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    (tmp_path / "my project").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "kenning.cli.main", "mcp", "install", *args],
        cwd=tmp_path / "my project", env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def server_entry(client: str, path: Path) -> dict[str, Any]:
    if client == "codex":
        return dict(tomllib.loads(path.read_text())["mcp_servers"]["kenning"])
    return dict(json.loads(path.read_text())["mcpServers"]["kenning"])


def start_and_use(entry: dict[str, Any], tmp_path: Path) -> list[str]:
    env = {**entry["env"], "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
           "PATH": os.environ["PATH"]}  # fmt: skip
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    names: list[str] = []

    async def run() -> None:
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                names.extend(t.name for t in (await session.list_tools()).tools)
                result = await session.call_tool("set_pin", {"kind": "entity_id", "value": "PR-77"})
                assert not result.is_error, result.content

    anyio.run(run)
    return names


@pytest.mark.parametrize(("client", "where"), [
    ("claude-code", "my project/.mcp.json"),
    ("cursor", "my project/.cursor/mcp.json"),
    ("codex", "my project/.codex/config.toml"),
])  # fmt: skip
def test_the_written_configuration_starts_the_server_and_lists_the_tools(
    tmp_path: Path, client: str, where: str
) -> None:
    done = install(tmp_path, "--client", client, "--no-model")
    assert done.returncode == 0, done.stderr
    entry = server_entry(client, tmp_path / where)
    assert start_and_use(entry, tmp_path) == TOOLS
    db = tmp_path / "data" / "kenning" / "memory.db"
    with Memory.open(db, embedder=None) as memory:
        scope = Scope(
            "local", entry["args"][entry["args"].index("--user") + 1], "project-my-project"
        )
        assert [p.value for p in memory.context.pins(scope)] == ["PR-77"]


def test_user_scope_and_other_settings_are_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n\n'
        '[mcp_servers.kenning]\ncommand = "old"\n\n[mcp_servers.kenning.env]\nA = "1"\n'
    )
    (home / ".claude.json").write_text(json.dumps({"theme": "dark", "mcpServers": {"x": {}}}))
    for client in ("codex", "claude-code"):
        assert install(tmp_path, "--client", client, "--scope", "user").returncode == 0
    codex = tomllib.loads((home / ".codex" / "config.toml").read_text())
    assert codex["model"] == "o4" and codex["mcp_servers"]["docs"]["command"] == "docs-server"
    assert codex["mcp_servers"]["kenning"]["command"] == sys.executable
    assert "A" not in codex["mcp_servers"]["kenning"]["env"]
    claude = json.loads((home / ".claude.json").read_text())
    assert claude["theme"] == "dark" and set(claude["mcpServers"]) == {"x", "kenning"}


def test_print_writes_nothing_and_a_broken_file_is_left_alone(tmp_path: Path) -> None:
    printed = install(tmp_path, "--client", "cursor", "--print")
    assert printed.returncode == 0 and json.loads(printed.stdout)["mcpServers"]["kenning"]
    assert not (tmp_path / "my project" / ".cursor").exists()
    assert not (tmp_path / "data").exists()
    broken = tmp_path / "my project" / ".mcp.json"
    broken.write_text("{not json")
    done = install(tmp_path, "--client", "claude-code")
    assert done.returncode != 0 and "not JSON" in done.stderr and "Traceback" not in done.stderr
    assert broken.read_text() == "{not json"
