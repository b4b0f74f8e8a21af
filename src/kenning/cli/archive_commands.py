"""``kenning export`` and ``kenning import``: a tenant or user moved whole as a
``kenning-export`` file, and conversations brought in from ChatGPT, Claude or OpenAI-style
message files (:mod:`kenning.archive`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from kenning.archive import export_lines, import_lines, parse_conversations
from kenning.archive.chats import FORMATS, conversation_events
from kenning.cli.inputs import add_location, store_location
from kenning.errors import InvalidArchive, InvalidInput
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import Scope
from kenning.records.archive import FORMAT
from kenning.settings import Settings

__all__ = ["add_parsers", "export", "import_file"]


def add_parsers(sub: Any) -> None:
    """The ``export`` and ``import`` sub-commands."""
    p = sub.add_parser(
        "export",
        help="write a tenant or one user's memory to a kenning-export JSON Lines file",
        description=f"Write every record of a tenant (or of one of its users) to a {FORMAT} "
        "JSON Lines file: a header line, then one record a line (events with their ids and "
        "times, pins with their versions, summaries, task state, facts with their history, "
        "procedures, consent, policy, holds, documents). See docs/service.md.",
    )
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user", help="only this user's records")
    p.add_argument("--out", metavar="FILE", help="write here (default: standard output)")
    p.add_argument("--with-vectors", action="store_true",
                   help="include the vectors (else the import embeds again)")  # fmt: skip
    p.set_defaults(handler=export)

    p = sub.add_parser(
        "import",
        help="import a kenning-export file, or ChatGPT/Claude/OpenAI conversations",
        description=f"Import a {FORMAT} file (ids and times kept; importing it twice adds "
        "nothing), or conversations exported from ChatGPT or Claude (conversations.json) or "
        "an OpenAI-style list of {role, content} messages: each conversation becomes a "
        "session of --user, its messages keep their own times. The whole file is checked "
        "first and written in one transaction: a bad line imports nothing.",
    )
    p.add_argument("file", help="the file to import")
    add_location(p, "SQLite database file (created if missing)")
    p.add_argument("--tenant", help="import into this tenant (kenning-export: default the file's)")
    p.add_argument("--user", help="the user whose sessions conversations become")
    p.add_argument("--format", choices=("kenning", *FORMATS),
                   help="the file's format (default: detected)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print what was imported as JSON")
    p.set_defaults(handler=import_file)


def export(args: argparse.Namespace) -> int:
    """Write a tenant's or user's export to --out or standard output."""
    scope = Scope(args.tenant, args.user)
    db = store_location(args)
    with Memory.open(db, embedder=None, settings=_quiet(), resume=False) as memory:
        lines = export_lines(memory.store, scope, vectors=args.with_vectors)
        if args.out is None:
            for line in lines:
                sys.stdout.write(line + "\n")
            return 0
        _write_atomically(Path(args.out), lines)
    return 0


def _write_atomically(path: Path, lines: Any) -> None:
    """The file appears whole or not at all (an interrupted export leaves no half file)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(line + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _quiet() -> Settings:
    # Facts come from the file (or are read below, in the foreground), not from a thread.
    return Settings(longterm=LongTermSettings(extract=False))


def _read(path: str) -> str:
    source = Path(path)
    if source.is_dir() or not source.exists():
        raise InvalidInput(f"{path} is not a file")
    try:
        return source.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArchive(f"{path} is not UTF-8 text: {exc}") from exc


def _is_export(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        head = json.loads(first)
    except ValueError:
        return False
    return isinstance(head, dict) and "format" in head and "version" in head


def import_file(args: argparse.Namespace) -> int:
    """Import a kenning-export file or a conversation file."""
    text = _read(args.file)
    fmt = args.format or ("kenning" if _is_export(text) else None)
    db = store_location(args, create=True)
    if fmt == "kenning":
        if args.user is not None:
            raise InvalidInput("--user is for conversation files: a kenning-export file "
                               "names its own users")  # fmt: skip
        with Memory.open(db, settings=_quiet(), resume=False) as memory:
            report = import_lines(
                memory.store, text.splitlines(), tenant=args.tenant,
                embedder=memory.embedder, settings=memory.settings,
            )  # fmt: skip
        summary: dict[str, Any] = {"tenant": report.tenant, "read": report.read,
                                   "added": report.added, "embedded": report.embedded}  # fmt: skip
        line = (f"imported into tenant {report.tenant}: {sum(report.read.values())} records "
                f"read, {sum(report.added.values())} rows added, {report.embedded} texts "
                "embedded")  # fmt: skip
    else:
        if args.tenant is None or args.user is None:
            raise InvalidInput("a conversation file needs --tenant and --user (whose sessions "
                               "its conversations become)")  # fmt: skip
        conversations = parse_conversations(text, fmt)
        items = conversation_events(conversations, tenant=args.tenant, user=args.user)
        with Memory.open(db, settings=_quiet(), resume=False) as memory:
            written = memory.ingest(items) if items else []
            while memory.facts.extract_next() is not None:
                pass  # the new sessions read for facts before the command ends
        summary = {"tenant": args.tenant, "user": args.user, "sessions": len(conversations),
                   "messages": len(items), "added": len(written)}  # fmt: skip
        line = (
            f"imported {len(conversations)} conversations of user {args.user} into "
            f"tenant {args.tenant}: {len(written)} of {len(items)} messages added"
        )
    print(json.dumps(summary) if args.json else line)
    return 0
