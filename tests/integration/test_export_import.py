"""``kenning export`` / ``kenning import``: a tenant or user moved whole and losslessly between
stores and backends (real SQLite, real PostgreSQL, the real local model), imported twice with
no change, bad files refused with nothing written, ``GET /v1/export`` on a served process, and
conversations brought in from ChatGPT, Claude and OpenAI files."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
import pytest

from kenning import Client, Memory, Scope, TaskUpdate, TenantPolicy
from kenning.archive import export_lines, import_lines
from kenning.cli.commands import _sample_rows
from kenning.cli.main import main
from kenning.errors import InvalidArchive, InvalidScope, ScopeConflict
from kenning.longterm.service import LongTermSettings
from kenning.records.documents import DocumentWrite, IndexText
from kenning.settings import Settings
from kenning.store.postgres.schema import TENANT_TABLES
from tests.served import Served, serve

CHATS = Path(__file__).parents[1] / "unit" / "data" / "chats"
QUIET = Settings(track_access=False, longterm=LongTermSettings(extract=False))
QUERIES = ("who approved the refund?", "what food does she not eat", "broken glass delivery",
           "where does Dana live now")  # fmt: skip
CHAT = Scope("acme", "dana", "s-2026-03-02")


def _fill(db: str | Path) -> None:
    """A real conversation (the bundled sample, real model) and every other kind of record:
    facts with a superseded and a revoked one, task state, summaries and their audit,
    consent, policy, holds, playbook versions, usage, documents with vectors."""
    with Memory.open(db) as memory:
        memory.ingest(_sample_rows())
        home = Scope("acme", "dana", "s-home")
        memory.add_events(home, [{"role": "user", "content": "I live in Porto.",
                                  "at": "2026-01-05T10:00:00Z"}])  # fmt: skip
        memory.add_events(home, [{"role": "user", "content": "I moved to Lisbon.",
                                  "at": "2026-02-05T10:00:00Z"}])  # fmt: skip
        assert memory.wait_for_facts(120)
        dana = Scope("acme", "dana")
        fact = memory.facts.remember(home, "favorite color", "green")
        memory.facts.revoke(dana, fact.id)
        memory.facts.set_consent(dana, share_across_sessions=True)
        task = TaskUpdate(task="Refund order A-1042", status="in_progress",
                          decisions=["refund, not replace"])  # fmt: skip
        memory.context.update_task(CHAT, task)
        # A budget whose segments a summary shrinks (one that would not is left raw).
        memory.context.compact(CHAT, budget_tokens=300, model="gpt-4o")
        memory.context.record_usage(CHAT, model="gpt-4o", output_tokens=12)
        memory.retention.set_policy("acme", TenantPolicy(episode_days=3650, fact_days=365))
        memory.retention.hold(Scope("acme", "lee"), reason="case 7")
        for steps in (["look up the order"], ["look up the order", "refund"]):
            memory.procedures.record(Scope("acme"), "refund", steps, tools=[])
        assert memory.embedder is not None
        vec = memory.embedder.embed(["Dana prefers tea over coffee"])[0]
        memory.documents.put_documents(Scope("acme"), [
            DocumentWrite(("prefs", "dana"), "drinks", {"likes": "tea"}, user="dana",
                          texts=(IndexText("$.likes", "Dana prefers tea over coffee", vec),)),
            DocumentWrite(("shop",), "hours", {"open": "9-17"}),
        ], at=datetime(2026, 3, 1, tzinfo=UTC), model=memory.embedder.model_id)  # fmt: skip


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("source") / "source.db"
    _fill(db)
    return db


def _records(memory: Memory, scope: Scope, *, vectors: bool = False) -> list[str]:
    """The export's record lines (the header, which holds its own time, left out)."""
    return list(export_lines(memory.store, scope, vectors=vectors))[1:]


def _kinds(lines: list[str]) -> set[str]:
    return {json.loads(line)["kind"] for line in lines}


def _sqlite_counts(db: Path) -> dict[str, int]:
    """Rows of every table of the file, kenning's and SQLite's own."""
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def _pg_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
                for t in TENANT_TABLES}  # fmt: skip


def _same_answers(before: Memory, after: Memory) -> None:
    """Search and assemble give the same results on both memories."""
    for query in QUERIES:
        for scope in (Scope("acme"), Scope("acme", "dana")):
            old, new = before.search(scope, query, k=8), after.search(scope, query, k=8)
            assert [h.id for h in new] == [h.id for h in old], query
            assert [h.score for h in new] == pytest.approx([h.score for h in old], abs=1e-4)
    windows = [m.assemble(CHAT, budget_tokens=600, model="gpt-4o", system="Be brief.",
                          query="refund") for m in (before, after)]  # fmt: skip
    assert windows[1].messages == windows[0].messages


def _import(db: str | Path, lines: list[str], **kwargs: object) -> dict[str, int]:
    with Memory.open(db, settings=QUIET) as memory:
        report = import_lines(
            memory.store, lines, embedder=memory.embedder, settings=memory.settings, **kwargs
        )  # type: ignore[arg-type]
        return report.added


def test_a_tenant_moves_whole_and_a_second_import_changes_nothing(
    source: Path, tmp_path: Path
) -> None:
    with Memory.open(source, settings=QUIET) as memory:
        lines = list(export_lines(memory.store, Scope("acme")))
    records = lines[1:]
    assert _kinds(records) >= {
        "session", "event", "fact", "pin", "summary", "compaction", "task_state", "ledger",
        "extraction", "consent", "policy", "hold", "procedure", "usage", "document",
    }  # fmt: skip
    facts = [json.loads(r) for r in records if json.loads(r)["kind"] == "fact"]
    assert {"superseded", "revoked", "active"} <= {f["fact"]["status"] for f in facts}
    dest = tmp_path / "dest.db"
    added = _import(dest, lines)
    assert added["event"] == sum(1 for r in records if json.loads(r)["kind"] == "event")
    counts = _sqlite_counts(dest)
    # The second import of the same file changes no table of the file at all.
    assert sum(_import(dest, lines).values()) == 0
    assert _sqlite_counts(dest) == counts
    with Memory.open(source, settings=QUIET) as before, Memory.open(dest, settings=QUIET) as after:
        assert _records(after, Scope("acme")) == records
        assert after.store.tenant_usage("acme") == before.store.tenant_usage("acme")
        _same_answers(before, after)


def test_one_user_moves_without_the_others(source: Path, tmp_path: Path) -> None:
    with Memory.open(source, settings=QUIET) as memory:
        lines = list(export_lines(memory.store, Scope("acme", "dana")))
        whole = _records(memory, Scope("acme"))
    assert json.loads(lines[0])["user"] == "dana"
    rows = [json.loads(r) for r in lines[1:]]
    assert all(r.get("user_id") in ("dana", None) for r in rows)
    assert not _kinds(lines[1:]) & {"policy", "purge"}  # the tenant's own
    dest = tmp_path / "dana.db"
    _import(dest, lines, tenant="acme2")
    with Memory.open(dest, settings=QUIET) as memory:
        moved = _records(memory, Scope("acme2"))
    assert 0 < len(moved) < len(whole)
    assert set(moved) <= {line for line in whole}  # every line as it was in the tenant


def test_a_bad_file_is_refused_by_line_and_changes_nothing(source: Path, tmp_path: Path) -> None:
    with Memory.open(source, settings=QUIET) as memory:
        lines = list(export_lines(memory.store, Scope("acme")))
    dest = tmp_path / "dest.db"
    _import(dest, lines[:5])
    counts = _sqlite_counts(dest)
    wrong_version = [lines[0].replace('"version": 1', '"version": 9'), *lines[1:]]
    malformed = [*lines[:7], lines[7][:-5], *lines[8:]]
    unknown = [*lines, '{"kind": "hologram", "id": "x"}']
    for bad, line, words in (
        (wrong_version, 1, "version 9"), (malformed, 8, "not JSON"),
        (unknown, len(lines) + 1, "unknown record kind 'hologram'"),
    ):  # fmt: skip
        with pytest.raises(InvalidArchive, match=words) as caught:
            _import(dest, bad)
        assert caught.value.line == line
        assert _sqlite_counts(dest) == counts
    # A clash found while writing (a session of another user) rolls the whole file back.
    clash = [json.loads(x) for x in lines]
    first = clash[1]
    assert first["kind"] == "session"
    with Memory.open(dest, settings=QUIET) as memory:
        stored = memory.store.session_owners("acme", [first["session"]])
    assert stored  # the first lines were imported, so the session is here
    first["user_id"] = "mallory"
    with pytest.raises(ScopeConflict, match="belongs to another user"):
        _import(dest, [json.dumps(r) for r in clash])
    assert _sqlite_counts(dest) == counts


def test_sqlite_to_postgresql_to_sqlite_gives_the_same_records_and_answers(
    source: Path, tmp_path: Path, pg_url: str
) -> None:
    from tests.pg import PG_APP_URL

    with Memory.open(source, settings=QUIET) as memory:
        lines = list(export_lines(memory.store, Scope("acme")))
    # Into PostgreSQL without vectors: embedded there by the real model.
    assert _import(PG_APP_URL, lines)["event"] > 0
    counts = _pg_counts(pg_url)
    assert sum(_import(PG_APP_URL, lines).values()) == 0
    assert _pg_counts(pg_url) == counts
    # And back to SQLite with PostgreSQL's vectors.
    with Memory.open(PG_APP_URL, settings=QUIET) as pg:
        back = list(export_lines(pg.store, Scope("acme"), vectors=True))
        assert _records(pg, Scope("acme")) == lines[1:]
    assert json.loads(back[0])["vectors"]["dimension"] == 384
    dest = tmp_path / "back.db"
    assert _import(dest, back)["vector"] > 0
    with (
        Memory.open(source, settings=QUIET) as first,
        Memory.open(PG_APP_URL, settings=QUIET) as pg,
        Memory.open(dest, settings=QUIET) as last,
    ):
        assert _records(last, Scope("acme")) == lines[1:]
        assert _records(last, Scope("acme"), vectors=True) == back[1:]
        _same_answers(first, pg)
        _same_answers(first, last)


def test_vectors_travel_bit_for_bit(source: Path, tmp_path: Path) -> None:
    with Memory.open(source, settings=QUIET) as memory:
        lines = list(export_lines(memory.store, Scope("acme"), vectors=True))
    vectors = [json.loads(x) for x in lines[1:] if json.loads(x)["kind"] == "vector"]
    assert vectors and all(len(v["vec"]) > 0 for v in vectors)
    dest = tmp_path / "v.db"
    with Memory.open(dest, embedder=None, settings=QUIET) as memory:  # no model needed
        report = import_lines(memory.store, lines)
        assert report.embedded == 0 and report.added["vector"] == len(vectors)
        assert _records(memory, Scope("acme"), vectors=True) == lines[1:]


@pytest.fixture
def served(source: Path, tmp_path: Path) -> Iterator[Served]:
    db = tmp_path / "served.db"
    with Memory.open(source, settings=QUIET) as memory:
        lines = list(export_lines(memory.store, Scope("acme"), vectors=True))
    _import(db, lines)
    memory = Memory.open(db, settings=QUIET)
    try:
        with serve(memory) as s:
            yield s
    finally:
        memory.close()


def test_the_served_export_is_the_key_tenants_and_nothing_else(served: Served) -> None:
    acme, globex = served.key("acme"), served.key("globex")
    url = f"{served.url}/v1/export"
    assert httpx.get(url).status_code == 401
    r = httpx.get(url, headers={"Authorization": f"Bearer {acme}"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    lines = r.text.splitlines()
    assert lines[1:] == _records(served.memory, Scope("acme"))
    # Another tenant's key reads its own (empty) tenant, whatever it asks for.
    other = httpx.get(url, params={"user": "dana"}, headers={"Authorization": f"Bearer {globex}"})
    assert other.status_code == 200
    assert [json.loads(x)["tenant"] for x in other.text.splitlines()] == ["globex"]
    mine = httpx.get(url, params={"user": "dana", "vectors": "true"},
                     headers={"Authorization": f"Bearer {acme}"}).text.splitlines()  # fmt: skip
    assert mine[1:] == _records(served.memory, Scope("acme", "dana"), vectors=True)
    bad = httpx.get(url, params={"user": "no spaces"}, headers={"Authorization": f"Bearer {acme}"})
    assert bad.status_code == 422
    with Client(served.url, api_key=acme) as client:
        assert client.export(Scope("acme"))[1:] == lines[1:]
    with Client(served.url, api_key=globex) as client, pytest.raises(InvalidScope):
        client.export(Scope("acme"))


def test_conversations_from_chatgpt_claude_and_openai_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "chats.db")
    who = ["--db", db, "--tenant", "acme", "--user", "dana", "--json"]
    for name, fmt, messages in (
        ("chatgpt_conversations.json", [], 5),
        ("claude_conversations.json", ["--format", "claude"], 2),
        ("openai_messages.json", [], 3),
        ("openai_messages.jsonl", ["--format", "openai"], 2),
    ):  # fmt: skip
        assert main(["import", str(CHATS / name), *who, *fmt]) == 0
        done = json.loads(capsys.readouterr().out.splitlines()[-1])
        assert done["added"] == done["messages"] == messages, name
        assert main(["import", str(CHATS / name), *who, *fmt]) == 0  # again: nothing added
        assert json.loads(capsys.readouterr().out.splitlines()[-1])["added"] == 0
    with Memory.open(db, settings=QUIET) as memory:
        kettle = Scope("acme", "dana", "chatgpt-6795c2a1-0b7e-8000-9b1a-3f2b0c9e1d11")
        events = memory.get_session(kettle)
        assert [e.role.value for e in events] == ["user", "assistant", "user"]
        assert events[1].at == datetime.fromtimestamp(1767225620.25, UTC)
        hits = memory.search(Scope("acme", "dana"), "cracked kettle lid", k=3).hits
        assert hits and hits[0].scope.session == kettle.session
        assert len(memory.store.user_sessions(Scope("acme", "dana"))) == 5
    bad = tmp_path / "bad.json"
    bad.write_text('[{"mapping": {}, "current_node": "gone"}]')
    assert main(["import", str(bad), *who]) == 2
    assert "[invalid_archive]" in capsys.readouterr().err


def test_the_commands_write_and_read_a_file(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "acme.jsonl"
    assert main(["export", "--db", str(source), "--tenant", "acme", "--out", str(out)]) == 0
    assert json.loads(out.read_text().splitlines()[0])["format"] == "kenning-export"
    dest = str(tmp_path / "cli.db")
    assert main(["import", str(out), "--db", dest, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["tenant"] == "acme" and first["added"]["event"] > 0
    assert first["embedded"] > 0  # the file has no vectors: embedded on the way in
    assert main(["import", str(out), "--db", dest, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert sum(again["added"].values()) == 0 and again["embedded"] == 0
    broken = tmp_path / "broken.jsonl"
    broken.write_text(out.read_text().replace('"kind": "pin"', '"kind": "pinn"', 1))
    assert main(["import", str(broken), "--db", dest]) == 2
    err = capsys.readouterr().err
    assert "[invalid_archive]" in err and "unknown record kind 'pinn'" in err
