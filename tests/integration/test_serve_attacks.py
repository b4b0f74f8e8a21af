"""``kenning serve`` under attack, as real processes on real sockets: slow bodies with and
without a key, slow request heads, event streams that never end, and the admin credential
(too weak to start with; never in a worker's environment)."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ADMIN = "an-admin-token-of-at-least-thirty-two-characters"


def _kenning(*args: str) -> list[str]:
    return [sys.executable, "-m", "kenning.cli.main", *args]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="1", **extra)
    if "KENNING_ADMIN_TOKEN" not in extra:
        env.pop("KENNING_ADMIN_TOKEN", None)
    return env


@dataclass
class Server:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    db: Path

    def key(self, tenant: str) -> str:
        made = subprocess.run(_kenning("keys", "create", "--db", str(self.db), "--tenant", tenant),
                              capture_output=True, text=True, check=True, env=_env())  # fmt: skip
        return str(json.loads(made.stdout)["key"])

    def socket(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)


@contextmanager
def served(tmp_path: Path, *flags: str, **env: str) -> Iterator[Server]:
    """``kenning serve`` on a free port of 127.0.0.1 (SQLite, no model) until the block ends."""
    db = tmp_path / "served.db"
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen(
        _kenning("serve", "--db", str(db), "--port", str(port), "--no-model", "--text-logs",
                 *flags),
        stdout=log, stderr=subprocess.STDOUT, env=_env(**env),
    )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}", port, process, db)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if httpx.get(f"{server.url}/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield server
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _slow_body(server: Server, path: str, key: str | None = None) -> socket.socket:
    """A socket that sent a request's head announcing 100,000 bytes of body, then one byte."""
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    sock = server.socket()
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: application/json\r\n"
        "Content-Length: 100000\r\n\r\n{".encode()
    )
    return sock


def _answer(sock: socket.socket, timeout: float = 5.0) -> tuple[int, bool]:
    """The status the server answered on *sock*, and whether it closed the connection."""
    sock.settimeout(timeout)
    data = b""
    closed = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        data += chunk
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    return status, closed


def _response(sock: socket.socket) -> int:
    """The status of one whole response (with a Content-Length) read from *sock*."""
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1]) for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )  # fmt: skip
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split(b" ", 2)[1])


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _events(n: int) -> dict[str, object]:
    return {"user": "dana", "events": [{"role": "user", "content": f"Order A-{n} is late"}]}


def test_slow_bodies_without_a_key_take_no_place(tmp_path: Path) -> None:
    with served(tmp_path, "--max-in-flight", "4") as server, ExitStack() as sockets:
        key = server.key("acme")
        attackers = [
            sockets.enter_context(_slow_body(server, "/v1/sessions/s1/events")) for _ in range(200)
        ]
        latencies = []
        with httpx.Client(headers=_auth(key), timeout=10) as client:
            for n in range(40):
                start = time.perf_counter()
                r = client.post(f"{server.url}/v1/sessions/s1/events", json=_events(n))
                latencies.append(time.perf_counter() - start)
                assert r.status_code == 200, r.text
        answers = [_answer(sock) for sock in attackers[:20]]
    # Every keyless request was refused from its head, and its connection closed.
    assert answers == [(401, True)] * 20
    median = statistics.median(latencies)
    print(f"valid appends while 200 keyless slow bodies were open: median {median * 1000:.1f} ms")
    assert median < 0.5


def test_a_key_holders_slow_bodies_time_out_and_leave_other_tenants_room(tmp_path: Path) -> None:
    flags = ("--max-in-flight", "4", "--max-in-flight-per-tenant", "2", "--body-timeout", "3")
    with served(tmp_path, *flags) as server, ExitStack() as sockets:
        mallory, acme = server.key("mallory"), server.key("acme")
        slow = []
        opened = time.monotonic()
        for _ in range(2):
            slow.append(
                sockets.enter_context(_slow_body(server, "/v1/sessions/m1/events", mallory))
            )
            time.sleep(0.3)  # admitted, waiting for its body
        # Mallory holds its share: more of its requests are refused at once, from the head.
        more = [
            sockets.enter_context(_slow_body(server, "/v1/sessions/m1/events", mallory))
            for _ in range(2)
        ]
        assert [_answer(sock, 3) for sock in more] == [(429, True)] * 2
        # Other tenants still have room while mallory holds its places.
        with httpx.Client(headers=_auth(acme), timeout=10) as client:
            for n in range(5):
                r = client.post(f"{server.url}/v1/sessions/s1/events", json=_events(n))
                assert r.status_code == 200, r.text
        assert time.monotonic() - opened < 3
        # The slow bodies time out: 408, the connection closed, and the places are free again.
        assert [_answer(sock, 5) for sock in slow] == [(408, True)] * 2
        r = httpx.post(f"{server.url}/v1/sessions/m1/events", json=_events(1),
                       headers=_auth(mallory))  # fmt: skip
        assert r.status_code == 200, r.text


def test_slow_request_heads_are_closed(tmp_path: Path) -> None:
    with served(tmp_path, "--header-timeout", "1") as server, ExitStack() as sockets:
        silent = sockets.enter_context(server.socket())  # connects and sends nothing
        half = sockets.enter_context(server.socket())
        half.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no end of head
        # A finished request's keep-alive connection is not a slow head: it stays open.
        kept = sockets.enter_context(server.socket())
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert _response(kept) == 200
        start = time.monotonic()
        assert _answer(silent, 5) == (408, True)
        assert _answer(half, 5) == (408, True)
        assert time.monotonic() - start < 4
        time.sleep(1.5)
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert _response(kept) == 200


def _stream(server: Server, key: str) -> socket.socket:
    """A ``GET /mcp`` event stream, left open."""
    sock = server.socket()
    sock.sendall(
        f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAuthorization: Bearer {key}\r\n"
        "Kenning-User: dana\r\nKenning-Session: s1\r\nAccept: text/event-stream\r\n"
        "Mcp-Protocol-Version: 2025-06-18\r\n\r\n".encode()
    )
    return sock


def _status(sock: socket.socket) -> int:
    sock.settimeout(5)
    head = sock.recv(4096)
    return int(head.split(b" ", 2)[1])


def test_never_ending_mcp_streams_cannot_starve_others(tmp_path: Path) -> None:
    with served(tmp_path, "--max-in-flight", "4") as server, ExitStack() as sockets:
        mallory, acme = server.key("mallory"), server.key("acme")
        streams = [sockets.enter_context(_stream(server, mallory)) for _ in range(4)]
        assert [_status(s) for s in streams] == [200] * 4
        extra = sockets.enter_context(_stream(server, mallory))
        assert _status(extra) in (429, 503)  # past its key's streams: refused at once
        # The streams hold no request place: every tenant's requests, mallory's too, go on.
        for key in (acme, mallory):
            with httpx.Client(headers=_auth(key), timeout=10) as client:
                for n in range(6):
                    r = client.post(f"{server.url}/v1/sessions/s{n}/events", json=_events(n))
                    assert r.status_code == 200, r.text


@pytest.mark.parametrize("token", ["short-token", " " * 40])
def test_a_weak_admin_token_stops_the_server_at_start_up(tmp_path: Path, token: str) -> None:
    port = _free_port()
    process = subprocess.Popen(
        _kenning("serve", "--db", str(tmp_path / "weak.db"), "--port", str(port), "--no-model"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(KENNING_ADMIN_TOKEN=token),
    )  # fmt: skip
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("the server started with a weak admin token")
    assert process.returncode == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kenning: error [weak_credential]"), err
    assert token.strip() == "" or token not in err
    assert not (tmp_path / "weak.db").exists()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def test_workers_read_the_admin_token_from_a_private_file_not_their_environment(
    tmp_path: Path,
) -> None:
    with served(tmp_path, "--workers", "2", KENNING_ADMIN_TOKEN=ADMIN) as server:
        r = httpx.post(f"{server.url}/v1/admin/keys", json={"tenant": "acme"},
                       headers=_auth(ADMIN))  # fmt: skip
        assert r.status_code == 200, r.text
        workers = _children(server.process.pid)
        assert len(workers) >= 2
        token_files = set()
        for pid in workers:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            assert ADMIN.encode() not in environ, pid
            for item in environ.split(b"\0"):
                if item.startswith(b"KENNING_SERVER_SETTINGS="):
                    settings = json.loads(item.split(b"=", 1)[1])
                    assert settings["admin_token"] is None
                    token_files.add(settings["admin_token_file"])
        assert len(token_files) == 1
        token_file = Path(token_files.pop())
        assert token_file.read_text() == ADMIN
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert token_file.parent.stat().st_mode & 0o777 == 0o700
        assert token_file.stat().st_uid == os.getuid()
    assert not token_file.exists() and not token_file.parent.exists()
