"""The partner lift: a question and its answer rise together (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.errors import InvalidInput
from kenning.search.fusion import Fused, FusionConfig, Position, partner_lift


def _fused(scores: dict[str, float]) -> list[Fused]:
    ranked = sorted(scores, key=lambda key: (-scores[key], key))
    return [Fused(id=key, score=scores[key], scores={"score": scores[key]}) for key in ranked]


POSITIONS = {
    "q": Position(session="s1", seq=4, author="assistant", asks=True),  # "Did you visit …?"
    "a": Position(session="s1", seq=5, author="user"),  # "Yes, last Tuesday!"
    "more": Position(session="s1", seq=6, author="user"),  # the same author goes on
    "ack": Position(session="s1", seq=7, author="assistant"),  # "Sounds great!"
    "other": Position(session="s2", seq=5, author="assistant"),
}


def test_an_answer_is_lifted_toward_its_question_and_back() -> None:
    fused = _fused({"q": 0.8, "a": 0.1, "more": 0.05, "ack": 0.02, "other": 0.3})
    out = {f.id: f for f in partner_lift(fused, POSITIONS, 1.0)}
    assert out["a"].score == pytest.approx((0.1 + 0.8) / 2)
    assert out["a"].scores["partner"] == pytest.approx(0.35)
    assert out["a"].scores["score"] == out["a"].score
    # the question is lifted toward its answer only if that helps: never lowered
    assert out["q"].score == 0.8 and "partner" not in out["q"].scores
    # the same author's next turn is not a partner
    assert out["more"].score == 0.05
    # a reply to a statement is not lifted: "more" asks nothing
    assert out["ack"].score == 0.02
    # another session's turn with the same seq is not a partner
    assert out["other"].score == 0.3
    ranked = [f.id for f in partner_lift(fused, POSITIONS, 1.0)]
    assert ranked == ["q", "a", "other", "more", "ack"]


def test_a_question_rises_with_a_matching_answer() -> None:
    fused = _fused({"q": 0.1, "a": 0.9})
    out = {f.id: f.score for f in partner_lift(fused, POSITIONS, 1.0)}
    assert out["q"] == pytest.approx(0.5) and out["a"] == 0.9


def test_no_weight_no_positions_no_lift() -> None:
    fused = _fused({"q": 0.8, "a": 0.1})
    assert partner_lift(fused, POSITIONS, 0.0) == fused
    assert partner_lift(fused, {}, 1.0) == fused
    # records without a known position keep their score
    only_q = {"q": POSITIONS["q"]}
    assert partner_lift(fused, only_q, 1.0) == fused


def test_partner_weight_is_validated() -> None:
    assert FusionConfig().partner_weight == 1.0
    with pytest.raises(InvalidInput, match="partner_weight"):
        FusionConfig(partner_weight=-1.0)


@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=8),
    st.floats(0, 5),
)
def test_the_lift_never_lowers_and_never_passes_the_partner(
    values: list[float], weight: float
) -> None:
    ids = [f"r{i}" for i in range(len(values))]
    fused = _fused(dict(zip(ids, values, strict=True)))
    positions = {key: Position("s", i, "ab"[i % 2], asks=i % 3 == 0) for i, key in enumerate(ids)}
    out = {f.id: f.score for f in partner_lift(fused, positions, weight)}
    for i, key in enumerate(ids):
        neighbours = [values[j] for j in (i - 1, i + 1) if 0 <= j < len(values)]
        assert out[key] >= values[i]
        assert out[key] <= max([values[i], *neighbours]) + 1e-12
