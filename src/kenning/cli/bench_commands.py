"""``kenning bench ...``: benchmark commands (reports under --out)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kenning.errors import InvalidInput

__all__ = ["run"]


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InvalidInput(f"--sizes {text!r} must be comma-separated integers") from exc
    if not sizes or any(s < 100 for s in sizes):
        raise InvalidInput("--sizes needs at least one size, each >= 100")
    return sizes


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.bench == "store":
        from kenning.bench.store_bench import run_store_bench

        report = run_store_bench(
            out, sizes=_sizes(args.sizes), queries=args.queries, seed=args.seed
        )
        print((out / "report.md").read_text())
        print(json.dumps(report["targets"], indent=2))
        return 0
    raise InvalidInput(f"unknown bench {args.bench!r}")
