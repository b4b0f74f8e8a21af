"""``kenning.Client`` and ``kenning.AsyncClient``: a served memory with :class:`kenning.Memory`'s
method names and arguments, on httpx.

Moving from embedded to served is one line::

    memory = Memory.open("memory.db")                                   # embedded
    memory = Client("http://127.0.0.1:8080", api_key="kn_…")            # served

``client.context``, ``client.facts``, ``client.retention`` and ``client.procedures`` mirror
``memory.context`` and the long-term APIs. Records come back as the same frozen classes, and
an error the server raised comes back as the same :class:`~kenning.errors.KenningError`
subclass (``ScopeConflict``, ``LegalHoldActive``, ``InvalidInput``, …); httpx's own errors
become :class:`~kenning.errors.ConnectionFailed`. The tenant is the API key's: a scope naming
another tenant is refused before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

import httpx

from kenning.client.calls import Call, Calls, Identity
from kenning.client.longterm import (
    AsyncFacts,
    AsyncProcedures,
    AsyncRetention,
    Facts,
    Procedures,
    Retention,
)
from kenning.context.window import ContextWindow
from kenning.errors import ConnectionFailed, KenningError
from kenning.records import (
    AuditEntry,
    Event,
    JSONScalar,
    NewEvent,
    Pin,
    PinKind,
    PinStatus,
    Scope,
    Summary,
    TaskState,
    TaskUpdate,
)
from kenning.search.hits import SearchResults
from kenning.version import __version__
from kenning.wire import error_from_json

__all__ = ["AsyncClient", "Client"]

T = TypeVar("T")
EventLike = NewEvent | Mapping[str, Any]


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "User-Agent": f"kenning-client/{__version__}"}


def _read(call: Call[T], response: httpx.Response) -> T:
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.status_code >= 400:
        error = error_from_json(response.status_code, data)
        if call.absent is not None and error.code == call.absent[0]:
            return call.absent[1]  # type: ignore[no-any-return]
        raise error
    if data is None:
        raise KenningError(f"the server answered HTTP {response.status_code} without JSON")
    return call.decode(data)


def _transport_error(exc: httpx.HTTPError) -> ConnectionFailed:
    return ConnectionFailed(f"could not talk to the kenning server: {type(exc).__name__}: {exc}")


class _ClientContext:
    """``client.context``: pins, task state, summaries and compaction of served sessions."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def set_pin(
        self,
        scope: Scope,
        kind: PinKind | str,
        value: str,
        *,
        key: str | None = None,
        amount: Decimal | str | None = None,
        currency: str | None = None,
        status: PinStatus | str = PinStatus.OPEN,
        source_event_id: str | None = None,
        metadata: Mapping[str, JSONScalar] | None = None,
    ) -> Pin:
        """Set a pin (a new version if its key exists with another value)."""
        return self._c._run(scope, self._c._calls.set_pin(
            scope, kind, value, key=key, amount=amount, currency=currency, status=status,
            source_event_id=source_event_id, metadata=metadata,
        ))  # fmt: skip

    def close_pin(self, scope: Scope, key: str) -> Pin:
        """Close the pin *key*; history keeps it open."""
        return self._c._run(scope, self._c._calls.close_pin(scope, key))

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        """The session's current pins (every version with *history*)."""
        return self._c._run(scope, self._c._calls.pins(scope, history))

    def update_task(self, scope: Scope, update: TaskUpdate) -> TaskState:
        """Merge *update* into the session's task state."""
        return self._c._run(scope, self._c._calls.update_task(scope, update))

    def task_state(self, scope: Scope) -> TaskState:
        """The session's task state (empty if never set)."""
        return self._c._run(scope, self._c._calls.task_state(scope))

    def summaries(self, scope: Scope) -> list[Summary]:
        """The session's active summaries, oldest range first."""
        return self._c._run(scope, self._c._calls.summaries(scope))

    def compaction_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        """The session's compaction audit log, oldest first."""
        return self._c._run(scope, self._c._calls.compaction_log(scope, limit))

    def compact(self, scope: Scope, *, budget_tokens: int, model: str) -> list[Summary]:
        """Compact the session now, on the server."""
        return self._c._run(scope, self._c._calls.compact(scope, budget_tokens, model))


class Client:
    """A kenning server, with :class:`kenning.Memory`'s methods.

    Arguments:
        base_url: the server, e.g. ``http://127.0.0.1:8080``.
        api_key: a tenant's key (``kenning keys create``).
        timeout: seconds per request.
        http: an ``httpx.Client`` to send through instead of a new one (its base URL and
            headers are replaced); the caller keeps closing it.

    >>> client = Client("http://127.0.0.1:8080", api_key="kn_…")   # doctest: +SKIP
    >>> client.search(Scope("acme", "dana"), "refund approval", k=3)  # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        *,
        api_key: str,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        self._owned = http is None
        self._http = http or httpx.Client(timeout=timeout)
        self._http.base_url = base_url
        self._http.headers.update(_headers(api_key))
        self._calls = Calls()
        self._context = _ClientContext(self)
        self._facts = Facts(self)
        self._retention = Retention(self)
        self._procedures = Procedures(self)

    def _send(self, call: Call[T]) -> T:
        try:
            response = self._http.request(
                call.method, call.path, json=call.json, params=dict(call.params) or None
            )
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from exc
        return _read(call, response)

    def _run(self, scope: Scope | None, call: Call[T]) -> T:
        if scope is not None:
            if self._calls.identity is None:
                self._calls.identity = self._send(Calls.whoami())
            self._calls.check(scope)
        return self._send(call)

    @property
    def context(self) -> _ClientContext:
        """Pins, task state, summaries and compaction (as ``memory.context``)."""
        return self._context

    @property
    def facts(self) -> Facts:
        """Long-term facts, profiles and consent (as ``memory.facts``)."""
        return self._facts

    @property
    def retention(self) -> Retention:
        """Tenant policy, legal holds, the purge and stats (as ``memory.retention``; changes
        need the admin credential)."""
        return self._retention

    @property
    def procedures(self) -> Procedures:
        """Versioned playbooks (as ``memory.procedures``)."""
        return self._procedures

    def whoami(self) -> Identity:
        """The key's tenant, id and scopes."""
        self._calls.identity = self._send(Calls.whoami())
        return self._calls.identity

    def add_events(self, scope: Scope, events: Iterable[EventLike]) -> list[Event]:
        """Append events to the session of *scope* atomically; repeats of an ``id`` are
        skipped (not returned), so a retried call adds nothing twice."""
        return self._run(scope, self._calls.add_events(scope, events))

    def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        """Append events of several sessions: one atomic request per session, in order."""
        out: list[Event] = []
        groups: dict[Scope, list[EventLike]] = {}
        for scope, event in items:
            groups.setdefault(scope, []).append(event)
        for scope, events in groups.items():
            out.extend(self.add_events(scope, events))
        return out

    def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        """The events of the session of *scope*, in sequence order."""
        return self._run(scope, self._calls.get_session(scope, after_seq))

    def search(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 10,
        min_score: float = 0.0,
        filters: Mapping[str, object] | None = None,
        kinds: Iterable[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        now: datetime | None = None,
    ) -> SearchResults:
        """Hybrid search inside *scope* (see :meth:`kenning.Memory.search`)."""
        return self._run(scope, self._calls.search(
            scope, query, k=k, min_score=min_score, filters=filters, kinds=kinds, since=since,
            until=until, now=now,
        ))  # fmt: skip

    def assemble(
        self,
        scope: Scope,
        *,
        budget_tokens: int,
        model: str,
        reserve_output_tokens: int = 0,
        system: str,
        goal: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        query: str | None = None,
        retrieve_from: Scope | None = None,
    ) -> ContextWindow:
        """Build the window for the next model call (see :meth:`kenning.Memory.assemble`)."""
        return self._run(scope, self._calls.assemble(
            scope, budget_tokens=budget_tokens, model=model,
            reserve_output_tokens=reserve_output_tokens, system=system, goal=goal, tools=tools,
            query=query, retrieve_from=retrieve_from,
        ))  # fmt: skip

    def forget(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        before: datetime | str | float | None = None,
    ) -> int:
        """Erase records in *scope* (see :meth:`kenning.Memory.forget`); returns how many."""
        return self._run(scope, self._calls.forget(scope, ids, before))

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The agent tools in the OpenAI function-calling format."""
        return self._run(None, Calls.tools())

    def call_tool(
        self,
        scope: Scope,
        name: str,
        arguments: Mapping[str, Any],
        *,
        share_sessions: bool = False,
    ) -> Any:
        """Run the agent tool *name* bound to the session of *scope*."""
        return self._run(scope, self._calls.call_tool(scope, name, arguments, share_sessions))

    def close(self) -> None:
        if self._owned:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _AsyncClientContext:
    """``async_client.context``: the awaitable twin of ``client.context``."""

    def __init__(self, client: AsyncClient) -> None:
        self._c = client

    async def set_pin(
        self,
        scope: Scope,
        kind: PinKind | str,
        value: str,
        *,
        key: str | None = None,
        amount: Decimal | str | None = None,
        currency: str | None = None,
        status: PinStatus | str = PinStatus.OPEN,
        source_event_id: str | None = None,
        metadata: Mapping[str, JSONScalar] | None = None,
    ) -> Pin:
        return await self._c._run(scope, self._c._calls.set_pin(
            scope, kind, value, key=key, amount=amount, currency=currency, status=status,
            source_event_id=source_event_id, metadata=metadata,
        ))  # fmt: skip

    async def close_pin(self, scope: Scope, key: str) -> Pin:
        return await self._c._run(scope, self._c._calls.close_pin(scope, key))

    async def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        return await self._c._run(scope, self._c._calls.pins(scope, history))

    async def update_task(self, scope: Scope, update: TaskUpdate) -> TaskState:
        return await self._c._run(scope, self._c._calls.update_task(scope, update))

    async def task_state(self, scope: Scope) -> TaskState:
        return await self._c._run(scope, self._c._calls.task_state(scope))

    async def summaries(self, scope: Scope) -> list[Summary]:
        return await self._c._run(scope, self._c._calls.summaries(scope))

    async def compaction_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        return await self._c._run(scope, self._c._calls.compaction_log(scope, limit))

    async def compact(self, scope: Scope, *, budget_tokens: int, model: str) -> list[Summary]:
        return await self._c._run(scope, self._c._calls.compact(scope, budget_tokens, model))


class AsyncClient:
    """:class:`Client` for asyncio: the same methods, awaitable (``httpx.AsyncClient``)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        *,
        api_key: str,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self._owned = http is None
        self._http = http or httpx.AsyncClient(timeout=timeout)
        self._http.base_url = base_url
        self._http.headers.update(_headers(api_key))
        self._calls = Calls()
        self._context = _AsyncClientContext(self)
        self._facts = AsyncFacts(self)
        self._retention = AsyncRetention(self)
        self._procedures = AsyncProcedures(self)

    async def _send(self, call: Call[T]) -> T:
        try:
            response = await self._http.request(
                call.method, call.path, json=call.json, params=dict(call.params) or None
            )
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from exc
        return _read(call, response)

    async def _run(self, scope: Scope | None, call: Call[T]) -> T:
        if scope is not None:
            if self._calls.identity is None:
                self._calls.identity = await self._send(Calls.whoami())
            self._calls.check(scope)
        return await self._send(call)

    @property
    def context(self) -> _AsyncClientContext:
        return self._context

    @property
    def facts(self) -> AsyncFacts:
        return self._facts

    @property
    def retention(self) -> AsyncRetention:
        return self._retention

    @property
    def procedures(self) -> AsyncProcedures:
        return self._procedures

    async def whoami(self) -> Identity:
        self._calls.identity = await self._send(Calls.whoami())
        return self._calls.identity

    async def add_events(self, scope: Scope, events: Iterable[EventLike]) -> list[Event]:
        return await self._run(scope, self._calls.add_events(scope, events))

    async def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        out: list[Event] = []
        groups: dict[Scope, list[EventLike]] = {}
        for scope, event in items:
            groups.setdefault(scope, []).append(event)
        for scope, events in groups.items():
            out.extend(await self.add_events(scope, events))
        return out

    async def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        return await self._run(scope, self._calls.get_session(scope, after_seq))

    async def search(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 10,
        min_score: float = 0.0,
        filters: Mapping[str, object] | None = None,
        kinds: Iterable[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        now: datetime | None = None,
    ) -> SearchResults:
        return await self._run(scope, self._calls.search(
            scope, query, k=k, min_score=min_score, filters=filters, kinds=kinds, since=since,
            until=until, now=now,
        ))  # fmt: skip

    async def assemble(
        self,
        scope: Scope,
        *,
        budget_tokens: int,
        model: str,
        reserve_output_tokens: int = 0,
        system: str,
        goal: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        query: str | None = None,
        retrieve_from: Scope | None = None,
    ) -> ContextWindow:
        return await self._run(scope, self._calls.assemble(
            scope, budget_tokens=budget_tokens, model=model,
            reserve_output_tokens=reserve_output_tokens, system=system, goal=goal, tools=tools,
            query=query, retrieve_from=retrieve_from,
        ))  # fmt: skip

    async def forget(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        before: datetime | str | float | None = None,
    ) -> int:
        return await self._run(scope, self._calls.forget(scope, ids, before))

    async def tool_definitions(self) -> list[dict[str, Any]]:
        return await self._run(None, Calls.tools())

    async def call_tool(
        self,
        scope: Scope,
        name: str,
        arguments: Mapping[str, Any],
        *,
        share_sessions: bool = False,
    ) -> Any:
        return await self._run(scope, self._calls.call_tool(scope, name, arguments, share_sessions))

    async def aclose(self) -> None:
        if self._owned:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
