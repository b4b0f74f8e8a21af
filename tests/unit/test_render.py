"""Rendering rules of window pieces (pure)."""

from __future__ import annotations

from kenning.context.render import pin_order
from kenning.records import Pin, PinKind, PinStatus, Scope

S = Scope("t", "u", "s")


def pin(key: str, value: str, kind: PinKind = PinKind.ENTITY_ID, **meta: str) -> Pin:
    return Pin(id=key, scope=S, kind=kind, key=key, value=value, metadata=meta)


def test_an_id_under_several_keys_is_shown_once_preferring_structured_data() -> None:
    text = pin("ref:RF-1", "RF-1", pattern="ref")
    tool = pin("refund_id:RF-1", "RF-1")
    other = pin("order_id:A-1", "A-1", pattern="order_id")
    assert [p.key for p in pin_order([text, other, tool])] == ["order_id:A-1", "refund_id:RF-1"]
    assert [p.key for p in pin_order([text, other])] == ["ref:RF-1", "order_id:A-1"]


def test_open_pins_come_first_then_by_kind() -> None:
    closed = Pin(id="c", scope=S, kind=PinKind.APPROVAL, key="c", value="x",
                 status=PinStatus.CLOSED)  # fmt: skip
    amount = pin("amount:EUR:1.00", "1.00 EUR", PinKind.AMOUNT)
    approval = pin("approval:APR-1", "APR-1", PinKind.APPROVAL)
    assert [p.id for p in pin_order([closed, amount, approval])] == [
        "approval:APR-1", "amount:EUR:1.00", "c",
    ]  # fmt: skip
