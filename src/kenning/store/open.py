"""Open the store a location names: a SQLite file, or a PostgreSQL database by URL.

The one place that tells the backends apart, so :class:`~kenning.memory.Memory`, the server and
the CLI open either the same way. The PostgreSQL driver is imported only for a URL.
"""

from __future__ import annotations

from pathlib import Path

from kenning.errors import StoreError
from kenning.store.ann import AnnConfig
from kenning.store.postgres import is_postgres_url
from kenning.store.protocol import Store

__all__ = ["open_store"]


def open_store(
    location: str | Path, *, ann: AnnConfig | None = None, reply_weight: float = 0.0
) -> Store:
    """The store at *location*, migrated to this kenning's schema: a PostgreSQL database for a
    ``postgresql://`` URL (``pip install 'kenning[postgres]'``), else a SQLite file (created if
    missing). *reply_weight* mixes an answer's vector with the question it
    answers (:mod:`kenning.store.replies`; 0: off)."""
    if is_postgres_url(location):
        try:
            from kenning.store.postgres.store import PostgresStore
        except ImportError as exc:
            raise StoreError(
                f"PostgreSQL needs its driver: pip install 'kenning[postgres]' ({exc})"
            ) from exc
        return PostgresStore(str(location), ann=ann, reply_weight=reply_weight)
    from kenning.store.sqlite.store import SQLiteStore

    return SQLiteStore(location, ann=ann, reply_weight=reply_weight)
