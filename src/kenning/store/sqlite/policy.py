"""Consent, tenant policy, legal holds and the retention purge of the SQLite store."""

from __future__ import annotations

import json
import time
from datetime import datetime

from kenning.errors import LegalHoldActive
from kenning.records import LegalHold, Scope, TenantPolicy, UserSettings
from kenning.store.records import StoreStats
from kenning.store.sql.dialect import Tx
from kenning.store.sqlite.database import Database
from kenning.store.sqlite.sql import ts

__all__ = ["PolicyTables"]


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)


class PolicyTables(Database):
    """What a tenant allows, what a user agreed to, and what may not be erased."""

    def tenant_policy(self, tenant: str) -> TenantPolicy:
        with self._read(Scope(tenant)) as conn:
            row = conn.execute("SELECT body FROM tenant_policy WHERE tenant = ?", (tenant,))
            found = row.fetchone()
        return TenantPolicy() if found is None else TenantPolicy.from_json(json.loads(found[0]))

    def put_tenant_policy(self, tenant: str, policy: TenantPolicy) -> None:
        with self._write(Scope(tenant)) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO tenant_policy (tenant, body, updated_at) VALUES (?, ?, ?)",
                (tenant, json.dumps(policy.to_json()), time.time()),
            )

    def user_settings(self, scope: Scope) -> UserSettings:
        assert scope.user is not None
        with self._read(scope) as conn:
            row = conn.execute(
                "SELECT share_across_sessions, sensitive_facts FROM user_settings"
                " WHERE tenant = ? AND user_id = ?",
                (scope.tenant, scope.user),
            ).fetchone()
        if row is None:
            return UserSettings()
        return UserSettings(share_across_sessions=_flag(row[0]), sensitive_facts=_flag(row[1]))

    def put_user_settings(self, scope: Scope, settings: UserSettings) -> None:
        assert scope.user is not None
        with self._write(scope) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO user_settings (tenant, user_id, share_across_sessions,"
                " sensitive_facts, updated_at) VALUES (?, ?, ?, ?, ?)",
                (
                    scope.tenant, scope.user,
                    None if settings.share_across_sessions is None
                    else int(settings.share_across_sessions),
                    None if settings.sensitive_facts is None else int(settings.sensitive_facts),
                    time.time(),
                ),
            )  # fmt: skip

    def holds(self, tenant: str) -> list[LegalHold]:
        with self._read(Scope(tenant)) as conn:
            rows = conn.execute(
                "SELECT user_id, session, reason, created_at FROM legal_holds WHERE tenant = ?"
                " ORDER BY created_at",
                (tenant,),
            ).fetchall()
        return [LegalHold(Scope(tenant, r[0] or None, r[1] or None), r[2], ts(r[3])) for r in rows]

    def put_hold(self, scope: Scope, reason: str) -> LegalHold:
        now = time.time()
        with self._write(scope) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO legal_holds (tenant, user_id, session, reason, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (scope.tenant, scope.user or "", scope.session or "", reason, now),
            )
        return LegalHold(Scope(scope.tenant, scope.user, scope.session), reason, ts(now))

    def release_hold(self, scope: Scope) -> bool:
        with self._write(scope) as conn:
            cur = conn.execute(
                "DELETE FROM legal_holds WHERE tenant = ? AND user_id = ? AND session = ?",
                (scope.tenant, scope.user or "", scope.session or ""),
            )
        return bool(cur.rowcount)

    def _before_erase(self, conn: Tx, scope: Scope) -> None:
        """Inside an erase's transaction: refuse if a hold covers any of *scope*."""
        rows = conn.execute(
            "SELECT user_id, session, reason FROM legal_holds WHERE tenant = ?", (scope.tenant,)
        ).fetchall()
        for user, session, reason in rows:
            hold = LegalHold(Scope(scope.tenant, user or None, session or None), reason)
            if hold.covers(scope):
                what = (
                    ", ".join(f"{k} {v!r}" for k, v in (("user", user), ("session", session)) if v)
                    or f"tenant {scope.tenant!r}"
                )
                raise LegalHoldActive(
                    f"a legal hold on {what} ({reason}) blocks erasing or purging it; "
                    "release the hold first"
                )

    def purge_log(self, tenant: str) -> dict[str, int]:
        """Records the retention purge removed, by kind, over the tenant's life."""
        with self._read(Scope(tenant)) as conn:
            rows = conn.execute(
                "SELECT kind, sum(count) FROM purge_log WHERE tenant = ? GROUP BY kind", (tenant,)
            ).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def stats(self, scope: Scope, *, now: datetime) -> StoreStats:
        where = "tenant = ?" + (" AND user_id = ?" if scope.user is not None else "")
        params: list[object] = [scope.tenant]
        if scope.user is not None:
            params.append(scope.user)
        with self._read(scope) as conn:
            kinds = conn.execute(
                f"SELECT kind, count(*), avg(? - at) FROM items WHERE {where} GROUP BY kind",
                [now.timestamp(), *params],
            ).fetchall()
            tags = conn.execute(
                f"SELECT t.value, count(*) FROM items, json_each(items.tags) t WHERE {where}"
                " GROUP BY t.value ORDER BY 2 DESC, 1 LIMIT 10",
                params,
            ).fetchall()
            facts = conn.execute(
                f"SELECT status, count(*) FROM facts WHERE {where} GROUP BY status", params
            ).fetchall()
        return StoreStats(
            records={r[0]: int(r[1]) for r in kinds},
            mean_age_days={r[0]: round(float(r[2]) / 86_400, 2) for r in kinds},
            top_tags=tuple((r[0], int(r[1])) for r in tags),
            facts={r[0]: int(r[1]) for r in facts},
            purged=self.purge_log(scope.tenant),
        )
