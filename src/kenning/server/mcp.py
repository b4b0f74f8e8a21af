"""The MCP server (official ``mcp`` SDK, low-level API) over the same tool registry as REST.

Two transports:

- stdio (``kenning mcp --db PATH --tenant T --user U --session S``): one conversation, bound
  on the command line by the host that starts the process;
- streamable HTTP at ``/mcp`` of ``kenning serve``: each request carries a tenant's API key
  (``Authorization: Bearer``) and its binding in headers (``Kenning-User``, ``Kenning-Session``,
  and ``Kenning-Share-Sessions: true`` to let the agent read the user's other sessions, which
  it then does only if the user's stored consent allows it too), set by the host that
  configures the agent's MCP client, never by the model.

A tool's error comes back as a result with ``isError`` and the kenning error body as its text,
so the agent reads why (for example ``tool_refused``) and can correct itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from kenning.errors import InvalidInput, KenningError, Unauthorized
from kenning.records import KeyScope
from kenning.records import Scope as MemoryScope
from kenning.server.auth import Principal
from kenning.server.middleware import error_response_parts
from kenning.server.state import PRINCIPAL, Service
from kenning.tools import MemoryTarget, ToolBinding, ToolRegistry
from kenning.version import __version__
from kenning.wire import error_json

__all__ = ["McpHttp", "build_server", "run_stdio"]

#: Where a request's tool calls act, and as whom: (memory, binding, principal or None).
Resolve = Callable[
    [ServerRequestContext[Any, Any]], tuple[MemoryTarget, ToolBinding, Principal | None]
]

_STATE_KEY = "kenning_mcp"


def _text(value: Any) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=json.dumps(value, ensure_ascii=False))]


def build_server(registry: ToolRegistry, resolve: Resolve) -> Server[Any]:
    """An MCP server listing *registry*'s tools and calling them where *resolve* says."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec["function"]["name"],
                    description=spec["function"]["description"],
                    input_schema=spec["function"]["parameters"],
                )
                for spec in registry.definitions()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            memory, binding, principal = resolve(ctx)
            spec = registry.spec(params.name)
            if principal is not None:
                principal.require(KeyScope.WRITE if spec.writes else KeyScope.READ)
            result = await anyio.to_thread.run_sync(
                registry.dispatch, memory, binding, params.name, params.arguments or {}
            )
        except KenningError as exc:
            return types.CallToolResult(content=_text(error_json(exc)), is_error=True)
        structured = result if isinstance(result, dict) else {"result": result}
        return types.CallToolResult(content=_text(result), structured_content=structured)

    return Server(
        "kenning",
        version=__version__,
        instructions="Memory tools: search what you remember, pin values that must not be "
        "lost, keep the goal and constraints current, remember or revoke the user's facts "
        "and read their profile.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_stdio(memory: MemoryTarget, binding: ToolBinding, registry: ToolRegistry) -> None:
    """Serve *registry* over stdio for one conversation until the client closes the pipe."""
    from mcp.server.stdio import stdio_server

    server = build_server(registry, lambda ctx: (memory, binding, None))

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def _http_resolve(service: Service) -> Resolve:
    def resolve(ctx: ServerRequestContext[Any, Any]) -> tuple[MemoryTarget, ToolBinding, Principal]:
        request = ctx.request
        state = request.scope.get("state", {}) if isinstance(request, Request) else {}
        found = state.get(_STATE_KEY)
        if found is None:
            raise InvalidInput("this MCP request carries no kenning binding")
        principal, binding = found
        return service.memory, binding, principal

    return resolve


class McpHttp:
    """The streamable-HTTP MCP endpoint behind kenning's API-key check (an ASGI app).

    Stateless: every request is authorized and bound on its own, so any worker process can
    answer any request.
    """

    def __init__(self, service: Service) -> None:
        self._service = service
        server = build_server(service.tools, _http_resolve(service))
        security = None
        if service.settings.host in ("127.0.0.1", "localhost", "::1"):
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            )
        self.manager = StreamableHTTPSessionManager(
            app=server, stateless=True, json_response=True, security_settings=security
        )
        self._app: ASGIApp = StreamableHTTPASGIApp(self.manager)

    def run(self) -> Any:
        """The session manager's lifetime (an async context manager for the app's lifespan)."""
        return self.manager.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            principal, binding = self._authorize(Request(scope))
        except KenningError as exc:
            status, body, headers = error_response_parts(exc, None)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {})[_STATE_KEY] = (principal, binding)
        await self._app(scope, receive, send)

    @staticmethod
    def _authorize(request: Request) -> tuple[Principal, ToolBinding]:
        """The principal the gate admitted (it checked the key and the rate from the
        headers) and the conversation the host bound the client to."""
        principal: Principal | None = getattr(request.state, PRINCIPAL, None)
        if principal is None:
            raise Unauthorized("a valid API key is required: send 'Authorization: Bearer <key>'")
        user = request.headers.get("kenning-user")
        session = request.headers.get("kenning-session")
        if not user or not session:
            raise InvalidInput(
                "bind the MCP client to a conversation with the Kenning-User and "
                "Kenning-Session headers"
            )
        share = request.headers.get("kenning-share-sessions", "").lower() == "true"
        scope = MemoryScope(principal.tenant, user, session)
        return principal, ToolBinding(scope, share_sessions=share)
