"""What one call costs a PostgreSQL store in round trips, statements and transactions.

The count sits on the driver (psycopg's cursor), so it sees exactly what goes over the wire,
and only from the thread that asked: background work (compaction, fact extraction) running
meanwhile is left out.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WireCount", "counting"]


@dataclass
class WireCount:
    """Round trips (one ``execute``), statements (a round trip may carry several, joined by
    ``"; "``) and transactions (round trips that begin one, read-only ones apart)."""

    round_trips: int = 0
    statements: int = 0
    transactions: int = 0
    read_only: int = 0
    texts: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.round_trips += 1
        self.statements += text.count("; ") + 1
        head = text.lstrip().upper()
        if head.startswith("BEGIN"):
            self.transactions += 1
            self.read_only += "READ ONLY" in head.split(";", 1)[0]
        self.texts.append(text)


@contextmanager
def counting() -> Iterator[WireCount]:
    """Count what this thread sends to PostgreSQL inside the block."""
    import psycopg

    count, thread = WireCount(), threading.get_ident()
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def text(cursor: psycopg.Cursor[Any], query: Any) -> str:
        if isinstance(query, bytes):
            return query.decode()
        return query if isinstance(query, str) else str(query.as_string(cursor.connection))

    def counted_execute(self: psycopg.Cursor[Any], query: Any, *args: Any, **kw: Any) -> Any:
        if threading.get_ident() == thread:
            count.add(text(self, query))
        return execute(self, query, *args, **kw)

    def counted_many(self: psycopg.Cursor[Any], query: Any, *args: Any, **kw: Any) -> Any:
        if threading.get_ident() == thread:
            count.add(text(self, query))  # one pipelined round trip
        return executemany(self, query, *args, **kw)

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Cursor.executemany = counted_many  # type: ignore[method-assign]
    try:
        yield count
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        psycopg.Cursor.executemany = executemany  # type: ignore[method-assign]
