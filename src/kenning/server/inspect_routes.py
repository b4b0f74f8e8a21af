"""The inspector: a static page at ``/ui`` and the few read routes it needs that the rest of
``/v1`` does not offer (a tenant's users, a user's sessions).

The page (``server/ui``: HTML, one script, one stylesheet, shipped as package data) loads
without a key and holds no data of its own; it asks for an API key and calls ``/v1`` with it,
so every record it shows went through the same gate, scope and tenancy as any client's call.
The files are served from a fixed list, with a content security policy that allows this
origin only: nothing is fetched from elsewhere at run time.
"""

from __future__ import annotations

from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import RedirectResponse, Response

from kenning.errors import NotFound
from kenning.records import KeyScope
from kenning.records.core import time_json
from kenning.server.state import authorize, service, tenant_scope
from kenning.store.protocol import Directory
from kenning.store.records import SessionInfo, UserInfo

__all__ = ["UI_PREFIX", "router", "ui_router"]

router = APIRouter(prefix="/v1")
ui_router = APIRouter(include_in_schema=False)

#: The page's path; the gate lets it (and its files) through without a key.
UI_PREFIX = "/ui"

_ID = r"^[A-Za-z0-9._:@-]+$"
UserP = Annotated[str, Path(min_length=1, max_length=128, pattern=_ID)]
Json = dict[str, Any]

_FILES = {
    "index.html": "text/html; charset=utf-8",
    "inspector.js": "text/javascript; charset=utf-8",
    "inspector.css": "text/css; charset=utf-8",
}
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _user_json(info: UserInfo) -> Json:
    # Only the server writes these (the client has no call for them), so they live here.
    return {"user": info.user, "sessions": info.sessions, "events": info.events,
            "first_at": time_json(info.first_at), "last_at": time_json(info.last_at)}  # fmt: skip


def _session_json(info: SessionInfo) -> Json:
    return {"session": info.session, "events": info.events,
            "created_at": time_json(info.created_at), "first_at": time_json(info.first_at),
            "last_at": time_json(info.last_at), "active_at": time_json(info.active_at)}  # fmt: skip


@router.get("/users", tags=["inspector"], summary="The tenant's users, most recently active first")
def users(
    request: Request,
    contains: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=1_000)] = 100,
) -> Json:
    """Each user's number of sessions, the events they were given, and when the user was
    first and last active; ``contains`` keeps the users whose id holds it (any case)."""
    tenant = authorize(request, KeyScope.READ).tenant
    store = service(request).memory.store
    if not isinstance(store, Directory):
        raise NotFound(f"the {store.backend} store cannot list its users")
    found = store.tenant_users(tenant, contains=contains, limit=limit)
    return {"users": [_user_json(u) for u in found]}


@router.get("/users/{user}/sessions", tags=["inspector"], summary="A user's sessions")
def user_sessions(request: Request, user: UserP) -> Json:
    """The user's sessions, oldest first: events given, first and last event times."""
    scope = tenant_scope(authorize(request, KeyScope.READ), user)
    found = service(request).memory.store.user_sessions(scope)
    return {"sessions": [_session_json(s) for s in found]}


@ui_router.get(UI_PREFIX)
def ui_root() -> Response:
    return RedirectResponse(f"{UI_PREFIX}/", status_code=307)


@ui_router.get(UI_PREFIX + "/")
def ui_index() -> Response:
    return _file("index.html")


@ui_router.get(UI_PREFIX + "/{name}")
def ui_file(name: str) -> Response:
    return _file(name)


def _file(name: str) -> Response:
    media_type = _FILES.get(name)
    if media_type is None:
        raise NotFound(f"no file {name!r:.80} in the inspector")
    body = resources.files("kenning.server").joinpath("ui", name).read_bytes()
    return Response(body, media_type=media_type, headers=_HEADERS)
