"""Retrieval metrics: hand-computed values and invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.bench.metrics import (
    SessionScores,
    mean,
    mean_by_group,
    ndcg_any_at_k,
    percentiles,
    recall_all_at_k,
    recall_any_at_k,
    recall_fraction_at_k,
    session_scores_from_turns,
    sessions_from_turns,
)
from kenning.errors import InvalidInput

RANKED = ["a", "b", "c", "d", "e"]


def test_recall_fraction() -> None:
    assert recall_fraction_at_k(RANKED, {"b", "d", "z"}, 1) == 0.0
    assert recall_fraction_at_k(RANKED, {"b", "d", "z"}, 2) == pytest.approx(1 / 3)
    assert recall_fraction_at_k(RANKED, {"b", "d", "z"}, 5) == pytest.approx(2 / 3)
    assert recall_fraction_at_k(RANKED, ["b", "b"], 2) == 1.0
    assert recall_fraction_at_k([], {"a"}, 3) == 0.0


def test_recall_any_and_all() -> None:
    gold = {"b", "d"}
    assert [recall_any_at_k(RANKED, gold, k) for k in (1, 2, 4)] == [0.0, 1.0, 1.0]
    assert [recall_all_at_k(RANKED, gold, k) for k in (1, 2, 4)] == [0.0, 0.0, 1.0]
    assert recall_all_at_k(RANKED, {"b", "zz"}, 50) == 0.0


def test_ndcg_longmemeval_discount() -> None:
    # eval_utils.dcg: rank 1 and rank 2 both have discount 1, rank r >= 2 has 1/log2(r)
    assert ndcg_any_at_k(RANKED, {"a"}, 5) == 1.0
    assert ndcg_any_at_k(RANKED, {"b"}, 5) == 1.0
    assert ndcg_any_at_k(RANKED, {"c"}, 5) == pytest.approx(1 / math.log2(3))
    assert ndcg_any_at_k(RANKED, {"c"}, 2) == 0.0
    # gold at ranks 2 and 4: (1 + 1/log2(4)) / (1 + 1)
    assert ndcg_any_at_k(RANKED, {"b", "d"}, 5) == pytest.approx(0.75)
    # ideal capped at k: one slot, gold at rank 1
    assert ndcg_any_at_k(RANKED, {"a", "e"}, 1) == 1.0


def test_ndcg_standard_discount() -> None:
    assert ndcg_any_at_k(RANKED, {"a"}, 5, discount="standard") == 1.0
    assert ndcg_any_at_k(RANKED, {"b"}, 5, discount="standard") == pytest.approx(1 / math.log2(3))
    # gold at ranks 2 and 4: (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3))
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_any_at_k(RANKED, {"b", "d"}, 5, discount="standard") == pytest.approx(expected)


def test_ndcg_repeated_ids_count_at_each_position() -> None:
    ranked = ["s1", "s2", "s1"]
    # relevances [0, 1, 0] against 2 relevant items -> 1 / 2
    assert ndcg_any_at_k(ranked, {"s2"}, 3, n_relevant=2) == pytest.approx(0.5)
    with pytest.raises(InvalidInput):
        ndcg_any_at_k(ranked, {"s2"}, 3, n_relevant=0)


@pytest.mark.parametrize(
    "metric", [recall_fraction_at_k, recall_any_at_k, recall_all_at_k, ndcg_any_at_k]
)
def test_metrics_reject_bad_input(metric: object) -> None:
    assert callable(metric)
    with pytest.raises(InvalidInput, match="k must be"):
        metric(RANKED, {"a"}, 0)
    with pytest.raises(InvalidInput, match="gold is empty"):
        metric(RANKED, set(), 3)


TURN_TO_SESSION = {"a_1": "a", "a_3": "a", "b_1": "b", "c_2": "c", "c_4": "c", "d_1": "d"}


def test_sessions_from_turns_dedupes_in_rank_order() -> None:
    ranked = ["a_1", "a_3", "b_1", "a_1", "c_2", "d_1"]
    assert sessions_from_turns(ranked, TURN_TO_SESSION, 1) == ["a"]
    assert sessions_from_turns(ranked, TURN_TO_SESSION, 3) == ["a", "b", "c"]
    assert sessions_from_turns(ranked, TURN_TO_SESSION, 10) == ["a", "b", "c", "d"]
    with pytest.raises(InvalidInput, match="turn_to_session"):
        sessions_from_turns(["zz_1"], TURN_TO_SESSION, 1)
    with pytest.raises(InvalidInput):
        sessions_from_turns(ranked, TURN_TO_SESSION, 0)


def test_session_scores_from_turns_grows_k_until_k_distinct_sessions() -> None:
    # Scores against the mapping it is given; the official LongMemEval mapping ("noans"
    # turns) is built and pinned in tests/unit/test_longmemeval_bench.py.
    ranked = ["a_1", "a_3", "c_2", "b_1", "c_4", "d_1"]
    # k=2: effective k grows to 3 (a, a, c); relevances [0, 0, 1] over 2 gold-session turns
    scores = session_scores_from_turns(ranked, TURN_TO_SESSION, {"c"}, 2)
    assert scores.recall_any == 1.0 and scores.recall_all == 1.0
    assert scores.ndcg_any == pytest.approx((1 / math.log2(3)) / 2)
    assert sessions_from_turns(ranked, TURN_TO_SESSION, 2) == ["a", "c"]
    # k=1: effective k stays 1
    assert session_scores_from_turns(ranked, TURN_TO_SESSION, {"c", "a"}, 1) == SessionScores(
        recall_any=1.0, recall_all=0.0, ndcg_any=1.0
    )
    with pytest.raises(InvalidInput, match="gold session"):
        session_scores_from_turns(ranked, TURN_TO_SESSION, {"zz"}, 1)


def test_aggregation_helpers() -> None:
    assert mean([1.0, 0.0, 0.5]) == pytest.approx(0.5)
    assert mean_by_group([("x", 1.0), (2, 0.0), ("x", 0.0)]) == {"x": 0.5, 2: 0.0}
    with pytest.raises(InvalidInput):
        mean([])


def test_percentiles_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentiles(reversed(values)) == {"p50": 10.0, "p95": 19.0, "p99": 20.0}
    assert percentiles([7.0]) == {"p50": 7.0, "p95": 7.0, "p99": 7.0}
    assert percentiles([1.0, 2.0, 3.0], qs=(1, 99.9)) == {"p1": 1.0, "p99.9": 3.0}
    with pytest.raises(InvalidInput):
        percentiles([])
    with pytest.raises(InvalidInput):
        percentiles([1.0], qs=(0,))


_IDS = st.sampled_from([f"t{i}" for i in range(12)])
_RANKING = st.lists(_IDS, unique=True, max_size=12)
_GOLD = st.sets(_IDS, min_size=1, max_size=6)


@given(ranked=_RANKING, gold=_GOLD, k=st.integers(1, 14))
def test_metric_bounds_and_order(ranked: list[str], gold: set[str], k: int) -> None:
    fraction = recall_fraction_at_k(ranked, gold, k)
    any_ = recall_any_at_k(ranked, gold, k)
    all_ = recall_all_at_k(ranked, gold, k)
    ndcg = ndcg_any_at_k(ranked, gold, k)
    for value in (fraction, any_, all_, ndcg, ndcg_any_at_k(ranked, gold, k, discount="standard")):
        assert 0.0 <= value <= 1.0 + 1e-12
    assert any_ >= fraction >= all_


@given(ranked=_RANKING, gold=_GOLD, k=st.integers(1, 13))
def test_recall_monotone_in_k(ranked: list[str], gold: set[str], k: int) -> None:
    for metric in (recall_fraction_at_k, recall_any_at_k, recall_all_at_k):
        assert metric(ranked, gold, k) <= metric(ranked, gold, k + 1)


@given(
    ranked=st.lists(st.sampled_from(sorted(TURN_TO_SESSION)), unique=True, max_size=10),
    k=st.integers(1, 6),
)
def test_sessions_from_turns_properties(ranked: list[str], k: int) -> None:
    sessions = sessions_from_turns(ranked, TURN_TO_SESSION, k)
    assert len(sessions) == len(set(sessions)) <= k
    assert sessions == sessions_from_turns(ranked, TURN_TO_SESSION, k + 1)[: len(sessions)]
    recalled = set(sessions)
    scores = session_scores_from_turns(ranked, TURN_TO_SESSION, {"b", "c"}, k)
    assert scores.recall_any == float(bool(recalled & {"b", "c"}))
    assert scores.recall_all == float({"b", "c"} <= recalled)
    assert 0.0 <= scores.ndcg_any <= 1.0 + 1e-12
