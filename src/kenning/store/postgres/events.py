"""The event log of the PostgreSQL store: its bulk writes.

Sessions are claimed and numbered with one statement each over arrays (``unnest``). Events'
rows are copied into a temporary staging table (PostgreSQL does not accept ``COPY FROM`` into
a table under row-level security), then moved with one ``INSERT ... SELECT``, which the
policies check row by row. On Citus the rows travel as multi-row ``INSERT ... VALUES``
statements instead (:func:`insert_values`): one tenant's rows then go to its shard in one
router statement, where an ``INSERT ... SELECT`` would pass through the coordinator.
Everything else of the event log is shared (:mod:`kenning.store.sql.events`).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from kenning.store.postgres.sql import ROUTED, insert_values, raw
from kenning.store.sql import events
from kenning.store.sql.dialect import Tx
from kenning.store.sql.events import ITEM_COLUMNS

__all__ = ["EventTables", "copy_rows"]


def copy_rows(
    conn: Tx,
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    binary_types: Sequence[str] | None = None,
) -> str:
    """COPY *rows* into a per-connection temporary staging table shaped like *columns* of
    *table* (emptied at commit); return the staging table's name. With *binary_types* (the
    columns' type names) the rows travel in COPY's binary format."""
    # One staging table per column list: the same connection stages differently shaped rows.
    stage = f"stage_{table}_{zlib.crc32(','.join(columns).encode()):08x}"
    cols = ", ".join(c for c in columns if c != "ord")
    conn.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DELETE ROWS AS"
        f" SELECT 0::bigint AS ord, {cols} FROM {table} WITH NO DATA"
    )
    conn.execute(f"TRUNCATE {stage}")
    binary = " (FORMAT BINARY)" if binary_types is not None else ""
    with raw(conn).cursor().copy(f"COPY {stage} ({', '.join(columns)}) FROM STDIN{binary}") as copy:
        if binary_types is not None:
            copy.set_types(list(binary_types))
        for row in rows:
            copy.write_row(row)
    return stage


class EventTables(events.EventTables):
    """Events and vectors written in bulk."""

    _citus: bool  # set by Database: the database runs Citus

    def _insert_items(self, tx: Tx, tenant: str, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        if self._citus:
            found = insert_values(tx, "items", ITEM_COLUMNS, rows, " RETURNING id, rowid")
            return {r[0]: int(r[1]) for r in found}
        columns = ("ord", *ITEM_COLUMNS)
        stage = copy_rows(tx, "items", columns, [(n, *row) for n, row in enumerate(rows)])
        cols = ", ".join(ITEM_COLUMNS)
        found = tx.execute(
            f"INSERT INTO items ({cols}) SELECT {cols} FROM {stage} ORDER BY ord"
            " RETURNING id, rowid"
        ).fetchall()
        return {r[0]: int(r[1]) for r in found}

    def _store_vectors(
        self, tx: Tx, tenant: str, vectors: Mapping[str, npt.NDArray[np.float32]]
    ) -> None:
        rows = [(tenant, digest, vec) for digest, vec in vectors.items()]
        if self._citus:
            insert_values(tx, "vectors", ("tenant", "hash", "vec"), rows, " ON CONFLICT DO NOTHING")
            return
        stage = copy_rows(tx, "vectors", ("tenant", "hash", "vec"), rows,
                          binary_types=("text", "text", "vector"))  # fmt: skip
        tx.execute(
            f"INSERT INTO vectors (tenant, hash, vec) SELECT tenant, hash, vec FROM {stage}"
            f" ON CONFLICT DO NOTHING{ROUTED}"
        )

    def _set_last_seqs(
        self, tx: Tx, tenant: str, last_seq: Mapping[str, int],
        spans: Mapping[str, tuple[datetime, datetime]],
    ) -> None:  # fmt: skip
        none = (None, None)
        tx.execute(
            "UPDATE sessions s SET last_seq = v.seq, first_at = least(s.first_at, v.first_at),"
            " last_at = greatest(s.last_at, v.last_at)"
            " FROM unnest(?::text[], ?::bigint[], ?::timestamptz[], ?::timestamptz[])"
            " AS v(session, seq, first_at, last_at)"
            " WHERE s.tenant = ? AND s.session = v.session",
            (list(last_seq), list(last_seq.values()),
             [spans.get(s, none)[0] for s in last_seq], [spans.get(s, none)[1] for s in last_seq],
             tenant),
        )  # fmt: skip

    def _add_sessions(self, tx: Tx, tenant: str, owners: Mapping[str, str | None]) -> None:
        if self._citus:
            rows = [(tenant, session, user) for session, user in owners.items()]
            insert_values(tx, "sessions", ("tenant", "session", "user_id"), rows,
                          " ON CONFLICT DO NOTHING")  # fmt: skip
            return
        tx.execute(
            "INSERT INTO sessions (tenant, session, user_id)"
            " SELECT ?, s, u FROM unnest(?::text[], ?::text[]) AS t(s, u)"
            f" ON CONFLICT DO NOTHING{ROUTED}",
            (tenant, list(owners), list(owners.values())),
        )
