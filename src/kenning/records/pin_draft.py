"""A pin before it is stored: what extraction rules and callers hand to the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from kenning.records.core import JSONScalar, PinKind, PinStatus

__all__ = ["PinDraft"]


@dataclass(frozen=True, slots=True)
class PinDraft:
    """A typed field to pin in a session.

    ``key`` identifies the pin inside its session: writing a draft whose key exists with a
    different value (or status) creates a new version and keeps the old one in history; the
    same value again changes nothing. ``value`` is the canonical text shown in a window (for
    an amount: ``"42.50 EUR"``, with ``amount`` and ``currency`` set).
    """

    kind: PinKind
    key: str
    value: str
    amount: Decimal | None = None
    currency: str | None = None
    status: PinStatus = PinStatus.OPEN
    source_event_id: str | None = None
    metadata: Mapping[str, JSONScalar] = field(default_factory=dict)
