"""``kenning bench langgraph`` through the CLI entry point, on a tiny LoCoMo file: every
store is measured in one run, KenningStore on SQLite or on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenning.cli.main import main
from tests.integration.test_bench_commands import _locomo

SYSTEMS = ("kenning", "langgraph_inmemory", "langgraph_sqlite")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_bench_langgraph_measures_every_store_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], backend: str,
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(_locomo()))
    out = tmp_path / "out"
    argv = ["bench", "langgraph", "--data", str(data), "--out", str(out), "--batch", "2"]
    if backend == "postgresql":
        argv += ["--store", request.getfixturevalue("pg_url")]
    assert main(argv) == 0
    report = json.loads((out / "report.json").read_text())
    assert (report["items"], report["questions"]) == (5, 2)  # one item per turn
    assert report["kenning_backend"] == backend
    assert set(report["systems"]) == set(SYSTEMS)
    for name in SYSTEMS:
        entry = report["systems"][name]
        assert 0.0 <= entry["recall@10"] <= 1.0 and entry["put"]["items"] == 5
        assert 0 < entry["search_ms"]["p50"] <= entry["search_ms"]["p95"]
    assert report["systems"]["kenning"]["recall@10"] == 1.0
    assert set(report["vs_sqlite"]) == {"recall@10", "put_rate", "search_p50", "search_p95"}
    assert "KenningStore over SqliteStore" in capsys.readouterr().out


def test_bench_langgraph_refuses_a_store_that_is_not_postgresql(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(_locomo()))
    argv = ["bench", "langgraph", "--data", str(data), "--out", str(tmp_path / "o"),
            "--store", "sqlite:///x.db"]  # fmt: skip
    assert main(argv) != 0
