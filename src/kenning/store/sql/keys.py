"""API keys and tenants' stored volume, for the server, on every SQL backend.

Only a hash of each key's secret is stored. A key is written per tenant; looking one up by id
(authentication, before the tenant is known), listing every tenant's keys and revoking by id
reach across tenants, which each backend does its own way (PostgreSQL through functions that
row-level security lets through and that return key fields only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning.records import ApiKey, KeyScope, Scope, TenantUsage
from kenning.store.sql.database import SqlDatabase

__all__ = ["KEY_COLUMNS", "KeyTables"]

KEY_COLUMNS = "id, tenant, name, scopes, created_at, revoked_at, secret_hash"


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
            row = tx.execute(
                "SELECT count(*), coalesce(sum(length(text)), 0) FROM items"
                " WHERE tenant = ? AND kind = 'event'",
                (tenant,),
            ).fetchone()
        return TenantUsage(events=int(row[0]), content_chars=int(row[1]))
