"""Hard retention and legal holds: ``memory.retention``.

Retention is separate from decay: decay changes ranking, retention removes. A tenant's policy
sets how long events and facts are kept; the purge removes expired records from every index
(rows, lexical and vector indexes, caches, and the pins and summaries derived from them). A
legal hold on a tenant, a user or a session blocks both the purge and ``forget`` of what it
covers, and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from kenning.errors import InvalidInput
from kenning.longterm.api import RetentionAPI
from kenning.records import LegalHold, Scope, StoreStats, TenantPolicy, check_text
from kenning.store.protocol import PolicyStore

__all__ = ["Retention"]


class Retention(RetentionAPI):
    """Policies, holds and the purge over one store."""

    def __init__(self, store: PolicyStore, *, clock: Callable[[], datetime] | None = None) -> None:
        self._store = store
        self._now = clock or (lambda: datetime.now(UTC))

    def policy(self, tenant: str) -> TenantPolicy:
        return self._store.tenant_policy(Scope(tenant).tenant)

    def set_policy(self, tenant: str, policy: TenantPolicy) -> None:
        if not isinstance(policy, TenantPolicy):
            raise InvalidInput("policy must be a kenning.TenantPolicy")
        self._store.put_tenant_policy(Scope(tenant).tenant, policy)

    def hold(self, scope: Scope, *, reason: str) -> LegalHold:
        if not isinstance(reason, str) or not reason.strip() or len(reason) > 500:
            raise InvalidInput("a legal hold needs a reason (1-500 characters)")
        return self._store.put_hold(_scope(scope), check_text(reason, "reason").strip())

    def release(self, scope: Scope) -> bool:
        return self._store.release_hold(_scope(scope))

    def holds(self, tenant: str) -> list[LegalHold]:
        return self._store.holds(Scope(tenant).tenant)

    def purge(self, tenant: str, *, now: datetime | None = None) -> int:
        when = now or self._now()
        policy = self.policy(tenant)
        days = policy.episode_days
        cutoff = None if days is None else _days_before(when, days)
        removed = self._store.purge(Scope(tenant).tenant, now=when, episodes_before=cutoff)
        return removed

    def stats(self, scope: Scope, *, now: datetime | None = None) -> StoreStats:
        return self._store.stats(Scope(_scope(scope).tenant, scope.user), now=now or self._now())


def _days_before(when: datetime, days: float) -> datetime:
    """*days* before *when*; the first instant of year 1 when that is earlier still (nothing
    is older, so a purge as of year 1 removes nothing by age)."""
    try:
        return when - timedelta(days=days)
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC)


def _scope(scope: Scope) -> Scope:
    if not isinstance(scope, Scope):
        raise InvalidInput("scope must be a kenning.Scope")
    return scope
