"""No read path ever returns a record outside the scope it was asked for.

Random interleavings of writes, searches and erasures over several tenants, users and sessions,
with the real embedding model, on real SQLite and real PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning import BudgetError, Memory, Scope, ScopeConflict, TaskUpdate
from kenning.records import Event
from kenning.search.filters import parse_filters
from kenning.store.records import ModelInfo
from tests.conftest import MemoEmbedder

TENANTS = ("acme", "globex", "initech")
USERS = ("ann", "bob")
SESSIONS = ("s1", "s2")
WORDS = (
    "refund order espresso machine broken delivery invoice address berlin lisbon "
    "vegetarian approval ticket coffee kettle promised discount cancel subscription"
).split()


def session_of(tenant: str, user: str, session: str) -> Scope:
    # Session ids are unique within a tenant, so qualify them by user.
    return Scope(tenant, user, f"{user}-{session}")


scopes = st.builds(session_of, st.sampled_from(TENANTS), st.sampled_from(USERS),
                   st.sampled_from(SESSIONS))  # fmt: skip
read_scopes = st.one_of(
    st.builds(Scope, st.sampled_from(TENANTS)),
    st.builds(Scope, st.sampled_from(TENANTS), st.sampled_from(USERS)),
    scopes,
)
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@dataclass(frozen=True)
class Add:
    scope: Scope
    texts: tuple[str, ...]


@dataclass(frozen=True)
class Search:
    scope: Scope
    query: str


@dataclass(frozen=True)
class Forget:
    scope: Scope


@dataclass(frozen=True)
class Assemble:
    scope: Scope
    budget: int


@dataclass(frozen=True)
class SetState:
    """Pins and task state in a session (things a window shows)."""

    scope: Scope
    value: str


@dataclass(frozen=True)
class Remember:
    """A long-term fact about the session's user, read from this session."""

    scope: Scope
    value: str


@dataclass(frozen=True)
class Intrude:
    """Another user of the tenant names this session id."""

    scope: Scope


operations = st.lists(
    st.one_of(
        st.builds(Add, scopes, st.lists(texts, min_size=1, max_size=4).map(tuple)),
        st.builds(Search, read_scopes, texts),
        st.builds(Forget, read_scopes),
        st.builds(Assemble, scopes, st.integers(120, 600)),
        st.builds(SetState, scopes, st.sampled_from(["A-1042", "B-77", "C-9"])),
        st.builds(Remember, scopes, st.sampled_from(WORDS)),
        st.builds(Intrude, scopes),
    ),
    min_size=1,
    max_size=12,
)


def inside(scope: Scope, record: Scope) -> bool:
    return (
        record.tenant == scope.tenant
        and (scope.user is None or record.user == scope.user)
        and (scope.session is None or record.session == scope.session)
    )


def check_reads(memory: Memory, scope: Scope, query: str, embedder: MemoEmbedder) -> None:
    results = memory.search(scope, query, k=50)
    assert all(inside(scope, hit.scope) for hit in results)
    store = memory.store
    everything = store.events(Scope(scope.tenant))
    for e in everything:
        assert e.scope.tenant == scope.tenant
    events: list[Event] = store.events(scope)
    assert all(inside(scope, e.scope) for e in events)
    ids_anywhere = [e.id for t in TENANTS for e in store.events(Scope(t))]
    assert all(inside(scope, e.scope) for e in store.events(scope, ids=ids_anywhere))
    assert all(inside(scope, i.scope) for i in store.items(scope, ids_anywhere))
    filters = parse_filters(None)
    by_id = {e.id: e.scope for t in TENANTS for e in store.events(Scope(t))}
    facts = {f.id: f for t in TENANTS for f in store.facts(Scope(t), statuses=None)}
    by_id.update((f.id, f.scope) for f in facts.values())
    assert all(inside(scope, f.scope) for f in store.facts(scope, statuses=None))
    assert all(inside(scope, f.scope) for f in store.facts(scope, ids=list(facts)))
    for cand in store.lexical(scope, query, filters=filters, limit=100):
        assert inside(scope, by_id[cand.id])
    model = ModelInfo(embedder.model_id, embedder.dimension)
    vec = embedder.embed([query])[0]
    for cand in store.nearest(scope, vec, model=model, filters=filters, limit=100):
        assert inside(scope, by_id[cand.id])
    # Working-context reads stay inside the scope too.
    assert all(inside(scope, p.scope) for p in store.pins(scope, history=True))
    assert all(inside(scope, x.scope) for x in store.summaries(scope, include_replaced=True))
    assert all(inside(scope, a.scope) for a in store.audit_log(scope))
    assert all(inside(scope, j.scope) for j in store.compaction_jobs(scope))
    if scope.session is not None:
        snap = store.context_snapshot(scope, "o200k_base", room=1_000_000)
        assert {row.id for row in snap.tail} <= {e.id for e in events}
        assert all(inside(scope, p.scope) for p in snap.pins)
    # Everything a scope holds is findable from it: results are not filtered after a cut.
    expected = {e.id for e in events} | {f.id for f in store.facts(scope)}
    found = {c.id for c in store.nearest(scope, vec, model=model, filters=filters, limit=1000)}
    assert found == expected


def owned(memory: Memory, scope: Scope) -> bool:
    """The session is its user's: it holds something of theirs (events, pins, task state,
    jobs), or a write claimed it without leaving a row in it (a fact remembered from the
    session is the user's, not the session's)."""
    store = memory.store
    assert scope.user is not None
    claimed = {s.session for s in store.user_sessions(Scope(scope.tenant, scope.user))}
    return scope.session in claimed or bool(
        store.events(scope)
        or store.pins(scope, history=True)
        or store.task_state(scope).version
        or store.compaction_jobs(scope)
        or store.facts(scope, statuses=None)
    )


def check_intruder(memory: Memory, victim: Scope, query: str, embedder: MemoEmbedder) -> None:
    """Every read and write path answers ScopeConflict to a user naming another user's
    session id, and nothing when the session is nobody's yet."""
    assert victim.user is not None
    intruder = Scope(victim.tenant, "eve" if victim.user != "eve" else "mallory", victim.session)
    store = memory.store
    filters = parse_filters(None)
    model = ModelInfo(embedder.model_id, embedder.dimension)
    vec = embedder.embed([query])[0]
    reads: list[Callable[[], object]] = [
        lambda: memory.search(intruder, query).hits,
        lambda: store.events(intruder),
        lambda: store.items(intruder, [e.id for e in store.events(victim)]),
        lambda: store.lexical(intruder, query, filters=filters, limit=10),
        lambda: store.nearest(intruder, vec, model=model, filters=filters, limit=10),
        lambda: store.sessions(
            intruder, query, vec, model=model, sessions=[victim.session], filters=filters
        ),
        lambda: memory.context.pins(intruder, history=True),
        lambda: memory.context.summaries(intruder),
        lambda: memory.context.compaction_log(intruder),
        lambda: store.compaction_jobs(intruder),
        lambda: store.facts(intruder, statuses=None),
        lambda: store.ledger_tail(intruder, "o200k_base", room=10_000),
        lambda: store.context_snapshot(intruder, "o200k_base", room=10_000).tail,
        lambda: memory.context.task_state(intruder).to_json()["task"],
        lambda: memory.assemble(
            intruder, budget_tokens=2_000, model="gpt-4o", system="Be brief."
        ).messages[1:],
    ]
    writes: list[Callable[[], object]] = [
        lambda: memory.context.set_pin(intruder, "entity_id", "Z-1"),
        lambda: memory.context.update_task(intruder, TaskUpdate(task="steal")),
        lambda: memory.add_events(intruder, [{"role": "user", "content": "hi"}]),
        lambda: memory.facts.remember(intruder, "favorite word", "stolen"),
    ]
    if owned(memory, victim):
        for call in [*reads, *writes]:
            with pytest.raises(ScopeConflict):
                call()
    else:
        for read in reads:
            assert not read()


_SLOW = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@given(ops=operations)
def test_no_read_path_crosses_scope(
    backend: str, ops: list[object], real_embedder: MemoEmbedder
) -> None:
    no_read_path_crosses_scope(backend, ops, real_embedder)


# Fewer examples on the cluster: emptying its distributed tables between examples takes
# seconds (a TRUNCATE of every shard), not milliseconds.
@settings(max_examples=12, deadline=None, suppress_health_check=_SLOW)
@pytest.mark.parametrize("backend", ["citus"])
@given(ops=operations)
def test_no_read_path_crosses_scope_on_citus(
    backend: str, ops: list[object], real_embedder: MemoEmbedder
) -> None:
    no_read_path_crosses_scope(backend, ops, real_embedder)


def no_read_path_crosses_scope(
    backend: str, ops: list[object], real_embedder: MemoEmbedder
) -> None:
    """Run *ops* on a fresh memory of *backend*, checking every read against its scope."""
    location = ":memory:"
    if backend == "postgresql":
        from tests.pg import PG_URL, fresh_postgres

        fresh_postgres()
        location = PG_URL
    elif backend == "citus":
        from tests.citus import fresh_citus

        location = fresh_citus()  # the coordinator of a three-node cluster
    with Memory.open(location, embedder=real_embedder) as memory:
        for op in ops:
            if isinstance(op, Add):
                memory.add_events(op.scope, [{"role": "user", "content": t} for t in op.texts])
                # Facts read from them in the background are records too: the reads below
                # compare several snapshots, which must all see the same records.
                assert memory.wait_for_facts(60)
            elif isinstance(op, Search):
                check_reads(memory, op.scope, op.query, real_embedder)
            elif isinstance(op, Assemble):
                own = {e.content for e in memory.store.events(op.scope)}
                if not own:
                    continue
                try:
                    window = memory.assemble(op.scope, budget_tokens=op.budget, model="gpt-4o",
                                             system="Be brief.")  # fmt: skip
                except BudgetError:
                    continue
                assert window.tokens <= op.budget
                tail = [m["content"] for m in window.messages if m["role"] == "user"]
                assert set(tail) <= own
                for cite in window.citations:
                    # Retrieval reads the session itself unless asked for more.
                    hit = memory.store.events(op.scope, ids=[str(cite["id"])])
                    assert len(hit) == 1
            elif isinstance(op, SetState):
                memory.context.set_pin(op.scope, "entity_id", op.value)
                memory.context.update_task(op.scope, TaskUpdate(task=f"handle {op.value}"))
            elif isinstance(op, Remember):
                memory.facts.remember(op.scope, "favorite word", op.value)
            elif isinstance(op, Intrude):
                check_intruder(memory, op.scope, "refund order", real_embedder)
            elif isinstance(op, Forget):
                outside = [
                    e.id
                    for t in TENANTS
                    for e in memory.store.events(Scope(t))
                    if not inside(op.scope, e.scope)
                ]
                memory.forget(op.scope)
                assert memory.store.events(op.scope) == []
                assert memory.store.facts(op.scope, statuses=None) == []
                left = {e.id for t in TENANTS for e in memory.store.events(Scope(t))}
                assert set(outside) == left
        for tenant in TENANTS:
            check_reads(memory, Scope(tenant), "refund order", real_embedder)
            for user in USERS:
                for session in SESSIONS:
                    check_intruder(
                        memory, session_of(tenant, user, session), "refund", real_embedder
                    )
