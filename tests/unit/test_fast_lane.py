"""``make test-fast`` (unit and property tests without PostgreSQL) loads no PostgreSQL code:
collecting it imports neither psycopg nor the PostgreSQL store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_COLLECT = """
import json, sys
import pytest
code = pytest.main(["-q", "--collect-only", "-p", "no:cacheprovider",
                    "-m", "not postgres and not llm_server", "tests/unit", "tests/property"])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("psycopg", "psycopg_pool")
                or m.startswith("kenning.store.postgres.store") or m == "tests.pg")
print(json.dumps({"code": int(code), "loaded": loaded}))
"""


def test_the_fast_lane_imports_no_postgresql_code() -> None:
    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run(
        [sys.executable, "-c", _COLLECT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["code"] == 0
    assert report["loaded"] == []
