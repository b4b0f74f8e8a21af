"""The memories the framework adapters are tested on: kenning embedded on a SQLite file,
embedded on PostgreSQL, and a served kenning through :class:`kenning.Client` (one tenant,
``acme``, whose key the client holds)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kenning import Client, Memory
from kenning.api import MemoryAPI
from kenning.embed.base import Embedder
from tests.served import serve

KINDS = ("sqlite", "postgresql", "client")


@contextmanager
def framework_memory(
    kind: str, tmp_path: Path, embedder: Embedder | None = None
) -> Iterator[MemoryAPI]:
    """A memory of *kind* for tenant ``acme``, closed when the block ends."""
    if kind == "postgresql":
        from tests.pg import PG_URL, fresh_postgres

        fresh_postgres()
        with Memory.open(PG_URL, embedder=embedder) as memory:
            yield memory
        return
    with Memory.open(tmp_path / f"{kind}.db", embedder=embedder) as memory:
        if kind == "sqlite":
            yield memory
            return
        with serve(memory) as served, Client(served.url, api_key=served.key("acme")) as client:
            yield client
