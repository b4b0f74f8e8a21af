"""kenning on a running Citus cluster: a coordinator and two workers (scripts/citus-ci.sh).

- Opening the store distributes every tenant table by ``tenant``, colocated, and makes the
  model table a reference table; the compaction queue stays on the coordinator.
- Row-level security holds on the workers for the application role: the tenant setting is
  carried to them, and a transaction without it sees nothing.
- Every tenant-scoped statement the store sends for search, assemble, event writes, pins and
  facts is router-executed: its ``EXPLAIN`` on the coordinator shows one task.
- A tenant's shard moves to the other worker while a writer and a reader run: nothing is
  lost and every search answers, with the same results as before.
- How 50 tenants spread over the shards and workers (printed; run with ``-s`` to see it).
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from kenning import Memory, Scope, TaskUpdate
from kenning.store.postgres.schema import COORDINATOR_TABLES, REFERENCE_TABLES, TENANT_TABLES
from tests.citus import citus_admin_url, citus_app_url
from tests.conftest import MemoEmbedder
from tests.integration.test_citus_queries import _workload as every_store_path

DISTRIBUTED = tuple(t for t in TENANT_TABLES if t not in COORDINATOR_TABLES)
# Functions that span tenants by design (docs/scaling.md): not router queries.
CROSS_TENANT = ("kenning_claim_compaction", "kenning_pending_compactions",
                "kenning_finish_compaction", "kenning_renew_compaction", "kenning_queue_stats",
                "kenning_claim_extraction", "kenning_pending_extractions",
                "kenning_extraction_stats", "kenning_api_key")  # fmt: skip
_TABLE_REF = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+([a-z_][a-z0-9_]*)", re.I)


def _distributed_tables(sql: str) -> set[str]:
    return {t for t in _TABLE_REF.findall(sql) if t in DISTRIBUTED}


def _explainable(sql: str) -> bool:
    """A single data statement of the store on a distributed table: not a queue function,
    and not ``kenning migrate``'s bulk copy of a SQLite file (rows staged in a temporary
    table, then inserted through the coordinator)."""
    text = sql.strip()
    return (
        text.upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE", "WITH"))
        and ";" not in text
        and not any(fn in text for fn in CROSS_TENANT)
        and "FROM stage_" not in text
        and bool(_distributed_tables(text))
    )


@pytest.fixture
def explained(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """(statement, its plan) for each explainable statement the store sends while the fixture
    is active: ``EXPLAIN`` runs on the same connection, in the same transaction (tenant set,
    staging tables visible), with the same parameters, just before the statement itself."""
    seen: list[tuple[str, str]] = []
    execute = psycopg.Cursor.execute

    def recording(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        text = query if isinstance(query, str) else query.as_string(self.connection)
        if _explainable(text):
            # Parameters bound in the text, as the statement's values: Citus prunes shards by
            # them (and EXPLAIN of a multi-row VALUES cannot type unknown parameters).
            explain = psycopg.ClientCursor(self.connection)
            plan = execute(explain, f"EXPLAIN {text}", params).fetchall()
            seen.append((text, "\n".join(str(row[0]) for row in plan)))
        return execute(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording)
    yield seen


def _tasks(plan: str) -> int | None:
    found = re.search(r"Task Count: (\d+)", plan)
    return int(found.group(1)) if found else None


def test_tables_are_distributed_by_tenant_and_colocated(citus_db: str) -> None:
    with psycopg.connect(citus_db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT logicalrelid::regclass::text, partmethod, colocationid,"
            " column_to_column_name(logicalrelid, partkey) FROM pg_dist_partition"
        ).fetchall()
    placed = {r[0]: r for r in rows}
    assert set(DISTRIBUTED) <= set(placed), set(DISTRIBUTED) - set(placed)
    assert {placed[t][1] for t in DISTRIBUTED} == {"h"}  # hash-distributed
    assert {placed[t][3] for t in DISTRIBUTED} == {"tenant"}
    assert len({placed[t][2] for t in DISTRIBUTED}) == 1  # one colocation group
    assert {placed[t][1] for t in REFERENCE_TABLES} == {"n"}  # reference tables
    assert not set(COORDINATOR_TABLES) & set(placed)  # the queue: a coordinator table


def test_row_level_security_holds_on_the_workers(
    citus_db: str, real_embedder: MemoEmbedder
) -> None:
    with Memory.open(citus_db, embedder=real_embedder) as memory:
        for tenant, n in (("acme", 2), ("globex", 3)):
            texts = [{"role": "user", "content": f"{tenant} {i}"} for i in range(n)]
            memory.add_events(Scope(tenant, "ann", "s1"), texts)
    with psycopg.connect(citus_app_url(), autocommit=True) as app:
        assert app.execute("SELECT current_user").fetchone() == ("kenning_app",)
        counts = {}
        for tenant in ("acme", "globex", ""):
            with app.transaction():
                app.execute("SET LOCAL citus.propagate_set_commands = 'local'")
                app.execute(f"SET LOCAL kenning.tenant = '{tenant}'")
                # No tenant predicate: only the policy, run on the workers, filters.
                row = app.execute("SELECT count(*), count(DISTINCT tenant) FROM items").fetchone()
                counts[tenant] = row
                # The policy's check runs on the worker too: no row of another tenant.
                with pytest.raises(psycopg.errors.InsufficientPrivilege), app.transaction():
                    app.execute("INSERT INTO sessions (tenant, session, user_id)"
                                " VALUES ('intruder', 's', 'u')")  # fmt: skip
        # A setting the workers never receive leaves the app role with nothing.
        with app.transaction():
            app.execute("SELECT set_config('kenning.tenant', 'acme', true)")
            blind = app.execute("SELECT count(*) FROM items").fetchone()
    assert counts == {"acme": (2, 1), "globex": (3, 1), "": (0, 0)}
    assert blind == (0,)


def _workload(memory: Memory) -> None:
    """Each tenant-scoped kind of statement: event writes, search, assemble, pins, facts."""
    for tenant in ("acme", "globex"):
        chat = Scope(tenant, "ann", f"{tenant}-s1")
        memory.add_events(chat, [
            {"role": "user", "content": "Refund 42.50 EUR for order A-1", "tags": ["billing"]},
            {"role": "assistant", "content": "The refund for A-1 is on its way."},
        ])  # fmt: skip
        memory.search(Scope(tenant), "refund order")
        memory.search(Scope(tenant, "ann"), "refund", filters={"tag": "billing"})
        memory.context.set_pin(chat, "entity_id", "A-1")
        memory.context.update_task(chat, TaskUpdate(task="refund"))
        memory.assemble(chat, budget_tokens=2000, model="gpt-4o", system="Be brief.")
        fact = memory.facts.remember(chat, "favorite color", "green")
        memory.facts.list(Scope(tenant, "ann"))
        memory.facts.revoke(Scope(tenant, "ann"), fact.id)
        memory.get_session(chat)


def test_every_tenant_statement_runs_on_one_shard(
    citus_db: str, real_embedder: MemoEmbedder, explained: list[tuple[str, str]], tmp_path: Any
) -> None:
    with Memory.open(citus_db, embedder=real_embedder) as memory:
        _workload(memory)
    # Every store path (test_citus_queries' workload: erasure, documents, keys, the purge...).
    every_store_path(citus_db, real_embedder, tmp_path)
    multi = [(sql, plan) for sql, plan in explained if _tasks(plan) != 1]
    assert multi == [], "\n\n".join(f"{sql}\n{plan}" for sql, plan in multi)
    kinds = Counter(t for sql, _ in explained for t in _distributed_tables(sql))
    # Each kind was reached: events and their vectors, search's partition reads, pins and
    # task state (assemble), facts.
    for table in ("items", "vectors", "sessions", "pins", "task_state", "facts", "index_log"):
        assert kinds[table] > 0, (table, kinds)
    inserts = [sql for sql, _ in explained if sql.lstrip().upper().startswith("INSERT INTO ITEMS")]
    assert inserts


def _shard_of(admin: psycopg.Connection[Any], tenant: str) -> tuple[int, int]:
    """The tenant's shard of ``sessions`` and the worker port it lives on."""
    row = admin.execute(
        "SELECT shardid, nodeport FROM citus_shards WHERE table_name = 'sessions'::regclass"
        " AND shardid = get_shard_id_for_distribution_column('sessions', %s::text)",
        (tenant,),
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def _move(admin: psycopg.Connection[Any], shard: int, source: int, target: int) -> None:
    """Move *shard*'s group from the worker on port *source* to *target* (logical
    replication: writes continue until the switch)."""
    admin.execute(
        "SELECT citus_move_shard_placement(%s, '127.0.0.1', %s, '127.0.0.1', %s)",
        (shard, source, target),
    )


def test_a_tenant_shard_moves_while_a_writer_and_a_reader_run(
    citus_db: str, real_embedder: MemoEmbedder
) -> None:
    chat, live = Scope("acme", "ann", "s1"), Scope("acme", "ann", "s2")
    with Memory.open(citus_db, embedder=real_embedder) as memory:
        memory.add_events(chat, [{"role": "user", "content": f"order {i} needs a refund"}
                                 for i in range(20)])  # fmt: skip
        memory.context.set_pin(chat, "entity_id", "A-7")
        # The writer's notes change the tenant's statistics, not which event answers best.
        [best, *_] = memory.search(Scope("acme"), "refund for order 7", k=5)
        history = memory.get_session(chat)
        stop, errors, written, answers = threading.Event(), [], [], []

        def writer() -> None:
            while not stop.is_set():
                try:
                    n = len(written)
                    [event] = memory.add_events(live, [{"role": "user", "content": f"note {n}"}])
                    written.append(event.id)
                except Exception as exc:  # collected: the assertion below names it
                    errors.append(exc)

        def reader() -> None:
            while not stop.is_set():
                try:
                    answers.append(len(memory.search(Scope("acme"), "refund for order 7", k=5)))
                except Exception as exc:
                    errors.append(exc)

        threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
        for t in threads:
            t.start()
        try:
            with psycopg.connect(citus_admin_url(), autocommit=True) as admin:
                shard, source = _shard_of(admin, "acme")
                ports = [r[0] for r in admin.execute(
                    "SELECT nodeport FROM pg_dist_node WHERE noderole = 'primary'"
                    " AND shouldhaveshards ORDER BY nodeport")]  # fmt: skip
                target = next(p for p in ports if p != source)
                time.sleep(0.5)
                during = len(written), len(answers)
                _move(admin, shard, source, target)
                moved = _shard_of(admin, "acme")
                time.sleep(0.5)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=60)
        assert errors == []
        assert moved == (shard, target)
        # Both kept going through the move, and after it.
        assert len(written) > during[0] and len(answers) > during[1] and min(answers) == 5
        assert [e.id for e in memory.get_session(live)] == written
        assert memory.search(Scope("acme"), "refund for order 7", k=5)[0].id == best.id
        assert memory.get_session(chat) == history
    # Another process reads the moved tenant from the tables alone.
    with Memory.open(citus_db, embedder=real_embedder) as other:
        assert [e.id for e in other.get_session(live)] == written
        assert other.get_session(chat) == history
        assert other.search(Scope("acme"), "refund for order 7", k=5)[0].id == best.id
        assert other.context.pins(chat)[0].value == "A-7"
    # Back where it was: the cluster's placement stays the same from one run to the next.
    with psycopg.connect(citus_admin_url(), autocommit=True) as admin:
        _move(admin, shard, target, source)


def test_fifty_tenants_spread_over_both_workers(citus_db: str, real_embedder: MemoEmbedder) -> None:
    tenants = [f"tenant-{i:02d}" for i in range(50)]
    with Memory.open(citus_db, embedder=real_embedder) as memory:
        for tenant in tenants:
            memory.add_events(Scope(tenant, "u", "s"), [{"role": "user", "content": "hello"}])
    with psycopg.connect(citus_db, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.nodeport, count(DISTINCT s.shard), count(*) FROM ("
            "  SELECT get_shard_id_for_distribution_column('sessions', tenant) AS shard"
            "  FROM sessions) s"
            " JOIN citus_shards c ON c.shardid = s.shard GROUP BY c.nodeport ORDER BY 1"
        ).fetchall()
    per_worker = {int(port): (int(shards), int(n)) for port, shards, n in rows}
    print(f"\n50 tenants over workers (port: shards, tenants): {per_worker}")
    assert sum(n for _, n in per_worker.values()) == 50
    assert len(per_worker) == 2 and min(n for _, n in per_worker.values()) > 0
