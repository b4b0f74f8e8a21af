"""Writing bench reports: report.json, a readable report.md and PNG plots."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kenning.bench.harness import Run

__all__ = ["locomo_markdown", "table", "write_report"]


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def table(header: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return out


def locomo_markdown(report: Mapping[str, Any]) -> str:
    systems = report["systems"]
    lines = [
        "# kenning bench locomo",
        "",
        f"Data: `{report['data']}` — {report['conversations']} conversations, "
        f"{report['turns']} turns, {report['questions']} questions "
        f"({report['scored_questions']} with valid evidence are scored).",
        "",
        "Setup: one scope per conversation, dataset timestamps and speakers, image captions in "
        "the turn text. Systems: `kenning` = the default `Memory.search` path "
        f"(fusion `{report['settings']['fusion']}`, "
        f"embedded text `{report['settings']['embed_text']}`); "
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
    window = systems.get("recent_window", {}).get("window")
    if window:
        lines.append(
            f"Recent window at kenning's budget: {window['turns_mean']:.1f} turns, evidence "
            f"recall inside the window {window['evidence_recall_in_budget']:.3f}."
        )
    lines += ["", "## Turn recall@10 by category", ""]
    cats = list(next(iter(systems.values()))["by_category"])
    rows = [[name, *[s["by_category"][c]["turn"]["recall@10"] for c in cats]]
            for name, s in systems.items()]  # fmt: skip
    lines += table(["system", *cats], rows)
    lines += ["", "## Session nDCG@5 by category", ""]
    rows = [[name, *[s["by_category"][c]["session"]["ndcg@5"] for c in cats]]
            for name, s in systems.items()]  # fmt: skip
    lines += table(["system", *cats], rows)
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
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    (out / "report.md").write_text(markdown)
    if plots:
        _plots(out, report, run, curves or {}, curve_label)


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
    ax.set_xlabel("search latency (ms, query embedding included)")
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
