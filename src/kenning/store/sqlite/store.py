"""The embedded backend: one SQLite file (WAL), vectors as float32 BLOBs, in-memory search.

:class:`SQLiteStore` offers every storage protocol (:mod:`kenning.store.protocol`) over one
database. The concerns are written once for both SQL backends (:mod:`kenning.store.sql`);
this package holds what is SQLite's own: connections and transactions
(:mod:`~kenning.store.sqlite.database`), the schema (:mod:`~kenning.store.sqlite.schema`), its
spelling of the shared SQL (:mod:`~kenning.store.sqlite.sql`), its statements across tenants
(:mod:`~kenning.store.sqlite.cross`), how search partitions follow the file and FTS5
(:mod:`~kenning.store.sqlite.search`, :mod:`~kenning.store.sqlite.fts`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from kenning.store.ann import AnnConfig
from kenning.store.sql.archive import ArchiveTables
from kenning.store.sql.context import ContextTables
from kenning.store.sql.documents import DocumentTables
from kenning.store.sql.events import EventTables
from kenning.store.sql.facts import FactTables
from kenning.store.sql.jobs import JobTables
from kenning.store.sql.keys import KeyTables
from kenning.store.sql.pending import PendingVectorTables
from kenning.store.sql.policy import PolicyTables
from kenning.store.sql.procedures import ProcedureTables
from kenning.store.sqlite.search import SearchTables

__all__ = ["SQLiteStore"]


class SQLiteStore(
    SearchTables, ContextTables, JobTables, KeyTables, FactTables, PolicyTables, ProcedureTables,
    EventTables, PendingVectorTables, DocumentTables, ArchiveTables,
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
