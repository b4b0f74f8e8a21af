"""The client's long-term memory: ``client.facts``, ``client.retention`` and
``client.procedures``, with the method names and arguments of ``memory.facts``,
``memory.retention`` and ``memory.procedures`` (and their awaitable twins for
:class:`~kenning.client.AsyncClient`).

A tenant's key serves ``facts``, ``procedures`` and ``retention``'s reads (``policy``,
``holds``, ``stats``). Changing a policy, placing or releasing a legal hold and purging are the
operator's: they need a client made with the server's admin credential
(``Client(url, api_key=admin_token)``); a tenant's key gets ``Unauthorized``.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from kenning.client import longterm_calls as calls
from kenning.client.calls import Call
from kenning.longterm.api import FactsAPI, ProceduresAPI, RetentionAPI
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

__all__ = [
    "AsyncFacts",
    "AsyncProcedures",
    "AsyncRetention",
    "Facts",
    "Part",
    "Procedures",
    "Retention",
    "Runs",
]

T = TypeVar("T")
C = TypeVar("C")


class Runs(Protocol):
    """A client that sends a call (after checking its scope against the key's tenant)."""

    def _run(self, call: Call[T]) -> T: ...


class AsyncRuns(Protocol):
    """:class:`Runs`, awaitable."""

    async def _run(self, call: Call[T]) -> T: ...


class Part(Generic[C]):
    """A part of a client (``client.context``, ``client.facts``, …): its calls go through the
    client's ``_run``."""

    def __init__(self, client: C) -> None:
        self._c = client


class Facts(Part[Runs], FactsAPI):
    """``client.facts``: a served user's long-term facts, profile and consent."""

    def list(self, scope: Scope, *, subject: str | None = None, as_of: datetime | None = None,
             include_closed: bool = False) -> builtins.list[Fact]:  # fmt: skip
        return self._c._run(calls.list_facts(scope, subject, as_of, include_closed))

    def history(self, scope: Scope, fact_id: str) -> builtins.list[Fact]:
        return self._c._run(calls.history(scope, fact_id))

    def remember(self, scope: Scope, attribute: str, value: str, *, subject: str = USER,
                 qualifier: str = "", category: FactCategory | str = FactCategory.GENERAL,
                 source_event_id: str | None = None, within_session: bool = False,
                 ) -> Fact:  # fmt: skip
        return self._c._run(calls.remember(
            scope, attribute, value, subject=subject, qualifier=qualifier, category=category,
            source_event_id=source_event_id, within_session=within_session,
        ))  # fmt: skip

    def revoke(self, scope: Scope, fact_id: str) -> Fact:
        return self._c._run(calls.revoke(scope, fact_id))

    def profile(self, scope: Scope) -> Profile:
        return self._c._run(calls.profile(scope))

    def export(self, scope: Scope) -> dict[str, Any]:
        return self._c._run(calls.export(scope))

    def consent(self, scope: Scope) -> Consent:
        return self._c._run(calls.consent(scope))

    def set_consent(self, scope: Scope, *, share_across_sessions: bool | None = None,
                    sensitive_facts: bool | None = None) -> Consent:  # fmt: skip
        return self._c._run(calls.set_consent(scope, share_across_sessions, sensitive_facts))

    def shares_across_sessions(self, scope: Scope) -> bool:
        return scope.user is not None and self.consent(scope).share_across_sessions


class Retention(Part[Runs], RetentionAPI):
    """``client.retention``: the tenant's policy, legal holds, the purge and what it holds.
    ``set_policy``, ``hold``, ``release`` and ``purge`` need the admin credential."""

    def policy(self, tenant: str) -> TenantPolicy:
        return self._c._run(calls.policy(tenant))

    def holds(self, tenant: str) -> builtins.list[LegalHold]:
        return self._c._run(calls.holds(tenant))

    def stats(self, scope: Scope, *, now: datetime | None = None) -> StoreStats:
        return self._c._run(calls.stats(scope, now))

    def set_policy(self, tenant: str, policy: TenantPolicy) -> None:
        self._c._run(calls.set_policy(tenant, policy))

    def hold(self, scope: Scope, *, reason: str) -> LegalHold:
        return self._c._run(calls.hold(scope, reason))

    def release(self, scope: Scope) -> bool:
        return self._c._run(calls.release(scope))

    def purge(self, tenant: str, *, now: datetime | None = None) -> int:
        return self._c._run(calls.purge(tenant, now))


class Procedures(Part[Runs], ProceduresAPI):
    """``client.procedures``: the tenant's versioned playbooks."""

    def record(self, scope: Scope, name: str, steps: Sequence[str], *,
               tools: Sequence[Mapping[str, Any]], description: str = "",
               active: bool = False) -> Procedure:  # fmt: skip
        return self._c._run(calls.record(
            scope, name, steps, tools=tools, description=description, active=active
        ))  # fmt: skip

    def candidate_from_task(
        self, scope: Scope, name: str, *, tools: Sequence[Mapping[str, Any]]
    ) -> Procedure:
        return self._c._run(calls.candidate_from_task(scope, name, tools))

    def approve(self, tenant: str, procedure_id: str) -> Procedure:
        return self._c._run(calls.approve(tenant, procedure_id))

    def retire(self, tenant: str, procedure_id: str) -> Procedure:
        return self._c._run(calls.retire(tenant, procedure_id))

    def list(self, tenant: str, *,
             name: str | None = None) -> builtins.list[Procedure]:  # fmt: skip
        return self._c._run(calls.list_procedures(tenant, name))

    def show(self, tenant: str, procedure_id: str) -> Procedure:
        return self._c._run(calls.show(tenant, procedure_id))

    def get(self, tenant: str, name: str, *, tools: Sequence[Mapping[str, Any]],
            include_drift: bool = False) -> ProcedureMatch:  # fmt: skip
        return self._c._run(calls.get_procedure(tenant, name, tools, include_drift))


class AsyncFacts(Part[AsyncRuns]):
    """``async_client.facts``: the awaitable twin of ``client.facts``."""

    async def list(self, scope: Scope, *, subject: str | None = None, as_of: datetime | None = None,
                   include_closed: bool = False) -> builtins.list[Fact]:  # fmt: skip
        return await self._c._run(calls.list_facts(scope, subject, as_of, include_closed))

    async def history(self, scope: Scope, fact_id: str) -> builtins.list[Fact]:
        return await self._c._run(calls.history(scope, fact_id))

    async def remember(self, scope: Scope, attribute: str, value: str, *, subject: str = USER,
                       qualifier: str = "", category: FactCategory | str = FactCategory.GENERAL,
                       source_event_id: str | None = None, within_session: bool = False,
                       ) -> Fact:  # fmt: skip
        return await self._c._run(calls.remember(
            scope, attribute, value, subject=subject, qualifier=qualifier, category=category,
            source_event_id=source_event_id, within_session=within_session,
        ))  # fmt: skip

    async def revoke(self, scope: Scope, fact_id: str) -> Fact:
        return await self._c._run(calls.revoke(scope, fact_id))

    async def profile(self, scope: Scope) -> Profile:
        return await self._c._run(calls.profile(scope))

    async def export(self, scope: Scope) -> dict[str, Any]:
        return await self._c._run(calls.export(scope))

    async def consent(self, scope: Scope) -> Consent:
        return await self._c._run(calls.consent(scope))

    async def set_consent(self, scope: Scope, *, share_across_sessions: bool | None = None,
                          sensitive_facts: bool | None = None) -> Consent:  # fmt: skip
        return await self._c._run(calls.set_consent(scope, share_across_sessions, sensitive_facts))

    async def shares_across_sessions(self, scope: Scope) -> bool:
        return scope.user is not None and (await self.consent(scope)).share_across_sessions


class AsyncRetention(Part[AsyncRuns]):
    """``async_client.retention``: the awaitable twin of ``client.retention``."""

    async def policy(self, tenant: str) -> TenantPolicy:
        return await self._c._run(calls.policy(tenant))

    async def holds(self, tenant: str) -> builtins.list[LegalHold]:
        return await self._c._run(calls.holds(tenant))

    async def stats(self, scope: Scope, *, now: datetime | None = None) -> StoreStats:
        return await self._c._run(calls.stats(scope, now))

    async def set_policy(self, tenant: str, policy: TenantPolicy) -> None:
        await self._c._run(calls.set_policy(tenant, policy))

    async def hold(self, scope: Scope, *, reason: str) -> LegalHold:
        return await self._c._run(calls.hold(scope, reason))

    async def release(self, scope: Scope) -> bool:
        return await self._c._run(calls.release(scope))

    async def purge(self, tenant: str, *, now: datetime | None = None) -> int:
        return await self._c._run(calls.purge(tenant, now))


class AsyncProcedures(Part[AsyncRuns]):
    """``async_client.procedures``: the awaitable twin of ``client.procedures``."""

    async def record(self, scope: Scope, name: str, steps: Sequence[str], *,
                     tools: Sequence[Mapping[str, Any]], description: str = "",
                     active: bool = False) -> Procedure:  # fmt: skip
        return await self._c._run(calls.record(
            scope, name, steps, tools=tools, description=description, active=active
        ))  # fmt: skip

    async def candidate_from_task(
        self, scope: Scope, name: str, *, tools: Sequence[Mapping[str, Any]]
    ) -> Procedure:
        return await self._c._run(calls.candidate_from_task(scope, name, tools))

    async def approve(self, tenant: str, procedure_id: str) -> Procedure:
        return await self._c._run(calls.approve(tenant, procedure_id))

    async def retire(self, tenant: str, procedure_id: str) -> Procedure:
        return await self._c._run(calls.retire(tenant, procedure_id))

    async def list(self, tenant: str, *,
                   name: str | None = None) -> builtins.list[Procedure]:  # fmt: skip
        return await self._c._run(calls.list_procedures(tenant, name))

    async def show(self, tenant: str, procedure_id: str) -> Procedure:
        return await self._c._run(calls.show(tenant, procedure_id))

    async def get(self, tenant: str, name: str, *, tools: Sequence[Mapping[str, Any]],
                  include_drift: bool = False) -> ProcedureMatch:  # fmt: skip
        return await self._c._run(calls.get_procedure(tenant, name, tools, include_drift))
