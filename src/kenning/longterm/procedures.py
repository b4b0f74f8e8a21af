"""Procedures: named, versioned playbooks bound to the tool schemas they were written for
(``memory.procedures``).

A playbook is only as good as the tools it names. Each version records a hash of the tool
schemas it was written for; :meth:`Procedures.get` with the agent's current tools excludes (and
reports) versions whose hash differs — drift — unless asked to include them. Candidates can be
recorded from a completed task (its tool calls, in order, and its outcome) and become active
only by an explicit :meth:`Procedures.approve`.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from kenning.errors import InvalidInput, NotFound
from kenning.longterm.api import ProceduresAPI
from kenning.records import (
    Procedure,
    ProcedureMatch,
    ProcedureStatus,
    Role,
    Scope,
    TaskStatus,
    check_json,
    check_text,
)
from kenning.store.protocol import ContextState, EventLog, ProcedureStore
from kenning.text import query_terms, stem

__all__ = ["PlaybookStore", "ProcedureMatch", "Procedures", "relevant", "tool_hash"]

_MAX_STEPS = 50
_MAX_TEXT = 500


def tool_hash(tools: Sequence[Mapping[str, Any]]) -> str:
    """A stable hash of tool schemas: the same tools in any order give the same hash; any
    change to a name, a description or a parameter gives another.

    Raises:
        InvalidInput: *tools* is not a list of JSON objects every backend can store (see
            :func:`kenning.records.check_json`).
    """
    if isinstance(tools, str | Mapping) or not isinstance(tools, Sequence):
        raise InvalidInput("tools must be a list of tool schemas (mappings)")
    check_json(list(tools), "tools")
    canonical = sorted(json.dumps(t, sort_keys=True, ensure_ascii=False) for t in tools)
    return hashlib.sha256("\n".join(canonical).encode("utf-8")).hexdigest()[:32]


def relevant(procedure: Procedure, text: str | None, *, share: float = 0.5) -> bool:
    """True when at least *share* of the procedure's name words appear in *text* (the goal or
    the query), compared as stems."""
    if not text:
        return False
    words = {stem(w) for w in query_terms(procedure.name.replace("_", " ").replace("-", " "))}
    if not words:
        return False
    said = {stem(w) for w in query_terms(text)}
    return len(words & said) / len(words) >= share


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_TEXT:
        raise InvalidInput(f"{what} must be a non-empty string of at most {_MAX_TEXT} characters")
    return " ".join(check_text(value, what).split())


def _name(value: str | None) -> str | None:
    """A name to look up: any text a backend can compare (a read, so no length rule)."""
    if value is not None and not isinstance(value, str):
        raise InvalidInput("name must be a string")
    return None if value is None else check_text(value, "name")


def _description(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput("description must be a string")
    return check_text(value, "description")


class PlaybookStore(ProcedureStore, EventLog, ContextState, Protocol):
    """What procedures use of a store: the playbooks, and a session's task state and tool
    calls (for :meth:`Procedures.candidate_from_task`)."""


class Procedures(ProceduresAPI):
    """Record, approve and look up playbooks of one store."""

    def __init__(self, store: PlaybookStore) -> None:
        self._store = store

    def record(self, scope: Scope, name: str, steps: Sequence[str], *,
               tools: Sequence[Mapping[str, Any]], description: str = "",
               active: bool = False) -> Procedure:  # fmt: skip
        if isinstance(steps, str) or not steps or len(steps) > _MAX_STEPS:
            raise InvalidInput(f"steps must be a list of 1-{_MAX_STEPS} strings")
        draft = Procedure(
            id=f"proc_{uuid.uuid4().hex}", scope=Scope(scope.tenant, scope.user),
            name=_text(name, "name"), version=0, tool_schema_hash=tool_hash(tools),
            steps=tuple(_text(s, "a step") for s in steps),
            description=" ".join(_description(description).split())[:_MAX_TEXT],
            status=ProcedureStatus.CANDIDATE, created_at=datetime.now(UTC),
        )  # fmt: skip
        stored = self._store.put_procedure(draft)
        return self.approve(scope.tenant, stored.id) if active else stored

    def candidate_from_task(
        self, scope: Scope, name: str, *, tools: Sequence[Mapping[str, Any]]
    ) -> Procedure:
        scope = scope.require_session()
        state = self._store.task_state(scope)
        if state.status is not TaskStatus.DONE:
            raise InvalidInput("the session's task is not done: record a procedure when it is")
        calls = [e for e in self._store.events(scope) if e.role is Role.TOOL and e.tool_name]
        if not calls:
            raise InvalidInput("the session called no tool: there is no procedure to record")
        steps = [f"call {e.tool_name}" + (f" with {_args(e.tool_args)}" if e.tool_args else "")
                 for e in calls][:_MAX_STEPS - 1]  # fmt: skip
        steps.append(f"outcome: {state.task or 'task done'}")
        return self.record(scope, name, steps, tools=tools, description=state.task)

    def approve(self, tenant: str, procedure_id: str) -> Procedure:
        return self._store.set_procedure_status(tenant, procedure_id, ProcedureStatus.ACTIVE)

    def retire(self, tenant: str, procedure_id: str) -> Procedure:
        return self._store.set_procedure_status(tenant, procedure_id, ProcedureStatus.RETIRED)

    def list(self, tenant: str, *, name: str | None = None) -> list[Procedure]:
        return self._store.procedures(tenant, name=_name(name))

    def show(self, tenant: str, procedure_id: str) -> Procedure:
        for procedure in self._store.procedures(tenant):
            if procedure.id == procedure_id:
                return procedure
        raise NotFound(f"no procedure {procedure_id!r} in tenant {tenant!r}")

    def get(self, tenant: str, name: str, *, tools: Sequence[Mapping[str, Any]],
            include_drift: bool = False) -> ProcedureMatch:  # fmt: skip
        current = tool_hash(tools)
        active = self._store.procedures(
            tenant, name=_name(name), statuses=(ProcedureStatus.ACTIVE,)
        )
        fits = [p for p in active if p.tool_schema_hash == current]
        drifted = tuple(p for p in active if p.tool_schema_hash != current)
        if fits:
            return ProcedureMatch(fits[-1], drifted)
        if include_drift and drifted:
            return ProcedureMatch(drifted[-1], drifted)
        return ProcedureMatch(None, drifted)

    def for_window(
        self, tenant: str, text: str | None, tools: Sequence[Mapping[str, Any]]
    ) -> builtins.list[Procedure]:
        """Active playbooks written for these tools whose name the goal or query mentions."""
        if not text or not tools:
            return []
        current = tool_hash(tools)
        active = self._store.procedures(tenant, statuses=(ProcedureStatus.ACTIVE,))
        return [p for p in active if p.tool_schema_hash == current and relevant(p, text)]


def _args(args: Any) -> str:
    if isinstance(args, Mapping):
        return ", ".join(f"{k}" for k in args)
    return "arguments"
