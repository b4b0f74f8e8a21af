"""The deterministic rules that merge a :class:`~kenning.records.TaskUpdate` into a session's
:class:`~kenning.records.TaskState` (pure; the store only keeps the result).

Merge rules (:func:`merge_task`), applied to the stored state and one update:

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

from dataclasses import replace

from kenning.records.task import (
    MAX_TASK_ITEMS,
    Decision,
    TaskState,
    TaskStatus,
    TaskUpdate,
    task_key,
)

__all__ = ["merge_task"]


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
        seen = {task_key(d.text) for d in merged.decisions}
        added = list(merged.decisions)
        for d in update.decisions:
            assert isinstance(d, Decision)
            if task_key(d.text) not in seen:
                seen.add(task_key(d.text))
                added.append(d)
        merged = replace(merged, decisions=tuple(added)[-MAX_TASK_ITEMS:])
    if update.constraints or update.drop_constraints:
        drop = {task_key(c) for c in update.drop_constraints}
        kept = [c for c in merged.constraints if task_key(c) not in drop]
        seen = {task_key(c) for c in kept}
        for c in update.constraints:
            if task_key(c) not in seen:
                seen.add(task_key(c))
                kept.append(c)
        merged = replace(merged, constraints=tuple(kept)[-MAX_TASK_ITEMS:])
    if replace(merged, version=state.version) == state:
        return state
    return replace(merged, version=state.version + 1)
