"""The command line on PostgreSQL: ``--store URL`` on every command, and ``kenning migrate``
from a SQLite file (lossless, vectors included, safe to re-run)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
import pytest

from kenning import Memory, Scope, TenantPolicy
from kenning.cli.main import main
from kenning.settings import Settings
from kenning.store.postgres.schema import TENANT_TABLES
from tests.integration.test_cli import long_term_flow

LONG_TERM_TABLES = ("facts", "extraction_progress", "user_settings", "tenant_policy",
                    "legal_holds", "purge_log", "procedures", "token_usage")  # fmt: skip
QUERIES = ("who approved the refund?", "what food does she not eat", "broken glass delivery")


def _table_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        out = {}
        for table in TENANT_TABLES:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            out[table] = int(row[0]) if row else 0
        return out


def test_migrate_moves_the_demo_store_losslessly(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "demo.db"
    assert main(["demo", "--db", str(db)]) == 0
    capsys.readouterr()
    _add_long_term(db)
    assert main(["migrate", "--from", str(db), "--to", pg_url, "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts and all(c["ok"] and c["source"] == c["destination"] for c in counts)
    assert {c["tenant"] for c in counts} == {"acme", "globex", "initech"}
    copied_tables = {c["table"] for c in counts if c["source"]}
    assert copied_tables >= set(LONG_TERM_TABLES)
    copied = _table_counts(pg_url)
    # Running it again adds nothing.
    assert main(["migrate", "--from", str(db), "--to", pg_url]) == 0
    assert "MISSING" not in capsys.readouterr().out
    assert _table_counts(pg_url) == copied

    quiet = Settings(track_access=False)
    with (
        Memory.open(db, settings=quiet) as before,
        Memory.open(pg_url, settings=quiet) as after,
    ):
        for tenant in ("acme", "globex"):
            scope = Scope(tenant)
            assert after.store.events(scope) == before.store.events(scope)
            assert after.store.pins(scope, history=True) == before.store.pins(scope, history=True)
            assert _long_term_state(after, tenant) == _long_term_state(before, tenant)
            assert after.store.summaries(scope, include_replaced=True) == before.store.summaries(
                scope, include_replaced=True
            )
            # Audit entries get new ids; everything else is the same.
            assert [replace(a, id=0) for a in after.store.audit_log(scope)] == [
                replace(a, id=0) for a in before.store.audit_log(scope)
            ]
            for query in QUERIES:
                old, new = before.search(scope, query, k=10), after.search(scope, query, k=10)
                # Same hits, same scores: the vectors came over unchanged, nothing re-embedded.
                assert [h.id for h in new] == [h.id for h in old]
                assert [h.score for h in new] == pytest.approx([h.score for h in old], abs=1e-6)
        session = Scope("acme", "dana", "s-2026-03-02")
        windows = [
            m.assemble(session, budget_tokens=600, model="gpt-4o", system="Be brief.")
            for m in (before, after)
        ]
        assert windows[1].messages == windows[0].messages


def _add_long_term(db: Path) -> None:
    """Facts (active and closed), consent, a tenant policy, a hold, a playbook, token usage,
    the purge log and extraction progress in the SQLite file (no model: facts stay lexical)."""
    dana = Scope("acme", "dana")
    with Memory.open(db, embedder=None) as memory:
        chat = Scope("acme", "dana", "s-2026-03-09")
        memory.add_events(chat, [{"role": "user", "content": "I live in Porto. I love jazz."}])
        assert memory.wait_for_facts(60)
        fact = memory.facts.remember(chat, "favorite color", "green")
        memory.facts.revoke(dana, fact.id)
        memory.facts.set_consent(dana, share_across_sessions=True)
        memory.retention.set_policy("acme", TenantPolicy(episode_days=3650, fact_days=365))
        memory.retention.hold(Scope("acme", "lee"), reason="case 7")
        memory.procedures.record(Scope("acme"), "refund", ["look up the order"], tools=[])
        memory.context.record_usage(chat, model="gpt-4o", output_tokens=12)
        # A tenant that holds only its policy and what the purge says it removed.
        memory.retention.set_policy("initech", TenantPolicy(episode_days=1))
        memory.add_events(Scope("initech", "bo", "i-1"), [{"role": "user", "content": "hi"}])
        assert memory.retention.purge("initech", now=datetime(2100, 1, 1, tzinfo=UTC)) == 1


def _long_term_state(memory: Memory, tenant: str) -> list[object]:
    store = memory.store
    users = {s.scope.user for s in store.events(Scope(tenant))} | {"dana", "lee"}
    return [
        store.facts(Scope(tenant), statuses=None),
        store.tenant_policy(tenant),
        [store.user_settings(Scope(tenant, u)) for u in sorted(u for u in users if u)],
        store.holds(tenant),
        store.procedures(tenant),
        store.purge_log(tenant),
        [store.usage(Scope(tenant, "dana", "s-2026-03-09"))] if tenant == "acme" else [],
        sorted((j.scope, j.done_seq) for j in store.pending_extractions(limit=1000)
               if j.scope.tenant == tenant),
    ]  # fmt: skip


def test_every_command_takes_a_store_url(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.jsonl"
    rows = [
        {"tenant": "t", "user": "u", "session": "s", "role": "user",
         "content": "My kettle arrived broken, order K-77"},
        {"tenant": "t", "user": "u", "session": "s", "role": "assistant",
         "content": "Sorry! A replacement kettle is on its way."},
    ]  # fmt: skip
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["ingest", str(events), "--store", pg_url]) == 0
    assert "***" in capsys.readouterr().out  # the password is never printed
    assert main(["ingest", str(events), "--store", pg_url]) == 0  # re-run: nothing twice
    assert "skipped 2" in capsys.readouterr().out
    # Another user's line for the stored session is refused before anything is written.
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({**r, "user": "v", "content": "v's"}) + "\n"
                             for r in rows))  # fmt: skip
    assert main(["ingest", str(other), "--store", pg_url]) == 2
    assert "nothing was written" in capsys.readouterr().err
    assert main(["search", "broken kettle", "--store", pg_url, "--tenant", "t", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 2 and "kettle" in hits[0]["content"]
    common = ["--store", pg_url, "--tenant", "t", "--user", "u", "--session", "s"]
    assert main(["pins", "set", *common, "--kind", "amount", "--amount", "12.50",
                 "--currency", "eur", "--key", "refund"]) == 0  # fmt: skip
    assert main(["pins", "list", *common, "--json"]) == 0
    capsys.readouterr()
    assert main(["assemble", *common, "--budget", "400", "--model", "gpt-4o", "--json"]) == 0
    window = json.loads(capsys.readouterr().out)
    assert "12.50 EUR" in json.dumps(window)
    assert main(["demo", "--store", pg_url]) == 0
    assert "--store 'postgresql://kenning:***@" in capsys.readouterr().out


def test_long_term_commands_take_a_store_url(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    long_term_flow(["--store", pg_url], tmp_path, capsys)
    capsys.readouterr()
    assert main(["policy", "set", "--store", pg_url, "--tenant", "acme", "--episode-days", "30",
                 "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["episode_days"] == 30.0


def test_a_store_that_is_not_a_url_is_a_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "x", "--store", str(tmp_path / "k.db"), "--tenant", "t"]) == 2
    assert "is not a PostgreSQL URL" in capsys.readouterr().err
    bad = "postgresql://kenning:wrong@127.0.0.1:5432/kenning_test"
    assert main(["search", "x", "--store", bad, "--tenant", "t"]) == 2
    err = capsys.readouterr().err
    assert "[store_error]" in err and "wrong" not in err
    assert main(["migrate", "--from", str(tmp_path / "none.db"), "--to", bad]) == 2
    with pytest.raises(SystemExit):
        main(["search", "x", "--db", "a.db", "--store", bad, "--tenant", "t"])


def test_migrate_moves_namespaced_documents_with_their_vectors(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from kenning.records.documents import DocumentQuery
    from kenning.search.documents import search_documents
    from kenning.store.records import DocumentWrite, IndexText

    db, acme = tmp_path / "docs.db", Scope("acme")
    vec = np.asarray([0.6, 0.8], dtype=np.float32)
    writes = [
        DocumentWrite(("memories", "dana"), "k1", {"text": "refund approved", "n": 1.5},
                      user="dana", texts=(IndexText("text", "refund approved", vec),),
                      ttl_minutes=60),
        DocumentWrite(("memories", "dana"), "k2", {"text": "no texts"}, user="dana"),
    ]  # fmt: skip
    with Memory.open(db, embedder=None) as memory:
        memory.documents.put_documents(acme, writes, at=datetime(2026, 1, 1, tzinfo=UTC),
                                       model="m")  # fmt: skip
        before = memory.documents.find_documents(acme, DocumentQuery())
    for _ in range(2):  # running it again adds nothing
        assert main(["migrate", "--from", str(db), "--to", pg_url, "--json"]) == 0
        counts = json.loads(capsys.readouterr().out)
        assert all(c["ok"] for c in counts)
        assert {c["table"]: c["destination"] for c in counts if c["table"].startswith("doc")} == {
            "documents": 2, "document_texts": 1, "document_state": 1}  # fmt: skip
    with Memory.open(pg_url, embedder=None) as memory:
        assert memory.documents.find_documents(acme, DocumentQuery()) == before
        hits = search_documents(memory.documents, acme, DocumentQuery(), text="refund",
                                vector=vec, model="m")  # fmt: skip
        assert [(h.document.key, round(h.score or 0, 6)) for h in hits] == [("k1", 1.0),
                                                                           ("k2", 0.0)]  # fmt: skip
