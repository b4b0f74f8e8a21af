"""Procedures: versioned playbooks bound to their tool schemas, drift, candidates, windows."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning import Memory, Scope, TaskUpdate
from kenning.errors import InvalidInput
from kenning.longterm.procedures import tool_hash
from kenning.records import ProcedureStatus

LOOKUP = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Find an order",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
}
REFUND = {
    "type": "function",
    "function": {
        "name": "refund",
        "description": "Refund a payment",
        "parameters": {"type": "object", "properties": {"amount": {"type": "string"}}},
    },
}
REFUND_V2 = {
    "type": "function",
    "function": {
        "name": "refund",
        "description": "Refund a payment",
        "parameters": {
            "type": "object",
            "properties": {"amount": {"type": "string"}, "currency": {"type": "string"}},
        },
    },
}


def test_the_tool_hash_ignores_order_and_sees_any_change() -> None:
    assert tool_hash([LOOKUP, REFUND]) == tool_hash([REFUND, LOOKUP])
    assert tool_hash([LOOKUP, REFUND]) != tool_hash([LOOKUP, REFUND_V2])


def test_drift_is_detected_and_reported(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "p.db", embedder=None) as memory:
        scope = Scope("acme")
        first = memory.procedures.record(
            scope, "refund a double charge", ["look up the order", "refund the second charge"],
            tools=[LOOKUP, REFUND], active=True,
        )  # fmt: skip
        assert (first.version, first.status) == (1, ProcedureStatus.ACTIVE)
        match = memory.procedures.get("acme", "refund a double charge", tools=[LOOKUP, REFUND])
        assert match.procedure == first and match.drifted == ()
        # The refund tool changed its schema: the playbook no longer matches.
        drifted = memory.procedures.get("acme", "refund a double charge", tools=[LOOKUP, REFUND_V2])
        assert drifted.procedure is None and drifted.drifted == (first,)
        forced = memory.procedures.get(
            "acme", "refund a double charge", tools=[LOOKUP, REFUND_V2], include_drift=True
        )
        assert forced.procedure == first
        second = memory.procedures.record(
            scope, "refund a double charge", ["look up the order", "refund in the order currency"],
            tools=[LOOKUP, REFUND_V2], active=True,
        )  # fmt: skip
        assert second.version == 2
        versions = memory.procedures.list("acme", name="refund a double charge")
        assert [(p.version, p.status) for p in versions] == [
            (1, ProcedureStatus.RETIRED),
            (2, ProcedureStatus.ACTIVE),
        ]


def test_a_candidate_from_a_completed_task_needs_approval(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "p.db", embedder=None) as memory:
        chat = Scope("acme", "dana", "s1")
        memory.add_events(chat, [
            {"role": "user", "content": "I was charged twice for A-1042"},
            {"role": "tool", "tool_name": "lookup_order", "content": "found",
             "tool_args": {"order_id": "A-1042"}},
            {"role": "tool", "tool_name": "refund", "content": "refunded",
             "tool_args": {"amount": "42.50"}},
        ])  # fmt: skip
        with pytest.raises(InvalidInput, match="not done"):
            memory.procedures.candidate_from_task(chat, "double charge", tools=[LOOKUP, REFUND])
        memory.context.update_task(chat, TaskUpdate(task="refund a double charge", status="done"))
        candidate = memory.procedures.candidate_from_task(
            chat, "double charge", tools=[LOOKUP, REFUND]
        )
        assert candidate.status is ProcedureStatus.CANDIDATE
        assert candidate.steps == (
            "call lookup_order with order_id", "call refund with amount",
            "outcome: refund a double charge",
        )  # fmt: skip
        assert (
            memory.procedures.get("acme", "double charge", tools=[LOOKUP, REFUND]).procedure is None
        )
        approved = memory.procedures.approve("acme", candidate.id)
        assert (
            memory.procedures.get("acme", "double charge", tools=[LOOKUP, REFUND]).procedure
            == approved
        )


def test_a_matching_playbook_enters_the_tools_tier(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "p.db", embedder=None) as memory:
        memory.procedures.record(
            Scope("acme"), "refund a double charge", ["look up the order", "refund one charge"],
            tools=[LOOKUP, REFUND], active=True,
        )  # fmt: skip
        chat = Scope("acme", "dana", "s1")
        memory.add_events(chat, [{"role": "user", "content": "Hello"}])
        common = {"budget_tokens": 2_000, "model": "gpt-4o", "system": "Help."}
        window = memory.assemble(
            chat, goal="Refund the double charge", tools=[LOOKUP, REFUND], **common
        )
        text = str(window.messages)
        assert "Playbook refund a double charge (v1)" in text and "2. refund one charge" in text
        assert [t["function"]["name"] for t in window.tools] == ["lookup_order", "refund"]
        other = memory.assemble(
            chat, goal="Refund the double charge", tools=[LOOKUP, REFUND_V2], **common
        )
        assert "Playbook" not in str(other.messages)  # drifted: left out
        unrelated = memory.assemble(
            chat, goal="Change the delivery address", tools=[LOOKUP, REFUND], **common
        )
        assert "Playbook" not in str(unrelated.messages)
