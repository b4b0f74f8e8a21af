"""The LongMemEval bench end to end on a tiny synthetic file, with the real embedding model."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest

from kenning.bench.datasets import load_longmemeval
from kenning.bench.longmemeval_bench import (
    LME_KS,
    MISS_REASONS,
    NOANS,
    complete_ranking,
    miss_reasons,
    official_turn_sessions,
    run_longmemeval_bench,
    score_longmemeval,
    tenant_of,
)
from kenning.bench.metrics import session_scores_from_turns
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
    # one ingest batch: kenning asks for each distinct text once, whatever the tenant
    assert emb["texts_requested_at_ingest"] == emb["distinct_texts"]
    assert emb["texts_computed_at_ingest"] == emb["distinct_texts"]


def test_metric_keys_and_values(report: dict[str, Any]) -> None:
    systems = report["systems"]
    assert list(systems) == ["kenning", "kenning_nofacts", "bm25", "vector", "recent_window"]
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
    # the bike session's other user turn counts for a non-gold session (official "noans"), so
    # the ideal holds the one evidence turn, ranked first
    assert kenning["session"]["ndcg_any@5"] == 1.0
    assert report["full_context_tokens"]["mean"] > report["full_context_tokens"]["user_turns_mean"]


def test_report_files(report: dict[str, Any]) -> None:
    out = Path(report["data"]).parent / "out"
    assert json.loads((out / "report.json").read_text()) == report
    markdown = (out / "report.md").read_text()
    assert "# kenning bench longmemeval" in markdown
    assert "single-session-user" in markdown
    assert f"{report['facts_extracted']} facts were read from the indexed turns" in markdown
    # one scored question, found by every search system: a row of zero misses each
    assert "## Why questions miss" in markdown
    assert "| all | kenning | 1 | 0 | 0 | 0 | 0 | 0 | 0 |" in markdown
    assert report["systems"]["kenning"]["misses"]["session"]["crowded_out"] == 0
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


# Golden values, checked by hand against LongMemEval's official turn-level scoring
# (run_retrieval.py ids, eval_utils.py evaluate_retrieval / evaluate_retrieval_turn2session).
# Answer session "answer_a" has ten user turns (ids answer_a_1, _3, ..., _19: i counts the
# assistant turns too); only the first two hold the answer. Six one-turn distractor sessions.
GOLD_TURNS = ["answer_a_1", "answer_a_3"]
OTHER_TURNS = [f"answer_a_{i}" for i in range(5, 20, 2)]  # the eight non-evidence user turns
DISTRACTORS = [f"s{n}_1" for n in range(1, 7)]


def _golden_question() -> dict[str, Any]:
    answer_session = []
    for n in range(10):
        answer_session.append(_turn("user", f"user line {n} about the garden", n < 2))
        answer_session.append(_turn("assistant", f"assistant line {n}"))
    ids = ["answer_a", *[f"s{n}" for n in range(1, 7)]]
    sessions = [answer_session] + [
        [_turn("user", f"distractor {n}"), _turn("assistant", "ok")] for n in range(1, 7)
    ]
    return {
        "question_id": "q-golden",
        "question_type": "single-session-user",
        "question": "What did I plant in the garden?",
        "answer": "tomatoes",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ids,
        "haystack_dates": [f"2023/05/{n + 1:02d} (Mon) 09:00" for n in range(len(ids))],
        "haystack_sessions": sessions,
        "answer_session_ids": ["answer_a"],
    }


def _golden(tmp_path: Path, ranking: list[str]) -> dict[str, Any]:
    path = tmp_path / "golden.json.gz"
    path.write_bytes(gzip.compress(json.dumps([_golden_question()]).encode()))
    questions = load_longmemeval(path)
    mapping = {t.id: s.id for s in questions[0].sessions for t in s.turns if t.role == "user"}
    assert sorted(mapping) == sorted([*GOLD_TURNS, *OTHER_TURNS, *DISTRACTORS])
    return score_longmemeval(questions, [ranking], [mapping])


def test_official_mapping_sends_non_evidence_turns_of_the_answer_session_elsewhere(
    tmp_path: Path,
) -> None:
    path = tmp_path / "golden.json.gz"
    path.write_bytes(gzip.compress(json.dumps([_golden_question()]).encode()))
    (question,) = load_longmemeval(path)
    mapping = {t.id: s.id for s in question.sessions for t in s.turns if t.role == "user"}
    official = official_turn_sessions(question, mapping)
    assert {official[t] for t in GOLD_TURNS} == {"answer_a"}
    assert {official[t] for t in OTHER_TURNS} == {f"{NOANS}answer_a"}
    assert all(official[t] == t.removesuffix("_1") for t in DISTRACTORS)


def test_golden_perfect_turn_ranking_scores_one_at_session_level(tmp_path: Path) -> None:
    scores = _golden(tmp_path, [*GOLD_TURNS, *DISTRACTORS, *OTHER_TURNS])
    assert scores["questions"] == 1
    assert scores["session"]["ndcg_any@5"] == 1.0
    assert scores["session"]["recall_all@1"] == 1.0
    assert scores["turn"]["ndcg_any@5"] == 1.0
    assert scores["turn"]["recall_any@1"] == 1.0
    assert scores["turn"]["recall_all@1"] == 0.0  # two gold turns cannot both fit in one slot
    assert scores["turn"]["recall_all@3"] == 1.0


def test_golden_answer_session_filler_first_scores_0_308(tmp_path: Path) -> None:
    ranking = [*OTHER_TURNS, *GOLD_TURNS, *DISTRACTORS]
    scores = _golden(tmp_path, ranking)
    # The eight filler turns count for one non-gold session, so k=5 grows to 13 turns
    # (noans, answer_a, s1, s2, s3); the gold turns sit at ranks 9 and 10:
    # (1/log2(9) + 1/log2(10)) / (1 + 1) = 0.3082
    expected = (1 / math.log2(9) + 1 / math.log2(10)) / 2
    assert round(expected, 3) == 0.308
    assert scores["session"]["ndcg_any@5"] == pytest.approx(expected)
    assert scores["session"]["recall_all@1"] == 0.0
    assert scores["session"]["recall_any@1"] == 0.0
    assert scores["session"]["recall_all@5"] == 1.0
    assert scores["turn"]["recall_all@5"] == 0.0
    assert scores["turn"]["recall_all@10"] == 1.0
    assert scores["turn"]["ndcg_any@10"] == pytest.approx(expected)
    # Mapping every turn to its real session instead (kenning's metric before issue 10) would
    # have scored this ranking perfect: ten relevant turns first, against an ideal of ten.
    path = tmp_path / "golden.json.gz"
    (question,) = load_longmemeval(path)
    real = {t.id: s.id for s in question.sessions for t in s.turns if t.role == "user"}
    loose = session_scores_from_turns(ranking, real, question.evidence_sessions, 5)
    assert loose.ndcg_any == 1.0 and loose.recall_all == 1.0


def test_a_short_ranking_is_completed_in_haystack_order(tmp_path: Path) -> None:
    mapping = {"x_1": "x", "y_1": "y", "y_3": "y", "z_1": "z"}
    assert complete_ranking(["y_3"], mapping) == ["y_3", "x_1", "y_1", "z_1"]
    # BM25 returning one distractor only: the rest follow in haystack order (gold first here),
    # so session k=1 finds the distractor and k=3 grows through the completed turns.
    scores = _golden(tmp_path, ["s3_1"])
    assert scores["session"]["recall_any@1"] == 0.0
    assert scores["session"]["recall_all@3"] == 1.0
    assert scores["turn"]["recall_all@3"] == 1.0


def test_each_question_is_its_own_tenant(tmp_path: Path) -> None:
    """Corpus statistics are per haystack: a question scores the same alone as among others."""
    questions = load_longmemeval(write_lme(tmp_path / "q.json.gz"))
    assert len({tenant_of(q) for q in questions}) == len(questions)
    alone = tmp_path / "alone.json.gz"
    alone.write_bytes(gzip.compress(json.dumps(lme_items()[:1]).encode()))
    embedder = MiniLMEmbedder()
    runs = [
        run_longmemeval_bench(data, tmp_path / name, embedder=embedder, progress=False,
                              plots=False)
        for name, data in (("all", tmp_path / "q.json.gz"), ("alone", alone))
    ]  # fmt: skip
    for system in ("kenning", "bm25", "vector"):
        assert runs[0]["systems"][system]["turn"] == runs[1]["systems"][system]["turn"]
        assert runs[0]["systems"][system]["session"] == runs[1]["systems"][system]["session"]


def _two_answer_sessions(tmp_path: Path, answer_sessions: int = 2) -> Any:
    """A question whose evidence lies in *answer_sessions* sessions (``answer_a``, ``answer_b``,
    …): each has an evidence user turn (``_1``) and a user turn without the answer (``_3``).
    Eight one-turn distractor sessions ``s1`` … ``s8`` follow."""
    names = [f"answer_{chr(ord('a') + n)}" for n in range(answer_sessions)]
    answer = [
        _turn("user", "I bought a kayak", True), _turn("assistant", "nice"),
        _turn("user", "any paddling tips?"), _turn("assistant", "sure"),
    ]  # fmt: skip
    ids = [*names, *[f"s{n}" for n in range(1, 9)]]
    sessions = [answer] * len(names) + [[_turn("user", f"distractor {n}")] for n in range(1, 9)]
    item = {
        "question_id": "q-misses",
        "question_type": "multi-session",
        "question": "What boats did I buy?",
        "answer": "kayaks",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ids,
        "haystack_dates": [f"2023/05/{n + 1:02d} (Mon) 09:00" for n in range(len(ids))],
        "haystack_sessions": sessions,
        "answer_session_ids": names,
    }
    path = tmp_path / "misses.json.gz"
    path.write_bytes(gzip.compress(json.dumps([item]).encode()))
    (question,) = load_longmemeval(path)
    mapping = {t.id: s.id for s in question.sessions for t in s.turns if t.role == "user"}
    return question, mapping


def test_miss_reasons_tell_a_crowded_out_session_from_one_not_reached(tmp_path: Path) -> None:
    question, mapping = _two_answer_sessions(tmp_path)
    distractors = [f"s{n}_1" for n in range(1, 9)]

    def reasons(ranking: list[str]) -> tuple[str | None, str | None]:
        return miss_reasons(question, complete_ranking(ranking, mapping), mapping)

    assert reasons(["answer_a_1", "answer_b_1"]) == (None, None)
    # answer_a's turn without the answer comes second: officially the sessions reached are
    # answer_a, noans:answer_a, s1, s2, s3, so answer_b (the sixth real turn) is crowded out;
    # its evidence turn is 6th of the turns, inside the top ten.
    crowded = ["answer_a_1", "answer_a_3", *distractors[:3], "answer_b_1"]
    assert reasons(crowded) == ("crowded_out", None)
    scores = score_longmemeval([question], [crowded], [mapping])
    assert scores["session"]["recall_all@5"] == 0.0
    assert scores["misses"]["session"] == {
        "more_gold_than_k": 0, "crowded_out": 1, "not_reached": 0
    }  # fmt: skip
    # four distractors before answer_b: it is the sixth real session, not reached
    assert reasons(["answer_a_1", *distractors[:4], "answer_b_1"]) == ("not_reached", None)
    # answer_b_1 is 12th, passed by answer_b_3 inside the top ten
    passed = ["answer_a_1", "answer_b_3", "answer_a_3", *distractors, "answer_b_1"]
    assert reasons(passed)[1] == "outranked_in_session"
    # ... or with no turn of answer_b in the top ten
    assert reasons(["answer_a_1", "answer_a_3", *distractors])[1] == "session_not_reached"


def test_more_gold_sessions_than_five_is_a_miss_of_its_own(tmp_path: Path) -> None:
    question, mapping = _two_answer_sessions(tmp_path, answer_sessions=6)
    perfect = [f"answer_{c}_1" for c in "abcdef"]
    assert miss_reasons(question, complete_ranking(perfect, mapping), mapping) == (
        "more_gold_than_k", None
    )  # fmt: skip
    scores = score_longmemeval([question], [perfect], [mapping])
    assert set(scores["misses"]) == set(MISS_REASONS)
    assert scores["misses"]["session"]["more_gold_than_k"] == 1
    assert sum(scores["misses"]["turn"].values()) == 0
