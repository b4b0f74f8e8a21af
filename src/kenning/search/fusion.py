"""Pure score fusion: lexical (BM25) and vector (cosine) candidates, plus time and access.

Two fusion methods are offered. ``rrf`` (reciprocal-rank fusion) uses only ranks; ``weighted``
is a convex combination of the cosine and the calibrated BM25 score (BM25 over the query's
ideal score, capped at 1; see :mod:`kenning.store.lexical_index`).
Both produce a fused score in [0, 1] so ``min_score`` means the same thing for either; the
default was chosen by measurement (see docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from types import MappingProxyType
from typing import Literal, NamedTuple

from kenning.errors import InvalidInput
from kenning.search.timeref import TimeWindow
from kenning.store.records import Candidate, SessionCandidate

_NO_SCORES: Mapping[str, float] = MappingProxyType({})
_score = attrgetter("score")
_id = attrgetter("id")

__all__ = [
    "Fused",
    "FusionConfig",
    "ItemStats",
    "Position",
    "add_bonuses",
    "best_first",
    "contenders",
    "fuse",
    "partner_lift",
    "session_scores",
]


@dataclass(frozen=True, slots=True)
class FusionConfig:
    """How search signals are combined.

    ``session_weight`` w lifts each record toward the score S of its session as one document:
    ``max(s, (s + w * S) / (1 + w))`` (0 turns the session signal off). A question with
    several targets (counting, totals, comparisons; see :mod:`kenning.search.plan`) uses
    ``multi_target_session_weight`` instead.
    ``partner_weight`` w lifts a question and its answer toward each other (a turn that asks
    something and the next turn of its session, written by someone else):
    ``max(s, (s + w * p) / (1 + w))`` (see :func:`partner_lift`; 0 turns it off); it applies
    among the best ``max(3 * k, 30)`` candidates. ``rerank`` (off by default) re-orders the
    best candidates by the learned model of :mod:`kenning.search.rerank`
    (``Settings.rerank_model``, default the one shipped with kenning); measured in
    docs/benchmarks.md: more turn recall on both dev sets, a point less on the synthetic
    recall suite.
    ``recency_weight`` adds ``w * 0.5 ** (age_days / half_life_days)`` (off by default: with
    a realistic ``now`` it cost LoCoMo recall on the tuning part and moved no LongMemEval
    metric; see docs/benchmarks.md); ``access_weight`` adds
    ``w * log1p(access_count) / log1p(100)`` (capped at ``w``). ``time_weight`` is added to
    records written inside a time the query names ("last Friday", "in March 2023"; see
    :mod:`kenning.search.timeref`). Bonuses are added after the fused score is scaled to
    [0, 1], so with zero weights scores stay in [0, 1]. ``fact_key_weight``: in a search for
    events only, a matching fact stands for the turn it was read from (that turn scores at
    least ``w`` times the fact's score; 0 turns facts as keys off).
    """

    method: Literal["rrf", "weighted"] = "weighted"
    rrf_k: int = 60
    lexical_weight: float = 0.6
    vector_weight: float = 0.4
    session_weight: float = 1.0
    multi_target_session_weight: float = 0.0
    partner_weight: float = 1.0
    rerank: bool = False
    sole_best_floor: float = 0.8
    recency_weight: float = 0.0
    recency_half_life_days: float = 30.0
    access_weight: float = 0.02
    time_weight: float = 0.2
    fact_key_weight: float = 1.0
    candidates: int = 100

    def __post_init__(self) -> None:
        if self.method not in ("rrf", "weighted"):
            raise InvalidInput("fusion method must be 'rrf' or 'weighted'")
        numbers = {
            "rrf_k": self.rrf_k,
            "lexical_weight": self.lexical_weight,
            "vector_weight": self.vector_weight,
            "session_weight": self.session_weight,
            "multi_target_session_weight": self.multi_target_session_weight,
            "partner_weight": self.partner_weight,
            "sole_best_floor": self.sole_best_floor,
            "recency_weight": self.recency_weight,
            "access_weight": self.access_weight,
            "time_weight": self.time_weight,
            "fact_key_weight": self.fact_key_weight,
        }
        for name, value in numbers.items():
            if not math.isfinite(value) or value < 0:
                raise InvalidInput(f"{name} must be a finite number >= 0")
        if self.lexical_weight + self.vector_weight <= 0:
            raise InvalidInput("lexical_weight + vector_weight must be > 0")
        if self.sole_best_floor > 1:
            raise InvalidInput("sole_best_floor must be between 0 and 1")
        if self.recency_half_life_days <= 0:
            raise InvalidInput("recency_half_life_days must be > 0")
        if not 1 <= self.candidates <= 10_000:
            raise InvalidInput("candidates must be between 1 and 10000")


class ItemStats(NamedTuple):
    """What the bonuses need to know about a candidate (a named tuple, like the other records
    built per candidate: 0.36 µs to build against 0.47 µs for a frozen dataclass)."""

    at: datetime
    access_count: int = 0


class Position(NamedTuple):
    """Where a record sits in its conversation: session, sequence number, who wrote it, and
    whether it asks something (holds a question mark)."""

    session: str | None
    seq: int
    author: str
    asks: bool = False


class Fused(NamedTuple):
    """A fused candidate with every signal that contributed, for explanation and debugging.

    A named tuple rather than a frozen dataclass: a search builds one per candidate (a few
    hundred), and a frozen dataclass took 0.58 µs each to build against 0.39 µs.
    """

    id: str
    score: float
    scores: Mapping[str, float] = _NO_SCORES


def best_first(fused: list[Fused]) -> None:
    """Sort *fused* in place, best score first, ties by id (two stable C-level sorts)."""
    fused.sort(key=_id)
    fused.sort(key=_score, reverse=True)


def _rrf(
    lexical: Sequence[Candidate], vector: Sequence[Candidate], config: FusionConfig
) -> dict[str, float]:
    out: dict[str, float] = {}
    for weight, ranked in ((config.lexical_weight, lexical), (config.vector_weight, vector)):
        for rank, cand in enumerate(ranked):
            out[cand.id] = out.get(cand.id, 0.0) + weight / (config.rrf_k + rank + 1)
    best = (config.lexical_weight + config.vector_weight) / (config.rrf_k + 1)
    return {key: value / best for key, value in out.items()}


def _weighted(
    lexical: Sequence[Candidate], vector: Sequence[Candidate], config: FusionConfig
) -> dict[str, float]:
    lexical_weight, vector_weight = config.lexical_weight, config.vector_weight
    total = lexical_weight + vector_weight
    out: dict[str, float] = {}
    # Clamped by comparisons rather than min/max calls: this runs for every candidate.
    for cand in lexical:
        s = cand.score
        out[cand.id] = lexical_weight * (0.0 if s < 0.0 else 1.0 if s > 1.0 else s)
    held = out.get
    for cand in vector:
        s = cand.score
        out[cand.id] = held(cand.id, 0.0) + (vector_weight * s if s > 0.0 else 0.0)
    fused = {key: value / total for key, value in out.items()}
    if config.sole_best_floor > 0:
        # A record missing from one signal's candidates scores zero there. For the record the
        # other signal ranks first, that miss is more likely the first signal's blind spot (a
        # paraphrase for BM25, a rare id or name for the embedder) than irrelevance: it keeps
        # a share of its own score. A signal that returned nothing at all (off, degraded) is
        # absent, not blind.
        for ranked, other in ((lexical, vector), (vector, lexical)):
            if not ranked or not other:
                continue
            best = max(ranked, key=_score)  # the first of equals: the signal's own order
            if all(c.id != best.id for c in other):
                floor = config.sole_best_floor * min(max(best.score, 0.0), 1.0)
                fused[best.id] = max(fused[best.id], floor)
    return fused


def session_scores(
    candidates: Sequence[SessionCandidate], config: FusionConfig
) -> dict[str | None, float]:
    """Score whole sessions like records: normalised BM25 and cosine, weighted."""
    total = config.lexical_weight + config.vector_weight
    out = {}
    for cand in candidates:
        lexical = min(max(cand.lexical, 0.0), 1.0)
        value = config.lexical_weight * lexical + config.vector_weight * max(cand.cosine, 0.0)
        out[cand.session] = value / total
    return out


def _with_session(
    base: dict[str, float],
    candidates: Sequence[Candidate],
    weight: float,
    documents: Mapping[str | None, float],
) -> tuple[dict[str, float], dict[str, float]]:
    """Lift each candidate toward its session's score: max(s, (s + w * session) / (1 + w)).

    A session's score is its score as one document (BM25 over its text, cosine to its
    centroid) when the backend gives one, else its best record's score. Turns of the
    conversation that matches the query best then rank together, the way a person recalls
    "that chat about the refund" before the exact line. The session only ever lifts a record:
    a record that matches well on its own keeps its score in a session about something else,
    so evidence spread over several sessions is not buried under one session's other turns.
    Scores stay in [0, 1]; the second mapping holds each record's lift.
    """
    session_of = {c.id: c.session for c in candidates}
    best: dict[str | None, float] = {}
    for key, value in base.items():
        group = session_of.get(key)
        top = best.get(group, 0.0)
        best[group] = value if value > top else top
    if documents:
        best = {g: documents.get(g, value) for g, value in best.items()}
    blended, lift = {}, {}
    scale = 1 + weight
    for key, value in base.items():
        lifted = (value + weight * best[session_of.get(key)]) / scale
        score = lifted if lifted > value else value
        blended[key] = score
        lift[key] = score - value
    return blended, lift


def _bonuses(
    item: ItemStats, config: FusionConfig, now: datetime, windows: Sequence[TimeWindow]
) -> dict[str, float]:
    out: dict[str, float] = {}
    if config.time_weight and any(w.contains(item.at) for w in windows):
        out["time"] = config.time_weight
    if config.recency_weight:
        age_days = max((now - item.at).total_seconds(), 0.0) / 86400.0
        out["recency"] = config.recency_weight * 0.5 ** (age_days / config.recency_half_life_days)
    if config.access_weight and item.access_count:
        out["access"] = config.access_weight * min(
            math.log1p(item.access_count) / math.log1p(100), 1.0
        )
    return out


_EDGE = 0.001
"""Seconds: a time this close to a window's edge may fall either side once it is read back as
a datetime (microseconds), so it counts as perhaps inside, never as surely inside."""


_SLACK = 1e-12


def contenders(
    fused: Sequence[Fused],
    *,
    k: int,
    config: FusionConfig,
    windows: Sequence[TimeWindow] = (),
    times: Mapping[str, float] | None = None,
    depth: int = 0,
) -> list[str]:
    """The ids among *fused* (best first) that can still reach the top *k* once bonuses
    (:func:`add_bonuses`) are added, and the best *depth* by their floors; in *fused*'s order.

    Each record's final score has a floor (its fused score, plus the time bonus when *times*
    places it surely inside a time the query names) and a ceiling (the fused score plus every
    bonus it may get: recency, access, and the time bonus unless its time is known to lie
    outside every window). At least k records reach the k-th best floor, so a record whose
    ceiling is below it cannot be among the top k. Without windows this is the k-th fused
    score less the largest bonus. *times* holds records' times in epoch seconds where the
    index knew them; a record missing there may lie anywhere.

    The best *depth* records by floor are those a partner lift or a re-ranker may move:
    ranked with the time bonus they will surely get, a turn inside the named time is not left
    out for records outside it that the bonus passes by.
    """
    if not fused:
        return []
    other = config.recency_weight + config.access_weight
    bonus = config.time_weight if windows else 0.0
    if bonus == 0.0:
        floor = fused[min(k, len(fused)) - 1].score - other
        head = {f.id for f in fused[:depth]}
        return [f.id for f in fused if f.score >= floor or f.id in head]
    spans = [(w.start.timestamp(), w.end.timestamp()) for w in windows]
    known = times or {}
    floors: list[float] = []
    reach: list[float] = []
    for f in fused:
        at = known.get(f.id)
        surely = at is not None and any(s + _EDGE <= at < e - _EDGE for s, e in spans)
        perhaps = at is None or any(s - _EDGE <= at < e + _EDGE for s, e in spans)
        floors.append(f.score + bonus if surely else f.score)
        reach.append(other + bonus if perhaps else other)
    order = sorted(range(len(fused)), key=floors.__getitem__, reverse=True)  # stable
    bar = floors[order[min(k, len(fused)) - 1]]
    head = {fused[i].id for i in order[:depth]}
    # The slack covers bonuses summed in another order than here (a unit in the last place).
    return [
        f.id
        for f, up in zip(fused, reach, strict=True)
        if f.score + up + _SLACK >= bar or f.id in head
    ]


def fuse(
    lexical: Sequence[Candidate],
    vector: Sequence[Candidate],
    *,
    config: FusionConfig,
    sessions: Mapping[str | None, float] | None = None,
) -> list[Fused]:
    """Combine ranked candidate lists into one list, best first (ties broken by id).

    *sessions* holds whole-session scores (see :func:`session_scores`). Bonuses are added
    afterwards, by :func:`add_bonuses`, to the few candidates they can still move.
    """
    base = (
        _rrf(lexical, vector, config)
        if config.method == "rrf"
        else _weighted(lexical, vector, config)
    )
    fused = base
    session_part: dict[str, float] = {}
    if config.session_weight:
        base, session_part = _with_session(
            base, [*lexical, *vector], config.session_weight, sessions or {}
        )
    lex = {c.id: c.score for c in lexical}
    vec = {c.id: c.score for c in vector}
    out = []
    # Best first, ties by id: two C-level sorts (stable, so the id order survives the second)
    # take half the time of one sort keyed by a Python function (29 vs 62 µs for 157 keys).
    for key in sorted(sorted(base), key=base.__getitem__, reverse=True):
        scores: dict[str, float] = {config.method: fused[key]}
        if key in lex:
            scores["bm25"] = lex[key]
        if key in vec:
            scores["cosine"] = vec[key]
        if key in session_part:
            scores["session"] = session_part[key]
        scores["score"] = base[key]
        out.append(Fused(id=key, score=base[key], scores=scores))
    return out


def add_bonuses(
    fused: Sequence[Fused],
    *,
    config: FusionConfig,
    stats: Mapping[str, ItemStats],
    now: datetime,
    windows: Sequence[TimeWindow] = (),
    limit: int | None = None,
) -> list[Fused]:
    """Add recency, access and time bonuses to the candidates in *stats*, re-rank, keep
    *limit*. *windows* are the times the query names."""
    out = []
    for f in fused:
        item = stats.get(f.id)
        if item is None:
            out.append(f)
            continue
        bonus = _bonuses(item, config, now, windows)
        total = f.score + sum(bonus.values())
        out.append(Fused(id=f.id, score=total, scores={**f.scores, **bonus, "score": total}))
    best_first(out)
    return out if limit is None else out[:limit]


def partner_lift(
    fused: Sequence[Fused], positions: Mapping[str, Position], weight: float
) -> list[Fused]:
    """Lift a question and its answer toward each other; return all of *fused*, best first.

    Two records are partners when one asks something (holds a question mark) and the other is
    the next turn of the same session, written by someone else: a question and its answer. An
    answer like "Yes, last Tuesday!" shares no words with a later search about the trip it
    confirms, while the question it answers does; lifted toward it, the answer ranks next to
    it (and a question rises with a matching answer). Other neighbours are not partners: a
    generic reply to a statement ("Sounds great!") would only take a place in the top k.
    The lift is ``max(s, (s + w * p) / (1 + w))`` with ``p`` the better partner's score; like
    the session lift it never lowers a score. Only records in *positions* that are among
    *fused* take part (partners are not fetched); the lift is recorded as
    ``scores["partner"]``.
    """
    if weight <= 0 or not positions:
        return list(fused)
    score = {f.id: f.score for f in fused}
    at = {(p.session, p.seq): key for key, p in positions.items() if key in score}
    out = []
    for f in fused:
        place = positions.get(f.id)
        best = 0.0
        if place is not None:
            for step in (-1, 1):
                other = at.get((place.session, place.seq + step))
                if other is None or positions[other].author == place.author:
                    continue
                earlier = positions[other] if step < 0 else place
                if earlier.asks:
                    best = max(best, score[other])
        lifted = max(f.score, (f.score + weight * best) / (1 + weight))
        if lifted > f.score:
            scores = {**f.scores, "partner": lifted - f.score, "score": lifted}
            out.append(Fused(id=f.id, score=lifted, scores=scores))
        else:
            out.append(f)
    best_first(out)
    return out
