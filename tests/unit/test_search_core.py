"""Pure search core: FTS escaping, filter parsing and SQL rendering, score fusion."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning import InvalidFilter, InvalidInput, Memory, Scope, Settings
from kenning.records import NewEvent, Role, to_utc
from kenning.search.filters import parse_filters
from kenning.search.fusion import Fused, FusionConfig, ItemStats, add_bonuses, best_first, fuse
from kenning.store.records import Candidate
from kenning.store.sql.query import where_clause
from kenning.store.sqlite.fts import match_expression
from kenning.store.sqlite.sql import DIALECT
from kenning.text import query_terms
from tests.fakes import HashEmbedder

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@given(st.text(max_size=200))
def test_any_text_makes_a_valid_fts_query(text: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text)")
    conn.execute("INSERT INTO f VALUES ('refund order near text')")
    match = match_expression(text)
    if match:
        conn.execute("SELECT * FROM f WHERE f MATCH ?", (match,)).fetchall()


def test_query_terms_drop_stopwords_but_never_everything() -> None:
    assert query_terms("What did she say about the refund?") == ["say", "refund"]
    assert query_terms("what is it") == ["what", "is", "it"]
    assert match_expression("!!!") == ""


def test_filters_parse_and_render() -> None:
    f = parse_filters(
        {"role": ["user", "tool"], "tag": "billing", "meta.speaker": ["Ann", None]},
        since="2026-01-01",
        until=NOW + timedelta(days=1),
    )
    assert f.roles == (Role.USER, Role.TOOL)
    sql, params = where_clause(DIALECT, Scope("t", "u"), f)
    assert sql.count("?") == len(params)
    assert "Ann" in params and "t" in params and "u" in params
    assert "Ann" not in sql and "speaker" not in sql  # keys travel as parameters too
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (tenant, user_id, session, kind, role, at, tags, metadata)")
    conn.execute(
        "INSERT INTO items VALUES ('t', 'u', 's', 'event', 'user', ?, '[\"billing\"]', "
        '\'{"speaker": "Ann"}\')',
        (NOW.timestamp(),),
    )
    assert conn.execute(f"SELECT count(*) FROM items i WHERE {sql}", params).fetchone() == (1,)


@pytest.mark.parametrize(
    "bad",
    [{"x": 1}, {"meta.": 1}, {"meta.a-b": 1}, {"role": 5}, {"tag": ""}, {"tag": [1]},
     {"meta.k": [[1]]}, {"kind": "summary"}, {1: "x"}],
)  # fmt: skip
def test_bad_filters(bad: dict[object, object]) -> None:
    with pytest.raises(InvalidFilter):
        parse_filters(bad)  # type: ignore[arg-type]


def test_timestamps_normalise_to_utc() -> None:
    assert to_utc("2026-01-01T02:00:00+02:00") == NOW
    assert to_utc("2026-01-01T00:00:00Z") == NOW
    assert to_utc(datetime(2026, 1, 1)) == NOW
    assert to_utc(NOW.timestamp()) == NOW
    for bad in ("soon", True, [], "2026-13-01"):
        with pytest.raises(InvalidInput):
            to_utc(bad)  # type: ignore[arg-type]


def test_event_validation_normalises() -> None:
    e = NewEvent("user", "hi", tags=("b", "a", "b")).validated()
    assert e.role is Role.USER and e.tags == ("a", "b") and e.at is not None


def cands(*pairs: tuple[str, float]) -> list[Candidate]:
    return [Candidate(i, s) for i, s in pairs]


def test_rrf_rewards_agreement() -> None:
    config = FusionConfig(method="rrf", lexical_weight=1, vector_weight=1, session_weight=0,
                          recency_weight=0, access_weight=0)  # fmt: skip
    lex = cands(("a", 9.0), ("b", 5.0), ("c", 1.0))
    vec = cands(("b", 0.9), ("a", 0.8), ("d", 0.7))
    out = fuse(lex, vec, config=config)
    assert [f.id for f in out][:2] == ["a", "b"]
    assert out[0].score == pytest.approx((1 / 61 + 1 / 62) / (2 / 61))
    assert out[0].scores["bm25"] == 9.0 and out[0].scores["cosine"] == 0.8
    assert all(0 <= f.score <= 1 for f in out)


def test_weighted_sum_of_calibrated_bm25_and_cosine() -> None:
    config = FusionConfig(method="weighted", lexical_weight=1, vector_weight=1, session_weight=0,
                          recency_weight=0, access_weight=0, sole_best_floor=0)  # fmt: skip
    # Lexical scores arrive calibrated (1.0 = the whole query matched); above 1 is capped.
    out = fuse(cands(("a", 1.7), ("b", 0.5)), cands(("b", 0.5)), config=config)
    scores = {f.id: f.score for f in out}
    assert scores["a"] == pytest.approx(0.5)
    assert scores["b"] == pytest.approx((0.5 + 0.5) / 2)


def test_a_signals_best_record_that_the_other_signal_missed_keeps_a_share() -> None:
    config = FusionConfig(method="weighted", lexical_weight=0.6, vector_weight=0.4,
                          session_weight=0, recency_weight=0, access_weight=0,
                          sole_best_floor=0.8)  # fmt: skip
    # "p" is the embedder's best match and BM25 missed it (a paraphrase); "w" is a record
    # BM25 likes a little.
    out = fuse(cands(("w", 0.5), ("x", 0.4)), cands(("p", 0.55), ("w", 0.1)), config=config)
    scores = {f.id: f.score for f in out}
    assert scores["p"] == pytest.approx(0.8 * 0.55)
    assert scores["w"] == pytest.approx(0.6 * 0.5 + 0.4 * 0.1)
    assert [f.id for f in out] == ["p", "w", "x"]
    # BM25's best is among the vector candidates: nothing to rescue on that side.
    assert scores["x"] == pytest.approx(0.6 * 0.4)
    # Without the floor the paraphrase ranks last.
    plain = fuse(cands(("w", 0.5), ("x", 0.4)), cands(("p", 0.55), ("w", 0.1)),
                 config=FusionConfig(sole_best_floor=0, session_weight=0))  # fmt: skip
    assert plain[0].id == "w" and plain[-1].id == "p"
    # A signal that returned nothing is absent, not blind: lexical-only ranking is unchanged.
    alone = fuse(cands(("w", 0.5), ("x", 0.4)), [], config=config)
    assert {f.id: f.score for f in alone} == pytest.approx({"w": 0.3, "x": 0.24})


def test_session_weight_ranks_a_sessions_turns_together() -> None:
    config = FusionConfig(method="weighted", lexical_weight=1, vector_weight=1,
                          session_weight=1.0, recency_weight=0, access_weight=0)  # fmt: skip
    lex = [Candidate("a1", 1.0, "A"), Candidate("b1", 0.9, "B"), Candidate("a2", 0.85, "A")]
    out = fuse(lex, [], config=config)
    assert [f.id for f in out] == ["a1", "a2", "b1"]
    # Without session documents a session scores as its best record: a1 keeps 0.5 and a2
    # (0.425 alone) is lifted halfway to it.
    assert out[0].score == pytest.approx(0.5)
    assert out[1].score == pytest.approx((0.425 + 0.5) / 2)
    assert out[1].scores["session"] == pytest.approx((0.425 + 0.5) / 2 - 0.425)
    assert all(0 <= f.score <= 1 for f in out)


def test_session_document_score_lifts_its_turns() -> None:
    config = FusionConfig(method="weighted", lexical_weight=1, vector_weight=0,
                          session_weight=1.0, recency_weight=0, access_weight=0)  # fmt: skip
    lex = [Candidate("b1", 0.6, "B"), Candidate("a1", 0.4, "A")]
    out = fuse(lex, [], config=config, sessions={"A": 1.0, "B": 0.2})
    by_id = {f.id: f for f in out}
    assert [f.id for f in out] == ["a1", "b1"]
    assert by_id["a1"].score == pytest.approx((0.4 + 1.0) / 2)
    # A session that matches worse than the record never lowers the record's own score.
    assert by_id["b1"].score == pytest.approx(0.6)
    assert by_id["b1"].scores["session"] == 0.0


def test_strong_turns_of_other_sessions_stay_above_a_sessions_weak_turns() -> None:
    """Evidence in two sessions: the second session's matching turn is not buried."""
    config = FusionConfig(method="weighted", lexical_weight=1, vector_weight=0,
                          session_weight=1.0, recency_weight=0, access_weight=0)  # fmt: skip
    lex = [Candidate("a1", 0.9, "A"), Candidate("a2", 0.1, "A"), Candidate("b1", 0.7, "B")]
    out = fuse(lex, [], config=config, sessions={"A": 0.9, "B": 0.3})
    assert [f.id for f in out] == ["a1", "b1", "a2"]


def test_bonuses_for_recent_and_accessed_items() -> None:
    config = FusionConfig(recency_weight=0.1, recency_half_life_days=10, access_weight=0.05)
    stats = {
        "old": ItemStats(at=NOW - timedelta(days=10), access_count=0),
        "new": ItemStats(at=NOW, access_count=100),
    }
    base = fuse(cands(("old", 1.0), ("new", 1.0)), [], config=config)
    out = add_bonuses(base, config=config, stats=stats, now=NOW)
    by_id = {f.id: f for f in out}
    assert by_id["old"].scores["recency"] == pytest.approx(0.05)
    assert by_id["new"].scores["recency"] == pytest.approx(0.1)
    assert by_id["new"].scores["access"] == pytest.approx(0.05)
    assert out[0].id == "new"


@given(
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(0, 30)), max_size=8,
             unique_by=lambda t: t[0]),
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(-1, 1)), max_size=8,
             unique_by=lambda t: t[0]),
    st.sampled_from(["rrf", "weighted"]),
)  # fmt: skip
def test_fusion_is_deterministic_bounded_and_complete(
    lex: list[tuple[str, float]], vec: list[tuple[str, float]], method: str
) -> None:
    config = FusionConfig(method=method, recency_weight=0, access_weight=0)  # type: ignore[arg-type]
    out = fuse(cands(*lex), cands(*vec), config=config)
    again = fuse(cands(*lex), cands(*vec), config=config)
    assert out == again
    assert {f.id for f in out} == {i for i, _ in lex} | {i for i, _ in vec}
    assert all(-1e-9 <= f.score <= 1 + 1e-9 for f in out)
    assert [f.score for f in out] == sorted((f.score for f in out), reverse=True)
    assert out == sorted(out, key=lambda f: (-f.score, f.id))  # ties by id


@given(st.lists(st.tuples(st.text("abc", max_size=3), st.sampled_from([0.0, 0.5, 1.0, -0.0]))))
def test_best_first_orders_by_score_then_id(pairs: list[tuple[str, float]]) -> None:
    fused = [Fused(id=key, score=score) for key, score in pairs]
    expected = sorted(fused, key=lambda f: (-f.score, f.id))
    best_first(fused)
    assert fused == expected


def test_fusion_config_validates() -> None:
    for bad in ({"method": "max"}, {"rrf_k": -1}, {"lexical_weight": 0, "vector_weight": 0},
                {"recency_half_life_days": 0}, {"candidates": 0}, {"time_weight": -0.1},
                {"multi_target_session_weight": float("nan")},
                {"sole_best_floor": 1.5}, {"window_candidates": 0},
                {"window_candidates": 2.5}, {"candidates": True}):  # fmt: skip
        with pytest.raises(InvalidInput):
            FusionConfig(**bad)  # type: ignore[arg-type]


def test_min_score_and_k_cut_the_fused_list() -> None:
    """Ranking logic around the store, with a deterministic embedder (no model needed)."""
    settings = Settings(fusion=FusionConfig(recency_weight=0, access_weight=0))
    with Memory.open(":memory:", embedder=HashEmbedder(), settings=settings) as m:
        s = Scope("t", "u", "s")
        m.add_events(s, [{"role": "user", "content": f"apple {i}"} for i in range(5)]
                     + [{"role": "user", "content": "banana"}])  # fmt: skip
        assert len(m.search(s, "apple", k=3)) == 3
        strong = m.search(s, "apple", k=10, min_score=0.75)
        assert strong.hits and all(h.score >= 0.75 for h in strong)
        assert all("banana" not in h.content for h in strong)
