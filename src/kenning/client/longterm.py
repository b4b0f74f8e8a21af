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

from kenning.client import longterm_calls as calls
from kenning.client.part import AsyncRuns, Part, R, Runs, Sent
from kenning.longterm.api import FactsAPI, ProceduresAPI, RetentionAPI
from kenning.records import Scope

__all__ = [
    "AsyncFacts",
    "AsyncProcedures",
    "AsyncRetention",
    "Facts",
    "Procedures",
    "Retention",
]


class _FactCalls(Part[R]):
    list = Sent(calls.list_facts)
    history = Sent(calls.history)
    remember = Sent(calls.remember)
    revoke = Sent(calls.revoke)
    profile = Sent(calls.profile)
    export = Sent(calls.export)
    consent = Sent(calls.consent)
    set_consent = Sent(calls.set_consent)


class _RetentionCalls(Part[R]):
    policy = Sent(calls.policy)
    holds = Sent(calls.holds)
    stats = Sent(calls.stats)
    set_policy = Sent(calls.set_policy)
    hold = Sent(calls.hold)
    release = Sent(calls.release)
    purge = Sent(calls.purge)


class _ProcedureCalls(Part[R]):
    record = Sent(calls.record)
    candidate_from_task = Sent(calls.candidate_from_task)
    approve = Sent(calls.approve)
    retire = Sent(calls.retire)
    list = Sent(calls.list_procedures)
    show = Sent(calls.show)
    get = Sent(calls.get_procedure)


class Facts(_FactCalls[Runs], FactsAPI):
    """``client.facts``: a served user's long-term facts, profile and consent."""

    def shares_across_sessions(self, scope: Scope) -> bool:
        return scope.user is not None and self.consent(scope).share_across_sessions


class Retention(_RetentionCalls[Runs], RetentionAPI):
    """``client.retention``: the tenant's policy, legal holds, the purge and what it holds.
    ``set_policy``, ``hold``, ``release`` and ``purge`` need the admin credential."""


class Procedures(_ProcedureCalls[Runs], ProceduresAPI):
    """``client.procedures``: the tenant's versioned playbooks."""


class AsyncFacts(_FactCalls[AsyncRuns]):
    """``async_client.facts``: the awaitable twin of ``client.facts``."""

    async def shares_across_sessions(self, scope: Scope) -> bool:
        return scope.user is not None and (await self.consent(scope)).share_across_sessions


class AsyncRetention(_RetentionCalls[AsyncRuns]):
    """``async_client.retention``: the awaitable twin of ``client.retention``."""


class AsyncProcedures(_ProcedureCalls[AsyncRuns]):
    """``async_client.procedures``: the awaitable twin of ``client.procedures``."""
