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
from typing import Any, Protocol, TypeVar

from kenning.client import longterm_calls as calls
from kenning.client.calls import Call
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
    "Procedures",
    "Retention",
]

T = TypeVar("T")


class _Runs(Protocol):
    def _run(self, scope: Scope | None, call: Call[T]) -> T: ...


class _AsyncRuns(Protocol):
    async def _run(self, scope: Scope | None, call: Call[T]) -> T: ...


def _tenant(tenant: str) -> Scope:
    # Checked against the key's tenant before anything is sent.
    return Scope(tenant)


class Facts:
    """``client.facts``: a served user's long-term facts, profile and consent."""

    def __init__(self, client: _Runs) -> None:
        self._c = client

    def list(
        self,
        scope: Scope,
        *,
        subject: str | None = None,
        as_of: datetime | None = None,
        include_closed: bool = False,
    ) -> builtins.list[Fact]:
        """The user's current facts (see :meth:`kenning.LongTermMemory.list`)."""
        return self._c._run(scope, calls.list_facts(scope, subject, as_of, include_closed))

    def history(self, scope: Scope, fact_id: str) -> builtins.list[Fact]:
        """Every version of a fact, oldest first."""
        return self._c._run(scope, calls.history(scope, fact_id))

    def remember(
        self,
        scope: Scope,
        attribute: str,
        value: str,
        *,
        subject: str = USER,
        qualifier: str = "",
        category: FactCategory | str = FactCategory.GENERAL,
        source_event_id: str | None = None,
    ) -> Fact:
        """Store a fact the user stated or confirmed in the session of *scope*."""
        return self._c._run(scope, calls.remember(
            scope, attribute, value, subject=subject, qualifier=qualifier, category=category,
            source_event_id=source_event_id,
        ))  # fmt: skip

    def revoke(self, scope: Scope, fact_id: str) -> Fact:
        """Close a fact's validity now."""
        return self._c._run(scope, calls.revoke(scope, fact_id))

    def profile(self, scope: Scope) -> Profile:
        """The user's profile."""
        return self._c._run(scope, calls.profile(scope))

    def export(self, scope: Scope) -> dict[str, Any]:
        """The profile, every fact ever held and the consent, as JSON."""
        return self._c._run(scope, calls.export(scope))

    def consent(self, scope: Scope) -> Consent:
        """The user's effective choices (their settings over the tenant's policy)."""
        return self._c._run(scope, calls.consent(scope))

    def set_consent(
        self,
        scope: Scope,
        *,
        share_across_sessions: bool | None = None,
        sensitive_facts: bool | None = None,
    ) -> Consent:
        """Record the user's choices (None: follow the tenant's policy)."""
        return self._c._run(scope, calls.set_consent(scope, share_across_sessions, sensitive_facts))

    def shares_across_sessions(self, scope: Scope) -> bool:
        """True if the user's facts and profile may reach their other sessions."""
        return scope.user is not None and self.consent(scope).share_across_sessions


class Retention:
    """``client.retention``: the tenant's policy, legal holds, the purge and what it holds."""

    def __init__(self, client: _Runs) -> None:
        self._c = client

    def policy(self, tenant: str) -> TenantPolicy:
        return self._c._run(_tenant(tenant), calls.policy())

    def holds(self, tenant: str) -> builtins.list[LegalHold]:
        return self._c._run(_tenant(tenant), calls.holds())

    def stats(self, scope: Scope, *, now: datetime | None = None) -> StoreStats:
        return self._c._run(scope, calls.stats(scope, now))

    def set_policy(self, tenant: str, policy: TenantPolicy) -> None:
        """Set the tenant's policy (admin credential)."""
        self._c._run(None, calls.set_policy(tenant, policy))

    def hold(self, scope: Scope, *, reason: str) -> LegalHold:
        """Place a legal hold (admin credential)."""
        return self._c._run(None, calls.hold(scope, reason))

    def release(self, scope: Scope) -> bool:
        """Release the hold on exactly *scope* (admin credential)."""
        return self._c._run(None, calls.release(scope))

    def purge(self, tenant: str, *, now: datetime | None = None) -> int:
        """Remove the tenant's records past retention (admin credential)."""
        return self._c._run(None, calls.purge(tenant, now))


class Procedures:
    """``client.procedures``: the tenant's versioned playbooks."""

    def __init__(self, client: _Runs) -> None:
        self._c = client

    def record(
        self,
        scope: Scope,
        name: str,
        steps: Sequence[str],
        *,
        tools: Sequence[Mapping[str, Any]],
        description: str = "",
        active: bool = False,
    ) -> Procedure:
        return self._c._run(scope, calls.record(
            scope, name, steps, tools=tools, description=description, active=active
        ))  # fmt: skip

    def candidate_from_task(
        self, scope: Scope, name: str, *, tools: Sequence[Mapping[str, Any]]
    ) -> Procedure:
        return self._c._run(scope, calls.candidate_from_task(scope, name, tools))

    def approve(self, tenant: str, procedure_id: str) -> Procedure:
        return self._c._run(_tenant(tenant), calls.approve(procedure_id))

    def retire(self, tenant: str, procedure_id: str) -> Procedure:
        return self._c._run(_tenant(tenant), calls.retire(procedure_id))

    def list(self, tenant: str, *, name: str | None = None) -> builtins.list[Procedure]:
        return self._c._run(_tenant(tenant), calls.list_procedures(name))

    def show(self, tenant: str, procedure_id: str) -> Procedure:
        return self._c._run(_tenant(tenant), calls.show(procedure_id))

    def get(
        self,
        tenant: str,
        name: str,
        *,
        tools: Sequence[Mapping[str, Any]],
        include_drift: bool = False,
    ) -> ProcedureMatch:
        return self._c._run(_tenant(tenant), calls.get_procedure(name, tools, include_drift))


class AsyncFacts:
    """``async_client.facts``: the awaitable twin of ``client.facts``."""

    def __init__(self, client: _AsyncRuns) -> None:
        self._c = client

    async def list(
        self,
        scope: Scope,
        *,
        subject: str | None = None,
        as_of: datetime | None = None,
        include_closed: bool = False,
    ) -> builtins.list[Fact]:
        return await self._c._run(scope, calls.list_facts(scope, subject, as_of, include_closed))

    async def history(self, scope: Scope, fact_id: str) -> builtins.list[Fact]:
        return await self._c._run(scope, calls.history(scope, fact_id))

    async def remember(
        self,
        scope: Scope,
        attribute: str,
        value: str,
        *,
        subject: str = USER,
        qualifier: str = "",
        category: FactCategory | str = FactCategory.GENERAL,
        source_event_id: str | None = None,
    ) -> Fact:
        return await self._c._run(scope, calls.remember(
            scope, attribute, value, subject=subject, qualifier=qualifier, category=category,
            source_event_id=source_event_id,
        ))  # fmt: skip

    async def revoke(self, scope: Scope, fact_id: str) -> Fact:
        return await self._c._run(scope, calls.revoke(scope, fact_id))

    async def profile(self, scope: Scope) -> Profile:
        return await self._c._run(scope, calls.profile(scope))

    async def export(self, scope: Scope) -> dict[str, Any]:
        return await self._c._run(scope, calls.export(scope))

    async def consent(self, scope: Scope) -> Consent:
        return await self._c._run(scope, calls.consent(scope))

    async def set_consent(
        self,
        scope: Scope,
        *,
        share_across_sessions: bool | None = None,
        sensitive_facts: bool | None = None,
    ) -> Consent:
        return await self._c._run(
            scope, calls.set_consent(scope, share_across_sessions, sensitive_facts)
        )

    async def shares_across_sessions(self, scope: Scope) -> bool:
        return scope.user is not None and (await self.consent(scope)).share_across_sessions


class AsyncRetention:
    """``async_client.retention``: the awaitable twin of ``client.retention``."""

    def __init__(self, client: _AsyncRuns) -> None:
        self._c = client

    async def policy(self, tenant: str) -> TenantPolicy:
        return await self._c._run(_tenant(tenant), calls.policy())

    async def holds(self, tenant: str) -> builtins.list[LegalHold]:
        return await self._c._run(_tenant(tenant), calls.holds())

    async def stats(self, scope: Scope, *, now: datetime | None = None) -> StoreStats:
        return await self._c._run(scope, calls.stats(scope, now))

    async def set_policy(self, tenant: str, policy: TenantPolicy) -> None:
        await self._c._run(None, calls.set_policy(tenant, policy))

    async def hold(self, scope: Scope, *, reason: str) -> LegalHold:
        return await self._c._run(None, calls.hold(scope, reason))

    async def release(self, scope: Scope) -> bool:
        return await self._c._run(None, calls.release(scope))

    async def purge(self, tenant: str, *, now: datetime | None = None) -> int:
        return await self._c._run(None, calls.purge(tenant, now))


class AsyncProcedures:
    """``async_client.procedures``: the awaitable twin of ``client.procedures``."""

    def __init__(self, client: _AsyncRuns) -> None:
        self._c = client

    async def record(
        self,
        scope: Scope,
        name: str,
        steps: Sequence[str],
        *,
        tools: Sequence[Mapping[str, Any]],
        description: str = "",
        active: bool = False,
    ) -> Procedure:
        return await self._c._run(scope, calls.record(
            scope, name, steps, tools=tools, description=description, active=active
        ))  # fmt: skip

    async def candidate_from_task(
        self, scope: Scope, name: str, *, tools: Sequence[Mapping[str, Any]]
    ) -> Procedure:
        return await self._c._run(scope, calls.candidate_from_task(scope, name, tools))

    async def approve(self, tenant: str, procedure_id: str) -> Procedure:
        return await self._c._run(_tenant(tenant), calls.approve(procedure_id))

    async def retire(self, tenant: str, procedure_id: str) -> Procedure:
        return await self._c._run(_tenant(tenant), calls.retire(procedure_id))

    async def list(self, tenant: str, *, name: str | None = None) -> builtins.list[Procedure]:
        return await self._c._run(_tenant(tenant), calls.list_procedures(name))

    async def show(self, tenant: str, procedure_id: str) -> Procedure:
        return await self._c._run(_tenant(tenant), calls.show(procedure_id))

    async def get(
        self,
        tenant: str,
        name: str,
        *,
        tools: Sequence[Mapping[str, Any]],
        include_drift: bool = False,
    ) -> ProcedureMatch:
        return await self._c._run(_tenant(tenant), calls.get_procedure(name, tools, include_drift))
