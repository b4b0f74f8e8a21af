"""``kenning bench store`` on a tiny store, with the concurrent-writer phase."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenning.cli.main import main


def test_bench_store_with_a_concurrent_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "store"
    args = ["bench", "store", "--sizes", "300", "--queries", "20", "--out", str(out),
            "--write-path-events", "200"]  # fmt: skip
    assert main([*args, "--concurrent-writer"]) == 0
    report = json.loads((out / "report.json").read_text())
    entry = report["sizes"]["300"]
    worker = entry["tenant_scope"]["lexical_worker"]
    assert worker["with_worker_ms"]["p50"] > 0 and worker["inline_ms"]["p50"] > 0
    phase = report["concurrent_writer"]
    assert set(phase["latency_ms"]) == {
        "alone", "writer_without_model", "writer_with_model", "alone_again",
    }  # fmt: skip
    assert phase["latency_ms"]["writer_with_model"]["events_written"] > 0
    # The reader never reloads its partition: the writers' events arrive as deltas, all seen.
    assert phase["reader_partition_loads"] == 0 and phase["reader_catch_ups"] > 0
    assert phase["events_seen_by_reader"] == phase["events_written_by_writers"]
    write = report["write_path"]
    assert write["events"] == 200 and write["facts_written"] > 0 and write["ratio"] > 0
    markdown = (out / "report.md").read_text()
    assert "A second process writing to the same file" in markdown
    assert "The lexical worker" in capsys.readouterr().out


def test_bench_store_side_by_side_with_postgresql(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "backends"
    args = ["bench", "store", "--sizes", "150,300", "--queries", "12", "--out", str(out)]
    assert main([*args, "--store", pg_url]) == 0
    report = json.loads((out / "report.json").read_text())
    assert "***" in report["postgresql"]  # no password in the report
    for entry in report["sizes"].values():
        for name in ("sqlite", "postgresql"):
            assert entry["ingest_events_per_s"][name] > 0
            assert entry["tenant_scope_ms"][name]["p99"] >= entry["tenant_scope_ms"][name]["p50"]
        alt = entry["postgresql_in_database"]
        assert alt["pgvector_recall_at_10_vs_exact"]["hnsw_tenant"] > 0.5
        assert set(alt["ms"]) >= {"pgvector_tenant", "tsvector_tenant", "kenning_bm25_tenant"}
    assert "In-database alternatives" in capsys.readouterr().out
    assert main([*args, "--store", str(tmp_path / "x.db")]) == 2
