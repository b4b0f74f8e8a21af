"""What every request handler shares in one server process, and how a request is authorized.

:class:`Service` holds the memory, the settings, the limits, the tool registry and the
metrics. The gate (:mod:`kenning.server.gate`) checks every request's key, its scope and its
tenant's rate from the headers, before the body is read, and leaves the principal in the
request's state; :func:`authorize` is how a tenant route takes it (and checks the scope it
needs once more).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from kenning.errors import InvalidInput, Unauthorized
from kenning.memory import Memory
from kenning.records import KeyScope, Quota, Scope
from kenning.server.auth import Principal, bearer_token, check_admin
from kenning.server.config import ServerSettings
from kenning.server.limits import RateLimiter
from kenning.server.metrics import Metrics
from kenning.store.protocol import Credentials
from kenning.tools import ToolRegistry

__all__ = [
    "PRINCIPAL",
    "Service",
    "authorize",
    "authorize_admin",
    "bearer",
    "scope_in",
    "service",
    "tenant_scope",
]


#: Where the gate leaves an admitted request's principal, in its ASGI scope's ``state``.
PRINCIPAL = "kenning_principal"


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
    return bearer_token(request.headers.get("authorization", ""))


def authorize(request: Request, need: KeyScope | None) -> Principal:
    """The principal the gate admitted the request as, if it allows *need* (when given). The
    gate checked the key and the tenant's rate already, before the body was read."""
    principal: Principal | None = getattr(request.state, PRINCIPAL, None)
    if principal is None:
        raise Unauthorized("a valid API key is required: send 'Authorization: Bearer <key>'")
    if need is not None:
        principal.require(need)
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
