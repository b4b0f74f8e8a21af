"""The documented merge rules of the agent's task state."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.context.task import merge_task
from kenning.errors import InvalidInput
from kenning.records import Decision, TaskState, TaskStatus, TaskUpdate


def test_updates_merge_by_the_documented_rules() -> None:
    state = merge_task(TaskState(), TaskUpdate(task="Refund order A-123", status="in_progress"))
    assert (state.task, state.status, state.version) == (
        "Refund order A-123",
        TaskStatus.IN_PROGRESS,
        1,
    )
    state = merge_task(state, TaskUpdate(subtask="await approval", constraints=["max 50 EUR"]))
    state = merge_task(
        state, TaskUpdate(decisions=[("refund to card", "customer asked"), "refund to card"])
    )
    assert state.decisions == (Decision("refund to card", "customer asked"),)
    state = merge_task(state, TaskUpdate(constraints=["MAX 50  eur", "no store credit"]))
    assert state.constraints == ("max 50 EUR", "no store credit")
    state = merge_task(
        state, TaskUpdate(drop_constraints=["max 50 eur"], constraints=["max 60 EUR"])
    )
    assert state.constraints == ("no store credit", "max 60 EUR")
    done = merge_task(state, TaskUpdate(status="done"))
    assert done.subtask == "" and done.status is TaskStatus.DONE
    assert done.version == state.version + 1
    assert "Task: Refund order A-123 (done)" in done.render()


def test_an_update_that_changes_nothing_keeps_the_version() -> None:
    state = merge_task(TaskState(), TaskUpdate(task="x"))
    assert merge_task(state, TaskUpdate(task="x")) is state


@pytest.mark.parametrize(
    "kwargs",
    [
        {"status": "finished"},
        {"task": ""},
        {"decisions": "not a list"},
        {"constraints": [3]},
        {"task": "a\x00b"},
        {"constraints": ["\ud800"]},
        {"decisions": [("ok", "why\udfff")]},
    ],
)
def test_bad_updates_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        TaskUpdate(**kwargs)  # type: ignore[arg-type]


# Storable text: no NUL, no lone surrogate (those are refused; see test_bad_updates_are_refused).
_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=20)


@given(st.lists(_TEXT.filter(str.strip), max_size=10))
def test_constraints_stay_unique_and_json_round_trips(values: list[str]) -> None:
    state = merge_task(TaskState(), TaskUpdate(constraints=values))
    keys = [" ".join(c.lower().split()) for c in state.constraints]
    assert len(keys) == len(set(keys))
    assert TaskState.from_json(state.to_json()) == state


def test_a_rejected_hypothesis_is_refused_until_reopened_with_a_reason() -> None:
    state = merge_task(TaskState(), TaskUpdate(hypotheses=[
        {"text": "Stale cache", "status": "rejected", "reason": "cleared it, still fails"},
    ]))  # fmt: skip
    for again in ("stale  CACHE", {"text": "stale cache", "status": "supported"}):
        with pytest.raises(
            InvalidInput, match=r"rejected at version 1 \(cleared it, still fails\)"
        ):
            merge_task(state, TaskUpdate(task="x", hypotheses=[again]))
    with pytest.raises(InvalidInput, match="needs a reason"):
        TaskUpdate(hypotheses=[{"text": "stale cache", "reopen": True}])
    with pytest.raises(InvalidInput, match="needs a reason"):
        TaskUpdate(hypotheses=[{"text": "bad merge", "status": "rejected"}])
    reopened = merge_task(state, TaskUpdate(hypotheses=[
        {"text": "stale cache", "reopen": True, "reason": "a second cache layer"},
    ]))  # fmt: skip
    (h,) = reopened.hypotheses
    assert (h.status.value, h.reason, h.changed_at) == ("open", "a second cache layer", 2)


def test_the_goal_tier_keeps_rejections_first_when_its_cap_binds() -> None:
    from kenning import ContextSettings, Memory, Scope, Settings, Tier, TierCaps

    update = TaskUpdate(
        task="Fix the CI build",
        hypotheses=[f"open idea number {n} about the network and the runners" for n in range(12)]
        + [{"text": "stale cache", "status": "rejected", "reason": "cleared it, still fails"}],
        findings=[{"text": "fails only on Python 3.11", "evidence": ["ev_1"]}],
    )
    settings = Settings(context=ContextSettings(caps=TierCaps(goal=0.2)))
    with Memory.open(":memory:", embedder=None, settings=settings) as memory:
        scope = Scope("acme", "dev", "s1")
        memory.add_events(scope, [{"role": "user", "content": "CI fails again"}])
        memory.context.update_task(scope, update)
        window = memory.assemble(scope, budget_tokens=400, model="gpt-4o", system="s")
    goal = next(m["content"] for m in window.messages if "Fix the CI build" in m["content"])
    assert "Rejected: stale cache (because cleared it, still fails)" in goal
    assert "Verified: fails only on Python 3.11" in goal
    assert "open idea number 11" not in goal  # open hypotheses go first when the cap binds
    assert window.tiers[Tier.GOAL].tokens <= 80


def test_a_finding_to_promote_is_named_by_its_id_and_cites_its_evidence() -> None:
    from kenning.context.task import finding_to_promote, promoted_source
    from kenning.errors import NotFound
    from kenning.records import Pin, PinKind, Scope
    from kenning.tools import ContextTarget, default_registry

    state = merge_task(TaskState(), TaskUpdate(
        hypotheses=[{"text": "A supported idea", "status": "supported"}],
        findings=[{"text": "Timeout is 5 s", "evidence": ["pin:cfg", "e-7"]},
                  {"text": "Only pins", "evidence": ["pin:cfg", "pin:none"]}, "No evidence"],
    ))  # fmt: skip
    timeout, pinned, bare = state.findings
    same = merge_task(TaskState(), TaskUpdate(findings=["timeout IS  5 s"])).findings[0]
    assert timeout.id.startswith("f_") and timeout.id == same.id  # case and spacing ignored
    assert TaskState.from_json(state.to_json()).findings[0].id == timeout.id
    assert state.to_json()["findings"][0]["id"] == timeout.id
    assert finding_to_promote(state, timeout.id) == timeout
    with pytest.raises(InvalidInput, match="supported hypothesis"):
        finding_to_promote(state, state.hypotheses[0].id)
    with pytest.raises(NotFound):
        finding_to_promote(state, "f_123")
    for bad in ("", "a/b", None, "x" * 129):
        with pytest.raises(InvalidInput):
            finding_to_promote(state, bad)
    pin = Pin(id="p1", scope=Scope("a", "u", "s"), key="cfg", kind=PinKind.ENTITY_ID,
              value="cfg-9", version=1, source_event_id="e-1")  # fmt: skip
    assert promoted_source(timeout, [pin]) == "e-7"  # an event id before a pin's source
    assert promoted_source(pinned, [pin]) == "e-1" and promoted_source(bare, []) is None
    # Promotion is the host's: the agent tools' view of memory.context has no such method.
    assert not hasattr(ContextTarget, "promote_finding")
    assert not [n for n in default_registry().names if "promot" in n]
