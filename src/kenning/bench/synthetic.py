"""Seeded synthetic support conversations for benchmarks (no dataset, no network).

Texts are built from templates over varied vocabularies (people, products, ids, amounts,
places, dates), so lexical statistics resemble real chat logs rather than one repeated line.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kenning.records import NewEvent, Scope

__all__ = ["SyntheticEvent", "synthetic_events", "synthetic_queries"]

_NAMES = (
    "Ada Alex Amir Ana Ben Bea Carla Chen Dana Dev Eli Emma Fatima Femi Gus Hana Ivan Iris "
    "Jon Jade Kai Kira Leo Lena Maya Milo Nia Noor Omar Ola Pia Priya Quinn Raj Rosa Sam Sara "
    "Tom Tara Uma Vic Wen Yara Yusuf Zoe"
).split()
_PRODUCTS = (
    "espresso machine|standing desk|trail shoes|rice cooker|noise-cancelling headphones|"
    "yoga mat|air purifier|e-reader|winter jacket|blender|office chair|camping tent|"
    "mechanical keyboard|water bottle|backpack|smart watch|coffee grinder|desk lamp|"
    "bike helmet|garden hose|phone case|monitor arm|kettle|wool blanket|running socks"
).split("|")
_PLACES = (
    "Berlin Lisbon Austin Osaka Nairobi Toronto Lyon Porto Denver Seoul Dublin Oslo Lima "
    "Accra Perth Quito Riga Tunis Zagreb Hanoi"
).split()
_ISSUES = (
    "arrived damaged|is missing a part|was delivered to the wrong address|stopped working|"
    "was charged twice|never arrived|is the wrong size|came in the wrong colour|"
    "has a broken zipper|makes a loud noise"
).split("|")
_TOPICS = (
    "weekend plans|a new recipe|the weather|a football match|a book club|a hiking trip|"
    "a birthday party|moving house|a job interview|learning the guitar|a vegetable garden|"
    "a marathon|a concert|adopting a cat|a road trip"
).split("|")
_CURRENCIES = ("EUR", "USD", "GBP", "CHF", "JPY")

_USER_TEMPLATES = (
    "Hi, my order {order} for the {product} {issue}.",
    "Can you refund {amount} {cur} for order {order}? The {product} {issue}.",
    "I'd like to change the delivery address for {order} to {place}.",
    "Please cancel my subscription before {date}, I'm moving to {place}.",
    "Is the {product} available in {place}? I need it before {date}.",
    "I talked about {topic} with {name} yesterday, anyway, any update on ticket {ticket}?",
    "My name is {name} and I prefer email over phone calls.",
    "Could you send the invoice for {order} to my work address?",
    "I was promised a discount of {amount} {cur} on the {product}.",
    "The courier said the {product} would come on {date} but nothing yet.",
)
_AGENT_TEMPLATES = (
    "Sorry to hear that, {name}. I've opened ticket {ticket} for order {order}.",
    "I've issued a refund of {amount} {cur} for {order}; it was approved by {name}.",
    "Your {product} will be delivered to {place} on {date}.",
    "Done: the subscription ends on {date} and no further charges will be made.",
    "The {product} is in stock in our {place} warehouse and ships within two days.",
    "I checked ticket {ticket}: the replacement {product} left our warehouse today.",
    "Noted, {name}: we will contact you by email only.",
    "The invoice for {order} is on its way; total {amount} {cur}.",
    "I applied a {amount} {cur} credit to your account for the {product}.",
    "Thanks for your patience. Is there anything else I can help with about {topic}?",
)
_QUERY_TEMPLATES = (
    "refund for the {product} that {issue}",
    "which order was shipped to {place}",
    "ticket {ticket} status",
    "who approved the refund of {amount} {cur}",
    "when will the {product} arrive",
    "customer prefers email",
    "cancel subscription before moving to {place}",
    "discount on the {product}",
    "invoice for order {order}",
    "conversation about {topic}",
)


@dataclass(frozen=True, slots=True)
class SyntheticEvent:
    tenant: str
    user: str
    session: str
    role: str
    content: str
    at: datetime
    speaker: str

    def item(self, *, session: str | None = None) -> tuple[Scope, NewEvent]:
        """The event as :meth:`kenning.Memory.ingest` takes it (in *session* if given)."""
        scope = Scope(self.tenant, self.user, session or self.session)
        return scope, NewEvent(self.role, self.content, at=self.at,
                               metadata={"speaker": self.speaker})  # fmt: skip


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        name=rng.choice(_NAMES),
        product=rng.choice(_PRODUCTS),
        issue=rng.choice(_ISSUES),
        place=rng.choice(_PLACES),
        topic=rng.choice(_TOPICS),
        order=f"A-{rng.randrange(1000, 99999)}",
        ticket=f"T-{rng.randrange(10000, 999999)}",
        amount=f"{rng.randrange(5, 2000)}.{rng.randrange(0, 100):02d}",
        cur=rng.choice(_CURRENCIES),
        date=f"{rng.choice(('May', 'June', 'July', 'August'))} {rng.randrange(1, 29)}",
    )


def synthetic_events(
    count: int,
    *,
    seed: int = 7,
    tenant: str = "bench",
    users: int = 200,
    turns_per_session: int = 20,
    start: datetime | None = None,
    sentences: int = 1,
) -> Iterator[SyntheticEvent]:
    """Yield *count* events alternating user/assistant turns across users and sessions, each
    of *sentences* sentences (with 1, the same events for a seed as before the option)."""
    if sentences < 1:
        raise ValueError("sentences must be at least 1")
    rng = random.Random(seed)
    at = start or datetime(2026, 1, 1, tzinfo=UTC)
    session_no = 0
    produced = 0
    while produced < count:
        user = f"user-{rng.randrange(users):04d}"
        session = f"s-{session_no:06d}"
        session_no += 1
        for turn in range(min(turns_per_session, count - produced)):
            is_user = turn % 2 == 0
            templates = _USER_TEMPLATES if is_user else _AGENT_TEMPLATES
            template = rng.choice(templates)
            at += timedelta(seconds=rng.randrange(5, 600))
            content = _fill(template, rng)
            for _ in range(sentences - 1):
                content += " " + _fill(rng.choice(templates), rng)
            yield SyntheticEvent(
                tenant=tenant,
                user=user,
                session=session,
                role="user" if is_user else "assistant",
                content=content,
                at=at,
                speaker=user if is_user else "agent",
            )
            produced += 1


def synthetic_queries(count: int, *, seed: int = 11) -> list[str]:
    """*count* natural search queries over the same vocabulary."""
    rng = random.Random(seed)
    return [_fill(rng.choice(_QUERY_TEMPLATES), rng) for _ in range(count)]
