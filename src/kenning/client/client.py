"""``kenning.Client`` and ``kenning.AsyncClient``: a served memory with :class:`kenning.Memory`'s
method names and arguments, on httpx.

Moving from embedded to served is one line::

    memory = Memory.open("memory.db")                                   # embedded
    memory = Client("http://127.0.0.1:8080", api_key="kn_…")            # served

``client.context``, ``client.facts``, ``client.retention`` and ``client.procedures`` mirror
``memory.context`` and the long-term APIs; ``client.documents`` is the served namespaced
documents (:class:`kenning.api.DocumentsAPI`, what LangGraph's ``KenningStore`` keeps).
Records come back as the same frozen classes, and an error the server raised comes back as
the same :class:`~kenning.errors.KenningError` subclass (``ScopeConflict``,
``LegalHoldActive``, ``InvalidInput``, …); httpx's own errors become
:class:`~kenning.errors.ConnectionFailed`. The tenant is the API key's: a scope naming another
tenant is refused before anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Generic, TypeVar

import httpx

from kenning.api import EventLike, MemoryAPI, MemoryParts
from kenning.client import calls
from kenning.client.calls import Call, Identity
from kenning.client.documents import AsyncDocuments, Documents
from kenning.client.longterm import (
    AsyncFacts,
    AsyncProcedures,
    AsyncRetention,
    AsyncRuns,
    Facts,
    Part,
    Procedures,
    Retention,
    Runs,
)
from kenning.context.api import ContextAPI
from kenning.context.window import ContextWindow
from kenning.errors import ConnectionFailed, InvalidInput, KenningError
from kenning.records import (
    AuditEntry,
    Event,
    JSONScalar,
    Pin,
    PinKind,
    PinStatus,
    Scope,
    Summary,
    TaskState,
    TaskUpdate,
    check_json,
    too_deep,
)
from kenning.search.hits import SearchResults
from kenning.version import __version__
from kenning.wire import error_from_json

__all__ = ["AsyncClient", "Client"]

T = TypeVar("T")
H = TypeVar("H", httpx.Client, httpx.AsyncClient)


def _read(call: Call[T], response: httpx.Response) -> T:
    if call.text and response.status_code < 400:
        return call.decode(response.text)
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


def _request(call: Call[Any]) -> dict[str, Any]:
    """httpx's arguments for *call*. A body no server stores (a lone surrogate, ``NaN``,
    nesting past any parser) is refused here with the error the server would answer, instead
    of failing in the JSON encoder."""
    args: dict[str, Any] = {"params": dict(call.params) or None}
    if call.json is not None:
        try:
            text = json.dumps(call.json, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            args["content"] = text.encode()
        except RecursionError as exc:
            raise too_deep("the request body") from exc
        except ValueError as exc:  # a lone surrogate (UnicodeEncodeError), NaN or infinity
            check_json(call.json, "the request body", max_depth=1 << 30)
            raise InvalidInput(f"the request body is not JSON: {exc}") from exc
        args["headers"] = {"Content-Type": "application/json"}
    return args


def _transport_error(exc: httpx.HTTPError) -> ConnectionFailed:
    return ConnectionFailed(f"could not talk to the kenning server: {type(exc).__name__}: {exc}")


def _by_session(items: Sequence[tuple[Scope, EventLike]]) -> dict[Scope, list[EventLike]]:
    """The events of a bulk import grouped by session, each session's in their order."""
    groups: dict[Scope, list[EventLike]] = {}
    for scope, event in items:
        groups.setdefault(scope, []).append(event)
    return groups


class _Connection(Generic[H]):
    """A client's HTTP client, sending as its API key (closed by the client only if it made
    it), and the key's identity once the first scoped call asked for it."""

    def __init__(self, http: H, *, owned: bool, base_url: str, api_key: str) -> None:
        self.http: H = http
        self.owned = owned
        http.base_url = base_url
        http.headers.update(
            {"Authorization": f"Bearer {api_key}", "User-Agent": f"kenning-client/{__version__}"}
        )
        self.identity: Identity | None = None


class _ClientContext(Part[Runs], ContextAPI):
    """``client.context``: pins, task state, summaries and compaction of served sessions."""

    def set_pin(self, scope: Scope, kind: PinKind | str, value: str, *, key: str | None = None,
                amount: Decimal | str | None = None, currency: str | None = None,
                status: PinStatus | str = PinStatus.OPEN, source_event_id: str | None = None,
                metadata: Mapping[str, JSONScalar] | None = None) -> Pin:  # fmt: skip
        return self._c._run(calls.set_pin(
            scope, kind, value, key=key, amount=amount, currency=currency, status=status,
            source_event_id=source_event_id, metadata=metadata,
        ))  # fmt: skip

    def close_pin(self, scope: Scope, key: str) -> Pin:
        return self._c._run(calls.close_pin(scope, key))

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        return self._c._run(calls.pins(scope, history))

    def update_task(self, scope: Scope, update: TaskUpdate) -> TaskState:
        return self._c._run(calls.update_task(scope, update))

    def task_state(self, scope: Scope) -> TaskState:
        return self._c._run(calls.task_state(scope))

    def summaries(self, scope: Scope) -> list[Summary]:
        return self._c._run(calls.summaries(scope))

    def compaction_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        return self._c._run(calls.compaction_log(scope, limit))

    def compact(self, scope: Scope, *, budget_tokens: int, model: str) -> list[Summary]:
        return self._c._run(calls.compact(scope, budget_tokens, model))


class Client(MemoryParts[_ClientContext, Facts, Procedures, Retention], MemoryAPI):
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

    def __init__(self, base_url: str = "http://127.0.0.1:8080", *, api_key: str,
                 timeout: float = 30.0, http: httpx.Client | None = None) -> None:  # fmt: skip
        self._conn = _Connection(http or httpx.Client(timeout=timeout), owned=http is None,
                                 base_url=base_url, api_key=api_key)  # fmt: skip
        super().__init__(_ClientContext(self), Facts(self), Procedures(self), Retention(self))
        self._documents = Documents(self)

    @property
    def documents(self) -> Documents:
        """The tenant's namespaced JSON documents (:class:`kenning.api.DocumentsAPI`): what
        :class:`kenning.integrations.langgraph.KenningStore` keeps, on the server's clock and
        embedded with the server's model unless vectors are given."""
        return self._documents

    def _send(self, call: Call[T]) -> T:
        try:
            response = self._conn.http.request(call.method, call.path, **_request(call))
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from exc
        return _read(call, response)

    def _run(self, call: Call[T]) -> T:
        if call.scope is not None:
            if self._conn.identity is None:
                self._conn.identity = self._send(calls.whoami())
            calls.check(self._conn.identity, call.scope)
        return self._send(call)

    def whoami(self) -> Identity:
        """The key's tenant, id and scopes."""
        self._conn.identity = self._send(calls.whoami())
        return self._conn.identity

    def add_events(self, scope: Scope, events: Iterable[EventLike]) -> list[Event]:
        return self._run(calls.add_events(scope, events))

    def export(self, scope: Scope, *, vectors: bool = False) -> list[str]:
        """The lines of the ``kenning-export`` file of *scope* (the key's tenant, or one of
        its users) that ``kenning import`` reads; *vectors*: with the vectors."""
        return self._run(calls.export(scope, vectors))

    def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        """Append events of several sessions: one atomic request per session, in order."""
        return [e for s, events in _by_session(items).items() for e in self.add_events(s, events)]

    def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        return self._run(calls.get_session(scope, after_seq))

    def search(self, scope: Scope, query: str, *, k: int = 10, min_score: float = 0.0,
               filters: Mapping[str, object] | None = None, kinds: Iterable[str] | None = None,
               since: datetime | str | float | None = None,
               until: datetime | str | float | None = None,
               now: datetime | None = None) -> SearchResults:  # fmt: skip
        return self._run(calls.search(
            scope, query, k=k, min_score=min_score, filters=filters, kinds=kinds, since=since,
            until=until, now=now,
        ))  # fmt: skip

    def assemble(self, scope: Scope, *, budget_tokens: int, model: str,
                 reserve_output_tokens: int = 0, system: str, goal: str | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None, query: str | None = None,
                 retrieve_from: Scope | None = None) -> ContextWindow:  # fmt: skip
        return self._run(calls.assemble(
            scope, budget_tokens=budget_tokens, model=model,
            reserve_output_tokens=reserve_output_tokens, system=system, goal=goal, tools=tools,
            query=query, retrieve_from=retrieve_from,
        ))  # fmt: skip

    def forget(self, scope: Scope, *, ids: Sequence[str] | None = None,
               before: datetime | str | float | None = None) -> int:  # fmt: skip
        return self._run(calls.forget(scope, ids, before))

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The agent tools in the OpenAI function-calling format."""
        return self._run(calls.tools())

    def call_tool(
        self, scope: Scope, name: str, arguments: Mapping[str, Any], *, share_sessions: bool = False
    ) -> Any:
        """Run the agent tool *name* bound to the session of *scope*."""
        return self._run(calls.call_tool(scope, name, arguments, share_sessions))

    def close(self) -> None:
        if self._conn.owned:
            self._conn.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _AsyncClientContext(Part[AsyncRuns]):
    """``async_client.context``: the awaitable twin of ``client.context``."""

    async def set_pin(self, scope: Scope, kind: PinKind | str, value: str, *,
                      key: str | None = None, amount: Decimal | str | None = None,
                      currency: str | None = None, status: PinStatus | str = PinStatus.OPEN,
                      source_event_id: str | None = None,
                      metadata: Mapping[str, JSONScalar] | None = None) -> Pin:  # fmt: skip
        return await self._c._run(calls.set_pin(
            scope, kind, value, key=key, amount=amount, currency=currency, status=status,
            source_event_id=source_event_id, metadata=metadata,
        ))  # fmt: skip

    async def close_pin(self, scope: Scope, key: str) -> Pin:
        return await self._c._run(calls.close_pin(scope, key))

    async def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        return await self._c._run(calls.pins(scope, history))

    async def update_task(self, scope: Scope, update: TaskUpdate) -> TaskState:
        return await self._c._run(calls.update_task(scope, update))

    async def task_state(self, scope: Scope) -> TaskState:
        return await self._c._run(calls.task_state(scope))

    async def summaries(self, scope: Scope) -> list[Summary]:
        return await self._c._run(calls.summaries(scope))

    async def compaction_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        return await self._c._run(calls.compaction_log(scope, limit))

    async def compact(self, scope: Scope, *, budget_tokens: int, model: str) -> list[Summary]:
        return await self._c._run(calls.compact(scope, budget_tokens, model))


class AsyncClient(MemoryParts[_AsyncClientContext, AsyncFacts, AsyncProcedures, AsyncRetention]):
    """:class:`Client` for asyncio: the same methods, awaitable (``httpx.AsyncClient``)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8080", *, api_key: str,
                 timeout: float = 30.0, http: httpx.AsyncClient | None = None) -> None:  # fmt: skip
        self._conn = _Connection(http or httpx.AsyncClient(timeout=timeout), owned=http is None,
                                 base_url=base_url, api_key=api_key)  # fmt: skip
        super().__init__(
            _AsyncClientContext(self), AsyncFacts(self), AsyncProcedures(self), AsyncRetention(self)
        )
        self._documents = AsyncDocuments(self)

    @property
    def documents(self) -> AsyncDocuments:
        """``client.documents``, awaitable."""
        return self._documents

    async def _send(self, call: Call[T]) -> T:
        try:
            response = await self._conn.http.request(call.method, call.path, **_request(call))
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from exc
        return _read(call, response)

    async def _run(self, call: Call[T]) -> T:
        if call.scope is not None:
            if self._conn.identity is None:
                self._conn.identity = await self._send(calls.whoami())
            calls.check(self._conn.identity, call.scope)
        return await self._send(call)

    async def whoami(self) -> Identity:
        self._conn.identity = await self._send(calls.whoami())
        return self._conn.identity

    async def add_events(self, scope: Scope, events: Iterable[EventLike]) -> list[Event]:
        return await self._run(calls.add_events(scope, events))

    async def export(self, scope: Scope, *, vectors: bool = False) -> list[str]:
        return await self._run(calls.export(scope, vectors))

    async def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        return [e for s, events in _by_session(items).items()
                for e in await self.add_events(s, events)]  # fmt: skip

    async def get_session(self, scope: Scope, *, after_seq: int | None = None) -> list[Event]:
        return await self._run(calls.get_session(scope, after_seq))

    async def search(self, scope: Scope, query: str, *, k: int = 10, min_score: float = 0.0,
                     filters: Mapping[str, object] | None = None,
                     kinds: Iterable[str] | None = None,
                     since: datetime | str | float | None = None,
                     until: datetime | str | float | None = None,
                     now: datetime | None = None) -> SearchResults:  # fmt: skip
        return await self._run(calls.search(
            scope, query, k=k, min_score=min_score, filters=filters, kinds=kinds, since=since,
            until=until, now=now,
        ))  # fmt: skip

    async def assemble(self, scope: Scope, *, budget_tokens: int, model: str,
                       reserve_output_tokens: int = 0, system: str, goal: str | None = None,
                       tools: Sequence[Mapping[str, Any]] | None = None, query: str | None = None,
                       retrieve_from: Scope | None = None) -> ContextWindow:  # fmt: skip
        return await self._run(calls.assemble(
            scope, budget_tokens=budget_tokens, model=model,
            reserve_output_tokens=reserve_output_tokens, system=system, goal=goal, tools=tools,
            query=query, retrieve_from=retrieve_from,
        ))  # fmt: skip

    async def forget(self, scope: Scope, *, ids: Sequence[str] | None = None,
                     before: datetime | str | float | None = None) -> int:  # fmt: skip
        return await self._run(calls.forget(scope, ids, before))

    async def tool_definitions(self) -> list[dict[str, Any]]:
        return await self._run(calls.tools())

    async def call_tool(
        self, scope: Scope, name: str, arguments: Mapping[str, Any], *, share_sessions: bool = False
    ) -> Any:
        return await self._run(calls.call_tool(scope, name, arguments, share_sessions))

    async def aclose(self) -> None:
        if self._conn.owned:
            await self._conn.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
