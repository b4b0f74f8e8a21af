"""``kenning bench longmemeval``: retrieval on LongMemEval with the official metrics.

Official retrieval protocol (LongMemEval's ``run_retrieval.py`` / ``eval_utils.py``): only user
turns are indexed; a turn's id is ``f"{session_id}_{i + 1}"`` with ``i`` counting every turn of
its session. Each question is retrieved over its own haystack alone, as in the official code:
one kenning tenant per question, so BM25 statistics (document frequencies, lengths) and session
scores come from that haystack only and never depend on which other questions the file holds.
One kenning session per haystack session, timestamps from ``haystack_dates``; searches pass
``now=question_date``. Sessions repeat across questions with identical content; the bench
memoises vectors by text, so a text shared by several haystacks is computed once (the store
asks for it once per tenant), and the report counts both.

Every system ranks the question's user turns; turn metrics compare that ranking with the gold
user turns, session metrics map it to sessions the official way
(:func:`official_turn_sessions`, :func:`~kenning.bench.metrics.session_scores_from_turns`): a
user turn of an answer session that holds no evidence counts for a different, non-gold session
("noans" in the official ids), so ranking the answer session's other turns first earns nothing.
Averages skip abstention questions and questions with no user-side evidence (as the data notes
define the official averages); the looser "session recall_any@5 over all questions", which
maps every turn to its real session, is reported too, labelled. Questions are split into a
tuning and a validation part, halves stratified by question type (:mod:`kenning.bench.split`);
a run over both reports each part too. Nothing here reads ids, names or answers of a particular
split.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.bench.datasets import LMEQuestion, Turn, load_longmemeval
from kenning.bench.harness import (
    DATASET_SYSTEMS,
    DEFAULT_K,
    TURNS,
    BenchStores,
    Run,
    ingest_rows,
    safe_id,
    timed_search,
)
from kenning.bench.metrics import (
    mean,
    ndcg_any_at_k,
    percentiles,
    recall_all_at_k,
    recall_any_at_k,
    session_scores_from_turns,
    sessions_from_turns,
)
from kenning.bench.report import longmemeval_markdown, write_rankings, write_report
from kenning.bench.split import PARTS, Part, in_part, split_by_stride
from kenning.bench.vector_cache import embedded_texts
from kenning.embed.base import DelegatingEmbedder, Embedder, Matrix
from kenning.records import Event, NewEvent, Scope
from kenning.settings import Settings
from kenning.tokens.base import Tokenizer
from kenning.tokens.routing import tokenizer_for

__all__ = [
    "LME_KS",
    "MISS_REASONS",
    "NOANS",
    "complete_ranking",
    "longmemeval_parts",
    "miss_reasons",
    "official_turn_sessions",
    "run_longmemeval_bench",
    "score_longmemeval",
    "tenant_of",
]

LME_KS = (1, 3, 5, 10, 30, 50)
"""The cut-offs of the official retrieval metrics."""

TENANT_PREFIX = "lme-"
USER = "user"
TOKEN_MODEL = "gpt-4o"
LOOSE_KEY = "session_recall_any@5_all_questions"
WARM_UP = "warm up"


class _MemoEmbedder(DelegatingEmbedder):
    """Delegates to an embedder, computing each distinct text once; counts texts asked for and
    texts computed. Vectors are the model's own, so results equal an uncached run."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.requested = 0
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}

    @property
    def computed(self) -> int:
        return len(self._vectors)

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.requested += len(texts)
        new = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if new:
            for text, vector in zip(new, self.inner.embed(new), strict=True):
                self._vectors[text] = vector
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])


def longmemeval_parts(questions: Sequence[LMEQuestion]) -> dict[str, str]:
    """Question id → ``"tuning"`` or ``"validation"`` (alternating within each question type)."""
    parts = split_by_stride([q.question_type for q in questions])
    return {q.id: part for q, part in zip(questions, parts, strict=True)}


def tenant_of(question: LMEQuestion) -> str:
    """The kenning tenant holding *question*'s haystack (one per question)."""
    return f"{TENANT_PREFIX}{safe_id(question.id)}"


def _indexable(turn: Turn) -> bool:
    """User turns are indexed (official protocol); kenning refuses an empty one, so it is left
    out (the published files have a few)."""
    return turn.role == "user" and bool(turn.text.strip())


def _rows(question: LMEQuestion) -> list[tuple[Scope, NewEvent]]:
    tenant = tenant_of(question)
    rows = []
    for session in question.sessions:
        scope = Scope(tenant, USER, safe_id(session.id))
        for turn in session.turns:
            if not _indexable(turn):
                continue
            rows.append(
                (
                    scope,
                    NewEvent(
                        "user",
                        turn.text,
                        at=turn.at,
                        metadata={"speaker": "user", "turn_id": turn.id,
                                  "lme_session": session.id},
                    ),
                )
            )  # fmt: skip
    return rows


def _user_turn_sessions(question: LMEQuestion) -> dict[str, str]:
    """Every indexed (user) turn id of the question's haystack → its session id."""
    return {
        turn.id: session.id
        for session in question.sessions
        for turn in session.turns
        if _indexable(turn)
    }


def _scored(question: LMEQuestion) -> bool:
    return not question.abstention and not question.no_user_evidence


NOANS = "noans:"
"""Prefix of the session a non-evidence turn of an answer session counts for when scored."""


def official_turn_sessions(
    question: LMEQuestion, turn_to_session: Mapping[str, str]
) -> dict[str, str]:
    """Each indexed user turn → the session it counts for under the official scorer.

    LongMemEval's ``run_retrieval.py`` gives a user turn of an answer session that lacks
    ``has_answer`` the id ``f"{session_id}_{i + 1}"`` with ``answer`` replaced by ``noans``, so
    when ranked turns are mapped to sessions it lands in a session that is not gold. Here such
    a turn maps to ``NOANS + session_id``. An answer session is one listed in
    ``answer_session_ids`` (the official code tests for ``answer`` in the session id; the two
    agree in the published files). Every other turn maps to its own session.

    Example:
        A turn ``"answer_a_3"`` of answer session ``"answer_a"`` without ``has_answer`` maps
        to ``"noans:answer_a"``; the evidence turn ``"answer_a_1"`` to ``"answer_a"``.
    """
    return {
        turn: session
        if session not in question.answer_session_ids or turn in question.evidence_turns
        else f"{NOANS}{session}"
        for turn, session in turn_to_session.items()
    }


MISS_SESSION_K = 5
MISS_TURN_K = 10
MISS_REASONS = {
    "session": ("more_gold_than_k", "crowded_out", "not_reached"),
    "turn": ("more_gold_than_k", "outranked_in_session", "session_not_reached"),
}
"""Why a question misses official session recall_all@5 or turn recall_all@10 (see
:func:`miss_reasons`)."""


def miss_reasons(
    question: LMEQuestion, ranking: Sequence[str], turn_to_session: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """Why *question* misses session recall_all@5 and turn recall_all@10 (None: no miss).

    *ranking* is complete (:func:`complete_ranking`); *turn_to_session* maps each indexed turn
    to its real session. A session-level miss is ``more_gold_than_k`` (more gold sessions than
    five: no ranking reaches them all), ``crowded_out`` (every gold session is among the first
    five sessions the ranking reaches, but turns of those sessions that hold no answer come
    first and count for other sessions under the official rule, pushing a gold session past
    five), or ``not_reached``. A turn-level miss is ``more_gold_than_k``,
    ``outranked_in_session`` (each gold turn missing from the top ten is passed by another turn
    of its own session, which is there), or ``session_not_reached``.
    """
    session_miss = turn_miss = None
    gold_sessions = question.evidence_sessions
    official = official_turn_sessions(question, turn_to_session)
    k = MISS_SESSION_K
    if not gold_sessions <= set(sessions_from_turns(ranking, official, k)):
        if len(gold_sessions) > k:
            session_miss = "more_gold_than_k"
        elif gold_sessions <= set(sessions_from_turns(ranking, turn_to_session, k)):
            session_miss = "crowded_out"
        else:
            session_miss = "not_reached"
    top = ranking[:MISS_TURN_K]
    missing = question.evidence_turns - set(top)
    if missing:
        if len(question.evidence_turns) > MISS_TURN_K:
            turn_miss = "more_gold_than_k"
        elif {turn_to_session[t] for t in missing} <= {turn_to_session[t] for t in top}:
            turn_miss = "outranked_in_session"
        else:
            turn_miss = "session_not_reached"
    return session_miss, turn_miss


def complete_ranking(ranking: Sequence[str], turn_to_session: Mapping[str, str]) -> list[str]:
    """*ranking* followed by the indexed turns it left out, in haystack order.

    The official scorer ranks every turn of the corpus (BM25 ranks non-matching turns last),
    so the effective k of session scoring can grow past the turns a system returned; a system
    that returns fewer turns (BM25 returns only turns sharing a word with the question) is
    completed the same way.
    """
    seen = set(ranking)
    return [*ranking, *(turn for turn in turn_to_session if turn not in seen)]


def score_longmemeval(
    questions: Sequence[LMEQuestion],
    rankings: Sequence[Sequence[str]],
    turn_to_session: Sequence[Mapping[str, str]],
) -> dict[str, Any]:
    """Official LongMemEval retrieval metrics of one system: overall and per question type.

    Args:
        questions: The questions, in run order.
        rankings: Per question, the ranked user-turn ids (best first); turns left out are
            appended in haystack order (:func:`complete_ranking`).
        turn_to_session: Per question, every indexed user turn id → its (real) session id.
            Session metrics use :func:`official_turn_sessions` of it; the loose metric the real
            sessions.

    Returns:
        ``{"questions", "turn": {recall_any@k, recall_all@k, ndcg_any@k}, "session": {…},
        "by_type": {type: {"questions", "turn", "session"}}, "misses", LOOSE_KEY,
        "loose_questions"}``; averages skip abstention questions and questions with no
        user-side evidence. ``misses`` counts the scored questions that miss session
        recall_all@5 and turn recall_all@10 by reason (:func:`miss_reasons`).
    """
    per_question: list[tuple[str, dict[str, float]]] = []
    loose: list[float] = []
    misses = {level: dict.fromkeys(reasons, 0) for level, reasons in MISS_REASONS.items()}
    for question, given, mapping in zip(questions, rankings, turn_to_session, strict=True):
        ranking = complete_ranking(given, mapping)
        gold_loose = frozenset(question.answer_session_ids & set(mapping.values()))
        if gold_loose:
            top = sessions_from_turns(ranking, mapping, 5)
            loose.append(recall_any_at_k(top, gold_loose, 5))
        if not _scored(question):
            continue
        scores: dict[str, float] = {}
        gold_turns = question.evidence_turns
        official = official_turn_sessions(question, mapping)
        for k in LME_KS:
            scores[f"t_recall_any@{k}"] = recall_any_at_k(ranking, gold_turns, k)
            scores[f"t_recall_all@{k}"] = recall_all_at_k(ranking, gold_turns, k)
            scores[f"t_ndcg_any@{k}"] = ndcg_any_at_k(ranking, gold_turns, k)
            s = session_scores_from_turns(ranking, official, question.evidence_sessions, k)
            scores[f"s_recall_any@{k}"] = s.recall_any
            scores[f"s_recall_all@{k}"] = s.recall_all
            scores[f"s_ndcg_any@{k}"] = s.ndcg_any
        per_question.append((question.question_type, scores))
        reasons = miss_reasons(question, ranking, mapping)
        for missed, reason in zip(misses.values(), reasons, strict=True):
            if reason is not None:
                missed[reason] += 1

    def level(rows: list[dict[str, float]], prefix: str) -> dict[str, float]:
        return {
            f"{metric}@{k}": mean(r[f"{prefix}{metric}@{k}"] for r in rows)
            for metric in ("recall_any", "recall_all", "ndcg_any")
            for k in LME_KS
        }

    def summary(rows: list[dict[str, float]]) -> dict[str, Any]:
        if not rows:
            return {"questions": 0, "turn": {}, "session": {}}
        return {"questions": len(rows), "turn": level(rows, "t_"), "session": level(rows, "s_")}

    out = summary([s for _, s in per_question])
    types = dict.fromkeys(t for t, _ in per_question)
    out["by_type"] = {t: summary([s for qt, s in per_question if qt == t]) for t in sorted(types)}
    out["misses"] = misses
    out[LOOSE_KEY] = mean(loose) if loose else 0.0
    out["loose_questions"] = len(loose)
    return out


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def run_longmemeval_bench(
    data: Path, out: Path, *, embedder: Embedder, settings: Settings | None = None,
    limit: int | None = None, part: Part = "all", progress: bool = True, plots: bool = True,
    store_url: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run every system over the LongMemEval file *data*; write report.json, report.md, plots.

    The data is a temporary SQLite file, or the PostgreSQL database *store_url* (its bench
    tenant is erased first); see :class:`~kenning.bench.harness.BenchStores`.

    Args:
        data: A LongMemEval file (``.json`` or ``.json.gz``, S, M or oracle).
        out: Directory for the reports (created).
        embedder: The embedding model shared by every system.
        settings: Base settings of kenning (default: ``Settings()``); ``bm25`` and ``vector``
            switch one signal off. ``max_content_chars`` is raised to the longest user turn if
            a turn exceeds it (reported).
        limit: Only the first *limit* questions of the file (before the part is taken).
        part: Only the tuning or validation questions; ``"all"`` runs both and reports each
            part beside the whole (``report["parts"]``).
        progress: Show progress bars.
        plots: Write PNG plots next to the reports.

    Returns:
        The report as written to ``report.json``; per-question rankings of every system go to
        ``rankings.json``.
    """
    from tqdm import tqdm

    started = time.perf_counter()
    questions = load_longmemeval(data)
    if limit is not None:
        questions = questions[:limit]
    part_of = longmemeval_parts(questions)
    questions = [q for q in questions if in_part(part_of[q.id], part)]
    base = settings or Settings()
    rows = [row for question in questions for row in _rows(question)]
    longest = max((len(event.content) for _, event in rows), default=0)
    raised = longest > base.max_content_chars
    if raised:
        base = replace(base, max_content_chars=longest)
    for _, new_event in rows:
        # Fail on bad input now rather than after minutes of embedding.
        new_event.validated(max_chars=base.max_content_chars)
    empty = sum(
        1
        for question in questions
        for turn in question.turns
        if turn.role == "user" and not turn.text.strip()
    )
    tokenizer = tokenizer_for(TOKEN_MODEL)
    counting = _MemoEmbedder(embedder)
    stores = BenchStores(store_url, [tenant_of(q) for q in questions])
    memories = {name: stores.memory(name, counting, base) for name in DATASET_SYSTEMS}
    with tqdm(total=len(rows), unit="turn", desc="ingest", disable=not progress) as bar:
        events, ingest_rate = ingest_rows(
            memories["kenning"], rows, batch=2048, progress=bar.update
        )
    facts = sum(len(memories["kenning"].facts.list(Scope(tenant_of(q), USER))) for q in questions)
    requested_at_ingest, computed_at_ingest = counting.requested, counting.computed
    distinct_texts = len(embedded_texts(rows, base))
    turn_of = {e.id: str(e.metadata["turn_id"]) for e in events}
    newest_first: dict[str, list[Event]] = {}
    for event in events:
        newest_first.setdefault(event.scope.tenant, []).append(event)
    for user_events in newest_first.values():
        user_events.sort(key=lambda e: (e.at, e.scope.session or "", e.seq), reverse=True)
    mappings = [_user_turn_sessions(question) for question in questions]
    full_tokens, user_tokens = _full_context_tokens(questions, tokenizer)

    # The first search of a store loads its in-memory indexes; timed once, apart from the rest.
    first_ms: dict[str, float] = {}
    if questions:
        for name in DATASET_SYSTEMS:
            _, first_ms[name], _ = timed_search(
                memories[name],
                Scope(tenant_of(questions[0])),
                questions[0].text,
                k=DEFAULT_K,
                tokenizer=tokenizer,
            )

    run = Run()
    depths: list[int] = []
    overlap: dict[str, list[float]] = {}
    embed_ms: list[float] = []
    for question in tqdm(questions, unit="q", desc="questions", disable=not progress):
        scope = Scope(tenant_of(question))
        history = newest_first.get(scope.tenant, [])
        depth = max(1, min(base.max_k, len(history)))
        depths.append(depth)
        kenning_block = 0
        # Each question is its own tenant: its first search loads the tenant's in-memory
        # indexes. An agent's tenant is loaded once and then searched many times, so the load
        # is paid here, untimed, with a query none of the systems is then asked. Systems with
        # different reply weights search different stores: each store is warmed.
        for name in DATASET_SYSTEMS:
            memories[name].search(scope, WARM_UP, k=1)
        # The systems share one memoising embedder: whichever ran first would pay for the
        # question's embedding alone. It is computed here, timed apart, so no system pays.
        started = time.perf_counter()
        counting.embed([question.text])
        embed_ms.append((time.perf_counter() - started) * 1000)
        for name in DATASET_SYSTEMS:
            # The timed call is the one an agent makes (k = DEFAULT_K); the deep call ranks
            # enough turns to score k = 50 at session level.
            hits, ms, block = timed_search(
                memories[name],
                scope,
                question.text,
                k=DEFAULT_K,
                tokenizer=tokenizer,
                now=question.question_date,
            )
            deep = memories[name].search(
                scope, question.text, k=depth, now=question.question_date, kinds=TURNS
            )
            ranking = [turn_of[h.id] for h in deep]
            run.record(name, ranking, ms, block)
            top = {h.id for h in hits[:DEFAULT_K]}
            if top:
                agree = len(top & {h.id for h in deep.hits[:DEFAULT_K]}) / len(top)
                overlap.setdefault(name, []).append(agree)
            if name == "kenning":
                kenning_block = block
        # The recency baseline ranks newest first; its window gets kenning's token budget.
        gold = question.evidence_turns if _scored(question) else frozenset()
        run.record_window(history, history, gold, dataset_ids=turn_of, budget=kenning_block,
                          tokenizer=tokenizer)  # fmt: skip

    scored = [q for q in questions if _scored(q)]
    report: dict[str, Any] = {
        "dataset": "longmemeval",
        "data": str(data),
        "part": part,
        "questions": len(questions),
        "scored_questions": len(scored),
        "abstention_questions": sum(1 for q in questions if q.abstention),
        "no_user_evidence_questions": sum(
            1 for q in questions if q.no_user_evidence and not q.abstention
        ),
        "question_types": {
            t: sum(1 for q in scored if q.question_type == t)
            for t in sorted({q.question_type for q in scored})
        },
        "haystack_sessions": sum(len(q.sessions) for q in questions),
        "turns": len(rows),
        "empty_user_turns_skipped": empty,
        "ks": list(LME_KS),
        "default_k": DEFAULT_K,
        "search_depth": {"mean": mean(depths) if depths else 0.0, "max": max(depths, default=0)},
        "token_model": TOKEN_MODEL,
        "settings": {
            "embed_text": base.embed_text,
            "fusion": base.fusion.method,
            "fusion_config": asdict(base.fusion),
            "embed_context": base.embed_context,
            "max_content_chars": base.max_content_chars,
            "max_content_chars_raised": raised,
        },
        "embedding": {
            "indexed_turns": len(rows),
            "distinct_texts": distinct_texts,
            "texts_requested_at_ingest": requested_at_ingest,
            "texts_computed_at_ingest": computed_at_ingest,
        },
        "facts_extracted": facts,
        "query_embedding_ms": percentiles(embed_ms) if embed_ms else {},
        "systems": {},
    }
    for name in (*DATASET_SYSTEMS, "recent_window"):
        entry = run.scored(name, score_longmemeval(questions, run.rankings[name], mappings))
        if name in run.search_ms:
            entry["first_search_ms"] = first_ms[name]
            entry["ingest_events_per_s"] = ingest_rate
            if overlap.get(name):
                entry["top_k_agreement_default_vs_deep"] = mean(overlap[name])
        else:
            entry["window"] = {
                "turns_mean": mean(run.window_turns),
                "evidence_recall_in_budget": mean(run.window_recall) if run.window_recall else 0.0,
            }
        report["systems"][name] = entry
    if part == "all":
        report["parts"] = {}
        for p in PARTS:
            chosen = [i for i, q in enumerate(questions) if part_of[q.id] == p]
            report["parts"][p] = {
                name: score_longmemeval(
                    [questions[i] for i in chosen],
                    [run.rankings[name][i] for i in chosen],
                    [mappings[i] for i in chosen],
                )
                for name in (*DATASET_SYSTEMS, "recent_window")
            }
    report["full_context_tokens"] = {"mean": mean(full_tokens), "user_turns_mean": mean(
        user_tokens)}  # fmt: skip
    report["bench_seconds"] = round(time.perf_counter() - started, 1)
    curves = (
        {name: {k: s["session"][f"recall_all@{k}"] for k in LME_KS}
         for name, s in report["systems"].items()}
        if scored else {}
    )  # fmt: skip
    write_report(out, report, longmemeval_markdown(report), plots=plots, run=run,
                 curves=curves, curve_label="session recall_all@k")  # fmt: skip
    write_rankings(out, [q.id for q in questions], run)
    for memory in memories.values():
        memory.close()
    stores.close()
    return report


def _full_context_tokens(
    questions: Sequence[LMEQuestion], tokenizer: Tokenizer
) -> tuple[list[int], list[int]]:
    """Tokens of each whole haystack (every turn) and of its user turns, counted once per text."""
    cache: dict[str, int] = {}

    def count(text: str) -> int:
        key = _digest(text)
        found = cache.get(key)
        if found is None:
            found = cache[key] = tokenizer.count(text)
        return found

    full, user = [], []
    for question in questions:
        full.append(sum(count("\n".join(f"{t.role}: {t.text}" for t in s.turns))
                        for s in question.sessions))  # fmt: skip
        user.append(sum(count("\n".join(f"user: {t.text}" for t in s.turns if t.role == "user"))
                        for s in question.sessions))  # fmt: skip
    return full, user
