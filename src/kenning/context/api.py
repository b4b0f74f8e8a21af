"""What ``memory.context`` offers a caller, embedded or served, written once.

:class:`~kenning.context.service.WorkingContext` and the HTTP client's ``client.context``
both implement these protocols and inherit their docstrings, and mypy checks both signatures
against them; the agent tools take the part they use (:class:`~kenning.tools.ContextTarget`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Protocol

from kenning.context.actions import ActionLog
from kenning.context.window import ContextWindow
from kenning.errors import InvalidInput, InvalidScope
from kenning.records import (
    USER,
    AuditEntry,
    Fact,
    FactCategory,
    JSONScalar,
    Pin,
    PinKind,
    PinStatus,
    Scope,
    Summary,
    TaskState,
    TaskUpdate,
)

__all__ = ["ContextAPI", "PinsAPI", "TaskAPI", "WindowAPI", "session_of", "window_source"]


def session_of(scope: object) -> Scope:
    """*scope* as the scope of one session, checked where a call enters, embedded or served:
    InvalidInput for anything but a :class:`~kenning.records.Scope`, InvalidScope for a scope
    without a user and a session."""
    if not isinstance(scope, Scope):
        raise InvalidInput("scope must be a kenning.Scope")
    return scope.require_session()


def window_source(scope: Scope, retrieve_from: object) -> Scope:
    """Where the window of *scope*'s session retrieves memories from: the session itself, or
    *retrieve_from*, which must be a scope of the same tenant (InvalidScope otherwise)."""
    if retrieve_from is None:
        return scope
    if not isinstance(retrieve_from, Scope) or retrieve_from.tenant != scope.tenant:
        raise InvalidScope("retrieve_from must be a kenning.Scope of the window's tenant")
    return retrieve_from


class PinsAPI(Protocol):
    """A session's pins: values kept verbatim in every window, versioned by key."""

    def set_pin(
        self,
        scope: Scope,
        kind: PinKind | str,
        value: str,
        *,
        key: str | None = None,
        amount: Decimal | str | None = None,
        currency: str | None = None,
        status: PinStatus | str = PinStatus.OPEN,
        source_event_id: str | None = None,
        metadata: Mapping[str, JSONScalar] | None = None,
    ) -> Pin:
        """Set a pin (a new version if its key exists with another value)."""
        ...

    def close_pin(self, scope: Scope, key: str) -> Pin:
        """Close the pin *key* (e.g. an obligation that was fulfilled); history keeps it open."""
        ...

    def pins(self, scope: Scope, *, history: bool = False) -> list[Pin]:
        """The current pins of the session of *scope*; every version with *history*."""
        ...


class TaskAPI(Protocol):
    """A session's task state: goal, subtask, status, decisions and constraints."""

    def update_task(self, scope: Scope, update: TaskUpdate) -> TaskState:
        """Merge *update* into the session's task state (rules in kenning.context.task)."""
        ...

    def task_state(self, scope: Scope) -> TaskState:
        """The session's task state (empty if never set)."""
        ...

    def action_log(self, scope: Scope) -> ActionLog:
        """The session's action log, derived from its tool events (see
        :mod:`kenning.context.actions`): its actions, calls and errors per tool, and the files
        its tenant's file tools read and wrote."""
        ...


class ContextAPI(PinsAPI, TaskAPI, Protocol):
    """``memory.context``: pins, task state, summaries and compaction of sessions."""

    def summaries(self, scope: Scope) -> list[Summary]:
        """The session's active summaries, oldest range first."""
        ...

    def compaction_log(self, scope: Scope, *, limit: int = 1_000) -> list[AuditEntry]:
        """The session's compaction audit log, oldest first."""
        ...

    def compact(self, scope: Scope, *, budget_tokens: int, model: str) -> list[Summary]:
        """Compact the session now (embedded: on the caller's thread; served: on the
        server)."""
        ...

    def promote_finding(
        self,
        scope: Scope,
        finding_id: str,
        *,
        attribute: str,
        value: str | None = None,
        subject: str = USER,
        qualifier: str = "",
        category: FactCategory | str = FactCategory.GENERAL,
    ) -> Fact:
        """Promote a verified finding of the session's task state to a long-term fact of its
        user, through the fact path (``memory.facts.remember``: consolidated like any fact, the
        same value reinforces, a new one supersedes, sensitive categories need consent).

        The fact's ``source_event_id`` is the finding's evidence: its first event id, else the
        source event of the first pin it cites. *value* defaults to the finding's text. The
        task state is not changed. This is the host application's action, like setting
        approval pins: no agent tool offers it (the agent records findings; the host decides
        what the user's memory keeps).

        Raises:
            NotFound: the session's task state holds no finding *finding_id*.
            InvalidInput: *finding_id* names a hypothesis (only verified findings are promoted),
                or the fact is invalid (e.g. a value over 200 characters); nothing is written.

        Example:
            >>> state = memory.context.task_state(scope)  # doctest: +SKIP
            >>> memory.context.promote_finding(scope, state.findings[0].id,
            ...                                attribute="root cause")  # doctest: +SKIP
        """
        ...


class WindowAPI(Protocol):
    """Assembling the window of a session's next model call."""

    def assemble(
        self,
        scope: Scope,
        *,
        budget_tokens: int,
        model: str,
        reserve_output_tokens: int = 0,
        system: str,
        goal: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        query: str | None = None,
        retrieve_from: Scope | None = None,
    ) -> ContextWindow:
        """Build the window for the next model call of the session of *scope*.

        Tiers fill in order — system policy, goal and task state, tool schemas (most relevant
        to the query first when not all fit), pins, the recent tail (whole messages; the latest
        user input always), summaries, retrieved memories (cited) — and a piece that does not
        fit is skipped without taking room from an earlier tier. Counts are exact for
        *model*'s tokenizer, chat framing included, and the window never exceeds
        ``budget_tokens - reserve_output_tokens``.

        Retrieved memories come from the session itself (older turns than the tail) unless
        *retrieve_from* names a wider scope of the same tenant, e.g. ``Scope(tenant, user)``
        for the user's other sessions: episodes stay session-scoped unless the caller asks.

        Reads pressure from the session's running token totals: at the warn threshold it logs,
        at compact it queues a background compaction, at hard it compacts before returning.

        Raises:
            InvalidInput: a bad budget, model, system policy, tool schema or query.
            InvalidScope: *retrieve_from* is not a scope of the window's tenant.
            ScopeConflict: the session belongs to another user of the tenant.
            BudgetError: the system policy and the latest user input alone exceed the budget.

        Example:
            >>> window = memory.assemble(scope, budget_tokens=2_000, model="gpt-4o",
            ...                          system="You are a support agent.")  # doctest: +SKIP
        """
        ...
