"""Records of the service's credentials and usage: API keys, a tenant's stored volume and the
quota it may not pass."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from kenning.errors import InvalidInput, QuotaExceeded

__all__ = ["ApiKey", "KeyScope", "Quota", "TenantUsage"]


class KeyScope(enum.StrEnum):
    """What a tenant's API key may do: ``read`` (search, assemble, list) and ``write``
    (append, pins, task state, forget, compaction)."""

    READ = "read"
    WRITE = "write"


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A tenant's API key as stored: never the secret, only its id and what it allows.

    The secret is shown once when the key is created; the store keeps a hash of it.
    """

    id: str
    tenant: str
    scopes: tuple[KeyScope, ...]
    created_at: datetime
    name: str = ""
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class TenantUsage:
    """What a tenant stores: its events and their content's size in characters."""

    events: int
    content_chars: int


@dataclass(frozen=True, slots=True)
class Quota:
    """What a tenant may store at most: events and their content's characters (None: no
    limit). The store applies it inside the transaction that writes a batch (the rule is
    :meth:`check`), so writers in several threads or processes never pass it together.

    >>> Quota(max_events=2).check("acme", TenantUsage(1, 10), events=1, chars=5)
    """

    max_events: int | None = None
    max_chars: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_events", "max_chars"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise InvalidInput(f"Quota.{name} must be an int >= 0 or None")

    def check(self, tenant: str, used: TenantUsage, *, events: int, chars: int) -> None:
        """Raise ``QuotaExceeded`` if adding *events* events of *chars* characters to what
        *tenant* stores (*used*) would pass a limit."""
        if self.max_events is not None and used.events + events > self.max_events:
            raise QuotaExceeded(
                f"tenant {tenant!r} stores {used.events} events; {events} more would pass its "
                f"quota of {self.max_events}: erase old sessions (forget) or raise the quota"
            )
        if self.max_chars is not None and used.content_chars + chars > self.max_chars:
            raise QuotaExceeded(
                f"tenant {tenant!r} stores {used.content_chars} characters; {chars} more would "
                f"pass its quota of {self.max_chars}: erase old sessions (forget) or raise the "
                "quota"
            )
