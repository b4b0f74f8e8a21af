"""The door of every request, decided from its head alone: no byte of a body is read, and no
place in flight is taken, before the request is known to be allowed.

- The operations endpoints, the OpenAPI document and the inspector page's static files
  (``/ui``, which carry no data: the page calls ``/v1`` with a key) are open, and take no
  place.
- ``/v1/admin/…`` takes the admin credential. A client address with too many failed attempts
  lately is refused (429) whatever it sends, so the credential cannot be guessed at speed.
- Every other path takes a tenant's key with the scope its route needs: ``read`` for ``GET``,
  ``write`` for the other methods, unless the route declares ``x-kenning-scope`` (reading
  routes sent by ``POST``, and agent tools, whose scope is the tool's). ``/mcp`` takes any
  valid key: each tool call there is checked against its own scope. Then the tenant's rate.
- An admitted request takes a place: one of the process's ``max_in_flight``, at most its
  tenant's share of them; a ``GET /mcp`` event stream, which lasts as long as its client
  likes, takes one of its key's ``max_mcp_streams`` instead, so streams never starve requests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute
from starlette.types import Scope

from kenning.errors import NotFound, Unauthorized
from kenning.records import KeyScope
from kenning.server.auth import Principal, check_admin, verify_key
from kenning.server.config import ServerSettings
from kenning.server.limits import FailedAttempts, Places
from kenning.server.state import PRINCIPAL, Service
from kenning.tools import ToolRegistry

__all__ = ["BY_TOOL", "READS", "Gate", "Ticket"]

_SCOPE_KEY = "x-kenning-scope"
#: ``openapi_extra`` of a route that reads although it is sent by ``POST``.
READS: dict[str, Any] = {_SCOPE_KEY: "read"}
#: ``openapi_extra`` of ``/v1/tools/{name}``: the tool's own scope.
BY_TOOL: dict[str, Any] = {_SCOPE_KEY: "tool"}

_OPEN = frozenset(
    {"/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
)
_UI = "/ui"
_ADMIN = "/v1/admin/"
_MCP = "/mcp"
# Ten wrong admin tokens a minute from one address: enough for a typo, too few to guess.
_ADMIN_FAILURES = 10
_ADMIN_WINDOW_S = 60.0

_Declared = tuple[re.Pattern[str], frozenset[str], str]


@dataclass(frozen=True, slots=True)
class Ticket:
    """What an admitted request holds until it ends: who it is (None on open and admin
    routes) and the place it took (None on open routes)."""

    principal: Principal | None
    places: Places | None = None
    holder: str = ""

    def release(self) -> None:
        if self.places is not None:
            self.places.give(self.holder)


class Gate:
    """See the module docstring. *routes* are the app's API routes, read for their declared
    scopes."""

    def __init__(self, settings: ServerSettings, routes: Iterable[BaseRoute]) -> None:
        self._admin_token = settings.admin_token
        self._requests = Places(settings.max_in_flight, settings.tenant_in_flight,
                                what="requests in flight")  # fmt: skip
        self._streams = Places(settings.max_in_flight, settings.max_mcp_streams,
                               what="MCP event streams")  # fmt: skip
        self._failures = FailedAttempts(_ADMIN_FAILURES, _ADMIN_WINDOW_S)
        self._declared = _declared(routes)

    async def admit(self, scope: Scope, token: str | None) -> Ticket:
        """Admit the request of *scope* (its bearer *token*) or raise why not: Unauthorized,
        Forbidden, RateLimited (the tenant's rate or share, failed admin attempts) or
        Overloaded."""
        path, method = scope["path"], scope["method"]
        if path in _OPEN or path == _UI or path.startswith(_UI + "/"):
            return Ticket(None)
        state = scope.setdefault("state", {})
        if path.startswith(_ADMIN):
            self._admin(scope, token)
            state["tenant"] = "admin"
            return self._take(self._requests, "admin", None)
        svc: Service = scope["app"].state.kenning
        principal = await anyio.to_thread.run_sync(verify_key, svc.credentials, token)
        state["tenant"] = principal.tenant
        principal.require(self._need(svc.tools, method, path))
        svc.limiter.take(principal.tenant)
        state[PRINCIPAL] = principal
        if method == "GET" and path == _MCP:
            return self._take(self._streams, f"key {principal.key.id}", principal)
        return self._take(self._requests, f"tenant {principal.tenant!r}", principal)

    def _admin(self, scope: Scope, token: str | None) -> None:
        client = scope.get("client") or ("unknown", 0)
        address = str(client[0])
        self._failures.check(address)
        try:
            check_admin(self._admin_token, token)
        except Unauthorized:
            self._failures.failed(address)
            raise

    def _need(self, tools: ToolRegistry, method: str, path: str) -> KeyScope:
        if path == _MCP:
            return KeyScope.READ
        for pattern, methods, declared in self._declared:
            match = pattern.match(path)
            if match is None or method not in methods:
                continue
            if declared != "tool":
                return KeyScope(declared)
            try:
                writes = tools.spec(match.group("name")).writes
            except NotFound:
                return KeyScope.READ  # the route answers 404
            return KeyScope.WRITE if writes else KeyScope.READ
        return KeyScope.READ if method in ("GET", "HEAD") else KeyScope.WRITE

    @staticmethod
    def _take(places: Places, holder: str, principal: Principal | None) -> Ticket:
        places.take(holder)
        return Ticket(principal, places, holder)


def _declared(routes: Iterable[BaseRoute]) -> list[_Declared]:
    """The routes that declare their scope: (path pattern, methods, scope)."""
    out: list[_Declared] = []
    for route in routes:
        if isinstance(route, APIRoute) and _SCOPE_KEY in (route.openapi_extra or {}):
            scope = str((route.openapi_extra or {})[_SCOPE_KEY])
            out.append((route.path_regex, frozenset(route.methods or ()), scope))
    return out
