"""API keys: made here (the secret is shown once), stored hashed, checked on every request.

A key reads ``kn_<id>_<secret>``: the id finds the stored row in one lookup, and only a
SHA-256 of the secret is stored (the secret is 256 random bits, so a fast hash is enough),
compared in constant time. The tenant of every request is the key's tenant.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from kenning.errors import Forbidden, InvalidInput, Unauthorized
from kenning.records import ApiKey, KeyScope, validate_id
from kenning.store.protocol import Credentials

__all__ = ["Principal", "bearer_token", "check_admin", "create_key", "parse_scopes", "verify_key"]

_PREFIX = "kn_"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts as: a tenant's key and what it may do."""

    key: ApiKey

    @property
    def tenant(self) -> str:
        return self.key.tenant

    def require(self, scope: KeyScope) -> None:
        if scope not in self.key.scopes:
            raise Forbidden(f"this API key may not {scope.value}; ask for a key with that scope")


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_scopes(values: Iterable[str]) -> tuple[KeyScope, ...]:
    """Key scopes from names (``read``, ``write``), de-duplicated, in order."""
    out: list[KeyScope] = []
    for value in values:
        try:
            scope = KeyScope(value.strip())
        except ValueError:
            raise InvalidInput(
                f"unknown key scope {value!r:.40}: use {[s.value for s in KeyScope]}"
            ) from None
        if scope not in out:
            out.append(scope)
    if not out:
        raise InvalidInput("a key needs at least one scope (read, write)")
    return tuple(out)


def create_key(
    store: Credentials, tenant: str, scopes: Iterable[str], *, name: str = ""
) -> tuple[ApiKey, str]:
    """Create a key of *tenant*; return it and its secret token (shown once, never stored)."""
    tenant = validate_id(tenant, "tenant")
    if not isinstance(name, str) or len(name) > 200:
        raise InvalidInput("a key's name is a string of at most 200 characters")
    key = ApiKey(
        id=secrets.token_hex(8),
        tenant=tenant,
        scopes=parse_scopes(scopes),
        created_at=datetime.now(UTC),
        name=name,
    )
    secret = secrets.token_urlsafe(32)
    store.put_api_key(key, secret_hash=_hash(secret))
    return key, f"{_PREFIX}{key.id}_{secret}"


def bearer_token(authorization: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header's value (None without one)."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def verify_key(store: Credentials, token: str | None) -> Principal:
    """The principal of a bearer *token*; ``Unauthorized`` if it is missing, malformed,
    unknown or revoked (one message for all, so nothing tells which)."""
    denied = Unauthorized("a valid API key is required: send 'Authorization: Bearer <key>'")
    if not token or not token.startswith(_PREFIX):
        raise denied
    key_id, _, secret = token[len(_PREFIX) :].partition("_")
    if not key_id or not secret or len(token) > 200:
        raise denied
    found = store.api_key(key_id)
    if found is None:
        _hash(secret)  # the same work as a known key, so timing does not tell them apart
        raise denied
    key, stored = found
    if not hmac.compare_digest(stored, _hash(secret)) or not key.active:
        raise denied
    return Principal(key)


def check_admin(expected: str | None, token: str | None) -> None:
    """Refuse unless *token* is the admin credential (and one is configured)."""
    if expected is None:
        raise Forbidden("key management is disabled: start the server with an admin token")
    if not token or not hmac.compare_digest(token.encode(), expected.encode()):
        raise Unauthorized("the admin credential is required for /v1/admin")
