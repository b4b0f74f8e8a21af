"""The REST server as a client meets it: keys, tenancy, limits, status codes, error bodies,
operations endpoints and logs. A real server on loopback over a real SQLite file."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kenning import (
    AsyncClient,
    Client,
    Forbidden,
    Memory,
    NotFound,
    QuotaExceeded,
    RateLimited,
    Scope,
    TaskUpdate,
    Unauthorized,
)
from kenning.server import ServerSettings
from kenning.server.logs import JsonFormatter
from tests.served import ADMIN, Served, serve

DANA = Scope("acme", "dana", "s1")
EVENT = {"role": "user", "content": "Order A-1042 arrived broken"}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    memory = Memory.open(tmp_path / "server.db", embedder=None)
    try:
        with serve(memory) as s:
            yield s
    finally:
        memory.close()


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_key_is_required_and_a_revoked_one_stops_working(served: Served) -> None:
    r = httpx.get(f"{served.url}/v1/me")
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
    assert httpx.get(f"{served.url}/v1/me", headers=_auth("kn_nope_secret")).status_code == 401
    key = served.key("acme")
    me = httpx.get(f"{served.url}/v1/me", headers=_auth(key)).json()
    assert me["tenant"] == "acme" and me["scopes"] == ["read", "write"]
    tampered = key[:-2] + ("AA" if not key.endswith("AA") else "BB")
    assert httpx.get(f"{served.url}/v1/me", headers=_auth(tampered)).status_code == 401
    r = httpx.delete(f"{served.url}/v1/admin/keys/{me['key_id']}", headers=_auth(ADMIN))
    assert r.status_code == 200 and r.json()["revoked_at"]
    with Client(served.url, api_key=key) as client, pytest.raises(Unauthorized):
        client.whoami()


def test_admin_routes_need_the_admin_credential_not_a_tenant_key(served: Served) -> None:
    key = served.key("acme")
    r = httpx.post(f"{served.url}/v1/admin/keys", json={"tenant": "evil"}, headers=_auth(key))
    assert r.status_code == 401
    listed = httpx.get(f"{served.url}/v1/admin/keys", headers=_auth(ADMIN)).json()["keys"]
    assert [k["tenant"] for k in listed] == ["acme"]
    assert all("key" not in k and "secret_hash" not in k for k in listed)


def test_the_tenant_comes_from_the_key_and_other_tenants_answer_404(served: Served) -> None:
    acme, globex = served.key("acme"), served.key("globex")
    body = {"user": "dana", "events": [EVENT]}
    assert httpx.post(f"{served.url}/v1/sessions/s1/events", json=body,
                      headers=_auth(acme)).status_code == 200  # fmt: skip
    # A tenant field in the body is not accepted at all: the key decides.
    r = httpx.post(f"{served.url}/v1/sessions/s1/events", json=body | {"tenant": "acme"},
                   headers=_auth(globex))  # fmt: skip
    assert r.status_code == 422
    for path in ("/v1/sessions/s1/events?user=dana", "/v1/sessions/nope/events?user=dana"):
        r = httpx.get(f"{served.url}{path}", headers=_auth(globex))
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    hits = httpx.post(f"{served.url}/v1/search", json={"query": "broken order"},
                      headers=_auth(globex)).json()["hits"]  # fmt: skip
    assert hits == []
    with Client(served.url, api_key=globex) as client, pytest.raises(NotFound):
        client.context.close_pin(Scope("globex", "dana", "s1"), "entity_id:A-1042")


def test_a_read_key_cannot_write(served: Served) -> None:
    key = served.key("acme", ("read",))
    with Client(served.url, api_key=key) as client:
        assert client.search(Scope("acme"), "anything").hits == ()
        with pytest.raises(Forbidden):
            client.add_events(DANA, [EVENT])
        with pytest.raises(Forbidden):
            client.call_tool(DANA, "set_pin", {"kind": "entity_id", "value": "A-1"})


def test_rate_limit_answers_429_with_retry_after(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "rate.db", embedder=None)
    settings = ServerSettings(admin_token=ADMIN, rate_per_s=0.5, burst=3)
    try:
        with serve(memory, settings) as served:
            key = served.key("acme")
            codes = [httpx.get(f"{served.url}/v1/me", headers=_auth(key)) for _ in range(5)]
            assert [r.status_code for r in codes[:3]] == [200, 200, 200]
            limited = codes[-1]
            assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
            assert limited.json()["error"]["code"] == "rate_limited"
            other = served.key("globex")  # another tenant has its own bucket
            assert httpx.get(f"{served.url}/v1/me", headers=_auth(other)).status_code == 200
            with Client(served.url, api_key=key) as client, pytest.raises(RateLimited) as err:
                client.search(Scope("acme"), "x")
            assert err.value.retry_after and err.value.retry_after >= 1
    finally:
        memory.close()


def test_storage_quota_answers_507_and_writes_nothing(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "quota.db", embedder=None)
    settings = ServerSettings(admin_token=ADMIN, max_events=3)
    try:
        with (
            serve(memory, settings) as served,
            Client(served.url, api_key=served.key("acme")) as client,
        ):
            client.add_events(DANA, [EVENT, EVENT | {"content": "two"}])
            with pytest.raises(QuotaExceeded):
                client.add_events(DANA, [EVENT | {"content": "three"}, EVENT | {"content": "4"}])
            assert len(client.get_session(DANA)) == 2
            client.add_events(DANA, [EVENT | {"content": "three"}])
            client.forget(Scope("acme", "dana"))
            client.add_events(DANA, [EVENT])  # erasing frees the quota
    finally:
        memory.close()


def test_body_size_validation_and_unknown_routes_get_json_errors(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "limits.db", embedder=None)
    settings = ServerSettings(admin_token=ADMIN, max_body_bytes=4096)
    try:
        with serve(memory, settings) as served:
            auth = _auth(served.key("acme"))
            big = {"user": "dana", "events": [{"role": "user", "content": "x" * 5000}]}
            r = httpx.post(f"{served.url}/v1/sessions/s1/events", json=big, headers=auth)
            assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"

            def chunks() -> Iterator[bytes]:  # no Content-Length: counted while read
                yield json.dumps(big).encode()

            r = httpx.post(f"{served.url}/v1/sessions/s1/events", content=chunks(),
                           headers=auth | {"content-type": "application/json"})  # fmt: skip
            assert r.status_code == 413
            bad = {"user": "dana", "events": [{"role": "robot", "content": 3}]}
            r = httpx.post(f"{served.url}/v1/sessions/s1/events", headers=auth, json=bad)
            err = r.json()["error"]
            assert r.status_code == 422 and err["code"] == "invalid_input"
            assert "events.0.role" in err["message"] and "events.0.content" in err["message"]
            r = httpx.post(f"{served.url}/v1/sessions/s1/events", headers=auth, content=b"{nope")
            assert r.status_code == 422
            r = httpx.get(f"{served.url}/v1/nowhere", headers=auth)
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
            r = httpx.delete(f"{served.url}/v1/search", headers=auth)
            assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
    finally:
        memory.close()


def test_an_unexpected_failure_is_a_500_without_a_trace(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internal detail in /srv/kenning/db.py")

    monkeypatch.setattr(served.memory, "search", broken)
    r = httpx.post(f"{served.url}/v1/search", json={"query": "x"},
                   headers=_auth(served.key("acme")) | {"X-Request-Id": "req-42"})  # fmt: skip
    assert r.status_code == 500
    assert r.headers["x-request-id"] == "req-42"
    error = r.json()["error"]
    assert error == {
        "code": "internal_error", "message": "internal error; quote request id req-42",
        "status": 500, "retry_after": None, "request_id": "req-42",
    }  # fmt: skip
    assert "Traceback" not in r.text and "secret" not in r.text


def test_health_readiness_and_metrics(served: Served) -> None:
    assert httpx.get(f"{served.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{served.url}/readyz").json()
    assert ready["ready"] is True
    assert ready["checks"]["queue"] == {"pending": 0, "running": 0, "lag_s": 0.0,
                                        "workers": 1, "busy": 0}  # fmt: skip
    assert ready["checks"]["store"]["ok"] and ready["checks"]["model"]["search"] == "lexical only"
    key = served.key("acme")
    with Client(served.url, api_key=key) as client:
        client.add_events(DANA, [EVENT])
        client.assemble(DANA, budget_tokens=500, model="gpt-4o", system="s")
    text = httpx.get(f"{served.url}/metrics").text
    for name in ("kenning_request_seconds_bucket", "kenning_pressure_events_total",
                 "kenning_compactions_total", "kenning_queue_depth",
                 "kenning_queue_lag_seconds", "kenning_embed_seconds"):  # fmt: skip
        assert name in text, name
    assert 'route="/v1/sessions/{session}/assemble"' in text


def _routed(caplog: pytest.LogCaptureFixture, route: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "route", None) == route]


def test_logs_are_json_with_the_request_id(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="kenning.server"):
        httpx.get(f"{served.url}/v1/me", headers=_auth(served.key("acme")) | {
            "X-Request-Id": "trace-7"})  # fmt: skip
        # The server logs a request once its response is sent, so the client can be first.
        deadline = time.monotonic() + 5
        while not _routed(caplog, "/v1/me") and time.monotonic() < deadline:
            time.sleep(0.01)
    records = _routed(caplog, "/v1/me")
    assert records
    line = json.loads(JsonFormatter().format(records[-1]))
    assert line["request_id"] == "trace-7" and line["status"] == 200
    assert line["tenant"] == "acme" and line["message"] == "request" and line["ms"] >= 0


def test_async_client_mirrors_the_client(served: Served) -> None:
    key = served.key("acme")

    async def run() -> None:
        async with AsyncClient(served.url, api_key=key) as client:
            written = await client.add_events(DANA, [EVENT | {"id": "e1"}])
            assert await client.add_events(DANA, [EVENT | {"id": "e1"}]) == []
            assert [e.id for e in await client.get_session(DANA)] == [written[0].id]
            hits = await client.search(Scope("acme", "dana"), "broken order")
            assert hits[0].content == EVENT["content"]
            pin = await client.context.set_pin(DANA, "entity_id", "A-1042")
            assert (await client.context.pins(DANA))[-1] == pin
            with pytest.raises(NotFound):
                await client.context.close_pin(DANA, "missing")
            found = TaskUpdate(findings=[{"text": "Order A-1042 is broken", "evidence": ["e1"]}])
            [finding] = (await client.context.update_task(DANA, found)).findings
            fact = await client.context.promote_finding(DANA, finding.id, attribute="order state")
            assert (fact.value, fact.source_event_id) == (finding.text, "e1")
            with pytest.raises(NotFound):
                await client.context.promote_finding(DANA, "f_0", attribute="x")

    asyncio.run(run())


def test_an_empty_forget_erases_nothing_and_a_tenant_erase_says_so(served: Served) -> None:
    key = served.key("acme")
    auth = _auth(key)
    body = {"user": "dana", "events": [EVENT]}
    assert httpx.post(f"{served.url}/v1/sessions/s1/events", json=body,
                      headers=auth).status_code == 200  # fmt: skip
    for refused in ({}, {"ids": None}, {"tenant": True, "user": "dana"}):
        r = httpx.post(f"{served.url}/v1/forget", json=refused, headers=auth)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input", refused
    with Client(served.url, api_key=key) as client:
        assert len(client.get_session(DANA)) == 1  # nothing was erased
        assert client.forget(Scope("acme")) == 1  # the client says "tenant": true itself
        assert client.get_session(DANA) == []


def test_a_json_body_is_read_whatever_type_curl_gave_it(served: Served) -> None:
    """curl's -d sends a form content type: the body is still read as JSON. A type that is
    neither (XML, multipart) gets a 415 naming the one to send."""
    key = served.key("acme")
    body = json.dumps({"user": "dana", "events": [EVENT]})
    curl = subprocess.run(
        ["curl", "-s", f"{served.url}/v1/sessions/s1/events", "-H",
         f"Authorization: Bearer {key}", "-d", body],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert json.loads(curl.stdout)["events"][0]["content"] == EVENT["content"]
    r = httpx.post(f"{served.url}/v1/sessions/s1/events", content=body,
                   headers={**_auth(key), "Content-Type": "application/xml"})  # fmt: skip
    assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"
    assert "Content-Type: application/json" in r.json()["error"]["message"]
    with Client(served.url, api_key=key) as client:
        assert len(client.get_session(DANA)) == 1  # the refused body stored nothing


def test_a_tool_event_may_give_its_result_alone_and_a_bad_event_is_named(served: Served) -> None:
    key = served.key("acme")
    result = {"order": "A-1042", "status": "refunded", "amount": "182.40 EUR"}
    with Client(served.url, api_key=key) as client:
        written = client.add_events(DANA, [
            {"role": "user", "content": "Where is my refund for A-1042?"},
            {"role": "tool", "tool_name": "lookup_order", "tool_result": result},
        ])  # fmt: skip
        assert written[1].content.startswith("lookup_order returned: ")
        assert written[1].tool_result == result
        hits = client.search(DANA, "refunded order status", k=1).hits
        assert hits[0].id == written[1].id
        bad = [{"role": "user", "content": "fine"}, {"role": "user", "content": "ok"},
               {"role": "user", "content": "   "}]  # fmt: skip
        r = httpx.post(f"{served.url}/v1/sessions/s1/events", headers=_auth(key),
                       json={"user": "dana", "events": bad})  # fmt: skip
        assert r.status_code == 422 and r.json()["error"]["message"].startswith("event 2: ")
        assert len(client.get_session(DANA)) == 2  # the batch wrote nothing


def test_an_investigation_travels_through_the_client(served: Served) -> None:
    from kenning import InvalidInput, TaskUpdate

    with Client(served.url, api_key=served.key("acme")) as client:
        client.add_events(DANA, [EVENT])
        state = client.context.update_task(DANA, TaskUpdate(
            hypotheses=[{"text": "courier lost it", "status": "rejected",
                         "reason": "tracking shows delivered"}, "box crushed in transit"],
            findings=[{"text": "photo shows a crushed box", "evidence": ["ev_1"]}],
        ))  # fmt: skip
        assert [h.status.value for h in state.hypotheses] == ["rejected", "open"]
        assert state.findings[0].evidence == ("ev_1",)
        with pytest.raises(InvalidInput, match="was rejected"):
            client.context.update_task(DANA, TaskUpdate(hypotheses=["Courier lost it"]))
        assert client.context.task_state(DANA) == state
