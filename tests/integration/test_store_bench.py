"""``kenning bench store`` on a tiny store, with the concurrent-writer phase."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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
    # One sentence per event: a row per event, and one per fact read from the events.
    assert report["sentences_per_event"] == 1
    assert 300 <= entry["partition_rows"] < 1.25 * 300
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
    written = report["after_write"]
    assert written["writes"] == 60 and written["after_write_ms"]["p50"] > 0
    assert written["settled_ms"]["p50"] > 0 and written["p50_ratio_after_over_settled"] > 0
    markdown = (out / "report.md").read_text()
    assert "A second process writing to the same file" in markdown
    assert "right after a write of 2 events" in markdown
    assert "The lexical worker" in capsys.readouterr().out


def test_bench_store_with_events_of_several_sentences(tmp_path: Path) -> None:
    """Events of three sentences are embedded by sentence: about two rows or more per event
    (sentences under 60 characters join the next), where events of one sentence have one."""
    out = tmp_path / "store"
    args = ["bench", "store", "--sizes", "200", "--queries", "10", "--out", str(out),
            "--write-path-events", "50", "--sentences", "3"]  # fmt: skip
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["sentences_per_event"] == 3
    assert report["sizes"]["200"]["partition_rows"] >= 2 * 200
    assert "3 sentence(s) per event" in (out / "report.md").read_text()


def test_bench_store_side_by_side_with_postgresql(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "backends"
    args = ["bench", "store", "--sizes", "150,300", "--queries", "12", "--out", str(out)]
    assert main([*args, "--store", pg_url]) == 0
    report = json.loads((out / "report.json").read_text())
    assert "***" in report["postgresql"]  # no password in the report
    assert "fact extraction off" in report["vectors"]
    first, second = report["sizes"]["150"], report["sizes"]["300"]
    for name in ("sqlite", "postgresql"):
        # The first step's rate is the overall one; the second's counts its own 150 events.
        assert first["step_ingest_events_per_s"][name] == first["ingest_events_per_s"][name]
        overall = 300 / (150 / first["step_ingest_events_per_s"][name]
                         + 150 / second["step_ingest_events_per_s"][name])  # fmt: skip
        assert overall == pytest.approx(second["ingest_events_per_s"][name], rel=0.01)
    for entry in report["sizes"].values():
        for name in ("sqlite", "postgresql"):
            assert entry["ingest_events_per_s"][name] > 0
            assert entry["tenant_scope_ms"][name]["p99"] >= entry["tenant_scope_ms"][name]["p50"]
        alt = entry["postgresql_in_database"]
        assert alt["pgvector_recall_at_10_vs_exact"]["hnsw_tenant"] > 0.9
        assert set(alt["ms"]) >= {"pgvector_tenant", "tsvector_tenant", "kenning_bm25_tenant"}
    assert "In-database alternatives" in capsys.readouterr().out
    assert main([*args, "--store", str(tmp_path / "x.db")]) == 2
    assert main([*args, "--vector-cache", str(tmp_path / "v.db")]) == 2  # needs --store


def test_a_vector_cache_file_spreads_the_embedding_over_runs(tmp_path: Path, pg_url: str) -> None:
    out, cache = tmp_path / "backends", tmp_path / "vectors.db"
    args = ["bench", "store", "--sizes", "120", "--queries", "8", "--out", str(out),
            "--store", pg_url, "--vector-cache", str(cache)]  # fmt: skip
    assert main([*args, "--embed-only"]) == 0
    first = json.loads((out / "embedding.json").read_text())
    assert first["embedded_now"] == first["distinct_texts"] > 100
    assert not (out / "report.json").exists()
    assert main(args) == 0
    again = json.loads((out / "report.json").read_text())["embedding"]
    assert again["embedded_now"] == 0
    assert again["read_from_cache_file"] == again["distinct_texts"] == first["distinct_texts"]
    # In-database alternatives stop at a size cap (tsvector ranking is far too slow at 1M).
    from kenning.bench.backends_bench import run_backends_bench

    capped = run_backends_bench(out, url=pg_url, sizes=(60, 120), queries=8, progress=False,
                                vector_cache=cache, alternatives_max_size=60)  # fmt: skip
    assert capped["embedding"]["embedded_now"] == 0
    assert "postgresql_in_database" in capped["sizes"]["60"]
    assert "postgresql_in_database" not in capped["sizes"]["120"]
    assert "not timed at 120 events" in (out / "report.md").read_text()


def test_a_vector_cache_of_another_model_is_refused(tmp_path: Path) -> None:
    from kenning.bench.vector_cache import CachedEmbedder
    from kenning.embed.base import DelegatingEmbedder
    from kenning.embed.minilm import MiniLMEmbedder
    from kenning.errors import InvalidInput, ModelMismatch

    class Renamed(DelegatingEmbedder):
        @property
        def model_id(self) -> str:
            return "another-model"

    model = MiniLMEmbedder()
    cache = CachedEmbedder(model, tmp_path / "v.db")
    assert cache.prepare(["order A-1 arrived broken"]) == 1
    cache.close()
    reopened = CachedEmbedder(model, tmp_path / "v.db")
    assert reopened.prepare(["order A-1 arrived broken"]) == 0 and reopened.stored == 1
    assert np.allclose(reopened.embed(["order A-1 arrived broken"])[0],
                       model.embed(["order A-1 arrived broken"])[0], atol=1e-6)  # fmt: skip
    reopened.close()
    with pytest.raises(ModelMismatch):
        CachedEmbedder(Renamed(model), tmp_path / "v.db")
    with pytest.raises(InvalidInput):
        CachedEmbedder(model, tmp_path)
