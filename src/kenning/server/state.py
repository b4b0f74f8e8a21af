"""What every request handler shares in one server process, and how a request is authorized.

:class:`Service` holds the memory, the settings, the limits, the tool registry and the
metrics. :func:`authorize` is the one door of every tenant route: it checks the API key,
the key's scope, and the tenant's rate, and names the tenant for the request's log line.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from kenning.errors import InvalidInput
from kenning.memory import Memory
from kenning.records import KeyScope, Quota, Scope
from kenning.server.auth import Principal, check_admin, verify_key
from kenning.server.config import ServerSettings
from kenning.server.limits import RateLimiter
from kenning.server.metrics import Metrics
from kenning.store.protocol import Credentials
from kenning.tools import ToolRegistry

__all__ = [
    "Service",
    "authorize",
    "authorize_admin",
    "bearer",
    "scope_in",
    "service",
    "tenant_scope",
]


@dataclass
class Service:
    """The process's shared state (one per app)."""

    memory: Memory
    settings: ServerSettings
    credentials: Credentials
    limiter: RateLimiter
    #: Each tenant's storage quota, passed to every append (the store applies it).
    quota: Quota
    tools: ToolRegistry
    metrics: Metrics


def service(request: Request) -> Service:
    svc: Service = request.app.state.kenning
    return svc


def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def authorize(request: Request, need: KeyScope | None) -> Principal:
    """The request's principal, if its key is valid, allows *need* (when given) and is within
    its tenant's rate."""
    svc = service(request)
    principal = verify_key(svc.credentials, bearer(request))
    request.state.tenant = principal.tenant
    if need is not None:
        principal.require(need)
    svc.limiter.take(principal.tenant)
    return principal


def authorize_admin(request: Request) -> None:
    check_admin(service(request).settings.admin_token, bearer(request))
    request.state.tenant = "admin"


def tenant_scope(
    principal: Principal, user: str | None = None, session: str | None = None
) -> Scope:
    """A scope inside the key's tenant (ids are validated by ``Scope``)."""
    return Scope(principal.tenant, user, session)


def scope_in(tenant: str, user: str | None, session: str | None, *, what: str) -> Scope:
    """The tenant, one of its users, or a user's session; a session without its user is
    refused, the message naming *what* asked for it ("a session search")."""
    if session is not None and user is None:
        raise InvalidInput(f"{what} needs its user")
    return Scope(tenant, user, session)
