"""Every Python example in docs/integrations.md runs as written, each in a fresh directory
and a fresh interpreter (so an example cannot lean on another's state)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)


def test_the_page_has_an_example_per_framework() -> None:
    joined = "\n".join(BLOCKS)
    for module in ("langgraph", "openai_agents", "langchain", "llamaindex"):
        assert f"kenning.integrations.{module}" in joined


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_the_example_runs(tmp_path: Path, index: int) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "PYTHONPATH", "HOME")}
    env |= {"HF_HUB_OFFLINE": "1", "OPENAI_AGENTS_DISABLE_TRACING": "1"}
    done = subprocess.run([sys.executable, "-c", BLOCKS[index]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
