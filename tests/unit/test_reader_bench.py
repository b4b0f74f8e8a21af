"""The query reader as a component: its protocol, its labelled product queries, its bench."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenning.bench.reader_bench import load_labelled, score_reader, window_covers
from kenning.cli.main import main
from kenning.errors import InvalidInput
from kenning.search.plan import QueryPlan, plan_query
from kenning.search.reader import QueryReader, RuleReader
from kenning.search.timeref import TimeWindow
from kenning.settings import Settings

NOW = datetime(2026, 3, 11, 20, tzinfo=UTC)


def test_the_rule_reader_is_the_default_and_a_query_reader() -> None:
    assert isinstance(Settings().reader, RuleReader)
    assert isinstance(RuleReader(), QueryReader)
    text = "How many refunds did I get last month?"
    assert RuleReader().read(text, NOW) == plan_query(text, NOW)
    with pytest.raises(InvalidInput, match="reader"):
        Settings(reader=object())  # type: ignore[arg-type]


def test_the_labelled_set_covers_kenning_users() -> None:
    cases = load_labelled()
    assert len(cases) >= 120
    assert {c.domain for c in cases} == {"support", "coding", "assistant", "scheduling"}
    assert min(Counter(c.domain for c in cases).values()) >= 30
    assert {c.part for c in cases} == {"tuning", "holdout"}
    several = sum(c.several for c in cases)
    assert 0.2 * len(cases) < several < 0.6 * len(cases)
    assert sum(bool(c.times) for c in cases) >= 40
    for case in cases:
        assert case.now.tzinfo is not None
        for start, end in case.times:
            assert start < end <= case.now + timedelta(days=1), case.query


def test_the_default_reader_is_precise_about_several_targets() -> None:
    report = score_reader(RuleReader(), load_labelled())
    for subset in (report, *report["by_part"].values()):
        assert subset["several"]["precision"] >= 0.9
        assert subset["several"]["recall"] >= 0.6
        assert subset["times"]["precision"] >= 0.9
        assert subset["times"]["recall"] >= 0.9
    assert report["mistakes"]["several_false"] == []


def test_window_covers_a_period_without_being_much_wider() -> None:
    day = (datetime(2026, 3, 6, tzinfo=UTC), datetime(2026, 3, 7, tzinfo=UTC))
    week = timedelta(days=7)
    assert window_covers(TimeWindow(day[0] - timedelta(days=1), day[1] + timedelta(days=1),
                                    "x"), day)  # fmt: skip
    assert not window_covers(TimeWindow(day[0] + timedelta(hours=1), day[1], "x"), day)
    assert not window_covers(TimeWindow(day[0] - week, day[1] + week, "x"), day)


@dataclass(frozen=True)
class _AlwaysSeveral:
    def read(self, text: str, now: datetime) -> QueryPlan:
        return QueryPlan(text=text, multi_target=True)


def test_score_and_bench_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "q.jsonl"
    rows = [
        {"query": "How many orders did I place last month?", "domain": "support",
         "now": "2026-03-11T20:00:00+00:00", "times": [["2026-02-01", "2026-03-01"]],
         "several": True},
        {"query": "Where is my order?", "domain": "support", "now": "2026-03-11T20:00:00+00:00",
         "times": [], "several": False, "part": "holdout"},
    ]  # fmt: skip
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cases = load_labelled(data)
    perfect = score_reader(RuleReader(), cases)
    assert perfect["several"] == {"labelled": 1, "said": 1, "precision": 1.0, "recall": 1.0}
    assert perfect["times"]["recall"] == 1.0 and perfect["times"]["precision"] == 1.0
    eager = score_reader(_AlwaysSeveral(), cases)
    assert eager["several"]["precision"] == 0.5
    assert eager["mistakes"]["several_false"] == ["Where is my order?"]
    assert eager["times"]["recall"] == 0.0
    assert main(["bench", "reader", "--out", str(tmp_path / "out"), "--data", str(data)]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["queries"] == 2 and set(report["by_part"]) == {"tuning", "holdout"}
    assert "# kenning bench reader" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    with pytest.raises(InvalidInput, match=r"bad\.jsonl:1"):
        load_labelled(bad)
