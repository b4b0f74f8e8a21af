"""The embedded backend: one SQLite file (WAL), vectors as float32 BLOBs, in-memory search.

:class:`SQLiteStore` offers every storage protocol (:mod:`kenning.store.protocol`) over one
database; each concern lives in its own module: connections and transactions
(:mod:`~kenning.store.sqlite.database`), the event log (:mod:`~kenning.store.sqlite.events`),
the search index (:mod:`~kenning.store.sqlite.search`), the working-context state
(:mod:`~kenning.store.sqlite.context`), the job queue (:mod:`~kenning.store.sqlite.jobs`),
long-term facts (:mod:`~kenning.store.sqlite.facts`), consent, holds and retention
(:mod:`~kenning.store.sqlite.policy`), procedures (:mod:`~kenning.store.sqlite.procedures`)
and the server's credentials (:mod:`~kenning.store.sqlite.keys`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from kenning.store.ann import AnnConfig
from kenning.store.records import Capabilities
from kenning.store.sql.context import ContextTables
from kenning.store.sql.events import EventTables
from kenning.store.sql.policy import PolicyTables
from kenning.store.sql.procedures import ProcedureTables
from kenning.store.sqlite.facts import FactTables
from kenning.store.sqlite.jobs import JobTables
from kenning.store.sqlite.keys import KeyTables
from kenning.store.sqlite.search import SearchTables

__all__ = ["SQLiteStore"]


class SQLiteStore(
    SearchTables, ContextTables, JobTables, KeyTables, FactTables, PolicyTables, ProcedureTables,
    EventTables,
):  # fmt: skip
    """The embedded :class:`~kenning.store.protocol.Store`.

    Safe to share between threads, and between processes on one file: each process follows
    the others' writes by delta.

    >>> store = SQLiteStore(":memory:")
    >>> store.backend
    'sqlite'
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        timeout_s: float = 30.0,
        lexical: Literal["memory", "fts5"] = "memory",
        ann: AnnConfig | None = None,
        reply_weight: float = 0.0,
    ) -> None:
        super().__init__(path, timeout_s=timeout_s)
        self._init_search(
            lexical=lexical, ann=ann if ann is not None else AnnConfig(), reply_weight=reply_weight
        )

    @property
    def backend(self) -> str:
        return "sqlite"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(multi_process=not self.in_memory)

    def close(self) -> None:
        """Save complete HNSW indexes, stop index builds and close every connection."""
        if self._closed:
            return
        self._release_all()
        self._close_connections()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
