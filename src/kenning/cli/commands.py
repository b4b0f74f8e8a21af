"""The ``ingest``, ``search`` and ``demo`` commands."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from kenning.cli.context_commands import describe_window
from kenning.cli.inputs import new_db, plural, read_events, shown, store_location
from kenning.errors import InvalidFilter, InvalidInput, ModelUnavailable, ScopeConflict, StoreError
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import NewEvent, Scope, to_utc
from kenning.search.hits import Hit
from kenning.search.plan import QueryPlan
from kenning.settings import Settings

__all__ = ["demo", "ingest", "migrate", "reindex", "search"]


def _progress(total: int, *, enabled: bool, desc: str, unit: str = "ev") -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, disable=not enabled, file=sys.stderr)


@contextmanager
def _interruptible() -> Iterator[threading.Event]:
    """Ctrl-C sets the event (the batch being written finishes and is counted); a second
    Ctrl-C interrupts at once."""
    stop = threading.Event()

    def on_interrupt(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield stop  # signal handlers belong to the main thread
        return
    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def ingest(args: argparse.Namespace) -> int:
    # Facts are read below, in the foreground, so the command ends with them in place.
    settings = Settings(longterm=LongTermSettings(extract=False))
    db = store_location(args, create=True)
    rows = _ingest_rows(str(args.file), settings.max_content_chars)
    started = time.perf_counter()
    with Memory.open(db, settings=settings, resume=False) as memory, _interruptible() as stop:
        _check_owners(memory, rows, str(args.file))
        added, done = _write_batches(memory, rows, args, stop)
        if stop.is_set():
            print(
                f"kenning: interrupted: {added} events committed ({done - added} already "
                f"present) of {len(rows)}; run the same command again to add the rest",
                file=sys.stderr,
            )
            return 130
        elapsed = time.perf_counter() - started
        _report_ingest(rows, added, db, elapsed)
        if args.no_facts:
            return 0
        return _read_facts(memory, stop, show=not args.no_progress)


def _ingest_rows(source: str, max_chars: int) -> list[tuple[Scope, NewEvent]]:
    """Every line of *source* validated before the database is opened: a bad last line
    changes nothing."""
    if source == "-":
        return list(read_events(sys.stdin.buffer, source="<stdin>", max_chars=max_chars))
    if Path(source).is_dir():
        raise InvalidInput(f"{source} is a directory, not a JSON Lines file")
    if not Path(source).exists():
        raise InvalidInput(f"{source} does not exist")
    # A pipe or process substitution (<(...)) is read like a file.
    try:
        with open(source, "rb") as stream:
            return list(read_events(stream, source=source, max_chars=max_chars))
    except OSError as exc:
        raise InvalidInput(f"{source} cannot be read: {exc.strerror or exc}") from exc


def _write_batches(
    memory: Memory,
    rows: list[tuple[Scope, NewEvent]],
    args: argparse.Namespace,
    stop: threading.Event,
) -> tuple[int, int]:
    """Append *rows* in atomic batches until done or stopped; (events added, rows done)."""
    added = done = 0
    show = not args.no_progress and len(rows) >= 1000
    with _progress(len(rows), enabled=show, desc="ingest") as bar:
        for start in range(0, len(rows), args.batch):
            if stop.is_set():
                break
            chunk = rows[start : start + args.batch]
            added += len(memory.ingest(chunk))
            done += len(chunk)
            bar.update(len(chunk))
    return added, done


def _report_ingest(rows: list[tuple[Scope, NewEvent]], added: int, db: Any, elapsed: float) -> None:
    sessions = {(s.tenant, s.session) for s, _ in rows}
    tenants = {s.tenant for s, _ in rows}
    skipped = len(rows) - added
    # The rate counts what was written: a re-run that skips everything wrote nothing.
    rate = f", {added / elapsed:.0f} events/s" if added and elapsed > 0 else ""
    print(
        f"ingested {plural(added, 'event')} ({plural(len(sessions), 'session')}, "
        f"{plural(len(tenants), 'tenant')}) into {shown(db)} in {elapsed:.2f} s{rate}"
        + (f"; skipped {skipped} already present (same id)" if skipped else "")
    )


def _read_facts(memory: Memory, stop: threading.Event, *, show: bool) -> int:
    """Read every session with events not yet read for facts (the new ones, and any an
    earlier run left), one session at a time until done or stopped."""
    waiting = memory.store.extraction_stats()
    total = waiting.pending + waiting.running
    read = 0
    started = time.perf_counter()
    with _progress(total, enabled=show and total >= 20, desc="facts", unit="session") as bar:
        while not stop.is_set() and memory.facts.extract_next() is not None:
            read += 1
            bar.update(1)
    if stop.is_set():
        print(
            f"kenning: interrupted: read {read} of {total} sessions for facts; "
            "kenning consolidate reads the rest",
            file=sys.stderr,
        )
        return 130
    if read:
        print(f"read {read} sessions for facts in {time.perf_counter() - started:.2f} s")
    return 0


def _check_owners(memory: Memory, rows: list[tuple[Scope, NewEvent]], source: str) -> None:
    """Raise ScopeConflict, before any batch is written, if a session of *rows* belongs to
    another user in the store: batches commit one by one, so a conflict found while writing
    would leave the batches before it behind."""
    wanted: dict[str, dict[str, str]] = {}
    for scope, _ in rows:
        if scope.session is not None and scope.user is not None:
            wanted.setdefault(scope.tenant, {}).setdefault(scope.session, scope.user)
    for tenant, users in wanted.items():
        owners = memory.store.session_owners(tenant, list(users))
        for session, user in users.items():
            owner = owners.get(session)
            if owner is not None and owner != user:
                raise ScopeConflict(
                    f"{source}: session {session!r} belongs to another user of tenant "
                    f"{tenant!r}; session ids are unique within a tenant; nothing was written"
                )


def _parse_filters(items: list[str]) -> dict[str, object]:
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidFilter(f"--filter {item!r} must look like KEY=VALUE")
        out.setdefault(key, []).append(value)
    return {k: v if len(v) > 1 else v[0] for k, v in out.items()}


def _print_hits(hits: tuple[Hit, ...], out: TextIO) -> None:
    if not hits:
        print("no results", file=out)
        return
    for rank, hit in enumerate(hits, start=1):
        signals = " ".join(
            f"{name}={value:.3f}" for name, value in hit.scores.items() if name != "score"
        )
        who = hit.metadata.get("speaker") or hit.metadata.get("name") or hit.role.value
        print(
            f"{rank:>2}. {hit.score:.3f}  [{hit.kind} {hit.scope.session} #{hit.seq or '-'} "
            f"{hit.at:%Y-%m-%d %H:%M} {who}] {hit.id}",
            file=out,
        )
        print(f"    {hit.content}", file=out)
        print(f"    ({signals})", file=out)


def _print_plan(plan: QueryPlan, out: TextIO) -> None:
    parts = [
        f"'{w.phrase}' = {w.start:%Y-%m-%d %H:%M} to {w.end:%Y-%m-%d %H:%M} UTC"
        for w in plan.windows
    ]
    if plan.multi_target:
        parts.append("several targets (no session lift)")
    if plan.asks_past:
        parts.append("a past state (changed values keep their place)")
    if parts:
        print(f"(query read as: {'; '.join(parts)})", file=out)


def reindex(args: argparse.Namespace) -> int:
    """Rebuild a tenant's index rows under the current settings (see kenning.reindexing)."""
    db = store_location(args)
    Scope(args.tenant)  # a bad tenant id fails before the model loads
    started = time.perf_counter()
    with Memory.open(db, resume=False) as memory, _interruptible() as stop:
        bar = _progress(0, enabled=not args.no_progress, desc="reindex")
        with bar:
            report = memory.reindex(
                args.tenant,
                batch=args.batch,
                stop=stop.is_set,
                progress=lambda r: bar.update(r.checked - bar.n),
            )
    elapsed = time.perf_counter() - started
    line = (
        f"checked {report.checked} events of tenant {report.tenant}: rebuilt {report.rebuilt}, "
        f"relinked {report.relinked}, embedded {report.embedded} texts in {elapsed:.2f} s"
    )
    if stop.is_set():
        print(f"kenning: interrupted: {line}; run the same command again for the rest",
              file=sys.stderr)  # fmt: skip
        return 130
    print(line)
    return 0


def search(args: argparse.Namespace) -> int:
    db = store_location(args)
    scope = Scope(args.tenant, args.user, args.session)
    # A search reads: it does not start reading the store's unread events for facts (spaCy
    # and a pass over the history, which took a cold search at 100k events to 1 GB).
    settings = Settings()
    settings = replace(settings, longterm=replace(settings.longterm, extract=False))
    with Memory.open(db, settings=settings, resume=False) as memory:
        # The model first, then the partition: the model's load peaks about 120 MB above
        # what it keeps, and a search loads the partition meanwhile (on a worker), so the two
        # peaks added up in a cold search's RSS (measured at 100k events: 469 against
        # about 400 MiB).
        load = getattr(memory.embedder, "load", None)
        if callable(load):
            with suppress(ModelUnavailable):
                load()  # the search says it is degraded, and why
        results = memory.search(
            scope,
            args.query,
            k=args.k,
            min_score=args.min_score,
            filters=_parse_filters(args.filter),
            now=None if args.now is None else to_utc(args.now, what="--now"),
        )
    if args.json:
        json.dump([h.to_dict() for h in results], sys.stdout, ensure_ascii=False, indent=2)
        print()
    else:
        if results.degraded:
            print(f"(degraded: {results.reason})")
        if results.plan is not None:
            _print_plan(results.plan, sys.stdout)
        _print_hits(results.hits, sys.stdout)
    return 0


def _sample_rows() -> list[tuple[Scope, NewEvent]]:
    data = resources.files("kenning.data").joinpath("sample_conversation.jsonl").read_bytes()
    return list(
        read_events(
            data.splitlines(),
            source="sample_conversation.jsonl",
            max_chars=Settings().max_content_chars,
        )
    )


_DEMO_QUERIES: tuple[tuple[Mapping[str, str | None], str], ...] = (
    ({"tenant": "acme", "user": "dana", "session": None}, "who approved my refund?"),
    ({"tenant": "acme", "user": "dana", "session": None}, "what food does she not eat"),
    ({"tenant": "acme", "user": None, "session": None}, "broken glass delivery"),
)


_DEMO_POLICY = "You are Acme's support agent. Use only the ids and amounts in this context."


#: The demo's users agreed that their facts reach their other sessions (a product asks once).
_DEMO_USERS = (Scope("acme", "dana"), Scope("acme", "lee"))


def demo(args: argparse.Namespace) -> int:
    db: str | Path
    if args.store is not None:
        db = store_location(args)
    elif args.db:
        db = Path(new_db(args.db))
    else:
        db = Path(tempfile.mkdtemp(prefix="kenning-demo-")) / "demo.db"
    rows = _sample_rows()
    with Memory.open(db) as memory:
        for user in _DEMO_USERS:
            memory.facts.set_consent(user, share_across_sessions=True)
        started = time.perf_counter()
        events = memory.ingest(rows)
        elapsed = time.perf_counter() - started
        print(
            f"kenning demo: ingested {len(events)} sample events into {shown(db)} ({elapsed:.2f} s)"
        )
        for where, query in _DEMO_QUERIES:
            scope = Scope(where["tenant"] or "", where["user"], where["session"])
            named = ", ".join(f"{k}={v}" for k, v in where.items() if v)
            print(f"\nsearch {query!r} in {named}:")
            _print_hits(memory.search(scope, query, k=3).hits, sys.stdout)
        _print_demo_facts(memory, _DEMO_USERS[0])
        chat = Scope("acme", "dana", "s-2026-03-09")
        window = memory.assemble(
            chat, budget_tokens=700, model="gpt-4o", system=_DEMO_POLICY,
            goal="Resolve Dana's billing questions",
        )  # fmt: skip
        print(f"\nassemble {chat.session} for gpt-4o in 700 tokens:")
        print(describe_window(window))
    at = f"--store '{shown(db)}'" if isinstance(db, str) else f"--db {db}"
    print(f"\ntry: kenning search 'refund amount' {at} --tenant acme --user dana --json")
    print(
        f"     kenning assemble {at} --tenant acme --user dana --session s-2026-03-02 "
        "--budget 600 --model gpt-4o --json"
    )
    print(f"     kenning facts list {at} --tenant acme --user dana --all")
    return 0


def _print_demo_facts(memory: Memory, user: Scope) -> None:
    """The user's long-term facts as the reader took them from their own words: a change of
    address closes the old fact at the time of the new statement."""
    if not memory.wait_for_facts(timeout=120):
        print(f"\nlong-term facts of {user.user}: still being read (try `kenning facts list`)")
        return
    print(f"\nlong-term facts of {user.user}, every version (read from what the user said):")
    for fact in memory.facts.list(user, include_closed=True):
        until = f"{fact.valid_to:%Y-%m-%d}" if fact.valid_to else "now"
        print(f"  {fact.status.value:<10} {fact.attribute}: {fact.value}  "
              f"({fact.valid_from:%Y-%m-%d} to {until})  {fact.text}")  # fmt: skip


def migrate(args: argparse.Namespace) -> int:
    """Copy a SQLite file into PostgreSQL and print the counts of both sides per tenant."""
    from kenning.store.postgres import is_postgres_url
    from kenning.store.postgres.store import PostgresStore

    if not is_postgres_url(args.target):
        raise InvalidInput(
            f"--to {shown(args.target)!r} is not a PostgreSQL URL (postgresql://...)"
        )
    source = Path(args.source)
    if source.is_dir() or not source.is_file():
        raise InvalidInput(f"--from {source} is not a kenning SQLite file")
    started = time.perf_counter()
    with PostgresStore(args.target) as store:
        counts = store.import_sqlite(
            source, progress=lambda t: print(f"copying tenant {t}", file=sys.stderr)
        )
    elapsed = time.perf_counter() - started
    rows = [c for c in counts if c.source or c.destination]
    if args.json:
        json.dump([_count_json(c) for c in rows], sys.stdout, indent=2)
        print()
    else:
        print(f"{'tenant':<20} {'table':<16} {'file':>9} {'database':>9}  check")
        for c in rows:
            print(f"{c.tenant:<20} {c.table:<16} {c.source:>9} {c.destination:>9}  "
                  f"{'ok' if c.ok else 'MISSING'}")  # fmt: skip
        tenants = len({c.tenant for c in counts})
        print(f"copied {tenants} tenants from {source} to {shown(args.target)} in {elapsed:.1f} s")
    missing = [c for c in counts if not c.ok]
    if missing:
        raise StoreError(
            f"{len(missing)} table(s) lack rows of the file after the copy, e.g. "
            f"{missing[0].table} of tenant {missing[0].tenant!r}; run the command again"
        )
    return 0


def _count_json(count: Any) -> dict[str, Any]:
    return {
        "tenant": count.tenant, "table": count.table, "source": count.source,
        "destination": count.destination, "ok": count.ok,
    }  # fmt: skip
