"""A real kenning server on a loopback port, in a thread of the test process (uvicorn over the
ASGI app), for tests that go through HTTP: the client, the tools over REST, MCP over HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from kenning import Memory
from kenning.server import ServerSettings, create_app

ADMIN = "test-admin-token-of-at-least-32-characters"


@dataclass
class Served:
    url: str
    memory: Memory

    def key(self, tenant: str, scopes: tuple[str, ...] = ("read", "write")) -> str:
        """A new API key of *tenant* (through the admin API)."""
        r = httpx.post(
            f"{self.url}/v1/admin/keys",
            json={"tenant": tenant, "scopes": list(scopes)},
            headers={"Authorization": f"Bearer {ADMIN}"},
        )
        r.raise_for_status()
        return str(r.json()["key"])


@contextmanager
def serve(memory: Memory, settings: ServerSettings | None = None) -> Iterator[Served]:
    """Serve *memory* on 127.0.0.1 (a free port) until the block ends."""
    import uvicorn

    settings = settings or ServerSettings(admin_token=ADMIN)
    app = create_app(settings, memory=memory)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, name="kenning-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Served(f"http://127.0.0.1:{port}", memory)
    finally:
        server.should_exit = True
        thread.join(30)
