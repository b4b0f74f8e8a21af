"""Versioned procedures (playbooks) of the SQLite store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from kenning.errors import NotFound
from kenning.records import Procedure, ProcedureStatus, Scope
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.sql import ts

__all__ = ["ProcedureTables"]

_COLUMNS = "id, tenant, user_id, name, version, tool_hash, steps, description, status, created_at"


def _procedure(row: Sequence[Any]) -> Procedure:
    return Procedure(
        id=row[0], scope=Scope(row[1], row[2]), name=row[3], version=int(row[4]),
        tool_schema_hash=row[5], steps=tuple(json.loads(row[6])), description=row[7],
        status=ProcedureStatus(row[8]), created_at=ts(row[9]),
    )  # fmt: skip


class ProcedureTables(Database):
    """Playbooks: each name has versions; a version is a candidate, active or retired."""

    def put_procedure(self, procedure: Procedure) -> Procedure:
        """Store *procedure* as the next version of its name (its ``version`` is assigned)."""
        scope = procedure.scope
        with self._write(Scope(scope.tenant)) as conn:
            row = conn.execute(
                "SELECT coalesce(max(version), 0) FROM procedures WHERE tenant = ? AND name = ?",
                (scope.tenant, procedure.name),
            ).fetchone()
            version = int(row[0]) + 1
            conn.execute(
                f"INSERT INTO procedures ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    procedure.id, scope.tenant, scope.user, procedure.name, version,
                    procedure.tool_schema_hash, json.dumps(list(procedure.steps)),
                    procedure.description, procedure.status.value,
                    procedure.created_at.timestamp(),
                ),
            )  # fmt: skip
            return self._one(conn, scope.tenant, procedure.id)

    @staticmethod
    def _one(conn: sqlite3.Connection, tenant: str, procedure_id: str) -> Procedure:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM procedures WHERE tenant = ? AND id = ?", (tenant, procedure_id)
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
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            params.extend(s.value for s in statuses)
        with self._read(Scope(tenant)) as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM procedures WHERE {' AND '.join(where)}"
                " ORDER BY name, version",
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
            if status is ProcedureStatus.ACTIVE:
                conn.execute(
                    "UPDATE procedures SET status = 'retired' WHERE tenant = ? AND name = ?"
                    " AND status = 'active' AND id != ?",
                    (tenant, found.name, procedure_id),
                )
            conn.execute(
                "UPDATE procedures SET status = ? WHERE tenant = ? AND id = ?",
                (status.value, tenant, procedure_id),
            )
            return self._one(conn, tenant, procedure_id)
