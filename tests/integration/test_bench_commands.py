"""``kenning bench locomo|longmemeval|recall`` through the CLI entry point, on tiny fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kenning.bench.harness import SEARCH_SYSTEMS, BenchStores
from kenning.cli.main import main
from kenning.records import NewEvent, Scope
from kenning.store.records import ModelInfo
from tests.conformance.helpers import ALL
from tests.conftest import MemoEmbedder
from tests.unit.test_longmemeval_bench import write_lme


def _locomo() -> list[dict[str, Any]]:
    return [
        {
            "sample_id": "conv-tiny",
            "conversation": {
                "speaker_a": "Ada",
                "speaker_b": "Bo",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a cat named Miso."},
                    {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! How old is she?"},
                    {"speaker": "Ada", "dia_id": "D1:3", "text": "About two years old."},
                ],
                "session_2_date_time": "9:05 am on 1 June, 2023",
                "session_2": [
                    {"speaker": "Bo", "dia_id": "D2:1", "text": "I just got back from Oslo."},
                    {
                        "speaker": "Ada",
                        "dia_id": "D2:2",
                        "text": "Welcome back! Look at this.",
                        "img_url": ["http://example.invalid/x.jpg"],
                        "blip_caption": "a photo of a cake",
                    },
                ],
            },
            "qa": [
                {"question": "What is the name of Ada's cat?", "answer": "Miso",
                 "evidence": ["D1:1"], "category": 4},
                {"question": "Where did Bo travel?", "answer": "Oslo",
                 "evidence": ["D2:1"], "category": 2},
                {"question": "What did Bo buy?", "answer": "nothing",
                 "adversarial_answer": "a car", "evidence": [], "category": 5},
            ],
        }
    ]  # fmt: skip


def test_bench_locomo_without_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(_locomo()))
    out = tmp_path / "out"
    assert main(["bench", "locomo", "--data", str(data), "--out", str(out), "--no-plots"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["dataset"] == "locomo"
    assert report["questions"] == 3
    assert report["scored_questions"] == 2
    assert report["systems"]["kenning"]["turn"]["recall@5"] == 1.0
    own = report["systems"]["kenning"]["own_search_ms_k10"]
    assert 0 < own["p50"] <= own["p95"] <= own["p99"]
    assert not list(out.glob("*.png"))
    assert "# kenning bench locomo" in capsys.readouterr().out


def test_bench_longmemeval_with_and_without_plots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_lme(tmp_path / "lme.json.gz")
    bare = tmp_path / "bare"
    argv = ["bench", "longmemeval", "--data", str(data), "--out", str(bare), "--no-plots"]
    assert main(argv) == 0
    report = json.loads((bare / "report.json").read_text())
    assert report["scored_questions"] == 1
    assert report["systems"]["kenning"]["session"]["recall_all@5"] == 1.0
    assert not list(bare.glob("*.png"))
    assert "# kenning bench longmemeval" in capsys.readouterr().out

    plotted = tmp_path / "plotted"
    argv = ["bench", "longmemeval", "--data", str(data), "--out", str(plotted), "--limit", "2",
            "--fusion", "weighted", "--embed-text", "content"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads((plotted / "report.json").read_text())
    assert report["questions"] == 2
    assert report["settings"]["fusion"] == "weighted"
    assert report["settings"]["embed_text"] == "content"
    for name in ("recall_at_k.png", "latency_hist.png", "tokens_vs_recall.png"):
        assert (plotted / name).stat().st_size > 0


def test_bench_recall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "recall"
    assert main(["bench", "recall", "--out", str(out), "--seed", "3", "--conversations", "1"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["suite"] == "recall"
    assert report["seeds"] == [3]
    assert set(report["systems"]) == {"sliding_window", "summary_only", "vector", "bm25", "kenning"}
    assert "# kenning bench recall" in capsys.readouterr().out


def test_bench_out_must_be_a_writable_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "report"
    taken.write_text("not a directory")
    for out in (taken, taken / "below"):
        assert main(["bench", "reader", "--out", str(out)]) == 2
        assert "is a file, not a directory" in capsys.readouterr().err
    assert taken.read_text() == "not a directory"


def test_bench_longmemeval_missing_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.json")
    assert main(["bench", "longmemeval", "--data", missing, "--out", str(tmp_path)]) == 2


def test_bench_pins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pins"
    assert main(["bench", "pins", "--out", str(out), "--threads", "4", "--seed", "5"]) == 0
    report = json.loads((out / "report.json").read_text())
    survival = report["pin_survival"]
    assert set(survival) == {"kenning", "sliding_window", "summary_only"}
    assert survival["kenning"] == 1.0
    assert survival["sliding_window"] < 1.0
    assert "| kenning | 1.000 |" in capsys.readouterr().out


def test_bench_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "task"
    assert main(["bench", "task", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["events"] == 300 and report["budget"] == 2_000
    assert set(report["present"]) == {"kenning", "summary_only", "sliding_window"}
    end = report["at_end"]
    # kenning keeps every rejection, finding and the current plan; the baselines lose most.
    for kind in ("goal", "rejected_hypotheses", "findings", "open_hypotheses"):
        present, needed = end["kenning"][kind]
        assert present == needed > 0, kind
        assert end["summary_only"][kind][0] < needed and end["sliding_window"][kind][0] < needed
    assert report["present"]["kenning"]["all"] > report["present"]["sliding_window"]["all"]
    assert "# kenning bench task" in capsys.readouterr().out


def test_bench_assemble(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "assemble"
    args = ["bench", "assemble", "--out", str(out), "--sizes", "100,300", "--calls", "3"]
    assert main([*args, "--budget", "1000"]) == 0
    report = json.loads((out / "report.json").read_text())
    for size in ("100", "300"):
        for label in ("without_retrieval", "with_retrieval"):
            row = report["sizes"][size][label]
            assert 0 < row["p50_ms"] <= row["p99_ms"]
            assert row["window_tokens"] <= 1000
    assert "kenning bench assemble" in capsys.readouterr().out


def test_bench_baselines_search_plain_vectors(real_embedder: MemoEmbedder) -> None:
    stores = BenchStores(None, ["bench"])
    try:
        memories = {name: stores.memory(name, real_embedder, None) for name in SEARCH_SYSTEMS}
        scope = Scope("bench", "u", "s")
        memories["kenning"].add_events(scope, [
            NewEvent("user", "Did you get to visit the Louvre on your Paris trip?"),
            NewEvent("assistant", "Yes, last Tuesday!"),
        ])  # fmt: skip
        query = real_embedder.embed(["Did you get to visit the Louvre on your Paris trip?"])[0]
        model = ModelInfo(real_embedder.model_id, real_embedder.dimension)
        cosines = {}
        for name in ("kenning", "vector"):
            store = memories[name].store
            hits = store.nearest(Scope("bench"), query, model=model, filters=ALL, limit=2)
            cosines[name] = {h.id: h.score for h in hits}
        answer = next(e.id for e in memories["kenning"].get_session(scope) if e.seq == 2)
        plain = float(real_embedder.embed(["assistant: Yes, last Tuesday!"])[0] @ query)
        # Both systems see the same events; only kenning's answers are pulled toward questions.
        assert cosines["vector"][answer] == pytest.approx(plain, abs=1e-5)
        assert cosines["kenning"][answer] > plain + 0.2
        assert memories["kenning"].store is not memories["vector"].store
        assert memories["bm25"].store is memories["vector"].store
    finally:
        stores.close()


def test_bench_memory_reports_each_stage_from_its_own_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(_locomo()))
    out = tmp_path / "out"
    argv = ["bench", "memory", "--data", str(data), "--sizes", "300", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads((out / "report.json").read_text())
    stages = {s["stage"]: s for s in report["stages"]}
    assert list(stages) == ["model", "locomo", "events:300"]
    for stage in stages.values():
        # Each child reports its own peak, at least what it held after any step.
        assert stage["peak_rss_mb"] >= max(stage["rss_mb"].values()) > 50
        # The peak so far, per step: it never falls, and never below that step's RSS.
        peaks = list(stage["peak_mb"].values())
        assert list(stage["peak_mb"]) == list(stage["rss_mb"]) and peaks == sorted(peaks)
        assert all(stage["peak_mb"][k] >= v for k, v in stage["rss_mb"].items())
    assert list(stages["locomo"]["rss_mb"]) == [
        "start", "model", "ingested", "first search", "searched", "first assemble", "assembled"
    ]  # fmt: skip
    assert stages["locomo"]["turns"] == sum(
        len(turns) for conv in _locomo() for key, turns in conv["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
    )  # fmt: skip
    assert list(stages["events:300"]["rss_mb"]) == [
        "start", "model", "ingested", "searched", "assembled"
    ]  # fmt: skip
    assert "# kenning bench memory" in capsys.readouterr().out
