"""Writing bench reports: report.json, a readable report.md and PNG plots."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kenning.bench.harness import Run

__all__ = [
    "heading",
    "locomo_markdown",
    "longmemeval_markdown",
    "recall_markdown",
    "table",
    "write_files",
    "write_rankings",
    "write_report",
]


def heading(title: str) -> list[str]:
    """A report's first lines: its title as a Markdown heading, then a blank line.

    >>> heading("kenning bench load")
    ['# kenning bench load', '']
    """
    return [f"# {title}", ""]


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table(
    header: list[str], rows: list[list[object]], *, cell: Callable[[object], str] = _fmt
) -> list[str]:
    """The lines of a Markdown table; *cell* writes a value (by default a float to three
    decimals, anything else as ``str`` does)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out


LOCOMO_PART_COLUMNS = (
    ("turn R@5", "turn", "recall@5"), ("turn R@10", "turn", "recall@10"),
    ("turn R@25", "turn", "recall@25"), ("sess any@1", "session", "recall_any@1"),
    ("sess any@5", "session", "recall_any@5"), ("sess nDCG@5", "session", "ndcg@5"),
)  # fmt: skip
"""The columns (title, level, metric) of LoCoMo's table per part."""

LONGMEMEVAL_PART_COLUMNS = (
    ("sess R_all@5", "session", "recall_all@5"), ("sess R_any@5", "session", "recall_any@5"),
    ("sess nDCG@5", "session", "ndcg_any@5"), ("turn R_all@5", "turn", "recall_all@5"),
    ("turn R_all@10", "turn", "recall_all@10"), ("turn nDCG@10", "turn", "ndcg_any@10"),
)  # fmt: skip
"""The columns (title, level, metric) of LongMemEval's table per part."""


def _window_lines(systems: Mapping[str, Any], gold: str) -> list[str]:
    """The recency baseline's window, if run: its turns and the *gold* recall inside it."""
    window = systems.get("recent_window", {}).get("window")
    if not window:
        return []
    return [
        f"Recent window at kenning's budget: {window['turns_mean']:.1f} turns, {gold} "
        f"recall inside the window {window['evidence_recall_in_budget']:.3f}."
    ]


def _parts_lines(report: Mapping[str, Any], columns: Sequence[tuple[str, str, str]]) -> list[str]:
    """A table of headline metrics per part (tuning / validation) and system, if reported."""
    parts = report.get("parts")
    if not parts:
        return []
    rows = [
        [part, name, s["questions"], *[s[level].get(key, "-") for _, level, key in columns]]
        for part, systems in parts.items()
        for name, s in systems.items()
    ]
    return [
        "",
        "## Tuning and validation parts",
        "",
        "Decisions are taken on the tuning part; the validation part shows whether they hold "
        "(see `kenning.bench.split`).",
        "",
        *table(["part", "system", "questions", *[title for title, _, _ in columns]], rows),
    ]


def locomo_markdown(report: Mapping[str, Any]) -> str:
    systems = report["systems"]
    lines = [
        *heading("kenning bench locomo"),
        f"Data: `{report['data']}` — {report['conversations']} conversations, "
        f"{report['turns']} turns, {report['questions']} questions "
        f"({report['scored_questions']} with valid evidence are scored).",
        "",
        "Setup: one scope per conversation, dataset timestamps and speakers, image captions in "
        "the turn text, `now` = the conversation's last turn, no access tracking. "
        f"Part: {report['part']}. Systems: `kenning` = the default `Memory.search` path "
        f"(fusion `{report['settings']['fusion']}`, "
        f"embedded text `{report['settings']['embed_text']}`), with the facts it read from "
        "the turns (rules, no LLM) as keys to those turns; `kenning_nofacts` = the same "
        "search without them; "
        "`bm25` and `vector` = the same path with one signal; `recent_window` = newest turns "
        "first, its window given kenning's token budget. Token counts: "
        f"{report['token_model']} (o200k), memory block at k={report['default_k']}.",
        "",
        "## Overall",
        "",
    ]
    rows = []
    for name, s in systems.items():
        rows.append(
            [name, s["turn"]["recall@5"], s["turn"]["recall@10"], s["turn"]["recall@25"],
             s["session"]["recall_any@1"], s["session"]["recall_any@5"],
             s["session"]["recall_any@10"], s["session"]["ndcg@5"],
             round(s["context_tokens"]["mean"]), s.get("search_ms", {}).get("p50", "-"),
             s.get("search_ms", {}).get("p95", "-")]
        )  # fmt: skip
    lines += table(
        ["system", "turn R@5", "turn R@10", "turn R@25", "sess any@1", "sess any@5",
         "sess any@10", "sess nDCG@5", "block tokens", "p50 ms", "p95 ms"],
        rows,
    )  # fmt: skip
    lines += [
        "",
        f"Full context: {report['full_context_tokens']['mean']:.0f} tokens per question (mean).",
    ]
    own = {n: s["own_search_ms_k10"] for n, s in systems.items() if "own_search_ms_k10" in s}
    if own:
        parts = [f"{n} {v['p50']:.2f} / {v['p95']:.2f} / {v['p99']:.2f}" for n, v in own.items()]
        lines.append(
            "Own search time (k=10, the query's vector already cached: search minus query "
            "embedding), p50 / p95 / p99 ms: " + ", ".join(parts) + "."
        )
    lines += _window_lines(systems, "evidence")
    lines += _parts_lines(report, LOCOMO_PART_COLUMNS)
    lines += ["", "## Turn recall@10 by category", ""]
    cats = list(next(iter(systems.values()))["by_category"])
    rows = [[name, *[s["by_category"][c]["turn"]["recall@10"] for c in cats]]
            for name, s in systems.items()]  # fmt: skip
    lines += table(["system", *cats], rows)
    lines += ["", "## Session nDCG@5 by category", ""]
    rows = [[name, *[s["by_category"][c]["session"]["ndcg@5"] for c in cats]]
            for name, s in systems.items()]  # fmt: skip
    lines += table(["system", *cats], rows)
    lines += [
        "",
        f"{report.get('facts_extracted', 0)} facts were read from the turns "
        "(`kenning` uses them as keys to their turns; `kenning_nofacts` does not).",
        "",
        f"Bench wall time: {report['bench_seconds']} s.",
        "",
    ]
    return "\n".join(lines)


def longmemeval_markdown(report: Mapping[str, Any]) -> str:
    """The readable LongMemEval report: setup, official metrics per system, per question type."""
    systems = report["systems"]
    emb = report["embedding"]
    lines = [
        *heading("kenning bench longmemeval"),
        f"Data: `{report['data']}` — {report['questions']} questions, "
        f"{report['haystack_sessions']} haystack sessions, {report['turns']} user turns indexed. "
        f"{report['scored_questions']} questions are scored (skipped: "
        f"{report['abstention_questions']} abstention, {report['no_user_evidence_questions']} "
        "with no user-side evidence).",
        "",
        f"Part: {report['part']}. "
        "Setup (official retrieval protocol): user turns only, one tenant per question (its own "
        "BM25 statistics), one "
        "kenning session per haystack session, dataset timestamps, `now` = question date. "
        "Systems: `kenning` = the default `Memory.search` path "
        f"(fusion `{report['settings']['fusion']}`, "
        f"embedded text `{report['settings']['embed_text']}`), with the facts it read from "
        "the turns (rules, no LLM) as keys to those turns; `kenning_nofacts` = the same "
        "search without them; "
        "`bm25` and `vector` = the same path with one signal; `recent_window` = newest turns "
        "first, its window given kenning's token budget. Metrics as LongMemEval's "
        "`eval_utils.py`: recall_all@k (the paper's Recall@k), recall_any@k, ndcg_any@k; "
        "session scores map ranked turns to sessions, growing k until k distinct sessions. "
        f"Token counts: {report['token_model']} (o200k), memory block at k={report['default_k']}.",
        "",
        f"Embeddings: {emb['indexed_turns']} indexed turns, {emb['distinct_texts']} distinct "
        f"texts; the store asked for {emb['texts_requested_at_ingest']} (each tenant's own "
        f"distinct texts) and {emb['texts_computed_at_ingest']} were computed.",
        "",
        "## Overall",
        "",
    ]
    if report["scored_questions"]:
        rows = []
        for name, s in systems.items():
            ses, turn = s["session"], s["turn"]
            rows.append(
                [name, ses["recall_all@5"], ses["recall_any@5"], ses["ndcg_any@5"],
                 ses["recall_all@10"], turn["recall_all@5"], turn["recall_all@10"],
                 turn["ndcg_any@10"], s["session_recall_any@5_all_questions"],
                 round(s["context_tokens"]["mean"]), s.get("search_ms", {}).get("p50", "-"),
                 s.get("search_ms", {}).get("p95", "-")]
            )  # fmt: skip
        lines += table(
            ["system", "sess R_all@5", "sess R_any@5", "sess nDCG@5", "sess R_all@10",
             "turn R_all@5", "turn R_all@10", "turn nDCG@10", "sess R_any@5 (all q)",
             "block tokens", "p50 ms", "p95 ms"],
            rows,
        )  # fmt: skip
        lines += [
            "",
            "`sess R_any@5 (all q)` is the looser figure many projects report: session "
            "recall_any@5 over every question with an answer session in its haystack "
            f"({next(iter(systems.values()))['loose_questions']} questions), gold = "
            "`answer_session_ids`.",
        ]
        for level in ("session", "turn"):
            lines += ["", f"### {level.capitalize()} level, every k", ""]
            ks = report["ks"]
            rows = [
                [name, metric, *[s[level][f"{metric}@{k}"] for k in ks]]
                for name, s in systems.items()
                for metric in ("recall_all", "recall_any", "ndcg_any")
            ]
            lines += table(["system", "metric", *[f"@{k}" for k in ks]], rows)
    else:
        lines.append("No question has user-side evidence; nothing is scored.")
    lines += [
        "",
        f"Full context: {report['full_context_tokens']['mean']:.0f} tokens per question (mean, "
        f"every turn); user turns alone {report['full_context_tokens']['user_turns_mean']:.0f}.",
    ]
    first = {n: s["first_search_ms"] for n, s in systems.items() if "first_search_ms" in s}
    if first:
        lines.append(
            "Latency percentiles are of warm searches without the question's embedding "
            "(computed once per question before any system is timed: p50 "
            f"{report.get('query_embedding_ms', {}).get('p50', 0):.1f} ms; each "
            "question's tenant is loaded by an untimed search first); the first "
            "search of the store, which loads its in-memory indexes, took "
            + ", ".join(f"{n} {v:.0f} ms" for n, v in first.items())
            + "."
        )
    agreement = {n: s["top_k_agreement_default_vs_deep"] for n, s in systems.items()
                 if "top_k_agreement_default_vs_deep" in s}  # fmt: skip
    if agreement:
        lines.append(
            f"Rankings come from one deep search per question (k = all its user turns, mean "
            f"{report['search_depth']['mean']:.0f}); latency and block tokens from the k="
            f"{report['default_k']} call an agent makes. Top-{report['default_k']} agreement "
            "between the two: "
            + ", ".join(f"{n} {v:.3f}" for n, v in agreement.items())
            + " (a wider candidate pool can reorder fused scores)."
        )
    lines += _window_lines(systems, "gold-turn")
    lines += _parts_lines(report, LONGMEMEVAL_PART_COLUMNS)
    types = list(report["question_types"])
    if types:
        for title, level, key in (
            ("Session recall_all@5", "session", "recall_all@5"),
            ("Turn recall_all@10", "turn", "recall_all@10"),
        ):
            lines += ["", f"## {title} by question type", ""]
            header = ["system", *[f"{t} (n={report['question_types'][t]})" for t in types]]
            rows = [[name, *[s["by_type"][t][level][key] for t in types]]
                    for name, s in systems.items()]  # fmt: skip
            lines += table(header, rows)
    lines += _miss_lines(report)
    lines += _facts_lines(report)
    lines += ["", f"Bench wall time: {report['bench_seconds']} s.", ""]
    return "\n".join(lines)


def _miss_lines(report: Mapping[str, Any]) -> list[str]:
    """Why questions miss session recall_all@5 and turn recall_all@10, per part and system."""
    if not report["scored_questions"]:
        return []
    groups = {report["part"]: report["systems"], **report.get("parts", {})}
    kinds = [(level, reason) for level, counts in report["systems"]["kenning"]["misses"].items()
             for reason in counts]  # fmt: skip
    rows = [
        [part, name, s["questions"], *[s["misses"][level][reason] for level, reason in kinds]]
        for part, systems in groups.items()
        for name, s in systems.items()
        if name != "recent_window" and s["questions"]
    ]
    titles = [f"{level} miss: {MISS_TITLES[level, reason]}" for level, reason in kinds]
    header = ["part", "system", "questions", *titles]
    return [
        "",
        "## Why questions miss",
        "",
        "Questions missing session recall_all@5 or turn recall_all@10, by reason "
        "(`kenning.bench.longmemeval_bench.miss_reasons`). Session level: more gold sessions "
        "than five; *crowded out*: every gold session is among the first five sessions the "
        "ranking reaches, but turns of those sessions that hold no answer come first and count "
        "for other sessions under the official rule; or a gold session is not reached. Turn "
        "level: more gold turns than ten; a gold turn passed by another turn of its own session, "
        "which is in the top ten; or its session has no turn there.",
        "",
        *table(header, rows),
    ]


MISS_TITLES = {
    ("session", "more_gold_than_k"): "> 5 gold",
    ("session", "crowded_out"): "crowded out",
    ("session", "not_reached"): "not reached",
    ("turn", "more_gold_than_k"): "> 10 gold",
    ("turn", "outranked_in_session"): "passed in session",
    ("turn", "session_not_reached"): "session not reached",
}


FACT_TYPES = ("knowledge-update", "single-session-preference")


def _facts_lines(report: Mapping[str, Any]) -> list[str]:
    """Facts on and off for the question types facts are for: changed values, preferences."""
    systems = report["systems"]
    if "kenning_nofacts" not in systems:
        return []
    types = [t for t in FACT_TYPES if t in report["question_types"]]
    lines = [
        "",
        "## Facts on and off",
        "",
        f"{report.get('facts_extracted', 0)} facts were read from the indexed turns.",
    ]
    if not types:
        return lines
    lines.append("")
    rows = [
        [f"{t} (n={report['question_types'][t]})", name,
         systems[name]["by_type"][t]["session"]["recall_all@5"],
         systems[name]["by_type"][t]["turn"]["recall_all@10"],
         systems[name]["by_type"][t]["turn"]["ndcg_any@10"]]
        for t in types
        for name in ("kenning", "kenning_nofacts")
    ]  # fmt: skip
    lines += table(["question type", "system", "sess R_all@5", "turn R_all@10",
                    "turn nDCG@10"], rows)  # fmt: skip
    return lines


def recall_markdown(report: Mapping[str, Any]) -> str:
    """The readable report of the synthetic recall suite."""
    lines = [
        *heading("kenning bench recall"),
        f"{report['conversations']} seeded conversations (seeds {report['seeds'][0]}–"
        f"{report['seeds'][-1]}), each {report['turns_per_conversation']} turns with "
        f"{report['facts_per_conversation']} facts planted among chatter, and one recall "
        "question per fact, phrased differently from the fact. A question counts as answered "
        f"by retrieval when the fact is in what the system hands the model: the top "
        f"{report['k']} hits for the search systems; for the others, the same token budget as "
        f"kenning's top-{report['k']} block (mean {report['budget_tokens']['mean']:.0f} "
        f"{report['token_model']} tokens; the block cites id, session and time on each line, "
        "the baselines spend no tokens on citations).",
        "",
        "- `sliding_window`: the last turns, as plain `role: text` lines, that fit the budget.",
        f"- `summary_only`: {report['summary_method']}",
        "- `vector`, `bm25`: kenning's search path with one signal; `kenning`: the default path.",
        "",
    ]
    k = report["k"]
    lines += table(
        ["system", f"recall@{k} (mean)", "worst seed", "best seed"],
        [
            [name, s[f"recall@{k}"], min(s["per_seed"]), max(s["per_seed"])]
            for name, s in report["systems"].items()
        ],
    )
    lines += ["", f"Bench wall time: {report['bench_seconds']} s.", ""]
    return "\n".join(lines)


def write_report(
    out: Path,
    report: Mapping[str, Any],
    markdown: str,
    *,
    plots: bool,
    run: Run,
    curves: Mapping[str, Mapping[int, float]] | None = None,
    curve_label: str = "recall@k",
) -> None:
    write_files(out, report, markdown)
    if plots:
        _plots(out, report, run, curves or {}, curve_label)


def write_files(out: Path, report: Mapping[str, Any], markdown: str) -> None:
    """Write ``report.json`` (*report* indented, in its own key order) and ``report.md``
    (*markdown*) under *out*, creating it."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(markdown)


def write_rankings(out: Path, question_ids: Sequence[str], run: Run) -> None:
    """``rankings.json``: per system, each question's ranked ids (for rescoring and analysis)."""
    out.mkdir(parents=True, exist_ok=True)
    body = {
        name: dict(zip(question_ids, rankings, strict=True))
        for name, rankings in run.rankings.items()
    }
    (out / "rankings.json").write_text(json.dumps(body) + "\n")


def _plots(
    out: Path,
    report: Mapping[str, Any],
    run: Run,
    curves: Mapping[str, Mapping[int, float]],
    curve_label: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if curves:
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, curve in curves.items():
            ks = sorted(curve)
            ax.plot(ks, [curve[k] for k in ks], marker=".", label=name)
        ax.set_xscale("log")
        ax.set_xlabel("k")
        ax.set_ylabel(curve_label)
        ax.set_title(f"{report['dataset']}: {curve_label} by system")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "recall_at_k.png", dpi=120)
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, values in run.search_ms.items():
        ax.hist(values, bins=40, alpha=0.5, label=name)
    ax.set_xlabel("search latency (ms; the report says what is timed)")
    ax.set_ylabel("questions")
    ax.set_title(f"{report['dataset']}: search latency")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency_hist.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, system in report["systems"].items():
        recall = system["turn"].get("recall@10", system["turn"].get("recall_all@10"))
        ax.scatter(system["context_tokens"]["mean"], recall, label=name, s=50)
    ax.axvline(report["full_context_tokens"]["mean"], color="grey", linestyle="--",
               label="full context tokens")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("tokens sent (mean, log scale)")
    ax.set_ylabel("turn recall@10")
    ax.set_title(f"{report['dataset']}: tokens vs recall")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "tokens_vs_recall.png", dpi=120)
    plt.close(fig)
