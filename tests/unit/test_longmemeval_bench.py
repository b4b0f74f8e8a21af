"""The LongMemEval bench end to end on a tiny synthetic file, with the real embedding model."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kenning.bench.datasets import load_longmemeval
from kenning.bench.longmemeval_bench import LME_KS, run_longmemeval_bench, score_longmemeval
from kenning.embed.minilm import MiniLMEmbedder


def _turn(role: str, content: str, has_answer: bool | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, "content": content}
    if has_answer is not None:
        turn["has_answer"] = has_answer
    return turn


FILLER_A = [
    _turn("user", "Can you suggest a good recipe for lentil soup?"),
    _turn("assistant", "Sure: onions, carrots, red lentils, cumin and stock; simmer 25 minutes."),
    _turn("user", "Should I add lemon at the end?"),
    _turn("assistant", "Yes, a squeeze of lemon brightens it."),
]
FILLER_B = [
    _turn("user", "What are some tips for learning to juggle three balls?"),
    _turn("assistant", "Start with one ball, then two, and practise the cascade pattern."),
    _turn("user", "  "),  # the published files hold a few empty user turns
]
BIKE = [
    _turn("user", "Hi! I need help planning a weekend trip."),
    _turn("assistant", "Happy to help. Where are you going?"),
    _turn("user", "I named my new bicycle Rocket and I want to ride it along the coast.", True),
    _turn("assistant", "Rocket is a great name for a bike! The coastal path is lovely."),
]
ASSISTANT_ONLY = [
    _turn("user", "Which planet is the largest in the solar system?"),
    _turn("assistant", "Jupiter is the largest planet in the solar system.", True),
]


def lme_items() -> list[dict[str, Any]]:
    """Three questions: one answerable, one abstention, one with assistant-side evidence only.

    Sessions ``filler_a`` and ``filler_b`` repeat in every haystack with identical content.
    """
    return [
        {
            "question_id": "q-bike",
            "question_type": "single-session-user",
            "question": "What did I name my bike?",
            "answer": "Rocket",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["filler_a", "bike", "filler_b"],
            "haystack_dates": [
                "2023/05/01 (Mon) 09:00",
                "2023/05/10 (Wed) 18:30",
                "2023/05/20 (Sat) 02:21",
            ],
            "haystack_sessions": [FILLER_A, BIKE, FILLER_B],
            "answer_session_ids": ["bike"],
        },
        {
            "question_id": "q-car_abs",
            "question_type": "single-session-user",
            "question": "What did I name my car?",
            "answer": "You did not mention a car name.",
            "question_date": "2023/06/02 (Fri) 10:00",
            "haystack_session_ids": ["filler_a", "bike", "filler_b"],
            "haystack_dates": [
                "2023/05/01 (Mon) 09:00",
                "2023/05/10 (Wed) 18:30",
                "2023/05/20 (Sat) 02:21",
            ],
            "haystack_sessions": [FILLER_A, BIKE, FILLER_B],
            "answer_session_ids": ["bike"],
        },
        {
            "question_id": "q-planet",
            "question_type": "single-session-assistant",
            "question": "Which planet did you tell me was the largest?",
            "answer": "Jupiter",
            "question_date": "2023/06/03 (Sat) 10:00",
            "haystack_session_ids": ["filler_b", "planet", "filler_a"],
            "haystack_dates": [
                "2023/05/20 (Sat) 02:21",
                "2023/05/25 (Thu) 12:00",
                "2023/05/01 (Mon) 09:00",
            ],
            "haystack_sessions": [FILLER_B, ASSISTANT_ONLY, FILLER_A],
            "answer_session_ids": ["planet"],
        },
    ]


def write_lme(path: Path) -> Path:
    path.write_bytes(gzip.compress(json.dumps(lme_items()).encode()))
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("lme")
    data = write_lme(tmp / "tiny.json.gz")
    return run_longmemeval_bench(
        data, tmp / "out", embedder=MiniLMEmbedder(), progress=False, plots=False
    )


def test_counts_and_skips(report: dict[str, Any]) -> None:
    assert report["dataset"] == "longmemeval"
    assert report["questions"] == 3
    assert report["scored_questions"] == 1
    assert report["abstention_questions"] == 1
    assert report["no_user_evidence_questions"] == 1
    assert report["question_types"] == {"single-session-user": 1}
    assert report["haystack_sessions"] == 9
    # non-empty user turns only: q-bike 2+2+1, q-car_abs the same, q-planet 1+1+2
    assert report["turns"] == 14
    assert report["empty_user_turns_skipped"] == 3
    assert report["ks"] == list(LME_KS)


def test_each_distinct_text_is_embedded_once(report: dict[str, Any]) -> None:
    emb = report["embedding"]
    assert emb["indexed_turns"] == 14
    assert emb["distinct_texts"] == 6
    assert emb["texts_embedded_at_ingest"] == emb["distinct_texts"]


def test_metric_keys_and_values(report: dict[str, Any]) -> None:
    systems = report["systems"]
    assert list(systems) == ["kenning", "bm25", "vector", "recent_window"]
    for name, entry in systems.items():
        assert entry["questions"] == 1
        for level in ("turn", "session"):
            assert set(entry[level]) == {
                f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg_any") for k in LME_KS
            }
            assert all(0.0 <= v <= 1.0 for v in entry[level].values())
        assert set(entry["by_type"]) == {"single-session-user"}
        # every question has an answer session with user turns in its haystack
        assert entry["loose_questions"] == 3
        assert 0.0 <= entry["session_recall_any@5_all_questions"] <= 1.0
        assert entry["context_tokens"]["mean"] > 0
        if name == "recent_window":
            assert "search_ms" not in entry
            assert entry["window"]["turns_mean"] > 0
        else:
            assert set(entry["search_ms"]) == {"p50", "p95", "p99"}
            assert entry["first_search_ms"] > 0
            assert entry["ingest_events_per_s"] > 0
            # with every session at most 3 in a haystack, k=50 always covers everything
            assert entry["session"]["recall_all@50"] == 1.0
            assert entry["turn"]["recall_all@50"] == 1.0
    kenning = systems["kenning"]
    assert kenning["turn"]["recall_all@1"] == 1.0
    assert kenning["session"]["recall_all@1"] == 1.0
    assert kenning["turn"]["ndcg_any@5"] == 1.0
    # session nDCG counts each turn of a gold session; both of the bike session's user turns
    # are relevant, and only one answers the question
    assert 0.5 < kenning["session"]["ndcg_any@5"] <= 1.0
    assert report["full_context_tokens"]["mean"] > report["full_context_tokens"]["user_turns_mean"]


def test_report_files(report: dict[str, Any]) -> None:
    out = Path(report["data"]).parent / "out"
    assert json.loads((out / "report.json").read_text()) == report
    markdown = (out / "report.md").read_text()
    assert "# kenning bench longmemeval" in markdown
    assert "single-session-user" in markdown
    assert not list(out.glob("*.png"))


def test_score_longmemeval_follows_the_official_definitions(tmp_path: Path) -> None:
    questions = load_longmemeval(write_lme(tmp_path / "q.json.gz"))
    mappings = [
        {t.id: s.id for s in q.sessions for t in s.turns if t.role == "user"} for q in questions
    ]
    worst_first = [list(reversed(m)) for m in mappings]
    scores = score_longmemeval(questions, worst_first, mappings)
    # q-bike: user turns filler_a_1, filler_a_3, bike_1, bike_3, filler_b_1; gold bike_3
    assert scores["questions"] == 1
    assert scores["turn"]["recall_all@1"] == 0.0
    assert scores["turn"]["recall_all@3"] == 1.0
    assert scores["session"]["recall_any@1"] == 0.0
    assert scores["session"]["recall_any@3"] == 1.0
    # all three questions: the answer session is in the top 5 sessions of each haystack
    assert scores["session_recall_any@5_all_questions"] == 1.0
