"""API keys and tenant usage of the PostgreSQL store, for the server.

A mixin of :class:`~kenning.store.postgres.store.PostgresStore`. Only a hash of each key's
secret is stored. A key is written and listed per tenant under row-level security; looking one
up by id (authentication, before the tenant is known), listing every tenant's keys and revoking
by id go through ``SECURITY DEFINER`` functions that return key fields only (migration
``0005_api_keys``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import ApiKey, KeyScope, Scope, TenantUsage
from kenning.store.postgres.database import Database
from kenning.store.postgres.sql import jsonb

__all__ = ["KeyTables"]

_KEY_COLUMNS = "id, tenant, name, scopes, created_at, revoked_at, secret_hash"


def _key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=row[0], tenant=row[1], name=row[2], scopes=tuple(KeyScope(s) for s in row[3]),
        created_at=row[4], revoked_at=row[5],
    )  # fmt: skip


class KeyTables(Database):
    """Tenants' API keys (hashed) and their stored volume."""

    def put_api_key(self, key: ApiKey, *, secret_hash: str) -> None:
        with self._write(Scope(key.tenant)) as conn:
            conn.execute(
                "INSERT INTO api_keys (tenant, id, name, scopes, secret_hash, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key.tenant, key.id, key.name, jsonb([s.value for s in key.scopes]),
                    secret_hash, key.created_at,
                ),
            )  # fmt: skip

    def api_key(self, key_id: str) -> tuple[ApiKey, str] | None:
        with self._read(None) as conn:
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM kenning_api_key(?)", (key_id,)
            ).fetchone()
        return None if row is None else (_key(row), str(row[6]))

    def api_keys(self, tenant: str | None = None) -> list[ApiKey]:
        with self._read(None) as conn:
            rows = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM kenning_api_keys(?)", (tenant,)
            ).fetchall()
        return [_key(r) for r in rows]

    def revoke_api_key(self, key_id: str, *, at: datetime) -> ApiKey | None:
        with self._write(None) as conn:
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM kenning_revoke_api_key(?, ?)", (key_id, at)
            ).fetchone()
        return None if row is None else _key(row)

    def tenant_usage(self, tenant: str) -> TenantUsage:
        with self._read(Scope(tenant)) as conn:
            row = conn.execute(
                "SELECT count(*), coalesce(sum(length(text)), 0) FROM items"
                " WHERE tenant = ? AND kind = 'event'",
                (tenant,),
            ).fetchone()
        assert row is not None
        return TenantUsage(events=int(row[0]), content_chars=int(row[1]))
