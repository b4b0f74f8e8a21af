"""The ASGI app of ``kenning serve``: FastAPI over one :class:`kenning.Memory` per process.

:func:`create_app` builds it from explicit settings (and, in tests, a memory opened by the
caller); :func:`app_from_environment` is the factory uvicorn calls in each worker process of
``--workers N``, reading the settings the CLI serialised for it. Errors leave as kenning's
JSON error body with the error's status; nothing else does, and no trace reaches a client.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Route

from kenning.compaction.plan import CompactionSettings
from kenning.embed.batching import BatchingEmbedder
from kenning.errors import InvalidInput, KenningError, NotFound
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import Quota, too_deep
from kenning.runtime import configure_heap, release_free_memory
from kenning.server import document_routes, inspect_routes, longterm_routes, ops, routes
from kenning.server.config import ServerSettings
from kenning.server.gate import Gate
from kenning.server.limits import RateLimiter
from kenning.server.logs import REQUEST_ID
from kenning.server.metrics import Metrics, TimedEmbedder
from kenning.server.middleware import ServiceMiddleware
from kenning.server.state import Service
from kenning.server.tracing import require_api, setup_otlp
from kenning.settings import Settings
from kenning.store.protocol import Credentials
from kenning.tools import ToolRegistry, default_registry
from kenning.version import __version__
from kenning.wire import error_json

__all__ = ["ENV_SETTINGS", "app_from_environment", "create_app", "open_memory"]

log = logging.getLogger("kenning.server")

#: The environment variable through which ``kenning serve --workers N`` passes its settings.
ENV_SETTINGS = "KENNING_SERVER_SETTINGS"

# How often a process looks for queued compactions and unread events it was not told about
# (queued by another worker process, or left by one that died once its lease runs out).
_POLL_S = 5.0


def open_memory(settings: ServerSettings, metrics: Metrics) -> Memory:
    """The process's memory over ``settings.db``. Its embedder gathers the texts of concurrent
    requests into one model call (``settings.embed_window_ms``, ``settings.embed_batch``);
    each model call is timed into *metrics*."""
    from kenning.embed.minilm import MiniLMEmbedder

    embedder = None
    if settings.embedder == "minilm":
        embedder = BatchingEmbedder(
            TimedEmbedder(MiniLMEmbedder(), metrics.embed),
            window_s=settings.embed_window_ms / 1000, max_texts=settings.embed_batch,
        )  # fmt: skip
    # A request is answered with its events' vectors stored: a search served by another
    # worker process cannot wait for this one's deferred writer (kenning.vectors).
    memory_settings = Settings(
        compaction=CompactionSettings(workers=settings.compaction_workers),
        longterm=LongTermSettings(workers=settings.extraction_workers),
        defer_vectors=False,
    )
    memory = Memory.open(settings.db, embedder=embedder, settings=memory_settings)
    if embedder is not None:
        # Load the model now: /readyz then means ready, and no request pays the load.
        embedder.embed(["warm up"])
    return memory


class _Error(KenningError):
    """An HTTP error raised by the framework itself (unknown route, wrong method)."""


def _framework_error(status: int, message: str) -> KenningError:
    if status == 404:
        return NotFound(message)
    err = _Error(message)
    err.code = "method_not_allowed" if status == 405 else "http_error"
    err.http_status = status
    return err


def _error_response(exc: KenningError) -> JSONResponse:
    body = error_json(exc)
    request_id = REQUEST_ID.get()
    if request_id:
        body["error"]["request_id"] = request_id
    headers = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(max(1, round(exc.retry_after)))
    return JSONResponse(body, status_code=exc.http_status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:10]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


_DESCRIPTION = (
    "Memory for LLM agents: episodic record, pins, task state, token-budgeted "
    "windows, hybrid search, long-term facts, profiles, consent, procedures and "
    "retention, per tenant. Authenticate with `Authorization: Bearer "
    '<key>`; the tenant is always the key\'s. Errors are `{"error": {"code", '
    '"message", "status"}}`.'
)


def create_app(
    settings: ServerSettings | None = None,
    *,
    memory: Memory | None = None,
    tools: ToolRegistry | None = None,
) -> FastAPI:
    """The server's ASGI app. With *memory* the caller owns it (and closes it); without, the
    app opens ``settings.db`` when it starts and closes it when it stops."""
    settings = settings or ServerSettings()
    metrics = Metrics()
    holder: dict[str, Any] = {}
    app = FastAPI(
        title="kenning",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=_lifespan(settings, metrics, holder, memory=memory, tools=tools),
    )
    app.include_router(routes.router)
    app.include_router(longterm_routes.router)
    app.include_router(document_routes.router)
    app.include_router(ops.router)
    app.include_router(inspect_routes.router)
    app.include_router(inspect_routes.ui_router)

    app.router.routes.append(
        Route("/mcp", endpoint=_McpEndpoint(holder), methods=["GET", "POST", "DELETE"])
    )
    _answer_errors_as_json(app)
    routers = (
        routes.router, longterm_routes.router, document_routes.router, ops.router,
        inspect_routes.router,
    )  # fmt: skip
    gate = Gate(settings, [route for router in routers for route in router.routes])
    app.add_middleware(
        ServiceMiddleware, metrics=metrics, gate=gate, max_body_bytes=settings.max_body_bytes,
        body_timeout_s=settings.body_timeout_s,
    )  # fmt: skip
    if settings.otel:
        require_api()  # FastAPI traces the requests once a tracer provider is set
    return app


def _lifespan(
    settings: ServerSettings,
    metrics: Metrics,
    holder: dict[str, Any],
    *,
    memory: Memory | None,
    tools: ToolRegistry | None,
) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifespan: open the memory (unless the caller gave one), serve it with the
    background poller and, with ``settings.mcp``, the MCP app; close what it opened."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = memory is None
        mem = memory if memory is not None else open_memory(settings, metrics)
        store = mem.store
        if not isinstance(store, Credentials):
            raise KenningError(f"the {store.backend} store cannot hold API keys")
        svc = Service(
            memory=mem, settings=settings, credentials=store,
            limiter=RateLimiter(settings.rate_per_s, settings.burst),
            quota=Quota(max_events=settings.max_events, max_chars=settings.max_chars),
            tools=tools or default_registry(), metrics=metrics,
        )  # fmt: skip
        app.state.kenning = svc
        metrics.watch(mem)
        poller = asyncio.create_task(_poll(mem))
        try:
            if settings.mcp:
                from kenning.server.mcp import McpHttp

                mcp_app = McpHttp(svc)
                holder["mcp"] = mcp_app
                async with mcp_app.run():
                    yield
            else:
                yield
        finally:
            poller.cancel()
            if owned:
                mem.close()
                if isinstance(mem.embedder, BatchingEmbedder):
                    # Requests have ended by now; what they queued is embedded before exit.
                    mem.embedder.close()

    return lifespan


def _answer_errors_as_json(app: FastAPI) -> None:
    """Every error leaves as kenning's JSON error body with its status, the framework's own
    (validation, unknown route, wrong method) included."""

    @app.exception_handler(KenningError)
    async def kenning_error(request: Request, exc: KenningError) -> JSONResponse:
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error_response(InvalidInput(_validation_message(exc)))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if isinstance(exc.__cause__, KenningError):  # e.g. a body over the limit while read
            return _error_response(exc.__cause__)
        if isinstance(exc.__cause__, RecursionError):
            # The JSON parser gave up on the nesting: bad input, like any nesting past the limit.
            return _error_response(too_deep("the request body"))
        return _error_response(_framework_error(exc.status_code, str(exc.detail)))


class _McpEndpoint:
    """``/mcp``: the MCP app once the lifespan made it (an ASGI app, so Starlette passes the
    raw request through, streamed responses included)."""

    def __init__(self, holder: dict[str, Any]) -> None:
        self._holder = holder

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        mcp_app = self._holder.get("mcp")
        if mcp_app is None:
            raise NotFound("the MCP endpoint is not enabled on this server")
        await mcp_app(scope, receive, send)


async def _poll(memory: Memory) -> None:
    while True:
        await asyncio.sleep(_POLL_S)
        try:
            await asyncio.to_thread(memory.context.resume)
            if memory.settings.longterm.extract:
                await asyncio.to_thread(memory.extraction.resume)
            # Bursts of requests leave freed pages in the heap; an idle server gives them back.
            await asyncio.to_thread(release_free_memory)
        except KenningError:
            log.exception("could not look at the background queues")


def app_from_environment() -> FastAPI:
    """The app of one ``--workers N`` process (uvicorn's factory), from the CLI's settings and
    the admin token's private file."""
    text = os.environ.get(ENV_SETTINGS)
    if not text:
        raise RuntimeError(f"{ENV_SETTINGS} is not set: start the server with `kenning serve`")
    configure_heap()  # before this worker starts its threads
    settings = ServerSettings.from_json(text)
    if settings.admin_token_file:
        token = Path(settings.admin_token_file).read_text(encoding="utf-8")
        settings = dataclasses.replace(settings, admin_token=token)
    from kenning.server.logs import configure_logging
    from kenning.server.protocol import set_header_timeout

    configure_logging(json_logs=settings.json_logs)
    set_header_timeout(settings.header_timeout_s)
    if settings.otel:
        setup_otlp()
    return create_app(settings)
