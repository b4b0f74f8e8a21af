"""The deterministic rules that merge a :class:`~kenning.records.TaskUpdate` into a session's
:class:`~kenning.records.TaskState` (pure; the store only keeps the result).

Merge rules (:func:`merge_task`), applied to the stored state and one update:

1. ``task`` and ``subtask`` replace the stored text when given (``""`` clears ``subtask``).
2. ``status`` replaces the stored status when given. Moving to ``done`` clears ``subtask``.
3. ``decisions`` are appended in order; a decision whose normalised text (case and spacing
   ignored) is already recorded is not added again, and keeps its first rationale.
4. ``constraints`` are added in order, de-duplicated the same way; ``drop_constraints``
   removes matching ones first, so an update may replace a constraint.
5. ``hypotheses`` are named by their text (case and spacing ignored), applied in order: a new
   one is added with its status; a known one takes the update's status, keeps the union of its
   evidence and the latest reason. A rejected hypothesis stays rejected: an update that proposes
   or supports it again is refused (``InvalidInput`` naming the rejection and its reason, and
   nothing of the update is applied) unless it says ``reopen`` with a reason. Rejecting needs a
   reason. ``changed_at`` is the version the change made.
6. ``findings`` are a set named by their text: a known one keeps its first version and gains
   the new evidence; none is ever removed. Evidence merges in first-seen order, so applying the
   same changes in any order gives the same sets.
7. Every merge that changes something increments ``version``; an update that changes
   nothing leaves the state (and its version) as it was. Hypotheses and findings are capped at
   ``MAX_TASK_ITEMS`` each: an update past the cap is refused, nothing is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from kenning.errors import InvalidInput, NotFound
from kenning.records.core import Pin
from kenning.records.investigation import (
    Finding,
    Hypothesis,
    HypothesisChange,
    HypothesisStatus,
    hypothesis_id,
)
from kenning.records.task import (
    MAX_TASK_ITEMS,
    Decision,
    TaskState,
    TaskStatus,
    TaskUpdate,
    task_key,
)

__all__ = ["finding_to_promote", "merge_task", "promoted_source"]

# What a finding or hypothesis id may look like (letters, digits, underscores), checked the
# same embedded and served (the promote route's path pattern).
_RECORD_ID = re.compile(r"[A-Za-z0-9_]{1,128}")


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
    at = state.version + 1
    if update.hypotheses:
        merged = replace(merged, hypotheses=_hypotheses(merged.hypotheses, update, at))
    if update.findings:
        merged = replace(merged, findings=_findings(merged.findings, update, at))
    if replace(merged, version=state.version) == state:
        return state
    return replace(merged, version=at)


def _hypotheses(
    held: tuple[Hypothesis, ...], update: TaskUpdate, at: int
) -> tuple[Hypothesis, ...]:
    by_id = {h.id: h for h in held}
    for change in update.hypotheses:
        assert isinstance(change, HypothesisChange)
        key = hypothesis_id(change.text)
        known = by_id.get(key)
        by_id[key] = _changed(known, change, key, at) if known else Hypothesis(
            key, change.text, HypothesisStatus(change.status), tuple(change.evidence),
            change.reason, at,
        )  # fmt: skip
    if len(by_id) > MAX_TASK_ITEMS:
        raise InvalidInput(f"the task state holds at most {MAX_TASK_ITEMS} hypotheses")
    return tuple(by_id.values())


def _changed(known: Hypothesis, change: HypothesisChange, key: str, at: int) -> Hypothesis:
    status = HypothesisStatus(change.status)
    rejected = known.status is HypothesisStatus.REJECTED
    if rejected and status is not HypothesisStatus.REJECTED and not change.reopen:
        raise InvalidInput(
            f"hypothesis {known.text!r:.120} was rejected at version {known.changed_at} "
            f"({known.reason}); send reopen with a reason to reopen it"
        )
    evidence = tuple(dict.fromkeys((*known.evidence, *change.evidence)))
    updated = replace(known, status=status, evidence=evidence,
                      reason=change.reason or known.reason)  # fmt: skip
    return known if updated == known else replace(updated, changed_at=at)


def _findings(held: tuple[Finding, ...], update: TaskUpdate, at: int) -> tuple[Finding, ...]:
    by_key = {task_key(f.text): f for f in held}
    for new in update.findings:
        assert isinstance(new, Finding)
        known = by_key.get(task_key(new.text))
        if known is None:
            by_key[task_key(new.text)] = replace(new, found_at=at)
        else:
            evidence = tuple(dict.fromkeys((*known.evidence, *new.evidence)))
            by_key[task_key(new.text)] = replace(known, evidence=evidence)
    if len(by_key) > MAX_TASK_ITEMS:
        raise InvalidInput(f"the task state holds at most {MAX_TASK_ITEMS} findings")
    return tuple(by_key.values())


def finding_to_promote(state: TaskState, finding_id: object) -> Finding:
    """The finding *finding_id* names in *state*, to be promoted to a long-term fact.

    Raises:
        InvalidInput: *finding_id* is not an id string, or names a hypothesis (a hypothesis,
            even a supported one, is not verified: record it as a finding first).
        NotFound: the session's task state holds no such finding.
    """
    if not isinstance(finding_id, str) or not _RECORD_ID.fullmatch(finding_id):
        raise InvalidInput("finding_id must be a finding's id (f_..., from the task state)")
    found = next((f for f in state.findings if f.id == finding_id), None)
    if found is not None:
        return found
    hypothesis = next((h for h in state.hypotheses if h.id == finding_id), None)
    if hypothesis is not None or finding_id.startswith("h_"):
        what = f"the {hypothesis.status.value} hypothesis" if hypothesis else "a hypothesis id"
        raise InvalidInput(
            f"{finding_id!r:.40} is {what}, not a verified finding: only findings are "
            "promoted (record it as a finding with its evidence first)"
        )
    raise NotFound(f"no finding {finding_id!r:.40} in the session's task state")


def promoted_source(finding: Finding, pins: Sequence[Pin]) -> str | None:
    """The event a fact promoted from *finding* cites as its source: the first evidence entry
    that is an event id, else the source event of the first cited pin that has one."""
    for entry in finding.evidence:
        if not entry.startswith("pin:"):
            return entry
    by_key = {p.key: p for p in pins}
    for entry in finding.evidence:
        pin = by_key.get(entry.removeprefix("pin:"))
        if pin is not None and pin.source_event_id:
            return pin.source_event_id
    return None
