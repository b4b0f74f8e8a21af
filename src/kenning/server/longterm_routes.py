"""The long-term memory routes of ``/v1``: facts, profiles, consent, procedures, stats, and the
governance of retention (tenant policy, legal holds, purge).

Tenant routes take the tenant from the API key, as every ``/v1`` route does; reads need the
``read`` scope and writes ``write``. Changing a tenant's policy (its consent defaults and
retention), placing or releasing a legal hold, and running the purge are the operator's acts,
not an agent's or an application's: they need the admin credential, under
``/v1/admin/tenants/{tenant}/…`` like key management. A write key can already erase, so it
must not also be able to lift the hold that stops the erase, or shorten retention and purge.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from kenning.errors import InvalidInput
from kenning.records import KeyScope, Scope, TenantPolicy, to_utc
from kenning.server.gate import READS
from kenning.server.schemas import (
    CandidateRequest,
    ConsentRequest,
    HoldRequest,
    MatchRequest,
    PolicyRequest,
    ProcedureRequest,
    PurgeRequest,
    ReleaseRequest,
    RememberRequest,
)
from kenning.server.state import authorize, authorize_admin, scope_in, service, tenant_scope
from kenning.wire import (
    consent_json,
    fact_json,
    hold_json,
    match_json,
    policy_json,
    procedure_json,
    profile_json,
    stats_json,
)

__all__ = ["router"]

router = APIRouter(prefix="/v1")

_ID = r"^[A-Za-z0-9._:@-]+$"
UserP = Annotated[str, Path(min_length=1, max_length=128, pattern=_ID)]
TenantP = Annotated[str, Path(min_length=1, max_length=128, pattern=_ID)]
# Any text: an id the tenant does not hold answers 404, as it does embedded.
RecordId = Annotated[str, Path(min_length=1, max_length=256)]
OptId = Annotated[str | None, Query(min_length=1, max_length=128, pattern=_ID)]
Json = dict[str, Any]

# A purge "as of" a later time would remove records before their retention ends.
_CLOCK_SKEW = timedelta(seconds=60)


def _user(request: Request, need: KeyScope, user: str) -> Scope:
    return tenant_scope(authorize(request, need), user)


def _tenant(request: Request, need: KeyScope) -> str:
    return authorize(request, need).tenant


# -- facts ---------------------------------------------------------------------------------


@router.get("/users/{user}/facts", tags=["facts"], summary="A user's facts (now, or as of)")
def list_facts(
    request: Request,
    user: UserP,
    session: OptId = None,
    subject: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    as_of: Annotated[str | None, Query(max_length=64, description="ISO-8601 time")] = None,
    include_closed: bool = False,
) -> Json:
    """The user's current facts, oldest first; ``as_of`` gives what was valid then,
    ``include_closed`` every fact ever held (superseded, revoked, archived, expired), and
    ``session`` only the facts read from that session."""
    scope = _user(request, KeyScope.READ, user)
    if session is not None:
        scope = Scope(scope.tenant, user, session)
    when = None if as_of is None else to_utc(as_of, what="as_of")
    facts = service(request).memory.facts.list(
        scope, subject=subject, as_of=when, include_closed=include_closed
    )
    return {"facts": [fact_json(f) for f in facts]}


@router.post("/users/{user}/facts", tags=["facts"], summary="Remember a fact the user stated")
def remember_fact(request: Request, user: UserP, body: RememberRequest) -> Json:
    """Store a fact the user stated or confirmed in *session* (consolidated like an extracted
    one: the same value reinforces, a new one supersedes). Health, finance and relationship
    facts need the user's or the tenant's consent (422 otherwise). With ``within_session``
    only the session's own facts are reinforced or superseded, and the fact returned is the
    session's."""
    scope = Scope(_tenant(request, KeyScope.WRITE), user, body.session)
    fact = service(request).memory.facts.remember(
        scope, body.attribute, body.value, subject=body.subject, qualifier=body.qualifier,
        category=body.category, source_event_id=body.source_event_id,
        within_session=body.within_session,
    )  # fmt: skip
    return fact_json(fact)


@router.get("/users/{user}/facts/{fact_id}/history", tags=["facts"], summary="A fact's history")
def fact_history(request: Request, user: UserP, fact_id: RecordId) -> Json:
    scope = _user(request, KeyScope.READ, user)
    return {"facts": [fact_json(f) for f in service(request).memory.facts.history(scope, fact_id)]}


@router.post("/users/{user}/facts/{fact_id}/revoke", tags=["facts"], summary="Revoke a fact")
def revoke_fact(request: Request, user: UserP, fact_id: RecordId) -> Json:
    """Close a fact's validity now: it stops surfacing at once; its history stays."""
    scope = _user(request, KeyScope.WRITE, user)
    return fact_json(service(request).memory.facts.revoke(scope, fact_id))


# -- profile and consent -------------------------------------------------------------------


@router.get("/users/{user}/profile", tags=["profile"], summary="A user's profile")
def profile(request: Request, user: UserP) -> Json:
    scope = _user(request, KeyScope.READ, user)
    return profile_json(service(request).memory.facts.profile(scope))


@router.get("/users/{user}/export", tags=["profile"], summary="Export what is held on a user")
def export(request: Request, user: UserP) -> Json:
    """The profile, every fact ever held (any status, with validity and sources) and the
    user's consent, as one JSON document."""
    scope = _user(request, KeyScope.READ, user)
    return service(request).memory.facts.export(scope)


@router.delete("/users/{user}", tags=["profile"], summary="Erase everything held on a user")
def erase_user(request: Request, user: UserP) -> Json:
    """Erase every record of the user from every index (events, facts, pins, summaries, task
    state, consent). A legal hold on the tenant, the user or one of their sessions refuses it
    (423 ``legal_hold``, nothing erased)."""
    scope = _user(request, KeyScope.WRITE, user)
    erased = service(request).memory.forget(scope)
    return {"erased": erased}


@router.get("/users/{user}/consent", tags=["consent"], summary="A user's effective consent")
def consent(request: Request, user: UserP) -> Json:
    scope = _user(request, KeyScope.READ, user)
    return consent_json(service(request).memory.facts.consent(scope))


@router.put("/users/{user}/consent", tags=["consent"], summary="Record a user's consent")
def set_consent(request: Request, user: UserP, body: ConsentRequest) -> Json:
    """Record the user's choices (null: follow the tenant's policy); returns the result."""
    scope = _user(request, KeyScope.WRITE, user)
    result = service(request).memory.facts.set_consent(
        scope, share_across_sessions=body.share_across_sessions,
        sensitive_facts=body.sensitive_facts,
    )  # fmt: skip
    return consent_json(result)


# -- procedures ----------------------------------------------------------------------------


@router.get("/procedures", tags=["procedures"], summary="The tenant's playbooks")
def list_procedures(
    request: Request, name: Annotated[str | None, Query(min_length=1, max_length=500)] = None
) -> Json:
    tenant = _tenant(request, KeyScope.READ)
    found = service(request).memory.procedures.list(tenant, name=name)
    return {"procedures": [procedure_json(p) for p in found]}


@router.post("/procedures", tags=["procedures"], summary="Record a playbook version")
def record_procedure(request: Request, body: ProcedureRequest) -> Json:
    """Store a new version of the playbook *name* for *tools*: a candidate, unless *active*
    (which retires the name's other active version)."""
    scope = Scope(_tenant(request, KeyScope.WRITE), body.user)
    procedure = service(request).memory.procedures.record(
        scope, body.name, body.steps, tools=body.tools, description=body.description,
        active=body.active,
    )  # fmt: skip
    return procedure_json(procedure)


@router.post(
    "/procedures/match", tags=["procedures"], summary="The playbook for these tools",
    openapi_extra=READS,
)  # fmt: skip
def match_procedure(request: Request, body: MatchRequest) -> Json:
    """The active playbook *name* written for these *tools*, and the versions written for
    other tools (drifted: returned as the playbook only with ``include_drift``)."""
    tenant = _tenant(request, KeyScope.READ)
    found = service(request).memory.procedures.get(
        tenant, body.name, tools=body.tools, include_drift=body.include_drift
    )
    return match_json(found)


@router.get("/procedures/{procedure_id}", tags=["procedures"], summary="One playbook version")
def show_procedure(request: Request, procedure_id: RecordId) -> Json:
    tenant = _tenant(request, KeyScope.READ)
    return procedure_json(service(request).memory.procedures.show(tenant, procedure_id))


@router.post(
    "/procedures/{procedure_id}/approve", tags=["procedures"], summary="Approve a playbook"
)
def approve_procedure(request: Request, procedure_id: RecordId) -> Json:
    """Make a version its name's active playbook (the only way a candidate becomes one)."""
    tenant = _tenant(request, KeyScope.WRITE)
    return procedure_json(service(request).memory.procedures.approve(tenant, procedure_id))


@router.post("/procedures/{procedure_id}/retire", tags=["procedures"], summary="Retire a playbook")
def retire_procedure(request: Request, procedure_id: RecordId) -> Json:
    tenant = _tenant(request, KeyScope.WRITE)
    return procedure_json(service(request).memory.procedures.retire(tenant, procedure_id))


@router.post(
    "/sessions/{session}/procedures", tags=["procedures"],
    summary="Record a candidate from the session's completed task",
)  # fmt: skip
def candidate_procedure(
    request: Request,
    session: Annotated[str, Path(min_length=1, max_length=128, pattern=_ID)],
    body: CandidateRequest,
) -> Json:
    """A candidate playbook from the session's completed task: its tool calls in order and
    its outcome (422 if the task is not done or called no tool). It becomes active only when
    approved."""
    scope = Scope(_tenant(request, KeyScope.WRITE), body.user, session)
    found = service(request).memory.procedures.candidate_from_task(
        scope, body.name, tools=body.tools
    )
    return procedure_json(found)


# -- what a tenant holds, and retention ----------------------------------------------------


@router.get("/stats", tags=["retention"], summary="What the tenant or a user holds")
def stats(
    request: Request,
    user: OptId = None,
    now: Annotated[str | None, Query(max_length=64, description="ISO-8601 time")] = None,
) -> Json:
    """Records by kind and their mean age (as of *now*), the most used tags, facts by status,
    what the retention purge removed, and the namespaced documents held."""
    scope = tenant_scope(authorize(request, KeyScope.READ), user)
    when = None if now is None else to_utc(now, what="now")
    return stats_json(service(request).memory.retention.stats(scope, now=when))


@router.get("/policy", tags=["retention"], summary="The tenant's consent defaults and retention")
def policy(request: Request) -> Json:
    tenant = _tenant(request, KeyScope.READ)
    return policy_json(service(request).memory.retention.policy(tenant))


@router.get("/holds", tags=["retention"], summary="The tenant's legal holds")
def holds(request: Request) -> Json:
    tenant = _tenant(request, KeyScope.READ)
    return {"holds": [hold_json(h) for h in service(request).memory.retention.holds(tenant)]}


@router.put("/admin/tenants/{tenant}/policy", tags=["admin"], summary="Set a tenant's policy")
def admin_set_policy(request: Request, tenant: TenantP, body: PolicyRequest) -> Json:
    """Set the tenant's consent defaults and retention (admin credential)."""
    authorize_admin(request)
    retention = service(request).memory.retention
    retention.set_policy(tenant, TenantPolicy.from_json(body.model_dump()))
    return policy_json(retention.policy(tenant))


@router.post("/admin/tenants/{tenant}/holds", tags=["admin"], summary="Place a legal hold")
def admin_hold(request: Request, tenant: TenantP, body: HoldRequest) -> Json:
    """Hold the tenant, a user or a session: erasing or purging it is refused (423) until
    the hold is released (admin credential)."""
    authorize_admin(request)
    scope = scope_in(tenant, body.user, body.session, what="a hold on a session")
    return hold_json(service(request).memory.retention.hold(scope, reason=body.reason))


@router.post(
    "/admin/tenants/{tenant}/holds/release", tags=["admin"], summary="Release a legal hold"
)
def admin_release(request: Request, tenant: TenantP, body: ReleaseRequest) -> Json:
    """Release the hold placed on exactly this scope; ``released`` is false if there was
    none (admin credential)."""
    authorize_admin(request)
    scope = scope_in(tenant, body.user, body.session, what="a hold on a session")
    return {"released": service(request).memory.retention.release(scope)}


@router.post("/admin/tenants/{tenant}/purge", tags=["admin"], summary="Purge expired records")
def admin_purge(request: Request, tenant: TenantP, body: PurgeRequest) -> Json:
    """Remove the tenant's records past retention from every index; held scopes stay
    (admin credential). ``now`` may be earlier than the server's clock, never later."""
    authorize_admin(request)
    clock = datetime.now(UTC)
    now = clock if body.now is None else to_utc(body.now, what="now")
    if now > clock + _CLOCK_SKEW:
        raise InvalidInput("now is later than the server's clock: a purge never runs ahead")
    return {"removed": service(request).memory.retention.purge(tenant, now=now)}
