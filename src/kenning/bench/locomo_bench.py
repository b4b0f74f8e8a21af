"""``kenning bench locomo``: retrieval on LoCoMo with the paper's metrics, against baselines.

One scope per conversation (tenant ``locomo``, user = conversation, one kenning session per
LoCoMo session), timestamps and speakers from the dataset, image captions kept in the turn
text. LoCoMo questions are undated and asked after the conversation, so each search passes
``now`` = the time of the conversation's last turn (:func:`conversation_now`): "in June" or
"four years ago" then mean what they meant to the speakers, not the wall clock. Searches
record no access (see :func:`~kenning.bench.harness.settings_for`), so one question's results
never lift the next one's. Every system ranks turns for each question; session metrics map
ranked turns to their sessions. Conversations are split into a tuning and a validation part
(:mod:`kenning.bench.split`); a run over both reports each part too. Nothing here reads ids,
names or answers of a particular split.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from kenning.bench.datasets import LOCOMO_CATEGORIES, Conversation, Question, load_locomo
from kenning.bench.harness import (
    DATASET_SYSTEMS,
    DEFAULT_K,
    BenchStores,
    Run,
    ingest_rows,
    own_search_ms,
    safe_id,
    timed_search,
)
from kenning.bench.metrics import (
    mean,
    ndcg_any_at_k,
    percentiles,
    recall_any_at_k,
    recall_fraction_at_k,
    sessions_from_turns,
)
from kenning.bench.report import locomo_markdown, write_rankings, write_report
from kenning.bench.split import PARTS, Part, in_part, split_by_stride
from kenning.embed.base import Embedder
from kenning.records import NewEvent, Scope
from kenning.settings import Settings
from kenning.tokens.routing import tokenizer_for

__all__ = ["TURN_KS", "conversation_now", "locomo_parts", "run_locomo_bench", "score_locomo"]

TURN_KS = (5, 10, 25)
SESSION_KS = (1, 5, 10)
SEARCH_DEPTH = 100
TENANT = "locomo"
TOKEN_MODEL = "gpt-4o"


def conversation_now(conv: Conversation) -> datetime:
    """When questions about *conv* are asked: the time of its last turn (its last session)."""
    return max(turn.at for turn in conv.turns)


def locomo_parts(conversations: Sequence[Conversation]) -> dict[str, str]:
    """Conversation id → ``"tuning"`` or ``"validation"`` (alternating in file order)."""
    parts = split_by_stride([0] * len(conversations))
    return {conv.id: part for conv, part in zip(conversations, parts, strict=True)}


def _rows(conv: Conversation) -> list[tuple[Scope, NewEvent]]:
    user = safe_id(conv.id)
    rows = []
    for session in conv.sessions:
        scope = Scope(TENANT, user, safe_id(f"{conv.id}-{session.id}"))
        for turn in session.turns:
            rows.append(
                (
                    scope,
                    NewEvent(
                        turn.role,
                        turn.text,
                        at=turn.at,
                        metadata={"speaker": turn.speaker, "dia_id": turn.id,
                                  "locomo_session": session.id},
                    ),
                )
            )  # fmt: skip
    return rows


def score_locomo(
    questions: Sequence[Question],
    rankings: Sequence[Sequence[str]],
    turn_to_session: dict[str, dict[str, str]],
) -> dict[str, Any]:
    """LoCoMo metrics of one system: overall and per category."""
    per_question: list[tuple[int, dict[str, float]]] = []
    for question, ranking in zip(questions, rankings, strict=True):
        if not question.evidence_turns:
            continue
        mapping = turn_to_session[question.conversation_id]
        scores = {f"recall@{k}": recall_fraction_at_k(ranking, question.evidence_turns, k)
                  for k in TURN_KS}  # fmt: skip
        sessions = sessions_from_turns(ranking, mapping, max(SESSION_KS))
        for k in SESSION_KS:
            scores[f"s_recall_any@{k}"] = recall_any_at_k(sessions, question.evidence_sessions, k)
        scores["s_ndcg@5"] = ndcg_any_at_k(
            sessions, question.evidence_sessions, 5, discount="standard"
        )
        per_question.append((question.category, scores))

    def summary(rows: list[dict[str, float]]) -> dict[str, Any]:
        if not rows:  # e.g. a part with no conversation
            return {"questions": 0, "turn": {}, "session": {}}
        return {
            "questions": len(rows),
            "turn": {f"recall@{k}": mean(r[f"recall@{k}"] for r in rows) for k in TURN_KS},
            "session": {
                **{f"recall_any@{k}": mean(r[f"s_recall_any@{k}"] for r in rows)
                   for k in SESSION_KS},
                "ndcg@5": mean(r["s_ndcg@5"] for r in rows),
            },
        }  # fmt: skip

    out = summary([s for _, s in per_question])
    out["by_category"] = {
        f"{cat} {LOCOMO_CATEGORIES[cat]}": summary([s for c, s in per_question if c == cat])
        for cat in sorted({c for c, _ in per_question})
    }
    return out


def run_locomo_bench(
    data: Path, out: Path, *, embedder: Embedder, settings: Settings | None = None,
    part: Part = "all", progress: bool = True, plots: bool = True, store_url: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run every system over the LoCoMo file *data*; write report.json, report.md and plots.

    *part* restricts the run to the tuning or validation conversations; ``"all"`` runs both
    and reports each part beside the whole (``report["parts"]``). Per-question rankings of
    every system go to ``rankings.json`` beside the reports. The data is a temporary SQLite
    file, or the PostgreSQL database *store_url* (its bench tenant is erased first); see
    :class:`~kenning.bench.harness.BenchStores`.
    """
    from tqdm import tqdm

    started = time.perf_counter()
    conversations, questions = load_locomo(data)
    part_of = locomo_parts(conversations)
    conversations = [c for c in conversations if in_part(part_of[c.id], part)]
    questions = [q for q in questions if in_part(part_of[q.conversation_id], part)]
    now_of = {conv.id: conversation_now(conv) for conv in conversations}
    tokenizer = tokenizer_for(TOKEN_MODEL)
    stores = BenchStores(store_url, [TENANT])
    memories = {name: stores.memory(name, embedder, settings) for name in DATASET_SYSTEMS}
    rows = [row for conv in conversations for row in _rows(conv)]
    with tqdm(total=len(rows), unit="turn", desc="ingest", disable=not progress) as bar:
        events, ingest_rate = ingest_rows(memories["kenning"], rows, progress=bar.update)
    dia_of = {e.id: str(e.metadata["dia_id"]) for e in events}
    facts = sum(
        len(memories["kenning"].facts.list(Scope(TENANT, user)))
        for user in {e.scope.user for e in events if e.scope.user is not None}
    )
    newest_first: dict[str, list[Any]] = {}
    for event in events:
        assert event.scope.user is not None
        newest_first.setdefault(event.scope.user, []).append(event)
    for user_events in newest_first.values():
        user_events.sort(key=lambda e: (e.at, e.scope.session, e.seq), reverse=True)
    full_tokens = {
        user: tokenizer.count("\n".join(f"{e.metadata['speaker']}: {e.content}"
                                        for e in reversed(evs)))
        for user, evs in newest_first.items()
    }  # fmt: skip
    turn_to_session = {c.id: c.turn_to_session() for c in conversations}

    run = Run()
    for question in tqdm(questions, unit="q", desc="questions", disable=not progress):
        user = safe_id(question.conversation_id)
        scope = Scope(TENANT, user)
        kenning_block = 0
        for name in DATASET_SYSTEMS:
            hits, ms, block = timed_search(
                memories[name], scope, question.text, k=SEARCH_DEPTH, tokenizer=tokenizer,
                now=now_of[question.conversation_id],
            )  # fmt: skip
            run.record(name, [dia_of[h.id] for h in hits], ms, block)
            run.own_ms.setdefault(name, []).append(
                own_search_ms(memories[name], scope, question.text,
                              now=now_of[question.conversation_id])
            )  # fmt: skip
            if name == "kenning":
                kenning_block = block
        # The recency baseline ranks newest first; its window gets kenning's token budget.
        history = newest_first[user]
        run.record_window(
            history, history[:SEARCH_DEPTH], question.evidence_turns, dataset_ids=dia_of,
            budget=kenning_block, tokenizer=tokenizer,
        )  # fmt: skip

    report: dict[str, Any] = {
        "dataset": "locomo",
        "data": str(data),
        "part": part,
        "conversations_by_part": {
            p: sorted(c for c, q in part_of.items() if q == p) for p in PARTS
        },
        "questions": len(questions),
        "scored_questions": sum(1 for q in questions if q.evidence_turns),
        "conversations": len(conversations),
        "turns": len(rows),
        "default_k": DEFAULT_K,
        "token_model": TOKEN_MODEL,
        "settings": {
            "embed_text": (settings or Settings()).embed_text,
            "fusion": (settings or Settings()).fusion.method,
            "fusion_config": asdict((settings or Settings()).fusion),
        },
        "facts_extracted": facts,
        "systems": {},
    }
    for name in (*DATASET_SYSTEMS, "recent_window"):
        entry = run.scored(name, score_locomo(questions, run.rankings[name], turn_to_session))
        if name in run.search_ms:
            entry["own_search_ms_k10"] = percentiles(run.own_ms[name])
            entry["ingest_events_per_s"] = ingest_rate
        else:
            entry["window"] = {"turns_mean": mean(run.window_turns),
                               "evidence_recall_in_budget": mean(run.window_recall)}  # fmt: skip
        report["systems"][name] = entry
    if part == "all":
        report["parts"] = {
            p: {
                name: score_locomo(
                    [q for q in questions if part_of[q.conversation_id] == p],
                    [r for q, r in zip(questions, run.rankings[name], strict=True)
                     if part_of[q.conversation_id] == p],
                    turn_to_session,
                )
                for name in (*DATASET_SYSTEMS, "recent_window")
            }
            for p in PARTS
        }  # fmt: skip
    report["full_context_tokens"] = {"mean": mean(full_tokens[safe_id(q.conversation_id)]
                                                  for q in questions)}  # fmt: skip
    report["bench_seconds"] = round(time.perf_counter() - started, 1)
    curves = {
        name: {k: mean(recall_fraction_at_k(r, q.evidence_turns, k)
                       for q, r in zip(questions, run.rankings[name], strict=True)
                       if q.evidence_turns)
               for k in (1, 2, 3, 5, 10, 15, 25, 50)}
        for name in run.rankings
    }  # fmt: skip
    write_report(out, report, locomo_markdown(report), plots=plots, run=run, curves=curves,
                 curve_label="turn recall@k")  # fmt: skip
    write_rankings(out, [q.id for q in questions], run)
    stores.close()
    return report
