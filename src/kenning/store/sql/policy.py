"""Consent, tenant policy, legal holds, the purge log and stats, on every SQL backend.

A mixin of the stores (:class:`~kenning.store.sql.database.SqlDatabase`). A legal hold is
written inside a tenant's write and checked inside every erase, which no other write of the
tenant runs beside: a hold committed before an erase starts always stops it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kenning.errors import LegalHoldActive
from kenning.records import LegalHold, Scope, TenantPolicy, UserSettings
from kenning.store.records import StoreStats
from kenning.store.sql.database import SqlDatabase
from kenning.store.sql.dialect import Tx
from kenning.store.sql.query import require_user, scope_sql

__all__ = ["PolicyTables"]


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)


class PolicyTables(SqlDatabase):
    """What a tenant allows, what a user agreed to, and what may not be erased."""

    def tenant_policy(self, tenant: str) -> TenantPolicy:
        with self._read(Scope(tenant)) as tx:
            row = tx.execute("SELECT body FROM tenant_policy WHERE tenant = ?", (tenant,))
            found = row.fetchone()
        return (
            TenantPolicy() if found is None else TenantPolicy.from_json(self._d.read_json(found[0]))
        )

    def put_tenant_policy(self, tenant: str, policy: TenantPolicy) -> None:
        d = self._d
        with self._write(Scope(tenant)) as tx:
            tx.execute(
                "INSERT INTO tenant_policy (tenant, body, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (tenant) DO UPDATE"
                " SET body = excluded.body, updated_at = excluded.updated_at",
                (tenant, d.json(policy.to_json()), d.time(datetime.now(UTC))),
            )

    def user_settings(self, scope: Scope) -> UserSettings:
        user = require_user(scope, "user_settings")
        row = self._read_one(
            scope,
            "SELECT share_across_sessions, sensitive_facts FROM user_settings"
            " WHERE tenant = ? AND user_id = ?",
            (scope.tenant, user),
        )
        if row is None:
            return UserSettings()
        return UserSettings(share_across_sessions=_flag(row[0]), sensitive_facts=_flag(row[1]))

    def put_user_settings(self, scope: Scope, settings: UserSettings) -> None:
        require_user(scope, "put_user_settings")
        with self._write(scope) as tx:
            tx.execute(
                "INSERT INTO user_settings (tenant, user_id, share_across_sessions,"
                " sensitive_facts, updated_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (tenant, user_id) DO UPDATE"
                " SET share_across_sessions = excluded.share_across_sessions,"
                " sensitive_facts = excluded.sensitive_facts, updated_at = excluded.updated_at",
                (
                    scope.tenant, scope.user, settings.share_across_sessions,
                    settings.sensitive_facts, self._d.time(datetime.now(UTC)),
                ),
            )  # fmt: skip

    # -- legal holds -----------------------------------------------------------------------

    def holds(self, tenant: str) -> list[LegalHold]:
        rows = self._read_all(
            Scope(tenant),
            "SELECT user_id, session, reason, created_at FROM legal_holds WHERE tenant = ?"
            " ORDER BY created_at",
            (tenant,),
        )
        return [
            LegalHold(Scope(tenant, r[0] or None, r[1] or None), r[2], self._d.read_time(r[3]))
            for r in rows
        ]

    def put_hold(self, scope: Scope, reason: str) -> LegalHold:
        now = datetime.now(UTC)
        with self._write(scope) as tx:
            tx.execute(
                "INSERT INTO legal_holds (tenant, user_id, session, reason, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, session) DO UPDATE"
                " SET reason = excluded.reason, created_at = excluded.created_at",
                (scope.tenant, scope.user or "", scope.session or "", reason, self._d.time(now)),
            )
        return LegalHold(Scope(scope.tenant, scope.user, scope.session), reason, now)

    def release_hold(self, scope: Scope) -> bool:
        with self._write(scope) as tx:
            cur = tx.execute(
                "DELETE FROM legal_holds WHERE tenant = ? AND user_id = ? AND session = ?",
                (scope.tenant, scope.user or "", scope.session or ""),
            )
        return bool(cur.rowcount)

    def _before_erase(self, tx: Tx, scope: Scope) -> None:
        """Inside an erase's transaction: refuse if a hold covers any of *scope*."""
        super()._before_erase(tx, scope)
        rows = tx.execute(
            "SELECT user_id, session, reason FROM legal_holds WHERE tenant = ? ORDER BY created_at",
            (scope.tenant,),
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

    # -- what the purge removed, and what a scope holds ------------------------------------

    def purge_log(self, tenant: str) -> dict[str, int]:
        """Records the retention purge removed, by kind, over the tenant's life."""
        rows = self._read_all(
            Scope(tenant),
            "SELECT kind, sum(count) FROM purge_log WHERE tenant = ? GROUP BY kind",
            (tenant,),
        )
        return {r[0]: int(r[1]) for r in rows}

    def stats(self, scope: Scope, *, now: datetime) -> StoreStats:
        d = self._d
        owner = Scope(scope.tenant, scope.user)
        where, params = scope_sql(d, owner, "i")
        facts_where, facts_params = scope_sql(d, owner, "f")
        with self._read(scope) as tx:
            kinds = tx.execute(
                f"SELECT i.kind, count(*), avg({d.seconds_between('?', 'i.at')})"
                f" FROM items i WHERE {where} GROUP BY i.kind",
                [d.time(now), *params],
            ).fetchall()
            tags = tx.execute(
                f"SELECT t.value, count(*) FROM items i, {d.tag_rows('i.tags')}"
                f" WHERE {where} GROUP BY t.value"
                f" ORDER BY 2 DESC, {d.text_order('t.value')} LIMIT 10",
                params,
            ).fetchall()
            facts = tx.execute(
                f"SELECT f.status, count(*) FROM facts f WHERE {facts_where} GROUP BY f.status",
                facts_params,
            ).fetchall()
            sessions_where, sessions_params = scope_sql(d, owner, "s")
            unread = tx.execute(
                "SELECT coalesce(sum(s.last_seq - coalesce(p.done_seq, 0)), 0) FROM sessions s"
                " LEFT JOIN extraction_progress p ON p.tenant = s.tenant AND p.session = s.session"
                f" WHERE {sessions_where} AND s.last_seq > coalesce(p.done_seq, 0)",
                sessions_params,
            ).fetchone()
            owned = "tenant = ?" + ("" if owner.user is None else " AND user_id = ?")
            documents = tx.execute(
                f"SELECT count(*) FROM documents WHERE {owned}",
                [owner.tenant] + ([] if owner.user is None else [owner.user]),
            ).fetchone()
        return StoreStats(
            records={r[0]: int(r[1]) for r in kinds},
            mean_age_days={r[0]: round(float(r[2]) / 86_400, 2) for r in kinds},
            top_tags=tuple((r[0], int(r[1])) for r in tags),
            facts={r[0]: int(r[1]) for r in facts},
            purged=self.purge_log(scope.tenant),
            unread_events=int(unread[0]),
            documents=int(documents[0]),
        )
