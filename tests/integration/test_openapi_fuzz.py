"""Property tests against the server's own OpenAPI spec (schemathesis over hypothesis): every
operation, called with generated valid and invalid input, never answers 5xx, and every error
is a kenning JSON error body. Both modes run: input that fits the spec and input that breaks
it. A hostile pass then takes input that fits and breaks it the way attackers and broken
clients do: lone surrogates and NUL characters, JSON nested hundreds or thousands of levels
deep, and dates at the calendar's ends. A real server on loopback over a real SQLite file;
lexical search only, so generated text is not sent through the model (the model's paths are
covered by the conformance suite)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode

from kenning import Memory, TenantPolicy
from kenning.server import ServerSettings
from tests.served import ADMIN, Served, serve

#: The operations of the spec (every /v1 route, the admin routes, health, readiness, metrics).
OPERATIONS = 54


@pytest.fixture(scope="module")
def served_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    memory = Memory.open(path, embedder=None)
    try:
        # Limits far above what the fuzzer sends: it tests the API, not the rate limiter.
        limits = ServerSettings(admin_token=ADMIN, rate_per_s=1e6, burst=1_000_000)
        with serve(memory, limits) as served:
            yield served, served.key("acme")
    finally:
        memory.close()


@pytest.fixture
def api_schema(served_api: tuple[Served, str]) -> Any:
    return schemathesis.openapi.from_url(f"{served_api[0].url}/openapi.json")


def test_no_operation_answers_5xx(api_schema: Any, served_api: tuple[Served, str]) -> None:
    served, key = served_api
    operations = [result.ok() for result in api_schema.get_all_operations()]
    calls = 0
    runs = [(op, mode) for op in operations for mode in GenerationMode]
    for operation, mode in runs:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=30, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def call(case: Any) -> None:
            nonlocal calls
            calls += 1
            token = ADMIN if case.path.startswith("/v1/admin") else key
            response = case.call(base_url=served.url, headers={"Authorization": f"Bearer {token}"})
            assert response.status_code < 500, (case.method, case.path, response.text[:500])
            if response.status_code >= 400:
                body = response.json()
                assert set(body["error"]) >= {"code", "message", "status"}, body
                assert "Traceback" not in response.text

        try:
            call()
        except Unsatisfiable:
            # An operation without input (GET /healthz) has no invalid input to make.
            assert mode is GenerationMode.NEGATIVE, operation
    print(f"schemathesis: {len(operations)} operations, {calls} calls, no 5xx")
    assert len(operations) == OPERATIONS


# -- the hostile pass ----------------------------------------------------------------------

#: Characters no backend stores: lone surrogates travel only as JSON escapes, NUL anywhere.
UNSTORABLE = ("\ud800", "\udbff", "\udc00", "\udfff", "\x00")
#: The calendar's ends, as ISO text with and without offsets, and as epoch seconds.
EXTREME_DATES: tuple[str | float, ...] = (
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+14:00", "0001-01-01", "0999-12-31T23:59:59Z",
    "9999-12-31T23:59:59Z", "9999-12-31T23:59:59-14:00", "9999-12-31", "9000-01-01T00:00:00Z",
    -62135596800, 253402300799, -1e18, 1e18,
)  # fmt: skip
DATE_FIELDS = frozenset({"at", "now", "since", "until", "before", "as_of"})
_DEEP = "__kenning_deep__"

#: Per operation and kind of attack; each call is one request.
HOSTILE_EXAMPLES = 12


def _spots(value: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every value under *value*, depth first."""
    found: list[tuple[Any, Any]] = []
    stack = [value] if isinstance(value, dict | list) else []
    while stack:
        node = stack.pop()
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for key in keys:
            found.append((node, key))
            if isinstance(node[key], dict | list):
                stack.append(node[key])
    return found


def _with_unstorable(case: Any, data: st.DataObject) -> bool:
    """Put a lone surrogate or a NUL into strings of the body (NUL only in the URL, where
    a surrogate cannot be encoded); False if the request carries no string."""
    targets = [(c, k) for c, k in _spots(case.body) if isinstance(c[k], str)]
    targets += [(p, k) for p in (case.query, case.path_parameters) if p for k in p
                if isinstance(p[k], str)]  # fmt: skip
    if not targets:
        return False
    for container, key in data.draw(st.lists(st.sampled_from(targets), min_size=1, max_size=3)):
        if container is case.path_parameters:
            char = "%00"  # the path is sent as it is written: NUL escaped
        elif container is case.query:
            char = "\x00"
        else:
            char = data.draw(st.sampled_from(UNSTORABLE))
        text: str = container[key]
        at = data.draw(st.integers(0, len(text)))
        container[key] = text[:at] + char + text[at:]
    return True


def _with_deep_value(case: Any, data: st.DataObject) -> int:
    """Replace one value of the body by JSON nested past any limit; the depth, or 0 if the
    request has no body."""
    if not isinstance(case.body, dict | list):
        return 0
    spots = _spots(case.body)
    if not spots:
        return 0
    container, key = data.draw(st.sampled_from(spots))
    container[key] = _DEEP
    return data.draw(st.sampled_from((65, 254, 990, 3_000)) | st.integers(65, 5_000))


def _with_extreme_dates(case: Any, data: st.DataObject) -> bool:
    """Set every date field of the body and the query (or, without one, any value) to a date
    at the calendar's ends; False if the request has nothing to set."""
    if isinstance(case.body, dict) and isinstance(case.body.get("events"), list):
        # Generation often leaves an event's optional time out: every event gets one.
        for event in case.body["events"]:
            event.setdefault("at", None)
    spots = _spots(case.body)
    spots += [(case.query, k) for k in case.query or {}]
    dated = [(c, k) for c, k in spots if k in DATE_FIELDS]
    chosen = dated or ([data.draw(st.sampled_from(spots))] if spots else [])
    for container, key in chosen:
        date = data.draw(st.sampled_from(EXTREME_DATES))
        container[key] = str(date) if container is case.query else date
    return bool(chosen)


def _encode(body: Any, depth: int) -> bytes:
    """The body as JSON (lone surrogates as escapes, as any encoder writes them), with the
    deep value written as text: no encoder in this process nests that far."""
    text = json.dumps(body)
    if depth:
        deep = '{"a": ' * (depth // 2) + "[" * (depth - depth // 2) + "1"
        deep += "]" * (depth - depth // 2) + "}" * (depth // 2)
        text = text.replace(json.dumps(_DEEP), deep, 1)
    return text.encode()


Attack = Callable[[Any, st.DataObject], int | bool]
Send = Callable[[Any, int], httpx.Response]


#: One conversation of the fuzzed tenant (whose retention is on), so requests reach past the
#: checks of ids and owners into the code that stores and counts.
CHAT = {"tenant": "acme", "user": "dana", "session": "s1"}


def _attack(operation: Any, kind: str, attack: Attack, send: Send, calls: Counter[str]) -> None:
    """Run *attack* on *operation*'s valid input, HOSTILE_EXAMPLES times; no answer is 5xx."""
    fixed = {p.name: CHAT[p.name] for p in operation.path_parameters if p.name in CHAT}
    cases = operation.as_strategy(generation_mode=GenerationMode.POSITIVE, path_parameters=fixed)

    @given(case=cases, data=st.data())
    @settings(max_examples=HOSTILE_EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    def call(case: Any, data: st.DataObject) -> None:
        if isinstance(case.body, dict):
            case.body.update({k: CHAT[k] for k in ("user", "session") if k in case.body})
        done = attack(case, data)
        if not done:
            return
        response = send(case, int(done) if kind == "deep nesting" else 0)
        calls[kind] += 1
        where = (kind, case.method, case.path, response.text[:500])
        assert response.status_code < 500, where
        if response.status_code >= 400:
            assert set(response.json()["error"]) >= {"code", "message", "status"}, where
            assert "Traceback" not in response.text, where

    call()


@pytest.fixture
def hostile_schema(served_api: tuple[Served, str]) -> Any:
    """The spec with ASCII text without NUL: what the attacks add is all that is hostile."""
    schema = schemathesis.openapi.from_url(f"{served_api[0].url}/openapi.json")
    schema.config.generation.update(allow_x00=False, codec="ascii")
    return schema


def test_hostile_input_never_answers_5xx(
    hostile_schema: Any, served_api: tuple[Served, str]
) -> None:
    served, key = served_api
    # Retention counts from each event's time and from a purge's: both are attacked.
    served.memory.retention.set_policy("acme", TenantPolicy(episode_days=30, fact_days=30))
    attacks: dict[str, Attack] = {
        "surrogates and NUL": _with_unstorable,
        "deep nesting": _with_deep_value,
        "extreme dates": _with_extreme_dates,
    }
    calls: Counter[str] = Counter()
    with httpx.Client(base_url=served.url, timeout=60) as http:

        def send(case: Any, depth: int) -> httpx.Response:
            token = ADMIN if case.path.startswith("/v1/admin") else key
            headers = {"Authorization": f"Bearer {token}"}
            content = None
            if isinstance(case.body, dict | list):
                headers["Content-Type"] = "application/json"
                content = _encode(case.body, depth)
            return http.request(case.method, case.formatted_path, params=case.query,
                                headers=headers, content=content)  # fmt: skip

        for result in hostile_schema.get_all_operations():
            for kind, attack in attacks.items():
                _attack(result.ok(), kind, attack, send, calls)
    print(f"schemathesis hostile pass: {sum(calls.values())} calls, no 5xx: "
          + ", ".join(f"{kind} {n}" for kind, n in calls.items()))  # fmt: skip
    assert set(calls) == set(attacks) and min(calls.values()) >= 100, calls
