"""API keys and tenants' stored volume, for the server, on every SQL backend.

Only a hash of each key's secret is stored; generating and checking secrets is the server's
job (:mod:`kenning.server.auth`). A key is written per tenant; looking one up by id
(authentication, before the tenant is known), listing every tenant's keys and revoking by id
reach across tenants (:mod:`kenning.store.sql.cross`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import ApiKey, KeyScope, Scope, TenantUsage
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.usage import read_usage

__all__ = ["KeyTables"]


class KeyTables(SqlDatabase):
    """Tenants' API keys (hashed) and their stored volume."""

    def _key(self, row: Sequence[Any]) -> ApiKey:
        d = self._d
        return ApiKey(
            id=row[0], tenant=row[1], name=row[2],
            scopes=tuple(KeyScope(s) for s in d.read_json(row[3])),
            created_at=d.read_time(row[4]), revoked_at=d.read_opt_time(row[5]),
        )  # fmt: skip

    def put_api_key(self, key: ApiKey, *, secret_hash: str) -> None:
        with self._write(Scope(key.tenant)) as tx:
            tx.execute(
                "INSERT INTO api_keys (tenant, id, name, scopes, secret_hash, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key.tenant, key.id, key.name, self._d.json([s.value for s in key.scopes]),
                    secret_hash, self._d.time(key.created_at),
                ),
            )  # fmt: skip

    def tenant_usage(self, tenant: str) -> TenantUsage:
        with self._read(Scope(tenant)) as tx:
            return read_usage(tx, tenant)

    def api_key(self, key_id: str) -> tuple[ApiKey, str] | None:
        with self._read(None) as tx:
            row = tx.execute(self._cross.keys.by_id, (key_id,)).fetchone()
        return None if row is None else (self._key(row), str(row[6]))

    def api_keys(self, tenant: str | None = None) -> list[ApiKey]:
        with self._read(None) as tx:
            return [self._key(r) for r in tx.execute(self._cross.keys.of_tenant, (tenant,))]

    def revoke_api_key(self, key_id: str, *, at: datetime) -> ApiKey | None:
        with self._write(None) as tx:
            row = tx.execute(self._cross.keys.revoke, (key_id, self._d.time(at))).fetchone()
        return None if row is None else self._key(row)
