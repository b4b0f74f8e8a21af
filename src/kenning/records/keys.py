"""Records of the service's credentials and usage: API keys and a tenant's stored volume."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

__all__ = ["ApiKey", "KeyScope", "TenantUsage"]


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
