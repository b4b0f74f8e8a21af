"""The action log's rules on single cases (kenning.context.actions): what pairs a result with
its call, what makes an error, which paths count, and the digest's order and limits."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kenning.context.actions import ActionLog, FileTools, Outcome, action_lines, fold_actions
from kenning.records import Event, Role, Scope

S = Scope("acme", "ann", "s1")
TOOLS = FileTools(read=frozenset({"read"}), write=frozenset({"write"}))


def _ev(seq: int, role: Role, tool: str | None = None, **kw: Any) -> Event:
    return Event(f"e{seq}", S, seq, role, "text", datetime(2026, 1, 1, tzinfo=UTC),
                 tool_name=tool, **kw)  # fmt: skip


def test_a_result_answers_its_call_by_id_else_the_latest_of_its_tool() -> None:
    log = fold_actions(ActionLog(), [
        _ev(1, Role.ASSISTANT, "read", tool_args={"path": "./a.py"},
            metadata={"tool_call_id": "x"}),
        _ev(2, Role.ASSISTANT, "read", tool_args={"path": "b.py"}),
        _ev(3, Role.TOOL, "read", metadata={"tool_call_id": "x"}),
        _ev(4, Role.TOOL, "read", metadata={"isError": True}),
        _ev(5, Role.TOOL, None, tool_result="orphan"),
    ], TOOLS)  # fmt: skip
    assert [(a.seq, a.tool, a.outcome) for a in log.actions] == [
        (1, "read", Outcome.OK), (2, "read", Outcome.ERROR), (5, "tool", Outcome.OK),
    ]  # fmt: skip
    assert dict(log.files_read) == {"a.py": 1}  # b.py's read failed
    assert dict(log.calls) == {"read": 2, "tool": 1} and dict(log.errors) == {"read": 1}


def test_only_the_policys_file_tools_name_files() -> None:
    log = fold_actions(ActionLog(), [
        _ev(1, Role.TOOL, "grep", tool_args={"path": "src"}),
        _ev(2, Role.TOOL, "write", tool_args={"file_path": "x.py", "path": ["y.py", 3, "y.py"]}),
        _ev(3, Role.TOOL, "write", tool_args={"path": "bad\npath"}, tool_result={"error": ""}),
    ], TOOLS)  # fmt: skip
    assert dict(log.files_written) == {"y.py": 2}  # the first path argument present wins
    assert log.actions[-1].outcome is Outcome.OK  # an empty "error" is no error
    assert not log.files_read


def test_the_digest_puts_files_first_and_limits_each_part() -> None:
    events = [_ev(n, Role.TOOL, "read", tool_args={"path": f"f{n}.py"}) for n in range(1, 13)]
    lines = action_lines(fold_actions(ActionLog(), events, TOOLS), last=2, files=10, per_line=4)
    assert [k for k, _ in lines] == [
        "files:read:0", "tools", "action:12", "action:11", "files:read:1", "files:read:2",
    ]  # fmt: skip
    assert lines[0][1] == "Files read: f12.py, f11.py, f10.py, f9.py"
    assert lines[-1][1] == "Files read (earlier): f4.py, f3.py and 2 more"
    assert lines[1][1] == "Tool calls so far: read 12"
    assert lines[2][1] == 'Did #12: read {"path":"f12.py"} -> ok'
