"""What each client method sends and how its answer is read: pure, shared by
:class:`~kenning.client.Client` and :class:`~kenning.client.AsyncClient`, so the two cannot
drift apart. A :class:`Call` is an HTTP request description plus the decoder of its body and
the scope it acts in, which the client checks against its key's tenant before sending.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from kenning.api import EventLike
from kenning.context.actions import ActionLog
from kenning.context.api import session_of, window_source
from kenning.context.window import ContextWindow
from kenning.errors import InvalidInput, InvalidScope
from kenning.records import (
    USER,
    AuditEntry,
    Decision,
    Event,
    Fact,
    FactCategory,
    Finding,
    HypothesisChange,
    JSONScalar,
    NewEvent,
    Pin,
    PinKind,
    PinStatus,
    Scope,
    Summary,
    TaskState,
    TaskUpdate,
    too_deep,
)
from kenning.search.hits import SearchResults
from kenning.wire import (
    actions_from_json,
    audit_from_json,
    event_from_json,
    fact_from_json,
    pin_from_json,
    results_from_json,
    summary_from_json,
    task_from_json,
    window_from_json,
)

__all__ = [
    "Call",
    "Identity",
    "add_events",
    "assemble",
    "call_tool",
    "check",
    "close_pin",
    "compact",
    "compaction_log",
    "export",
    "forget",
    "get_session",
    "pins",
    "promote_finding",
    "search",
    "set_pin",
    "summaries",
    "task_state",
    "tools",
    "update_task",
    "whoami",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One HTTP request and the reader of its JSON answer."""

    method: str
    path: str
    decode: Callable[[Any], T]
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    #: An answer with this error code is read as this value instead (e.g. an empty session).
    absent: tuple[str, Any] | None = None
    #: The scope the call acts in, checked against the key's tenant (None: the credential's
    #: own, e.g. the operator's admin routes).
    scope: Scope | None = None
    #: The answer is text (JSON Lines), given to ``decode`` as it is.
    text: bool = False


@dataclass(frozen=True, slots=True)
class Identity:
    """The calling key's tenant and scopes (``GET /v1/me``)."""

    tenant: str
    key_id: str
    scopes: tuple[str, ...]


def _when(value: datetime | str | float | None) -> str | float | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _plain(value: Any) -> Any:
    """A JSON-ready copy of an event field (times as ISO text, enums as values)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _event_body(event: EventLike) -> dict[str, Any]:
    if isinstance(event, NewEvent):
        data = {f.name: getattr(event, f.name) for f in fields(event)}
    elif isinstance(event, Mapping):
        data = dict(event)
    else:
        raise InvalidInput(f"an event must be a NewEvent or a mapping, not {type(event).__name__}")
    try:
        return {k: _plain(v) for k, v in data.items() if v is not None and v != {} and v != ()}
    except RecursionError as exc:
        raise too_deep("an event") from exc


def _session(scope: Scope) -> tuple[str, str]:
    session_of(scope)
    assert scope.user is not None and scope.session is not None
    return scope.user, scope.session


def _events(data: Any) -> list[Event]:
    return [event_from_json(e) for e in data["events"]]


def export(scope: Scope, *, vectors: bool = False) -> Call[list[str]]:
    """The lines of the ``kenning-export`` file of *scope* (the key's tenant, or one of its
    users) that ``kenning import`` reads; *vectors*: with the vectors (``GET /v1/export``)."""
    if scope.session is not None:
        raise InvalidScope("an export is of a tenant or of one user: leave the session out")
    params: dict[str, Any] = {"vectors": "true" if vectors else "false"}
    if scope.user is not None:
        params["user"] = scope.user
    return Call("GET", "/v1/export", lambda text: [x for x in text.splitlines() if x],
                params=params, scope=scope, text=True)  # fmt: skip


def whoami() -> Call[Identity]:
    return Call("GET", "/v1/me", lambda d: Identity(d["tenant"], d["key_id"], tuple(d["scopes"])))


def check(identity: Identity, scope: Scope) -> None:
    """Refuse a scope of another tenant than the key's: the server would act in the key's
    tenant, not the one the caller named."""
    if not isinstance(scope, Scope):
        raise InvalidInput("scope must be a kenning.Scope")
    if scope.tenant != identity.tenant:
        raise InvalidScope(
            f"this client's API key belongs to tenant {identity.tenant!r}, not "
            f"{scope.tenant!r}: use a key of that tenant"
        )


# -- the facade ----------------------------------------------------------------------------


def add_events(scope: Scope, events: Iterable[EventLike]) -> Call[list[Event]]:
    user, session = _session(scope)
    body = {"user": user, "events": [_event_body(e) for e in events]}
    return Call("POST", f"/v1/sessions/{session}/events", _events, json=body, scope=scope)


def get_session(scope: Scope, *, after_seq: int | None = None) -> Call[list[Event]]:
    user, session = _session(scope)
    params: dict[str, Any] = {"user": user}
    if after_seq is not None:
        params["after_seq"] = after_seq
    return Call("GET", f"/v1/sessions/{session}/events", _events, params=params,
                absent=("not_found", []), scope=scope)  # fmt: skip


def search(
    scope: Scope, query: str, *, k: int = 10, min_score: float = 0.0,
    filters: Mapping[str, object] | None = None, kinds: Iterable[str] | None = None,
    since: datetime | str | float | None = None, until: datetime | str | float | None = None,
    now: datetime | None = None,
) -> Call[SearchResults]:  # fmt: skip
    body = {
        "query": query, "user": scope.user, "session": scope.session, "k": k,
        "min_score": min_score, "filters": None if filters is None else dict(filters),
        "kinds": None if kinds is None else list(kinds), "since": _when(since),
        "until": _when(until), "now": _when(now),
    }  # fmt: skip
    return Call("POST", "/v1/search", results_from_json, json=_compact(body), scope=scope)


def assemble(
    scope: Scope, *, budget_tokens: int, model: str, reserve_output_tokens: int = 0, system: str,
    goal: str | None = None, tools: Sequence[Mapping[str, Any]] | None = None,
    query: str | None = None, retrieve_from: Scope | None = None,
) -> Call[ContextWindow]:  # fmt: skip
    user, session = _session(scope)
    source = window_source(scope, retrieve_from)
    wider = _compact({"user": source.user, "session": source.session})
    body = {
        "user": user, "budget_tokens": budget_tokens, "model": model,
        "reserve_output_tokens": reserve_output_tokens, "system": system, "goal": goal,
        "tools": None if tools is None else [dict(t) for t in tools], "query": query,
        "retrieve_from": None if retrieve_from is None else wider,
    }  # fmt: skip
    path = f"/v1/sessions/{session}/assemble"
    return Call("POST", path, window_from_json, json=_compact(body), scope=scope)


def forget(
    scope: Scope, *, ids: Sequence[str] | None = None,
    before: datetime | str | float | None = None,
) -> Call[int]:  # fmt: skip
    # A tenant-wide erase says so: the server refuses a body that names no user without it.
    body = {"user": scope.user, "session": scope.session, "tenant": scope.user is None or None,
            "ids": None if ids is None else list(ids), "before": _when(before)}  # fmt: skip
    return Call("POST", "/v1/forget", lambda d: int(d["erased"]), json=_compact(body), scope=scope)


# -- working context -----------------------------------------------------------------------


def set_pin(
    scope: Scope, kind: PinKind | str, value: str, *, key: str | None = None,
    amount: Decimal | str | None = None, currency: str | None = None,
    status: PinStatus | str = PinStatus.OPEN, source_event_id: str | None = None,
    metadata: Mapping[str, JSONScalar] | None = None,
) -> Call[Pin]:  # fmt: skip
    user, session = _session(scope)
    body = {
        "user": user, "kind": _plain(kind), "value": value, "key": key,
        "amount": None if amount is None else str(amount), "currency": currency,
        "status": _plain(status), "source_event_id": source_event_id,
        "metadata": None if metadata is None else dict(metadata),
    }  # fmt: skip
    path = f"/v1/sessions/{session}/pins"
    return Call("POST", path, pin_from_json, json=_compact(body), scope=scope)


def close_pin(scope: Scope, key: str) -> Call[Pin]:
    user, session = _session(scope)
    return Call("POST", f"/v1/sessions/{session}/pins/close", pin_from_json,
                json={"user": user, "key": key}, scope=scope)  # fmt: skip


def pins(scope: Scope, *, history: bool = False) -> Call[list[Pin]]:
    user, session = _session(scope)
    return Call("GET", f"/v1/sessions/{session}/pins",
                lambda d: [pin_from_json(p) for p in d["pins"]],
                params={"user": user, "history": str(history).lower()}, scope=scope)  # fmt: skip


def update_task(scope: Scope, update: TaskUpdate) -> Call[TaskState]:
    user, session = _session(scope)
    if not isinstance(update, TaskUpdate):
        raise InvalidInput("update must be a kenning.TaskUpdate")
    body = {
        "user": user, "task": update.task, "subtask": update.subtask,
        "status": _plain(update.status),
        "decisions": [{"text": d.text, "rationale": d.rationale}
                      for d in update.decisions if isinstance(d, Decision)],
        "constraints": list(update.constraints),
        "drop_constraints": list(update.drop_constraints),
        "hypotheses": [{"text": h.text, "status": _plain(h.status), "evidence": list(h.evidence),
                        "reason": h.reason, "reopen": h.reopen}
                       for h in update.hypotheses if isinstance(h, HypothesisChange)],
        "findings": [{"text": f.text, "evidence": list(f.evidence)}
                     for f in update.findings if isinstance(f, Finding)],
    }  # fmt: skip
    path = f"/v1/sessions/{session}/task"
    return Call("POST", path, task_from_json, json=_compact(body), scope=scope)


def promote_finding(
    scope: Scope, finding_id: str, *, attribute: str, value: str | None = None,
    subject: str = USER, qualifier: str = "",
    category: FactCategory | str = FactCategory.GENERAL,
) -> Call[Fact]:  # fmt: skip
    user, session = _session(scope)
    if not isinstance(finding_id, str) or not finding_id:
        raise InvalidInput("finding_id must be a finding's id (f_..., from the task state)")
    body = {"user": user, "attribute": attribute, "value": value, "subject": subject,
            "qualifier": qualifier, "category": _plain(category)}  # fmt: skip
    path = f"/v1/sessions/{session}/task/findings/{quote(finding_id, safe='')}/promote"
    return Call("POST", path, fact_from_json, json=_compact(body), scope=scope)


def task_state(scope: Scope) -> Call[TaskState]:
    user, session = _session(scope)
    return Call("GET", f"/v1/sessions/{session}/task", task_from_json, params={"user": user},
                scope=scope)  # fmt: skip


def action_log(scope: Scope) -> Call[ActionLog]:
    user, session = _session(scope)
    return Call("GET", f"/v1/sessions/{session}/actions", actions_from_json,
                params={"user": user}, scope=scope)  # fmt: skip


def summaries(scope: Scope) -> Call[list[Summary]]:
    user, session = _session(scope)
    return Call("GET", f"/v1/sessions/{session}/summaries",
                lambda d: [summary_from_json(s) for s in d["summaries"]],
                params={"user": user}, scope=scope)  # fmt: skip


def compaction_log(scope: Scope, *, limit: int = 1_000) -> Call[list[AuditEntry]]:
    user, session = _session(scope)
    return Call("GET", f"/v1/sessions/{session}/compaction",
                lambda d: [audit_from_json(a) for a in d["audit"]],
                params={"user": user, "limit": limit}, scope=scope)  # fmt: skip


def compact(scope: Scope, *, budget_tokens: int, model: str) -> Call[list[Summary]]:
    user, session = _session(scope)
    return Call("POST", f"/v1/sessions/{session}/compact",
                lambda d: [summary_from_json(s) for s in d["summaries"]],
                json={"user": user, "budget_tokens": budget_tokens, "model": model},
                scope=scope)  # fmt: skip


# -- tools ---------------------------------------------------------------------------------


def tools() -> Call[list[dict[str, Any]]]:
    """The agent tools in the OpenAI function-calling format."""
    return Call("GET", "/v1/tools", lambda d: list(d["tools"]))


def call_tool(
    scope: Scope, name: str, arguments: Mapping[str, Any], *, share_sessions: bool = False
) -> Call[Any]:
    """Run the agent tool *name* bound to the session of *scope*."""
    user, session = _session(scope)
    body = {"user": user, "session": session, "arguments": dict(arguments),
            "share_sessions": share_sessions}  # fmt: skip
    return Call("POST", f"/v1/tools/{name}", lambda d: d["result"], json=body, scope=scope)


def _compact(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}
