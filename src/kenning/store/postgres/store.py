"""The server backend: PostgreSQL with pgvector, for deployments past one machine's file.

:class:`PostgresStore` offers every storage protocol (:mod:`kenning.store.protocol`) over one
PostgreSQL database. The concerns are written once for both SQL backends
(:mod:`kenning.store.sql`); this package holds what is PostgreSQL's own: the pool and
transactions (:mod:`~kenning.store.postgres.database`), the schema, roles and row-level
security (:mod:`~kenning.store.postgres.schema`), its spelling of the shared SQL
(:mod:`~kenning.store.postgres.sql`), its statements across tenants
(:mod:`~kenning.store.postgres.cross`), bulk writes by ``COPY``
(:mod:`~kenning.store.postgres.events`), how search partitions follow the tables
(:mod:`~kenning.store.postgres.search`) and copying a SQLite store in
(:mod:`~kenning.store.postgres.transfer`).
"""

from __future__ import annotations

from kenning.store.ann import AnnConfig
from kenning.store.postgres.search import SearchTables
from kenning.store.postgres.transfer import TransferTables
from kenning.store.sql.archive import ArchiveTables
from kenning.store.sql.context import ContextTables
from kenning.store.sql.documents import DocumentTables
from kenning.store.sql.facts import FactTables
from kenning.store.sql.jobs import JobTables
from kenning.store.sql.keys import KeyTables
from kenning.store.sql.pending import PendingVectorTables
from kenning.store.sql.policy import PolicyTables
from kenning.store.sql.procedures import ProcedureTables

__all__ = ["PostgresStore"]


class PostgresStore(
    SearchTables, ContextTables, JobTables, FactTables, PolicyTables, ProcedureTables,
    KeyTables, TransferTables, PendingVectorTables, DocumentTables, ArchiveTables,
):  # fmt: skip
    """The PostgreSQL :class:`~kenning.store.protocol.Store`.

    Opening it migrates the database when the URL's role owns kenning's tables (or may create
    them); its connections then act as the application role ``kenning_app``, which row-level
    security confines to one tenant per transaction. Safe to share between threads, and
    between processes and machines on one database: each follows the others' writes by delta.

    >>> store = PostgresStore("postgresql://kenning:kenning@127.0.0.1/kenning")  # doctest: +SKIP
    >>> store.backend  # doctest: +SKIP
    'postgresql'
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 8,
        timeout_s: float = 30.0,
        ann: AnnConfig | None = None,
        reply_weight: float = 0.0,
    ) -> None:
        super().__init__(url, pool_size=pool_size, timeout_s=timeout_s)
        self._init_search(ann=ann if ann is not None else AnnConfig(), reply_weight=reply_weight)
