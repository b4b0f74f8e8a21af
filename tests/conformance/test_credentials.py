"""The Credentials conformance suite: the server's API keys (hashed) and tenants' usage,
whose counter every append and erase keeps and against which a quota is checked.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kenning.errors import QuotaExceeded
from kenning.records import ApiKey, KeyScope, NewEvent, Quota, Scope, TenantUsage
from kenning.store.protocol import Credentials, PolicyStore, Store
from kenning.store.records import EventWrite
from tests.conformance.helpers import A1, A2, B1, G1, T0, add


def test_keys_round_trip_list_by_tenant_and_revoke(store: Store) -> None:
    assert isinstance(store, Credentials)
    key = ApiKey("k1", "acme", (KeyScope.READ, KeyScope.WRITE), T0, name="agent")
    store.put_api_key(key, secret_hash="h1")
    store.put_api_key(ApiKey("k2", "globex", (KeyScope.READ,), T0), secret_hash="h2")
    assert store.api_key("k1") == (key, "h1")
    assert store.api_key("nope") is None
    assert [k.id for k in store.api_keys("acme")] == ["k1"]
    assert [k.id for k in store.api_keys()] == ["k1", "k2"]
    revoked = store.revoke_api_key("k1", at=T0 + timedelta(seconds=1))
    assert revoked is not None and not revoked.active
    again = store.revoke_api_key("k1", at=T0 + timedelta(seconds=9))
    assert again is not None and again.revoked_at == revoked.revoked_at
    assert store.revoke_api_key("nope", at=T0) is None


def test_usage_counts_a_tenants_events_only(store: Store) -> None:
    assert isinstance(store, Credentials)
    assert store.tenant_usage("acme") == TenantUsage(events=0, content_chars=0)
    add(store, A1, "abc", "de")
    add(store, B1, "f")
    add(store, G1, "ghij")
    assert store.tenant_usage("acme") == TenantUsage(events=3, content_chars=6)
    assert store.tenant_usage("globex") == TenantUsage(events=1, content_chars=4)


def _counted(store: Store, tenant: str) -> TenantUsage:
    """What the tenant's events add up to, read from the events themselves; the store's
    counter says the same, and a quota of exactly that many events refuses one more."""
    assert isinstance(store, Credentials)
    events = store.events(Scope(tenant))
    counted = TenantUsage(len(events), sum(len(e.content) for e in events))
    assert store.tenant_usage(tenant) == counted
    one = [EventWrite(Scope(tenant, "quota", "probe"), NewEvent("user", "one").validated())]
    with pytest.raises(QuotaExceeded):
        store.append_events(one, quota=Quota(max_events=counted.events))
    return counted


def test_the_usage_counter_follows_every_append_and_erase(store: Store) -> None:
    assert isinstance(store, Credentials) and isinstance(store, PolicyStore)
    ids = add(store, A1, "abc", "de", "fgh")
    add(store, A2, "ijkl")
    add(store, B1, "mn", "o")
    add(store, G1, "globex")
    # A repeated idempotency key writes nothing and counts nothing.
    again = [EventWrite(A1, NewEvent("user", "twice", at=T0, idempotency_key="k").validated())]
    assert len(store.append_events(again)) == 1
    assert store.append_events(again) == []
    assert _counted(store, "acme") == TenantUsage(7, 20)
    store.forget(A1, ids=ids[:1])  # by id
    assert _counted(store, "acme") == TenantUsage(6, 17)
    store.forget(A2)  # a session
    assert _counted(store, "acme") == TenantUsage(5, 13)
    store.forget(Scope("acme", "bob"))  # a user
    assert _counted(store, "acme") == TenantUsage(3, 10)
    store.forget(A1, before=T0 + timedelta(seconds=1))  # by time
    assert _counted(store, "acme") == TenantUsage(0, 0)
    add(store, A1, "later")
    # The retention purge of events before a time: the events written before go.
    assert store.purge("acme", now=T0, episodes_before=T0 + timedelta(seconds=1)) == 1
    assert _counted(store, "acme") == TenantUsage(0, 0)
    assert _counted(store, "globex") == TenantUsage(1, 6)
    store.forget(Scope("globex"))  # a whole tenant
    assert _counted(store, "globex") == TenantUsage(0, 0)


def test_a_batch_past_the_quota_is_refused_whole(store: Store) -> None:
    assert isinstance(store, Credentials)
    quota = Quota(max_events=3, max_chars=12)
    writes = [EventWrite(A1, NewEvent("user", t, at=T0).validated()) for t in ("ab", "cd")]
    assert len(store.append_events(writes, quota=quota)) == 2
    # Two more events: one past the quota, so neither is written (nor its session).
    past = [EventWrite(A2, NewEvent("user", t, at=T0).validated()) for t in ("ef", "gh")]
    with pytest.raises(QuotaExceeded, match="stores 2 events; 2 more would pass"):
        store.append_events(past, quota=quota)
    assert store.events(A2) == [] and store.tenant_usage("acme") == TenantUsage(2, 4)
    too_long = [EventWrite(A2, NewEvent("user", "x" * 9, at=T0).validated())]
    with pytest.raises(QuotaExceeded, match="characters"):
        store.append_events(too_long, quota=quota)
    # Exactly up to the quota is allowed; other tenants have their own count.
    assert len(store.append_events(past[:1], quota=quota)) == 1
    assert store.tenant_usage("acme") == TenantUsage(3, 6)
    assert len(store.append_events([EventWrite(G1, NewEvent("user", "g").validated())],
                                   quota=quota)) == 1  # fmt: skip
