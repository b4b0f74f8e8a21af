"""The agent's task state for a session, and the deterministic rules that merge updates.

Merge rules (:func:`merge_task`), applied to the stored state and one :class:`TaskUpdate`:

1. ``task`` and ``subtask`` replace the stored text when given (``""`` clears ``subtask``).
2. ``status`` replaces the stored status when given. Moving to ``done`` clears ``subtask``.
3. ``decisions`` are appended in order; a decision whose normalised text (case and spacing
   ignored) is already recorded is not added again, and keeps its first rationale.
4. ``constraints`` are added in order, de-duplicated the same way; ``drop_constraints``
   removes matching ones first, so an update may replace a constraint.
5. Every merge that changes something increments ``version``; an update that changes
   nothing leaves the state (and its version) as it was.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kenning.errors import InvalidInput

__all__ = ["Decision", "TaskState", "TaskStatus", "TaskUpdate", "merge_task"]

_MAX_TEXT = 2_000
_MAX_ITEMS = 200


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
    version: int = 0

    @property
    def empty(self) -> bool:
        return not (self.task or self.subtask or self.decisions or self.constraints) and (
            self.status is TaskStatus.NOT_STARTED
        )

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
            version=int(data.get("version", 0)),
        )


def _text(value: object, what: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string")
    text = " ".join(value.split())
    if not text and not allow_empty:
        raise InvalidInput(f"{what} is empty")
    if len(text) > _MAX_TEXT:
        raise InvalidInput(f"{what} has {len(text)} characters, over the maximum of {_MAX_TEXT}")
    return text


def _key(text: str) -> str:
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

    def __post_init__(self) -> None:
        if self.task is not None:
            object.__setattr__(self, "task", _text(self.task, "task"))
        if self.subtask is not None:
            object.__setattr__(self, "subtask", _text(self.subtask, "subtask", allow_empty=True))
        if self.status is not None:
            try:
                object.__setattr__(self, "status", TaskStatus(self.status))
            except ValueError as exc:
                raise InvalidInput(
                    f"status {self.status!r:.40} is invalid: use one of "
                    f"{[s.value for s in TaskStatus]}"
                ) from exc
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


def _seq(value: object, what: str) -> Sequence[Any]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput(f"{what} must be a list")
    if len(value) > _MAX_ITEMS:
        raise InvalidInput(f"{what} has more than {_MAX_ITEMS} entries")
    return value


def merge_task(state: TaskState, update: TaskUpdate) -> TaskState:
    """Apply *update* to *state* by the rules in this module's docstring."""
    merged = state
    if update.task is not None:
        merged = replace(merged, task=update.task)
    if update.subtask is not None:
        merged = replace(merged, subtask=update.subtask)
    if update.status is not None:
        status = TaskStatus(update.status)
        merged = replace(
            merged, status=status, subtask="" if status is TaskStatus.DONE else merged.subtask
        )
    if update.decisions:
        seen = {_key(d.text) for d in merged.decisions}
        added = list(merged.decisions)
        for d in update.decisions:
            assert isinstance(d, Decision)
            if _key(d.text) not in seen:
                seen.add(_key(d.text))
                added.append(d)
        merged = replace(merged, decisions=tuple(added)[-_MAX_ITEMS:])
    if update.constraints or update.drop_constraints:
        drop = {_key(c) for c in update.drop_constraints}
        kept = [c for c in merged.constraints if _key(c) not in drop]
        seen = {_key(c) for c in kept}
        for c in update.constraints:
            if _key(c) not in seen:
                seen.add(_key(c))
                kept.append(c)
        merged = replace(merged, constraints=tuple(kept)[-_MAX_ITEMS:])
    if replace(merged, version=state.version) == state:
        return state
    return replace(merged, version=state.version + 1)
