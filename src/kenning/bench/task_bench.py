"""``kenning bench task``: does the window still hold what a long-running agent needs to know?

The scripted 300-event debugging session of :mod:`kenning.bench.task_session` is written
through the public API; the agent records its task, plan, hypotheses and findings with
``update_task`` as it goes, and the tenant's policy names its file tools. A window is assembled
every 10 events at a fixed budget (compacting when full), and at every 30th event from the
60th on (a probe point) the facts the agent needs then are looked for in it: the current goal
and plan step, the hypotheses that stand, the rejected ones, the verified findings, every file
it touched, its last three actions (tool and argument), and the ids and amount quoted so far.
A fact is present when all its strings are in the window's text (case ignored). Systems, at
the same budget:

- ``kenning``: ``Memory.assemble`` with its defaults (goal tier with the task state and action
  log, pins, summaries, tail);
- ``summary_only``: the same compaction and summaries, with the goal and pins tiers capped to
  nothing (what a summarizing memory keeps);
- ``sliding_window``: the system policy plus the newest whole messages that fit.

Retrieval is off for all three, so only what the window keeps by itself is measured.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kenning.bench.context_bench import sliding_window
from kenning.bench.report import heading, table, write_files
from kenning.bench.task_session import EVENTS, Step, Truth, script
from kenning.context.assembler import ContextSettings
from kenning.context.window import TierCaps
from kenning.memory import Memory
from kenning.records import Scope, TaskUpdate, TenantPolicy
from kenning.settings import Settings

__all__ = ["run_task_bench"]

MODEL = "gpt-4o"
SYSTEM = "You are a coding agent. Keep to the task state and do not repeat rejected work."
SYSTEMS = ("kenning", "summary_only", "sliding_window")
KINDS = ("goal", "open_hypotheses", "rejected_hypotheses", "findings", "files_touched",
         "last_actions", "ids_amounts")  # fmt: skip
POLICY = TenantPolicy(file_read_tools=("read_file",), file_write_tools=("edit_file",))
SCOPE = Scope("bench", "agent", "debug-refund")
ASSEMBLE_EVERY = 10
PROBE_EVERY = 30
FIRST_PROBE = 60


def _settings(system: str) -> Settings:
    context = ContextSettings(retrieve=False, background=False)
    if system == "summary_only":
        context = replace(context, caps=replace(TierCaps(), goal=0.0, pins=0.0))
    return Settings(context=context)


def _window_text(memory: Memory, system: str, budget: int) -> str:
    if system == "sliding_window":
        messages = sliding_window(memory, SCOPE, budget, policy=SYSTEM)
    else:
        window = memory.assemble(SCOPE, budget_tokens=budget, model=MODEL, system=SYSTEM)
        if window.tokens > budget:
            raise AssertionError(f"window over budget: {window.tokens} > {budget}")
        messages = [dict(m) for m in window.messages]
    return "\n".join(m.get("content") or "" for m in messages).lower()


def _present(text: str, probes: dict[str, list[tuple[str, ...]]]) -> dict[str, list[int]]:
    """Per kind of fact: [present, total]."""
    return {
        kind: [sum(all(_holds(text, s) for s in fact) for fact in facts), len(facts)]
        for kind, facts in probes.items()
    }


def _holds(text: str, wanted: str) -> bool:
    return any(form.lower() in text for form in wanted.split("|"))


def _run(memory: Memory, system: str, steps: Sequence[Step], budget: int) -> list[dict[str, Any]]:
    """Write the session step by step; return each probe point's counts."""
    truth, probes = Truth(), []
    for n, step in enumerate(steps, start=1):
        memory.add_events(SCOPE, [step.event])
        if step.update and system != "sliding_window":
            memory.context.update_task(SCOPE, TaskUpdate(**step.update))
        truth.see(step)
        probe = n >= FIRST_PROBE and n % PROBE_EVERY == 0
        if probe or (n % ASSEMBLE_EVERY == 0 and system != "sliding_window"):
            text = _window_text(memory, system, budget)
            if probe:
                probes.append({"event": n, "present": _present(text, truth.probes())})
    return probes


def run_task_bench(out: Path, *, budget: int = 2_000, events: int = EVENTS) -> dict[str, Any]:
    """Fact survival of kenning's window against summary-only and sliding-window baselines."""
    out.mkdir(parents=True, exist_ok=True)
    steps = script(events)
    started = time.perf_counter()
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for system in SYSTEMS:
            path = Path(tmp) / f"{system}.db"
            with Memory.open(path, embedder=None, settings=_settings(system)) as memory:
                memory.retention.set_policy(SCOPE.tenant, POLICY)
                runs[system] = _run(memory, system, steps, budget)
    report: dict[str, Any] = {
        "bench": "task", "model": MODEL, "budget": budget, "events": len(steps),
        "probes": [p["event"] for p in runs[SYSTEMS[0]]],
        "present": {s: _rates(runs[s]) for s in SYSTEMS},
        "at_end": {s: {k: v for k, v in runs[s][-1]["present"].items()} for s in SYSTEMS},
        "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    write_files(out, report, _markdown(report))
    return report


def _rates(probes: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The fraction of facts present over every probe point, per kind and in all."""
    rates = {}
    for kind in (*KINDS, "all"):
        kinds = KINDS if kind == "all" else (kind,)
        hit = sum(p["present"][k][0] for p in probes for k in kinds)
        total = sum(p["present"][k][1] for p in probes for k in kinds)
        rates[kind] = round(hit / total, 4) if total else 1.0
    return rates


def _markdown(report: dict[str, Any]) -> str:
    rows = [[kind, *[report["present"][s][kind] for s in SYSTEMS]] for kind in (*KINDS, "all")]
    end: list[list[object]] = [
        [kind, *[f"{report['at_end'][s][kind][0]}/{report['at_end'][s][kind][1]}" for s in SYSTEMS]]
        for kind in KINDS
    ]
    lines = [
        *heading("kenning bench task"),
        f"A scripted {report['events']}-event debugging session (30 files read, 6 written, 5 "
        "hypotheses rejected, 4 findings, a changed plan), a window of "
        f"{report['budget']} tokens ({report['model']}) every {ASSEMBLE_EVERY} events, probed "
        f"at events {', '.join(map(str, report['probes']))}. Fraction of the facts the agent "
        "needs that are in the window (retrieval off):",
        "",
        *table(["facts", *SYSTEMS], rows),
        "",
        f"At event {report['probes'][-1]} (present/needed):",
        "",
        *table(["facts", *SYSTEMS], end),
        "",
        f"Run time: {report['seconds']} s.",
    ]
    return "\n".join(lines) + "\n"
