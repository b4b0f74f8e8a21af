"""The ``kenning-export`` format as a pure core (kenning.records.archive) and the readers of
ChatGPT, Claude and OpenAI conversation files (kenning.archive.chats): what a line must hold,
and the typed error that names the first bad one."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from kenning.archive.chats import conversation_events, parse_conversations
from kenning.errors import InvalidArchive, InvalidInput
from kenning.records.archive import (
    FORMAT,
    VERSION,
    ArchiveHeader,
    ArchiveRecord,
    decode_lines,
    encode_header,
    encode_record,
)

CHATS = Path(__file__).parent / "data" / "chats"
AT = datetime(2026, 3, 2, 9, 30, 15, 123456, tzinfo=UTC)
HEADER = encode_header(ArchiveHeader("acme", None, AT, "0.1.0", ("minilm", 3), "minilm"))
PIN = {
    "id": "pin_1", "user_id": "dana", "session": "s1", "pin_kind": "amount",
    "key": "amount:EUR:40.00", "version": 2, "value": "40.00 EUR", "amount": Decimal("40.00"),
    "currency": "EUR", "status": "open", "source_event_id": None, "metadata": {"a": 1},
    "created_at": AT, "closed_at": None, "current": True,
}  # fmt: skip


def test_a_record_survives_its_line_with_types_intact() -> None:
    vec = np.array([0.5, -0.25, 1.0], dtype=np.float32)
    records = [ArchiveRecord("pin", PIN), ArchiveRecord("vector", {"hash": "h", "vec": vec})]
    header, back = decode_lines([HEADER, *(encode_record(r) for r in records)])
    assert header.model == ("minilm", 3) and header.tenant == "acme" and header.user is None
    assert header.created == AT and header.version == VERSION
    assert back[0] == records[0] and back[0].data["amount"] == Decimal("40.00")
    assert back[0].line == 2 and back[1].line == 3
    assert np.array_equal(back[1].data["vec"], vec)
    line = json.loads(encode_record(records[0]))
    assert line["kind"] == "pin" and line["created_at"] == "2026-03-02T09:30:15.123456+00:00"


def test_the_header_names_the_format_and_its_version() -> None:
    head = json.loads(HEADER)
    assert head["format"] == FORMAT == "kenning-export" and head["version"] == 1
    assert head["vectors"] == {"model": "minilm", "dimension": 3, "documents": "minilm"}


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        ([], 1, "no kenning-export header"),
        (['{"format": "other", "version": 1}'], 1, "not a kenning-export file"),
        ([HEADER.replace('"version": 1', '"version": 2')], 1, "version 2 is not readable"),
        ([HEADER, "{not json"], 2, "not JSON"),
        ([HEADER, "[1, 2]"], 2, "not a JSON object"),
        ([HEADER, "", '{"kind": "spaceship"}'], 3, "unknown record kind 'spaceship'"),
        ([HEADER, '{"kind": "hold", "user_id": "u", "session": "", "reason": "r"}'], 2,
         "missing created_at"),
        ([HEADER, json.dumps({"kind": "policy", "body": {}, "updated_at": AT.isoformat(),
                              "extra": 1})], 2, "unknown extra"),
        ([HEADER, json.dumps({"kind": "policy", "body": {}, "updated_at": "2026-01-01T00:00"})],
         2, "no UTC offset"),
        ([HEADER, json.dumps({"kind": "usage", "session": "s", "model": "m",
                              "input_tokens": "7", "output_tokens": 0, "calls": 1,
                              "cost": 0})], 2, "expected int"),
        ([HEADER, json.dumps({"kind": "vector", "hash": "h", "vec": "AAA"})], 2, "vec"),
        ([HEADER, json.dumps({"kind": "policy", "body": None, "updated_at": AT.isoformat()})],
         2, "expected a JSON value"),
        ([HEADER, json.dumps({"kind": "consent", "user_id": "no spaces",
                              "share_across_sessions": None, "sensitive_facts": None,
                              "updated_at": AT.isoformat()})], 2, "id 'no spaces' is invalid"),
        ([HEADER, encode_record(ArchiveRecord("pin", PIN)).replace('"open"', '"ajar"')], 2,
         "'ajar' is not one of closed, open"),
    ],
)  # fmt: skip
def test_bad_input_is_a_typed_error_naming_its_line(
    lines: list[str], line: int, words: str
) -> None:
    with pytest.raises(InvalidArchive, match=words) as caught:
        decode_lines(lines)
    assert caught.value.line == line and caught.value.code == "invalid_archive"
    assert isinstance(caught.value, InvalidInput) and isinstance(caught.value, ValueError)
    assert str(caught.value).startswith("line ") or line == 1


def test_chatgpt_follows_the_current_branch_and_keeps_each_message_time() -> None:
    convs = parse_conversations((CHATS / "chatgpt_conversations.json").read_text())
    assert [c.title for c in convs] == ["Kettle refund", "Trip to Porto"]
    first = convs[0]
    assert first.session == "chatgpt-6795c2a1-0b7e-8000-9b1a-3f2b0c9e1d11"
    # The hidden system node and the regenerated answer off the current branch are left out.
    assert [(m.role, m.key) for m in first.messages] == [
        ("user", "n2"),
        ("assistant", "n3"),
        ("user", "n4"),
    ]
    assert first.messages[1].at == datetime.fromtimestamp(1767225620.25, UTC)
    assert "39.90 EUR" in first.messages[1].content


def test_claude_reads_text_or_its_content_blocks() -> None:
    (conv,) = parse_conversations((CHATS / "claude_conversations.json").read_text(), "claude")
    assert conv.session == "claude-0f3c1a52-5d7e-4c1b-9a0e-2b7c6d5e4f31"
    assert conv.title == "Jazz records"
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert "Sidewinder" in conv.messages[1].content
    assert conv.messages[0].at == datetime(2026, 1, 3, 18, 0, 5, tzinfo=UTC)


def test_openai_messages_as_a_list_or_json_lines_make_one_conversation() -> None:
    (listed,) = parse_conversations((CHATS / "openai_messages.json").read_text())
    assert [m.role for m in listed.messages] == ["system", "user", "assistant"]
    assert listed.messages[0].at is None
    assert listed.messages[2].content.startswith("The Pestana Vintage")
    (lines,) = parse_conversations((CHATS / "openai_messages.jsonl").read_text(), "openai")
    assert lines.messages[1].at == datetime.fromtimestamp(1767400030, UTC)
    # The same file always names the same session (a second import finds its messages).
    again = parse_conversations((CHATS / "openai_messages.jsonl").read_text())
    assert again[0].session == lines.session


def test_conversations_become_sessions_of_the_user_with_idempotency_keys() -> None:
    convs = parse_conversations((CHATS / "chatgpt_conversations.json").read_text())
    items = conversation_events(convs, tenant="acme", user="dana")
    assert len(items) == 5 and {s.session for s, _ in items} == {c.session for c in convs}
    assert all(s.user == "dana" and e.idempotency_key for s, e in items)
    assert items[0][1].metadata == {"title": "Kettle refund"}


@pytest.mark.parametrize(
    ("text", "fmt", "words"),
    [
        ("[]", None, "non-empty JSON list"),
        ('[{"x": 1}]', None, "cannot tell the file's format"),
        ((CHATS / "claude_conversations.json").read_text(), "chatgpt", "looks like claude"),
        ('[{"role": "wizard", "content": "hi"}]', None, "unknown role 'wizard'"),
        ('{"role": "user", "content": "a"}\n{oops', None, "line 2"),
        ('[{"uuid": "x", "chat_messages": [{"sender": "human", "text": "hi",'
         ' "created_at": "yesterday"}]}]', None, "not epoch seconds or ISO 8601"),
    ],
)  # fmt: skip
def test_a_bad_conversation_file_is_a_typed_error(text: str, fmt: str | None, words: str) -> None:
    with pytest.raises(InvalidArchive, match=words):
        parse_conversations(text, fmt)
