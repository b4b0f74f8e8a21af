"""How a client method is made from the pure function that builds its request.

Every served method is the same three steps: build the :class:`~kenning.client.calls.Call`
from the arguments, check its scope against the key's tenant, send it and decode the answer.
The last two are the client's ``_run``; the first is a builder in :mod:`kenning.client.calls`,
:mod:`kenning.client.longterm_calls` or :mod:`kenning.client.document_calls`, whose signature
is the method's. So a method is written once, as its builder, and::

    class _FactCalls(Part[R]):
        revoke = Sent(calls.revoke)

    class Facts(_FactCalls[Runs], FactsAPI): ...   # client.facts.revoke(scope, fact_id)
    class AsyncFacts(_FactCalls[AsyncRuns]): ...    # await async_client.facts.revoke(...)

The same descriptor serves the sync client and the asyncio one. mypy checks a :class:`Sent`
method against the protocol the class implements (``FactsAPI``) as it checks a ``def``: a
builder whose arguments drift from the embedded API fails the type check.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Generic, ParamSpec, Protocol, Self, TypeVar, overload

from kenning.client.calls import Call

__all__ = ["AsyncRuns", "Part", "Runs", "Sent"]

P = ParamSpec("P")
T = TypeVar("T")


class Runs(Protocol):
    """A client that sends a call (after checking its scope against the key's tenant)."""

    def _run(self, call: Call[T]) -> T: ...


class AsyncRuns(Protocol):
    """:class:`Runs`, awaitable."""

    def _run(self, call: Call[T]) -> Awaitable[T]: ...


R = TypeVar("R", Runs, AsyncRuns)


class Part(Generic[R]):
    """A part of a client (``client.context``, ``client.facts``, …): its calls go through the
    client's ``_run``. ``Part[Runs]`` is a part of :class:`~kenning.client.Client`,
    ``Part[AsyncRuns]`` one of :class:`~kenning.client.AsyncClient`."""

    def __init__(self, client: R) -> None:
        self._c: R = client


class Sent(Generic[P, T]):
    """A client method that sends the call its builder makes and returns the decoded answer;
    on an asyncio client (or a part of one) the method returns an awaitable of it, and the
    request is built when it is awaited, as in an ``async def``."""

    __signature__: inspect.Signature

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build
        self._name = build.__name__
        self.__doc__ = build.__doc__
        self._bound = inspect.signature(build, eval_str=False)
        me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.__signature__ = self._bound.replace(parameters=[me, *self._bound.parameters.values()])

    def __set_name__(self, owner: type[Any], name: str) -> None:
        # The docstring of the protocol method this one implements (``FactsAPI.revoke``), so
        # ``help(client.facts.revoke)`` reads as ``help(memory.facts.revoke)`` does.
        self._name = name
        for base in owner.__mro__[1:]:
            if name in vars(base) and getattr(vars(base)[name], "__doc__", None):
                self.__doc__ = vars(base)[name].__doc__
                return

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, client: Part[Runs] | Runs, owner: type[Any]) -> Callable[P, T]: ...

    @overload
    def __get__(
        self, client: Part[AsyncRuns] | AsyncRuns, owner: type[Any]
    ) -> Callable[P, Awaitable[T]]: ...

    def __get__(self, client: Any, owner: type[Any]) -> Any:
        if client is None:
            return self
        run = (client._c if isinstance(client, Part) else client)._run
        method: Any = self._awaited(run) if inspect.iscoroutinefunction(run) else self._sent(run)
        method.__name__ = method.__qualname__ = self._name
        method.__doc__ = self.__doc__
        method.__signature__ = self._bound
        return method

    def _sent(self, run: Callable[[Call[T]], T]) -> Callable[P, T]:
        build = self._build

        def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return run(build(*args, **kwargs))

        return method

    def _awaited(self, run: Callable[[Call[T]], Awaitable[T]]) -> Callable[P, Awaitable[T]]:
        build = self._build

        async def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return await run(build(*args, **kwargs))

        return method

    def __call__(self, client: Any, /, *args: Any, **kwargs: Any) -> Any:
        return self.__get__(client, type(client))(*args, **kwargs)
