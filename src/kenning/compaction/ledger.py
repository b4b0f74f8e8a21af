"""Keeps a session's running token totals current: only events newer than the ledger's head
are ever counted, so the cost of a window does not grow with the session.

The ledger sits below both of its readers: compaction plans its ranges from it, and the
window (:mod:`kenning.context.assembler`) picks the tail that fits from it.
"""

from __future__ import annotations

from typing import Protocol

from kenning.records import Scope
from kenning.store.protocol import ContextState, EventLog
from kenning.tokens.base import Tokenizer
from kenning.tokens.chat import DEFAULT_CHAT_OVERHEAD, ChatOverhead, message_tokens
from kenning.tokens.messages import event_messages

__all__ = ["SessionStore", "sync_ledger", "uncounted"]


class SessionStore(EventLog, ContextState, Protocol):
    """A session's events and its context state: what the ledger, the compactor and the
    window's reads use of a store."""


def sync_ledger(
    store: SessionStore,
    scope: Scope,
    tokenizer: Tokenizer,
    *,
    overhead: ChatOverhead = DEFAULT_CHAT_OVERHEAD,
) -> int:
    """Count the events added since the last call; return how many were counted."""
    counts = uncounted(store, scope, tokenizer, overhead=overhead)
    store.extend_ledger(scope, tokenizer.name, counts)
    return len(counts)


def uncounted(
    store: SessionStore,
    scope: Scope,
    tokenizer: Tokenizer,
    *,
    overhead: ChatOverhead = DEFAULT_CHAT_OVERHEAD,
) -> list[tuple[int, int]]:
    """``(seq, message tokens)`` of the session's events after the ledger's head: what
    :meth:`~kenning.store.protocol.ContextState.extend_ledger` appends. Reads only."""
    with store.reading(scope):  # the head and the events after it from one state
        head, _ = store.ledger_head(scope, tokenizer.name)
        fresh = store.events(scope, after_seq=head)
    return [
        (e.seq, sum(message_tokens(tokenizer, m, overhead=overhead) for m in event_messages(e)))
        for e in fresh
    ]
