"""What the command line reads: database paths, text and JSON files, event lines.

Every failure becomes an :class:`~kenning.errors.InvalidInput` that names the file (and the
line), so the CLI prints a typed error instead of a traceback.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kenning.errors import InvalidInput, ScopeConflict
from kenning.records import NewEvent, Scope, too_deep
from kenning.store.postgres import is_postgres_url, redact

__all__ = [
    "EVENT_FIELDS",
    "add_location",
    "existing_db",
    "plural",
    "positive",
    "read_events",
    "read_json_file",
    "read_text_file",
    "shown",
    "store_location",
]

_SCOPE_KEYS = ("tenant", "user", "session")
_BOM = b"\xef\xbb\xbf"

EVENT_FIELDS = {
    "tenant": "tenant id (required)",
    "user": "user id (required; a session belongs to one user)",
    "session": "session id (required)",
    "role": "user, assistant, tool or system (required)",
    "content": "the text (required; stored whole up to 2,000,000 characters)",
    "at": "when it was said: ISO-8601 or epoch seconds (default: now)",
    "id": "your id for the event: a repeated id is skipped within its session",
    "idempotency_key": "the same as id (give one of the two)",
    "tool_name": "the tool a tool event comes from",
    "tool_args": "the tool call's arguments (any JSON)",
    "tool_result": "the tool's result (any JSON, nested at most 64 levels); approvals are pinned "
    "from it only for tools the tenant's policy lists as authoritative",
    "metadata": 'an object of key -> string/number/boolean/null, e.g. {"speaker": "Dana"}',
    "tags": "a list of short tags",
    "version": "the agent's prompt/tool version that produced the event",
}
"""The fields of an event line, for ``kenning ingest --help`` and the README."""


def positive(text: str) -> int:
    """An argparse ``type``: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def add_location(p: argparse.ArgumentParser, db_help: str, *, required: bool = True) -> None:
    """--db FILE or --store URL: where the memory lives (one of the two)."""
    where = p.add_mutually_exclusive_group(required=required)
    where.add_argument("--db", metavar="FILE", help=db_help)
    where.add_argument(
        "--store",
        metavar="URL",
        help="a PostgreSQL database instead: postgresql://user:password@host:5432/dbname "
        "(libpq settings such as PGPASSWORD apply)",
    )


def store_location(args: Any, *, create: bool = False) -> str:
    """Where the command's memory lives: ``--store URL`` (PostgreSQL) or ``--db FILE`` (SQLite,
    which must exist unless *create*)."""
    if getattr(args, "store", None) is not None:
        if not is_postgres_url(args.store):
            raise InvalidInput(
                f"--store {redact(args.store)!r} is not a PostgreSQL URL "
                "(postgresql://user:password@host:5432/dbname); use --db for a SQLite file"
            )
        return str(args.store)
    return new_db(args.db) if create else existing_db(args.db)


def plural(count: int, noun: str) -> str:
    """``1 tenant``, ``2 tenants``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def shown(location: str | Path) -> str:
    """A store location as a message may show it (no password)."""
    return redact(str(location))


def existing_db(path: str) -> str:
    """*path* if it is a database file; a clear error if it is missing or a directory."""
    if path == ":memory:":
        return path
    found = Path(path)
    if found.is_dir():
        raise InvalidInput(f"{path} is a directory, not a kenning database file")
    if not found.is_file():
        raise InvalidInput(f"{path} does not exist: ingest events first (kenning ingest)")
    # Opening it would make it a kenning store: a command that only reads must not.
    if found.stat().st_size == 0:
        raise InvalidInput(f"{path} is an empty file, not a kenning database: ingest events first")
    return path


def new_db(path: str) -> str:
    """*path* if a database can be opened or created there."""
    found = Path(path)
    if found.is_dir():
        raise InvalidInput(f"{path} is a directory: give a database file path, e.g. {path}/k.db")
    if not found.parent.is_dir():
        raise InvalidInput(f"{found.parent} does not exist: create the folder first")
    return path


def _readable(path: str, what: str) -> Path:
    found = Path(path)
    if found.is_dir():
        raise InvalidInput(f"{what} {path} is a directory, not a file")
    # A pipe or process substitution (<(...)) exists without being a regular file.
    if not found.exists():
        raise InvalidInput(f"{what} {path} does not exist")
    return found


def read_text_file(path: str, what: str) -> str:
    """The UTF-8 text of a file given on the command line (a byte order mark is read past)."""
    try:
        data = _readable(path, what).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{what} {path} cannot be read: {exc.strerror or exc}") from exc
    data = data.removeprefix(_BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidInput(
            f"{what} {path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x}); "
            "save the file as UTF-8"
        ) from exc


def read_json_file(path: str, what: str) -> Any:
    """The JSON value in a file given on the command line."""
    text = read_text_file(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what} {path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    except RecursionError as exc:
        raise too_deep(f"{what} {path}") from exc


def _derived_key(raw: bytes, seen: Counter[bytes]) -> str:
    """A stable id for a line that has none: its bytes and how often they came before."""
    seen[raw] += 1
    digest = hashlib.blake2b(raw, digest_size=12, person=b"kenning-line").hexdigest()
    return f"line-{digest}-{seen[raw]}"


def read_events(
    lines: Iterable[bytes], *, source: str, max_chars: int
) -> Iterator[tuple[Scope, NewEvent]]:
    """Parse and validate event lines (JSONL bytes); raise InvalidInput naming the first bad
    line. A line without ``id`` gets one derived from its bytes, so re-reading the same file
    yields the same ids (and identical lines in one file stay distinct). A session named by
    two users of its tenant is a ScopeConflict naming both lines: a session belongs to one
    user."""
    seen: Counter[bytes] = Counter()
    owners: dict[tuple[str, str | None], tuple[str | None, int]] = {}
    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(_BOM):
            # Editors on Windows save UTF-8 with a byte order mark; the events are the same.
            raw = raw[len(_BOM) :]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"{source}:{number}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                f"{exc.start + 1}); save the file as UTF-8"
            ) from exc
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise InvalidInput("each line must be a JSON object")
            missing = [k for k in _SCOPE_KEYS if k not in data]
            if missing:
                raise InvalidInput(f"missing {missing}")
            scope = Scope(data.pop("tenant"), data.pop("user"), data.pop("session"))
            if "id" not in data and "idempotency_key" not in data:
                data["id"] = _derived_key(raw.strip(), seen)
            event = NewEvent.from_mapping(data).validated(max_chars=max_chars)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{source}:{number}: not valid JSON ({exc.msg})") from exc
        except InvalidInput as exc:
            raise type(exc)(f"{source}:{number}: {exc.message}") from exc
        except RecursionError as exc:
            raise too_deep(f"{source}:{number}") from exc
        user, first = owners.setdefault((scope.tenant, scope.session), (scope.user, number))
        if user != scope.user:
            raise ScopeConflict(
                f"{source}:{number}: session {scope.session!r} of tenant {scope.tenant!r} "
                f"belongs to user {user!r} (line {first}), not {scope.user!r}; a session "
                "belongs to one user"
            )
        yield scope, event
