"""Versioned procedures (playbooks), on every SQL backend.

A mixin of the stores (:class:`~kenning.store.sql.database.SqlDatabase`). Writes of one
playbook name go one at a time until they commit, so two writers never take the same version
number and two activations never leave two active versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning.errors import NotFound
from kenning.records import Procedure, ProcedureStatus, Scope
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.dialect import Tx

__all__ = ["ProcedureTables"]

_COLUMNS = "id, tenant, user_id, name, version, tool_hash, steps, description, status, created_at"


class ProcedureTables(SqlDatabase):
    """Playbooks: each name has versions; a version is a candidate, active or retired."""

    def put_procedure(self, procedure: Procedure) -> Procedure:
        """Store *procedure* as the next version of its name (its ``version`` is assigned)."""
        scope, d = procedure.scope, self._d
        with self._write(Scope(scope.tenant)) as tx:
            self._serialize(tx, scope.tenant, f"procedure:{procedure.name}")
            row = tx.execute(
                "SELECT coalesce(max(version), 0) FROM procedures WHERE tenant = ? AND name = ?",
                (scope.tenant, procedure.name),
            ).fetchone()
            tx.execute(
                f"INSERT INTO procedures ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    procedure.id, scope.tenant, scope.user, procedure.name, int(row[0]) + 1,
                    procedure.tool_schema_hash, d.json(list(procedure.steps)),
                    procedure.description, procedure.status.value, d.time(procedure.created_at),
                ),
            )  # fmt: skip
            return self._one(tx, scope.tenant, procedure.id)

    def _one(self, tx: Tx, tenant: str, procedure_id: str) -> Procedure:
        row = tx.execute(
            f"SELECT {_COLUMNS} FROM procedures WHERE tenant = ? AND id = ?",
            (tenant, procedure_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"no procedure {procedure_id!r} in tenant {tenant!r}")
        return self._procedure(row)

    def _procedure(self, row: Sequence[Any]) -> Procedure:
        d = self._d
        return Procedure(
            id=row[0], scope=Scope(row[1], row[2]), name=row[3], version=int(row[4]),
            tool_schema_hash=row[5], steps=tuple(d.read_json(row[6])), description=row[7],
            status=ProcedureStatus(row[8]), created_at=d.read_time(row[9]),
        )  # fmt: skip

    def procedures(
        self, tenant: str, *, name: str | None = None,
        statuses: Sequence[ProcedureStatus] | None = None,
    ) -> list[Procedure]:  # fmt: skip
        where = ["tenant = ?"]
        params: list[Any] = [tenant]
        if name is not None:
            where.append("name = ?")
            params.append(name)
        if statuses:
            cond, values = self._d.one_of("status", [s.value for s in statuses])
            where.append(cond)
            params += values
        rows = self._read_all(
            Scope(tenant),
            f"SELECT {_COLUMNS} FROM procedures WHERE {' AND '.join(where)}"
            f" ORDER BY {self._d.text_order('name')}, version",
            params,
        )
        return [self._procedure(r) for r in rows]

    def set_procedure_status(
        self, tenant: str, procedure_id: str, status: ProcedureStatus
    ) -> Procedure:
        """Change a version's status; activating one retires the other active versions of its
        name (one active playbook per name)."""
        with self._write(Scope(tenant)) as tx:
            found = self._one(tx, tenant, procedure_id)
            self._serialize(tx, tenant, f"procedure:{found.name}")
            if status is ProcedureStatus.ACTIVE:
                tx.execute(
                    "UPDATE procedures SET status = 'retired' WHERE tenant = ? AND name = ?"
                    " AND status = 'active' AND id <> ?",
                    (tenant, found.name, procedure_id),
                )
            tx.execute(
                "UPDATE procedures SET status = ? WHERE tenant = ? AND id = ?",
                (status.value, tenant, procedure_id),
            )
            return self._one(tx, tenant, procedure_id)
