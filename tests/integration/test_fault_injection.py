"""Faults injected into real server processes: the database stops, the disk fills.

PostgreSQL: a private cluster (its own data directory and port, so the shared test cluster
other tests use keeps running) is stopped and started again under ``kenning bench load``. The
server answers 503 with ``Retry-After`` at once while it is down, serves again by itself once
it is back, and every event it acknowledged is stored exactly once.

SQLite: the server runs under a file-size limit (``RLIMIT_FSIZE``, the same as a full disk to
the process) a few MiB above the database. Appends answer 507 ``storage_full`` once nothing
fits, reads keep answering, and the file passes ``integrity_check`` with exactly the
acknowledged events in it.
"""

from __future__ import annotations

import json
import os
import pwd
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import httpx
import psycopg
import pytest

from kenning import Memory, Scope
from kenning.server.auth import create_key

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _kenning(*args: str) -> list[str]:
    return [sys.executable, "-m", "kenning.cli.main", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="1")
    env.pop("KENNING_ADMIN_TOKEN", None)
    return env


def _new_key(*where: str, tenant: str) -> str:
    made = subprocess.run(_kenning("keys", "create", *where, "--tenant", tenant),
                          capture_output=True, text=True, check=True, env=_env())  # fmt: skip
    return str(json.loads(made.stdout)["key"])


class PrivateCluster:
    """A PostgreSQL 15 cluster of this test alone: initdb'd in a temporary directory, on its
    own port, with pgvector enabled and kenning's role as in ``scripts/postgres-ci.sh``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.port = _free_port()
        # PostgreSQL refuses to run as root: as root, every command runs as postgres.
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
            owner = pwd.getpwnam("postgres")
            os.chown(root, owner.pw_uid, owner.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")
        self.start()
        self._psql("postgres", "CREATE ROLE kenning LOGIN CREATEROLE PASSWORD 'kenning'")
        self._psql("postgres", "CREATE DATABASE kenning OWNER kenning")
        self._psql("kenning", "CREATE EXTENSION vector")  # pgvector is not a trusted extension
        self.url = f"postgresql://kenning:kenning@127.0.0.1:{self.port}/kenning"
        self.superuser_url = f"postgresql://postgres@127.0.0.1:{self.port}/kenning"

    def _run(self, program: str, *args: str) -> None:
        subprocess.run([*self._as, str(PG_BIN / program), *args],
                       check=True, capture_output=True, cwd="/")  # fmt: skip

    def _psql(self, database: str, statement: str) -> None:
        self._run("psql", "-h", str(self.root), "-p", str(self.port), "-U", "postgres",
                  "-d", database, "-v", "ON_ERROR_STOP=1", "-qc", statement)  # fmt: skip

    def start(self) -> None:
        """Start the cluster and wait until it accepts connections."""
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w",
                  "-o", options, "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """Stop the cluster (``fast``: open sessions are ended, as an administrator would)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")


@pytest.fixture
def private_postgres() -> Iterator[PrivateCluster]:
    # Not pytest's tmp_path: the postgres user must reach it, and its parents are root's.
    root = Path(tempfile.mkdtemp(prefix="kenning-pg-"))
    cluster = None
    try:
        cluster = PrivateCluster(root)
        yield cluster
    finally:
        if cluster is not None:
            with suppress(subprocess.CalledProcessError):  # already stopped
                cluster.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


def _probe(url: str, key: str) -> tuple[int, str | None, float, str]:
    """(status, Retry-After, seconds, error code) of one read through the server."""
    start = time.monotonic()
    r = httpx.get(f"{url}/v1/sessions/probe/events", params={"user": "u"},
                  headers={"Authorization": f"Bearer {key}"}, timeout=30)  # fmt: skip
    code = r.json().get("error", {}).get("code", "") if r.status_code != 200 else ""
    return r.status_code, r.headers.get("retry-after"), time.monotonic() - start, code


def _load_events(superuser_url: str) -> int:
    """Events the load generator's sessions stored so far (not the warm-up's)."""
    with psycopg.connect(superuser_url, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT count(*) FROM items WHERE kind = 'event' AND tenant IN ('t0', 't1')"
            " AND session <> 'warm'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_postgresql_stopped_and_restarted_under_load(
    private_postgres: PrivateCluster, tmp_path: Path
) -> None:
    pg = private_postgres
    with Memory.open(pg.url, embedder=None) as memory:  # migrates the database
        memory.add_events(Scope("probe", "u", "probe"), [{"role": "user", "content": "here"}])
        _, probe_key = create_key(memory.store, "probe", ["read"])
    port, out = _free_port(), tmp_path / "load"
    url = f"http://127.0.0.1:{port}"
    log = (tmp_path / "bench.log").open("w")
    bench = subprocess.Popen(
        _kenning("bench", "load", "--store", pg.url, "--no-model", "--workers", "1",
                 "--sessions", "40", "--tenants", "2", "--rps", "10", "--duration", "24",
                 "--port", str(port), "--out", str(out)),
        stdout=log, stderr=subprocess.STDOUT, env=_env(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while _load_events(pg.superuser_url) == 0:  # the generator's sessions are running
            assert bench.poll() is None, (tmp_path / "bench.log").read_text()
            assert time.monotonic() < deadline, "the load never started"
            time.sleep(0.25)
        time.sleep(4)
        stopped_at = time.time()
        pg.stop()
        down = []
        while time.time() - stopped_at < 5:
            down.append(_probe(url, probe_key))
            time.sleep(0.3)
        pg.start()
        started_at, started = time.time(), time.monotonic()
        while (probe := _probe(url, probe_key))[0] != 200:
            assert time.monotonic() - started < 10, f"no recovery: {probe}"
            time.sleep(0.1)
        recovery_s = time.monotonic() - started
        assert bench.wait(120) == 0, (tmp_path / "bench.log").read_text()
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
        log.close()

    # While the database was down, every request was told to retry, at once.
    assert len(down) >= 3
    assert all(status == 503 and retry and code == "store_unavailable"
               for status, retry, _, code in down), down  # fmt: skip
    assert max(seconds for _, _, seconds, _ in down) < 3.0, down  # the pool waits 30 s
    assert recovery_s < 5.0  # by itself: the same server process, no restart
    run = json.loads((out / "report.json").read_text())["runs"][0]
    # The load saw the outage, and nothing but 503s with Retry-After.
    assert run["errors"] > 0
    assert all(kind.endswith(":503") for kind in run["error_kinds"]), run["error_kinds"]
    acks = {int(second): n for second, n in run["acked_per_s"].items()}
    assert sum(n for s, n in acks.items() if stopped_at + 1 < s < started_at - 1) == 0, acks
    assert sum(n for s, n in acks.items() if s > started_at + recovery_s + 1) > 0, acks
    # Every acknowledged event is in the database once.
    assert run["acknowledged"] == sum(acks.values()) > 0
    assert run["lost"] == 0 and run["duplicated"] == 0
    assert _load_events(pg.superuser_url) >= run["acknowledged"]


def _ignores_sigxfsz(pid: int) -> bool:
    """Whether process *pid* ignores SIGXFSZ (a write past RLIMIT_FSIZE then fails with EFBIG
    instead of killing it)."""
    status = Path(f"/proc/{pid}/status").read_text()
    ignored = int(next(line for line in status.splitlines() if line.startswith("SigIgn:"))[7:], 16)
    return bool(ignored & (1 << (signal.SIGXFSZ - 1)))


def test_sqlite_on_a_full_disk_answers_507_and_stays_whole(tmp_path: Path) -> None:
    path = tmp_path / "full.db"
    key = _new_key("--db", str(path), tenant="acme")
    limit = path.stat().st_size + 3 * 2**20

    def limited() -> None:  # in the server process, before it starts
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        _kenning("serve", "--db", str(path), "--port", str(port), "--no-model"),
        stdout=log, stderr=subprocess.STDOUT, env=_env(), preexec_fn=limited,
    )  # fmt: skip
    auth = {"Authorization": f"Bearer {key}"}
    acked, answers = 0, []
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if httpx.get(f"{url}/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        assert _ignores_sigxfsz(server.pid)
        for batch in range(200):
            events = [
                {"role": "user", "id": f"e{batch}-{n}",
                 "content": f"Batch {batch} note {n}: order A-{batch * 100 + n} "
                            + " ".join(f"w{batch}x{n}y{k}" for k in range(300))}
                for n in range(10)
            ]  # fmt: skip
            r = httpx.post(f"{url}/v1/sessions/s1/events", headers=auth, timeout=60,
                           json={"user": "dana", "events": events})  # fmt: skip
            answers.append(r.status_code)
            if r.status_code != 200:
                break
            acked += len(events)
        assert answers[-1] == 507, f"the disk never filled: {answers}, {r.text[:300]}"
        assert r.json()["error"]["code"] == "storage_full"
        # Full, not broken: the same batch again is refused the same way, reads still answer.
        again = httpx.post(f"{url}/v1/sessions/s1/events", headers=auth, timeout=60,
                           json={"user": "dana", "events": events})  # fmt: skip
        assert again.status_code == 507, again.text[:300]
        read = httpx.get(f"{url}/v1/sessions/s1/events", params={"user": "dana"},
                         headers=auth, timeout=60)  # fmt: skip
        assert read.status_code == 200
        assert len(read.json()["events"]) == acked
        assert server.poll() is None  # not killed by SIGXFSZ
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
    assert acked > 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        stored = conn.execute(
            "SELECT count(*) FROM items WHERE kind = 'event' AND tenant = 'acme'"
        ).fetchone()[0]
    assert stored == acked
