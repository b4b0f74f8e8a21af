"""OpenTelemetry spans for kenning's operations, emitted only where the host has set up the
OpenTelemetry SDK (``pip install 'kenning[otel]'``, then the host's ``TracerProvider``).

Without the ``opentelemetry-api`` package nothing is imported and nothing happens; with the API
but no SDK configured, its tracer is the no-op one. Spans: ``create_memory`` (add events),
``search_memory``, ``delete_memory`` (forget), ``assemble_window``, ``compact_session`` and
``extract_facts``; the store's transactions are their children (``kenning.store.read`` and
``kenning.store.write``).

Attribute names follow the OpenTelemetry GenAI semantic conventions where they name the thing
(:data:`CONVENTIONS`): ``gen_ai.operation.name``, ``gen_ai.memory.store.id``,
``gen_ai.memory.record.count``, ``gen_ai.memory.query.text``, ``gen_ai.conversation.id``,
``gen_ai.request.model``; kenning's own under ``kenning.``. The tenant is recorded as a hash
(the first 16 hex digits of its SHA-256) unless :func:`configure` says otherwise, and no
content (queries, texts) is recorded unless the host turns it on.

Stage timers (:func:`stage`, :func:`collect_stages`) are apart from OpenTelemetry: they add up
where the write path spends its time while a benchmark collects them, and cost one global
lookup otherwise.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

__all__ = ["CONVENTIONS", "Attributes", "StageTimes", "collect_stages", "configure", "content",
           "scope_attributes", "span", "stage", "tenant_attribute", "traced"]  # fmt: skip

#: The conventions the attribute names follow.
CONVENTIONS = (
    "OpenTelemetry GenAI semantic conventions: the gen_ai registry of "
    "open-telemetry/semantic-conventions-genai (status: development), as of 2026-11"
)

Attributes = Mapping[str, str | int | float | bool]
F = TypeVar("F", bound=Callable[..., Any])


class SpanLike(Protocol):
    def set_attribute(self, key: str, value: Any) -> Any: ...


@dataclass(slots=True)
class _Settings:
    record_content: bool = False
    hash_tenants: bool = True


_settings = _Settings()
_tracer: Any = None
_looked = False


def configure(*, record_content: bool = False, hash_tenants: bool = True) -> None:
    """What spans may carry: content (queries, record texts) and tenant names in clear.
    Both are off by default."""
    _settings.record_content = record_content
    _settings.hash_tenants = hash_tenants


def tenant_attribute(tenant: str) -> str:
    if not _settings.hash_tenants:
        return tenant
    return hashlib.sha256(tenant.encode()).hexdigest()[:16]


def content(key: str, value: str) -> dict[str, str]:
    """``{key: value}`` when the host records content, else nothing."""
    return {key: value} if _settings.record_content else {}


class _NullSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        return None


@contextmanager
def span(name: str, attributes: Attributes) -> Iterator[SpanLike]:
    """A span named *name* around the block (the current span its parent), or nothing
    without OpenTelemetry. An exception ends it with an error status and ``error.type``."""
    tracer = _get_tracer()
    if tracer is None:
        yield _NullSpan()
        return
    with tracer.start_as_current_span(name, attributes=dict(attributes)) as current:
        try:
            yield current
        except BaseException as exc:
            current.set_attribute("error.type", getattr(exc, "code", type(exc).__name__))
            raise


def traced(
    operation: str,
    before: Callable[..., Attributes],
    after: Callable[[Any], Attributes] = lambda _: {},
) -> Callable[[F], F]:
    """Run the decorated function inside a span for *operation*: *before* gives attributes
    from the call's arguments, *after* from its result."""

    def wrap(function: F) -> F:
        @functools.wraps(function)
        def inner(*args: Any, **kwargs: Any) -> Any:
            if _get_tracer() is None:
                return function(*args, **kwargs)
            attributes = {"gen_ai.operation.name": operation, **before(*args, **kwargs)}
            with span(operation, attributes) as current:
                result = function(*args, **kwargs)
                for key, value in after(result).items():
                    current.set_attribute(key, value)
                return result

        return inner  # type: ignore[return-value]

    return wrap


def _get_tracer() -> Any:
    global _tracer, _looked
    if not _looked:
        try:
            from opentelemetry import trace
        except ImportError:
            _tracer = None
        else:
            _tracer = trace.get_tracer("kenning", _version())
        _looked = True
    if _tracer is None or _unset(_tracer):
        return None
    return _tracer


def _unset(tracer: Any) -> bool:
    """Whether no tracer provider is set yet (the API's default proxy, whose spans would all
    be no-ops): then no span is started and the hot paths pay this one call."""
    from opentelemetry import trace

    return type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"


class _ScopeLike(Protocol):
    @property
    def tenant(self) -> str: ...
    @property
    def user(self) -> str | None: ...
    @property
    def session(self) -> str | None: ...


def scope_attributes(scope: _ScopeLike) -> dict[str, str]:
    """The tenant (hashed unless configured), the scope's kind and, for a session, its id as
    the conversation id."""
    kind = "session" if scope.session else "user" if scope.user else "tenant"
    out = {"kenning.tenant": tenant_attribute(scope.tenant), "kenning.scope.kind": kind}
    if scope.session:
        out["gen_ai.conversation.id"] = scope.session
    return out


def _version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kenning")
    except PackageNotFoundError:
        return None


class StageTimes:
    """Seconds spent in each named stage, summed over threads, while :func:`collect_stages`
    is on: wall clock (``seconds``) and the CPU time of the thread that ran the stage
    (``cpu_seconds``; not the CPU of other threads it waited for, such as onnxruntime's own
    pool). ``own_seconds`` and ``own_cpu_seconds`` leave out the stages opened inside it on
    the same thread (``store`` without the ``index`` it runs)."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.cpu_seconds: defaultdict[str, float] = defaultdict(float)
        self.own_seconds: defaultdict[str, float] = defaultdict(float)
        self.own_cpu_seconds: defaultdict[str, float] = defaultdict(float)
        self._lock = threading.Lock()

    def add(
        self, name: str, seconds: float, cpu_seconds: float = 0.0, *,
        inner: tuple[float, float] = (0.0, 0.0),
    ) -> None:  # fmt: skip
        """Count a stage that took *seconds* (*cpu_seconds*), *inner* of it in nested ones."""
        with self._lock:
            self.seconds[name] += seconds
            self.cpu_seconds[name] += cpu_seconds
            self.own_seconds[name] += seconds - inner[0]
            self.own_cpu_seconds[name] += cpu_seconds - inner[1]


_stages: StageTimes | None = None


@contextmanager
def collect_stages() -> Iterator[StageTimes]:
    """Sum the :func:`stage` timers of every thread into a fresh :class:`StageTimes` until
    the block ends (benchmarks; one collection at a time)."""
    global _stages
    times = _stages = StageTimes()
    try:
        yield times
    finally:
        _stages = None


_open_stages = threading.local()  # per thread: [wall, cpu] of the stages nested in each


class stage:  # noqa: N801 (used like a function: ``with stage("model"):``)
    """Time the block under *name* while stages are collected; otherwise nothing but one
    global lookup (nested stages are each counted whole, and apart in the ``own`` figures)."""

    __slots__ = ("_cpu", "_inner", "_name", "_started")

    def __init__(self, name: str) -> None:
        self._name = name
        self._started = 0.0
        self._cpu = 0.0
        self._inner = [0.0, 0.0]

    def __enter__(self) -> None:
        if _stages is not None:
            self._started = time.perf_counter()
            self._cpu = time.thread_time()
            _stack().append(self._inner)

    def __exit__(self, *exc: object) -> None:
        if not self._started:
            return
        wall, cpu = time.perf_counter() - self._started, time.thread_time() - self._cpu
        stack = _stack()
        if stack and stack[-1] is self._inner:
            stack.pop()
        if stack:
            stack[-1][0] += wall
            stack[-1][1] += cpu
        times = _stages
        if times is not None:
            times.add(self._name, wall, cpu, inner=(self._inner[0], self._inner[1]))


def _stack() -> list[list[float]]:
    stack: list[list[float]] | None = getattr(_open_stages, "stack", None)
    if stack is None:
        stack = _open_stages.stack = []
    return stack
