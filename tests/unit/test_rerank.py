"""The learned re-ranker: its features by hand, its ordering, its model file (pure)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from kenning.errors import InvalidInput
from kenning.search.fusion import Fused, FusionConfig, Position
from kenning.search.rerank import FEATURES, RerankModel, RerankRecord, features, rerank
from kenning.search.timeref import TimeWindow
from kenning.store.protocol import Candidate

DAY = datetime(2026, 3, 6, 12, tzinfo=UTC)


def _fused(key: str, base: float, final: float) -> Fused:
    return Fused(id=key, score=final, scores={"weighted": base, "score": final})


FUSED = [_fused("q", 0.6, 0.8), _fused("a", 0.1, 0.45), _fused("x", 0.3, 0.3)]
LEXICAL = [Candidate(id="q", score=0.5, session="s1"), Candidate(id="x", score=0.25,
                                                                  session="s2")]  # fmt: skip
VECTOR = [Candidate(id="x", score=0.4, session="s2"), Candidate(id="q", score=0.2, session="s1"),
          Candidate(id="a", score=0.1, session="s1")]  # fmt: skip
SESSIONS = {"s1": 0.5, "s2": 0.25}
RECORDS = {
    "q": RerankRecord(DAY, Position("s1", 4, "Bo", asks=True), "Did you visit the Louvre?"),
    "a": RerankRecord(DAY, Position("s1", 5, "Ada"), "Yes, with Mia last Tuesday!"),
    "x": RerankRecord(DAY - timedelta(days=30), Position("s2", 1, "Ada"), "Paris is far."),
}
WINDOW = TimeWindow(DAY - timedelta(days=1), DAY + timedelta(days=1), "last friday")


def _x() -> dict[str, dict[str, float]]:
    x = features(
        FUSED, query="When did Ada visit the Louvre with Mia?", method="weighted",
        lexical=LEXICAL, vector=VECTOR, sessions=SESSIONS, windows=[WINDOW], records=RECORDS,
    )  # fmt: skip
    assert x.shape == (3, len(FEATURES))
    return {f.id: dict(zip(FEATURES, row, strict=True)) for f, row in zip(FUSED, x, strict=True)}


def test_features_by_hand() -> None:
    a = _x()["a"]
    # "a" is missing from the lexical list (2 candidates): it ranks 2 + 100 there
    assert a["lexical"] == 0.0 and a["has_lexical"] == 0.0
    assert a["lexical_rank"] == pytest.approx(-math.log1p(102))
    assert a["cosine"] == 0.1 and a["has_vector"] == 1.0
    assert a["vector_rank"] == pytest.approx(-math.log1p(2))
    assert a["cosine_share"] == pytest.approx(0.1 / 0.4)
    assert a["session"] == 0.5 and a["session_rank"] == 0.0 and a["session_share"] == 1.0
    assert a["fused"] == 0.1 and a["final"] == 0.45
    assert a["in_window"] == 1.0
    # the query names Ada, the author; its names (capitalised, but "When", which opens it)
    # are Ada, Louvre and Mia, and the record's text holds Mia only
    assert a["speaker_named"] == 1.0
    assert a["entity_share"] == pytest.approx(1 / 3)
    assert a["position"] == pytest.approx(-math.log1p(1))
    # its partner is the question before it (asks, another author): that one's fused score
    assert a["partner"] == 0.6


def test_features_of_the_others() -> None:
    x = _x()
    q, other = x["q"], x["x"]
    assert q["lexical"] == 0.5 and q["lexical_share"] == 1.0 and q["lexical_rank"] == 0.0
    assert q["speaker_named"] == 0.0  # Bo is not named
    assert q["partner"] == 0.1  # its answer's fused score
    assert q["entity_share"] == pytest.approx(1 / 3)  # "louvre"
    assert other["in_window"] == 0.0 and other["partner"] == 0.0
    assert other["session_rank"] == pytest.approx(-math.log1p(1))


def test_a_record_without_details_gets_no_record_features() -> None:
    x = features(
        FUSED, query="anything", method="weighted", lexical=LEXICAL, vector=VECTOR,
        sessions={}, windows=[], records={},
    )  # fmt: skip
    row = dict(zip(FEATURES, x[1], strict=True))
    assert row["in_window"] == row["speaker_named"] == row["partner"] == row["session"] == 0.0
    assert features([], query="x", method="weighted", lexical=[], vector=[], sessions={},
                    windows=[], records={}).shape == (0, len(FEATURES))  # fmt: skip


def test_rerank_orders_the_head_and_keeps_the_scale_of_scores() -> None:
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("partner")] = 1.0
    model = RerankModel(weights=tuple(weights), depth=2)
    x = np.zeros((3, len(FEATURES)))
    x[1, FEATURES.index("partner")] = 0.6  # "a" rises above "q"
    out = rerank(FUSED, x, model)
    assert [f.id for f in out] == ["a", "q", "x"]
    assert [f.score for f in out] == [0.8, 0.45, 0.3]  # scores still fall down the list
    assert out[0].scores["rerank"] == 0.6 and out[0].scores["score"] == 0.8
    assert "rerank" not in out[2].scores  # below the depth: untouched
    # ties keep the fused order
    assert [f.id for f in rerank(FUSED, np.zeros((3, len(FEATURES))), model)] == ["q", "a", "x"]


def test_the_shipped_model_loads_and_bad_files_do_not(tmp_path: Path) -> None:
    model = RerankModel.load()
    assert len(model.weights) == len(FEATURES) and model.depth == 30
    assert FusionConfig().rerank is False  # opt-in
    bad = tmp_path / "m.jsonl"
    bad.write_text(json.dumps({"features": list(FEATURES)[::-1], "weights": model.weights}))
    with pytest.raises(InvalidInput, match="features differ"):
        RerankModel.load(bad)
    bad.write_text("not json")
    with pytest.raises(InvalidInput, match="not a rerank model"):
        RerankModel.load(bad)
    with pytest.raises(InvalidInput, match="weights"):
        RerankModel(weights=(1.0,))
    with pytest.raises(InvalidInput, match="finite"):
        RerankModel(weights=(math.nan,) * len(FEATURES))


def test_settings_take_any_reranker_and_refuse_what_is_none() -> None:
    from kenning.search.rerank import Reranker
    from kenning.settings import Settings

    model = RerankModel.load()
    assert isinstance(model, Reranker)
    assert Settings(rerank_model=model).rerank_model is model
    with pytest.raises(InvalidInput, match="a Reranker"):
        Settings(rerank_model=object())  # type: ignore[arg-type]
    x = np.zeros((3, len(FEATURES)))
    x[2, FEATURES.index("final")] = 1.0
    assert [f.id for f in model.order(FUSED, x)] == [f.id for f in rerank(FUSED, x, model)]
