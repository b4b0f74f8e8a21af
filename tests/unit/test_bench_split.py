"""Tuning / validation parts of the dev files, LoCoMo's `now`, and no carry-over between
questions: what makes the dataset benches' numbers trustworthy."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kenning.bench import locomo_bench
from kenning.bench.datasets import load_locomo, load_longmemeval
from kenning.bench.harness import DATASET_SYSTEMS, settings_for
from kenning.bench.locomo_bench import conversation_now, locomo_parts, run_locomo_bench
from kenning.bench.longmemeval_bench import longmemeval_parts
from kenning.bench.split import check_part, in_part, split_by_stride
from kenning.errors import InvalidInput
from kenning.memory import Memory
from kenning.records import Scope
from kenning.store.sqlite.store import SQLiteStore
from tests.fakes import HashEmbedder
from tests.unit.test_longmemeval_bench import lme_items


def test_split_alternates_within_each_stratum() -> None:
    assert split_by_stride([0, 0, 0, 0, 0]) == [
        "tuning", "validation", "tuning", "validation", "tuning",
    ]  # fmt: skip
    # a file ordered by type: each type is halved, not the file
    parts = split_by_stride(["a", "a", "a", "a", "b", "b", "c"])
    assert parts == ["tuning", "validation", "tuning", "validation", "tuning", "validation",
                     "tuning"]  # fmt: skip
    assert split_by_stride([]) == []


def test_part_names() -> None:
    assert [check_part(p) for p in ("tuning", "validation", "all")] == [
        "tuning", "validation", "all",
    ]  # fmt: skip
    with pytest.raises(InvalidInput, match="part must be"):
        check_part("test")
    assert in_part("tuning", "all") and in_part("tuning", "tuning")
    assert not in_part("validation", "tuning")


def _conversation(n: int) -> dict[str, Any]:
    return {
        "sample_id": f"c{n}",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ada", "dia_id": "D1:1", "text": f"I like item {n}."}],
            "session_2_date_time": "9:05 am on 1 June, 2023",
            "session_2": [
                {"speaker": "Bo", "dia_id": "D2:1", "text": "I went to Oslo last week."},
                {"speaker": "Ada", "dia_id": "D2:2", "text": "Nice!"},
            ],
        },
        "qa": [{"question": "Where did Bo go last week?", "answer": "Oslo",
                "evidence": ["D2:1"], "category": 2}],
    }  # fmt: skip


def test_locomo_parts_are_whole_conversations_alternating(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_conversation(n) for n in range(5)]))
    conversations, _ = load_locomo(data)
    parts = locomo_parts(conversations)
    assert parts == {"c0": "tuning", "c1": "validation", "c2": "tuning", "c3": "validation",
                     "c4": "tuning"}  # fmt: skip


def test_longmemeval_parts_halve_each_question_type(tmp_path: Path) -> None:
    # six questions ordered by type, as the published files are
    items = []
    for n, qtype in enumerate(["temporal"] * 4 + ["multi"] * 2):
        item = dict(lme_items()[0], question_id=f"q{n}", question_type=qtype)
        items.append(item)
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(items))
    questions = load_longmemeval(data)
    parts = longmemeval_parts(questions)
    by_part = Counter((parts[q.id], q.question_type) for q in questions)
    assert by_part == {("tuning", "temporal"): 2, ("validation", "temporal"): 2,
                       ("tuning", "multi"): 1, ("validation", "multi"): 1}  # fmt: skip
    assert [parts[f"q{n}"] for n in range(6)] == [
        "tuning", "validation", "tuning", "validation", "tuning", "validation",
    ]  # fmt: skip


def test_locomo_questions_are_asked_at_the_end_of_their_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_conversation(0), _conversation(1)]))
    conversations, _ = load_locomo(data)
    last = datetime(2023, 6, 1, 9, 5, 1, tzinfo=UTC)  # session 2's second turn
    assert conversation_now(conversations[0]) == last
    seen: list[datetime] = []
    real = locomo_bench.timed_search

    def recording(*args: Any, **kw: Any) -> Any:
        seen.append(kw["now"])
        return real(*args, **kw)

    monkeypatch.setattr(locomo_bench, "timed_search", recording)
    report = run_locomo_bench(
        data, tmp_path / "out", embedder=HashEmbedder(), part="tuning", progress=False,
        plots=False,
    )  # fmt: skip
    assert report["part"] == "tuning" and report["questions"] == 1
    assert seen == [last] * len(DATASET_SYSTEMS)
    ranked = json.loads((tmp_path / "out" / "rankings.json").read_text())
    assert set(ranked) == {*DATASET_SYSTEMS, "recent_window"}
    assert list(ranked["kenning"]) == ["c0:q1"]


def test_locomo_run_over_both_parts_reports_each(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_conversation(n) for n in range(3)]))
    report = run_locomo_bench(
        data, tmp_path / "out", embedder=HashEmbedder(), progress=False, plots=False
    )
    assert report["conversations_by_part"] == {"tuning": ["c0", "c2"], "validation": ["c1"]}
    assert report["parts"]["tuning"]["kenning"]["questions"] == 2
    assert report["parts"]["validation"]["kenning"]["questions"] == 1
    assert "## Tuning and validation parts" in (tmp_path / "out" / "report.md").read_text()


def test_bench_searches_leave_no_trace_for_the_next_question() -> None:
    """Bench systems record no access, so a question's results cannot lift a later one's."""
    store = SQLiteStore(":memory:")
    scope = Scope("t", "u", "s1")
    now = datetime(2024, 1, 1, tzinfo=UTC)
    for name in DATASET_SYSTEMS:
        settings = settings_for(name)
        assert settings.track_access is False
        memory = Memory(store, embedder=HashEmbedder(), settings=settings)
        if name == "kenning":
            memory.add_events(scope, [{"role": "user", "content": "the refund was approved"},
                                    {"role": "user", "content": "the parcel is late"}])  # fmt: skip
        first = memory.search(Scope("t"), "refund approved", k=2, now=now)
        again = memory.search(Scope("t"), "refund approved", k=2, now=now)
        assert [(h.id, h.score) for h in first] == [(h.id, h.score) for h in again]
        items = store.items(Scope("t"), [h.id for h in first])
        assert items and all(item.access_count == 0 for item in items)
