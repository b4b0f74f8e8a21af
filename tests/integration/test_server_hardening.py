"""Who may do what, decided before anything else: no key is a 401 before the body is parsed,
a read key on a write route a 403 whatever its body, failed admin attempts are limited, the
admin token is strong and never in the workers' settings, and a read key's window writes
nothing. A real server on loopback over SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kenning import InvalidInput, Memory, Scope
from kenning.server import ServerSettings
from tests.served import ADMIN, Served, serve

DANA = Scope("acme", "dana", "s1")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with Memory.open(tmp_path / "hardening.db", embedder=None) as memory, serve(memory) as s:
        yield s


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_no_key_is_a_401_before_the_body_is_parsed(served: Served) -> None:
    url = f"{served.url}/v1/sessions/s1/events"
    for body in ({"user": "dana", "events": "not a list"}, {"nothing": 1}):
        r = httpx.post(url, json=body)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", r.text
        assert "events" not in r.text  # no schema is described to a caller without a key
    r = httpx.post(url, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 401
    r = httpx.post(url, json={"nothing": 1}, headers=_auth("kn_unknown_secret"))
    assert r.status_code == 401
    # The answer leaves before the body has arrived: 10 bytes of a promised 100,000.
    port = int(served.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"POST /v1/sessions/s1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                     b'{"user": "')  # fmt: skip
        start = time.monotonic()
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 401 ") and time.monotonic() - start < 4
        assert b"connection: close" in data.lower()


def test_a_read_key_gets_403_not_422_on_a_write_route(served: Served) -> None:
    reader = _auth(served.key("acme", ("read",)))
    writes = [
        ("POST", "/v1/sessions/s1/events"), ("POST", "/v1/sessions/s1/pins"),
        ("POST", "/v1/sessions/s1/compact"), ("POST", "/v1/forget"),
        ("PUT", "/v1/users/dana/consent"), ("POST", "/v1/tools/set_pin"),
    ]  # fmt: skip
    for method, path in writes:
        for content in (b'{"unexpected": [1, 2]}', b"{not json"):
            r = httpx.request(method, f"{served.url}{path}", content=content,
                              headers=reader | {"content-type": "application/json"})  # fmt: skip
            assert r.status_code == 403, (method, path, r.status_code, r.text)
            assert r.json()["error"]["code"] == "forbidden"
    # Reading routes sent by POST take the read scope, so the body is checked (422).
    for path in ("/v1/search", "/v1/sessions/s1/assemble", "/v1/tools/search_memory"):
        r = httpx.post(f"{served.url}{path}", json={"unexpected": 1}, headers=reader)
        assert r.status_code == 422, (path, r.text)


def test_failed_admin_attempts_are_rate_limited(served: Served) -> None:
    tenant_key = served.key("acme")
    url = f"{served.url}/v1/admin/keys"
    for n in range(10):
        r = httpx.get(url, headers=_auth(f"wrong-guess-{n:02d}-of-the-admin-token-xxxxxx"))
        assert r.status_code == 401, n
    r = httpx.get(url, headers=_auth("wrong-guess-10-of-the-admin-token-xxxxxx"))
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(r.headers["retry-after"]) <= 60
    # While the address is refused, the right token is refused too: guessing gains nothing.
    assert httpx.get(url, headers=_auth(ADMIN)).status_code == 429
    # Tenants' keys are not admin attempts: they go on.
    assert httpx.get(f"{served.url}/v1/me", headers=_auth(tenant_key)).status_code == 200


def test_a_weak_admin_token_is_refused() -> None:
    for weak in ("", " " * 40, "\t\n" * 20, "x" * 31, "test-admin-token"):
        with pytest.raises(InvalidInput) as err:
            ServerSettings(admin_token=weak)
        assert err.value.code == "weak_credential"
        assert weak.strip() == "" or weak not in err.value.message
    assert ServerSettings(admin_token="x" * 32).admin_token == "x" * 32
    assert ServerSettings(admin_token=None).admin_token is None


def test_settings_for_workers_never_carry_the_admin_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from kenning.server.app import ENV_SETTINGS, app_from_environment

    settings = ServerSettings(db=str(tmp_path / "w.db"), admin_token=ADMIN, embedder="none",
                              json_logs=False)  # fmt: skip
    assert ADMIN not in settings.to_json()
    assert ServerSettings.from_json(settings.to_json()).admin_token is None
    # A worker reads the token from the private file its settings name.
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN)
    os.chmod(token_file, 0o600)
    text = dataclasses.replace(settings, admin_token_file=str(token_file)).to_json()
    assert ADMIN not in text and json.loads(text)["admin_token_file"] == str(token_file)
    monkeypatch.setenv(ENV_SETTINGS, text)
    with TestClient(app_from_environment()) as client:
        r = client.post("/v1/admin/keys", json={"tenant": "acme"}, headers=_auth(ADMIN))
        assert r.status_code == 200, r.text


def _held(memory: Memory, scope: Scope) -> dict[str, int]:
    """What a window could write: summaries, audit rows, jobs, pins, usage, events."""
    context = memory.context
    return {
        "summaries": len(context.summaries(scope)),
        "audit": len(context.compaction_log(scope)),
        "jobs": len(memory.store.compaction_jobs(scope)),
        "pins": len(context.pins(scope, history=True)),
        "usage": sum(u.calls for u in context.usage(scope)),
        "events": len(memory.get_session(scope)),
    }


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_read_keys_window_writes_nothing(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    where = tmp_path / "window.db" if backend == "sqlite" else request.getfixturevalue("pg_url")
    with Memory.open(where, embedder=None) as memory, serve(memory) as served:
        memory.add_events(DANA, [
            {"role": "user" if n % 2 else "assistant",
             "content": f"Turn {n}: we talked about the weather, the garden and the roses."}
            for n in range(60)
        ])  # fmt: skip
        before = _held(memory, DANA)
        body = {"user": "dana", "budget_tokens": 600, "model": "gpt-4o", "system": "s"}
        url = f"{served.url}/v1/sessions/s1/assemble"
        reader = _auth(served.key("acme", ("read",)))
        window = httpx.post(url, json=body, headers=reader)
        assert window.status_code == 200, window.text
        shown = window.json()
        assert shown["tokens"] <= 600 and shown["tiers"]["tail"]["tokens"] > 0
        assert any("not stored" in reason for reason in shown["reasons"]), shown["reasons"]
        assert shown["tiers"]["summaries"]["tokens"] > 0  # summarized for this window only
        assert httpx.post(url, json=body, headers=reader).json()["tokens"] == shown["tokens"]
        memory.context.wait_for_compaction(10)
        assert _held(memory, DANA) == before
        # The same window with the write scope compacts, as it always did.
        writer = _auth(served.key("acme", ("read", "write")))
        assert httpx.post(url, json=body, headers=writer).status_code == 200
        assert _held(memory, DANA)["summaries"] > before["summaries"]
