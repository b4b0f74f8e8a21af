"""Search reads the query: named times, several targets, a signal's lone best match.

Real SQLite and the real embedding model; each test compares kenning's default path with the
same search with that part switched off, so the test shows what the part changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kenning import FusionConfig, Hit, Memory, NewEvent, Scope, Settings
from kenning.errors import InvalidInput
from kenning.search.fusion import Fused
from kenning.search.plan import QueryPlan
from kenning.search.rerank import FEATURES, RerankModel
from tests.conftest import MemoEmbedder

# Wednesday 11 March 2026, evening.
NOW = datetime(2026, 3, 11, 20, 0, tzinfo=UTC)
FRIDAY = datetime(2026, 3, 6, 18, 0, tzinfo=UTC)


def _open(
    tmp_path: Path, embedder: MemoEmbedder, reply_weight: float | None = None, **fusion: object
) -> Memory:
    tmp_path.mkdir(parents=True, exist_ok=True)
    settings = Settings(fusion=replace(FusionConfig(), **fusion))  # type: ignore[arg-type]
    if reply_weight is not None:
        settings = replace(settings, reply_weight=reply_weight)
    return Memory.open(tmp_path / "m.db", embedder=embedder, settings=settings)


def _at(days_before_now: float) -> datetime:
    return NOW - timedelta(days=days_before_now)


def test_a_named_day_prefers_its_records(tmp_path: Path, real_embedder: MemoEmbedder) -> None:
    scope = Scope("acme", "dana")
    with _open(tmp_path, real_embedder) as memory:
        memory.add_events(Scope("acme", "dana", "feb"), [
            NewEvent("user", "I bought a new toaster for the kitchen today.", at=_at(20)),
            NewEvent("user", "I bought new running shoes today.", at=_at(12)),
        ])  # fmt: skip
        memory.add_events(Scope("acme", "dana", "fri"), [
            NewEvent("user", "Picked up a blender on the way home.", at=FRIDAY),
        ])  # fmt: skip
        hits = memory.search(scope, "What did I buy last Friday?", k=3, now=NOW)
        assert "blender" in hits[0].content
        assert hits[0].scores["time"] > 0
        assert "time" not in hits[1].scores
    with _open(tmp_path, real_embedder, time_weight=0.0) as plain:
        hits = plain.search(scope, "What did I buy last Friday?", k=3, now=NOW)
        assert "blender" not in hits[0].content


def test_records_of_a_named_time_are_found_beyond_the_best_of_the_scope(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    scope = Scope("acme", "dana")
    older = [NewEvent("user", f"I bought groceries and paid with my card, receipt {i}.",
                      at=_at(40 + i)) for i in range(30)]  # fmt: skip
    with _open(tmp_path, real_embedder, candidates=5) as memory:
        memory.add_events(Scope("acme", "dana", "old"), older)
        memory.add_events(Scope("acme", "dana", "fri"), [
            NewEvent("user", "Finally got myself that espresso machine.", at=FRIDAY),
        ])  # fmt: skip
        hits = memory.search(scope, "What did I buy last Friday?", k=5, now=NOW)
        assert "espresso" in hits[0].content
    with _open(tmp_path, real_embedder, candidates=5, time_weight=0.0) as plain:
        hits = plain.search(scope, "What did I buy last Friday?", k=5, now=NOW)
        assert all("espresso" not in h.content for h in hits)


# Session a is about late deliveries and holds one fact; session b is about something else
# and holds the other fact in passing. Background chatter gives BM25 realistic statistics.
DELIVERY_A = [
    "I got a $20 refund for the late delivery last month.",
    "I'm thinking about switching to express delivery.",
    "I'll start comparing delivery options in my area.",
    "Do couriers deliver on weekends?",
    "Maybe a parcel locker would work in our building.",
    "Late deliveries keep happening, how do I complain?",
    "Which delivery slots are least likely to be late?",
    "Should a late delivery be refunded or credited?",
    "How early should I order for delivery before the holidays?",
]
DELIVERY_B = [
    "I'm trying to cut plastic waste at home, any tips?",
    "Reusable bags keep piling up in my car.",
    "By the way, the delayed parcel got me a $15 refund too.",
    "Is composting possible in a small apartment?",
]
BACKGROUND = [
    f"{what} {when}."
    for what in ("I cooked pasta", "We booked a flight", "My manager moved the meeting",
                 "The cat knocked over a plant", "I started a new book", "We painted the hall")
    for when in ("on Monday", "with friends", "after work", "in the morning", "again")
]  # fmt: skip


def _delivery_memory(path: Path, embedder: MemoEmbedder, settings: Settings) -> Memory:
    memory = Memory.open(path, embedder=embedder, settings=settings)
    for session, texts, days in (("a", DELIVERY_A, 30), ("b", DELIVERY_B, 10),
                                 ("bg", BACKGROUND, 50)):  # fmt: skip
        memory.add_events(Scope("acme", "dana", session), [
            NewEvent("user", text, at=_at(days) + timedelta(minutes=i))
            for i, text in enumerate(texts)
        ])  # fmt: skip
    return memory


def test_a_question_with_several_targets_reaches_every_session(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    scope = Scope("acme", "dana")
    query = "How much money was I refunded in total for late deliveries?"
    with _delivery_memory(tmp_path / "a.db", real_embedder, Settings()) as memory:
        several = [h.content for h in memory.search(scope, query, k=8, now=NOW)]
        assert all("session" not in h.scores for h in memory.search(scope, query, now=NOW))
        single = memory.search(scope, "Which delivery slots are least often late?", now=NOW)
        assert any(h.scores.get("session", 0) > 0 for h in single)
    one = Settings(fusion=FusionConfig(multi_target_session_weight=1.0))
    with _delivery_memory(tmp_path / "b.db", real_embedder, one) as memory:
        lifted = [h.content for h in memory.search(scope, query, k=8, now=NOW)]
    fact_a, fact_b = DELIVERY_A[0], DELIVERY_B[2]
    assert fact_a in several and fact_b in several
    # Read as one target, session a's other turns are lifted above session b's fact.
    assert fact_b not in lifted or lifted.index(fact_b) > several.index(fact_b)


def test_the_embedders_lone_best_match_is_not_buried(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    """A paraphrase BM25 cannot see (no shared word) is the embedder's best match."""
    answer = "After dinner I like to unwind quietly, and lights are out by half past nine."
    turns = [
        "Any recommendations for a team offsite this spring?",
        "Recommend some hiking trails near the lake.",
        "Any recommendations for games that toddlers enjoy?",
        answer,
        "Can you recommend a good laptop for students?",
        "Recommend a few experiments for a science class.",
        "My kids' football practice starts at eight.",
        "Which workouts count toward my fitness tracker goal?",
    ]
    query = "Can you recommend a way to relax at night?"

    def ranked(path: Path, floor: float) -> list[str]:
        settings = Settings(fusion=FusionConfig(sole_best_floor=floor))
        with Memory.open(path, embedder=real_embedder, settings=settings) as memory:
            for i, text in enumerate(turns):
                memory.add_events(Scope("acme", "dana", f"s{i}"),
                                  [NewEvent("user", text, at=_at(5 + i))])  # fmt: skip
            memory.add_events(Scope("acme", "dana", "bg"), [
                NewEvent("user", text, at=_at(50) + timedelta(minutes=i))
                for i, text in enumerate(BACKGROUND)
            ])  # fmt: skip
            hits = memory.search(Scope("acme", "dana"), query, k=6, now=NOW)
            found = {h.content: h for h in hits}
            if answer in found:
                assert "bm25" not in found[answer].scores
            return [h.content for h in hits]

    default = FusionConfig().sole_best_floor
    rescued, plain = ranked(tmp_path / "a.db", default), ranked(tmp_path / "b.db", 0.0)
    assert rescued.index(answer) <= 3
    assert answer not in plain or plain.index(answer) > rescued.index(answer)


def test_a_named_time_never_widens_the_callers_filters(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    scope = Scope("acme", "dana")
    with _open(tmp_path, real_embedder) as memory:
        memory.add_events(Scope("acme", "dana", "old"), [
            NewEvent("user", "I bought a toaster.", at=_at(40)),
        ])  # fmt: skip
        memory.add_events(Scope("acme", "dana", "fri"), [
            NewEvent("user", "I bought a blender.", at=FRIDAY),
        ])  # fmt: skip
        hits = memory.search(scope, "What did I buy last Friday?", until=_at(30), now=NOW)
        assert [h.content for h in hits] == ["I bought a toaster."]
        assert "time" not in hits[0].scores
        narrowed = memory.search(scope, "What did I buy last Friday?", since=_at(30), now=NOW)
        assert [h.content for h in narrowed] == ["I bought a blender."]


def test_search_reads_the_query_with_the_settings_reader(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    class EverythingHasSeveralTargets:
        def read(self, text: str, now: datetime) -> QueryPlan:
            return QueryPlan(text=text, multi_target=True)

    scope = Scope("acme", "dana")
    events = [NewEvent("user", "My order A-1042 is late.", at=_at(3)),
              NewEvent("user", "The courier says A-1042 left the depot.", at=_at(2))]  # fmt: skip
    for reader, lifted in ((None, True), (EverythingHasSeveralTargets(), False)):
        settings = Settings() if reader is None else Settings(reader=reader)
        path = tmp_path / f"{lifted}.db"
        with Memory.open(path, embedder=real_embedder, settings=settings) as memory:
            memory.add_events(Scope("acme", "dana", "s1"), events)
            results = memory.search(scope, "What is the status of my order A-1042?", k=2, now=NOW)
            assert results.plan is not None
            assert results.plan.multi_target is not lifted
            # several targets switch the session lift off (multi_target_session_weight 0)
            assert any("session" in hit.scores for hit in results) is lifted


_LOUVRE_QUERY = "When did I go to the Louvre museum in Paris?"


def _louvre_rank(memory: Memory) -> tuple[int, Hit]:
    """Where the short answer "Yes, last Tuesday!" ranks for a question about its question."""
    chat = [
        NewEvent("assistant", "Did you get to visit the Louvre on your Paris trip?", at=_at(9)),
        NewEvent("user", "Yes, last Tuesday! It was packed.", at=_at(9)),
        NewEvent("assistant", "Anything else planned for the trip?", at=_at(9)),
    ]
    other = [NewEvent("user", f"Note {i}: museum tickets for the family are on my list.",
                      at=_at(20 + i)) for i in range(6)]  # fmt: skip
    memory.add_events(Scope("acme", "dana", "paris"), chat)
    memory.add_events(Scope("acme", "dana", "notes"), other)
    hits = memory.search(Scope("acme", "dana"), _LOUVRE_QUERY, k=5, now=NOW)
    rank = next(i for i, h in enumerate(hits) if h.content.startswith("Yes"))
    return rank, hits[rank]


def test_a_short_reply_rises_next_to_the_turn_it_answers(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    ranks = {}
    for weight in (1.0, 0.0):
        # The answer's vector as it was embedded: the partner lift alone.
        with _open(tmp_path / str(weight), real_embedder, 0.0, partner_weight=weight) as memory:
            ranks[weight], reply = _louvre_rank(memory)
            assert (reply.scores.get("partner", 0.0) > 0) is (weight > 0)
    assert ranks[1.0] <= 1 < ranks[0.0]


def test_a_question_lifts_its_answer_by_relevance_not_popularity(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    fusion = replace(FusionConfig(), access_weight=0.5, partner_weight=1.0)
    settings = Settings(fusion=fusion, track_access=False, reply_weight=0.0)
    with Memory.open(tmp_path / "m.db", embedder=real_embedder, settings=settings) as memory:
        _, reply = _louvre_rank(memory)
        assert reply.scores.get("partner", 0.0) > 0
        first = memory.search(Scope("acme", "dana"), _LOUVRE_QUERY, k=5, now=NOW)
        (question,) = [h for h in first if h.content.startswith("Did")]
        for _ in range(20):
            memory.store.touch(Scope("acme", "dana"), [question.id], at=NOW)
        hits = memory.search(Scope("acme", "dana"), _LOUVRE_QUERY, k=5, now=NOW)
        by_id = {h.id: h for h in hits}
        # The question gains its access bonus; the answer it lifts does not.
        assert by_id[question.id].scores["access"] > 0.3
        assert by_id[question.id].score > question.score + 0.3
        assert by_id[reply.id].score == pytest.approx(reply.score)
        assert "access" not in by_id[reply.id].scores


def test_an_answer_is_found_through_the_question_it_answers(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    found = {}
    for weight in (0.7, 0.0):
        # The partner lift off: the answer's own vector, pulled toward its question or not.
        with _open(tmp_path / str(weight), real_embedder, weight, partner_weight=0.0) as memory:
            rank, reply = _louvre_rank(memory)
            found[weight] = (rank, reply.scores["cosine"])
    assert found[0.7][0] <= 1 < found[0.0][0]
    assert found[0.7][1] > found[0.0][1] + 0.2  # measured: 0.61 against 0.26


def test_an_opt_in_rerank_model_reorders_the_best_candidates(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("speaker_named")] = 1.0  # a model that only cares who wrote it
    chat = [NewEvent("user", "The blender refund: what did they say about it?", at=_at(3),
                     metadata={"speaker": "Dana"}),
            NewEvent("user", "Money for the kitchen mixer is back on my card.", at=_at(2),
                     metadata={"speaker": "Priya"})]  # fmt: skip
    query = "What did Priya say about the blender refund?"
    tops = {}
    for on in (False, True):
        settings = Settings(
            fusion=replace(FusionConfig(), rerank=on, partner_weight=0.0),
            rerank_model=RerankModel(weights=tuple(weights)),
        )
        with Memory.open(tmp_path / f"{on}.db", embedder=real_embedder, settings=settings) as m:
            m.add_events(Scope("acme", "team", "s1"), chat)
            hits = m.search(Scope("acme"), query, k=2, now=NOW)
            tops[on] = hits[0].metadata["speaker"]
            assert ("rerank" in hits[0].scores) is on
            assert hits[0].score >= hits[1].score
    assert tops == {False: "Dana", True: "Priya"}


class _Dropping:
    """A re-ranker that loses its last candidate."""

    depth = 30

    def order(self, fused: Sequence[Fused], x: object) -> list[Fused]:
        return list(fused[:-1])


def test_a_reranker_that_drops_a_candidate_is_refused(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    settings = Settings(fusion=replace(FusionConfig(), rerank=True), rerank_model=_Dropping())
    with Memory.open(tmp_path / "m.db", embedder=real_embedder, settings=settings) as memory:
        memory.add_events(Scope("acme", "dana", "s1"), [
            NewEvent("user", "The blender jug arrived cracked.", at=_at(2)),
            NewEvent("assistant", "A new jug ships on Thursday.", at=_at(2)),
        ])  # fmt: skip
        with pytest.raises(InvalidInput, match="re-ordering"):
            memory.search(Scope("acme"), "when does the jug ship?", k=2, now=NOW)


def test_equal_scores_keep_the_order_records_were_written(
    tmp_path: Path, real_embedder: MemoEmbedder
) -> None:
    # BM25 alone scores equal texts exactly equal (cosines may differ in the last bits).
    fusion = replace(FusionConfig(), lexical_weight=1.0, vector_weight=0.0)
    settings = Settings(track_access=False, fusion=fusion)
    with Memory.open(tmp_path / "m.db", embedder=real_embedder, settings=settings) as memory:
        written = []
        for i in range(6):
            scope = Scope("acme", "dana", f"s{i}")
            (event,) = memory.add_events(scope, [NewEvent("user", "Thanks, that helps!",
                                                          at=_at(10))])  # fmt: skip
            written.append(event.id)
        memory.add_events(Scope("acme", "dana", "other"),
                          [NewEvent("user", "The parcel is late.", at=_at(10))])  # fmt: skip
        hits = memory.search(Scope("acme", "dana"), "thanks, that helps", k=6, now=NOW)
        assert len({h.score for h in hits}) == 1  # six equal scores
        assert [h.id for h in hits] == written
