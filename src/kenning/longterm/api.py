"""What ``memory.facts``, ``memory.procedures`` and ``memory.retention`` offer a caller,
embedded or served, written once.

:class:`~kenning.longterm.service.LongTermMemory`, :class:`~kenning.longterm.procedures.Procedures`,
:class:`~kenning.longterm.retention.Retention` and the HTTP client's ``client.facts``,
``client.procedures`` and ``client.retention`` implement these protocols and inherit their
docstrings, and mypy checks every signature against them.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from kenning.errors import InvalidInput
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

__all__ = ["FactsAPI", "ProceduresAPI", "RetentionAPI", "user_of"]


def user_of(scope: object) -> Scope:
    """The user *scope* names (its tenant and user), checked where a call on their facts
    enters, embedded or served: InvalidInput for anything but a scope with a user."""
    if not isinstance(scope, Scope) or scope.user is None:
        raise InvalidInput("this operation needs a scope with a tenant and a user")
    return Scope(scope.tenant, scope.user)


class FactsAPI(Protocol):
    """``memory.facts``: a user's long-term facts, profile and consent."""

    def consent(self, scope: Scope) -> Consent:
        """The user's effective choices: their settings over the tenant's policy."""
        ...

    def set_consent(
        self,
        scope: Scope,
        *,
        share_across_sessions: bool | None = None,
        sensitive_facts: bool | None = None,
    ) -> Consent:
        """Record the user's choices (None: follow the tenant's policy); returns the result.

        ``share_across_sessions``: their facts and profile reach their other sessions.
        ``sensitive_facts``: health, finance and relationship statements are kept as facts.
        """
        ...

    def shares_across_sessions(self, scope: Scope) -> bool:
        """True if the user's facts and profile may reach their other sessions."""
        ...

    def profile(self, scope: Scope) -> Profile:
        """The user's profile: biography, preferences, style, people, corrections, sessions;
        within each kind the most important facts come first (a capped window keeps them)."""
        ...

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
        within_session: bool = False,
    ) -> Fact:
        """Store a fact the user stated or confirmed in the session of *scope* (an explicit
        write; consolidated like an extracted one: the same value reinforces, a new one
        supersedes). With *within_session* only the session's own facts are reinforced or
        superseded, and the fact returned is the session's: what the user's other sessions
        hold is neither changed nor shown (an agent's tool call without cross-session
        sharing)."""
        ...

    def revoke(self, scope: Scope, fact_id: str) -> Fact:
        """Close a fact's validity now (a revoked preference stops surfacing at once)."""
        ...

    def list(
        self,
        scope: Scope,
        *,
        subject: str | None = None,
        as_of: datetime | None = None,
        include_closed: bool = False,
    ) -> builtins.list[Fact]:
        """The user's current facts (or what was valid *as_of* a time; or every fact ever
        held with *include_closed*), oldest first. A scope with a session lists only the
        facts read from (or remembered in) that session."""
        ...

    def history(self, scope: Scope, fact_id: str) -> builtins.list[Fact]:
        """Every version of a fact (same subject, attribute and qualifier), with sources."""
        ...

    def export(self, scope: Scope) -> dict[str, Any]:
        """Everything long-term memory holds about the user, as JSON: the profile, every fact
        ever held (any status, with its validity and sources) and the user's consent."""
        ...


class ProceduresAPI(Protocol):
    """``memory.procedures``: a tenant's versioned playbooks, bound to their tool schemas."""

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
        """Store a new version of the playbook *name* for *tools* (a candidate unless
        *active*, which retires the name's other active version)."""
        ...

    def candidate_from_task(
        self, scope: Scope, name: str, *, tools: Sequence[Mapping[str, Any]]
    ) -> Procedure:
        """Record a candidate from the session's completed task: its tool calls, in order,
        and the outcome. Raises InvalidInput if the task is not done or called no tool."""
        ...

    def approve(self, tenant: str, procedure_id: str) -> Procedure:
        """Make a version the name's active playbook (the only way a candidate becomes one)."""
        ...

    def retire(self, tenant: str, procedure_id: str) -> Procedure:
        """Retire a version: it is no longer given to windows or ``get``."""
        ...

    def list(self, tenant: str, *, name: str | None = None) -> builtins.list[Procedure]:
        """The tenant's playbooks of every status, by name and version (those of *name* when
        given)."""
        ...

    def show(self, tenant: str, procedure_id: str) -> Procedure:
        """One version of a playbook; NotFound if the tenant has no such id."""
        ...

    def get(
        self,
        tenant: str,
        name: str,
        *,
        tools: Sequence[Mapping[str, Any]],
        include_drift: bool = False,
    ) -> ProcedureMatch:
        """The active playbook *name* written for these *tools*; versions written for other
        tools are reported as drifted (and returned only with *include_drift*)."""
        ...


class RetentionAPI(Protocol):
    """``memory.retention``: a tenant's policy, legal holds, the purge and what it holds."""

    def policy(self, tenant: str) -> TenantPolicy:
        """The tenant's policy (defaults when none was set)."""
        ...

    def set_policy(self, tenant: str, policy: TenantPolicy) -> None:
        """Set the tenant's consent defaults and retention."""
        ...

    def hold(self, scope: Scope, *, reason: str) -> LegalHold:
        """Place a legal hold: erase and purge of *scope* are refused until it is released."""
        ...

    def release(self, scope: Scope) -> bool:
        """Release the hold placed on exactly *scope*; False if there was none."""
        ...

    def holds(self, tenant: str) -> builtins.list[LegalHold]:
        """The tenant's legal holds, oldest first."""
        ...

    def purge(self, tenant: str, *, now: datetime | None = None) -> int:
        """Remove the tenant's records past retention (expired facts and records, events
        older than the policy's ``episode_days``) from every index; held scopes stay. Returns
        how many records were removed."""
        ...

    def stats(self, scope: Scope, *, now: datetime | None = None) -> StoreStats:
        """What *scope* (a tenant, or one user of it) holds: records by kind and their mean
        age, the most used tags, facts by status, and what the purge removed (tenant-wide)."""
        ...
