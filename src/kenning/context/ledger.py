"""Keeps a session's running token totals current: only events newer than the ledger's head
are ever counted, so the cost of a window does not grow with the session."""

from __future__ import annotations

from kenning.context.render import event_message
from kenning.records import Scope
from kenning.store.protocol import Store
from kenning.tokens.base import Tokenizer
from kenning.tokens.chat import DEFAULT_CHAT_OVERHEAD, ChatOverhead, message_tokens

__all__ = ["sync_ledger"]


def sync_ledger(
    store: Store,
    scope: Scope,
    tokenizer: Tokenizer,
    *,
    overhead: ChatOverhead = DEFAULT_CHAT_OVERHEAD,
) -> tuple[int, int]:
    """Count the events added since the last call; return (last seq, total message tokens)."""
    head, total = store.ledger_head(scope, tokenizer.name)
    fresh = store.events(scope, after_seq=head)
    if not fresh:
        return head, total
    counts = [
        (e.seq, message_tokens(tokenizer, event_message(e), overhead=overhead)) for e in fresh
    ]
    store.extend_ledger(scope, tokenizer.name, counts)
    return store.ledger_head(scope, tokenizer.name)
