"""``kenning`` command line: argument parsing, error reporting and dispatch.

Every sub-command's parser names the function that runs it (``set_defaults(handler=...)``);
:func:`main` parses, calls that handler and turns errors into messages and exit statuses.
Configuration is built here, at the edge; the commands receive explicit values.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from kenning.cli import (
    archive_commands,
    bench_commands,
    commands,
    context_commands,
    longterm_commands,
    service_commands,
)
from kenning.cli.inputs import EVENT_FIELDS, add_location, positive
from kenning.errors import KenningError
from kenning.version import __version__

__all__ = ["build_parser", "main"]

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The ``kenning`` parser; each sub-command sets ``handler``, the function that runs it."""
    parser = argparse.ArgumentParser(
        prog="kenning",
        description="Memory for LLM agents: episodic record, hybrid search, token budgets.",
    )
    parser.add_argument("--version", action="version", version=f"kenning {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_ingest(sub)
    _add_search(sub)
    _add_reindex(sub)
    _add_context(sub)
    longterm_commands.add_parsers(sub)
    _add_demo_and_migrate(sub)
    archive_commands.add_parsers(sub)
    service_commands.add_parsers(sub)
    bench_commands.add_parsers(sub)
    return parser


def _add_ingest(sub: Any) -> None:
    fields = "\n".join(f"  {name:<16} {what}" for name, what in EVENT_FIELDS.items())
    p = sub.add_parser(
        "ingest",
        help="append events from a JSON Lines file",
        description="Append events from a JSON Lines file, one event object a line. Fields:\n"
        + fields
        + "\nA line without an id gets one derived from its bytes, so running the same file "
        "again (after a crash or Ctrl-C) adds nothing twice.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "file", help="JSONL file (or - for stdin): one event object a line (fields above)"
    )
    add_location(p, "SQLite database file (created if missing)")
    p.add_argument("--batch", type=positive, default=256, help="events per atomic batch")
    p.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
    p.add_argument("--no-facts", action="store_true", help="do not read the new events for "
                   "facts before exiting (kenning consolidate reads them later)")  # fmt: skip
    p.set_defaults(handler=commands.ingest)


def _add_search(sub: Any) -> None:
    p = sub.add_parser("search", help="hybrid search inside a tenant, user or session")
    p.add_argument("query")
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user")
    p.add_argument("--session")
    p.add_argument("--k", type=positive, default=10)
    p.add_argument("--min-score", type=float, default=0.0)
    p.add_argument(
        "--now",
        help="ISO time that 'last Friday' or '10 days ago' in the query count from (default: now)",
    )
    p.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="role=user, tag=billing, meta.speaker=Dana (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list of hits")
    p.set_defaults(handler=commands.search)


def _add_reindex(sub: Any) -> None:
    p = sub.add_parser(
        "reindex",
        help="rebuild a tenant's index rows under kenning's default settings",
        description="Rebuild the index rows of a tenant's events that differ from what "
        "`kenning ingest` writes now (kenning's default settings; a program with settings of "
        "its own calls Memory.reindex): events written before sentence units or under other "
        "embedding settings, and events stored while the embedding model was down (found by "
        "their words only). "
        "Search keeps serving; each batch is committed whole, so Ctrl-C loses nothing and "
        "running it again finishes the rest.",
    )
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    p.add_argument("--batch", type=positive, default=512, help="events per atomic batch")
    p.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
    p.set_defaults(handler=commands.reindex)


def _add_context(sub: Any) -> None:
    """``assemble`` and ``pins``."""
    p = sub.add_parser("assemble", help="build the token-budgeted window for a session")
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--session", required=True)
    p.add_argument("--budget", type=positive, required=True, help="budget in tokens")
    p.add_argument("--model", help="target model, e.g. gpt-4o (picks the tokenizer)")
    p.add_argument(
        "--encoding",
        help="count with this encoding instead (o200k_base, cl100k_base, llama3, qwen3, ...)",
    )
    p.add_argument(
        "--retrieve-from",
        choices=("session", "user", "tenant"),
        default="session",
        help="where retrieved memories come from (default: the session itself)",
    )
    p.add_argument("--reserve-output", type=int, default=0, help="tokens kept for the reply")
    p.add_argument("--query", help="what to retrieve memories for (default: latest user input)")
    p.add_argument("--goal", help="the user's goal for this conversation")
    p.add_argument("--system-file", help="file holding the system policy")
    p.add_argument("--tools-file", help="JSON file with a list of tool schemas")
    p.add_argument("--lexical-only", action="store_true", help="retrieve without the model")
    p.add_argument("--json", action="store_true", help="print the window as JSON")
    p.set_defaults(handler=context_commands.assemble)

    p = sub.add_parser("pins", help="list, set or close a session's pins")
    p.add_argument("action", choices=("list", "set", "close"))
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user")
    p.add_argument("--session")
    p.add_argument("--kind", help="set: entity_id, amount, approval, authorization, ...")
    p.add_argument("--key", help="set/close: the pin's key (set: default kind:value)")
    p.add_argument("--value", help="set: the value (default for amounts: 'AMOUNT CURRENCY')")
    p.add_argument("--amount", help="set: a decimal amount (with --currency)")
    p.add_argument("--currency", help="set: ISO-4217 code, e.g. EUR")
    p.add_argument("--history", action="store_true", help="list: every version")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=context_commands.pins)


def _add_demo_and_migrate(sub: Any) -> None:
    p = sub.add_parser("demo", help="ingest a bundled sample conversation and search it")
    add_location(p, "SQLite file to write (default: a new temporary file)", required=False)
    p.set_defaults(handler=commands.demo)

    p = sub.add_parser(
        "migrate",
        help="copy a SQLite store into PostgreSQL (vectors included; safe to re-run)",
        description="Copy every tenant of a SQLite file into a PostgreSQL database, vectors "
        "included (nothing is embedded again), one transaction per tenant, then compare the "
        "row counts of both sides per tenant and table. Rows already in the database are left "
        "alone, so running it again adds only what is missing.",
    )
    p.add_argument("--from", dest="source", required=True, metavar="FILE", help="SQLite file")
    p.add_argument("--to", dest="target", required=True, metavar="URL",
                   help="postgresql://user:password@host:5432/dbname")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(handler=commands.migrate)


def _os_message(exc: OSError) -> str:
    """What the system said, and about which file (a very long name is shortened)."""
    name = exc.filename if isinstance(exc.filename, str) else None
    if name is not None and len(name) > 80:
        name = f"{name[:40]}...{name[-20:]} ({len(name)} characters)"
    what = exc.strerror or str(exc)
    return f"{name}: {what}" if name else what


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kenning`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    # onnxruntime would otherwise try to reach a telemetry host from native code.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    # The edge configures logging: kenning's warnings (an approximate token count) on stderr.
    logging.basicConfig(format="kenning: warning: %(message)s", level=logging.WARNING)
    handler: Handler = args.handler
    try:
        return handler(args)
    except KenningError as exc:
        print(f"kenning: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`kenning search ... | head -1`): nothing more to say.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("kenning: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # A path the system refuses (too long, unreadable, a device that fails): the command
        # changed nothing it had not committed, and a traceback would say no more than this.
        print(f"kenning: error [os_error]: {_os_message(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
