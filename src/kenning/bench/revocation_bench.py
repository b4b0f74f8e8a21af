"""``kenning bench revocation``: does a withdrawal in other words close the fact it means?

Each labelled pair (``kenning/bench/data/revocation_pairs``) is a withdrawal's attribute and
a held fact's: "forget that I like jazz" against "I love jazz music" (the same thing) or "I
love blues" (another). kenning's rule (:func:`kenning.longterm.consolidate.withdrawn_kin`)
closes the held fact when the withdrawn thing names part of it or their objects embed at
least ``withdrawal_match`` alike. The pairs are split by a hash of their ids (half tuning,
half held-out) before anything is chosen; the threshold is swept on the tuning part, and both
parts are reported at the setting: closures of the facts meant (recall) and false closures
(the target is none).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from kenning.bench.report import table, write_files
from kenning.embed.base import Embedder
from kenning.longterm.consolidate import core, withdrawn_kin
from kenning.longterm.service import LongTermSettings
from kenning.records import USER, Fact, FactDraft, Scope

__all__ = ["load_pairs", "run_revocation_bench"]

PARTS = ("tuning", "held_out")
SWEEP = tuple(round(0.5 + 0.05 * n, 2) for n in range(10))
_AT = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Pair:
    id: str
    withdrawn: str
    held: str
    same: bool

    @property
    def part(self) -> str:
        digest = hashlib.sha256(self.id.encode()).digest()
        return "tuning" if int.from_bytes(digest[:8], "big") % 100 < 50 else "held_out"


def load_pairs() -> list[Pair]:
    data = resources.files("kenning.bench.data").joinpath("revocation_pairs/pairs.jsonl")
    rows = [json.loads(line) for line in data.read_text("utf-8").splitlines() if line.strip()]
    return [Pair(r["id"], r["withdrawn"], r["held"], bool(r["same"])) for r in rows]


def _closes(pair: Pair, similarity: float, threshold: float) -> bool:
    """Whether kenning's rule closes the held fact of *pair* (objects *similarity* alike)."""
    draft = FactDraft(subject=USER, attribute=pair.withdrawn, value="", text="", revoke=True)
    held = Fact(id="held", scope=Scope("bench", "u", "s"), subject=USER, attribute=pair.held,
                value="likes", text="", valid_from=_AT)  # fmt: skip
    return withdrawn_kin(draft, [held], lambda _: similarity, threshold) is not None


def _score(pairs: Sequence[Pair], sims: dict[str, float], threshold: float) -> dict[str, int]:
    closed = [p for p in pairs if _closes(p, sims[p.id], threshold)]
    return {
        "pairs": len(pairs),
        "meant": sum(p.same for p in pairs),
        "closed": sum(p.same for p in closed),
        "false_closures": sum(not p.same for p in closed),
    }


def run_revocation_bench(out: Path, *, embedder: Embedder) -> dict[str, Any]:
    """Run the bench; write ``out/report.json`` and ``out/report.md``; return the report."""
    pairs = load_pairs()
    texts = sorted({_core_of(a) for p in pairs for a in (p.withdrawn, p.held)})
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    sims = {p.id: float(vectors[_core_of(p.withdrawn)] @ vectors[_core_of(p.held)]) for p in pairs}
    parts = {part: [p for p in pairs if p.part == part] for part in PARTS}
    setting = LongTermSettings().withdrawal_match
    sweep = {str(t): _score(parts["tuning"], sims, t) for t in SWEEP}
    chosen = min((t for t in SWEEP if sweep[str(t)]["false_closures"] == 0), default=None)
    report = {
        "bench": "revocation",
        "setting": setting,
        "lowest_without_false_closures_on_tuning": chosen,
        "parts": {part: _score(rows, sims, setting) for part, rows in parts.items()},
        "tuning_sweep": sweep,
    }
    write_files(out, report, _markdown(report))
    return report


def _core_of(attribute: str) -> str:
    """The object a pair's attribute names (as :func:`~kenning.longterm.consolidate.core`)."""
    return core(FactDraft(subject=USER, attribute=attribute, value=attribute, text=""))


def _markdown(report: dict[str, Any]) -> str:
    rows = [[part, r["pairs"], f"{r['closed']}/{r['meant']}", r["false_closures"]]
            for part, r in report["parts"].items()]  # fmt: skip
    sweep = [[t, f"{r['closed']}/{r['meant']}", r["false_closures"]]
             for t, r in report["tuning_sweep"].items()]  # fmt: skip
    return "\n".join([
        "# kenning bench revocation",
        "",
        f"Withdrawals in other words, at withdrawal_match = {report['setting']} (the lowest "
        f"step without a false closure on the tuning part: "
        f"{report['lowest_without_false_closures_on_tuning']}).",
        "",
        *table(["part", "pairs", "facts meant, closed", "false closures"], rows, cell=str),
        "",
        "Tuning part, by threshold:",
        "",
        *table(["threshold", "facts meant, closed", "false closures"], sweep, cell=str),
    ]) + "\n"  # fmt: skip
