"""Reads a session's action log for its windows: the I/O shell around
:func:`~kenning.context.actions.fold_actions`.

Only a session's tool calls and results are read. Each session's log is kept in this process
after it is read, and only the tool events that came after it are read and folded in next
time, so a long session's tool events are read whole once. A log is read
again from the start when the tenant's file tools changed, or when anything of the tenant was
erased since (an erased call must not linger in a window).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from kenning.context.actions import ActionLog, FileTools, fold_actions
from kenning.records import Event, Scope

__all__ = ["ActionLogs", "TenantFileTools"]

#: A tenant's file tools (``memory`` reads its policy).
TenantFileTools = Callable[[str], FileTools]

_READ_BATCH = 2_000


class EventReader(Protocol):
    """What the action log reads of a store."""

    def events(
        self, scope: Scope, *, ids: None = None, after_seq: int | None = None,
        limit: int | None = None, tail: int | None = None, tools: bool = False,
    ) -> list[Event]: ...  # fmt: skip

    def erase_generation(self, tenant: str) -> int: ...


class ActionLogs:
    """The action logs of the sessions windows were assembled for, the most recent *size*."""

    def __init__(self, store: EventReader, tools: TenantFileTools, *, size: int = 1_024) -> None:
        self._store, self._tools, self._size = store, tools, size
        self._lock = threading.Lock()
        self._held: OrderedDict[tuple[str, str], tuple[int, FileTools, ActionLog]] = OrderedDict()

    def clear(self) -> None:
        with self._lock:
            self._held.clear()

    def log(self, scope: Scope) -> ActionLog:
        """The session's action log, up to its latest event."""
        assert scope.session is not None
        key = (scope.tenant, scope.session)
        generation = self._store.erase_generation(scope.tenant)
        tools = self._tools(scope.tenant)
        with self._lock:
            held = self._held.get(key)
        log = held[2] if held is not None and held[:2] == (generation, tools) else ActionLog()
        while True:
            events = self._store.events(scope, after_seq=log.seq, limit=_READ_BATCH, tools=True)
            log = fold_actions(log, events, tools)
            if len(events) < _READ_BATCH:
                break
        with self._lock:
            self._held[key] = (generation, tools, log)
            self._held.move_to_end(key)
            while len(self._held) > self._size:
                self._held.popitem(last=False)
        return log
