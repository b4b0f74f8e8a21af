"""The agent's task state for a session and the updates to it: validated records, no I/O.

The rules that merge an update into a state are in :mod:`kenning.context.task`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kenning.errors import InvalidInput
from kenning.records.investigation import Finding, Hypothesis, HypothesisChange, HypothesisStatus
from kenning.records.values import enum_member, one_line

__all__ = ["MAX_TASK_ITEMS", "Decision", "TaskState", "TaskStatus", "TaskUpdate", "task_key"]

_MAX_TEXT = 2_000
MAX_TASK_ITEMS = 200


class TaskStatus(enum.StrEnum):
    NOT_STARTED = "not_started"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision the agent took, and why."""

    text: str
    rationale: str = ""


@dataclass(frozen=True, slots=True)
class TaskState:
    """What the agent is doing in a session."""

    task: str = ""
    subtask: str = ""
    status: TaskStatus = TaskStatus.NOT_STARTED
    decisions: tuple[Decision, ...] = ()
    constraints: tuple[str, ...] = ()
    hypotheses: tuple[Hypothesis, ...] = ()
    findings: tuple[Finding, ...] = ()
    version: int = 0

    @property
    def empty(self) -> bool:
        held = (self.task, self.subtask, self.decisions, self.constraints, self.hypotheses,
                self.findings)  # fmt: skip
        return not any(held) and self.status is TaskStatus.NOT_STARTED

    def investigation_lines(self) -> list[tuple[str, str]]:
        """The investigation as ``(key, line)`` pairs, most worth keeping first: rejected
        hypotheses (they prevent repeated work), verified findings, supported hypotheses, then
        open ones. The goal tier drops from the end when its cap binds."""
        by = {s: [h for h in self.hypotheses if h.status is s] for s in HypothesisStatus}
        lines = [(f"rejected:{h.id}", f"Rejected: {h.text} (because {h.reason})")
                 for h in by[HypothesisStatus.REJECTED]]  # fmt: skip
        lines += [(f"finding:{n}", f"Verified: {f.text}" + _cited(f.evidence))
                  for n, f in enumerate(self.findings)]  # fmt: skip
        lines += [(f"supported:{h.id}", f"Supported: {h.text}" + _cited(h.evidence))
                  for h in by[HypothesisStatus.SUPPORTED]]  # fmt: skip
        lines += [(f"open:{h.id}", f"Open hypothesis: {h.text}")
                  for h in by[HypothesisStatus.OPEN]]  # fmt: skip
        return lines

    def render(self) -> str:
        """The compact text shown in the goal tier."""
        lines = []
        if self.task:
            lines.append(f"Task: {self.task} ({self.status.value.replace('_', ' ')})")
        else:
            lines.append(f"Task status: {self.status.value.replace('_', ' ')}")
        if self.subtask:
            lines.append(f"Current step: {self.subtask}")
        for c in self.constraints:
            lines.append(f"Constraint: {c}")
        for d in self.decisions:
            lines.append(
                f"Decided: {d.text}" + (f" (because {d.rationale})" if d.rationale else "")
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "subtask": self.subtask,
            "status": self.status.value,
            "decisions": [{"text": d.text, "rationale": d.rationale} for d in self.decisions],
            "constraints": list(self.constraints),
            "hypotheses": [h.to_json() for h in self.hypotheses],
            "findings": [f.to_json() for f in self.findings],
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskState:
        return cls(
            task=str(data.get("task", "")),
            subtask=str(data.get("subtask", "")),
            status=TaskStatus(data.get("status", TaskStatus.NOT_STARTED.value)),
            decisions=tuple(
                Decision(text=str(d["text"]), rationale=str(d.get("rationale", "")))
                for d in data.get("decisions", [])
            ),
            constraints=tuple(str(c) for c in data.get("constraints", [])),
            hypotheses=tuple(Hypothesis.from_json(h) for h in data.get("hypotheses", [])),
            findings=tuple(Finding.from_json(f) for f in data.get("findings", [])),
            version=int(data.get("version", 0)),
        )


def _text(value: object, what: str, *, allow_empty: bool = False) -> str:
    return one_line(value, what, allow_empty=allow_empty, max_chars=_MAX_TEXT)


def task_key(text: str) -> str:
    """The form two decisions or constraints are compared in: case and spacing ignored."""
    return " ".join(text.lower().split())


@dataclass(frozen=True, slots=True)
class TaskUpdate:
    """A change to a session's task state; ``None`` fields leave the stored value alone.

    Validated on construction: raises :class:`~kenning.errors.InvalidInput` (for example an
    unknown status) so a bad update changes nothing.
    """

    task: str | None = None
    subtask: str | None = None
    status: TaskStatus | str | None = None
    decisions: Sequence[Decision | tuple[str, str] | str] = field(default_factory=tuple)
    constraints: Sequence[str] = field(default_factory=tuple)
    drop_constraints: Sequence[str] = field(default_factory=tuple)
    hypotheses: Sequence[HypothesisChange | Mapping[str, Any] | str] = field(default_factory=tuple)
    findings: Sequence[Finding | Mapping[str, Any] | str] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.task is not None:
            object.__setattr__(self, "task", _text(self.task, "task"))
        if self.subtask is not None:
            object.__setattr__(self, "subtask", _text(self.subtask, "subtask", allow_empty=True))
        if self.status is not None:
            object.__setattr__(self, "status", enum_member(TaskStatus, self.status, "status"))
        decisions = []
        for d in _seq(self.decisions, "decisions"):
            if isinstance(d, Decision):
                decisions.append(
                    Decision(
                        _text(d.text, "decision"), _text(d.rationale, "rationale", allow_empty=True)
                    )
                )
            elif isinstance(d, tuple) and len(d) == 2:
                decisions.append(
                    Decision(_text(d[0], "decision"), _text(d[1], "rationale", allow_empty=True))
                )
            elif isinstance(d, str):
                decisions.append(Decision(_text(d, "decision")))
            else:
                raise InvalidInput("a decision is a Decision, a (text, rationale) pair or a string")
        object.__setattr__(self, "decisions", tuple(decisions))
        for name in ("constraints", "drop_constraints"):
            values = tuple(_text(c, "constraint") for c in _seq(getattr(self, name), name))
            object.__setattr__(self, name, values)
        changes = tuple(HypothesisChange.given(h) for h in _seq(self.hypotheses, "hypotheses"))
        object.__setattr__(self, "hypotheses", changes)
        found = tuple(Finding.given(f) for f in _seq(self.findings, "findings"))
        object.__setattr__(self, "findings", found)


def _seq(value: object, what: str) -> Sequence[Any]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput(f"{what} must be a list")
    if len(value) > MAX_TASK_ITEMS:
        raise InvalidInput(f"{what} has more than {MAX_TASK_ITEMS} entries")
    return value


def _cited(evidence: tuple[str, ...]) -> str:
    if not evidence:
        return ""
    more = f" and {len(evidence) - 2} more" if len(evidence) > 2 else ""
    return f" [evidence: {', '.join(evidence[:2])}{more}]"
