"""``kenning mcp install``: one command that gives a coding agent (Claude Code, Codex, Cursor)
kenning's memory tools over MCP, on a local SQLite file in the user's data directory. The agent
starts ``kenning mcp`` itself (stdio); nothing listens on a port and nothing leaves the machine.

Where each client reads its MCP servers (``--scope project`` is the current directory):

============  ===============================  =============================
client        --scope project (default)        --scope user
============  ===============================  =============================
claude-code   ./.mcp.json                      ~/.claude.json
cursor        ./.cursor/mcp.json               ~/.cursor/mcp.json
codex         ./.codex/config.toml             ~/.codex/config.toml
============  ===============================  =============================

An existing file keeps its other servers and settings; only the ``kenning`` entry is replaced.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from kenning.errors import InvalidInput

__all__ = ["add_install_parser", "install", "server_command"]

CLIENTS = ("claude-code", "codex", "cursor")
NAME = "kenning"


def add_install_parser(sub: Any) -> None:
    p = sub.add_parser("install", help="write a coding agent's MCP configuration for kenning")
    p.add_argument("--client", required=True, choices=CLIENTS)
    p.add_argument("--scope", choices=("project", "user"), default="project",
                   help="this project's configuration (default) or the user's")  # fmt: skip
    p.add_argument("--print", action="store_true", dest="print_only",
                   help="print the configuration instead of writing it")  # fmt: skip
    p.add_argument("--db", help="SQLite file (default: kenning/memory.db in the user's data "
                   "directory, $XDG_DATA_HOME or ~/.local/share)")  # fmt: skip
    p.add_argument("--tenant", default="local")
    p.add_argument("--user", help="default: your login name")
    p.add_argument("--session", help="default: named after this project's directory")
    p.add_argument("--share-sessions", action="store_true",
                   help="let the agent read your other sessions (other projects)")  # fmt: skip
    p.add_argument("--no-model", action="store_true", help="lexical search only (no MiniLM)")
    p.set_defaults(handler=install)


def install(args: argparse.Namespace) -> int:
    db = Path(args.db).expanduser() if args.db else data_dir() / "memory.db"
    command = server_command(args, db)
    target = config_path(args.client, args.scope, Path.cwd(), Path.home())
    if args.print_only:
        print(render(args.client, command, None))
        return 0
    existing = target.read_text(encoding="utf-8") if target.exists() else None
    text = render(args.client, command, existing)
    db.parent.mkdir(parents=True, exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(target, text)
    print(f"kenning: {args.client} now starts kenning's memory tools ({target}); "
          f"memories are kept in {db}")  # fmt: skip
    return 0


def server_command(args: argparse.Namespace, db: Path) -> dict[str, Any]:
    """The command the client runs: this Python running ``kenning mcp`` for one session."""
    user = args.user or _as_id(getpass.getuser(), "me")
    session = args.session or "project-" + _as_id(Path.cwd().name, "default")
    argv = ["-m", "kenning.cli.main", "mcp", "--db", str(db.absolute()), "--tenant", args.tenant,
            "--user", user, "--session", session]  # fmt: skip
    argv += ["--share-sessions"] * args.share_sessions + ["--no-model"] * args.no_model
    return {"command": sys.executable, "args": argv, "env": {"HF_HUB_OFFLINE": "1"}}


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kenning"


def config_path(client: str, scope: str, cwd: Path, home: Path) -> Path:
    root = cwd if scope == "project" else home
    if client == "claude-code":
        return root / (".mcp.json" if scope == "project" else ".claude.json")
    if client == "cursor":
        return root / ".cursor" / "mcp.json"
    return root / ".codex" / "config.toml"


def render(client: str, command: dict[str, Any], existing: str | None) -> str:
    """The client's configuration file with kenning's entry set (other entries kept)."""
    if client == "codex":
        return _codex_toml(command, existing)
    try:
        config = json.loads(existing) if existing and existing.strip() else {}
    except ValueError as exc:
        raise InvalidInput(f"the existing configuration is not JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise InvalidInput("the existing configuration is not a JSON object")
    servers = config.setdefault("mcpServers", {})
    servers[NAME] = {"type": "stdio", **command} if client == "claude-code" else command
    return json.dumps(config, indent=2) + "\n"


def _codex_toml(command: dict[str, Any], existing: str | None) -> str:
    text = existing or ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"the existing configuration is not TOML: {exc}") from exc
    # Drop an earlier kenning table (and its sub-tables) up to the next table header.
    own = re.compile(rf"^\[mcp_servers\.{NAME}(\.[^\]]+)?\]\s*$")
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        if line.lstrip().startswith("["):
            skipping = bool(own.match(line.strip()))
        if not skipping:
            kept.append(line)
    env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in command["env"].items())
    table = (f"[mcp_servers.{NAME}]\ncommand = {json.dumps(command['command'])}\n"
             f"args = {json.dumps(command['args'])}\nenv = {{ {env} }}\n")  # fmt: skip
    body = "\n".join(kept).rstrip()
    result = (body + "\n\n" if body else "") + table
    tomllib.loads(result)
    return result


def _as_id(text: str, fallback: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._:@-]+", "-", text).strip("-._:@")[:100]
    return cleaned or fallback


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
