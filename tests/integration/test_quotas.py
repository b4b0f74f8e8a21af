"""Storage quotas hold under concurrency: the store checks a batch against the tenant's counter
row in the transaction that writes it, so neither two worker processes of ``kenning serve``
nor two processes appending to one SQLite file or one PostgreSQL database pass the quota
together. An older database gets its counter from its rows when it migrates."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from kenning.records import NewEvent, Scope, TenantUsage
from kenning.store.postgres.store import PostgresStore
from kenning.store.records import EventWrite
from kenning.store.sqlite.store import SQLiteStore
from tests.processes import kenning, serving

QUOTA = 50


def _where(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The database both sides use: a SQLite file or an emptied PostgreSQL database."""
    if backend == "sqlite":
        return str(tmp_path / "quota.db")
    return str(request.getfixturevalue("pg_url"))


def _stored(where: str, tenant: str) -> tuple[int, TenantUsage]:
    """The tenant's event rows, and its counter row, read straight from the database."""
    rows = "SELECT count(*) FROM items WHERE tenant = {0} AND kind = 'event'"
    counter = "SELECT events, content_chars FROM tenant_usage WHERE tenant = {0}"
    if where.startswith("postgresql://"):
        with psycopg.connect(where) as conn:
            n = conn.execute(rows.format("%s"), (tenant,)).fetchone()
            usage = conn.execute(counter.format("%s"), (tenant,)).fetchone()
    else:
        with sqlite3.connect(where) as conn:
            n = conn.execute(rows.format("?"), (tenant,)).fetchone()
            usage = conn.execute(counter.format("?"), (tenant,)).fetchone()
    assert n is not None
    return int(n[0]), TenantUsage(0, 0) if usage is None else TenantUsage(*map(int, usage))


@contextmanager
def _served(where: str, tmp_path: Path, *options: str) -> Iterator[str]:
    """``kenning serve`` on *where* in processes of its own until the block ends; its URL."""
    flag = "--store" if where.startswith("postgresql://") else "--db"
    with serving(flag, where, "--no-model", *options, log=tmp_path / "server.log") as served:
        yield served.url


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_served_quota_holds_under_forty_concurrent_appends(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    where = _where(backend, tmp_path, request)
    flag = "--store" if backend == "postgresql" else "--db"
    made = subprocess.run(kenning("keys", "create", flag, where, "--tenant", "acme"),
                          capture_output=True, text=True, check=True)  # fmt: skip
    key = json.loads(made.stdout)["key"]

    start = threading.Barrier(40)

    def append(n: int, url: str) -> tuple[int, str]:
        events = [{"role": "user", "content": f"batch {n} event {i}"} for i in range(QUOTA)]
        with httpx.Client(base_url=url, timeout=60) as http:
            http.get("/healthz").raise_for_status()  # connected before the burst
            start.wait()
            r = http.post(f"/v1/sessions/s{n}/events",
                          json={"user": f"u{n}", "events": events},
                          headers={"Authorization": f"Bearer {key}"})  # fmt: skip
        return r.status_code, r.json()["error"]["code"] if r.status_code != 200 else "ok"

    with (
        _served(where, tmp_path, "--workers", "2", "--max-events", str(QUOTA)) as url,
        ThreadPoolExecutor(40) as pool,
    ):
        answers = Counter(pool.map(lambda n: append(n, url), range(40)))
    # One batch fills the quota exactly; every other one is refused whole.
    assert answers == {(200, "ok"): 1, (507, "quota_exceeded"): 39}, answers
    rows, usage = _stored(where, "acme")
    assert rows == usage.events == QUOTA


_WRITER = """
import json, sys, time
from pathlib import Path
from kenning import Memory, Quota, QuotaExceeded, Scope

where, name, ready, go = sys.argv[1:]
memory = Memory.open(where, embedder=None)
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.005)
accepted = refused = 0
for n in range(30):
    scope = Scope("acme", name, f"{name}-{n}")
    events = [{"role": "user", "content": f"{name} batch {n} event {i}"} for i in range(5)]
    try:
        memory.add_events(scope, events, quota=Quota(max_events=50))
        accepted += 1
    except QuotaExceeded:
        refused += 1
memory.close()
print(json.dumps({"accepted": accepted, "refused": refused}))
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_writer_processes_never_pass_the_quota(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    where = _where(backend, tmp_path, request)
    go = tmp_path / "go"
    readies = [tmp_path / f"ready-{name}" for name in ("one", "two")]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, where, name, str(ready), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, ready in zip(("one", "two"), readies, strict=True)
    ]
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in readies):
        if any(w.poll() is not None for w in writers):
            for w in writers:  # the others wait for "go": stop them, then show every output
                w.kill()
            pytest.fail(f"a writer died before it was ready: {[w.communicate() for w in writers]}")
        assert time.monotonic() < deadline, "the writers did not start"
        time.sleep(0.05)
    go.touch()  # both append at once from here
    results = []
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        results.append(json.loads(out))
    # 60 batches of 5 against a quota of 50 events: exactly 10 get in, from either process.
    assert sum(r["accepted"] for r in results) == 10, results
    assert sum(r["refused"] for r in results) == 50, results
    rows, usage = _stored(where, "acme")
    assert rows == usage.events == 50


def _old_events(store: SQLiteStore | PostgresStore) -> None:
    """Events of two tenants, some erased: what a database held before the counter."""
    for tenant, n in (("acme", 7), ("globex", 3)):
        scope = Scope(tenant, "ann", "s1")
        store.append_events(
            [EventWrite(scope, NewEvent("user", f"turn {i} " * (i + 1)).validated())
             for i in range(n)]
        )  # fmt: skip
    first = store.events(Scope("acme", "ann", "s1"))[0]
    store.forget(Scope("acme", "ann", "s1"), ids=[first.id])


def test_an_old_sqlite_file_migrates_with_its_counter_equal_to_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        _old_events(store)
    # The file as kenning left it at migration 0013: no counter yet.
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE tenant_usage")
        conn.execute("DELETE FROM migrations WHERE name = '0014_tenant_usage'")
    with SQLiteStore(path) as store:
        for tenant in ("acme", "globex"):
            events = store.events(Scope(tenant))
            assert store.tenant_usage(tenant) == TenantUsage(
                len(events), sum(len(e.content) for e in events)
            )
        assert store.tenant_usage("acme").events == 6
        assert store.tenant_usage("nobody") == TenantUsage(0, 0)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT 1 FROM migrations WHERE name = '0014_tenant_usage'").fetchone()


def test_an_old_postgres_database_migrates_with_its_counter_equal_to_its_rows(
    pg_url: str,
) -> None:
    with PostgresStore(pg_url) as store:
        _old_events(store)
    try:
        # The database as kenning left it at migration 0007: no counter yet.
        with psycopg.connect(pg_url) as conn:
            conn.execute("DROP TABLE tenant_usage")
            conn.execute("DELETE FROM kenning_migrations WHERE name = '0008_tenant_usage'")
    finally:
        with PostgresStore(pg_url) as store:  # migrates (again, should the test fail above)
            for tenant in ("acme", "globex"):
                events = store.events(Scope(tenant))
                assert store.tenant_usage(tenant) == TenantUsage(
                    len(events), sum(len(e.content) for e in events)
                )
            assert store.tenant_usage("acme").events == 6
    with psycopg.connect(pg_url) as conn:
        secured = conn.execute(
            "SELECT relrowsecurity FROM pg_class WHERE relname = 'tenant_usage'"
        ).fetchone()
        assert secured == (True,)
