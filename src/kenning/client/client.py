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
from collections.abc import Sequence
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
    Facts,
    Procedures,
    Retention,
)
from kenning.client.part import AsyncRuns, Part, R, Runs, Sent
from kenning.context.api import ContextAPI
from kenning.errors import ConnectionFailed, InvalidInput, KenningError
from kenning.records import (
    Event,
    Scope,
    check_json,
    too_deep,
)
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


class _ContextCalls(Part[R]):
    set_pin = Sent(calls.set_pin)
    close_pin = Sent(calls.close_pin)
    pins = Sent(calls.pins)
    update_task = Sent(calls.update_task)
    task_state = Sent(calls.task_state)
    action_log = Sent(calls.action_log)
    summaries = Sent(calls.summaries)
    compaction_log = Sent(calls.compaction_log)
    compact = Sent(calls.compact)
    promote_finding = Sent(calls.promote_finding)


class _ClientContext(_ContextCalls[Runs], ContextAPI):
    """``client.context``: pins, task state, summaries and compaction of served sessions."""


class _AsyncClientContext(_ContextCalls[AsyncRuns]):
    """``async_client.context``: the awaitable twin of ``client.context``."""


class _MemoryCalls:
    """The facade's calls, on :class:`Client` and :class:`AsyncClient` alike (each is its own
    runner)."""

    add_events = Sent(calls.add_events)
    export = Sent(calls.export)
    get_session = Sent(calls.get_session)
    search = Sent(calls.search)
    assemble = Sent(calls.assemble)
    forget = Sent(calls.forget)
    tool_definitions = Sent(calls.tools)
    call_tool = Sent(calls.call_tool)


class Client(MemoryParts[_ClientContext, Facts, Procedures, Retention], _MemoryCalls, MemoryAPI):
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

    def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        """Append events of several sessions: one atomic request per session, in order."""
        return [e for s, events in _by_session(items).items() for e in self.add_events(s, events)]

    def close(self) -> None:
        if self._conn.owned:
            self._conn.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(
    MemoryParts[_AsyncClientContext, AsyncFacts, AsyncProcedures, AsyncRetention], _MemoryCalls
):
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

    async def ingest(self, items: Sequence[tuple[Scope, EventLike]]) -> list[Event]:
        """Append events of several sessions: one atomic request per session, in order."""
        return [e for s, events in _by_session(items).items()
                for e in await self.add_events(s, events)]  # fmt: skip

    async def aclose(self) -> None:
        if self._conn.owned:
            await self._conn.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
