"""What the client's long-term memory methods send and how their answers are read: pure, shared
by the sync and async clients (:mod:`kenning.client.longterm`).

``memory.facts`` and ``memory.procedures`` map to tenant routes (the tenant is the key's);
``memory.retention``'s reads too, while changing a policy, holds and the purge go to the
operator's ``/v1/admin/tenants/{tenant}/…`` routes, which take the admin credential.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from kenning.client.calls import Call
from kenning.errors import InvalidInput
from kenning.longterm.api import user_of
from kenning.records import (
    USER,
    Consent,
    Fact,
    FactCategory,
    LegalHold,
    Procedure,
    ProcedureMatch,
    Profile,
    Scope,
    StoreStats,
    TenantPolicy,
)
from kenning.wire import (
    consent_from_json,
    fact_from_json,
    hold_from_json,
    match_from_json,
    policy_from_json,
    procedure_from_json,
    profile_from_json,
    stats_from_json,
)

__all__ = [
    "approve",
    "candidate_from_task",
    "consent",
    "export",
    "get_procedure",
    "history",
    "hold",
    "holds",
    "list_facts",
    "list_procedures",
    "policy",
    "profile",
    "purge",
    "record",
    "release",
    "remember",
    "retire",
    "revoke",
    "set_consent",
    "set_policy",
    "show",
    "stats",
]


def _user(scope: Scope) -> str:
    user = user_of(scope).user
    assert user is not None
    return user


def _segment(value: str, what: str) -> str:
    """*value* as one path segment (any id the server does not hold answers 404, as it would
    embedded)."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{what} must be a non-empty string")
    return quote(value, safe="")


def _time(value: datetime | None, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime")
    return value.isoformat()


def _facts(data: Any) -> list[Fact]:
    return [fact_from_json(f) for f in data["facts"]]


def _procedures(data: Any) -> list[Procedure]:
    return [procedure_from_json(p) for p in data["procedures"]]


def _tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(tools, str | bytes) or not all(isinstance(t, Mapping) for t in tools):
        raise InvalidInput("tools must be a list of tool schemas (JSON objects)")
    return [dict(t) for t in tools]


# -- facts ---------------------------------------------------------------------------------


def list_facts(
    scope: Scope,
    *,
    subject: str | None = None,
    as_of: datetime | None = None,
    include_closed: bool = False,
) -> Call[list[Fact]]:
    params: dict[str, Any] = {"include_closed": str(bool(include_closed)).lower()}
    if scope.session is not None:
        params["session"] = scope.session
    if subject is not None:
        params["subject"] = subject
    if as_of is not None:
        params["as_of"] = _time(as_of, "as_of")
    return Call("GET", f"/v1/users/{_user(scope)}/facts", _facts, params=params, scope=scope)


def history(scope: Scope, fact_id: str) -> Call[list[Fact]]:
    path = f"/v1/users/{_user(scope)}/facts/{_segment(fact_id, 'fact_id')}/history"
    return Call("GET", path, _facts, scope=scope)


def remember(
    scope: Scope, attribute: str, value: str, *, subject: str = USER, qualifier: str = "",
    category: FactCategory | str = FactCategory.GENERAL, source_event_id: str | None = None,
    within_session: bool = False,
) -> Call[Fact]:  # fmt: skip
    user = _user(scope)
    scope.require_session()
    body: dict[str, str | bool | None] = {
        "session": scope.session, "attribute": attribute, "value": value, "subject": subject,
        "qualifier": qualifier,
        "category": category.value if isinstance(category, FactCategory) else category,
    }  # fmt: skip
    if source_event_id is not None:
        body["source_event_id"] = source_event_id
    if within_session:
        body["within_session"] = True
    return Call("POST", f"/v1/users/{user}/facts", fact_from_json, json=body, scope=scope)


def revoke(scope: Scope, fact_id: str) -> Call[Fact]:
    path = f"/v1/users/{_user(scope)}/facts/{_segment(fact_id, 'fact_id')}/revoke"
    return Call("POST", path, fact_from_json, scope=scope)


def profile(scope: Scope) -> Call[Profile]:
    return Call("GET", f"/v1/users/{_user(scope)}/profile", profile_from_json, scope=scope)


def export(scope: Scope) -> Call[dict[str, Any]]:
    return Call("GET", f"/v1/users/{_user(scope)}/export", dict, scope=scope)


def consent(scope: Scope) -> Call[Consent]:
    return Call("GET", f"/v1/users/{_user(scope)}/consent", consent_from_json, scope=scope)


def set_consent(
    scope: Scope,
    *,
    share_across_sessions: bool | None = None,
    sensitive_facts: bool | None = None,
) -> Call[Consent]:
    body = {"share_across_sessions": share_across_sessions, "sensitive_facts": sensitive_facts}
    path = f"/v1/users/{_user(scope)}/consent"
    return Call("PUT", path, consent_from_json, json=body, scope=scope)


# -- retention -----------------------------------------------------------------------------


def policy(tenant: str) -> Call[TenantPolicy]:
    return Call("GET", "/v1/policy", policy_from_json, scope=Scope(tenant))


def holds(tenant: str) -> Call[list[LegalHold]]:
    return Call("GET", "/v1/holds", lambda d: [hold_from_json(h) for h in d["holds"]],
                scope=Scope(tenant))  # fmt: skip


def stats(scope: Scope, *, now: datetime | None = None) -> Call[StoreStats]:
    params: dict[str, Any] = {}
    if scope.user is not None:
        params["user"] = scope.user
    if now is not None:
        params["now"] = _time(now, "now")
    return Call("GET", "/v1/stats", stats_from_json, params=params, scope=scope)


def set_policy(tenant: str, policy: TenantPolicy) -> Call[None]:
    if not isinstance(policy, TenantPolicy):
        raise InvalidInput("policy must be a kenning.TenantPolicy")
    path = f"/v1/admin/tenants/{Scope(tenant).tenant}/policy"
    return Call("PUT", path, lambda d: None, json=policy.to_json())


def _held(scope: Scope) -> tuple[str, dict[str, Any]]:
    if not isinstance(scope, Scope):
        raise InvalidInput("scope must be a kenning.Scope")
    body = {k: v for k, v in (("user", scope.user), ("session", scope.session)) if v is not None}
    return f"/v1/admin/tenants/{scope.tenant}/holds", body


def hold(scope: Scope, *, reason: str) -> Call[LegalHold]:
    path, body = _held(scope)
    return Call("POST", path, hold_from_json, json=body | {"reason": reason})


def release(scope: Scope) -> Call[bool]:
    path, body = _held(scope)
    return Call("POST", f"{path}/release", lambda d: bool(d["released"]), json=body)


def purge(tenant: str, *, now: datetime | None = None) -> Call[int]:
    path = f"/v1/admin/tenants/{Scope(tenant).tenant}/purge"
    body = {} if now is None else {"now": _time(now, "now")}
    return Call("POST", path, lambda d: int(d["removed"]), json=body)


# -- procedures ----------------------------------------------------------------------------


def record(
    scope: Scope, name: str, steps: Sequence[str], *, tools: Sequence[Mapping[str, Any]],
    description: str = "", active: bool = False,
) -> Call[Procedure]:  # fmt: skip
    if isinstance(steps, str):
        raise InvalidInput("steps must be a list of strings")
    body: dict[str, Any] = {
        "name": name, "steps": list(steps), "tools": _tools(tools), "description": description,
        "active": active,
    }  # fmt: skip
    if scope.user is not None:
        body["user"] = scope.user
    return Call("POST", "/v1/procedures", procedure_from_json, json=body, scope=scope)


def candidate_from_task(
    scope: Scope, name: str, *, tools: Sequence[Mapping[str, Any]]
) -> Call[Procedure]:
    user = _user(scope)
    scope.require_session()
    body = {"user": user, "name": name, "tools": _tools(tools)}
    path = f"/v1/sessions/{scope.session}/procedures"
    return Call("POST", path, procedure_from_json, json=body, scope=scope)


def _procedure(tenant: str, procedure_id: str, action: str = "") -> Call[Procedure]:
    """The call on one version (``GET``, or ``POST`` an *action* on it)."""
    scope = Scope(tenant)
    path = f"/v1/procedures/{_segment(procedure_id, 'procedure_id')}"
    if not action:
        return Call("GET", path, procedure_from_json, scope=scope)
    return Call("POST", f"{path}/{action}", procedure_from_json, scope=scope)


def approve(tenant: str, procedure_id: str) -> Call[Procedure]:
    return _procedure(tenant, procedure_id, "approve")


def retire(tenant: str, procedure_id: str) -> Call[Procedure]:
    return _procedure(tenant, procedure_id, "retire")


def show(tenant: str, procedure_id: str) -> Call[Procedure]:
    return _procedure(tenant, procedure_id)


def list_procedures(tenant: str, *, name: str | None = None) -> Call[list[Procedure]]:
    params = {} if name is None else {"name": name}
    return Call("GET", "/v1/procedures", _procedures, params=params, scope=Scope(tenant))


def get_procedure(
    tenant: str, name: str, *, tools: Sequence[Mapping[str, Any]], include_drift: bool = False
) -> Call[ProcedureMatch]:
    scope = Scope(tenant)
    body = {"name": name, "tools": _tools(tools), "include_drift": include_drift}
    return Call("POST", "/v1/procedures/match", match_from_json, json=body, scope=scope)
