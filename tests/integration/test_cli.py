"""The ``kenning`` console script as a user runs it (subprocess) and in-process."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from kenning.cli.main import main

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "ORT_DISABLE_TELEMETRY": "1"}


def kenning(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("kenning")
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300
    )


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_demo_prints_scored_hits_with_provenance(tmp_path: Path) -> None:
    done = kenning("demo", "--db", str(tmp_path / "demo.db"))
    assert done.returncode == 0, done.stderr
    assert "ingested 23 sample events" in done.stdout
    assert "Priya" in done.stdout  # who approved the refund
    assert "vegetarian" in done.stdout
    assert "cosine=" in done.stdout and "bm25=" in done.stdout
    assert "s-2026-03-02 #" in done.stdout  # session and sequence number
    assert "must never appear" not in done.stdout  # another tenant's line
    # Dana moved: the profile states where she lives now, the old address is history.
    lines = done.stdout.splitlines()
    assert any(row.split()[:3] == ["superseded", "location:", "Berlin"] for row in lines)
    assert any(row.split()[:3] == ["active", "location:", "Munich"] for row in lines)
    profile = done.stdout.split("What is known about this user")[1].split("[system]")[0]
    assert "\nlocation: Munich\n" in profile and "\nlocation: Berlin\n" not in profile
    assert "corrected location: Berlin -> Munich" in profile


def test_ingest_then_search_json(tmp_path: Path) -> None:
    rows = [
        {"tenant": "t1", "user": "u1", "session": "s1", "role": "user",
         "content": f"message number {i} about the espresso machine", "at": 1700000000 + i}
        for i in range(1200)
    ] + [
        {"tenant": "t1", "user": "u2", "session": "s2", "role": "user",
         "content": "my kettle shattered on the floor", "metadata": {"speaker": "Kim"}},
        {"tenant": "t2", "user": "u1", "session": "s1", "role": "user",
         "content": "a kettle in another tenant"},
    ]  # fmt: skip
    src = write_jsonl(tmp_path / "events.jsonl", rows)
    db = tmp_path / "k.db"
    done = kenning("ingest", str(src), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "ingested 1202 events (3 sessions, 2 tenants)" in done.stdout
    assert "events/s" in done.stdout
    assert "ingest" in done.stderr  # progress bar for a large file

    done = kenning("search", "broken kettle", "--db", str(db), "--tenant", "t1", "--json")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert hits[0]["content"] == "my kettle shattered on the floor"
    assert hits[0]["session"] == "s2" and hits[0]["metadata"] == {"speaker": "Kim"}
    assert all({"id", "session", "content", "score"} <= set(h) for h in hits)
    assert all(h["tenant"] == "t1" for h in hits)

    done = kenning("search", "espresso", "--db", str(db), "--tenant", "t1", "--user", "u2",
                   "--k", "5", "--json")  # fmt: skip
    assert done.returncode == 0
    assert [h["session"] for h in json.loads(done.stdout)] == ["s2"]


def test_search_reads_times_from_now(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"tenant": "t", "user": "u", "session": "old", "role": "user",
         "content": "I bought a new toaster for the kitchen today.", "at": "2026-02-20T18:00:00Z"},
        {"tenant": "t", "user": "u", "session": "fri", "role": "user",
         "content": "Picked up a blender on the way home.", "at": "2026-03-06T18:00:00Z"},
    ]  # fmt: skip
    db = tmp_path / "k.db"
    assert main(["ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), "--db", str(db)]) == 0
    capsys.readouterr()
    args = ["search", "What did I buy last Friday?", "--db", str(db), "--tenant", "t"]
    assert main([*args, "--now", "2026-03-11T20:00:00Z"]) == 0
    out = capsys.readouterr().out
    assert "(query read as: 'last friday' = 2026-03-05 00:00 to 2026-03-08 00:00 UTC)" in out
    assert out.index("blender") < out.index("toaster") and "time=0.200" in out
    assert main([*args, "--now", "next week"]) == 2
    assert "[invalid_input]" in capsys.readouterr().err


def test_bad_line_aborts_ingest_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "fine"},
            {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": ""},
        ],
    )
    db = tmp_path / "never.db"
    assert main(["ingest", str(src), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2" in err and "invalid_input" in err
    assert not db.exists()


def test_a_session_of_two_users_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: the second user's line went into the first user's session, and a conflict
    with the store in a later batch left the batches before it committed."""

    def line(user: str, session: str, text: str) -> dict[str, object]:
        return {"tenant": "acme", "user": user, "session": session, "role": "user",
                "content": text}  # fmt: skip

    db = tmp_path / "m.db"
    two = write_jsonl(
        tmp_path / "two.jsonl", [line("dana", "s1", "dana's order"), line("bob", "s1", "bob")]
    )
    assert main(["ingest", str(two), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "[scope_conflict]" in err and "two.jsonl:2" in err and "(line 1)" in err
    assert not db.exists()
    dana = write_jsonl(tmp_path / "dana.jsonl", [line("dana", "s1", "dana's order")])
    assert main(["ingest", str(dana), "--db", str(db)]) == 0
    capsys.readouterr()
    # Four good lines for carl, then bob in dana's stored session: batches of two would have
    # committed carl's lines before meeting bob's.
    late = write_jsonl(
        tmp_path / "late.jsonl",
        [*(line("carl", "c1", f"carl {n}") for n in range(4)), line("bob", "s1", "bob")],
    )
    assert main(["ingest", str(late), "--db", str(db), "--batch", "2"]) == 2
    err = capsys.readouterr().err
    assert "[scope_conflict]" in err and "late.jsonl" in err and "nothing was written" in err
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT count(*) FROM items").fetchone() == (1,)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("not json", "invalid_input"),
        ('["a list"]', "invalid_input"),
        ('{"tenant": "t", "user": "u", "role": "user", "content": "x"}', "invalid_input"),
        ('{"tenant": "t x", "user": "u", "session": "s", "role": "user", "content": "x"}',
         "invalid_scope"),
    ],
)  # fmt: skip
def test_ingest_errors_name_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, code: str
) -> None:
    src = tmp_path / "e.jsonl"
    src.write_text(line + "\n")
    assert main(["ingest", str(src), "--db", str(tmp_path / "e.db")]) == 2
    err = capsys.readouterr().err
    assert f"[{code}]" in err and "e.jsonl:1" in err


def test_search_errors_are_typed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "x", "--db", str(tmp_path / "missing.db"), "--tenant", "t"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_file_that_is_no_kenning_store_is_left_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text(
        json.dumps({"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "hi"})
        + "\n"
    )
    empty = tmp_path / "empty.db"
    empty.touch()
    assert main(["search", "hi", "--db", str(empty), "--tenant", "t"]) == 2
    assert "empty file, not a kenning database" in capsys.readouterr().err
    assert empty.stat().st_size == 0
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
        conn.commit()
    before = other.read_bytes()
    for args in (["search", "hi", "--tenant", "t"], ["ingest", str(events)]):
        assert main([*args, "--db", str(other)]) == 2
        err = capsys.readouterr().err
        assert "[invalid_input]" in err and "another program (tables: orders)" in err
    assert other.read_bytes() == before
    assert not Path(f"{other}-wal").exists()
    # An empty file is a new store to write into.
    assert main(["ingest", str(events), "--db", str(empty)]) == 0
    capsys.readouterr()
    assert main(["search", "hi", "--db", str(empty), "--tenant", "t", "--user", "u"]) == 0
    assert "hi" in capsys.readouterr().out
    main(["demo", "--db", str(tmp_path / "d.db")])
    capsys.readouterr()
    args = ["search", "x", "--db", str(tmp_path / "d.db"), "--tenant", "acme"]
    assert main([*args, "--filter", "color=red"]) == 2
    assert "[invalid_filter]" in capsys.readouterr().err
    assert main([*args, "--filter", "novalue"]) == 2
    assert main(["search", "x", "--db", str(tmp_path / "d.db"), "--tenant", "bad tenant"]) == 2
    assert "[invalid_scope]" in capsys.readouterr().err


def test_assemble_json_and_pins_commands(tmp_path: Path) -> None:
    rows = [
        {"tenant": "t", "user": "u", "session": "s", "role": "user",
         "content": "Please refund order #A-123: I paid €42.50 twice."},
        {"tenant": "t", "user": "u", "session": "s", "role": "assistant",
         "content": "I'll check the order and come back to you."},
    ]  # fmt: skip
    db = tmp_path / "k.db"
    assert (
        kenning("ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), "--db", str(db)).returncode
        == 0
    )
    system = tmp_path / "policy.txt"
    system.write_text("You are a support agent.")
    common = ["--db", str(db), "--tenant", "t", "--user", "u", "--session", "s"]
    done = kenning("assemble", *common, "--budget", "400", "--model", "gpt-4o",
                   "--system-file", str(system), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    window = json.loads(done.stdout)
    assert {"messages", "tiers", "tokens", "budget", "pressure", "degraded"} <= set(window)
    assert window["messages"][0] == {"role": "system", "content": "You are a support agent."}
    assert window["tokens"] <= window["budget"] == 400
    assert "42.50 EUR" in json.dumps(window) and window["tiers"]["pins"]["included"] >= 2

    done = kenning("pins", "set", *common, "--kind", "approval", "--key", "approval:APR-1",
                   "--value", "APR-1 approved by Dana")  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = kenning("pins", "close", *common, "--key", "approval:APR-1")
    assert done.returncode == 0 and "closed" in done.stdout
    done = kenning("pins", "list", *common, "--history", "--json")
    listed = json.loads(done.stdout)
    assert [p["version"] for p in listed if p["key"] == "approval:APR-1"] == [1, 2]
    assert any(p["key"] == "order_id:A-123" for p in listed)

    done = kenning("assemble", *common, "--budget", "5", "--model", "gpt-4o")
    assert done.returncode == 2 and "budget_error" in done.stderr
    done = kenning("pins", "close", *common, "--key", "nope")
    assert done.returncode == 2 and "not_found" in done.stderr
    done = kenning("pins", "set", *common, "--kind", "amount")
    assert done.returncode == 2 and "--amount and --currency" in done.stderr
    done = kenning("pins", "set", *common, "--kind", "approval")
    assert done.returncode == 2 and "--value" in done.stderr
    done = kenning("pins", "set", *common, "--kind", "amount", "--amount", "19.99")
    assert done.returncode == 2 and "--currency" in done.stderr
    done = kenning("pins", "set", *common, "--kind", "amount", "--key", "refund",
                   "--amount", "19.990", "--currency", "eur", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [pin] = json.loads(done.stdout)
    assert (pin["amount"], pin["currency"], pin["value"]) == ("19.990", "EUR", "19.990 EUR")


def _lines(rows: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def test_a_byte_order_mark_starts_the_file_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "caf\u00e9"}
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "marked.jsonl"
    plain.write_bytes(_lines([row]))
    marked.write_bytes(b"\xef\xbb\xbf" + _lines([row]).replace(b"\n", b"\r\n"))
    db = tmp_path / "k.db"
    assert main(["ingest", str(marked), "--db", str(db)]) == 0
    # The same event: the mark and the line ending are not part of it.
    assert main(["ingest", str(plain), "--db", str(db)]) == 0
    assert "skipped 1 already present" in capsys.readouterr().out
    inside = tmp_path / "inside.jsonl"
    inside.write_bytes(_lines([row]) + b"\xef\xbb\xbf" + _lines([row]))
    assert main(["ingest", str(inside), "--db", str(tmp_path / "other.db")]) == 2
    assert "inside.jsonl:2: not valid JSON" in capsys.readouterr().err


def test_bad_bytes_and_files_get_typed_errors_and_no_traceback(tmp_path: Path) -> None:
    row = {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "caf\u00e9"}
    good = tmp_path / "good.jsonl"
    good.write_bytes(_lines([row]))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(_lines([row]) + b'{"tenant": "t", "content": "caf\xe9"}\n')
    db = tmp_path / "k.db"
    done = kenning("ingest", str(bad), "--db", str(db))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "bad.jsonl:2: not valid UTF-8" in done.stderr and "[invalid_input]" in done.stderr
    assert not db.exists()
    assert kenning("ingest", str(good), "--db", str(db)).returncode == 0

    common = ["--db", str(db), "--tenant", "t", "--user", "u", "--session", "s"]
    latin1 = tmp_path / "policy.txt"
    latin1.write_bytes("Politique de caf\u00e9".encode("latin-1"))
    cases = {
        "--system-file not UTF-8": (["--system-file", str(latin1)], "not valid UTF-8"),
        "--tools-file missing": (["--tools-file", str(tmp_path / "nope.json")], "does not exist"),
        "--tools-file not JSON": (["--tools-file", str(_text(tmp_path, "[{"))], "not valid JSON"),
        "--tools-file not a list": (["--tools-file", str(_json(tmp_path, {}))], "JSON list"),
    }
    for name, (extra, message) in cases.items():
        done = kenning("assemble", *common, "--budget", "500", "--model", "gpt-4o", *extra)
        assert done.returncode == 2, name
        assert message in done.stderr and "Traceback" not in done.stderr, (name, done.stderr)

    folder = tmp_path / "folder"
    folder.mkdir()
    for args in (
        ["search", "x", "--db", str(folder), "--tenant", "t"],
        ["ingest", str(good), "--db", str(folder)],
        ["assemble", "--db", str(folder), "--tenant", "t", "--user", "u", "--session", "s",
         "--budget", "100", "--model", "gpt-4o"],
        ["pins", "list", "--db", str(folder), "--tenant", "t"],
    ):  # fmt: skip
        done = kenning(*args)
        assert done.returncode == 2 and "is a directory" in done.stderr, (args, done.stderr)
    done = kenning("ingest", str(folder), "--db", str(db))
    assert done.returncode == 2 and "is a directory" in done.stderr


def test_prompt_and_tool_files_may_be_pipes_and_carry_a_byte_order_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "order A-7"}
    events = tmp_path / "e.jsonl"
    events.write_bytes(_lines([row]))
    db = tmp_path / "k.db"
    assert main(["ingest", str(events), "--db", str(db)]) == 0
    capsys.readouterr()
    tools = tmp_path / "tools.json"
    tools.write_bytes(b"\xef\xbb\xbf" + json.dumps([]).encode())
    read, write = os.pipe()
    os.write(write, b"\xef\xbb\xbfYou are a support agent.")
    os.close(write)
    common = ["--db", str(db), "--tenant", "t", "--user", "u", "--session", "s"]
    try:
        args = ["assemble", *common, "--budget", "500", "--model", "gpt-4o", "--json"]
        args += ["--system-file", f"/dev/fd/{read}", "--tools-file", str(tools)]
        assert main(args) == 0
    finally:
        os.close(read)
    window = json.loads(capsys.readouterr().out)
    assert window["messages"][0] == {"role": "system", "content": "You are a support agent."}


def test_paths_the_system_refuses_get_a_typed_error(tmp_path: Path) -> None:
    long_name = str(tmp_path / ("a" * 5000))
    unreadable = "/proc/self/mem"  # exists, and reading it from the start fails (EIO)
    for args, message in (
        (["ingest", long_name, "--db", str(tmp_path / "k.db")], "File name too long"),
        (["search", "x", "--db", long_name, "--tenant", "t"], "File name too long"),
        (["ingest", unreadable, "--db", str(tmp_path / "k.db")], "cannot be read"),
    ):
        done = kenning(*args)
        assert done.returncode == 2, (args[0], done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert f"({len(long_name)} characters)" in done.stderr or unreadable in args
    assert not (tmp_path / "k.db").exists()


def _text(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "text.json"
    path.write_text(text)
    return path


def _json(tmp_path: Path, value: object) -> Path:
    path = tmp_path / "value.json"
    path.write_text(json.dumps(value))
    return path


def test_search_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    rows = [
        {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": f"espresso {i}"}
        for i in range(300)
    ]
    db = tmp_path / "k.db"
    assert (
        kenning("ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), "--db", str(db)).returncode
        == 0
    )
    exe = Path(sys.executable).with_name("kenning")
    done = subprocess.run(
        f"{exe} search espresso --db {db} --tenant t --k 300 --json | head -1",
        shell=True, capture_output=True, text=True, env=ENV, timeout=300,
    )  # fmt: skip
    assert done.stdout == "[\n"
    assert done.stderr == ""


def test_rerunning_an_import_adds_nothing_twice(tmp_path: Path) -> None:
    rows = [
        {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "ok"},
        {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "ok"},  # twice
        {"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "refund A-1",
         "id": "msg-3"},
    ]  # fmt: skip
    src = write_jsonl(tmp_path / "e.jsonl", rows)
    db = tmp_path / "k.db"
    first = kenning("ingest", str(src), "--db", str(db))
    assert first.returncode == 0 and "ingested 3 events" in first.stdout
    again = kenning("ingest", str(src), "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert "ingested 0 events" in again.stdout and "skipped 3 already present" in again.stdout
    assert "events/s" not in again.stdout  # a re-run that wrote nothing has no write rate
    more = write_jsonl(tmp_path / "more.jsonl", [*rows, {**rows[0], "content": "new"}])
    assert (
        "ingested 1 event (1 session, 1 tenant)"
        in kenning("ingest", str(more), "--db", str(db)).stdout
    )
    done = kenning("search", "ok", "--db", str(db), "--tenant", "t", "--json")
    assert [h["content"] for h in json.loads(done.stdout)].count("ok") == 2


def test_ctrl_c_during_ingest_says_what_was_committed_and_a_rerun_finishes(
    tmp_path: Path,
) -> None:
    rows = [
        {"tenant": "t", "user": "u", "session": f"s{i % 9}", "role": "user",
         "content": f"note {i} about the order of espresso beans and a kettle"}
        for i in range(6_000)
    ]  # fmt: skip
    src = write_jsonl(tmp_path / "e.jsonl", rows)
    db = tmp_path / "k.db"
    exe = Path(sys.executable).with_name("kenning")
    child = subprocess.Popen(
        [str(exe), "ingest", str(src), "--db", str(db), "--batch", "100", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not _committed(db):
        time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    said = re.search(r"interrupted: (\d+) events committed", err)
    assert said is not None and "Traceback" not in err, err
    assert 0 < int(said.group(1)) < 6_000
    assert _count(db) == int(said.group(1))
    done = kenning("ingest", str(src), "--db", str(db))
    assert done.returncode == 0 and f"skipped {said.group(1)} already present" in done.stdout
    assert _count(db) == 6_000


def _count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM items").fetchone()[0])


def _committed(db: Path) -> bool:
    try:
        return db.exists() and _count(db) >= 300
    except sqlite3.Error:
        return False


def test_unknown_models_warn_once_and_encoding_overrides(tmp_path: Path) -> None:
    rows = [{"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "hello"}]
    db = tmp_path / "k.db"
    assert (
        kenning("ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), "--db", str(db)).returncode
        == 0
    )
    common = ["--db", str(db), "--tenant", "t", "--user", "u", "--session", "s", "--budget", "300"]
    done = kenning("assemble", *common, "--model", "gpt4o", "--json", "--lexical-only")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("no exact tokenizer is known for model 'gpt4o'") == 1
    assert "did you mean 'gpt-4o'" in done.stderr and "approx" in done.stderr
    assert json.loads(done.stdout)["exact"] is False
    done = kenning("assemble", *common, "--encoding", "o200k_base", "--json", "--lexical-only")
    assert done.returncode == 0 and done.stderr == ""
    window = json.loads(done.stdout)
    assert window["exact"] is True and window["encoding"] == "o200k_base"
    done = kenning("assemble", *common)
    assert done.returncode == 2 and "--model" in done.stderr


def test_long_term_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long_term_flow(["--db", str(tmp_path / "k.db")], tmp_path, capsys)


def long_term_flow(where: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every long-term command on the memory *where* names (``--db FILE`` or ``--store URL``)."""
    rows = [
        {"tenant": "acme", "user": "dana", "session": "s1", "role": "user",
         "content": "I work at Netflix and I love jazz.", "at": "2026-01-05T10:00:00Z"},
        {"tenant": "acme", "user": "dana", "session": "s2", "role": "user",
         "content": "I moved to Lisbon. Forget that I like jazz.", "at": "2026-02-05T10:00:00Z"},
    ]  # fmt: skip
    assert main(["ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), *where]) == 0
    assert main(["consolidate", *where, "--json"]) == 0
    common = [*where, "--tenant", "acme", "--user", "dana"]
    capsys.readouterr()
    assert main(["facts", "list", *common, "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert {f["text"] for f in facts} == {"The user works at Netflix", "The user lives in Lisbon"}
    assert main(["facts", "list", *common, "--as-of", "2026-01-20T00:00:00Z", "--json"]) == 0
    then = {f["text"] for f in json.loads(capsys.readouterr().out)}
    assert then == {"The user works at Netflix", "The user loves jazz"}
    netflix = next(f["id"] for f in facts if "Netflix" in f["text"])
    assert main(["facts", "revoke", *common, "--id", netflix]) == 0
    capsys.readouterr()
    assert main(["facts", "history", *common, "--id", netflix, "--json"]) == 0
    assert [f["status"] for f in json.loads(capsys.readouterr().out)] == ["revoked"]
    assert main(["consent", "set", *common, "--share", "on"]) == 0
    capsys.readouterr()
    assert main(["profile", "export", *common]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["consent"]["share_across_sessions"] is True
    assert exported["biography"] == {"location": "Lisbon"} and len(exported["facts"]) == 3
    assert main(["stats", *where, "--tenant", "acme", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["records"] == {"event": 2, "fact": 3} and stats["facts"]["revoked"] == 2
    assert main(["hold", "add", *where, "--tenant", "acme", "--user", "dana",
                 "--reason", "case 7"]) == 0  # fmt: skip
    assert main(["profile", "erase", *common, "--yes"]) == 2
    assert "[legal_hold]" in capsys.readouterr().err
    assert main(["profile", "erase", *common]) == 2  # no --yes
    capsys.readouterr()
    assert main(["hold", "release", *where, "--tenant", "acme", "--user", "dana"]) == 0
    assert capsys.readouterr().out.strip() == "no legal holds on tenant acme"
    assert main(["profile", "erase", *common, "--yes"]) == 0
    assert main(["purge", *where, "--tenant", "acme", "--json"]) == 0
    assert main(["procedures", "list", *where, "--tenant", "acme"]) == 0
    assert main(["facts", "history", *common]) == 2


def test_tenant_policy_sets_retention_that_purge_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"tenant": "acme", "user": "dana", "session": "s1", "role": "user",
         "content": f"old note {i}", "at": "2020-01-01T00:00Z"} for i in range(3)
    ] + [{"tenant": "acme", "user": "dana", "session": "s2", "role": "user",
          "content": "a note from today"}]  # fmt: skip
    db = str(tmp_path / "k.db")
    assert main(["ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), "--db", db]) == 0
    tenant = ["--db", db, "--tenant", "acme"]
    assert main(["policy", "set", *tenant, "--fact-days", "abc"]) == 2
    assert "--fact-days must be a number of days" in capsys.readouterr().err
    assert main(["policy", "set", *tenant]) == 2  # nothing to set
    assert main(["policy", "show", *tenant, "--json"]) == 0
    assert (
        json.loads(capsys.readouterr().out)["episode_days"] is None
    )  # refused sets changed nothing
    assert main(["policy", "set", *tenant, "--episode-days", "30", "--share", "on", "--json"]) == 0
    policy = json.loads(capsys.readouterr().out)
    assert policy["episode_days"] == 30.0 and policy["share_across_sessions"] is True
    assert main(["purge", *tenant, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] >= 3
    assert _count(Path(db)) == 1


def test_ingest_reads_stdin(tmp_path: Path) -> None:
    line = json.dumps({"tenant": "t", "user": "u", "session": "s", "role": "user", "content": "hi"})
    exe = Path(sys.executable).with_name("kenning")
    db = str(tmp_path / "k.db")
    done = subprocess.run([str(exe), "ingest", "-", "--db", db], input=line + "\n",
                          capture_output=True, text=True, env=ENV, timeout=300)  # fmt: skip
    assert done.returncode == 0 and "ingested 1 event " in done.stdout, done.stderr
    bad = subprocess.run([str(exe), "ingest", "-", "--db", db], input="{not json\n",
                         capture_output=True, text=True, env=ENV, timeout=300)  # fmt: skip
    assert bad.returncode == 2 and "<stdin>:1" in bad.stderr and "Traceback" not in bad.stderr
    assert _count(Path(db)) == 1


def test_ingest_reads_the_new_events_for_facts_before_it_exits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"tenant": "acme", "user": "dana", "session": "s1", "role": "user",
             "content": "I work at Netflix."}]  # fmt: skip
    src = write_jsonl(tmp_path / "e.jsonl", rows)
    db = str(tmp_path / "k.db")
    common = ["--db", db, "--tenant", "acme", "--user", "dana"]
    assert main(["ingest", str(src), "--db", db, "--no-facts"]) == 0
    capsys.readouterr()
    assert main(["stats", "--db", db, "--tenant", "acme", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unread_events"] == 1
    assert main(["stats", "--db", db, "--tenant", "acme"]) == 0
    assert "events not yet read for facts: 1 (kenning consolidate" in capsys.readouterr().out
    assert main(["facts", "list", *common, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []

    more = write_jsonl(tmp_path / "more.jsonl", [{**rows[0], "session": "s2",
                                                  "content": "I live in Porto."}])  # fmt: skip
    assert main(["ingest", str(more), "--db", db]) == 0
    assert "read 2 sessions for facts" in capsys.readouterr().out  # the earlier run's too
    assert main(["facts", "list", *common, "--json"]) == 0
    texts = {f["text"] for f in json.loads(capsys.readouterr().out)}
    assert texts == {"The user works at Netflix", "The user lives in Porto"}
    assert main(["stats", "--db", db, "--tenant", "acme", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unread_events"] == 0


def test_the_policy_lists_the_tools_read_for_facts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"tenant": "acme", "user": "dana", "session": "s1", "role": "tool",
             "tool_name": "accounts", "content": "done",
             "tool_result": {"account_id": "ACC-99123"}}]  # fmt: skip
    db = str(tmp_path / "k.db")
    tenant = ["--db", db, "--tenant", "acme"]
    assert main(["ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), "--db", db]) == 0
    assert main(["facts", "list", *tenant, "--user", "dana", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == []  # no tool listed
    assert main(["policy", "set", *tenant, "--fact-tools", " , "]) == 2
    assert "--fact-tools takes tool names" in capsys.readouterr().err
    assert main(["policy", "set", *tenant, "--fact-tools", "accounts, crm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fact_tools"] == ["accounts", "crm"]
    later = [{**rows[0], "session": "s2"}]
    assert main(["ingest", str(write_jsonl(tmp_path / "l.jsonl", later)), "--db", db]) == 0
    capsys.readouterr()
    assert main(["facts", "list", *tenant, "--user", "dana", "--json"]) == 0
    [fact] = json.loads(capsys.readouterr().out)
    assert fact["value"] == "ACC-99123" and fact["subject"] == "tool:accounts"
    assert main(["policy", "set", *tenant, "--fact-tools", "none"]) == 0
    assert "fact_tools: none" in capsys.readouterr().out


def test_version_prints_the_package_version() -> None:
    from kenning.version import __version__

    done = kenning("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"kenning {__version__}"


def test_a_hit_names_its_user_beside_its_session(tmp_path: Path) -> None:
    from kenning import Memory, Scope

    with Memory.open(tmp_path / "m.db", embedder=None) as memory:
        memory.add_events(Scope("t", "dana", "s1"), [{"role": "user", "content": "hello there"}])
        hit = memory.search(Scope("t", "dana"), "hello").hits[0]
    assert (hit.user, hit.session) == ("dana", "s1")


def test_settings_commands_print_plain_text_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"tenant": "acme", "user": "dana", "session": "s1", "role": "user",
             "content": "I live in Lisbon"}]  # fmt: skip
    db = str(tmp_path / "k.db")
    assert main(["ingest", str(write_jsonl(tmp_path / "e.jsonl", rows)), "--db", db]) == 0
    capsys.readouterr()
    tenant = ["--db", db, "--tenant", "acme"]
    commands = [
        ["policy", "show", *tenant], ["consent", "show", *tenant, "--user", "dana"],
        ["stats", *tenant], ["policy", "set", *tenant, "--episode-days", "30"],
    ]  # fmt: skip
    for args in commands:
        assert main(args) == 0
        out = capsys.readouterr().out
        # No Python reprs: on/off, none, plain lists.
        for repr_text in ("True", "False", "None", "{", "[", "'"):
            assert repr_text not in out, (args, out)
        assert all(": " in line for line in out.strip().splitlines()), out
    assert main(["policy", "show", *tenant]) == 0
    shown = capsys.readouterr().out
    assert "episode_days: 30\n" in shown and "share_across_sessions: off" in shown
