"""The LangGraph example of docs/integrations.md runs as written, in a fresh interpreter, and
prints what the graph recalled."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "integrations.md"


def _example() -> str:
    section = DOC.read_text().split("\n## LangGraph\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "docs/integrations.md has no Python example under ## LangGraph"
    return found.group(1)


def test_the_langgraph_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_example())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    recalled = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert recalled[0].endswith("Any news on A-1042?")
    assert recalled[1].endswith("My order A-1042 arrived damaged")
    assert (tmp_path / "memory.db").exists()
