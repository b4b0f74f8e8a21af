"""Property tests of the action log's derivation (kenning.context.actions): over any session of
tool calls and results, folding it in any number of steps gives the same log as folding it at
once, every call is counted once and every error once, and the files are exactly the paths of
the file tools' calls that came back ok, each with the latest such call."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.context.actions import ActionLog, FileTools, Outcome, action_lines, fold_actions
from kenning.records import Event, Role, Scope

S = Scope("acme", "ann", "s1")
TOOLS = FileTools(read=frozenset({"read_file"}), write=frozenset({"write_file"}))
NAMES = ["read_file", "write_file", "grep"]
PATHS = ["a.py", "./a.py", "src/b.py", "c.md"]

# A step: ("call", tool, path, call_id or None) or ("result", tool, call_id or None, error).
call = st.tuples(st.just("call"), st.sampled_from(NAMES), st.sampled_from(PATHS),
                 st.sampled_from([None, "c1", "c2", "c3"]))  # fmt: skip
result = st.tuples(st.just("result"), st.sampled_from(NAMES),
                   st.sampled_from([None, "c1", "c2", "c3"]), st.booleans())  # fmt: skip
lone = st.tuples(st.just("lone"), st.sampled_from(NAMES), st.sampled_from(PATHS), st.booleans())
steps = st.lists(st.one_of(call, result, lone, st.just(("talk",))), max_size=40)


def _events(plan: list[tuple[Any, ...]]) -> list[Event]:
    out = []
    for seq, step in enumerate(plan, start=1):
        at = datetime(2026, 1, 1, tzinfo=UTC)
        kind = step[0]
        if kind == "talk":
            out.append(Event(f"e{seq}", S, seq, Role.USER, "go on", at))
        elif kind == "call":
            meta = {"tool_call_id": step[3]} if step[3] else {}
            out.append(Event(f"e{seq}", S, seq, Role.ASSISTANT, "calling", at, tool_name=step[1],
                             tool_args={"path": step[2]}, metadata=meta))  # fmt: skip
        elif kind == "result":
            meta = {"tool_call_id": step[2]} if step[2] else {}
            res = {"error": "denied"} if step[3] else {"ok": True}
            out.append(Event(f"e{seq}", S, seq, Role.TOOL, "done", at, tool_name=step[1],
                             tool_result=res, metadata=meta))  # fmt: skip
        else:
            meta = {"is_error": True} if step[3] else {}
            out.append(Event(f"e{seq}", S, seq, Role.TOOL, "done", at, tool_name=step[1],
                             tool_args={"path": step[2]}, metadata=meta))  # fmt: skip
    return out


@settings(max_examples=300, deadline=None)
@given(steps, st.lists(st.integers(min_value=0, max_value=40), max_size=4))
def test_folding_in_steps_gives_the_log_folding_at_once(
    plan: list[tuple[Any, ...]], cuts: list[int]
) -> None:
    events = _events(plan)
    whole = fold_actions(ActionLog(), events, TOOLS)
    log, start = ActionLog(), 0
    for cut in [*sorted(cuts), len(events)]:
        log = fold_actions(log, events[start:cut], TOOLS)
        start = max(start, cut)
    assert log == whole
    # Folding what the log already holds changes nothing.
    assert fold_actions(whole, events, TOOLS) == whole
    assert [k for k, _ in action_lines(log)] == [k for k, _ in action_lines(whole)]


@settings(max_examples=300, deadline=None)
@given(steps)
def test_calls_errors_and_files_add_up(plan: list[tuple[Any, ...]]) -> None:
    log = fold_actions(ActionLog(), _events(plan), TOOLS)
    assert sum(log.calls.values()) == len(log.actions)  # nothing was dropped at this size
    errors = [a for a in log.actions if a.outcome is Outcome.ERROR]
    assert sum(log.errors.values()) == len(errors)
    expected: dict[str, dict[str, int]] = {"read_file": {}, "write_file": {}}
    for action in log.actions:
        if action.outcome is Outcome.OK and action.tool in expected:
            for path in action.paths:
                held = expected[action.tool]
                held[path] = max(held.get(path, 0), action.seq)
    assert dict(log.files_read) == expected["read_file"]
    assert dict(log.files_written) == expected["write_file"]
    assert all(not p.startswith("./") for p in (*log.files_read, *log.files_written))
    # Every result answered at most one call: no more ok/error outcomes than results.
    answered = sum(1 for a in log.actions if a.outcome is not Outcome.PENDING)
    assert answered == sum(1 for s in plan if s[0] in ("result", "lone"))
