"""``kenning keys create`` and ``kenning serve --workers 2`` as a user runs them: two worker
processes on one SQLite file or one PostgreSQL database, compaction queued by one drained
across both, every job done once, another tenant's key sees nothing, JSON logs, a clean stop
on SIGINT."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from kenning import Client, Scope
from tests.processes import kenning, serving


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_worker_processes_share_the_queue_and_run_each_job_once(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    where = (
        ["--db", str(tmp_path / "served.db")]
        if backend == "sqlite"
        else ["--store", request.getfixturevalue("pg_url")]
    )
    made = subprocess.run(kenning("keys", "create", *where, "--tenant", "acme"),
                          capture_output=True, text=True, check=True)  # fmt: skip
    key = json.loads(made.stdout)["key"]
    assert "shown once" in made.stderr
    other = subprocess.run(kenning("keys", "create", *where, "--tenant", "globex"),
                           capture_output=True, text=True, check=True)  # fmt: skip
    globex_key = json.loads(other.stdout)["key"]
    with serving(
        *where,
        "--workers",
        "2",
        "--no-model",
        "--compaction-workers",
        "2",
        log=tmp_path / "server.log",
    ) as served:
        with httpx.Client() as http:
            # Nagle's algorithm stays off with several workers. With it on, every response
            # waits for the client's delayed ACK (40 ms at least on Linux), so even the fastest
            # of 21 requests is slow; a loaded machine slows some requests, never all of them.
            times = []
            for _ in range(21):
                start = time.perf_counter()
                http.get(f"{served.url}/healthz").raise_for_status()
                times.append(time.perf_counter() - start)
            assert min(times) < 0.030, sorted(times)
        scopes = [Scope("acme", f"u{i}", f"s{i}") for i in range(8)]
        with Client(served.url, api_key=key) as client:
            for scope in scopes:
                client.add_events(scope, [
                    {"role": "user" if n % 2 else "assistant", "id": f"{scope.session}-{n}",
                     "content": f"Turn {n}: order A-{n} of {scope.user} needs a refund of "
                                f"{n}.50 EUR, says the customer, again and again."}
                    for n in range(40)
                ])  # fmt: skip
                # Past the compact threshold, below hard: the compaction is queued.
                window = client.assemble(scope, budget_tokens=1_500, model="gpt-4o", system="s")
                assert window.pressure.value in ("compact", "hard"), window.utilization
            deadline = time.monotonic() + 60
            while True:
                queue = httpx.get(f"{served.url}/readyz").json()["checks"]["queue"]
                if queue["pending"] == 0 and queue["running"] == 0:
                    break
                assert time.monotonic() < deadline, queue
                time.sleep(0.2)
            for scope in scopes:
                assert len(client.get_session(scope)) == 40
                r = httpx.get(f"{served.url}/v1/sessions/{scope.session}/compaction",
                              params={"user": scope.user},
                              headers={"Authorization": f"Bearer {key}"})  # fmt: skip
                jobs, audit = r.json()["jobs"], r.json()["audit"]
                assert all(j["status"] == "done" for j in jobs)
                ranges = Counter(
                    (a["first_seq"], a["last_seq"]) for a in audit if a["action"] == "segment"
                )
                assert ranges and max(ranges.values()) == 1
            assert client.search(Scope("acme"), "refund of EUR", k=5).hits
        with Client(served.url, api_key=globex_key) as stranger:
            assert stranger.search(Scope("globex", "u0"), "refund of EUR", k=5).hits == ()
    assert served.process.returncode == 0
    lines = [json.loads(line) for line in (tmp_path / "server.log").read_text().splitlines()
             if line.startswith("{")]  # fmt: skip
    requests = [line for line in lines if line.get("message") == "request"]
    assert requests and all("request_id" in line and "route" in line for line in requests)
    assert len({line["pid"] for line in lines}) >= 3  # the supervisor and two workers


def test_key_commands_on_a_missing_file_say_so_and_create_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    for args in (("keys", "list", "--db", str(missing)),
                 ("keys", "revoke", "kn_x", "--store", f"sqlite:///{missing}")):  # fmt: skip
        done = subprocess.run(kenning(*args), capture_output=True, text=True)
        assert done.returncode == 2 and "does not exist" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert not missing.exists()
    bad = subprocess.run(kenning("keys", "list", "--store", "mysql://db/x"),
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "[unsupported]" in bad.stderr


def test_serve_on_a_port_in_use_says_so_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = str(holder.getsockname()[1])
        done = subprocess.run(
            kenning("serve", "--db", str(db), "--port", port, "--no-model"),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr
    assert "another server is running there?" in done.stderr
    assert not db.exists()  # refused before the store was opened
    bad = subprocess.run(
        kenning("serve", "--db", str(db), "--host", "no-such-host.invalid", "--no-model"),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "is not an address to listen on" in bad.stderr
