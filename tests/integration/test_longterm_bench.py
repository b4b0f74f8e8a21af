"""``kenning bench staleness`` on a few users: the report's shape and what it must show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenning.cli.main import main


def test_bench_staleness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "stale"
    assert main(["bench", "staleness", "--out", str(out), "--users", "4"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["stale_rate"]) == {"kenning", "append_only"}
    assert report["stale_rate"]["kenning"] <= 0.02 < report["stale_rate"]["append_only"]
    assert report["duplicates"]["kenning_active_duplicates"] == 0
    assert report["extraction"]["held_out"]["sentences"] == 60
    assert {"precision", "recall"} <= set(report["extraction"]["tuning"])
    assert "kenning (facts)" in capsys.readouterr().out
