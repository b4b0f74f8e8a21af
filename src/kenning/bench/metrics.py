"""Retrieval metrics over ranked id lists, as defined by LoCoMo and LongMemEval.

Pure functions. A *ranking* is a sequence of ids, best first; *gold* is the set of relevant ids.
Session-level definitions follow LongMemEval's ``src/retrieval/eval_utils.py`` exactly, including
its DCG discount (see :func:`ndcg_any_at_k`).

Example::

    >>> recall_fraction_at_k(["D1:2", "D1:3", "D2:1"], {"D1:3", "D4:4"}, 2)
    0.5
    >>> recall_any_at_k(["s1", "s2"], {"s2"}, 1), recall_all_at_k(["s1", "s2"], {"s2"}, 2)
    (0.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from kenning.errors import InvalidInput

__all__ = [
    "SessionScores",
    "mean",
    "mean_by_group",
    "ndcg_any_at_k",
    "percentiles",
    "recall_all_at_k",
    "recall_any_at_k",
    "recall_fraction_at_k",
    "session_scores_from_turns",
    "sessions_from_turns",
]

K = TypeVar("K", bound=Hashable)

Discount = Literal["longmemeval", "standard"]


@dataclass(frozen=True, slots=True)
class SessionScores:
    """Session-level scores of one question at one k."""

    recall_any: float
    recall_all: float
    ndcg_any: float


def _check(gold: Collection[str], k: int) -> None:
    if k < 1:
        raise InvalidInput(f"k must be at least 1, got {k}")
    if not gold:
        raise InvalidInput("gold is empty: skip questions without evidence before scoring them")


def recall_fraction_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """LoCoMo turn-level recall: ``|gold ∩ top-k| / |gold|``.

    Raises:
        InvalidInput: ``k < 1`` or ``gold`` is empty.

    Example:
        >>> recall_fraction_at_k(["a", "b", "c"], {"b", "z"}, 2)
        0.5
    """
    _check(gold, k)
    gold_set = set(gold)
    return len(gold_set.intersection(ranked_ids[:k])) / len(gold_set)


def recall_any_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 if any gold id is in the top k, else 0.0 (LongMemEval ``recall_any``).

    Raises:
        InvalidInput: ``k < 1`` or ``gold`` is empty.
    """
    _check(gold, k)
    top = set(ranked_ids[:k])
    return float(any(doc in top for doc in gold))


def recall_all_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 if every gold id is in the top k, else 0.0 (LongMemEval ``recall_all``).

    This is the LongMemEval paper's "Recall@k".

    Raises:
        InvalidInput: ``k < 1`` or ``gold`` is empty.
    """
    _check(gold, k)
    top = set(ranked_ids[:k])
    return float(all(doc in top for doc in gold))


def _dcg(relevances: Sequence[float], discount: Discount) -> float:
    if discount == "longmemeval":
        # eval_utils.dcg: rel[0] + sum(rel[i] / log2(i + 1)) for i >= 1, so ranks 1 and 2 both
        # count in full; kept as published so scores compare with the paper's.
        return sum(rel if i == 0 else rel / math.log2(i + 1) for i, rel in enumerate(relevances))
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances))


def ndcg_any_at_k(
    ranked_ids: Sequence[str],
    gold: Collection[str],
    k: int,
    *,
    n_relevant: int | None = None,
    discount: Discount = "longmemeval",
) -> float:
    """nDCG@k with binary relevance (LongMemEval ``ndcg_any``).

    Every position of the top k whose id is gold counts 1 (a repeated id counts at each
    position, as in the official code when several turns map to one session). The ideal DCG puts
    ``min(k, n_relevant)`` relevant items first.

    Args:
        ranked_ids: Ranked ids, best first.
        gold: Relevant ids; they should all be in the corpus that was ranked.
        k: Cut-off.
        n_relevant: How many corpus items are relevant (default ``len(set(gold))``).
        discount: ``"longmemeval"`` (default) is ``eval_utils.dcg``: rank 1 and rank 2 both have
            discount 1, rank r ≥ 2 has ``1 / log2(r)``. ``"standard"`` is ``1 / log2(r + 1)``.

    Raises:
        InvalidInput: ``k < 1``, ``gold`` is empty or ``n_relevant < 1``.

    Example:
        >>> ndcg_any_at_k(["x", "g"], {"g"}, 5)
        1.0
        >>> round(ndcg_any_at_k(["x", "g"], {"g"}, 5, discount="standard"), 4)
        0.6309
    """
    _check(gold, k)
    gold_set = set(gold)
    relevant = len(gold_set) if n_relevant is None else n_relevant
    if relevant < 1:
        raise InvalidInput(f"n_relevant must be at least 1, got {relevant}")
    actual = _dcg([1.0 if doc in gold_set else 0.0 for doc in ranked_ids[:k]], discount)
    ideal = _dcg([1.0] * min(k, relevant), discount)
    return actual / ideal


def sessions_from_turns(
    ranked_turn_ids: Sequence[str], turn_to_session: Mapping[str, str], k: int
) -> list[str]:
    """The first *k* distinct sessions of a turn ranking, in rank order.

    LongMemEval scores a turn-level run at session level by growing k until the top turns span
    k distinct sessions; the sessions recalled are exactly these.

    Raises:
        InvalidInput: ``k < 1`` or a ranked turn id is missing from *turn_to_session*.

    Example:
        >>> sessions_from_turns(["a_1", "a_3", "b_1", "c_2"], {"a_1": "a", "a_3": "a",
        ...                     "b_1": "b", "c_2": "c"}, 2)
        ['a', 'b']
    """
    if k < 1:
        raise InvalidInput(f"k must be at least 1, got {k}")
    sessions: dict[str, None] = {}
    for turn_id in ranked_turn_ids:
        if len(sessions) >= k:
            break
        sessions.setdefault(_session_of(turn_id, turn_to_session))
    return list(sessions)


def _session_of(turn_id: str, turn_to_session: Mapping[str, str]) -> str:
    try:
        return turn_to_session[turn_id]
    except KeyError:
        raise InvalidInput(f"ranked turn {turn_id!r} has no entry in turn_to_session") from None


def session_scores_from_turns(
    ranked_turn_ids: Sequence[str],
    turn_to_session: Mapping[str, str],
    gold_sessions: Collection[str],
    k: int,
) -> SessionScores:
    """Session-level scores of a turn-level run, as LongMemEval's
    ``evaluate_retrieval_turn2session``.

    The effective cut-off grows from k until the top turns span k distinct sessions (or the
    ranking ends). Recall uses those sessions; nDCG is computed over the top effective-k turns,
    each relevant when its session is gold, against an ideal of
    ``min(effective_k, number of turns in turn_to_session whose session is gold)``, so
    *turn_to_session* must cover the whole ranked corpus (e.g. all indexed user turns).
    It gives the session each turn *counts for*: for LongMemEval's official scores that is
    :func:`kenning.bench.longmemeval_bench.official_turn_sessions`, where an answer session's
    turns without evidence count for a non-gold session.

    Raises:
        InvalidInput: ``k < 1``, ``gold_sessions`` is empty, a ranked turn id is unknown, or
            no turn of *turn_to_session* belongs to a gold session.
    """
    _check(gold_sessions, k)
    mapped = [_session_of(turn_id, turn_to_session) for turn_id in ranked_turn_ids]
    effective_k = k
    distinct = set(mapped[:effective_k])
    while effective_k <= len(mapped) and len(distinct) < k:
        effective_k += 1
        distinct = set(mapped[:effective_k])
    gold = set(gold_sessions)
    n_relevant = sum(1 for session in turn_to_session.values() if session in gold)
    if n_relevant == 0:
        raise InvalidInput("no turn in turn_to_session belongs to a gold session")
    return SessionScores(
        recall_any=recall_any_at_k(mapped, gold, effective_k),
        recall_all=recall_all_at_k(mapped, gold, effective_k),
        ndcg_any=ndcg_any_at_k(mapped, gold, effective_k, n_relevant=n_relevant),
    )


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean.

    Raises:
        InvalidInput: *values* is empty.
    """
    items = list(values)
    if not items:
        raise InvalidInput("cannot average an empty list of scores")
    return math.fsum(items) / len(items)


def mean_by_group(pairs: Iterable[tuple[K, float]]) -> dict[K, float]:
    """Mean score per group (e.g. per LoCoMo category or LongMemEval question type).

    Args:
        pairs: ``(group, score)`` pairs, one per question.

    Returns:
        Group → mean, groups in order of first appearance.

    Example:
        >>> mean_by_group([(1, 1.0), (2, 0.0), (1, 0.5)])
        {1: 0.75, 2: 0.0}
    """
    groups: dict[K, list[float]] = {}
    for group, value in pairs:
        groups.setdefault(group, []).append(value)
    return {group: mean(values) for group, values in groups.items()}


def percentiles(values: Iterable[float], qs: Sequence[float] = (50, 95, 99)) -> dict[str, float]:
    """Nearest-rank percentiles: the smallest value with at least q% of values at or below it.

    For sorted values ``v[1..n]`` the q-th percentile is ``v[max(1, ceil(q * n / 100))]``; it is
    always an observed value (no interpolation).

    Returns:
        ``{"p50": ..., "p95": ..., "p99": ...}`` (labels are ``f"p{q:g}"``).

    Raises:
        InvalidInput: *values* is empty or a q is outside ``(0, 100]``.

    Example:
        >>> percentiles([4, 1, 3, 2], qs=(50, 100))
        {'p50': 2, 'p100': 4}
    """
    ordered = sorted(values)
    if not ordered:
        raise InvalidInput("cannot take percentiles of an empty list")
    result: dict[str, float] = {}
    for q in qs:
        if not 0 < q <= 100:
            raise InvalidInput(f"percentile {q} is outside (0, 100]")
        # q * n / 100 rather than q / 100 * n: exact for integer q, so ceil does not overshoot
        rank = max(1, math.ceil(q * len(ordered) / 100))
        result[f"p{q:g}"] = ordered[rank - 1]
    return result
