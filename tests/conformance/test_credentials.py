"""The Credentials conformance suite: the server's API keys (hashed) and tenants' usage.

Written once against the protocol, run over every backend (the ``store`` fixture)."""

from __future__ import annotations

from datetime import timedelta

from kenning.records import ApiKey, KeyScope, TenantUsage
from kenning.store.protocol import Credentials, Store
from tests.conformance.helpers import A1, B1, G1, T0, add


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
