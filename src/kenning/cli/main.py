"""``kenning`` command line: argument parsing, error reporting and dispatch.

Configuration is built here, at the edge; the commands receive explicit values.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from kenning.errors import KenningError

__all__ = ["build_parser", "main"]


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

    p = sub.add_parser("ingest", help="append events from a JSON Lines file")
    p.add_argument(
        "file", help="JSONL: one {tenant,user,session,role,content,at?,metadata?} a line"
    )
    p.add_argument("--db", required=True, help="SQLite database file (created if missing)")
    p.add_argument("--batch", type=_positive, default=256, help="events per atomic batch")
    p.add_argument("--no-progress", action="store_true", help="do not show a progress bar")

    p = sub.add_parser("search", help="hybrid search inside a tenant, user or session")
    p.add_argument("query")
    p.add_argument("--db", required=True)
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

    p = sub.add_parser("assemble", help="build the token-budgeted window for a session")
    p.add_argument("--db", required=True)
    p.add_argument("--tenant", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--session", required=True)
    p.add_argument("--budget", type=_positive, required=True, help="budget in tokens")
    p.add_argument("--model", required=True, help="target model, e.g. gpt-4o (picks the tokenizer)")
    p.add_argument("--reserve-output", type=int, default=0, help="tokens kept for the reply")
    p.add_argument("--query", help="what to retrieve memories for (default: latest user input)")
    p.add_argument("--goal", help="the user's goal for this conversation")
    p.add_argument("--system-file", help="file holding the system policy")
    p.add_argument("--tools-file", help="JSON file with a list of tool schemas")
    p.add_argument("--lexical-only", action="store_true", help="retrieve without the model")
    p.add_argument("--json", action="store_true", help="print the window as JSON")

    p = sub.add_parser("pins", help="list, set or close a session's pins")
    p.add_argument("action", choices=("list", "set", "close"))
    p.add_argument("--db", required=True)
    p.add_argument("--tenant", required=True)
    p.add_argument("--user")
    p.add_argument("--session")
    p.add_argument("--kind", help="set: entity_id, amount, approval, authorization, ...")
    p.add_argument("--key", help="set/close: the pin's key (set: default kind:value)")
    p.add_argument("--value", help="set: the value")
    p.add_argument("--amount", help="set: a decimal amount (with --currency)")
    p.add_argument("--currency", help="set: ISO-4217 code, e.g. EUR")
    p.add_argument("--history", action="store_true", help="list: every version")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("demo", help="ingest a bundled sample conversation and search it")
    p.add_argument("--db", help="SQLite file to write (default: a new temporary file)")

    p = sub.add_parser("bench", help="benchmarks (see `kenning bench --help`)")
    bench = p.add_subparsers(dest="bench", required=True, metavar="BENCH")
    b = bench.add_parser("store", help="ingest throughput and search latency at 10k/100k events")
    b.add_argument("--out", required=True, help="directory for report.json and report.md")
    b.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    b.add_argument("--queries", type=_positive, default=200, help="search queries per size")
    b.add_argument("--seed", type=int, default=7)
    b = bench.add_parser("locomo", help="retrieval recall on a LoCoMo file vs baselines")
    b.add_argument("--data", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    b.add_argument("--out", required=True)
    b.add_argument("--part", choices=("tuning", "validation", "all"), default="all",
                   help="dev-split part to run (all: both, each reported)")  # fmt: skip
    b.add_argument("--fusion", choices=("rrf", "weighted"), help="override the fusion method")
    b.add_argument("--embed-text", choices=("content", "speaker", "speaker_date"),
                   help="override what is embedded for a turn")  # fmt: skip
    b.add_argument("--no-plots", action="store_true")
    b = bench.add_parser("longmemeval", help="retrieval recall on a LongMemEval file vs baselines")
    b.add_argument("--data", required=True, help="LongMemEval JSON file (.json or .json.gz)")
    b.add_argument("--out", required=True)
    b.add_argument("--limit", type=_positive, help="only the first N questions")
    b.add_argument("--part", choices=("tuning", "validation", "all"), default="all",
                   help="dev-split part to run (all: both, each reported)")  # fmt: skip
    b.add_argument("--fusion", choices=("rrf", "weighted"), help="override the fusion method")
    b.add_argument("--embed-text", choices=("content", "speaker", "speaker_date"),
                   help="override what is embedded for a turn")  # fmt: skip
    b.add_argument("--no-plots", action="store_true")
    b = bench.add_parser("reader", help="query reader precision/recall on labelled product queries")
    b.add_argument("--out", required=True)
    b.add_argument("--data", help="a labelled JSONL file (default: the set shipped with kenning)")
    b = bench.add_parser("recall", help="synthetic suite: facts said once, asked in other words")
    b.add_argument("--out", required=True)
    b.add_argument("--seed", type=int, default=0, help="first conversation seed")
    b.add_argument("--conversations", type=_positive, default=10, help="seeded conversations")
    b = bench.add_parser("pins", help="pin survival in windows vs sliding window / summaries")
    b.add_argument("--out", required=True)
    b.add_argument("--threads", type=_positive, default=200, help="seeded support threads")
    b.add_argument("--seed", type=int, default=0)
    b = bench.add_parser("assemble", help="assemble latency for sessions of 100 to 100k events")
    b.add_argument("--out", required=True)
    b.add_argument("--sizes", default="100,1000,10000,100000", help="comma-separated sizes")
    b.add_argument("--calls", type=_positive, default=200, help="timed calls per row")
    b.add_argument("--budget", type=_positive, default=8_000, help="window budget in tokens")
    return parser


def _require_pin_args(args: argparse.Namespace) -> None:
    from kenning.errors import InvalidInput

    need = ("kind", "value") if args.action == "set" else ("key",)
    missing = [f"--{name}" for name in need if getattr(args, name) is None]
    if missing or args.user is None or args.session is None:
        flags = ", ".join(f"--{n}" for n in need)
        raise InvalidInput(f"pins {args.action} needs --user, --session and {flags}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kenning`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    # onnxruntime would otherwise try to reach a telemetry host from native code.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    from kenning.cli import commands

    try:
        if args.command == "ingest":
            return commands.ingest(args)
        if args.command == "search":
            return commands.search(args)
        if args.command in ("assemble", "pins"):
            from kenning.cli import context_commands

            if args.command == "pins" and args.action != "list":
                _require_pin_args(args)
            return getattr(context_commands, args.command)(args)  # type: ignore[no-any-return]
        if args.command == "demo":
            return commands.demo(args)
        if args.command == "bench":
            from kenning.cli import bench_commands

            return bench_commands.run(args)
    except KenningError as exc:
        print(f"kenning: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kenning: interrupted", file=sys.stderr)
        return 130
    raise AssertionError(f"unhandled command {args.command!r}")  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
