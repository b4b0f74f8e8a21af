"""``kenning bench staleness`` on a few users: the report's shape and what it must show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenning.cli.main import main


def test_bench_staleness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "stale"
    assert main(["bench", "staleness", "--out", str(out), "--users", "4", "--no-free-text"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["stale_rate"]) == {"kenning", "append_only"}
    assert report["stale_rate"]["kenning"] <= 0.02 < report["stale_rate"]["append_only"]
    assert report["duplicates"]["kenning_active_duplicates"] == 0
    assert report["extraction"]["held_out"]["sentences"] == 60
    assert {"precision", "recall"} <= set(report["extraction"]["tuning"])
    assert "kenning (facts)" in capsys.readouterr().out


def test_bench_revocation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "revocation"
    assert main(["bench", "revocation", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    tuning, held_out = report["parts"]["tuning"], report["parts"]["held_out"]
    assert tuning["pairs"] + held_out["pairs"] == 125
    # The setting is the lowest step of the sweep without a false closure on the tuning part.
    assert report["setting"] == report["lowest_without_false_closures_on_tuning"]
    assert tuning["false_closures"] == 0 and tuning["closed"] >= 0.8 * tuning["meant"]
    assert "facts meant, closed" in capsys.readouterr().out
