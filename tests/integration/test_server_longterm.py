"""Long-term memory over HTTP: a real server on loopback over a real SQLite file. Another
tenant's facts and playbooks answer 404; a legal hold comes back as ``LegalHoldActive`` (423)
and erases nothing; governance (policy, holds, purge) takes the admin credential; readiness
and metrics report fact extraction next to compaction."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from kenning import (
    Client,
    Forbidden,
    LegalHoldActive,
    Memory,
    NotFound,
    Scope,
    TenantPolicy,
    Unauthorized,
)
from tests.served import ADMIN, Served, serve

DANA = Scope("acme", "dana", "s1")
DANA_USER = Scope("acme", "dana")
TOOLS = [{"type": "function", "function": {"name": "refund", "parameters": {}}}]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with Memory.open(tmp_path / "lt.db", embedder=None) as memory, serve(memory) as s:
        yield s


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_another_tenants_facts_and_playbooks_answer_404(served: Served) -> None:
    acme, globex = served.key("acme"), served.key("globex")
    with Client(served.url, api_key=acme) as client:
        fact = client.facts.remember(DANA, "employer", "Netflix")
        procedure = client.procedures.record(DANA, "refund", ["look up", "refund"], tools=TOOLS)
    url = served.url
    for method, path in (
        ("GET", f"/v1/users/dana/facts/{fact.id}/history"),
        ("POST", f"/v1/users/dana/facts/{fact.id}/revoke"),
        ("GET", f"/v1/procedures/{procedure.id}"),
        ("POST", f"/v1/procedures/{procedure.id}/approve"),
        ("POST", f"/v1/procedures/{procedure.id}/retire"),
    ):
        r = httpx.request(method, url + path, headers=_auth(globex))
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", path
    with Client(url, api_key=globex) as other:
        assert other.facts.list(Scope("globex", "dana"), include_closed=True) == []
        assert other.facts.profile(Scope("globex", "dana")).biography == {}
        assert other.facts.export(Scope("globex", "dana"))["facts"] == []
        assert other.procedures.list("globex") == []
        assert other.retention.stats(Scope("globex")).records == {}
        with pytest.raises(NotFound):
            other.facts.revoke(Scope("globex", "dana"), fact.id)
    with Client(url, api_key=acme) as client:
        [still] = client.facts.list(DANA_USER)
        assert still.id == fact.id  # untouched by the other tenant's calls
        assert client.procedures.show("acme", procedure.id).status.value == "candidate"


def test_a_read_key_reads_and_cannot_write(served: Served) -> None:
    reader = served.key("acme", scopes=("read",))
    with Client(served.url, api_key=reader) as client:
        assert client.facts.list(DANA_USER) == []
        with pytest.raises(Forbidden):
            client.facts.remember(DANA, "employer", "Netflix")
        with pytest.raises(Forbidden):
            client.facts.set_consent(DANA_USER, share_across_sessions=True)
        r = httpx.delete(f"{served.url}/v1/users/dana", headers=_auth(reader))
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"


def test_a_legal_hold_refuses_erasure_as_its_own_class(served: Served) -> None:
    key = served.key("acme")
    with (
        Client(served.url, api_key=key) as client,
        Client(served.url, api_key=ADMIN) as admin,
    ):
        client.add_events(DANA, [{"role": "user", "content": "keep this please"}])
        client.facts.remember(DANA, "employer", "Netflix")
        hold = admin.retention.hold(DANA_USER, reason="litigation 42")
        assert hold.scope == DANA_USER and hold.reason == "litigation 42"
        assert client.retention.holds("acme") == [hold]
        with pytest.raises(LegalHoldActive, match="litigation 42"):
            client.forget(DANA_USER)
        r = httpx.delete(f"{served.url}/v1/users/dana", headers=_auth(key))
        assert r.status_code == 423 and r.json()["error"]["code"] == "legal_hold"
        assert len(client.get_session(DANA)) == 1 and len(client.facts.list(DANA_USER)) == 1
        assert admin.retention.release(DANA_USER) and not admin.retention.release(DANA_USER)
        r = httpx.delete(f"{served.url}/v1/users/dana", headers=_auth(key))
        assert r.status_code == 200 and r.json()["erased"] >= 2
        assert client.get_session(DANA) == [] and client.facts.list(DANA_USER) == []


def test_governance_takes_the_admin_credential(served: Served) -> None:
    key = served.key("acme")
    policy = TenantPolicy(share_across_sessions=True, episode_days=30)
    with Client(served.url, api_key=key) as client:
        with pytest.raises(Unauthorized):
            client.retention.set_policy("acme", policy)
        with pytest.raises(Unauthorized):
            client.retention.hold(DANA_USER, reason="mine")
        with pytest.raises(Unauthorized):
            client.retention.purge("acme")
        assert not client.facts.consent(DANA_USER).share_across_sessions
        old = (datetime.now(UTC) - timedelta(days=90)).isoformat()
        client.add_events(DANA, [{"role": "user", "content": "an old turn", "at": old},
                                 {"role": "user", "content": "a new turn"}])  # fmt: skip
        with Client(served.url, api_key=ADMIN) as admin:
            admin.retention.set_policy("acme", policy)
            assert client.retention.policy("acme") == policy
            # The tenant's new default reaches users who made no choice of their own.
            assert client.facts.consent(DANA_USER).share_across_sessions
            assert admin.retention.purge("acme") == 1
            ahead = {"now": (datetime.now(UTC) + timedelta(days=1)).isoformat()}
            r = httpx.post(f"{served.url}/v1/admin/tenants/acme/purge", headers=_auth(ADMIN),
                           json=ahead)  # fmt: skip
            assert r.status_code == 422 and "later than the server's clock" in r.text
        assert [e.content for e in client.get_session(DANA)] == ["a new turn"]
        assert client.retention.stats(DANA_USER).purged == {"event": 1}


def test_readiness_and_metrics_report_fact_extraction(served: Served) -> None:
    with Client(served.url, api_key=served.key("acme")) as client:
        client.add_events(DANA, [{"role": "user", "content": "I work at Netflix."}])
    assert served.memory.wait_for_facts(30)
    ready = httpx.get(f"{served.url}/readyz").json()
    assert ready["checks"]["extraction"] == {
        "enabled": True, "pending": 0, "running": 0, "lag_s": 0.0, "workers": 1, "busy": 0,
    }  # fmt: skip
    text = httpx.get(f"{served.url}/metrics").text
    assert 'kenning_extractions_total{outcome="completed"' in text
    for name in ("kenning_extraction_queue_depth", "kenning_extraction_lag_seconds",
                 "kenning_extraction_workers_busy"):  # fmt: skip
        assert name in text, name
