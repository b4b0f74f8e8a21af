"""Every statement the PostgreSQL store sends, checked against Citus's rules for tables
distributed by tenant.

Citus cannot run here. Instead a workload that takes every store path (writes, searches,
working-context state, jobs and their fenced leases, long-term facts and their extraction
queue, consent, policy, legal holds, the purge, procedures, stats, API keys and usage, erasure,
``kenning migrate``'s import) runs against real PostgreSQL while the driver's cursor records
each statement's text, and each one is checked:

- every reference to a tenant table is constrained by tenant: a ``tenant = <value>``
  predicate (a router query, one shard) or a join on another tenant table's ``tenant``
  (a colocated join);
- every join between tenant tables equates their tenants;
- no statement joins a reference table (store-wide, no tenant) with tenant data;
- only the queue and key-lookup functions span tenants (docs/scaling.md: the queue stays on
  the coordinator).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kenning import Memory, Scope, TaskUpdate, TenantPolicy
from kenning.records import ApiKey, JobStatus, KeyScope
from kenning.records.documents import DocumentQuery, NamespaceQuery, parse_document_filter
from kenning.search.documents import search_documents
from kenning.store.postgres.schema import MIGRATIONS, TENANT_TABLES
from kenning.store.records import DocumentWrite, IndexText
from tests.conformance.helpers import T0
from tests.conftest import MemoEmbedder

REFERENCE_TABLES = ("embedding_model", "kenning_migrations")
CROSS_TENANT = ("kenning_claim_compaction", "kenning_pending_compactions",
                "kenning_finish_compaction", "kenning_claim_extraction",
                "kenning_pending_extractions")  # fmt: skip
_IDENT = r"[a-z_][a-z0-9_]*"
_KEYWORDS = {"where", "on", "set", "select", "values", "group", "order", "limit", "join",
             "left", "using", "returning", "with", "as", "default", "for"}  # fmt: skip


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The text of every statement psycopg cursors execute while the fixture is active."""
    seen: list[str] = []

    def text(query: Any, cursor: Any) -> str:
        return query if isinstance(query, str) else query.as_string(cursor.connection)

    execute, executemany, copy = (
        psycopg.Cursor.execute,
        psycopg.Cursor.executemany,
        psycopg.Cursor.copy,
    )

    def recording_execute(self: Any, query: Any, *args: Any, **kw: Any) -> Any:
        seen.append(text(query, self))
        return execute(self, query, *args, **kw)

    def recording_executemany(self: Any, query: Any, *args: Any, **kw: Any) -> Any:
        seen.append(text(query, self))
        return executemany(self, query, *args, **kw)

    def recording_copy(self: Any, statement: Any, *args: Any, **kw: Any) -> Any:
        seen.append(text(statement, self))
        return copy(self, statement, *args, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording_execute)
    monkeypatch.setattr(psycopg.Cursor, "executemany", recording_executemany)
    monkeypatch.setattr(psycopg.Cursor, "copy", recording_copy)
    yield seen


def _workload(url: str, embedder: MemoEmbedder, tmp_path: Path) -> None:
    """Every store path, on two tenants."""
    demo = tmp_path / "demo.db"
    from kenning.cli.main import main

    assert main(["demo", "--db", str(demo)]) == 0
    with Memory.open(url, embedder=embedder) as memory:
        memory.store.import_sqlite(demo)  # type: ignore[attr-defined]
        for tenant in ("acme", "globex"):
            chat = Scope(tenant, "ann", f"{tenant}-s1")
            memory.add_events(chat, [
                {"role": "user", "content": "Refund 42.50 EUR for order A-1", "id": "m1",
                 "tags": ["billing"], "metadata": {"speaker": "Ann"}},
                {"role": "tool", "content": "ok", "tool_name": "refunds.create",
                 "tool_result": {"approval": {"id": "APR-1", "outcome": "approved"}}},
                {"role": "user", "content": "x " * 3000},
            ])  # fmt: skip
            memory.search(Scope(tenant), "refund order", filters={"tag": "billing"})
            memory.search(Scope(tenant, "ann"), "refund", filters={"meta.speaker": "Ann"})
            memory.assemble(chat, budget_tokens=6000, model="gpt-4o", system="Be brief.")
            memory.context.set_pin(chat, "entity_id", "A-1")
            memory.context.update_task(chat, TaskUpdate(task="refund"))
            memory.context.compact(chat, model="gpt-4o", budget_tokens=200)
            memory.store.enqueue_compaction(chat, model="m", budget=1, reason="r", at=T0)
            job = memory.store.claim_compaction(at=T0, lease_s=1)
            if job is not None:
                memory.store.finish_compaction(job.id, status=job.status, at=T0)
            memory.store.compaction_jobs(chat)
            memory.store.pending_compactions()
            _server(memory.store, tenant)
            _long_term(memory, tenant, chat)
            _documents(memory, tenant, embedder)
            memory.forget(chat, ids=[memory.get_session(chat)[0].id])
            memory.forget(Scope(tenant, "ann"))


def _server(store: Any, tenant: str) -> None:
    """The server's paths: fenced compaction leases, queue stats, API keys and usage."""
    store.enqueue_compaction(Scope(tenant, "ann", f"{tenant}-s9"), model="m", budget=1,
                             reason="r", at=T0)  # fmt: skip
    job = store.claim_compaction(at=T0, lease_s=60)
    assert job is not None and job.lease is not None
    assert store.renew_compaction(job.id, lease=job.lease, at=T0, lease_s=60)
    assert store.finish_compaction(job.id, status=JobStatus.DONE, at=T0, lease=job.lease)
    store.queue_stats()
    store.extraction_stats()
    store.put_api_key(ApiKey(f"key-{tenant}", tenant, (KeyScope.READ,), T0), secret_hash="h")
    store.api_key(f"key-{tenant}")
    store.api_keys(tenant)
    store.revoke_api_key(f"key-{tenant}", at=T0)
    store.tenant_usage(tenant)


def _documents(memory: Memory, tenant: str, embedder: MemoEmbedder) -> None:
    """Namespaced documents: writes, reads, listings, a ranked search, the sweep."""
    docs, scope, ns = memory.documents, Scope(tenant), ("memories", "ann")
    vec = embedder.embed(["tea"])[0]
    docs.put_documents(scope, [DocumentWrite(ns, "k", {"a": 1}, user="ann", ttl_minutes=1,
                                             texts=(IndexText("$", "tea", vec),))],
                       at=T0, model=embedder.model_id)  # fmt: skip
    docs.get_documents(scope, [(ns, "k")], refresh_at=T0)
    query = DocumentQuery(prefix=("memories",), filter=parse_document_filter({"a": 1}))
    docs.find_documents(scope, query, refresh_at=T0)
    docs.document_namespaces(scope, NamespaceQuery(prefix=("memories", "*")))
    search_documents(docs, scope, query, text="tea", vector=vec, model=embedder.model_id,
                     refresh_at=T0)  # fmt: skip
    docs.sweep_documents(tenant, now=T0)


def _long_term(memory: Memory, tenant: str, chat: Scope) -> None:
    """Facts (extracted, remembered, revoked), consent, policy, holds, the purge, procedures,
    usage and stats of one tenant."""
    ann = Scope(tenant, "ann")
    memory.retention.set_policy(tenant, TenantPolicy(episode_days=3650))
    memory.facts.set_consent(ann, share_across_sessions=True)
    memory.add_events(chat, [{"role": "user", "content": "I work at Netflix. I live in Porto."}])
    assert memory.wait_for_facts(60)
    fact = memory.facts.remember(chat, "favorite color", "green")
    memory.facts.list(ann, as_of=T0)
    memory.facts.history(ann, fact.id)
    memory.facts.revoke(ann, fact.id)
    memory.facts.profile(ann)
    memory.search(ann, "where does she work", k=5)
    memory.context.record_usage(chat, model="gpt-4o", output_tokens=20)
    memory.context.usage(chat)
    memory.retention.hold(ann, reason="audit")
    memory.retention.holds(tenant)
    memory.retention.purge(tenant, now=T0)
    memory.retention.release(ann)
    memory.retention.purge(tenant)
    tools = [{"name": "refunds.create", "parameters": {"type": "object"}}]
    proc = memory.procedures.record(ann, "refund", ["look up the order"], tools=tools)
    memory.procedures.approve(tenant, proc.id)
    memory.procedures.list(tenant)
    memory.store.stats(ann, now=T0)


def _references(sql: str) -> list[tuple[str, str]]:
    pattern = rf"\b(?:FROM|JOIN|UPDATE|INTO|USING)\s+({_IDENT})(?:\s+(?:AS\s+)?({_IDENT}))?"
    out = []
    for table, alias in re.findall(pattern, sql, re.I):
        if table in TENANT_TABLES:
            out.append((table, alias if alias and alias.lower() not in _KEYWORDS else table))
    return out


def _violations(sql: str) -> list[str]:
    """What in *sql* breaks the rules (empty when it keeps to one tenant)."""
    out = []
    for table, alias in _references(sql):
        insert = re.search(rf"INSERT INTO {table}(?:\s+AS\s+{alias})?\s*\(([^)]*)\)", sql)
        if insert:
            if "tenant" not in insert.group(1):
                out.append(f"insert into {table} without its tenant")
            continue
        qualified = re.search(
            rf"\b{alias}\.tenant\s*=\s*(%s|'[^']*'|{_IDENT}\.tenant)"
            rf"|{_IDENT}\.tenant\s*=\s*{alias}\.tenant\b",
            sql,
        )
        bare = alias == table and re.search(r"(?<![.\w])tenant\s*=\s*(%s|'[^']*')", sql)
        if not (qualified or bare):
            out.append(f"{table} ({alias}) is not constrained by tenant")
    for table, alias, condition in _joins(sql):
        if table in TENANT_TABLES and not re.search(
            rf"\b{alias}\.tenant = {_IDENT}\.tenant\b|\b{_IDENT}\.tenant = {alias}\.tenant\b",
            condition,
        ):
            out.append(f"join of {table} is not on tenant")
    out += [
        f"joins reference table {r}" for r in REFERENCE_TABLES if re.search(rf"\bJOIN\s+{r}\b", sql)
    ]
    return out


def _joins(sql: str) -> list[tuple[str, str, str]]:
    return re.findall(
        rf"JOIN ({_IDENT}) (?:AS )?({_IDENT}) ON (.*?)(?= (?:LEFT )?JOIN | WHERE | ORDER |$)",
        sql,
        re.S,
    )


def test_the_checker_catches_what_breaks_the_rules() -> None:
    assert _violations("SELECT 1 FROM items i WHERE i.tenant = %s") == []
    assert _violations("SELECT 1 FROM items i WHERE i.id = %s")
    assert _violations("SELECT 1 FROM items i JOIN pins p ON p.id = i.id WHERE i.tenant = %s")
    assert _violations("INSERT INTO pins (id, session) VALUES (%s, %s)")
    assert _violations("SELECT 1 FROM items i JOIN embedding_model m ON true WHERE i.tenant = %s")


def test_every_statement_keeps_to_one_tenant(
    statements: list[str], pg_url: str, real_embedder: MemoEmbedder, tmp_path: Path
) -> None:
    _workload(pg_url, real_embedder, tmp_path)
    # The migrations run when the workload opens a database that lacks one: DDL, not requests.
    scripts = {script for _, script in MIGRATIONS}
    checked = {sql for sql in statements if _references(sql) and sql not in scripts}
    joins = 0
    for sql in checked:
        if any(fn in sql for fn in CROSS_TENANT) or sql.lstrip().startswith(("CREATE", "TRUNCATE")):
            continue
        assert _violations(sql) == [], sql
        joins += sum(1 for table, _, _ in _joins(sql) if table in TENANT_TABLES)
    # The workload reached every tenant table, and joins between them.
    touched = {t for sql in checked for t, _ in _references(sql)}
    assert touched >= set(TENANT_TABLES) - {"index_log_floor"}, set(TENANT_TABLES) - touched
    assert len(checked) >= 40 and joins >= 8
