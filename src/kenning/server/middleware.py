"""The server's outermost layer (pure ASGI, so streamed MCP responses pass untouched).

For each HTTP request it: takes or makes a request id (``X-Request-Id``, echoed back); refuses
a body over the size limit (413); has the gate (:mod:`kenning.server.gate`) admit the request
from its headers, before any of its body is read, or refuse it (401, 403, 429, 503); gives
the body ``body_timeout_s`` to arrive (408, and its place is free again); turns any exception
that escaped a handler into a 500 JSON body that names the request id (the trace goes to the
log, never to the client); observes latency by route template; and writes one JSON log line.

A response sent before the request's body was read whole closes the connection: the rest of
that body is never read, and the socket is not left to its sender.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kenning.errors import (
    InternalError,
    KenningError,
    RequestTimeout,
    RequestTooLarge,
    UnsupportedMediaType,
)
from kenning.server.auth import bearer_token
from kenning.server.gate import Gate, Ticket
from kenning.server.logs import REQUEST_ID
from kenning.server.metrics import Metrics
from kenning.wire import error_json

__all__ = ["ServiceMiddleware", "error_response_parts"]

log = logging.getLogger("kenning.server")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_CLOSE = (b"connection", b"close")


def error_response_parts(exc: KenningError, request_id: str | None) -> tuple[int, bytes, list[Any]]:
    """Status, JSON body and headers of the response for *exc*."""
    body = error_json(exc)
    if request_id:
        body["error"]["request_id"] = request_id
    headers: list[Any] = [(b"content-type", b"application/json")]
    if exc.retry_after is not None:
        headers.append((b"retry-after", str(max(1, round(exc.retry_after))).encode()))
    return exc.http_status, json.dumps(body).encode(), headers


class ServiceMiddleware:
    """See the module docstring."""

    def __init__(
        self, app: ASGIApp, *, metrics: Metrics, gate: Gate, max_body_bytes: int,
        body_timeout_s: float,
    ) -> None:  # fmt: skip
        self.app = app
        self._metrics = metrics
        self._gate = gate
        self._max_body = max_body_bytes
        self._body_timeout = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        given = headers.get("x-request-id", "")
        request_id = given if _REQUEST_ID.match(given) else secrets.token_hex(8)
        token = REQUEST_ID.set(request_id)
        start = time.perf_counter()
        path: str = scope.get("path", "")
        exchange = _Exchange(request_id, receive, send, max_body=self._max_body,
                             deadline=anyio.current_time() + self._body_timeout,
                             body=_has_body(headers))  # fmt: skip
        ticket: Ticket | None = None
        try:
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > self._max_body:
                raise RequestTooLarge(_too_large(self._max_body))
            ticket = await self._gate.admit(scope, bearer_token(headers.get("authorization", "")))
            if _has_body(headers) and path.startswith("/v1/"):
                scope = _read_as_json(scope, headers.get("content-type", ""))
            await self.app(scope, exchange.receive, exchange.send)
        except KenningError as exc:
            if exchange.started:
                log.warning("error after the response started: %s", exc)
            else:
                await exchange.respond(exc)
        except Exception:
            log.exception("unhandled error in %s %s", scope.get("method"), path)
            if not exchange.started:
                await exchange.respond(
                    InternalError(f"internal error; quote request id {request_id}")
                )
        finally:
            if ticket is not None:
                ticket.release()
            self._observe(scope, path, exchange, time.perf_counter() - start)
            REQUEST_ID.reset(token)

    def _observe(self, scope: Scope, path: str, exchange: _Exchange, elapsed: float) -> None:
        """The request's latency by route template, and its log line."""
        route = scope.get("route")
        template = getattr(route, "path", None) or ("/mcp" if path == "/mcp" else "unmatched")
        method = str(scope.get("method", ""))
        status = exchange.status
        self._metrics.requests.labels(method, template, str(status)).observe(elapsed)
        state = scope.get("state") or {}
        log.info(
            "request",
            extra={
                "method": method, "route": template, "status": status,
                "ms": round(elapsed * 1000, 2), "tenant": state.get("tenant"),
                "request_id": exchange.request_id,
            },
        )  # fmt: skip


class _Exchange:
    """One HTTP request as the app sees it through the middleware: its id added to the
    response's headers, the status sent (500 until one is), and the body counted against the
    size limit and the deadline as it arrives."""

    __slots__ = ("_deadline", "_max_body", "_pending", "_receive", "_received", "_send",
                 "request_id", "started", "status")  # fmt: skip

    def __init__(
        self, request_id: str, receive: Receive, send: Send, *, max_body: int, deadline: float,
        body: bool,
    ) -> None:  # fmt: skip
        self.request_id = request_id
        self.status = 500
        self.started = False
        self._receive = receive
        self._send = send
        self._max_body = max_body
        self._received = 0
        self._deadline = deadline
        self._pending = body

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
            self.started = True
            message = dict(message)
            message["headers"] = [
                *message.get("headers", []),
                (b"x-request-id", self.request_id.encode()),
                *([_CLOSE] if self._pending else []),
            ]
        await self._send(message)

    async def receive(self) -> Message:
        if not self._pending:
            return await self._receive()
        message: Message | None = None
        with anyio.move_on_after(self._deadline - anyio.current_time()):
            message = await self._receive()
        if message is None:
            raise RequestTimeout("the request body did not arrive in time; send it whole")
        if message["type"] == "http.request":
            self._received += len(message.get("body", b""))
            if self._received > self._max_body:
                raise RequestTooLarge(_too_large(self._max_body))
            self._pending = bool(message.get("more_body", False))
        else:
            self._pending = False
        return message

    async def respond(self, exc: KenningError) -> None:
        """Send *exc* as kenning's JSON error response."""
        code, body, extra = error_response_parts(exc, self.request_id)
        await self.send({"type": "http.response.start", "status": code, "headers": extra})
        await self.send({"type": "http.response.body", "body": body})


# What clients send JSON as by mistake: curl's -d (a form), no type, plain text.
_JSON_BY_MISTAKE = ("", "application/x-www-form-urlencoded", "text/plain")


def _read_as_json(scope: Scope, content_type: str) -> Scope:
    """The request with its body read as JSON: a body sent as a form or as text (curl's ``-d``
    without a type) is read as JSON all the same; any other non-JSON type is a 415."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/json" or kind.endswith("+json"):
        return scope
    if kind not in _JSON_BY_MISTAKE:
        raise UnsupportedMediaType(
            f"the API reads JSON, not {kind}: send Content-Type: application/json"
        )
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-type"]
    return {**scope, "headers": [*headers, (b"content-type", b"application/json")]}


def _has_body(headers: dict[str, str]) -> bool:
    length = headers.get("content-length", "")
    return "transfer-encoding" in headers or (length.isdigit() and int(length) > 0)


def _too_large(max_body: int) -> str:
    return f"the request body is over {max_body} bytes: send fewer or smaller events"
