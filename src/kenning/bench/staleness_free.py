"""The free-text part of ``kenning bench staleness``: conversations written in everyday language.

The set (``kenning/bench/data/staleness_free/``, written by hand for kenning) holds users'
sessions of chat with values that change (moves, jobs, diet, family, preferences, devices,
contact details), withdrawals in many wordings, distractors that must change nothing (another
person's move, plans, questions, stories of the past), and histories imported out of order.
Each conversation ends in probes: a question, the current value's names, the stale ones.

Two measures, each on the tuning and the held-out part (tuning: the conversation id's SHA-256,
read as one integer, modulo 100 is under 50):

* **Stale rate from facts** (as the templated set): kenning answers from its facts
  (``search(kinds=["fact"])``, top 5); the append-only baseline ranks every user statement by
  cosine. A probe is stale when a stale value ranks above the current one, or the current
  one is missing from the top 5 (for a withdrawn value: when it is in the top 5 at all).
* **Knowledge-update probes** (superseded and out-of-order probes): kenning's default search
  (every kind, top 10), as an agent's ``search_memory`` calls it. Stale when the superseded
  value ranks above the current one, or the current one is missing from the top 10.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.embed.base import Embedder
from kenning.memory import Memory
from kenning.records import Scope

__all__ = ["Conversation", "Probe", "load_conversations", "part_of", "run_free_text"]

TENANT = "free"
FACT_K = 5
SEARCH_K = 10
PARTS = ("tuning", "held_out")
_START = datetime(2025, 3, 3, 9, tzinfo=UTC)
_UPDATES = ("superseded", "out_of_order")


@dataclass(frozen=True, slots=True)
class Probe:
    """A question asked after the conversation: the names of the value that holds now (none
    when a value was withdrawn and nothing replaced it) and of values that no longer hold."""

    question: str
    current: tuple[str, ...]
    stale: tuple[str, ...]
    kind: str


@dataclass(frozen=True, slots=True)
class Conversation:
    """One user's sessions (their own messages, by the day they happened), the order they are
    imported in, and the probes."""

    id: str
    user: str
    sessions: tuple[tuple[int, tuple[str, ...]], ...]
    import_order: tuple[int, ...]
    probes: tuple[Probe, ...]


def part_of(conversation_id: str) -> str:
    """The part a conversation belongs to, by a hash of its id (never by its content)."""
    digest = hashlib.sha256(conversation_id.encode()).hexdigest()
    return "tuning" if int(digest, 16) % 100 < 50 else "held_out"


def load_conversations() -> list[Conversation]:
    """The shipped set."""
    data = resources.files("kenning.bench.data").joinpath("staleness_free/conversations.jsonl")
    out = []
    for line in data.read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            sessions = tuple((int(s["day"]), tuple(s["turns"])) for s in row["sessions"])
            probes = tuple(
                Probe(p["question"], tuple(p["current"] or ()), tuple(p["stale"]), p["kind"])
                for p in row["probes"]
            )
            order = tuple(row.get("import_order") or range(len(sessions)))
            out.append(Conversation(row["id"], row["user"], sessions, order, probes))
    return out


def _rank_of(texts: Sequence[str], names: Sequence[str]) -> int | None:
    patterns = [re.compile(rf"\b{re.escape(n.lower())}\b") for n in names]
    for rank, text in enumerate(texts):
        if any(p.search(text.lower()) for p in patterns):
            return rank
    return None


def is_stale(texts: Sequence[str], probe: Probe, k: int) -> bool:
    """Whether the top *k* of *texts* serve a stale value (see the module's docstring)."""
    top = list(texts[:k])
    current = _rank_of(top, probe.current) if probe.current else None
    if probe.current and current is None:
        return True
    stale = _rank_of(top, probe.stale)
    return stale is not None and (current is None or stale < current)


def _ingest(memory: Memory, conversation: Conversation) -> None:
    """The conversation's sessions in its import order, each at the days it happened. The
    user has agreed to sensitive facts being kept: the set asks about family, partners and
    health, which kenning keeps only with that consent."""
    memory.facts.set_consent(Scope(TENANT, conversation.user), sensitive_facts=True)
    for n in conversation.import_order:
        day, turns = conversation.sessions[n]
        at = _START + timedelta(days=day)
        scope = Scope(TENANT, conversation.user, f"{conversation.user}-s{n}")
        memory.add_events(scope, [
            {"role": "user", "content": t, "at": at + timedelta(minutes=i)}
            for i, t in enumerate(turns)
        ])  # fmt: skip
        memory.wait_for_facts(120)


def _append_only(
    embedder: Embedder, conversation: Conversation
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """Every statement of the user, embedded: the append-only baseline's memory."""
    texts = [t for _, turns in conversation.sessions for t in turns]
    return texts, embedder.embed(texts)


def _probe_rows(
    memory: Memory, embedder: Embedder, conversation: Conversation
) -> list[dict[str, Any]]:
    """Each probe of *conversation* judged for kenning and the append-only baseline."""
    texts, vectors = _append_only(embedder, conversation)
    user = Scope(TENANT, conversation.user)
    rows = []
    for probe in conversation.probes:
        facts = memory.search(user, probe.question, k=FACT_K, kinds=["fact"])
        order = np.argsort(-(vectors @ embedder.embed([probe.question])[0]), kind="stable")
        ranked = [texts[i] for i in order]
        row = {
            "id": conversation.id, "kind": probe.kind, "question": probe.question,
            "kenning": is_stale([h.content for h in facts], probe, FACT_K),
            "append_only": is_stale(ranked, probe, FACT_K),
        }  # fmt: skip
        if probe.kind in _UPDATES:
            hits = memory.search(user, probe.question, k=SEARCH_K)
            row["update_kenning"] = is_stale([h.content for h in hits], probe, SEARCH_K)
            row["update_append_only"] = is_stale(ranked, probe, SEARCH_K)
        rows.append(row)
    return rows


def _rate(rows: Sequence[dict[str, Any]], key: str) -> float | None:
    judged = [r[key] for r in rows if key in r]
    return round(sum(judged) / len(judged), 4) if judged else None


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    by_kind = {
        kind: {
            "probes": len(of_kind),
            "kenning": _rate(of_kind, "kenning"),
            "append_only": _rate(of_kind, "append_only"),
        }
        for kind in sorted({r["kind"] for r in rows})
        for of_kind in [[r for r in rows if r["kind"] == kind]]
    }
    updates = [r for r in rows if "update_kenning" in r]
    return {
        "probes": len(rows),
        "conversations": len({r["id"] for r in rows}),
        "stale_rate": {"kenning": _rate(rows, "kenning"),
                       "append_only": _rate(rows, "append_only")},
        "stale_rate_by_kind": by_kind,
        "knowledge_update": {"probes": len(updates),
                             "kenning": _rate(updates, "update_kenning"),
                             "append_only": _rate(updates, "update_append_only")},
    }  # fmt: skip


def run_free_text(memory: Memory, embedder: Embedder) -> dict[str, Any]:
    """Ingest every conversation into *memory*, ask the probes, and report both parts, with
    the tuning probes kenning got wrong listed for reading (the held-out ones are not: rules
    are decided on the tuning part only)."""
    conversations = load_conversations()
    rows: list[dict[str, Any]] = []
    for conversation in conversations:
        _ingest(memory, conversation)
    for conversation in conversations:
        rows += [{**r, "part": part_of(conversation.id)}
                 for r in _probe_rows(memory, embedder, conversation)]  # fmt: skip
    return {
        "parts": {part: _summary([r for r in rows if r["part"] == part]) for part in PARTS},
        "tuning_misses": [
            {k: r[k] for k in ("id", "kind", "question")}
            for r in rows if r["part"] == "tuning" and (r["kenning"] or r.get("update_kenning"))
        ],
    }  # fmt: skip
