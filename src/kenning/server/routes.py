"""The tenant routes of ``/v1``: events, search, windows, pins, task state, compaction, erasure
and agent tools. Each is a thin translation: authorize, build the scope from the key's tenant
and the request's user and session, call :class:`kenning.Memory`, encode with
:mod:`kenning.wire`.

Handlers are plain ``def``: Memory is synchronous, so FastAPI runs them on its thread pool and
the event loop stays free. Long-term memory (facts, profile, procedures, consent, retention,
stats) adds its routes here, on the same pattern, when it lands.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from kenning.archive import export_lines
from kenning.errors import InvalidInput, NotFound
from kenning.records import KeyScope, Scope, TaskUpdate
from kenning.server.gate import BY_TOOL, READS
from kenning.server.schemas import (
    AppendRequest,
    AssembleRequest,
    ClosePinRequest,
    CompactRequest,
    ForgetRequest,
    PinRequest,
    SearchRequest,
    TaskRequest,
    ToolCallRequest,
)
from kenning.server.state import authorize, scope_in, service, tenant_scope
from kenning.tools import ToolBinding
from kenning.wire import (
    audit_json,
    event_json,
    job_json,
    pin_json,
    results_json,
    summary_json,
    task_json,
    window_json,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1")

SessionId = Annotated[str, Query(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:@-]+$")]
UserQ = Annotated[str, Query(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:@-]+$")]
Json = dict[str, Any]


def _session_scope(request: Request, need: KeyScope, user: str, session: str) -> Scope:
    return tenant_scope(authorize(request, need), user, session)


@router.get("/me", tags=["keys"], summary="The tenant and scopes of the calling key")
def whoami(request: Request) -> Json:
    principal = authorize(request, KeyScope.READ)
    key = principal.key
    return {"tenant": key.tenant, "key_id": key.id, "scopes": [s.value for s in key.scopes]}


@router.post("/sessions/{session}/events", tags=["events"], summary="Append events")
def append_events(request: Request, session: str, body: AppendRequest) -> Json:
    """Append events to a session atomically. An event whose ``id`` (or ``idempotency_key``)
    the session holds already is skipped, so a retried request adds nothing twice."""
    svc = service(request)
    scope = _session_scope(request, KeyScope.WRITE, body.user, session)
    events = [e.model_dump(exclude_none=True) for e in body.events]
    written = svc.memory.add_events(scope, events, quota=svc.quota)
    return {"events": [event_json(e) for e in written], "skipped": len(events) - len(written)}


@router.get("/sessions/{session}/events", tags=["events"], summary="Read a session")
def get_session(
    request: Request, session: str, user: UserQ, after_seq: Annotated[int | None, Query()] = None
) -> Json:
    scope = _session_scope(request, KeyScope.READ, user, session)
    events = service(request).memory.get_session(scope, after_seq=after_seq)
    if not events and after_seq is None:
        # The same answer for a session that never existed and one of another tenant.
        raise NotFound(f"no session {session!r} with events")
    return {"events": [event_json(e) for e in events]}


@router.post(
    "/search", tags=["search"], summary="Hybrid search in the tenant, a user or a session",
    openapi_extra=READS,
)  # fmt: skip
def search(request: Request, body: SearchRequest) -> Json:
    tenant = authorize(request, KeyScope.READ).tenant
    scope = scope_in(tenant, body.user, body.session, what="a session search")
    results = service(request).memory.search(
        scope, body.query, k=body.k, min_score=body.min_score, filters=body.filters,
        kinds=body.kinds, since=body.since, until=body.until, now=body.now,  # type: ignore[arg-type]
    )  # fmt: skip
    return results_json(results)


@router.post(
    "/sessions/{session}/assemble", tags=["context"], summary="Build the next window",
    openapi_extra=READS,
)  # fmt: skip
def assemble(request: Request, session: str, body: AssembleRequest) -> Json:
    """The window of the session's next model call. A key without the ``write`` scope gets
    its window without writing anything: at hard pressure the summaries are made for that
    window only, and no compaction is queued, audited or stored."""
    principal = authorize(request, KeyScope.READ)
    scope = tenant_scope(principal, body.user, session)
    source = None
    if body.retrieve_from is not None:
        source = Scope(scope.tenant, body.retrieve_from.user, body.retrieve_from.session)
    window = service(request).memory.context.assemble(
        scope, budget_tokens=body.budget_tokens, model=body.model,
        reserve_output_tokens=body.reserve_output_tokens, system=body.system, goal=body.goal,
        tools=body.tools, query=body.query, retrieve_from=source,
        read_only=KeyScope.WRITE not in principal.key.scopes,
    )  # fmt: skip
    return window_json(window)


@router.get("/sessions/{session}/pins", tags=["pins"], summary="A session's pins")
def pins(request: Request, session: str, user: UserQ, history: bool = False) -> Json:
    scope = _session_scope(request, KeyScope.READ, user, session)
    found = service(request).memory.context.pins(scope, history=history)
    return {"pins": [pin_json(p) for p in found]}


@router.post("/sessions/{session}/pins", tags=["pins"], summary="Set a pin (host application)")
def set_pin(request: Request, session: str, body: PinRequest) -> Json:
    """Set a pin of any kind, approvals, authorizations and human-gate outcomes included: this
    route is the host application's, not the agent's (the agent's ``set_pin`` tool refuses
    those kinds)."""
    scope = _session_scope(request, KeyScope.WRITE, body.user, session)
    pin = service(request).memory.context.set_pin(
        scope, body.kind, body.value, key=body.key,
        amount=None if body.amount is None else str(body.amount), currency=body.currency,
        status=body.status, source_event_id=body.source_event_id, metadata=body.metadata,
    )  # fmt: skip
    return pin_json(pin)


@router.post("/sessions/{session}/pins/close", tags=["pins"], summary="Close a pin")
def close_pin(request: Request, session: str, body: ClosePinRequest) -> Json:
    scope = _session_scope(request, KeyScope.WRITE, body.user, session)
    return pin_json(service(request).memory.context.close_pin(scope, body.key))


@router.get("/sessions/{session}/task", tags=["task"], summary="A session's task state")
def task_state(request: Request, session: str, user: UserQ) -> Json:
    scope = _session_scope(request, KeyScope.READ, user, session)
    return task_json(service(request).memory.context.task_state(scope))


@router.post("/sessions/{session}/task", tags=["task"], summary="Merge a task update")
def update_task(request: Request, session: str, body: TaskRequest) -> Json:
    scope = _session_scope(request, KeyScope.WRITE, body.user, session)
    update = TaskUpdate(
        task=body.task, subtask=body.subtask, status=body.status,
        decisions=[(d.text, d.rationale) for d in body.decisions],
        constraints=body.constraints, drop_constraints=body.drop_constraints,
        hypotheses=[h.model_dump() for h in body.hypotheses],
        findings=[f.model_dump() for f in body.findings],
    )  # fmt: skip
    return task_json(service(request).memory.context.update_task(scope, update))


@router.get("/sessions/{session}/summaries", tags=["compaction"], summary="Active summaries")
def summaries(request: Request, session: str, user: UserQ) -> Json:
    scope = _session_scope(request, KeyScope.READ, user, session)
    found = service(request).memory.context.summaries(scope)
    return {"summaries": [summary_json(s) for s in found]}


@router.get("/sessions/{session}/compaction", tags=["compaction"], summary="Jobs and audit log")
def compaction(
    request: Request,
    session: str,
    user: UserQ,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1_000,
) -> Json:
    """The session's compaction jobs and audit log (what was compressed, tokens before and
    after)."""
    scope = _session_scope(request, KeyScope.READ, user, session)
    memory = service(request).memory
    return {
        "jobs": [job_json(j) for j in memory.store.compaction_jobs(scope)],
        "audit": [audit_json(a) for a in memory.context.compaction_log(scope, limit=limit)],
    }


@router.post("/sessions/{session}/compact", tags=["compaction"], summary="Compact now")
def compact(request: Request, session: str, body: CompactRequest) -> Json:
    scope = _session_scope(request, KeyScope.WRITE, body.user, session)
    written = service(request).memory.context.compact(
        scope, budget_tokens=body.budget_tokens, model=body.model
    )
    return {"summaries": [summary_json(s) for s in written]}


@router.post("/forget", tags=["erasure"], summary="Erase a tenant's, user's or session's data")
def forget(request: Request, body: ForgetRequest) -> Json:
    tenant = authorize(request, KeyScope.WRITE).tenant
    if body.user is None and not body.tenant:
        raise InvalidInput(
            'forget names no user: send "tenant": true to erase across the whole tenant'
        )
    if body.user is not None and body.tenant:
        raise InvalidInput('"tenant": true erases across the tenant: leave user and session out')
    scope = scope_in(tenant, body.user, body.session, what="erasing a session")
    erased = service(request).memory.forget(scope, ids=body.ids, before=body.before)
    return {"erased": erased}


@router.get("/tools", tags=["tools"], summary="Agent tool definitions (OpenAI format)")
def tools(request: Request) -> Json:
    authorize(request, KeyScope.READ)
    return {"tools": service(request).tools.definitions()}


@router.post(
    "/tools/{name}", tags=["tools"], summary="Call an agent tool in a session",
    openapi_extra=BY_TOOL,
)  # fmt: skip
def call_tool(request: Request, name: str, body: ToolCallRequest) -> Json:
    """Run an agent tool bound to the key's tenant and the given user and session.
    Approval, authorization and human-gate pins are refused (403 ``tool_refused``)."""
    svc = service(request)
    principal = authorize(request, None)
    spec = svc.tools.spec(name)
    principal.require(KeyScope.WRITE if spec.writes else KeyScope.READ)
    scope = tenant_scope(principal, body.user, body.session)
    binding = ToolBinding(scope, share_sessions=body.share_sessions)
    return {"result": svc.tools.dispatch(svc.memory, binding, name, body.arguments)}


@router.get(
    "/export", tags=["export"], summary="The key's tenant (or one user) as a kenning-export file",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}, "description": "JSON Lines"}},
)  # fmt: skip
def export_tenant(
    request: Request,
    user: Annotated[
        str | None, Query(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:@-]+$")
    ] = None,
    vectors: bool = False,
) -> StreamingResponse:
    """Every record of the key's tenant, or of its ``user``, in the ``kenning-export`` JSON
    Lines format that ``kenning import`` reads (``vectors``: with the vectors). The records
    are read in one transaction before the first line is sent."""
    scope = tenant_scope(authorize(request, KeyScope.READ), user)
    lines = export_lines(service(request).memory.store, scope, vectors=vectors)
    first = next(lines)  # read now: an error is an error response, not a cut-off stream

    def body() -> Iterator[bytes]:
        yield (first + "\n").encode()
        for line in lines:
            yield (line + "\n").encode()

    return StreamingResponse(body(), media_type="application/x-ndjson")
