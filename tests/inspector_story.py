"""A support conversation for the inspector's page tests: 300 hourly turns of one customer, a
refund of an order (its id and amount pinned, the amount corrected once), a move (the fact
read from "I live in Berlin" superseded by the one read from "I just moved to Lisbon"), and a
contact preference the customer states and the application then revokes. Written through the
REST client, as a host application would; the facts are the server's own extraction."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from kenning import Client, Fact, Scope

__all__ = ["MARKUP", "ORDER_ID", "REFUND_AMOUNT", "Story", "tell_story"]

ORDER_ID = "A-77123"
REFUND_AMOUNT = "149.90"
#: What a customer may type that a page must show as text, never run.
MARKUP = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
_START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

_USER_LINES = (
    "Hi, my order {order} arrived with a cracked screen.",
    "The parcel was left at the door, the box was dented too.",
    "Can you check where my replacement is?",
    "I would rather have my money back than wait again.",
    "Is there anything else you need from me?",
    "Thanks, that helps. One more question about shipping times.",
)
_ASSISTANT_LINES = (
    "Sorry to hear that. Let me look up order {order}.",
    "I can see the shipment; the carrier marked it delivered on Monday.",
    "I have opened a case for you; a photo of the damage would help.",
    "Understood, I will prepare a refund instead of a replacement.",
    "Nothing else for now, the case is complete.",
    "Standard shipping takes three to five working days.",
)


@dataclass(frozen=True)
class Story:
    """What was written: the session's scope, and the fact ids the test looks at."""

    scope: Scope
    old_city: Fact
    new_city: Fact
    preference: Fact


def _turns() -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for n in range(300):
        at = (_START + timedelta(hours=n)).isoformat()
        base: dict[str, Any] = {"id": f"t{n:03d}", "at": at}
        if n == 40:
            turns.append(base | {"role": "user", "content": "I live in Berlin, ship it there."})
        elif n == 120:
            turns.append(base | {"role": "user",
                                 "content": "Big news: I just moved to Lisbon."})  # fmt: skip
        elif n == 150:
            turns.append(base | {"role": "user", "content": "I prefer email over phone calls."})
        elif n == 200:
            turns.append(base | {"role": "tool", "tool_name": "lookup_order",
                                 "tool_args": {"order_id": ORDER_ID},
                                 "tool_result": {"status": "delivered", "total": REFUND_AMOUNT,
                                                 "currency": "EUR"}})  # fmt: skip
        elif n == 201:
            turns.append(base | {"role": "assistant",
                                 "content": f"Refund of {REFUND_AMOUNT} EUR for order "
                                            f"{ORDER_ID} is approved."})  # fmt: skip
        elif n == 260:
            text = "Actually, phone is fine too, forget the email."
            turns.append(base | {"role": "user", "content": text})
        else:
            lines = _USER_LINES if n % 2 == 0 else _ASSISTANT_LINES
            text = lines[(n // 2) % len(lines)].format(order=ORDER_ID)
            turns.append(base | {"role": "user" if n % 2 == 0 else "assistant",
                                 "content": f"{text} (turn {n})"})  # fmt: skip
    return turns


def tell_story(client: Client, tenant: str, *, user: str = "dana") -> Story:
    """Write the conversation and its pins in *tenant*, wait for the server to read its facts,
    revoke the preference, and compact the session's start."""
    scope = Scope(tenant, user, "support-1")
    client.add_events(scope, _turns())
    client.add_events(Scope(tenant, user, "support-0"),
                      [{"role": "user", "content": f"Where is my invoice? {MARKUP}"}])  # fmt: skip
    client.add_events(Scope(tenant, "erik", "chat-9"),
                      [{"role": "user", "content": "Do you ship to Oslo?"}])  # fmt: skip
    client.context.set_pin(scope, "entity_id", ORDER_ID, key="order", source_event_id="t000")
    for amount in ("159.90", REFUND_AMOUNT):  # the agent's first figure, then the right one
        client.context.set_pin(scope, "amount", f"refund of order {ORDER_ID}", key="refund",
                               amount=amount, currency="EUR", source_event_id="t201")  # fmt: skip
    old, new, preference = _extracted(client, Scope(tenant, user))
    client.facts.revoke(Scope(tenant, user), preference.id)
    client.context.compact(scope, budget_tokens=2_000, model="gpt-4o")
    return Story(scope, old, new, preference)


def _extracted(client: Client, user: Scope, timeout_s: float = 60) -> tuple[Fact, Fact, Fact]:
    """The two location facts and the preference, once the server's extraction read them."""
    deadline = time.monotonic() + timeout_s
    while True:
        facts = client.facts.list(user, include_closed=True)
        cities = {f.value: f for f in facts if f.attribute == "location"}
        liked = [f for f in facts if f.attribute.startswith("preference:email")]
        if {"Berlin", "Lisbon"} <= cities.keys() and liked:
            return cities["Berlin"], cities["Lisbon"], liked[0]
        assert time.monotonic() < deadline, [(f.attribute, f.value) for f in facts]
        time.sleep(0.2)
