"""LoCoMo and LongMemEval loaders on tiny synthetic files in the published shapes."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kenning.bench.datasets import (
    LOCOMO_CATEGORIES,
    TURN_OFFSET,
    Conversation,
    LMEQuestion,
    Question,
    load_locomo,
    load_longmemeval,
    normalize_dia_ids,
    parse_locomo_datetime,
    parse_longmemeval_datetime,
)
from kenning.errors import InvalidInput


def _locomo_item() -> dict[str, Any]:
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ada", "dia_id": "D1:1", "text": "Hi Bo, I adopted a cat."},
                {
                    "speaker": "Bo",
                    "dia_id": "D1:2",
                    "text": "Look at my garden!",
                    "img_url": ["http://example.invalid/x.jpg"],
                    "blip_caption": "a photo of tomatoes in a garden",
                    "query": "garden tomatoes",
                },
                {"speaker": "Ada", "dia_id": "D1:3", "text": "Lovely."},
            ],
            # sessions appear out of order and with a gap; the empty one is skipped
            "session_10_date_time": "9:05 am on 1 June, 2023",
            "session_10": [
                {"speaker": "Bo", "dia_id": "D10:1", "text": "Back from Oslo."},
                {"speaker": "Ada", "dia_id": "D10:2", "text": "How was it?"},
            ],
            "session_2_date_time": "12:30 am on 20 May, 2023",
            "session_2": [
                {"speaker": "Ada", "dia_id": "D2:1", "text": "I start a new job."},
                {"speaker": "Bo", "dia_id": "D2:2", "text": "Congrats!"},
            ],
            "session_3_date_time": "2:00 pm on 25 May, 2023",
            "session_3": [],
            # a date without a session (the published file has these)
            "session_4_date_time": "3:00 pm on 26 May, 2023",
        },
        "observation": {"session_1_observation": "LLM-written; must be ignored"},
        "session_summary": {"session_1_summary": "LLM-written; must be ignored"},
        "event_summary": {},
        "qa": [
            {"question": "What pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
            {
                "question": "Where and what?",
                "answer": "Oslo, job",
                "evidence": ["D1:3; D10:1", "D2:1 D1:1"],
                "category": 1,
            },
            {
                "question": "When Oslo?",
                "answer": 2023,
                "evidence": ["D:10:2", "D02:01", "D", "D9:9"],
                "category": 2,
            },
            {"question": "Open?", "answer": "x", "evidence": [], "category": 3},
            {
                "question": "What did Ada grow?",
                "adversarial_answer": "tomatoes",
                "evidence": "D1:2",
                "category": 5,
            },
        ],
    }


def _write_json(path: Path, data: object, *, gz: bool = False) -> Path:
    raw = json.dumps(data).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def _load_one(tmp_path: Path) -> tuple[Conversation, list[Question]]:
    conversations, questions = load_locomo(_write_json(tmp_path / "l.json", [_locomo_item()]))
    assert len(conversations) == 1
    return conversations[0], questions


def test_normalize_dia_ids_repairs_dirty_evidence() -> None:
    assert normalize_dia_ids("D8:6; D9:17") == ("D8:6", "D9:17")
    assert normalize_dia_ids("D9:1 D4:4") == ("D9:1", "D4:4")
    assert normalize_dia_ids("D:11:26") == ("D11:26",)
    assert normalize_dia_ids("D30:05") == ("D30:5",)
    assert normalize_dia_ids(["D1:2", ["D1:2", "D"], "D3:4,D5:6", 7, None]) == (
        "D1:2",
        "D3:4",
        "D5:6",
    )
    assert normalize_dia_ids("D") == ()


def test_parse_locomo_datetime() -> None:
    assert parse_locomo_datetime("1:56 pm on 8 May, 2023") == datetime(
        2023, 5, 8, 13, 56, tzinfo=UTC
    )
    assert parse_locomo_datetime("12:09 am on 13 September, 2023") == datetime(
        2023, 9, 13, 0, 9, tzinfo=UTC
    )
    assert parse_locomo_datetime("12:30 pm on 1 Jan 2022") == datetime(
        2022, 1, 1, 12, 30, tzinfo=UTC
    )
    for bad in ("yesterday", "13:00 pm on 1 May, 2023", "1:00 pm on 31 February, 2023"):
        with pytest.raises(InvalidInput):
            parse_locomo_datetime(bad)


def test_parse_longmemeval_datetime() -> None:
    assert parse_longmemeval_datetime("2023/05/20 (Sat) 02:21") == datetime(
        2023, 5, 20, 2, 21, tzinfo=UTC
    )
    with pytest.raises(InvalidInput):
        parse_longmemeval_datetime("May 20")


def test_locomo_sessions_turns_and_roles(tmp_path: Path) -> None:
    conversation, _ = _load_one(tmp_path)
    assert conversation.id == "conv-x"
    assert (conversation.speaker_a, conversation.speaker_b) == ("Ada", "Bo")
    assert [s.id for s in conversation.sessions] == ["session_1", "session_2", "session_10"]
    turns = conversation.turns
    assert [t.id for t in turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D10:1", "D10:2"]
    assert [t.role for t in turns[:3]] == ["user", "assistant", "user"]
    assert turns[1].speaker == "Bo"
    assert [t.index for t in turns[:3]] == [0, 1, 2]
    assert conversation.turn_to_session()["D10:2"] == "session_10"
    assert not any("LLM-written" in t.text for t in turns)


def test_locomo_image_caption_is_kept_as_text(tmp_path: Path) -> None:
    conversation, _ = _load_one(tmp_path)
    assert conversation.turns[1].text == (
        "Look at my garden! [shared an image: a photo of tomatoes in a garden]"
    )


def test_locomo_times_are_session_time_plus_monotonic_offset(tmp_path: Path) -> None:
    conversation, _ = _load_one(tmp_path)
    first = conversation.sessions[0]
    assert first.at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.at for t in first.turns] == [first.at + i * TURN_OFFSET for i in range(3)]
    assert conversation.sessions[1].at == datetime(2023, 5, 20, 0, 30, tzinfo=UTC)
    times = [t.at for t in conversation.turns]
    assert times == sorted(times)
    assert all(t.at.tzinfo is UTC for t in conversation.turns)


def test_locomo_questions_clean_evidence_and_answers(tmp_path: Path) -> None:
    _, questions = _load_one(tmp_path)
    assert [q.id for q in questions] == [f"conv-x:q{i}" for i in range(1, 6)]
    pet, multi, temporal, open_domain, adversarial = questions
    assert pet.evidence_turns == {"D1:1"} and pet.evidence_sessions == {"session_1"}
    assert pet.category == 4 and pet.category_name == "single-hop"
    assert multi.evidence_turns == {"D1:3", "D10:1", "D2:1", "D1:1"}
    assert multi.evidence_sessions == {"session_1", "session_2", "session_10"}
    # "D:10:2" and "D02:01" repaired, "D" and the dangling "D9:9" dropped
    assert temporal.evidence_turns == {"D10:2", "D2:1"}
    assert temporal.answer == "2023"
    assert open_domain.evidence_turns == frozenset() and open_domain.evidence_sessions == set()
    assert adversarial.answer == "tomatoes" and adversarial.abstention
    assert adversarial.evidence_turns == {"D1:2"}
    assert not any(q.abstention for q in questions[:4])
    assert all(q.question_date is None and q.conversation_id == "conv-x" for q in questions)
    assert dict(LOCOMO_CATEGORIES)[1] == "multi-hop"


def test_locomo_unknown_speaker_alternates_and_bad_dia_id_falls_back(tmp_path: Path) -> None:
    item = _locomo_item()
    item["conversation"]["session_2"] = [
        {"speaker": "ada ", "dia_id": "D2:1", "text": "a"},
        {"speaker": "Someone", "text": "b"},
        {"speaker": "Other", "dia_id": "D2:1", "text": "c"},
    ]
    conversations, _ = load_locomo(_write_json(tmp_path / "l.json", [item]))
    session = conversations[0].sessions[1]
    assert [t.role for t in session.turns] == ["user", "assistant", "user"]
    assert [t.id for t in session.turns] == ["D2:1", "D2:2", "D2:3"]


def test_locomo_reads_gzip(tmp_path: Path) -> None:
    conversations, questions = load_locomo(
        _write_json(tmp_path / "l.json.gz", [_locomo_item()], gz=True)
    )
    assert len(conversations) == 1 and len(questions) == 5


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda item: {"not": "a list"}, "JSON list"),
        (lambda item: [item | {"conversation": None}], "conversation"),
        (lambda item: [{k: v for k, v in item.items() if k != "sample_id"}], "sample_id"),
        (lambda item: [_drop_date(item)], "session_1_date_time"),
        (lambda item: [_set_date(item, "someday")], "session_1_date_time"),
        (lambda item: [_set_category(item, 7)], "category"),
        (lambda item: [_set_category(item, None)], "category"),
    ],
)
def test_locomo_rejects_bad_shapes(tmp_path: Path, mutate: Any, message: str) -> None:
    path = _write_json(tmp_path / "bad.json", mutate(_locomo_item()))
    with pytest.raises(InvalidInput, match=message):
        load_locomo(path)


def test_loaders_reject_non_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        load_locomo(path)
    with pytest.raises(InvalidInput, match="not valid JSON"):
        load_longmemeval(path)
    broken = tmp_path / "bad.json.gz"
    broken.write_bytes(gzip.compress(b"[]")[:-6])
    with pytest.raises(InvalidInput, match="gzip"):
        load_longmemeval(broken)


def _drop_date(item: dict[str, Any]) -> dict[str, Any]:
    del item["conversation"]["session_1_date_time"]
    return item


def _set_date(item: dict[str, Any], text: str) -> dict[str, Any]:
    item["conversation"]["session_1_date_time"] = text
    return item


def _set_category(item: dict[str, Any], category: object) -> dict[str, Any]:
    item["qa"][0]["category"] = category
    return item


def _lme_item(question_id: str = "q1") -> dict[str, Any]:
    return {
        "question_id": question_id,
        "question_type": "multi-session",
        "question": "Which pets do I have?",
        "answer": 2,
        "question_date": "2023/06/01 (Thu) 10:00",
        "answer_session_ids": ["answer_a", "answer_b", "answer_c"],
        "haystack_session_ids": ["noise_1", "answer_a", "answer_b", "noise_1", "answer_c"],
        "haystack_dates": [
            "2023/05/20 (Sat) 02:21",
            "2023/05/21 (Sun) 08:00",
            "2023/05/19 (Fri) 23:59",
            "2023/05/25 (Thu) 12:00",
            "2023/05/22 (Mon) 09:30",
        ],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Tell me about tea."},
                {"role": "assistant", "content": "Tea is a drink."},
            ],
            [
                {"role": "user", "content": "Hi!", "has_answer": False},
                {"role": "assistant", "content": "Hello.", "has_answer": False},
                {"role": "user", "content": "I got a dog.", "has_answer": True},
                {"role": "assistant", "content": "Nice dog.", "has_answer": True},
            ],
            [
                {"role": "assistant", "content": "You mentioned a cat.", "has_answer": True},
                {"role": "user", "content": "My cat is Tom.", "has_answer": True},
            ],
            [
                {"role": "user", "content": "Tell me about tea."},
                {"role": "assistant", "content": "Tea is a drink."},
            ],
            # an answer session whose evidence is on the assistant side only
            [
                {"role": "user", "content": "Recommend a book.", "has_answer": False},
                {"role": "assistant", "content": "Try Dune.", "has_answer": True},
            ],
        ],
    }


def _load_lme(tmp_path: Path, items: list[dict[str, Any]], *, gz: bool) -> list[LMEQuestion]:
    name = "lme.json.gz" if gz else "lme.json"
    return load_longmemeval(_write_json(tmp_path / name, items, gz=gz))


@pytest.mark.parametrize("gz", [False, True])
def test_longmemeval_turn_ids_and_gold(tmp_path: Path, gz: bool) -> None:
    (question,) = _load_lme(tmp_path, [_lme_item()], gz=gz)
    assert question.id == "q1" and question.question_type == "multi-session"
    assert question.answer == "2"
    assert question.question_date == datetime(2023, 6, 1, 10, 0, tzinfo=UTC)
    # the repeated "noise_1" keeps its first copy
    assert [s.id for s in question.sessions] == ["noise_1", "answer_a", "answer_b", "answer_c"]
    answer_a = question.sessions[1]
    assert [t.id for t in answer_a.turns] == [f"answer_a_{i}" for i in range(1, 5)]
    assert [t.role for t in answer_a.turns] == ["user", "assistant", "user", "assistant"]
    assert answer_a.turns[2].has_answer and answer_a.turns[2].speaker == "user"
    # ids count every turn; gold is user turns with has_answer in answer sessions
    assert question.evidence_turns == {"answer_a_3", "answer_b_2"}
    assert question.evidence_sessions == {"answer_a", "answer_b"}
    assert question.answer_session_ids == {"answer_a", "answer_b", "answer_c"}
    assert not question.abstention and not question.no_user_evidence
    assert question.turn_to_session()["answer_b_2"] == "answer_b"
    assert len(question.turns) == 10


def test_longmemeval_times(tmp_path: Path) -> None:
    (question,) = _load_lme(tmp_path, [_lme_item()], gz=False)
    answer_b = question.sessions[2]
    assert answer_b.at == datetime(2023, 5, 19, 23, 59, tzinfo=UTC)
    assert answer_b.turns[1].at == answer_b.at + TURN_OFFSET


def test_longmemeval_abstention_and_no_user_evidence(tmp_path: Path) -> None:
    abstain = _lme_item("q2_abs")
    assistant_only = _lme_item("q3")
    assistant_only["answer_session_ids"] = ["answer_c"]
    no_date = _lme_item("q4")
    del no_date["question_date"]
    questions = _load_lme(tmp_path, [abstain, assistant_only, no_date], gz=False)
    assert questions[0].abstention and not questions[0].no_user_evidence
    assert not questions[1].abstention and questions[1].no_user_evidence
    assert questions[1].evidence_turns == frozenset() == questions[1].evidence_sessions
    assert questions[2].question_date is None


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda item: item, "JSON list"),
        (lambda item: [item | {"haystack_dates": item["haystack_dates"][:2]}], "must match"),
        (lambda item: [{k: v for k, v in item.items() if k != "question_id"}], "question_id"),
        (lambda item: [item | {"question_date": "June"}], "question_date"),
        (lambda item: [_set_lme(item, "haystack_dates", ["x"] * 5)], "date"),
        (lambda item: [_set_role(item, "system")], "role"),
        (lambda item: [_set_lme(item, "haystack_sessions", [None] * 5)], "JSON list"),
    ],
)
def test_longmemeval_rejects_bad_shapes(tmp_path: Path, mutate: Any, message: str) -> None:
    path = _write_json(tmp_path / "bad.json", mutate(_lme_item()))
    with pytest.raises(InvalidInput, match=message):
        load_longmemeval(path)


def _set_lme(item: dict[str, Any], key: str, value: object) -> dict[str, Any]:
    item[key] = value
    return item


def _set_role(item: dict[str, Any], role: str) -> dict[str, Any]:
    item["haystack_sessions"][0][0]["role"] = role
    return item
