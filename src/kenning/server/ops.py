"""Operations and administration routes: liveness, readiness, metrics, and API keys.

``/healthz`` answers while the process runs. ``/readyz`` says whether it can serve: the store
answers, the embedding model is loaded (or search runs lexical-only), and how deep and how
late the compaction queue and fact extraction are (extraction's queue is the sessions with
unread events; its lag is the age of the oldest unread event). ``/v1/admin/keys`` manages
tenants' keys with the admin credential, never with a tenant's key.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from kenning.errors import KenningError, NotFound
from kenning.records import ApiKey
from kenning.server.auth import create_key
from kenning.server.schemas import KeyRequest
from kenning.server.state import authorize_admin, service

__all__ = ["router"]

router = APIRouter()
Json = dict[str, Any]


def _key_json(key: ApiKey) -> Json:
    return {
        "id": key.id, "tenant": key.tenant, "name": key.name,
        "scopes": [s.value for s in key.scopes], "created_at": key.created_at.isoformat(),
        "revoked_at": None if key.revoked_at is None else key.revoked_at.isoformat(),
    }  # fmt: skip


@router.get("/healthz", tags=["operations"], summary="Liveness")
def healthz() -> Json:
    return {"status": "ok"}


@router.get("/readyz", tags=["operations"], summary="Readiness: store, model, queue")
def readyz(request: Request) -> JSONResponse:
    svc = service(request)
    memory = svc.memory
    checks: Json = {}
    ready = True
    start = time.perf_counter()
    try:
        stats = memory.store.queue_stats()
        checks["store"] = {"ok": True, "backend": memory.store.backend,
                           "ms": round((time.perf_counter() - start) * 1000, 2)}  # fmt: skip
        now = datetime.now(UTC)
        checks["queue"] = {
            "pending": stats.pending, "running": stats.running,
            "lag_s": round(stats.lag_s(now), 3),
            "workers": memory.context.worker.threads, "busy": memory.context.worker.busy,
        }  # fmt: skip
        facts = memory.store.extraction_stats()
        checks["extraction"] = {
            "enabled": memory.settings.longterm.extract,
            "pending": facts.pending, "running": facts.running,
            "lag_s": round(facts.lag_s(now), 3),
            "workers": memory.extraction.threads, "busy": memory.extraction.busy,
        }  # fmt: skip
    except KenningError as exc:
        ready = False
        checks["store"] = {"ok": False, "error": exc.code}
    embedder = memory.embedder
    checks["model"] = (
        {"ok": True, "model": None, "search": "lexical only"}
        if embedder is None
        else {"ok": True, "model": embedder.model_id, "dimension": embedder.dimension}
    )
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


@router.get("/metrics", tags=["operations"], summary="Prometheus metrics", response_class=Response)
def metrics(request: Request) -> Response:
    body = service(request).metrics.render()
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")


@router.post("/v1/admin/keys", tags=["admin"], summary="Create a tenant's API key (shown once)")
def admin_create_key(request: Request, body: KeyRequest) -> Json:
    authorize_admin(request)
    key, token = create_key(service(request).credentials, body.tenant, body.scopes, name=body.name)
    return _key_json(key) | {"key": token}


@router.get("/v1/admin/keys", tags=["admin"], summary="List API keys (never their secrets)")
def admin_list_keys(
    request: Request,
    tenant: Annotated[
        str | None, Query(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:@-]+$")
    ] = None,
) -> Json:
    authorize_admin(request)
    return {"keys": [_key_json(k) for k in service(request).credentials.api_keys(tenant)]}


@router.delete("/v1/admin/keys/{key_id}", tags=["admin"], summary="Revoke an API key")
def admin_revoke_key(request: Request, key_id: str) -> Json:
    authorize_admin(request)
    key = service(request).credentials.revoke_api_key(key_id, at=datetime.now(UTC))
    if key is None:
        raise NotFound(f"no API key {key_id!r:.40}")
    return _key_json(key)
