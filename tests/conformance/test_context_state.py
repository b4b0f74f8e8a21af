"""The ContextState conformance suite: pins, summaries and their audit, task state, the
token ledger, session ownership.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from kenning.context.task import merge_task
from kenning.errors import InvalidInput, InvalidScope, ScopeConflict, StoreError
from kenning.records import (
    AuditAction,
    AuditEntry,
    PinDraft,
    PinKind,
    PinStatus,
    Scope,
    Summary,
    TaskState,
    TaskUpdate,
)
from kenning.store.protocol import Store
from tests.conformance.helpers import A1, A2, G1, T0, add, amount


def test_pins_version_on_change_and_keep_history(store: Store) -> None:
    [event] = add(store, A1, "refund 42.50 EUR")
    first = store.put_pins(A1, [PinDraft(PinKind.AMOUNT, "refund", "42.50 EUR", Decimal("42.50"),
                                         "EUR", source_event_id=event)], at=T0)  # fmt: skip
    assert [p.version for p in first] == [1]
    assert store.put_pins(A1, [amount("42.50")], at=T0) == []  # unchanged: nothing written
    second = store.put_pins(A1, [amount("40.00")], at=T0 + timedelta(seconds=1))
    assert [(p.version, p.amount) for p in second] == [(2, Decimal("40.00"))]
    # Extraction adds only: it never rewrites (or reopens) an existing key.
    assert store.put_pins(A1, [amount("1.00")], at=T0, mode="add") == []
    closed = PinDraft(PinKind.AMOUNT, "refund", "40.00 EUR", Decimal("40.00"), "EUR",
                      status=PinStatus.CLOSED)  # fmt: skip
    [pin] = store.put_pins(A1, [closed], at=T0 + timedelta(seconds=2))
    assert pin.closed_at is not None and pin.version == 3
    assert [p.version for p in store.pins(A1, history=True)] == [1, 2, 3]
    assert [p.status for p in store.pins(A1)] == [PinStatus.CLOSED]
    assert store.pins(A2) == [] and store.pins(G1) == []
    assert [p.key for p in store.pins(Scope("acme", "ann"))] == ["refund"]
    with pytest.raises(InvalidScope):
        store.put_pins(Scope("acme"), [amount("1")], at=T0)


def test_a_failing_pin_batch_writes_nothing(store: Store) -> None:
    good = PinDraft(PinKind.ENTITY_ID, "order_id:A-1", "A-1")
    bad = PinDraft(PinKind.ENTITY_ID, "order_id:A-2", "A-2", metadata={"x": object()})  # type: ignore[dict-item]
    with pytest.raises((StoreError, TypeError, InvalidInput)):
        store.put_pins(A1, [good, bad], at=T0)
    assert store.pins(A1, history=True) == []


def test_summaries_replace_and_audit_atomically(store: Store) -> None:
    add(store, A1, *[f"turn {i}" for i in range(6)])

    def summary(sid: str, level: int, first: int, last: int) -> Summary:
        return Summary(id=sid, scope=A1, level=level, first_seq=first, last_seq=last,
                       text=f"summary {sid}", body={"facts": []}, created_at=T0)  # fmt: skip

    entry = AuditEntry(
        scope=A1, at=T0, action=AuditAction.SEGMENT, first_seq=1, last_seq=3,
        tokens_before=100, tokens_after=10, summary_id="s1", summarizer="x",
    )  # fmt: skip
    store.put_summary(summary("s1", 1, 1, 3), audit=[entry])
    store.put_summary(summary("s2", 1, 4, 6), guard_pins=[PinDraft(PinKind.ENTITY_ID, "k", "v")])
    assert [s.id for s in store.summaries(A1)] == ["s1", "s2"]
    store.put_summary(summary("s3", 2, 1, 6), replaces=["s1", "s2"])
    assert [s.id for s in store.summaries(A1)] == ["s3"]
    assert len(store.summaries(A1, include_replaced=True)) == 3
    assert [p.key for p in store.pins(A1)] == ["k"]
    [logged] = store.audit_log(A1)
    assert (logged.action, logged.tokens_before, logged.tokens_after) == (
        AuditAction.SEGMENT,
        100,
        10,
    )
    assert store.summaries(A2) == [] and store.audit_log(G1) == []
    with pytest.raises(StoreError):  # a duplicate id fails the whole transaction
        store.put_summary(summary("s3", 1, 1, 1), replaces=["s3"])
    assert [s.id for s in store.summaries(A1)] == ["s3"]


def test_task_state_is_compare_and_set_per_session(store: Store) -> None:
    assert store.task_state(A1).empty and store.task_state(A1).version == 0
    first = merge_task(TaskState(), TaskUpdate(task="Refund", status="in_progress"))
    assert store.put_task_state(A1, first, expected=0, at=T0)
    second = merge_task(first, TaskUpdate(constraints=["max 50 EUR"]))
    # A writer that read version 0 lost the race: nothing is written.
    assert not store.put_task_state(A1, second, expected=0, at=T0)
    assert store.task_state(A1) == first
    assert store.put_task_state(A1, second, expected=1, at=T0)
    state = store.task_state(A1)
    assert (state.task, state.constraints, state.version) == ("Refund", ("max 50 EUR",), 2)
    assert store.task_state(A2).empty
    with pytest.raises(ScopeConflict):
        store.task_state(Scope("acme", "bob", "a-s1"))
    with pytest.raises(ScopeConflict):
        store.put_task_state(Scope("acme", "bob", "a-s1"), second, expected=2, at=T0)


def test_an_investigation_round_trips_on_every_backend(store: Store) -> None:
    state = merge_task(TaskState(), TaskUpdate(
        task="Fix the CI build",
        hypotheses=["flaky network", {"text": "stale cache", "status": "rejected",
                                      "reason": "cleared it, still fails", "evidence": ["ev_9"]}],
        findings=[{"text": "fails only on Python 3.11", "evidence": ["ev_1", "pin:id:B-7"]}],
    ))  # fmt: skip
    assert store.put_task_state(A1, state, expected=0, at=T0)
    assert store.task_state(A1) == state
    rejected = next(h for h in state.hypotheses if h.text == "stale cache")
    assert (rejected.status.value, rejected.evidence) == ("rejected", ("ev_9",))


def test_token_ledger_keeps_running_totals_and_tails(store: Store) -> None:
    ids = add(store, A1, "one", "two", "three", "four")
    assert store.ledger_head(A1, "enc") == (0, 0)
    store.extend_ledger(A1, "enc", [(1, 10), (2, 20)])
    store.extend_ledger(A1, "enc", [(2, 99), (3, 30), (4, 40)])  # seq 2 counted already
    assert store.ledger_head(A1, "enc") == (4, 100)
    assert store.ledger_cum(A1, "enc", 2) == 30 and store.ledger_cum(A1, "enc", 0) == 0
    assert store.ledger_tail(A1, "enc", room=75) == [(3, 30), (4, 40)]
    assert store.ledger_tail(A1, "enc", room=1000, after_seq=1) == [(2, 20), (3, 30), (4, 40)]
    snap = store.context_snapshot(A1, "enc", room=70)
    assert [r.id for r in snap.tail] == ids[2:] and [r.tokens for r in snap.tail] == [30, 40]
    assert (snap.total, snap.counted_seq, snap.last_seq) == (100, 4, 4)
    assert store.ledger_head(A2, "enc") == (0, 0) and store.ledger_head(A1, "other") == (0, 0)


def test_a_snapshot_reads_the_session_as_if_nothing_were_summarized(store: Store) -> None:
    ids = add(store, A1, "one", "two", "three", "four")
    store.extend_ledger(A1, "enc", [(1, 10), (2, 20), (3, 30), (4, 40)])
    store.put_summary(Summary(id="s", scope=A1, level=1, first_seq=1, last_seq=2, text="t",
                              created_at=T0))  # fmt: skip
    summarized = store.context_snapshot(A1, "enc", room=1_000)
    assert [s.id for s in summarized.summaries] == ["s"] and summarized.summarized == 30
    assert [r.id for r in summarized.tail] == ids[2:]
    whole = store.context_snapshot(A1, "enc", room=1_000, summarized=False)
    assert (whole.summaries, whole.summarized, whole.total) == ((), 0, 100)
    assert [r.id for r in whole.tail] == ids
    assert [r.id for r in store.context_snapshot(A1, "enc", room=70, summarized=False).tail] == (
        ids[2:]
    )


def test_forget_drops_what_derives_from_erased_events(store: Store) -> None:
    ids = add(store, A1, "order A-1", "order A-2", "chatter")
    drafts = [
        PinDraft(PinKind.ENTITY_ID, "o1", "A-1", source_event_id=ids[0]),
        PinDraft(PinKind.ENTITY_ID, "o2", "A-2", source_event_id=ids[1]),
    ]
    store.put_pins(A1, drafts, at=T0)
    store.put_summary(Summary(id="s", scope=A1, level=1, first_seq=1, last_seq=2, text="t",
                              created_at=T0))  # fmt: skip
    store.extend_ledger(A1, "enc", [(1, 5), (2, 5), (3, 5)])
    add(store, G1, "other tenant")
    store.put_pins(G1, [PinDraft(PinKind.ENTITY_ID, "o1", "A-1")], at=T0)
    assert store.forget(A1, ids=[ids[0]]) == 1
    assert [p.key for p in store.pins(A1, history=True)] == ["o2"]
    assert store.summaries(A1, include_replaced=True) == []
    assert store.ledger_head(A1, "enc") == (0, 0)
    store.forget(A1)
    assert store.pins(A1, history=True) == []
    assert [p.key for p in store.pins(G1)] == ["o1"]


def test_a_session_belongs_to_the_user_who_first_wrote_to_it(store: Store) -> None:
    """Pins, task state and jobs claim a new session for their user; another user naming
    that session id is refused on every path, reads included."""
    mine = Scope("acme", "ann", "fresh")
    theirs = Scope("acme", "bob", "fresh")
    store.put_pins(mine, [PinDraft(PinKind.ENTITY_ID, "id:A-1", "A-1")], at=T0)
    for call in (
        lambda: store.pins(theirs),
        lambda: store.summaries(theirs),
        lambda: store.audit_log(theirs),
        lambda: store.compaction_jobs(theirs),
        lambda: store.task_state(theirs),
        lambda: store.ledger_head(theirs, "enc"),
        lambda: store.context_snapshot(theirs, "enc", room=100),
        lambda: store.events(theirs),
        lambda: store.put_pins(theirs, [PinDraft(PinKind.ENTITY_ID, "id:B-2", "B-2")], at=T0),
        lambda: store.enqueue_compaction(theirs, model="m", budget=10, reason="r", at=T0),
    ):
        with pytest.raises(ScopeConflict):
            call()
    assert [p.value for p in store.pins(Scope("acme"))] == ["A-1"]
    # A whole-scope erase takes sessions without events along.
    store.forget(Scope("acme", "ann"))
    assert store.pins(Scope("acme"), history=True) == []
    store.put_pins(theirs, [PinDraft(PinKind.ENTITY_ID, "id:B-2", "B-2")], at=T0)
    assert [p.scope.user for p in store.pins(Scope("acme"))] == ["bob"]
