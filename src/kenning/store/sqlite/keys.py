"""API keys and tenant usage of the SQLite store, for the server.

A mixin of :class:`~kenning.store.sqlite.store.SQLiteStore`. Only a hash of each key's secret
is stored; generating and checking secrets is the server's job (:mod:`kenning.server.auth`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kenning.records import ApiKey, KeyScope, TenantUsage
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.sql import ts

__all__ = ["KeyTables"]

_KEY_COLUMNS = "id, tenant, name, scopes, created_at, revoked_at, secret_hash"


def _key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=row[0], tenant=row[1], name=row[2],
        scopes=tuple(KeyScope(s) for s in json.loads(row[3])),
        created_at=ts(row[4]), revoked_at=None if row[5] is None else ts(row[5]),
    )  # fmt: skip


class KeyTables(Database):
    """Tenants' API keys (hashed) and their stored volume."""

    def put_api_key(self, key: ApiKey, *, secret_hash: str) -> None:
        with self._write(None) as conn:
            conn.execute(
                "INSERT INTO api_keys (id, tenant, name, scopes, secret_hash, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key.id, key.tenant, key.name, json.dumps([s.value for s in key.scopes]),
                    secret_hash, key.created_at.timestamp(),
                ),
            )  # fmt: skip

    def api_key(self, key_id: str) -> tuple[ApiKey, str] | None:
        with self._read(None) as conn:
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
        return None if row is None else (_key(row), str(row[6]))

    def api_keys(self, tenant: str | None = None) -> list[ApiKey]:
        where, params = ("WHERE tenant = ?", (tenant,)) if tenant is not None else ("", ())
        with self._read(None) as conn:
            rows = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys {where} ORDER BY created_at, id", params
            ).fetchall()
        return [_key(r) for r in rows]

    def revoke_api_key(self, key_id: str, *, at: datetime) -> ApiKey | None:
        with self._write(None) as conn:
            conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (at.timestamp(), key_id),
            )
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
        return None if row is None else _key(row)

    def tenant_usage(self, tenant: str) -> TenantUsage:
        with self._read(None) as conn:
            row = conn.execute(
                "SELECT count(*), coalesce(sum(length(text)), 0) FROM items"
                " WHERE tenant = ? AND kind = 'event'",
                (tenant,),
            ).fetchone()
        return TenantUsage(events=int(row[0]), content_chars=int(row[1]))
