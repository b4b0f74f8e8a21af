"""API keys of the SQLite store looked up across tenants: one file, read directly.

The shared part (:mod:`kenning.store.sql.keys`) writes keys and counts a tenant's volume;
generating and checking secrets is the server's job (:mod:`kenning.server.auth`).
"""

from __future__ import annotations

from datetime import datetime

from kenning.records import ApiKey
from kenning.store.sql import keys
from kenning.store.sql.keys import KEY_COLUMNS

__all__ = ["KeyTables"]


class KeyTables(keys.KeyTables):
    """Keys by id, every tenant's keys, and revocation by id."""

    def api_key(self, key_id: str) -> tuple[ApiKey, str] | None:
        with self._read(None) as tx:
            row = tx.execute(f"SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
            found = row.fetchone()
        return None if found is None else (self._key(found), str(found[6]))

    def api_keys(self, tenant: str | None = None) -> list[ApiKey]:
        where, params = ("WHERE tenant = ?", (tenant,)) if tenant is not None else ("", ())
        with self._read(None) as tx:
            rows = tx.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys {where} ORDER BY created_at, id", params
            ).fetchall()
        return [self._key(r) for r in rows]

    def revoke_api_key(self, key_id: str, *, at: datetime) -> ApiKey | None:
        with self._write(None) as tx:
            row = tx.execute(
                "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?"
                f" RETURNING {KEY_COLUMNS}",
                (self._d.time(at), key_id),
            ).fetchone()
        return None if row is None else self._key(row)
