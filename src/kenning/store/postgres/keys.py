"""API keys of the PostgreSQL store looked up across tenants.

Looking a key up by id (authentication, before the tenant is known), listing every tenant's
keys and revoking by id go through ``SECURITY DEFINER`` functions that return key fields only
(migration ``0005_api_keys``): row-level security lets nothing else through. The shared part
(:mod:`kenning.store.sql.keys`) writes keys per tenant and counts a tenant's volume.
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
            row = tx.execute(f"SELECT {KEY_COLUMNS} FROM kenning_api_key(?)", (key_id,))
            found = row.fetchone()
        return None if found is None else (self._key(found), str(found[6]))

    def api_keys(self, tenant: str | None = None) -> list[ApiKey]:
        with self._read(None) as tx:
            rows = tx.execute(f"SELECT {KEY_COLUMNS} FROM kenning_api_keys(?)", (tenant,))
            return [self._key(r) for r in rows]

    def revoke_api_key(self, key_id: str, *, at: datetime) -> ApiKey | None:
        with self._write(None) as tx:
            row = tx.execute(
                f"SELECT {KEY_COLUMNS} FROM kenning_revoke_api_key(?, ?)", (key_id, at)
            ).fetchone()
        return None if row is None else self._key(row)
