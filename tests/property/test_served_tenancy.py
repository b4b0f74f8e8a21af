"""Through the server, no key ever reaches another tenant's records.

Random interleavings of appends, searches, reads, windows, tool calls and erasures, each made
with one tenant's key while naming users and session ids that other tenants also use. One real
server on loopback (real model, real SQLite); each example gets fresh tenant names.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning import BudgetError, Client, Memory, Scope
from kenning.store.sqlite.store import SQLiteStore
from tests.conftest import MemoEmbedder
from tests.served import Served, serve

TENANTS = ("acme", "globex")
USERS = ("ann", "bob")
WORDS = "refund order espresso broken delivery invoice lisbon approval ticket kettle".split()
_runs = itertools.count()


@dataclass(frozen=True)
class Op:
    kind: str  # add, search, read, assemble, tool, forget
    tenant: int
    user: int
    text: str


ops = st.lists(
    st.builds(
        Op,
        st.sampled_from(["add", "add", "search", "read", "assemble", "tool", "forget"]),
        st.integers(0, len(TENANTS) - 1),
        st.integers(0, len(USERS) - 1),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
    ),
    min_size=1,
    max_size=10,
)


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, real_embedder: MemoEmbedder
) -> Iterator[Served]:
    path: Path = tmp_path_factory.mktemp("tenancy") / "served.db"
    memory = Memory(SQLiteStore(path), embedder=real_embedder)
    try:
        with serve(memory) as served:
            yield served
    finally:
        memory.close()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=ops)
def test_no_key_reaches_another_tenant(ops: list[Op], server: Served) -> None:
    run = next(_runs)
    tenants = [f"{name}{run}" for name in TENANTS]
    clients = [Client(server.url, api_key=server.key(t)) for t in tenants]
    written: dict[str, set[str]] = {t: set() for t in tenants}
    try:
        for op in ops:
            tenant, client = tenants[op.tenant], clients[op.tenant]
            # The same user and session names exist in every tenant.
            scope = Scope(tenant, USERS[op.user], f"{USERS[op.user]}-s")
            if op.kind == "add":
                events = client.add_events(scope, [{"role": "user", "content": op.text}])
                written[tenant] |= {e.id for e in events}
            elif op.kind == "search":
                hits = client.search(Scope(tenant), op.text, k=50)
                assert {h.id for h in hits} <= written[tenant]
                assert all(h.scope.tenant == tenant for h in hits)
            elif op.kind == "read":
                assert {e.id for e in client.get_session(scope)} <= written[tenant]
            elif op.kind == "assemble":
                try:
                    window = client.assemble(scope, budget_tokens=400, model="gpt-4o",
                                             system="Be brief.", query=op.text)  # fmt: skip
                except BudgetError:
                    continue
                assert {str(c["id"]) for c in window.citations} <= written[tenant]
            elif op.kind == "tool":
                found = client.call_tool(scope, "search_memory", {"query": op.text, "k": 20})
                assert {h["id"] for h in found["hits"]} <= written[tenant]
            else:
                client.forget(Scope(tenant, USERS[op.user]))
                stored = {e.id for u in USERS for e in client.get_session(
                    Scope(tenant, u, f"{u}-s"))}  # fmt: skip
                written[tenant] &= stored
        for tenant, client in zip(tenants, clients, strict=True):
            hits = client.search(Scope(tenant), " ".join(WORDS), k=200)
            assert {h.id for h in hits} <= written[tenant]
    finally:
        for client in clients:
            client.close()
