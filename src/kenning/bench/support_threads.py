"""Seeded synthetic support threads for ``kenning bench pins``: the values that matter (an order
id, an amount with its currency, a human approval id, an open obligation) said once near the
start, then buried under long chatter and repeated status dumps."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

__all__ = ["APPROVAL_TOOL", "RequiredField", "SupportThread", "generate_thread"]

#: The tool whose result carries the human approval (a host lists it as authoritative).
APPROVAL_TOOL = "request_approval"

_CURRENCIES = ("EUR", "USD", "GBP", "CHF")
_SYMBOL = {"EUR": "€", "USD": "$", "GBP": "£"}
_TOPICS = (
    "the weather this week", "a football match", "a new phone", "holiday plans", "a cooking "
    "recipe", "a podcast episode", "traffic on the motorway", "a birthday party", "a garden "
    "project", "an old movie", "a book club", "the price of coffee", "a running race",
)  # fmt: skip
_FILLER = (
    "Honestly it has been a long week and I keep thinking about {t}.",
    "Sorry for rambling, but {t} reminded me of something my neighbour said.",
    "While we wait, did you hear anything about {t}? Everyone is talking about it.",
    "I appreciate the patience. By the way, {t} turned out better than expected.",
    "No rush at all; I was just reading about {t} and lost track of time.",
)
_AGENT = (
    "Thanks for sharing! I'm still here and happy to chat about {t} while the system updates.",
    "That sounds lovely. I noted your message; nothing changes on the case for now.",
    "I understand. Let me know if there is anything else, and enjoy {t}.",
)
_PLANS = ("Nimbus", "Harbor", "Quartz", "Juniper", "Saffron", "Tundra", "Velvet", "Cobalt")


@dataclass(frozen=True, slots=True)
class RequiredField:
    """A value that must be in every window; present if any of its renderings is."""

    name: str
    renderings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SupportThread:
    head: tuple[dict[str, Any], ...]
    chatter: tuple[dict[str, Any], ...]
    required: tuple[RequiredField, ...]
    budget: int


def _amount_text(rng: random.Random, amount: str, currency: str) -> str:
    whole, cents = amount.split(".")
    grouped = f"{int(whole):,}"
    style = rng.randrange(4)
    if style == 0 and currency in _SYMBOL:
        return f"{_SYMBOL[currency]}{grouped}.{cents}"
    if style == 1:
        return f"{grouped}.{cents} {currency}"
    if style == 2:
        return f"{currency} {grouped}.{cents}"
    european = grouped.replace(",", ".")
    return f"{european},{cents} {_SYMBOL.get(currency, currency)}"


def generate_thread(
    seed: int, *, budget: int, chatter_tokens_per_budget: float = 3.0
) -> SupportThread:
    """One thread; its chatter is about *chatter_tokens_per_budget* times the budget long."""
    rng = random.Random(seed)
    order = rng.choice([f"A-{rng.randrange(100, 9999)}", f"ORD-2026-{rng.randrange(1, 9999):04d}"])
    currency = rng.choice(_CURRENCIES)
    amount = f"{rng.randrange(5, 2500)}.{rng.randrange(100):02d}"
    approval = f"APR-{rng.randrange(1000, 99999)}"
    plan = f"{rng.choice(_PLANS)} {rng.choice(_PLANS)}"
    spoken = _amount_text(rng, amount, currency)
    head: tuple[dict[str, Any], ...] = (
        {"role": "user", "content": f"Hello, I was charged {spoken} twice for order #{order}. "
                                    f"Please refund the duplicate and cancel my {plan} plan."},
        {"role": "tool", "tool_name": "get_order", "content": "order lookup",
         "tool_result": {"order_id": order, "amount": amount, "currency": currency,
                         "status": "delivered"}},
        {"role": "tool", "tool_name": APPROVAL_TOOL, "content": "approval decision",
         "tool_result": {"approval_id": approval, "status": "approved",
                         "approved_by": rng.choice(["Dana", "Ravi", "Mei", "Tomás"])}},
        *(
            {"role": "tool", "tool_name": "order_status",
             "content": json.dumps({"order_id": order, "status": "refund pending",
                                    "queue": "finance"})}
            for _ in range(rng.randrange(2, 5))
        ),
        {"role": "assistant", "content": "The refund is approved and queued; I'll confirm "
                                         "when finance has paid it out."},
    )  # fmt: skip
    chatter = []
    tokens = 0
    while tokens < chatter_tokens_per_budget * budget:
        topic = rng.choice(_TOPICS)
        user = " ".join(rng.choice(_FILLER).format(t=topic) for _ in range(rng.randrange(1, 4)))
        agent = rng.choice(_AGENT).format(t=topic)
        chatter.append({"role": "user", "content": user})
        chatter.append({"role": "assistant", "content": agent})
        tokens += (len(user) + len(agent)) // 4 + 8
    canonical = f"{amount} {currency}"
    required = (
        RequiredField("order_id", (order,)),
        RequiredField("amount", (canonical, spoken)),
        RequiredField("currency", (currency, _SYMBOL.get(currency, currency))),
        RequiredField("approval_id", (approval,)),
        RequiredField("obligation", (f"cancel my {plan} plan",)),
    )
    return SupportThread(head=head, chatter=tuple(chatter), required=required, budget=budget)
