"""Versioned procedures (playbooks) of the PostgreSQL store.

A mixin of :class:`~kenning.store.postgres.store.PostgresStore`. Writes of one playbook name
hold its lock until they commit, so two writers never take the same version number and two
activations never leave two active versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning.errors import NotFound
from kenning.records import Procedure, ProcedureStatus, Scope
from kenning.store.postgres.database import Conn, Database, lock_key
from kenning.store.postgres.sql import jsonb

__all__ = ["ProcedureTables"]

_COLUMNS = "id, tenant, user_id, name, version, tool_hash, steps, description, status, created_at"


def _procedure(row: Sequence[Any]) -> Procedure:
    return Procedure(
        id=row[0], scope=Scope(row[1], row[2]), name=row[3], version=int(row[4]),
        tool_schema_hash=row[5], steps=tuple(row[6]), description=row[7],
        status=ProcedureStatus(row[8]), created_at=row[9],
    )  # fmt: skip


class ProcedureTables(Database):
    """Playbooks: each name has versions; a version is a candidate, active or retired."""

    def put_procedure(self, procedure: Procedure) -> Procedure:
        """Store *procedure* as the next version of its name (its ``version`` is assigned)."""
        scope = procedure.scope
        with self._write(Scope(scope.tenant)) as conn:
            lock_key(conn, scope.tenant, f"procedure:{procedure.name}")
            row = conn.execute(
                "SELECT coalesce(max(version), 0) FROM procedures WHERE tenant = ? AND name = ?",
                (scope.tenant, procedure.name),
            ).fetchone()
            version = (int(row[0]) if row is not None else 0) + 1
            conn.execute(
                f"INSERT INTO procedures ({_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    procedure.id, scope.tenant, scope.user, procedure.name, version,
                    procedure.tool_schema_hash, jsonb(list(procedure.steps)),
                    procedure.description, procedure.status.value, procedure.created_at,
                ),
            )  # fmt: skip
            return self._one(conn, scope.tenant, procedure.id)

    @staticmethod
    def _one(conn: Conn, tenant: str, procedure_id: str) -> Procedure:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM procedures WHERE tenant = ? AND id = ?",
            (tenant, procedure_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"no procedure {procedure_id!r} in tenant {tenant!r}")
        return _procedure(row)

    def procedures(
        self,
        tenant: str,
        *,
        name: str | None = None,
        statuses: Sequence[ProcedureStatus] | None = None,
    ) -> list[Procedure]:
        where = ["tenant = ?"]
        params: list[Any] = [tenant]
        if name is not None:
            where.append("name = ?")
            params.append(name)
        if statuses:
            where.append("status = ANY(?)")
            params.append([s.value for s in statuses])
        with self._read(Scope(tenant)) as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM procedures WHERE {' AND '.join(where)}"
                # Names in C order, as SQLite compares text.
                ' ORDER BY name COLLATE "C", version',
                params,
            ).fetchall()
        return [_procedure(r) for r in rows]

    def set_procedure_status(
        self, tenant: str, procedure_id: str, status: ProcedureStatus
    ) -> Procedure:
        """Change a version's status; activating one retires the other active versions of its
        name (one active playbook per name)."""
        with self._write(Scope(tenant)) as conn:
            found = self._one(conn, tenant, procedure_id)
            lock_key(conn, tenant, f"procedure:{found.name}")
            if status is ProcedureStatus.ACTIVE:
                conn.execute(
                    "UPDATE procedures SET status = 'retired' WHERE tenant = ? AND name = ?"
                    " AND status = 'active' AND id <> ?",
                    (tenant, found.name, procedure_id),
                )
            conn.execute(
                "UPDATE procedures SET status = ? WHERE tenant = ? AND id = ?",
                (status.value, tenant, procedure_id),
            )
            return self._one(conn, tenant, procedure_id)
