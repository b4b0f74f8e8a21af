"""``kenning serve``, ``kenning keys`` and ``kenning mcp``: the service's commands.

Their options become explicit settings here; the server, the key functions and the MCP server
receive those and read nothing else. The admin credential is read from a file or from
``KENNING_ADMIN_TOKEN`` (so it is not on the command line, visible to every local user);
worker processes get it through a file only the server's user can read, never through their
environment, where ``/proc/<pid>/environ`` shows it.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

from kenning.cli.inputs import existing_db, new_db
from kenning.cli.mcp_install import add_install_parser
from kenning.errors import InvalidInput, Unsupported
from kenning.store.postgres import is_postgres_url

__all__ = ["add_parsers", "keys", "mcp", "serve"]


def _store_path(args: argparse.Namespace, *, create: bool = True) -> str:
    """The SQLite file of ``--db`` or ``--store sqlite:///PATH`` (which must exist unless
    *create*), or the PostgreSQL database of ``--store postgresql://…``."""
    path: str = args.db
    if getattr(args, "store", None):
        url: str = args.store
        if is_postgres_url(url):
            return url
        if not url.startswith("sqlite:///"):
            raise Unsupported(
                f"--store {url.split(':', 1)[0]}:… is not a store kenning serves: give "
                "sqlite:///PATH or postgresql://user:password@host:5432/dbname (or --db PATH)"
            )
        path = url[len("sqlite:///") :]
    return new_db(path) if create else existing_db(path)


def _add_store(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--db", default="kenning.db", help="SQLite file (default: kenning.db)")
    group.add_argument("--store", metavar="URL",
                       help="sqlite:///PATH or postgresql://user:password@host:5432/dbname "
                       "(every worker process and machine shares a PostgreSQL store)")  # fmt: skip


def add_parsers(sub: Any) -> None:
    """Add ``serve``, ``keys`` and ``mcp`` to the command parser, each with its handler."""
    _add_serve_parser(sub)
    _add_keys_parser(sub)
    _add_mcp_parser(sub)


def _add_serve_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the REST API and MCP server")
    _add_store(p)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--admin-token-file", help="file holding the admin credential "
                   "(default: $KENNING_ADMIN_TOKEN; none disables /v1/admin)")  # fmt: skip
    p.add_argument("--rate", type=float, default=100.0, help="requests/s per tenant")
    p.add_argument("--burst", type=int, default=200, help="requests a tenant may save up")
    p.add_argument("--max-events", type=int, help="events a tenant may store")
    p.add_argument("--max-chars", type=int, help="content characters a tenant may store")
    p.add_argument("--max-body-bytes", type=int, default=8 * 1024 * 1024)
    p.add_argument("--max-in-flight", type=int, default=256,
                   help="authenticated requests at once per worker")  # fmt: skip
    p.add_argument("--max-in-flight-per-tenant", type=int,
                   help="of those, what one tenant may hold (default: half)")  # fmt: skip
    p.add_argument("--max-mcp-streams", type=int, default=4,
                   help="GET /mcp event streams open at once per key (default 4)")  # fmt: skip
    p.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        help="seconds a connection may take to send a request head (default 10)",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        help="seconds a request may take to send its body; then 408 (default 30)",
    )
    p.add_argument("--compaction-workers", type=int, default=2, help="threads per worker")
    p.add_argument("--extraction-workers", type=int, default=1,
                   help="fact-extraction threads per worker")  # fmt: skip
    p.add_argument("--no-model", action="store_true", help="lexical search only (no MiniLM)")
    p.add_argument(
        "--embed-window-ms",
        type=float,
        default=2.0,
        help="ms the embedding queue waits for other requests' texts (default 2)",
    )
    p.add_argument(
        "--embed-batch",
        type=int,
        default=16,
        help="most texts in one model call of the embedding queue (default 16)",
    )
    p.add_argument("--no-mcp", action="store_true", help="do not mount /mcp")
    p.add_argument("--otel", action="store_true", help="trace requests and memory operations "
                   "over OTLP, set up by the OTEL_* variables (kenning[otel])")  # fmt: skip
    p.add_argument("--text-logs", action="store_true", help="plain log lines instead of JSON")
    p.set_defaults(handler=serve)


def _add_keys_parser(sub: Any) -> None:
    p = sub.add_parser("keys", help="create, list or revoke tenants' API keys")
    p.set_defaults(handler=keys)
    keys_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    k = keys_sub.add_parser("create", help="create a key (printed once)")
    _add_store(k)
    k.add_argument("--tenant", required=True)
    k.add_argument("--scopes", default="read,write", help="comma-separated: read, write")
    k.add_argument("--name", default="", help="a label for the key")
    k = keys_sub.add_parser("revoke", help="revoke a key by its id")
    _add_store(k)
    k.add_argument("key_id")
    k = keys_sub.add_parser("list", help="list keys (never their secrets)")
    _add_store(k)
    k.add_argument("--tenant")


def _add_mcp_parser(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve the memory tools over MCP (stdio) for one session; "
                       "`kenning mcp install` sets a coding agent up to start it")  # fmt: skip
    add_install_parser(p.add_subparsers(dest="mcp_command", metavar="install"))
    _add_store(p)
    # Required when serving; `kenning mcp install` has its own.
    p.add_argument("--tenant")
    p.add_argument("--user")
    p.add_argument("--session")
    p.add_argument("--share-sessions", action="store_true",
                   help="let the agent read the user's other sessions (only if the user's "
                   "stored consent allows it too)")  # fmt: skip
    p.add_argument("--no-model", action="store_true", help="lexical search only (no MiniLM)")
    p.set_defaults(handler=mcp)


def _admin_token(args: argparse.Namespace) -> str | None:
    """The admin credential of ``--admin-token-file`` or ``$KENNING_ADMIN_TOKEN`` (checked by
    ``ServerSettings``: a short or blank one stops the server)."""
    # Read and dropped: processes started from here on (the workers) do not inherit it.
    from_env = os.environ.pop("KENNING_ADMIN_TOKEN", None)
    if args.admin_token_file:
        try:
            text = Path(args.admin_token_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"cannot read --admin-token-file: {exc.strerror}") from None
        return text.strip() or text
    return from_env or None


@contextlib.contextmanager
def _private_token_file(token: str | None) -> Iterator[str | None]:
    """A file holding *token* that only this user can read (mode 0600 in a 0700 directory
    of its own), removed when the block ends; None without a token."""
    if token is None:
        yield None
        return
    folder = tempfile.mkdtemp(prefix="kenning-serve-")
    try:
        path = os.path.join(folder, "admin-token")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(token)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _settings(args: argparse.Namespace) -> Any:
    from kenning.server.config import ServerSettings

    return ServerSettings(
        db=_store_path(args), host=args.host, port=args.port, workers=args.workers,
        admin_token=_admin_token(args), rate_per_s=args.rate, burst=args.burst,
        max_events=args.max_events, max_chars=args.max_chars,
        max_body_bytes=args.max_body_bytes, max_in_flight=args.max_in_flight,
        max_in_flight_per_tenant=args.max_in_flight_per_tenant,
        max_mcp_streams=args.max_mcp_streams, header_timeout_s=args.header_timeout,
        body_timeout_s=args.body_timeout, compaction_workers=args.compaction_workers,
        extraction_workers=args.extraction_workers,
        embedder="none" if args.no_model else "minilm", embed_window_ms=args.embed_window_ms,
        embed_batch=args.embed_batch, mcp=not args.no_mcp,
        json_logs=not args.text_logs, otel=args.otel,
    )  # fmt: skip


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from kenning.runtime import configure_heap
    from kenning.server.app import ENV_SETTINGS, create_app
    from kenning.server.logs import configure_logging
    from kenning.server.protocol import NoDelayH11Protocol, set_header_timeout
    from kenning.server.tracing import setup_otlp
    from kenning.store.open import open_store

    settings = _settings(args)
    configure_heap()  # before any thread starts (see kenning.runtime)
    configure_logging(json_logs=settings.json_logs)
    set_header_timeout(settings.header_timeout_s)
    _check_listen(settings.host, settings.port)
    # Migrate once, here, before the workers open the store.
    open_store(settings.db).close()
    common: dict[str, Any] = {
        "host": settings.host, "port": settings.port, "log_config": None, "access_log": False,
        "timeout_graceful_shutdown": 10, "http": NoDelayH11Protocol,
        # Longer than clients keep idle connections (httpx: 5 s), so the server does not close
        # one just as a client sends on it (a ReadError under load, seen once at 24 turns/s).
        "timeout_keep_alive": 30,
    }  # fmt: skip
    if settings.workers == 1:
        if settings.otel:
            setup_otlp()
        uvicorn.run(create_app(settings), **common)
        return 0
    with _private_token_file(settings.admin_token) as token_file:
        # The workers' settings carry where the token is, never the token.
        os.environ[ENV_SETTINGS] = replace(settings, admin_token_file=token_file).to_json()
        uvicorn.run(
            "kenning.server.app:app_from_environment", factory=True, workers=settings.workers,
            **common,
        )  # fmt: skip
    return 0


def _check_listen(host: str, port: int) -> None:
    """InvalidInput if nothing can listen on *host*:*port* (another server holds it, or the
    address is not this machine's), before the store is opened and the workers start; uvicorn
    would log the failure and exit 3."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InvalidInput(f"--host {host!r} is not an address to listen on: {exc}") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # As uvicorn binds: a port left in TIME_WAIT by a server that just stopped is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise InvalidInput(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}"
                + (" (another server is running there?)" if exc.errno == errno.EADDRINUSE else "")
            ) from exc


def keys(args: argparse.Namespace) -> int:
    from kenning.server.auth import create_key
    from kenning.store.open import open_store
    from kenning.store.protocol import Credentials

    with closing(open_store(_store_path(args, create=args.action == "create"))) as store:
        if not isinstance(store, Credentials):
            raise Unsupported(f"the {store.backend} store cannot hold API keys")
        if args.action == "create":
            key, token = create_key(store, args.tenant, args.scopes.split(","), name=args.name)
            print(json.dumps({"id": key.id, "tenant": key.tenant, "scopes":
                              [s.value for s in key.scopes], "key": token}))  # fmt: skip
            print("kenning: the key is shown once; store it now", file=sys.stderr)
            return 0
        if args.action == "revoke":
            from datetime import UTC, datetime

            from kenning.errors import NotFound

            revoked = store.revoke_api_key(args.key_id, at=datetime.now(UTC))
            if revoked is None:
                raise NotFound(f"no API key {args.key_id!r}")
            when = revoked.revoked_at.isoformat() if revoked.revoked_at else None
            print(json.dumps({"id": revoked.id, "tenant": revoked.tenant, "revoked_at": when}))
            return 0
        for key in store.api_keys(args.tenant):
            print(json.dumps({
                "id": key.id, "tenant": key.tenant, "name": key.name,
                "scopes": [s.value for s in key.scopes], "active": key.active,
            }))  # fmt: skip
    return 0


def mcp(args: argparse.Namespace) -> int:
    missing = [f"--{n}" for n in ("tenant", "user", "session") if not getattr(args, n)]
    if missing:
        raise InvalidInput(f"kenning mcp needs {', '.join(missing)} (or: kenning mcp install)")
    from kenning.memory import DEFAULT, Memory
    from kenning.records import Scope
    from kenning.server.mcp import run_stdio
    from kenning.tools import ToolBinding, default_registry

    binding = ToolBinding(
        Scope(args.tenant, args.user, args.session), share_sessions=args.share_sessions
    )
    with Memory.open(_store_path(args), embedder=None if args.no_model else DEFAULT) as memory:
        run_stdio(memory, binding, default_registry())
    return 0
