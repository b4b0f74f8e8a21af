"""The action log in the window, on every backend: the goal tier shows what the agent did and
which files it touched (as the tenant's policy names the file tools), counted exactly, within
the tier's cap, still there after compaction replaced the turns, and gone with an erased
event. The policy's file tools travel through REST, the client and ``kenning policy set``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kenning import Client, InvalidInput, Memory, Scope, TenantPolicy
from kenning.cli.main import main
from kenning.context.assembler import ContextSettings
from kenning.context.window import Tier, TierCaps
from kenning.settings import Settings
from kenning.store.protocol import Store
from kenning.tokens import count_messages, tokenizer_for
from tests.served import ADMIN, serve

S = Scope("acme", "ann", "debug-1")
POLICY = TenantPolicy(file_read_tools=("read_file",), file_write_tools=("write_file", "patch"),
                      file_path_args=("path", "paths"))  # fmt: skip


def _session(n_files: int = 6) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"role": "user", "content": "the login test fails, fix it"}]
    for i in range(n_files):
        events += [
            {"role": "assistant", "content": f"reading module {i}", "tool_name": "read_file",
             "tool_args": {"path": f"src/auth/mod{i}.py"}, "metadata": {"tool_call_id": f"r{i}"}},
            {"role": "tool", "content": f"def f{i}(): return {i} " + "x " * 120,
             "tool_name": "read_file", "metadata": {"tool_call_id": f"r{i}"}},
        ]  # fmt: skip
    events += [
        {"role": "tool", "tool_name": "write_file", "tool_args": {"path": "/etc/passwd"},
         "tool_result": {"error": "permission denied"}},
        {"role": "tool", "tool_name": "patch", "tool_args": {"paths": ["src/auth/mod1.py",
         "tests/test_login.py"]}, "tool_result": {"applied": 2}},
        {"role": "tool", "tool_name": "run_tests", "tool_args": {"k": "login"},
         "tool_result": {"passed": 12}},
        {"role": "user", "content": "does it pass now?"},
    ]  # fmt: skip
    return events


@pytest.fixture
def memory(store: Store) -> Iterator[Memory]:
    with Memory(store, embedder=None) as m:
        m.retention.set_policy("acme", POLICY)
        yield m


def _goal(window: Any) -> str:
    return next(m["content"] for m in window.messages if (m["content"] or "").startswith("Goal"))


def test_the_goal_tier_shows_actions_and_files_counted_exactly(memory: Memory) -> None:
    memory.add_events(S, _session())
    log = memory.context.action_log(S)
    assert dict(log.calls) == {"read_file": 6, "write_file": 1, "patch": 1, "run_tests": 1}
    assert dict(log.errors) == {"write_file": 1}
    assert list(log.files_written) == ["src/auth/mod1.py", "tests/test_login.py"]
    assert "/etc/passwd" not in log.files_written  # the write failed
    assert len(log.files_read) == 6
    window = memory.assemble(S, budget_tokens=4_000, model="gpt-4o", system="You fix bugs.")
    goal = _goal(window)
    assert "Files written: src/auth/mod1.py, tests/test_login.py" in goal
    assert "Files read: src/auth/mod5.py, src/auth/mod4.py" in goal
    assert "Tool calls so far: read_file 6, patch 1, run_tests 1, write_file 1 (1 failed)" in goal
    assert 'Did #14: write_file {"path":"/etc/passwd"} -> error' in goal
    assert window.tokens == count_messages(tokenizer_for("gpt-4o"), window.messages)
    assert window.tokens <= window.budget


def test_the_digest_survives_compaction_and_the_tier_cap(store: Store) -> None:
    settings = Settings(context=ContextSettings(caps=TierCaps(goal=0.1), retrieve=False))
    with Memory(store, embedder=None, settings=settings) as memory:
        memory.retention.set_policy("acme", POLICY)
        memory.add_events(S, _session(n_files=20))
        window = memory.assemble(S, budget_tokens=1_200, model="gpt-4o", system="You fix bugs.")
        assert memory.context.summaries(S), "the small budget compacted the session"
        tail = [m for m in window.messages if m["role"] != "system"]
        assert not any("mod0.py" in (m["content"] or "") for m in tail)  # its turns left the tail
        goal = _goal(window)
        assert "Files written: src/auth/mod1.py" in goal
        assert "Files read: src/auth/mod19.py, src/auth/mod18.py" in goal  # the newest files read
        account = window.tiers[Tier.GOAL]
        assert account.cap is not None and account.tokens <= account.cap
        assert any(s.reason == "tier cap" for s in account.skipped)  # oldest actions dropped
        assert window.tokens == count_messages(tokenizer_for("gpt-4o"), window.messages)


def test_an_erased_call_leaves_the_log(memory: Memory) -> None:
    written = memory.add_events(S, _session())
    assert "/etc/passwd" in _goal(
        memory.assemble(S, budget_tokens=4_000, model="gpt-4o", system="s")
    )
    failed = next(e for e in written if e.tool_args == {"path": "/etc/passwd"})
    memory.forget(S, ids=[failed.id])
    log = memory.context.action_log(S)
    assert "write_file" not in log.calls and not log.errors
    window = memory.assemble(S, budget_tokens=4_000, model="gpt-4o", system="s")
    assert "/etc/passwd" not in _goal(window)


def test_file_tools_travel_through_rest_and_the_client(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder=None) as memory, serve(memory) as served:
        with Client(served.url, api_key=ADMIN) as admin:
            admin.retention.set_policy("acme", POLICY)
        bad = {"file_path_args": [" path"]}
        r = httpx.put(f"{served.url}/v1/admin/tenants/acme/policy", json=bad,
                      headers={"Authorization": f"Bearer {ADMIN}"})  # fmt: skip
        assert r.status_code == 422 and "file_path_args" in r.text
        assert memory.retention.policy("acme") == POLICY  # nothing changed
        with Client(served.url, api_key=served.key("acme")) as client:
            assert client.retention.policy("acme") == POLICY
            client.add_events(S, _session(n_files=2))
            window = client.assemble(S, budget_tokens=4_000, model="gpt-4o", system="s")
            assert "Files read: src/auth/mod1.py, src/auth/mod0.py" in _goal(window)


def test_policy_set_takes_the_file_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Memory.open(tmp_path / "k.db", embedder=None).close()
    tenant = ["--db", str(tmp_path / "k.db"), "--tenant", "acme"]
    assert main(["policy", "set", *tenant, "--file-read-tools", "read_file, grep",
                 "--file-write-tools", "write_file", "--json"]) == 0  # fmt: skip
    shown = json.loads(capsys.readouterr().out)
    assert shown["file_read_tools"] == ["read_file", "grep"]
    assert shown["file_write_tools"] == ["write_file"]
    assert shown["file_path_args"] == ["path", "file_path", "filename"]
    assert main(["policy", "set", *tenant, "--file-path-args", "target"]) == 0
    assert "file_path_args: target" in capsys.readouterr().out
    assert main(["policy", "set", *tenant, "--file-read-tools", " , "]) == 2
    assert "--file-read-tools takes tool names" in capsys.readouterr().err


def test_a_bad_file_tool_list_is_refused() -> None:
    with pytest.raises(InvalidInput, match="file_write_tools"):
        TenantPolicy(file_write_tools=["write_file"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="file_path_args"):
        TenantPolicy(file_path_args=("",))


def test_the_log_reads_only_tool_events(memory: Memory, store: Store) -> None:
    memory.add_events(S, _session(n_files=2))
    tools = store.events(S, tools=True)
    assert [e.seq for e in tools] == [2, 3, 4, 5, 6, 7, 8]  # calls and results, no user turns
    assert store.events(S, tools=True, after_seq=5, limit=1)[0].seq == 6
    assert len(store.events(S)) == 9


def test_an_erase_by_another_process_reaches_a_cached_log(store: Store) -> None:
    with Memory(store, embedder=None) as mine, Memory(store, embedder=None) as other:
        mine.retention.set_policy("acme", POLICY)
        written = mine.add_events(S, _session(n_files=2))
        assert "/etc/passwd" in _goal(mine.assemble(S, budget_tokens=4_000, model="gpt-4o",
                                                    system="s"))  # fmt: skip
        failed = next(e for e in written if e.tool_args == {"path": "/etc/passwd"})
        other.forget(S, ids=[failed.id])  # mine's cache is not told: the erase log is
        window = mine.assemble(S, budget_tokens=4_000, model="gpt-4o", system="s")
        assert "/etc/passwd" not in _goal(window)
        assert "write_file" not in mine.context.action_log(S).calls
