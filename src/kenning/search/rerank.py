"""Learned re-ranking of the best fused candidates: a linear model over general features (pure).

Opt-in (``FusionConfig(rerank=True)``). After fusion, the session and partner lifts and the
bonuses, the best ``depth`` candidates are re-ordered by ``w · x``, where ``x`` holds general
features of each candidate — how each signal scored and ranked it, its session's score, the
time window, whether the query names its author or the capitalised words it holds, the score
of its question or answer partner — and ``w`` was learned (pairwise logistic loss) on the
tuning parts of the development data and selected on their validation parts
(docs/benchmarks.md). Nothing in the features names a dataset, an id or an answer.

The weights ship with kenning (``kenning/data/rerank_weights.jsonl``); ``kenning bench rerank
--locomo FILE --longmemeval FILE --out DIR`` trains them again (:mod:`kenning.bench.rerank_bench`)
and writes a file :meth:`RerankModel.load` reads. Any :class:`Reranker` can take the model's
place (``Settings(rerank_model=...)``). Re-ordering keeps the
scale of scores: the re-ranked records take the scores of the top ``depth`` in their new
order, so scores still fall down the list and ``min_score`` keeps its meaning; each hit's
model score is ``scores["rerank"]``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kenning.errors import InvalidInput
from kenning.search.fusion import Fused, Position
from kenning.search.timeref import TimeWindow
from kenning.store.records import Candidate

__all__ = ["FEATURES", "RerankModel", "RerankRecord", "Reranker", "features", "rerank"]

FEATURES = (
    "lexical", "cosine", "has_lexical", "has_vector", "lexical_rank", "vector_rank", "session",
    "session_rank", "session_share", "fused", "final", "in_window", "speaker_named",
    "entity_share", "lexical_share", "cosine_share", "position", "partner",
)  # fmt: skip
"""The features, in the order of the model's weights."""

_WEIGHTS_FILE = "rerank_weights.jsonl"
_WORD = re.compile(r"\w+")
_CAPITALISED = re.compile(r"\b[A-Z][a-zA-Z]+\b")
# Capitalised because they open a question, not because they name something.
_NOT_NAMES = frozenset({"what", "when", "who", "how", "which", "did", "is", "i"})
_MISSING_RANK = 100
"""A record missing from a signal's list ranks this far below the list's last record."""


@runtime_checkable
class Reranker(Protocol):
    """What re-orders the best fused candidates from their features.

    The engine computes :func:`features` of its best ``depth`` candidates (after lifts and
    bonuses) and hands them, with every fused candidate best first, to :meth:`order`, whose
    result is ranked as it comes. :class:`RerankModel` is the shipped one; ``kenning bench
    rerank`` plugs in a recorder of the features it trains on.
    """

    @property
    def depth(self) -> int:
        """How many of the best candidates get features (at least 2)."""
        ...

    def order(self, fused: Sequence[Fused], x: npt.NDArray[np.float64]) -> list[Fused]:
        """*fused* re-ordered; *x* holds the features of its first ``len(x)`` candidates.

        The result must hold every candidate of *fused* once: the search raises
        :class:`~kenning.errors.InvalidInput` otherwise.
        """
        ...


@dataclass(frozen=True, slots=True)
class RerankModel:
    """Linear weights over :data:`FEATURES`, and how many of the best candidates to re-order
    (a :class:`Reranker`)."""

    weights: tuple[float, ...]
    depth: int = 30

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise InvalidInput(f"a rerank model needs {len(FEATURES)} weights")
        if not all(math.isfinite(w) for w in self.weights):
            raise InvalidInput("rerank weights must be finite numbers")
        if self.depth < 2:
            raise InvalidInput("rerank depth must be at least 2")

    @classmethod
    def load(cls, path: str | Path | None = None) -> RerankModel:
        """The model in *path* (default: the one shipped with kenning).

        The file holds one JSON object: ``{"features": [...], "weights": [...], "depth": n}``;
        its feature names must be :data:`FEATURES`, in order.

        Raises:
            InvalidInput: The file is not such a model.
        """
        if path is None:
            text = resources.files("kenning.data").joinpath(_WEIGHTS_FILE).read_text()
        else:
            text = Path(path).read_text()
        try:
            body = json.loads(text)
            names = tuple(body["features"])
            weights = tuple(float(w) for w in body["weights"])
            depth = int(body.get("depth", 30))
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInput(f"not a rerank model: {exc}") from exc
        if names != FEATURES:
            raise InvalidInput("the rerank model's features differ from kenning.search.rerank")
        return cls(weights=weights, depth=depth)

    def order(self, fused: Sequence[Fused], x: npt.NDArray[np.float64]) -> list[Fused]:
        """:func:`rerank` by this model."""
        return rerank(fused, x, self)


@dataclass(frozen=True, slots=True)
class RerankRecord:
    """What the features need to know about a candidate record."""

    at: datetime
    position: Position
    text: str


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _names(query: str) -> list[str]:
    """The query's capitalised words, but the first one (which opens the sentence)."""
    found = _CAPITALISED.findall(query)
    kept = found[1:] or found
    return [w.lower() for w in kept if w.lower() not in _NOT_NAMES]


def features(
    fused: Sequence[Fused],
    *,
    query: str,
    method: str,
    lexical: Sequence[Candidate],
    vector: Sequence[Candidate],
    sessions: Mapping[str | None, float],
    windows: Sequence[TimeWindow],
    records: Mapping[str, RerankRecord],
) -> npt.NDArray[np.float64]:
    """The feature matrix (one row per candidate of *fused*, columns :data:`FEATURES`).

    Args:
        fused: Candidates best first, after lifts and bonuses (``scores[method]`` holds each
            one's fused score before the lifts).
        query: The query text.
        method: The fusion method (the key of the fused score in ``Fused.scores``).
        lexical: The lexical candidates, best first.
        vector: The vector candidates, best first.
        sessions: Each session's score as one document (empty when the lift is off).
        windows: The times the query names.
        records: Time, position and text of candidates (a candidate missing here gets no
            window, author or text features).
    """
    n = len(fused)
    lex = {c.id: (rank, c.score) for rank, c in enumerate(lexical)}
    vec = {c.id: (rank, c.score) for rank, c in enumerate(vector)}
    lexical_score, lexical_rank = _signal(fused, lex, len(lexical))
    cosine, vector_rank = _signal(fused, vec, len(vector))
    base = {f.id: f.scores.get(method, f.score) for f in fused}
    of = _record_columns(fused, query, sessions, windows, records, base)
    best_session = max(sessions.values(), default=0.0) or 1.0
    best_lexical = max((c.score for c in lexical), default=0.0) or 1.0
    best_cosine = max((c.score for c in vector), default=0.0) or 1.0
    columns = (
        np.clip(lexical_score, 0.0, 1.0), np.maximum(cosine, 0.0),
        np.fromiter((f.id in lex for f in fused), dtype=np.float64, count=n),
        np.fromiter((f.id in vec for f in fused), dtype=np.float64, count=n),
        -np.log1p(lexical_rank), -np.log1p(vector_rank), of.session,
        -np.log1p(of.session_rank), of.session / best_session,
        np.fromiter((base[f.id] for f in fused), dtype=np.float64, count=n),
        np.fromiter((f.score for f in fused), dtype=np.float64, count=n), of.in_window,
        of.named, of.entities, lexical_score / best_lexical, cosine / best_cosine,
        -np.log1p(np.arange(n, dtype=np.float64)), of.partner,
    )  # fmt: skip
    return np.column_stack(columns) if n else np.zeros((0, len(FEATURES)))


def _signal(
    fused: Sequence[Fused], found: Mapping[str, tuple[int, float]], size: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each candidate's score and rank in one signal's list (*found*: rank and score by id,
    of *size* records); one missing there scores 0 and ranks below the list's end."""
    score = np.zeros(len(fused))
    rank = np.full(len(fused), float(size + _MISSING_RANK))
    for row, f in enumerate(fused):
        hit = found.get(f.id)
        if hit is not None:
            rank[row], score[row] = hit
    return score, rank


class _RecordColumns(NamedTuple):
    """The features read from the candidates' records, one value per candidate each."""

    session: npt.NDArray[np.float64]
    session_rank: npt.NDArray[np.float64]
    in_window: npt.NDArray[np.float64]
    named: npt.NDArray[np.float64]
    entities: npt.NDArray[np.float64]
    partner: npt.NDArray[np.float64]


def _record_columns(
    fused: Sequence[Fused],
    query: str,
    sessions: Mapping[str | None, float],
    windows: Sequence[TimeWindow],
    records: Mapping[str, RerankRecord],
    base: Mapping[str, float],
) -> _RecordColumns:
    """Session score and rank, inside a named time, author named by the query, share of the
    query's names held, and the fused score (*base*) of a question or answer partner."""
    by_session = sorted(sessions, key=lambda s: (-sessions[s], str(s)))
    session_rank = {s: rank for rank, s in enumerate(by_session)}
    at_place = {
        (r.position.session, r.position.seq): key for key, r in records.items() if key in base
    }
    query_words = _words(query)
    names = _names(query)
    # One pattern per query: a record "holds" a name when the word occurs in its text.
    holds = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b") if names else None
    n = len(fused)
    of = _RecordColumns(np.zeros(n), np.full(n, float(len(sessions) + 10)), np.zeros(n),
                        np.zeros(n), np.zeros(n), np.zeros(n))  # fmt: skip
    authors: dict[str, set[str]] = {}
    for row, f in enumerate(fused):
        record = records.get(f.id)
        if record is None:
            continue
        place = record.position
        if place.session in sessions:
            of.session[row] = sessions[place.session]
            of.session_rank[row] = session_rank[place.session]
        if windows:
            of.in_window[row] = any(w.contains(record.at) for w in windows)
        author = authors.get(place.author)
        if author is None:
            author = authors[place.author] = _words(place.author)
        of.named[row] = bool(author) and author <= query_words
        if holds is not None:
            held = {m.lower() for m in holds.findall(record.text.lower())}
            of.entities[row] = len(held) / len(names)
        for step in (-1, 1):
            other = at_place.get((place.session, place.seq + step))
            if other is None or records[other].position.author == place.author:
                continue
            # a question and its answer, as for the partner lift
            if (records[other].position if step < 0 else place).asks:
                of.partner[row] = max(of.partner[row], base[other])
    return of


def rerank(fused: Sequence[Fused], x: npt.NDArray[np.float64], model: RerankModel) -> list[Fused]:
    """*fused* with its best ``model.depth`` re-ordered by ``x @ weights`` (x: their features).

    The re-ordered records take the top ``depth`` scores in their new order (ties keep their
    fused order); the model's score of each is ``scores["rerank"]``; the rest follow as they
    were.
    """
    depth = min(model.depth, len(fused), len(x))
    if depth < 2:
        return list(fused)
    values = x[:depth] @ np.asarray(model.weights, dtype=np.float64)
    order = np.argsort(-values, kind="stable")
    scores = [f.score for f in fused[:depth]]
    out = []
    for slot, index in enumerate(order):
        f = fused[int(index)]
        new = {**f.scores, "rerank": float(values[index]), "score": scores[slot]}
        out.append(Fused(id=f.id, score=scores[slot], scores=new))
    return [*out, *fused[depth:]]
