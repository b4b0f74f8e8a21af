"""``kenning`` command line: argument parsing, error reporting and dispatch.

Configuration is built here, at the edge; the commands receive explicit values.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from kenning.cli import longterm_commands
from kenning.cli.inputs import EVENT_FIELDS, add_location
from kenning.errors import KenningError

__all__ = ["build_parser", "main"]

LONGTERM = frozenset(
    {"facts", "profile", "consent", "policy", "procedures", "hold", "purge", "consolidate", "stats"}
)


_BENCH_STORE_HELP = (
    "run on this PostgreSQL database instead of a temporary SQLite file (the bench's tenant "
    "there is erased first)"
)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kenning",
        description="Memory for LLM agents: episodic record, hybrid search, token budgets.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    p.add_argument("--batch", type=_positive, default=256, help="events per atomic batch")
    p.add_argument("--no-progress", action="store_true", help="do not show a progress bar")

    p = sub.add_parser("search", help="hybrid search inside a tenant, user or session")
    p.add_argument("query")
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user")
    p.add_argument("--session")
    p.add_argument("--k", type=_positive, default=10)
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
    p.add_argument("--batch", type=_positive, default=512, help="events per atomic batch")
    p.add_argument("--no-progress", action="store_true", help="do not show a progress bar")

    p = sub.add_parser("assemble", help="build the token-budgeted window for a session")
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--session", required=True)
    p.add_argument("--budget", type=_positive, required=True, help="budget in tokens")
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

    longterm_commands.add_parsers(sub)

    p = sub.add_parser("demo", help="ingest a bundled sample conversation and search it")
    add_location(p, "SQLite file to write (default: a new temporary file)", required=False)

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

    from kenning.cli.service_commands import add_parsers

    add_parsers(sub)

    p = sub.add_parser("bench", help="benchmarks (see `kenning bench --help`)")
    bench = p.add_subparsers(dest="bench", required=True, metavar="BENCH")
    b = bench.add_parser("store", help="ingest throughput and search latency at 10k/100k events")
    b.add_argument("--out", required=True, help="directory for report.json and report.md")
    b.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    b.add_argument("--queries", type=_positive, default=200, help="search queries per size")
    b.add_argument("--seed", type=int, default=7)
    b.add_argument(
        "--store",
        metavar="URL",
        help="measure SQLite and this PostgreSQL database side by side on the same events "
        "(each text embedded once, vectors reused by both; its tenant 'bench' is erased)",
    )
    b.add_argument(
        "--concurrent-writer",
        action="store_true",
        help="also time searches while another process writes to the same file",
    )
    b.add_argument(
        "--write-path-events", type=_positive, default=3_000,
        help="events ingested with fact extraction off and on (write-path timing)",
    )  # fmt: skip
    b.add_argument(
        "--sentences", type=_positive, default=1,
        help="sentences per synthetic event (more than one: events are embedded by sentence)",
    )  # fmt: skip
    b.add_argument(
        "--vector-cache", metavar="FILE",
        help="with --store: keep the vectors in FILE (SQLite) and reuse them in later runs",
    )  # fmt: skip
    b.add_argument(
        "--embed-only", action="store_true",
        help="with --store: embed (into --vector-cache) and stop; rerun to continue or measure",
    )  # fmt: skip
    b = bench.add_parser("locomo", help="retrieval recall on a LoCoMo file vs baselines")
    b.add_argument("--data", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--out", required=True)
    b.add_argument("--part", choices=("tuning", "validation", "all"), default="all",
                   help="dev-split part to run (all: both, each reported)")  # fmt: skip
    b.add_argument("--store", metavar="URL", help=_BENCH_STORE_HELP)
    b.add_argument("--fusion", choices=("rrf", "weighted"), help="override the fusion method")
    b.add_argument("--embed-text", choices=("content", "speaker", "speaker_date"),
                   help="override what is embedded for a turn")  # fmt: skip
    b.add_argument("--no-plots", action="store_true")
    b = bench.add_parser("longmemeval", help="retrieval recall on a LongMemEval file vs baselines")
    b.add_argument("--data", required=True, help="LongMemEval JSON file (.json or .json.gz)")
    b.add_argument("--out", required=True)
    b.add_argument("--store", metavar="URL", help=_BENCH_STORE_HELP)
    b.add_argument("--limit", type=_positive, help="only the first N questions")
    b.add_argument("--part", choices=("tuning", "validation", "all"), default="all",
                   help="dev-split part to run (all: both, each reported)")  # fmt: skip
    b.add_argument("--fusion", choices=("rrf", "weighted"), help="override the fusion method")
    b.add_argument("--embed-text", choices=("content", "speaker", "speaker_date"),
                   help="override what is embedded for a turn")  # fmt: skip
    b.add_argument("--no-plots", action="store_true")
    b = bench.add_parser(
        "rerank", help="train the opt-in re-ranker on the tuning parts, choose it on validation"
    )
    b.add_argument("--locomo", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--longmemeval", required=True, help="LongMemEval JSON file (.json[.gz])")
    b.add_argument("--out", required=True, help="directory for the weights and the reports")
    b.add_argument("--l2", default="0.001,0.003,0.01,0.03,0.1",
                   help="comma-separated L2 strengths to fit (one model each)")  # fmt: skip
    b.add_argument("--depth", type=_positive, default=30, help="candidates re-ordered")
    b.add_argument(
        "--vector-cache", metavar="FILE",
        help="keep the vectors in FILE (SQLite) and reuse them in later runs",
    )  # fmt: skip
    b = bench.add_parser(
        "reindex", help="a store of whole-message vectors reindexed, against a fresh ingest"
    )
    b.add_argument("--locomo", help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--longmemeval", help="LongMemEval JSON file (.json[.gz])")
    b.add_argument("--out", required=True)
    b.add_argument("--batch", type=_positive, default=512, help="events per reindex batch")
    b = bench.add_parser("reader", help="query reader precision/recall on labelled product queries")
    b.add_argument("--out", required=True)
    b.add_argument("--data", help="a labelled JSONL file (default: the set shipped with kenning)")
    b = bench.add_parser("recall", help="synthetic suite: facts said once, asked in other words")
    b.add_argument("--out", required=True)
    b.add_argument("--seed", type=int, default=0, help="first conversation seed")
    b.add_argument("--conversations", type=_positive, default=10, help="seeded conversations")
    b = bench.add_parser("staleness", help="stale facts after changes and revocations")
    b.add_argument("--out", required=True)
    b.add_argument("--users", type=_positive, default=40, help="seeded users")
    b.add_argument("--seed", type=int, default=0)
    b = bench.add_parser("pins", help="pin survival in windows vs sliding window / summaries")
    b.add_argument("--out", required=True)
    b.add_argument("--threads", type=_positive, default=200, help="seeded support threads")
    b.add_argument("--seed", type=int, default=0)
    b = bench.add_parser("assemble", help="assemble latency for sessions of 100 to 100k events")
    b.add_argument("--out", required=True)
    b.add_argument("--sizes", default="100,1000,10000,100000", help="comma-separated sizes")
    b.add_argument("--calls", type=_positive, default=200, help="timed calls per row")
    b.add_argument("--budget", type=_positive, default=8_000, help="window budget in tokens")
    b = bench.add_parser(
        "load", help="the server under 2,000 concurrent sessions (1 and N workers)"
    )
    b.add_argument("--out", required=True, help="directory for report.json and report.md")
    b.add_argument("--sessions", type=_positive, default=2_000, help="concurrent sessions")
    b.add_argument("--tenants", type=_positive, default=10, help="tenants the users spread over")
    b.add_argument("--duration", type=float, default=60.0, help="seconds of load per run")
    b.add_argument("--rps", default="20", help="offered turns/s, comma-separated to sweep")
    b.add_argument("--workers", default="1,2", help="server processes, comma-separated runs")
    b.add_argument("--no-model", action="store_true", help="serve without the MiniLM model")
    b.add_argument("--port", type=int, default=8765, help="loopback port of the server")
    b.add_argument("--store", metavar="URL",
                   help="serve this PostgreSQL database (its tenants t0..tN are erased before "
                   "each run) instead of a fresh SQLite file")  # fmt: skip
    return parser


def _require_pin_args(args: argparse.Namespace) -> None:
    from kenning.errors import InvalidInput

    if args.user is None or args.session is None:
        raise InvalidInput(f"pins {args.action} needs --user and --session")
    if args.action == "close":
        if args.key is None:
            raise InvalidInput("pins close needs --key")
        return
    if args.kind is None:
        raise InvalidInput("pins set needs --kind (entity_id, amount, approval, ...)")
    if (args.amount is None) != (args.currency is None):
        raise InvalidInput(
            "--amount and --currency go together, e.g. --amount 42.50 --currency EUR"
        )
    if args.kind == "amount" and args.amount is None:
        raise InvalidInput("pins set --kind amount needs --amount and --currency")
    if args.value is None and args.amount is None:
        raise InvalidInput("pins set needs --value (or --amount and --currency)")


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
    from kenning.cli import commands

    try:
        if args.command == "ingest":
            return commands.ingest(args)
        if args.command == "search":
            return commands.search(args)
        if args.command == "reindex":
            return commands.reindex(args)
        if args.command in ("assemble", "pins"):
            from kenning.cli import context_commands

            if args.command == "pins" and args.action != "list":
                _require_pin_args(args)
            return getattr(context_commands, args.command)(args)  # type: ignore[no-any-return]
        if args.command == "demo":
            return commands.demo(args)
        if args.command in LONGTERM:
            return longterm_commands.run(args)
        if args.command in ("serve", "keys", "mcp"):
            from kenning.cli import service_commands

            return getattr(service_commands, args.command)(args)  # type: ignore[no-any-return]
        if args.command == "migrate":
            return commands.migrate(args)
        if args.command == "bench":
            from kenning.cli import bench_commands

            return bench_commands.run(args)
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
    raise AssertionError(f"unhandled command {args.command!r}")  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
