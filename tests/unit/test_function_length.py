"""Functions stay short enough to read on one screen (STYLE.md; issue 26): none in src/kenning
outside bench/ is over 60 lines, signature and docstring included."""

from __future__ import annotations

import ast
from pathlib import Path

import kenning

SRC = Path(kenning.__file__).parent
MAX_LINES = 60


def _lengths() -> dict[str, int]:
    out = {}
    for path in SRC.rglob("*.py"):
        if "bench" in path.relative_to(SRC).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                where = f"{path.relative_to(SRC)}:{node.lineno} {node.name}"
                out[where] = node.end_lineno - node.lineno + 1
    return out


def test_no_function_outside_bench_is_over_sixty_lines() -> None:
    lengths = _lengths()
    assert len(lengths) > 1000, "the source tree was read"
    too_long = {where: n for where, n in lengths.items() if n > MAX_LINES}
    assert not too_long, too_long
