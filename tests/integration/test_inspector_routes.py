"""The inspector's routes over HTTP on both backends: its page and files load without a key
and carry no data; the users and sessions listings take a read key, answer only the key's
tenant, and refuse bad input with kenning's JSON errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kenning import Memory, Scope
from tests.served import Served, serve


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    where = (
        str(tmp_path / "server.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    memory = Memory.open(where, embedder=None)
    try:
        with serve(memory) as s:
            yield s
    finally:
        memory.close()


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_the_page_loads_without_a_key_and_only_its_own_files(served: Served) -> None:
    page = httpx.get(f"{served.url}/ui/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    for name, kind in (("inspector.js", "text/javascript"), ("inspector.css", "text/css")):
        r = httpx.get(f"{served.url}/ui/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind), name
    assert httpx.get(f"{served.url}/ui").headers["location"] == "/ui/"
    for bad in ("secret.db", "..%2Fapp.py", "index.htm"):
        r = httpx.get(f"{served.url}/ui/{bad}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", bad
    # Only /ui itself is open: a path that merely starts the same way takes a key.
    assert httpx.get(f"{served.url}/uix").status_code == 401
    # Nothing the page loads names a record: the data comes from /v1 with a key.
    assert httpx.get(f"{served.url}/v1/users").status_code == 401


def test_users_and_sessions_list_only_the_keys_tenant(served: Served) -> None:
    acme, globex = served.key("acme", ("read",)), served.key("globex")
    memory = served.memory
    memory.add_events(Scope("acme", "ann", "s1"), [{"role": "user", "content": "hi",
                                                    "at": "2026-01-01T10:00:00Z"}])  # fmt: skip
    memory.add_events(Scope("acme", "ann", "s2"), [
        {"role": "user", "content": "again", "at": "2026-01-02T10:00:00Z"},
        {"role": "assistant", "content": "hello", "at": "2026-01-02T10:01:00Z"},
    ])  # fmt: skip
    memory.add_events(Scope("acme", "bob", "b1"), [{"role": "user", "content": "yo",
                                                    "at": "2026-01-03T10:00:00Z"}])  # fmt: skip
    memory.add_events(Scope("globex", "ann", "g1"), [{"role": "user", "content": "theirs"}])

    users = httpx.get(f"{served.url}/v1/users", headers=_auth(acme)).json()["users"]
    listed = [(u["user"], u["sessions"], u["events"]) for u in users]
    assert listed == [("bob", 1, 1), ("ann", 2, 3)]
    ann = users[1]
    assert ann["first_at"] == "2026-01-01T10:00:00+00:00"
    assert ann["last_at"] == "2026-01-02T10:01:00+00:00"
    found = httpx.get(f"{served.url}/v1/users", params={"contains": "AN"}, headers=_auth(acme))
    assert [u["user"] for u in found.json()["users"]] == ["ann"]
    sessions = httpx.get(f"{served.url}/v1/users/ann/sessions", headers=_auth(acme))
    listed = [(s["session"], s["events"]) for s in sessions.json()["sessions"]]
    assert listed == [("s1", 1), ("s2", 2)]

    theirs = httpx.get(f"{served.url}/v1/users", headers=_auth(globex)).json()["users"]
    assert [(u["user"], u["sessions"]) for u in theirs] == [("ann", 1)]
    other = httpx.get(f"{served.url}/v1/users/bob/sessions", headers=_auth(globex))
    assert other.status_code == 200 and other.json() == {"sessions": []}


def test_bad_listing_requests_get_json_errors(served: Served) -> None:
    key = served.key("acme")
    for params in ({"limit": 0}, {"limit": 100_000}, {"contains": ""}, {"contains": "x" * 200}):
        r = httpx.get(f"{served.url}/v1/users", params=params, headers=_auth(key))
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input", params
    r = httpx.get(f"{served.url}/v1/users/bad%20id/sessions", headers=_auth(key))
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input"
    r = httpx.get(f"{served.url}/v1/users", headers=_auth("kn_nope_nope"))
    assert r.status_code == 401
