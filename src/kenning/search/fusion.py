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
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from itertools import repeat
from operator import attrgetter
from types import MappingProxyType
from typing import Literal, NamedTuple

import numpy as np

from kenning.checks import check_numbers
from kenning.errors import InvalidInput
from kenning.search.timeref import TimeWindow
from kenning.store.records import Candidate, Position, SessionCandidate

_NO_SCORES: Mapping[str, float] = MappingProxyType({})
_score = attrgetter("score")
_id = attrgetter("id")

__all__ = [
    "Fused",
    "Fusion",
    "FusionConfig",
    "ItemStats",
    "Position",
    "add_bonuses",
    "best_first",
    "contenders",
    "fuse",
    "fuse_scores",
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
    (``Settings.rerank_model``, default the one shipped with kenning, trained by ``kenning
    bench rerank``); measured in docs/benchmarks.md: on top of sentence units and the
    partner lift it adds LongMemEval validation turn recall and costs LoCoMo's validation
    part turn recall and nDCG, and it does not raise the tuning objective (the synthetic
    recall suite: .950 off, .965 on).
    ``recency_weight`` adds ``w * 0.5 ** (age_days / half_life_days)`` (off by default: with
    a realistic ``now`` it cost LoCoMo recall on the tuning part and moved no LongMemEval
    metric; see docs/benchmarks.md); ``access_weight`` adds
    ``w * log1p(access_count) / log1p(100)`` (capped at ``w``). ``time_weight`` is added to
    records written inside a time the query names ("last Friday", "in March 2023"; see
    :mod:`kenning.search.timeref`). Bonuses are added after the fused score is scaled to
    [0, 1], so with zero weights scores stay in [0, 1]. ``fact_key_weight``: in a search for
    events only, a matching fact stands for the turn it was read from (that turn scores at
    least ``w`` times the fact's score; 0 turns facts as keys off).
    ``candidates``: how many each signal proposes from the whole scope (at least *k*);
    ``window_candidates``: how many more it proposes from inside each time the query names
    (records there may match too weakly to be among the best of the scope, and the time bonus
    can still lift them). 30 keeps both dev parts' objective where 100 had it and shortens the
    searches that name a time (docs/benchmarks.md).
    """

    method: Literal["rrf", "weighted"] = "weighted"
    rrf_k: int = 60
    lexical_weight: float = 0.6
    vector_weight: float = 0.4
    session_weight: float = 1.0
    multi_target_session_weight: float = 0.0
    partner_weight: float = 1.0
    rerank: bool = False
    sole_best_floor: float = 0.6
    recency_weight: float = 0.0
    recency_half_life_days: float = 30.0
    access_weight: float = 0.02
    time_weight: float = 0.2
    fact_key_weight: float = 1.0
    candidates: int = 100
    window_candidates: int = 30

    def __post_init__(self) -> None:
        if self.method not in ("rrf", "weighted"):
            raise InvalidInput("fusion method must be 'rrf' or 'weighted'")
        weights = (
            "rrf_k", "lexical_weight", "vector_weight", "session_weight",
            "multi_target_session_weight", "partner_weight", "recency_weight", "access_weight",
            "time_weight", "fact_key_weight",
        )  # fmt: skip
        check_numbers(self, weights, low=0)
        if self.lexical_weight + self.vector_weight <= 0:
            raise InvalidInput("lexical_weight + vector_weight must be > 0")
        check_numbers(self, "sole_best_floor", low=0, high=1)
        check_numbers(self, "recency_half_life_days", low=0, above=True)
        check_numbers(self, ("candidates", "window_candidates"), low=1, high=10_000, integer=True)


class ItemStats(NamedTuple):
    """What the bonuses need to know about a candidate (a named tuple, like the other records
    built per candidate: 0.36 µs to build against 0.47 µs for a frozen dataclass)."""

    at: datetime
    access_count: int = 0


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
) -> dict[str, float]:
    """Lift each candidate toward its session's score: max(s, (s + w * session) / (1 + w)).

    A session's score is its score as one document (BM25 over its text, cosine to its
    centroid) when the backend gives one, else its best record's score. Turns of the
    conversation that matches the query best then rank together, the way a person recalls
    "that chat about the refund" before the exact line. The session only ever lifts a record:
    a record that matches well on its own keeps its score in a session about something else,
    so evidence spread over several sessions is not buried under one session's other turns.
    Scores stay in [0, 1].
    """
    session_of = {c.id: c.session for c in candidates}
    best: dict[str | None, float] = dict(documents)
    if not documents.keys() >= set(session_of.values()):
        # A session without a document score takes its best record's.
        own: dict[str | None, float] = {}
        for key, value in base.items():
            group = session_of.get(key)
            top = own.get(group, 0.0)
            own[group] = value if value > top else top
        best = {group: documents.get(group, value) for group, value in own.items()}
    blended = {}
    scale = 1 + weight
    for key, value in base.items():
        lifted = (value + weight * best[session_of.get(key)]) / scale
        blended[key] = lifted if lifted > value else value
    return blended


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
_PRUNE = 1e-9  # more than the slack and any rounding of a floor or a ceiling


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
    return _timed_contenders(
        fused, k=k, depth=depth, other=other, bonus=bonus, windows=windows, times=times or {}
    )


def _timed_contenders(
    fused: Sequence[Fused],
    *,
    k: int,
    depth: int,
    other: float,
    bonus: float,
    windows: Sequence[TimeWindow],
    times: Mapping[str, float],
) -> list[str]:
    """:func:`contenders` when the query names times: floors and ceilings count the time
    *bonus* where *times* places a record (surely, perhaps) inside a window; *other* is the
    most the other bonuses add."""
    # Neither the k-th best floor nor the depth-th can fall below the k-th or depth-th best
    # fused score (*fused* is best first), and no record gains more than other + bonus: the
    # records further down take no part and are left out before the work below.
    bound = fused[min(k, len(fused)) - 1].score - other
    if depth:
        bound = min(bound, fused[min(depth, len(fused)) - 1].score)
    bound -= bonus + _PRUNE
    # Whole columns in numpy: a Python loop over a few hundred candidates, testing each time
    # against each window, was a tenth of a search's own time for queries that name a time.
    scores = np.fromiter(map(_score, fused), dtype=np.float64, count=len(fused))
    cut = int(np.searchsorted(-scores, -bound, side="right"))  # the first score below bound
    scores = scores[:cut]
    ids = list(map(_id, fused[:cut]))
    ats = np.fromiter(map(times.get, ids, repeat(math.nan)), dtype=np.float64, count=cut)
    surely = np.zeros(len(ids), dtype=np.bool_)
    perhaps = np.isnan(ats)  # a record whose time is unknown may lie anywhere
    for window in windows:
        start, end = window.start.timestamp(), window.end.timestamp()
        surely |= (start + _EDGE <= ats) & (ats < end - _EDGE)
        perhaps |= (start - _EDGE <= ats) & (ats < end + _EDGE)
    floors = np.where(surely, scores + bonus, scores)
    reach = np.where(perhaps, other + bonus, other)
    order = np.argsort(-floors, kind="stable")  # best floor first, ties in fused order
    bar = floors[order[min(k, len(ids)) - 1]]
    kept = np.zeros(len(ids), dtype=np.bool_)
    kept[order[:depth]] = True
    # The slack covers bonuses summed in another order than here (a unit in the last place).
    kept |= scores + reach + _SLACK >= bar
    return [ids[i] for i in np.flatnonzero(kept).tolist()]


@dataclass(slots=True, eq=False)
class Fusion:
    """Candidates fused (:func:`fuse_scores`): ``ranked`` best first, ties by id, each with
    its score but not yet what it was made of; :meth:`explain` adds that to the few a search
    keeps (building it for every candidate was a third of fusion's time)."""

    ranked: list[Fused]
    _: KW_ONLY
    method: str
    methods: dict[str, float]
    fused: dict[str, float]
    session: bool
    candidates: tuple[Sequence[Candidate], Sequence[Candidate]]
    # Each signal's candidates by id, built on first use (None: not yet).
    lexical: dict[str, Candidate] | None = field(default=None, init=False)
    vector: dict[str, Candidate] = field(default_factory=dict, init=False)

    def _by_id(self) -> dict[str, Candidate]:
        """Build both maps; return the lexical one."""
        lexical, vector = self.candidates
        self.vector = dict(zip(map(_id, vector), vector, strict=True))
        self.lexical = dict(zip(map(_id, lexical), lexical, strict=True))
        return self.lexical

    def explain(self, fused: Fused) -> Fused:
        """*fused* with every signal that contributed (``scores``), if not yet explained: the
        method's score, ``bm25`` and ``cosine`` where that signal found it, the ``session``
        lift, then what was recorded since fusion (a ``partner`` lift), and ``score``."""
        key = fused.id
        if key not in self.methods or self.method in fused.scores:
            return fused
        lex = self.lexical if self.lexical is not None else self._by_id()
        vec = self.vector
        own = self.methods[key]
        scores: dict[str, float] = {self.method: own}
        if key in lex:
            scores["bm25"] = lex[key].score
        if key in vec:
            scores["cosine"] = vec[key].score
        if self.session:
            scores["session"] = self.fused[key] - own
        scores["score"] = fused.score
        if fused.scores:
            scores.update(fused.scores)
        return Fused(id=key, score=fused.score, scores=scores)

    def position(self, key: str) -> Position | None:
        """Where the candidate *key* sits in its conversation, as the index gave it (None: not
        a candidate, not a turn, or not known)."""
        lex = self.lexical if self.lexical is not None else self._by_id()
        found = lex.get(key) or self.vector.get(key)
        return None if found is None else found.position


def fuse_scores(
    lexical: Sequence[Candidate],
    vector: Sequence[Candidate],
    *,
    config: FusionConfig,
    sessions: Mapping[str | None, float] | None = None,
) -> Fusion:
    """Combine ranked candidate lists into one ranking, best first (ties broken by id).

    *sessions* holds whole-session scores (see :func:`session_scores`). Bonuses are added
    afterwards, by :func:`add_bonuses`, to the few candidates they can still move.
    """
    methods = (
        _rrf(lexical, vector, config)
        if config.method == "rrf"
        else _weighted(lexical, vector, config)
    )
    base = methods
    if config.session_weight:
        base = _with_session(base, [*lexical, *vector], config.session_weight, sessions or {})
    # Best first, ties by id: two C-level sorts (stable, so the id order survives the second)
    # take half the time of one sort keyed by a Python function (29 vs 62 µs for 157 keys).
    order = sorted(sorted(base), key=base.__getitem__, reverse=True)
    # tuple.__new__ is C, Fused._make a Python call per candidate (every field is given).
    scores = map(base.__getitem__, order)
    ranked = list(map(tuple.__new__, repeat(Fused), zip(order, scores, repeat(_NO_SCORES))))
    return Fusion(
        ranked,
        method=config.method,
        methods=methods,
        fused=base,
        session=config.session_weight > 0,
        candidates=(lexical, vector),
    )


def fuse(
    lexical: Sequence[Candidate],
    vector: Sequence[Candidate],
    *,
    config: FusionConfig,
    sessions: Mapping[str | None, float] | None = None,
) -> list[Fused]:
    """:func:`fuse_scores` with every candidate explained."""
    fusion = fuse_scores(lexical, vector, config=config, sessions=sessions)
    return [fusion.explain(f) for f in fusion.ranked]


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
        if not bonus and f.scores.get("score") == f.score:
            out.append(f)  # nothing to add, nothing to rebuild
            continue
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
