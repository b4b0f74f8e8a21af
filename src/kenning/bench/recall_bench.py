"""``kenning bench recall``: can the memory hand back a fact mentioned once, asked in other words?

Each seeded conversation (:mod:`kenning.bench.recall_suite`) is ingested through the public API
(one scope per conversation); each planted fact is then asked about once. A question counts as
answered by retrieval when the fact reaches what the system would hand the model:

- ``kenning``, ``bm25``, ``vector``: the fact's turn is among the top 5 hits of
  ``Memory.search`` (the default path, or one signal alone);
- ``sliding_window``: the fact's turn is among the most recent turns (plain ``role: text``
  lines) that fit the same token budget as kenning's top-5 block for that question;
- ``summary_only``: the fact's value is in a deterministic extractive summary of the
  conversation under that budget (:func:`extractive_summary`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from kenning.bench.harness import (
    SEARCH_SYSTEMS,
    TURNS,
    BenchStores,
    format_memory_block,
    ingest_rows,
)
from kenning.bench.metrics import mean, percentiles
from kenning.bench.recall_suite import RecallConversation, RecallTurn, generate_conversation
from kenning.bench.report import recall_markdown, write_files
from kenning.embed.base import Embedder
from kenning.memory import Memory
from kenning.records import Event, NewEvent, Scope
from kenning.settings import Settings
from kenning.tokens.base import Tokenizer
from kenning.tokens.routing import tokenizer_for

__all__ = [
    "RECALL_K",
    "SUMMARY_METHOD",
    "extractive_summary",
    "run_recall_bench",
    "sliding_window",
]

RECALL_K = 5
TENANT = "recall"
TOKEN_MODEL = "gpt-4o"
SUMMARY_HEADER = "Summary of the conversation so far:"
SUMMARY_METHOD = (
    "an extractive summary: the first sentence of each user turn, oldest first, one line each "
    "under a header, kept until the next line would exceed the token budget."
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def extractive_summary(user_turns: Sequence[str], budget: int, tokenizer: Tokenizer) -> str:
    """The summary-only baseline: first sentences of user turns, oldest first, within *budget*.

    The header and one ``- sentence`` line per user turn are counted; the summary stops at the
    first line that would not fit. Deterministic, no model.

    Example::

        extractive_summary(["I parked on level 3. It was busy.", "Hi!"], 40, tokenizer)
    """
    lines = [SUMMARY_HEADER]
    used = tokenizer.count(SUMMARY_HEADER)
    for text in user_turns:
        first = _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
        line = f"- {first}"
        cost = tokenizer.count(line) + 1
        if used + cost > budget:
            break
        used += cost
        lines.append(line)
    return "\n".join(lines)


def sliding_window(turns: Sequence[RecallTurn], budget: int, tokenizer: Tokenizer) -> list[int]:
    """The sliding-window baseline: indexes of the most recent turns, as plain ``role: text``
    lines (no citation overhead), that fit in *budget* tokens."""
    used = 0
    kept: list[int] = []
    for index in range(len(turns) - 1, -1, -1):
        cost = tokenizer.count(f"{turns[index].role}: {turns[index].text}") + 1
        if used + cost > budget:
            break
        used += cost
        kept.append(index)
    return kept


def _ingest(memory: Memory, conversation: RecallConversation) -> tuple[Scope, list[Event]]:
    scope = Scope(TENANT, f"conv-{conversation.seed}", f"conv-{conversation.seed}-s1")
    rows = [(scope, NewEvent(t.role, t.text, at=t.at)) for t in conversation.turns]
    events, _ = ingest_rows(memory, rows)
    return scope, events


def run_recall_bench(
    out: Path,
    *,
    embedder: Embedder,
    seed: int = 0,
    conversations: int = 10,
    settings: Settings | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the recall suite over *conversations* seeds from *seed*; write report.json and .md.

    Returns:
        ``{"suite": "recall", "systems": {name: {"recall@5": mean, "per_seed": [...]}}, ...}``.
    """
    from tqdm import tqdm

    started = time.perf_counter()
    tokenizer = tokenizer_for(TOKEN_MODEL)
    stores = BenchStores(None, [TENANT])
    memories = {name: stores.memory(name, embedder, settings) for name in SEARCH_SYSTEMS}
    names = ("sliding_window", "summary_only", "vector", "bm25", "kenning")
    per_seed: dict[str, list[float]] = {name: [] for name in names}
    budgets: list[int] = []
    seeds = list(range(seed, seed + conversations))
    for current in tqdm(seeds, unit="conv", desc="recall", disable=not progress):
        conversation = generate_conversation(current)
        scope, events = _ingest(memories["kenning"], conversation)
        ids = [e.id for e in events]
        user_turns = [t.text for t in conversation.turns if t.role == "user"]
        now = conversation.turns[-1].at + timedelta(minutes=1)
        found: dict[str, list[bool]] = {name: [] for name in names}
        for fact in conversation.facts:
            wanted = ids[fact.turn]
            budget = 0
            for name in SEARCH_SYSTEMS:
                hits = memories[name].search(scope, fact.question, k=RECALL_K, now=now, kinds=TURNS)
                found[name].append(wanted in {h.id for h in hits})
                if name == "kenning":
                    # The other systems get the tokens of kenning's top-k block.
                    budget = tokenizer.count(format_memory_block(hits.hits))
            budgets.append(budget)
            window = sliding_window(conversation.turns, budget, tokenizer)
            found["sliding_window"].append(fact.turn in window)
            summary = extractive_summary(user_turns, budget, tokenizer)
            found["summary_only"].append(fact.value in summary)
        for name in names:
            per_seed[name].append(mean(float(x) for x in found[name]))
    for memory in memories.values():
        memory.close()
    stores.close()

    report: dict[str, Any] = {
        "suite": "recall",
        "seeds": seeds,
        "conversations": conversations,
        "turns_per_conversation": len(generate_conversation(seed).turns),
        "facts_per_conversation": len(generate_conversation(seed).facts),
        "k": RECALL_K,
        "token_model": TOKEN_MODEL,
        "budget_tokens": {"mean": mean(budgets), "p95": percentiles(budgets)["p95"]},
        "summary_method": SUMMARY_METHOD,
        "systems": {
            name: {f"recall@{RECALL_K}": mean(per_seed[name]), "per_seed": per_seed[name]}
            for name in names
        },
        "bench_seconds": round(time.perf_counter() - started, 1),
    }
    write_files(out, report, recall_markdown(report))
    return report
