"""``kenning bench staleness``: do stale values come back after they changed?

Seeded users state facts over several sessions with chatter in between: a fact stated and
restated, one changed (a move: the old city is superseded), one under two qualifiers (work and
home), one revoked ("forget that I like jazz"), then questions about each. kenning answers from
its facts (``search(kinds=["fact"])``); the baseline is an append-only vector memory: every
user statement embedded and ranked by cosine, the way a plain vector store would.

Reported: the stale rate — the share of questions where a superseded or revoked value ranks
above the current one, or the current one is missing from the top 5 — for both; duplicate
rows after consolidation; and extraction precision and recall on the labelled sentences.

Beside the templated users, conversations written in everyday language
(:mod:`kenning.bench.staleness_free`), reported on their tuning and held-out parts.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from kenning.bench.report import heading, table, write_files
from kenning.bench.staleness_free import FACT_K, SEARCH_K, run_free_text
from kenning.embed.base import Embedder
from kenning.longterm.extract import statement_facts
from kenning.memory import Memory
from kenning.records import FactStatus, Scope
from kenning.settings import Settings

__all__ = ["extraction_scores", "run_staleness_bench"]

TOP_K = 5
CITIES = ("Lisbon", "Berlin", "Oslo", "Austin", "Nairobi", "Kyoto", "Porto", "Denver", "Ghent")
COMPANIES = ("Netflix", "Siemens", "Shopify", "Unilever", "Spotify", "Deloitte", "Atlassian")
TOOLS = ("a Mac", "Linux", "Windows", "a Chromebook", "an iPad")
GENRES = ("jazz", "country music", "heavy metal", "opera", "techno", "reggae")
FOODS = ("sushi", "tacos", "ramen", "falafel", "dumplings")
CHATTER = (
    "Can you check the status of my last order?", "Thanks, that helps a lot.",
    "The app logged me out again this morning.", "What time does support open tomorrow?",
    "I need an invoice for last month.", "Could you explain the new pricing?",
    "The package arrived but the box was wet.", "Please send me the tracking link.",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Question:
    user: str
    text: str
    current: str | None
    stale: tuple[str, ...]
    kind: str


def _user_story(rng: random.Random, user: str) -> tuple[list[list[str]], list[_Question]]:
    """One user's sessions (lists of user turns) and the questions asked afterwards."""
    city1, city2 = rng.sample(CITIES, 2)
    company = rng.choice(COMPANIES)
    work_tool, home_tool = rng.sample(TOOLS, 2)
    genre = rng.choice(GENRES)
    food = rng.choice(FOODS)
    chatter = list(CHATTER)

    def chat(n: int) -> list[str]:
        return rng.sample(chatter, n)

    sessions = [
        [*chat(2), f"I live in {city1}.", *chat(1), f"I work at {company}.", f"I love {genre}."],
        [*chat(2), f"Just so you know, I work at {company}.", f"At work I use {work_tool}.",
         *chat(1), f"I really like {food}."],
        [*chat(1), f"I moved to {city2}.", f"At home I use {home_tool}.", *chat(2)],
        [*chat(2), f"Forget that I like {genre}.", f"I'm still working at {company}.", *chat(1)],
        [*chat(1), f"I like {food} a lot.", *chat(2)],
    ]  # fmt: skip
    questions = [
        _Question(user, "Where do I live?", city2, (city1,), "superseded"),
        _Question(user, "Which company do I work at?", company, (), "restated"),
        _Question(user, "What computer do I use at work?", work_tool.split()[-1], (), "qualified"),
        _Question(user, "What do I use at home?", home_tool.split()[-1], (), "qualified"),
        _Question(user, f"Do I like {genre}?", None, (genre,), "revoked"),
        _Question(user, "What food do I like?", food, (), "restated"),
    ]
    return sessions, questions


def _rank_of(texts: Sequence[str], value: str) -> int | None:
    pattern = re.compile(rf"\b{re.escape(value.lower())}\b")
    for rank, text in enumerate(texts):
        if pattern.search(text.lower()):
            return rank
    return None


def _is_stale(texts: Sequence[str], question: _Question) -> bool:
    top = list(texts[:TOP_K])
    current = None if question.current is None else _rank_of(top, question.current)
    if question.current is not None and current is None:
        return True
    for value in question.stale:
        rank = _rank_of(top, value)
        if rank is not None and (current is None or rank < current):
            return True
    return False


def extraction_scores() -> dict[str, dict[str, float]]:
    """Precision and recall of the deterministic extractor on the labelled sentences."""
    out: dict[str, dict[str, float]] = {}
    said = datetime(2026, 1, 10, tzinfo=UTC)
    for part, name in (
        ("tuning", "extraction_set.jsonl"),
        ("held_out", "extraction_heldout.jsonl"),
    ):
        data = resources.files("kenning.longterm").joinpath(f"data/{name}").read_text("utf-8")
        tp = fp = fn = 0
        for line in data.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)

            def norm(v: str) -> str:
                return re.sub(r"^(a|an|the|my)\s+", "", v.lower().strip().strip("."))

            got = {(d.subject.lower(), d.attribute, "" if d.revoke else norm(d.value),
                    d.qualifier, d.revoke)
                   for d in statement_facts(row["text"], said=said)}  # fmt: skip
            want = {(s.lower(), a.lower(), "" if rv else norm(v), q, rv)
                    for s, a, v, q, rv in row["facts"]}  # fmt: skip
            tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
        out[part] = {
            "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
            "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
            "sentences": len([x for x in data.splitlines() if x.strip()]),
        }
    return out


def _free_text(embedder: Embedder) -> dict[str, Any]:
    """The free-text set (:mod:`kenning.bench.staleness_free`) on a store of its own."""
    with tempfile.TemporaryDirectory(prefix="kenning-staleness-free-") as tmp:
        settings = Settings(track_access=False)
        with Memory.open(Path(tmp) / "f.db", embedder=embedder, settings=settings) as memory:
            return run_free_text(memory, embedder)


def run_staleness_bench(
    out: Path, *, embedder: Embedder, users: int = 40, seed: int = 0, free_text: bool = True
) -> dict[str, Any]:
    """Run the bench (the templated users, and the free-text set unless *free_text* is
    False); write ``out/report.json`` and ``out/report.md``; return the report."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, 9, tzinfo=UTC)
    stories = [_user_story(rng, f"user{n:03d}") for n in range(users)]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kenning-staleness-") as tmp:
        memory = Memory.open(Path(tmp) / "s.db", embedder=embedder,
                             settings=Settings(track_access=False))  # fmt: skip
        statements: list[tuple[str, str]] = []  # (user, text) for the append-only baseline
        for (sessions, _), n in zip(stories, range(users), strict=True):
            user = f"user{n:03d}"
            for s, turns in enumerate(sessions):
                at = start + timedelta(days=7 * s)
                scope = Scope("bench", user, f"{user}-s{s}")
                memory.add_events(scope, [
                    {"role": "user", "content": t, "at": at + timedelta(minutes=i)}
                    for i, t in enumerate(turns)
                ])  # fmt: skip
                statements += [(user, t) for t in turns]
                memory.wait_for_facts(120)
        questions = [q for _, qs in stories for q in qs]
        kenning_stale, baseline_stale = [], []
        by_user: dict[str, list[str]] = {}
        for user, text in statements:
            by_user.setdefault(user, []).append(text)
        vectors = {u: embedder.embed(texts) for u, texts in by_user.items()}
        for q in questions:
            hits = memory.search(Scope("bench", q.user), q.text, k=TOP_K, kinds=["fact"])
            kenning_stale.append(_is_stale([h.content for h in hits], q))
            qv = embedder.embed([q.text])[0]
            order = np.argsort(-(vectors[q.user] @ qv), kind="stable")
            baseline_stale.append(_is_stale([by_user[q.user][i] for i in order], q))
        facts = [
            f
            for n in range(users)
            for f in memory.facts.list(Scope("bench", f"user{n:03d}"), include_closed=True)
        ]
        active = [f for f in facts if f.status is FactStatus.ACTIVE]
        keys = [(f.scope.user, f.key, f.value.lower()) for f in active]
        duplicates = len(keys) - len(set(keys))
        repeated = sum(len(t) - len(set(t)) for t in (
            [re.sub(r"^(just so you know, |i'm still working at )", "", x.lower())
             for x in texts] for texts in by_user.values()
        ))  # fmt: skip
        memory.close()
    by_kind: dict[str, dict[str, float]] = {}
    for kind in dict.fromkeys(q.kind for q in questions):
        idx = [i for i, q in enumerate(questions) if q.kind == kind]
        by_kind[kind] = {
            "kenning": round(sum(kenning_stale[i] for i in idx) / len(idx), 4),
            "append_only": round(sum(baseline_stale[i] for i in idx) / len(idx), 4),
            "questions": len(idx),
        }
    report = {
        "bench": "staleness",
        "users": users,
        "questions": len(questions),
        "stale_rate": {
            "kenning": round(sum(kenning_stale) / len(questions), 4),
            "append_only": round(sum(baseline_stale) / len(questions), 4),
        },
        "stale_rate_by_kind": by_kind,
        "duplicates": {
            "kenning_active_duplicates": duplicates,
            "kenning_active_facts": len(active),
            "kenning_closed_facts": len(facts) - len(active),
            "append_only_rows": len(statements),
            "append_only_restatements": repeated,
        },
        "extraction": extraction_scores(),
        "free_text": _free_text(embedder) if free_text else None,
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_files(out, report, _markdown(report))
    return report


def _markdown(report: dict[str, Any]) -> str:
    stale = report["stale_rate"]
    lines = [
        *heading("kenning bench staleness"),
        f"{report['users']} seeded users, {report['questions']} questions, top {TOP_K}.",
        "",
        *table(["system", "stale rate"], [["kenning (facts)", stale["kenning"]],
               ["append-only vector memory", stale["append_only"]]], cell=str),
        "",
        *table(["question kind", "kenning", "append-only", "questions"],
               [[kind, row["kenning"], row["append_only"], row["questions"]]
                for kind, row in report["stale_rate_by_kind"].items()], cell=str),
    ]  # fmt: skip
    dup = report["duplicates"]
    lines += [
        "",
        f"Duplicates after consolidation: {dup['kenning_active_duplicates']} among "
        f"{dup['kenning_active_facts']} active facts ({dup['kenning_closed_facts']} closed); the "
        f"append-only memory holds {dup['append_only_rows']} rows, "
        f"{dup['append_only_restatements']} of them restatements.",
        "",
        "Extraction on the labelled sentences:",
        "",
        *table(["part", "sentences", "precision", "recall"],
               [[part, row["sentences"], row["precision"], row["recall"]]
                for part, row in report["extraction"].items()], cell=str),
    ]  # fmt: skip
    if report["free_text"] is not None:
        lines += _free_markdown(report["free_text"])
    return "\n".join(lines) + "\n"


def _free_markdown(free: dict[str, Any]) -> list[str]:
    parts = free["parts"]
    lines = [
        "",
        "## Free-text conversations",
        "",
        f"Stale rate from facts (top {FACT_K}), and on knowledge-update probes with the default "
        f"search (every kind, top {SEARCH_K}):",
        "",
        *table(["part", "conversations", "probes", "kenning", "append-only",
                "update probes", "kenning (search)", "append-only (top 10)"],
               [[part, row["conversations"], row["probes"], row["stale_rate"]["kenning"],
                 row["stale_rate"]["append_only"], row["knowledge_update"]["probes"],
                 row["knowledge_update"]["kenning"], row["knowledge_update"]["append_only"]]
                for part, row in parts.items()], cell=str),
        "",
    ]  # fmt: skip
    for part, row in parts.items():
        lines += [
            f"By kind, {part}:",
            "",
            *table(["kind", "probes", "kenning", "append-only"],
                   [[kind, r["probes"], r["kenning"], r["append_only"]]
                    for kind, r in row["stale_rate_by_kind"].items()], cell=str),
            "",
        ]  # fmt: skip
    return lines
