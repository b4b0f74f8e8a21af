"""Property tests of the investigation's merge rules (kenning.context.task): over any sequence
of updates, a rejected hypothesis never comes back open or supported without an explicit
reopen, no finding (or piece of its evidence) is lost, a refused update changes nothing, and
the set-like fields come out the same whatever order their updates arrive in."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.context.task import merge_task
from kenning.errors import InvalidInput
from kenning.records import HypothesisStatus, TaskState, TaskUpdate
from kenning.records.investigation import hypothesis_id

TEXTS = ["flaky network", "Stale cache", "stale  CACHE", "bad merge", "disk full"]
EVIDENCE = st.lists(st.sampled_from(["ev_1", "ev_2", "ev_3", "pin:id:A-1"]), max_size=3)

change = st.fixed_dictionaries(
    {"text": st.sampled_from(TEXTS), "status": st.sampled_from(["open", "supported", "rejected"])},
    optional={"evidence": EVIDENCE, "reopen": st.booleans()},
).map(lambda c: {**c, "reason": "because" if c["status"] == "rejected" or c.get("reopen") else ""})
finding = st.fixed_dictionaries(
    {"text": st.sampled_from(["fails on 3.11", "Fails  on 3.11", "passes locally", "ok on ARM"]),
     "evidence": EVIDENCE}
)  # fmt: skip
update = st.builds(
    lambda hs, fs: TaskUpdate(hypotheses=hs, findings=fs),
    st.lists(change, max_size=3),
    st.lists(finding, max_size=2),
)


def _apply(state: TaskState, u: TaskUpdate) -> tuple[TaskState, bool]:
    try:
        return merge_task(state, u), True
    except InvalidInput:
        return state, False


@settings(max_examples=300, deadline=None)
@given(st.lists(update, max_size=12))
def test_rejections_hold_and_findings_are_never_lost(updates: list[TaskUpdate]) -> None:
    state = TaskState()
    for u in updates:
        before = state
        state, applied = _apply(state, u)
        if not applied:
            assert state is before  # a refused update changes nothing
            continue
        reopened = {hypothesis_id(c.text) for c in u.hypotheses if c.reopen}  # type: ignore[union-attr]
        now = {h.id: h for h in state.hypotheses}
        for h in before.hypotheses:
            if h.status is HypothesisStatus.REJECTED and h.id not in reopened:
                assert now[h.id].status is HypothesisStatus.REJECTED
            assert set(h.evidence) <= set(now[h.id].evidence)
        kept = {" ".join(f.text.lower().split()): f for f in state.findings}
        for f in before.findings:
            mine = kept[" ".join(f.text.lower().split())]
            assert set(f.evidence) <= set(mine.evidence) and mine.found_at == f.found_at


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(finding, min_size=1, max_size=2), min_size=1, max_size=4))
def test_findings_merge_the_same_in_any_order(batches: list[list[dict[str, object]]]) -> None:
    results = set()
    for order in itertools.permutations(batches):
        state = TaskState()
        for batch in order:
            state = merge_task(state, TaskUpdate(findings=batch))
        results.add(frozenset(
            (" ".join(f.text.lower().split()), frozenset(f.evidence)) for f in state.findings
        ))  # fmt: skip
    assert len(results) == 1
