"""Vectors written after their events, on every SQL backend (:mod:`kenning.vectors`).

An event appended with *pending* texts gets a ``pending_vectors`` row per index row that waits
for a vector (its item, the text's hash and the text), in the event's transaction.
:meth:`PendingVectorTables.put_vectors` stores the vectors that rows still wait for, deletes
those rows and logs the events as ``reindex`` in ``index_log``, in one transaction: every
process's search partition takes the events (again) from their rows, now with vectors. Erasing
an event deletes its pending rows (a foreign key), so a vector embedded from erased text finds
nothing waiting for it and is not stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from kenning.records import Scope
from kenning.store.records import EventWrite, ModelInfo
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.dialect import Dialect, Tx
from kenning.store.sql.vectors import check_model, checked_vector
from kenning.telemetry import stage

__all__ = ["PendingVectorTables", "insert_pending"]


def insert_pending(
    tx: Tx, d: Dialect, tenant: str, written: Sequence[tuple[int, EventWrite]],
    pending: Mapping[tuple[str, str], str],
) -> None:  # fmt: skip
    """Inside the events' transaction: a row for each of *written*'s (rowid, write) index
    hashes that *pending* names."""
    rows = []
    for rowid, write in written:
        hashes = [write.embed_hash, *(c.embed_hash for c in write.chunks)]
        for digest in dict.fromkeys(h for h in hashes if h is not None):
            text = pending.get((tenant, digest))
            if text is not None:
                rows.append((tenant, rowid, digest, text))
    if rows:
        tx.executemany(
            "INSERT INTO pending_vectors (tenant, item, hash, text) VALUES (?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            rows,
        )


class PendingVectorTables(SqlDatabase):
    """The texts committed events wait for, and the write that delivers their vectors."""

    def pending_texts(self, tenant: str, *, limit: int) -> dict[str, str]:
        rows = self._read_all(
            Scope(tenant),
            "SELECT hash, min(text) FROM pending_vectors WHERE tenant = ? GROUP BY hash"
            " ORDER BY hash LIMIT ?",
            (tenant, limit),
        )
        return {r[0]: r[1] for r in rows}

    def put_vectors(
        self, tenant: str, model: ModelInfo, vectors: Mapping[str, npt.NDArray[np.float32]]
    ) -> int:
        d = self._d
        checked = {h: checked_vector(v, model, h) for h, v in vectors.items()}
        if not checked:
            return 0
        with self._write(Scope(tenant)) as tx:
            check_model(tx, d, model, claim=True)
            waiting: list[tuple[int, str]] = []
            for part in d.batches(sorted(checked)):
                cond, params = d.one_of("hash", part)
                waiting += tx.execute(
                    f"SELECT item, hash FROM pending_vectors WHERE tenant = ? AND {cond}",
                    [tenant, *params],
                ).fetchall()
            wanted = sorted({h for _, h in waiting})
            if not wanted:
                return 0
            self._store_vectors(tx, tenant, {h: checked[h] for h in wanted})
            for part in d.batches(wanted):
                cond, params = d.one_of("hash", part)
                tx.execute(
                    f"DELETE FROM pending_vectors WHERE tenant = ? AND {cond}", [tenant, *params]
                )
            items = sorted({int(item) for item, _ in waiting})
            self._log_removed(tx, tenant, items, op="reindex")
        with stage("index"):
            self._after_reindex(tenant)
        return len(items)
