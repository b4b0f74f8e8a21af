"""The PostgreSQL store beyond the conformance suite: isolation in depth (row-level security
for a role that owns nothing), several stores on one database, and driver errors.

Real PostgreSQL (``make test`` starts it); nothing here is mocked or skipped.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg import errors as pg_errors

from kenning import Memory
from kenning.errors import InvalidInput, LegalHoldActive, StoreError
from kenning.records import (
    USER,
    ApiKey,
    AuditAction,
    AuditEntry,
    FactDraft,
    KeyScope,
    NewEvent,
    PinDraft,
    PinKind,
    Procedure,
    Scope,
    Summary,
    TaskState,
    TenantPolicy,
    UserSettings,
)
from kenning.search.filters import parse_filters
from kenning.store.postgres.schema import APP_ROLE, TENANT_TABLES
from kenning.store.postgres.store import PostgresStore
from kenning.store.records import (
    Chunk,
    DocumentWrite,
    EventWrite,
    FactChanges,
    FactInsert,
    IndexText,
)
from tests.conformance.helpers import T0, ev, write
from tests.conftest import MemoEmbedder
from tests.pg import PG_APP_URL

ACME = Scope("acme", "ann", "a-1")
GLOBEX = Scope("globex", "gus", "g-1")
ALL = parse_filters(None)


@pytest.fixture
def populated(pg_url: str, real_embedder: MemoEmbedder) -> Iterator[PostgresStore]:
    """Two tenants with something in every table."""
    store = PostgresStore(pg_url)
    for scope, word in ((ACME, "acme"), (GLOBEX, "globex")):
        long_text = f"{word} refund " + "filler words " * 40
        ids = write(
            store, real_embedder, [(scope, ev(f"{word} refund order")), (scope, ev(long_text))]
        )
        store.put_token_counts(scope, "o200k_base", {ids[0]: 4})
        store.touch(scope, ids, at=T0)
        store.put_pins(scope, [PinDraft(PinKind.ENTITY_ID, "order", f"{word}-1")], at=T0)
        store.put_summary(Summary(id=f"sum-{word}", scope=scope, level=1, first_seq=1,
                                  last_seq=1, text=word, created_at=T0))  # fmt: skip
        store.enqueue_compaction(scope, model="gpt-4o", budget=100, reason="r", at=T0)
        store.forget(scope, ids=[ids[1]])  # leaves an index_log entry
        tool = ev("lookup", "tool", tool_name="orders.get", tool_result={"id": word})
        write(store, real_embedder, [(scope, ev(long_text)), (scope, tool)])
        store.extend_ledger(scope, "o200k_base", [(1, 5), (2, 50)])
        store.put_task_state(scope, TaskState(task=f"{word} refund", version=1), expected=0, at=T0)
        store.audit([AuditEntry(scope=scope, at=T0, action=AuditAction.WARN)])
        # A long record is indexed as chunks.
        text = NewEvent("user", f"{word} " * 20).validated()
        store.append_events([EventWrite(scope, text, None, chunks=(Chunk(0, 30), Chunk(30, 60)))])
        _long_term_rows(store, scope, ids[0])
    # Extraction progress: every session's events read.
    while (job := store.claim_extraction(at=T0, lease_s=60)) is not None:
        store.finish_extraction(job, done_seq=job.last_seq)
    yield store
    store.close()


def _long_term_rows(store: PostgresStore, scope: Scope, source: str) -> None:
    """A row in each long-term table of *scope*'s tenant, and an API key."""
    tenant, user = scope.tenant, Scope(scope.tenant, scope.user)
    store.put_tenant_policy(tenant, TenantPolicy(episode_days=3650))
    store.put_user_settings(user, UserSettings(share_across_sessions=True))
    fact = FactDraft(USER, "employer", tenant, f"The user works at {tenant}", valid_from=T0,
                     source_event_id=source)  # fmt: skip
    gone = FactDraft(USER, "location", "Porto", "The user lives in Porto", valid_from=T0)
    store.apply_facts(scope, FactChanges(inserts=(
        FactInsert(f"fact-{tenant}", fact), FactInsert(f"gone-{tenant}", gone, expires_at=T0),
    )), at=T0)  # fmt: skip
    assert store.purge(tenant, now=T0 + timedelta(days=1), episodes_before=None) == 1
    store.put_procedure(Procedure(id=f"proc-{tenant}", scope=Scope(tenant), name="refund",
                                  version=0, tool_schema_hash="h", steps=("look up",)))  # fmt: skip
    store.add_usage(scope, "gpt-4o", input_tokens=10, output_tokens=2, cost=0.01)
    store.put_hold(Scope(tenant, "someone-else"), "audit")
    store.put_api_key(ApiKey(f"key-{tenant}", tenant, (KeyScope.READ,), T0), secret_hash="h")
    store.put_documents(user, [DocumentWrite(("memories", str(scope.user)), "k", {"at": tenant},
                                             user=scope.user, texts=(IndexText("$", tenant),))],
                        at=T0)  # fmt: skip


def _counts(
    conn: psycopg.Connection[tuple[object, ...]], tenant: str | None
) -> dict[str, tuple[int, int]]:
    """(rows of *tenant*, rows of any other tenant) per table, by queries that name no tenant."""
    out = {}
    for table in TENANT_TABLES:
        row = conn.execute(
            f"SELECT count(*) FILTER (WHERE tenant = %s), count(*) FILTER (WHERE tenant <> %s)"
            f" FROM {table}",
            (tenant or "", tenant or ""),
        ).fetchone()
        assert row is not None
        out[table] = (int(row[0]), int(row[1]))
    return out


def test_the_app_role_owns_nothing_and_cannot_bypass_row_level_security(
    populated: PostgresStore, pg_url: str
) -> None:
    with psycopg.connect(pg_url) as conn:
        role = conn.execute(
            "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles"
            " WHERE rolname = %s",
            (APP_ROLE,),
        ).fetchone()
        assert role == (False, False, False, False)
        owned = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND pg_get_userbyid(c.relowner) = %s",
            (APP_ROLE,),
        ).fetchone()
        assert owned == (0,)
        secured = dict(
            conn.execute(
                "SELECT relname, relrowsecurity FROM pg_class WHERE relname = ANY(%s)",
                (list(TENANT_TABLES),),
            ).fetchall()
        )
        assert secured == dict.fromkeys(TENANT_TABLES, True)
        policies = {r[0] for r in conn.execute("SELECT tablename FROM pg_policies")}
        assert set(TENANT_TABLES) <= policies


@pytest.mark.parametrize("login", ["app role", "owner with SET ROLE"])
def test_a_raw_query_without_the_tenant_predicate_sees_only_its_tenant(
    populated: PostgresStore, pg_url: str, login: str
) -> None:
    url = PG_APP_URL if login == "app role" else pg_url
    with psycopg.connect(url) as conn:
        if login != "app role":
            conn.execute(f"SET ROLE {APP_ROLE}")
        # No tenant set: no tenant row at all.
        assert all(c == (0, 0) for c in _counts(conn, None).values())
        conn.execute("SELECT set_config('kenning.tenant', 'acme', true)")
        counts = _counts(conn, "acme")
        assert all(other == 0 for _, other in counts.values()), counts
        empty = {table for table, (mine, _) in counts.items() if mine == 0}
        # The floor moves only past 100k erasures; a pending text lives until its vector is
        # stored.
        assert empty <= {"index_log_floor", "pending_vectors"}, counts
        assert "index_log_floor" in empty
        # Rows of another tenant can be neither changed nor written.
        changed = conn.execute("UPDATE items SET text = 'x' WHERE tenant = 'globex'").rowcount
        assert changed == 0
        with pytest.raises(pg_errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO sessions (tenant, session, user_id) VALUES ('globex', 'g-9', 'eve')"
            )
    # The owner (not confined) still holds globex's rows: the policy hid them, nothing more.
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT count(*) FROM items WHERE tenant = 'globex'").fetchone()
        assert row is not None and row[0] > 0


def test_catch_up_reads_vectors_by_index_under_row_level_security(
    populated: PostgresStore, pg_url: str
) -> None:
    """Row-level security keeps a join key that is not leakproof out of the index scan: the
    partition query must look vectors up by plain columns, or each catch-up compares every
    new row with every vector of the tenant once the tables are analyzed. Nested loops are
    forced, so the plan shows where each key is applied whatever the table sizes."""
    from kenning.store.postgres.search import _PARTITION_SQL
    from kenning.store.postgres.sql import pg_sql

    with psycopg.connect(pg_url) as conn:
        # Enough vectors that looking each one up by its key is the plan to beat.
        conn.execute(
            "INSERT INTO vectors (tenant, hash, vec) SELECT 'acme', 'filler-' || g,"
            " array_fill(0.0::real, ARRAY[(SELECT dimension FROM embedding_model)])::vector"
            " FROM generate_series(1, 5000) AS g"
        )
        conn.execute("ANALYZE")
        conn.execute(f"SET ROLE {APP_ROLE}")
        for setting in ("hashjoin", "mergejoin", "seqscan", "material"):
            conn.execute(f"SET enable_{setting} = off")
        conn.execute("SELECT set_config('kenning.tenant', 'acme', false)")
        sql = pg_sql(_PARTITION_SQL.format(unseen="AND (i.xact >= ? OR i.xact = ANY(?))"))
        plan = "\n".join(
            str(row[0])
            for row in conn.execute(f"EXPLAIN {sql}", ["acme"] * 3 + [0, [0]]).fetchall()
        )
    assert "Join Filter" not in plan or ".hash" not in plan.split("Join Filter", 1)[1], plan
    assert plan.count("hash = ") >= 2, plan  # both vector lookups are index conditions


def test_the_store_itself_cannot_read_across_tenants_even_without_its_predicate(
    populated: PostgresStore,
) -> None:
    """The store's own connections are confined too: a transaction for acme that forgets its
    predicate still sees acme only."""
    with populated._read(Scope("acme")) as conn:
        tenants = {r[0] for r in conn.execute("SELECT DISTINCT tenant FROM items")}
    assert tenants == {"acme"}


def test_jobs_are_claimed_once_across_stores_and_threads(pg_url: str) -> None:
    stores = [PostgresStore(pg_url, pool_size=4) for _ in range(2)]
    try:
        for n in range(40):
            scope = Scope(f"t{n % 4}", "u", f"s{n}")
            stores[0].enqueue_compaction(scope, model="m", budget=10, reason="r", at=T0)
        claimed: list[int] = []
        lock = threading.Lock()

        def worker(store: PostgresStore) -> None:
            while (job := store.claim_compaction(at=T0, lease_s=600)) is not None:
                with lock:
                    claimed.append(job.id)

        threads = [threading.Thread(target=worker, args=(s,)) for s in stores for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(claimed) == 40 and len(set(claimed)) == 40
        assert stores[1].pending_compactions() == 40  # running, leased
        later = stores[1].claim_compaction(at=T0 + timedelta(seconds=601), lease_s=60)
        assert later is not None and later.attempts == 2
    finally:
        for s in stores:
            s.close()


def test_a_second_store_follows_writes_and_erasures_by_delta(
    pg_url: str, real_embedder: MemoEmbedder
) -> None:
    first, second = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        ids = write(first, real_embedder, [(ACME, ev("espresso one"))])
        assert len(second.lexical(ACME, "espresso", filters=ALL, limit=5)) == 1
        ids += write(first, real_embedder, [(ACME, ev("espresso two"))])
        assert len(second.lexical(ACME, "espresso", filters=ALL, limit=5)) == 2
        first.forget(ACME, ids=[ids[0]])
        hits = second.lexical(ACME, "espresso", filters=ALL, limit=5)
        assert [h.id for h in hits] == [ids[1]]
        status = second.partition_status("acme")
        assert (status.loads, status.added, status.removed) == (1, 1, 1)
    finally:
        first.close()
        second.close()


def test_a_row_committed_after_a_newer_one_is_not_missed(
    pg_url: str, real_embedder: MemoEmbedder
) -> None:
    """Identity values are taken in one order and committed in another: a follower that kept
    only the highest id it saw would never see the late row."""
    store = PostgresStore(pg_url)
    try:
        write(store, real_embedder, [(ACME, ev("first turn"))])
        assert len(store.lexical(ACME, "turn", filters=ALL, limit=10)) == 1
        with psycopg.connect(PG_APP_URL) as late:
            late.execute("SELECT set_config('kenning.tenant', 'acme', true)")
            late.execute(
                "INSERT INTO items (tenant, id, kind, user_id, session, seq, role, text, at,"
                " content_hash) VALUES ('acme', 'ev-late', 'event', 'ann', 'a-1', 99, 'user',"
                " 'late turn', now(), 'h')"
            )
            write(store, real_embedder, [(ACME, ev("newer turn"))])
            assert len(store.lexical(ACME, "turn", filters=ALL, limit=10)) == 2
            late.commit()
        hits = {h.id for h in store.lexical(ACME, "turn", filters=ALL, limit=10)}
        assert "ev-late" in hits and len(hits) == 3
    finally:
        store.close()


def test_driver_errors_become_kenning_errors(pg_url: str) -> None:
    with pytest.raises(InvalidInput):
        PostgresStore("mysql://nope")
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore("postgresql://kenning:wrong@127.0.0.1:5432/kenning_test")
    store = PostgresStore(pg_url)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.events(ACME)


def _tables_with(url: str, needle: str) -> list[str]:
    """Tenant tables (and columns) whose rows still hold *needle*, read as the tables' owner
    (row-level security does not confine it)."""
    found = []
    with psycopg.connect(url) as conn:
        for table in TENANT_TABLES:
            columns = [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s",
                    (table,),
                )
            ]
            for column in columns:
                hit = conn.execute(
                    f"SELECT 1 FROM {table} WHERE CAST({column} AS text) LIKE %s LIMIT 1",
                    (f"%{needle}%",),
                ).fetchone()
                if hit:
                    found.append(f"{table}.{column}")
    return found


def test_the_purge_and_erasure_leave_nothing_in_any_table(
    pg_url: str, real_embedder: MemoEmbedder
) -> None:
    """Retention and a user's erasure on PostgreSQL, checked in the raw tables: expired events
    and facts leave every table (held ones stay until the hold is released), and erasing a
    user removes their events, facts, pins, summaries, settings and vectors."""
    secret, when = "quetzalmarble", datetime(2026, 1, 5, tzinfo=UTC)
    with Memory.open(pg_url, embedder=real_embedder) as memory:
        memory.retention.set_policy("acme", TenantPolicy(episode_days=30, fact_days=60))
        old, held = Scope("acme", "dana", "old"), Scope("acme", "lee", "held")
        memory.add_events(old, [
            {"role": "user", "content": f"I live in Porto and my code word is {secret}.",
             "at": when},
            {"role": "user", "content": f"Please refund order A-{secret[:4]}9.", "at": when},
        ])  # fmt: skip
        memory.add_events(held, [{"role": "user", "content": f"held {secret} note", "at": when}])
        assert memory.wait_for_facts(60)
        assert [f.value for f in memory.facts.list(Scope("acme", "dana"))] == ["Porto"]
        memory.retention.hold(Scope("acme", "lee"), reason="case 42")
        with pytest.raises(LegalHoldActive, match="case 42"):
            memory.forget(Scope("acme", "lee"))
        assert memory.retention.purge("acme", now=when + timedelta(days=45)) == 2
        assert memory.retention.purge("acme", now=when + timedelta(days=61)) == 1  # the fact
        assert memory.store.purge_log("acme") == {"event": 2, "fact": 1}
        assert _tables_with(pg_url, secret) == ["items.text"]  # only the held note
        memory.retention.release(Scope("acme", "lee"))
        assert memory.forget(Scope("acme", "lee")) == 1
        assert _tables_with(pg_url, secret) == []

        dana = Scope("acme", "dana-erase-me")
        memory.facts.set_consent(dana, share_across_sessions=True, sensitive_facts=True)
        chat = Scope("acme", "dana-erase-me", "s1")
        memory.add_events(chat, [
            {"role": "user", "content": "I'm allergic to peanuts and I work at Netflix."},
            {"role": "user", "content": "Please refund order A-1042 for 42.50 EUR."},
        ])  # fmt: skip
        memory.context.set_pin(chat, "goal", "get the refund")
        memory.context.compact(chat, budget_tokens=200, model="gpt-4o")
        memory.context.record_usage(chat, model="gpt-4o", output_tokens=5)
        assert memory.wait_for_facts(60)
        assert memory.facts.list(dana)
        assert memory.forget(dana) > 0
        assert memory.store.user_settings(dana) == UserSettings()
        for needle in ("dana-erase-me", "Netflix", "A-1042"):
            assert _tables_with(pg_url, needle) == [], needle
