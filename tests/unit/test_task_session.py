"""The scripted session of ``kenning bench task`` is what the issue asks for: 300 events, 30
files read and 6 written, 5 hypotheses rejected with reasons, 4 findings, a changed plan."""

from __future__ import annotations

from kenning.bench.task_session import FIRST_PLAN, SECOND_PLAN, Truth, script
from kenning.records import TaskUpdate


def test_the_script_holds_the_investigation_the_bench_measures() -> None:
    steps = script()
    assert len(steps) == 300
    truth = Truth()
    plans = []
    for step in steps:
        if step.update:
            TaskUpdate(**step.update)  # every update is valid
        truth.see(step)
        if step.update.get("subtask") and (not plans or plans[-1] != step.update["subtask"]):
            plans.append(step.update["subtask"])
    assert plans[-2:] == [FIRST_PLAN, SECOND_PLAN]
    assert len(truth.rejected) == 5 and len(truth.findings) == 4 and len(truth.open) == 2
    calls = [s.event for s in steps if s.event["role"] == "assistant" and "tool_name" in s.event]
    reads = {c["tool_args"]["path"] for c in calls if c["tool_name"] == "read_file"}
    writes = {c["tool_args"]["path"] for c in calls if c["tool_name"] == "edit_file"}
    assert len(reads) == 30 and len(writes) == 6
    assert set(truth.files) == reads | writes
    assert script(250) != steps and len(script(250)) == 250  # less filler, same beats
