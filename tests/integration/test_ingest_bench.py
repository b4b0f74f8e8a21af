"""``kenning bench ingest`` through the CLI entry point, on a tiny LoCoMo file: every write
mode, the whole-turn baseline and LangGraph's InMemoryStore in one run, a served process
written through its HTTP API, the split of a turn's time, and the exact token counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenning.cli.main import main
from tests.integration.test_bench_commands import _locomo

SYSTEMS = {
    "kenning_event",
    "kenning_event_sync",
    "kenning_session",
    "baseline",
    "langgraph_inmemory",
}


def test_bench_ingest_measures_every_system_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(_locomo()))
    out = tmp_path / "out"
    argv = ["bench", "ingest", "--data", str(data), "--out", str(out), "--repeats", "2",
            "--server"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["turns"] == 5 and report["repeats"] == 2
    assert set(report["systems"]) == SYSTEMS | {"kenning_server"}
    for name, row in report["systems"].items():
        assert row["turns"] == 5 and len(row["turns_per_s_runs"]) == 2, name
        assert row["turns_per_s"] > 0
    for name in ("kenning_event", "kenning_session"):
        split = report["systems"][name]["split_ms"]
        assert set(split) == {"model", "plan", "pins", "sql", "index", "other"}
        assert split["model"] > 0 and split["sql"] > 0
        cpu = report["systems"][name]["cpu_split_ms"]
        assert set(cpu) == {"model", "plan", "pins", "sql", "index", "facts", "rest"}
        assert cpu["model"] > 0 and all(v >= 0 for k, v in cpu.items() if k != "rest")
    assert set(report["vs_langgraph"]) == SYSTEMS - {"langgraph_inmemory"} | {"kenning_server"}
    event, session = report["tokens"]["event"], report["tokens"]["session"]
    # 5 turns, one of several sentences ("Welcome back! Look at this." + the image caption)
    assert event["tokens_per_turn"] == session["tokens_per_turn"] > 0
    assert event["baseline_tokens_per_turn"] > 0
    assert event["model_calls_per_turn"] >= 1 > session["model_calls_per_turn"]
    assert 0 <= event["padding_share"] < 1
    assert "× LangGraph" in capsys.readouterr().out
    assert "CPU ms per turn by stage" in (out / "report.md").read_text()


def test_bench_ingest_refuses_a_missing_file(tmp_path: Path) -> None:
    argv = ["bench", "ingest", "--data", str(tmp_path / "none.json"), "--out", str(tmp_path)]
    assert main(argv) != 0
