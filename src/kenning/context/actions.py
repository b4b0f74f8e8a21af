"""A session's action log, derived from its tool events: what the agent called, with which
arguments, how it came out, and the files it read and wrote. Pure, no I/O; the agent writes
none of it (the working context folds the session's events in, see
:class:`~kenning.context.action_reader.ActionLogs`).

Derivation rules (:func:`fold_actions`), applied to events in sequence order:

1. A tool call is an event with a ``tool_name`` that is not a tool result (an assistant's
   call). It starts an action of that tool, its arguments' digest and outcome ``pending``.
2. A tool result (role ``tool``) answers the pending action with its ``tool_call_id``
   (metadata) when both carry one, else the latest pending action of its tool that has no
   call id. Unanswered, it is an action of its own (its own ``tool_args``, if any).
3. The outcome is ``error`` when the result says so: metadata ``is_error`` / ``isError``
   true, or a result object with a non-empty ``error`` or a true ``is_error`` / ``isError``;
   else ``ok``.
4. A file counts once an action of a file tool of the tenant's policy comes back ``ok``: the
   paths its arguments name (the first of the policy's ``file_path_args`` present, a string
   or a list of strings). Each path is kept once, with the latest event that touched it.
5. The log keeps the last :data:`MAX_ACTIONS` actions, every tool's call and error counts,
   and the :data:`MAX_FILES` most recently touched files of each kind. Events at or below
   the log's ``seq`` are already in it and are ignored, so folding a session in any number of
   steps gives the same log as folding it at once.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kenning.records import Event, Role, TenantPolicy

__all__ = [
    "MAX_ACTIONS",
    "MAX_FILES",
    "Action",
    "ActionLog",
    "FileTools",
    "Outcome",
    "action_lines",
    "fold_actions",
]

MAX_ACTIONS = 200
MAX_FILES = 500
_ARGS_CHARS = 80
_PATH_CHARS = 300


class Outcome(enum.StrEnum):
    OK = "ok"
    ERROR = "error"
    PENDING = "pending"


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call: the event that made it, the tool, its arguments' digest, how it came
    out, and the call id that pairs it with its result (when the host gave one)."""

    seq: int
    tool: str
    args: str = ""
    outcome: Outcome = Outcome.PENDING
    call_id: str | None = None
    paths: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FileTools:
    """Which tools read and write files, and the arguments that name the path (from the
    tenant's :class:`~kenning.records.TenantPolicy`)."""

    read: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()
    path_args: tuple[str, ...] = ("path", "file_path", "filename")

    @classmethod
    def of(cls, policy: TenantPolicy) -> FileTools:
        return cls(
            frozenset(policy.file_read_tools), frozenset(policy.file_write_tools),
            policy.file_path_args,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ActionLog:
    """What a session's tool events add up to (see the module's rules).

    ``actions`` oldest first; ``calls`` / ``errors`` per tool; ``files_read`` /
    ``files_written`` map each path to the latest event that touched it; ``seq`` is the last
    event folded in.
    """

    actions: tuple[Action, ...] = ()
    calls: Mapping[str, int] = field(default_factory=dict)
    errors: Mapping[str, int] = field(default_factory=dict)
    files_read: Mapping[str, int] = field(default_factory=dict)
    files_written: Mapping[str, int] = field(default_factory=dict)
    seq: int = 0

    @property
    def empty(self) -> bool:
        return not self.calls

    def to_json(self) -> dict[str, Any]:
        return {
            "actions": [
                {
                    "seq": a.seq,
                    "tool": a.tool,
                    "args": a.args,
                    "outcome": a.outcome.value,
                    "call_id": a.call_id,
                    "paths": list(a.paths),
                }
                for a in self.actions
            ],
            "calls": dict(self.calls),
            "errors": dict(self.errors),
            "files_read": dict(self.files_read),
            "files_written": dict(self.files_written),
            "seq": self.seq,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ActionLog:
        actions = tuple(
            Action(seq=int(a["seq"]), tool=str(a["tool"]), args=str(a.get("args", "")),
                   outcome=Outcome(a.get("outcome", "pending")), call_id=a.get("call_id"),
                   paths=tuple(str(p) for p in a.get("paths", ())))
            for a in data.get("actions", ())
        )  # fmt: skip

        def counts(key: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in data.get(key, {}).items()}

        return cls(actions, counts("calls"), counts("errors"), counts("files_read"),
                   counts("files_written"), int(data.get("seq", 0)))  # fmt: skip


def fold_actions(log: ActionLog, events: Iterable[Event], tools: FileTools) -> ActionLog:
    """*log* with *events* (in sequence order) folded in by the module's rules."""
    state = _Fold(log, tools)
    for event in events:
        if event.seq > state.seq:
            state.add(event)
    return state.result()


class _Fold:
    """The mutable working copy of one fold."""

    def __init__(self, log: ActionLog, tools: FileTools) -> None:
        self.actions = list(log.actions)
        self.calls, self.errors = dict(log.calls), dict(log.errors)
        self.read, self.written = dict(log.files_read), dict(log.files_written)
        self.seq, self.tools = log.seq, tools

    def add(self, event: Event) -> None:
        self.seq = event.seq
        call = event.metadata.get("tool_call_id")
        call_id = call if isinstance(call, str) and call else None
        if event.role is not Role.TOOL:
            if event.tool_name:
                self._start(Action(event.seq, event.tool_name, _digest(event.tool_args),
                                   call_id=call_id, paths=self._paths(event)))  # fmt: skip
            return
        outcome = Outcome.ERROR if _failed(event) else Outcome.OK
        at = self._pending(event.tool_name, call_id)
        if at is not None and not self.actions[at].paths:
            self.actions[at] = replace(self.actions[at], paths=self._paths(event))
        if at is None:
            tool = event.tool_name or "tool"
            self._start(Action(event.seq, tool, _digest(event.tool_args), call_id=call_id,
                               paths=self._paths(event)))  # fmt: skip
            at = len(self.actions) - 1
        self._finish(at, outcome)

    def _start(self, action: Action) -> None:
        self.actions.append(action)
        self.calls[action.tool] = self.calls.get(action.tool, 0) + 1
        del self.actions[:-MAX_ACTIONS]

    def _pending(self, tool: str | None, call_id: str | None) -> int | None:
        pending = [at for at in range(len(self.actions) - 1, -1, -1)
                   if self.actions[at].outcome is Outcome.PENDING]  # fmt: skip
        if call_id is not None:
            found = next((at for at in pending if self.actions[at].call_id == call_id), None)
            if found is not None:
                return found
        return next(
            (at for at in pending
             if self.actions[at].call_id is None and tool and self.actions[at].tool == tool),
            None,
        )  # fmt: skip

    def _finish(self, at: int, outcome: Outcome) -> None:
        action = replace(self.actions[at], outcome=outcome)
        self.actions[at] = action
        if outcome is Outcome.ERROR:
            self.errors[action.tool] = self.errors.get(action.tool, 0) + 1
            return
        for kind, files in ((self.tools.read, self.read), (self.tools.write, self.written)):
            if action.tool in kind:
                for path in action.paths:
                    files[path] = max(files.get(path, 0), action.seq)
                while len(files) > MAX_FILES:
                    files.pop(min(files, key=lambda p: files[p]))

    def _paths(self, event: Event) -> tuple[str, ...]:
        tool, args = event.tool_name, event.tool_args
        if tool not in self.tools.read and tool not in self.tools.write:
            return ()
        if not isinstance(args, Mapping):
            return ()
        name = next((n for n in self.tools.path_args if n in args), None)
        value = None if name is None else args[name]
        values = value if isinstance(value, list) else [value]
        return tuple(dict.fromkeys(p for v in values if (p := _path(v))))

    def result(self) -> ActionLog:
        return ActionLog(tuple(self.actions), self.calls, self.errors, _by_seq(self.read),
                         _by_seq(self.written), self.seq)  # fmt: skip


def _by_seq(files: dict[str, int]) -> dict[str, int]:
    """The files oldest first (ties by path): one order whatever the folding steps were."""
    return dict(sorted(files.items(), key=lambda item: (item[1], item[0])))


def _path(value: object) -> str | None:
    """A path as the log keeps it: one line, a leading ``./`` dropped; None if not a path."""
    if not isinstance(value, str):
        return None
    path = value.strip()
    while path.startswith("./"):
        path = path[2:]
    if not path or len(path) > _PATH_CHARS or not path.isprintable():
        return None
    return path


def _failed(event: Event) -> bool:
    flags = ("is_error", "isError")
    if any(event.metadata.get(f) is True for f in flags):
        return True
    result = event.tool_result
    if isinstance(result, Mapping):
        return bool(result.get("error")) or any(result.get(f) is True for f in flags)
    return False


def _digest(args: object) -> str:
    """The arguments on one short line: compact JSON (a string as it is), cut to 80 chars."""
    if args is None:
        return ""
    text = args if isinstance(args, str) else json.dumps(
        args, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )  # fmt: skip
    text = " ".join(text.split())
    return text if len(text) <= _ARGS_CHARS else text[: _ARGS_CHARS - 1] + "…"


def action_lines(
    log: ActionLog, *, last: int = 8, files: int = 40, per_line: int = 8, tools: int = 10
) -> list[tuple[str, str]]:
    """The log as the goal tier shows it, ``(key, line)`` pairs most worth keeping first (the
    tier's cap drops lines from the end): the files written, the newest files read, the
    calls and errors per tool (the *tools* most called), the *last* actions newest first, then
    the older files read. Files are listed newest first (their paths only: the tokens go to
    more files), *per_line* a line, *files* at most of each kind."""
    written = _file_lines("files:written", "Files written", log.files_written, files, per_line)
    read = _file_lines("files:read", "Files read", log.files_read, files, per_line)
    lines = written + read[:1]
    if log.calls:
        ranked = sorted(log.calls.items(), key=lambda item: (-item[1], item[0]))
        counts = ", ".join(
            f"{tool} {n}" + (f" ({log.errors[tool]} failed)" if log.errors.get(tool) else "")
            for tool, n in ranked[:tools]
        )
        more = f" and {len(ranked) - tools} more tools" if len(ranked) > tools else ""
        lines.append(("tools", f"Tool calls so far: {counts}{more}"))
    for action in reversed(log.actions[-last:] if last > 0 else ()):
        args = f" {action.args}" if action.args else ""
        line = f"Did #{action.seq}: {action.tool}{args} -> {action.outcome.value}"
        lines.append((f"action:{action.seq}", line))
    return lines + read[1:]


def _file_lines(
    key: str, label: str, held: Mapping[str, int], most: int, per_line: int
) -> list[tuple[str, str]]:
    newest = sorted(held.items(), key=lambda item: (-item[1], item[0]))
    shown = newest[:most]
    lines = []
    for n, at in enumerate(range(0, len(shown), per_line)):
        paths = ", ".join(path for path, _ in shown[at : at + per_line])
        head = label if n == 0 else f"{label} (earlier)"
        more = f" and {len(newest) - most} more" if at + per_line >= len(shown) > 0 and (
            len(newest) > most
        ) else ""  # fmt: skip
        lines.append((f"{key}:{n}", f"{head}: {paths}{more}"))
    return lines
