"""What the conformance suites share: scopes, events, writes through the protocol."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from kenning.records import (
    NewEvent,
    PinDraft,
    PinKind,
    Scope,
    content_hash,
)
from kenning.search.filters import parse_filters
from kenning.store.protocol import Store
from kenning.store.records import EventWrite, ModelInfo
from tests.conftest import MemoEmbedder

T0 = datetime(2025, 1, 1, tzinfo=UTC)
ALL = parse_filters(None)


def ev(content: str, role: str = "user", minutes: int = 0, **kw: object) -> NewEvent:
    return NewEvent(role, content, at=T0 + timedelta(minutes=minutes), **kw).validated()  # type: ignore[arg-type]


def write(
    store: Store,
    embedder: MemoEmbedder,
    rows: list[tuple[Scope, NewEvent]],
) -> list[str]:
    model = ModelInfo(embedder.model_id, embedder.dimension)
    writes = [EventWrite(s, e, content_hash(e.content)) for s, e in rows]
    vecs = embedder.embed([e.content for _, e in rows])
    vectors = {(s.tenant, content_hash(e.content)): vecs[i] for i, (s, e) in enumerate(rows)}
    return [e.id for e in store.append_events(writes, model=model, vectors=vectors)]


def model_of(embedder: MemoEmbedder) -> ModelInfo:
    return ModelInfo(embedder.model_id, embedder.dimension)


A1 = Scope("acme", "ann", "a-s1")
A2 = Scope("acme", "ann", "a-s2")
B1 = Scope("acme", "bob", "b-s1")
G1 = Scope("globex", "ann", "g-s1")


def add(store: Store, scope: Scope, *texts: str) -> list[str]:
    writes = [EventWrite(scope, NewEvent("user", t, at=T0).validated()) for t in texts]
    return [e.id for e in store.append_events(writes)]


def amount(value: str) -> PinDraft:
    return PinDraft(PinKind.AMOUNT, "refund", f"{value} EUR", amount=Decimal(value), currency="EUR")
