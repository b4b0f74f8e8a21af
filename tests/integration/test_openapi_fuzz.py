"""Property tests against the server's own OpenAPI spec (schemathesis over hypothesis): every
operation, called with generated valid and invalid input, never answers 5xx, and every error
is a kenning JSON error body. Both modes run: input that fits the spec and input that breaks
it. A real server on loopback over a real SQLite file; lexical
search only, so generated text is not sent through the model (the model's paths are covered
by the conformance suite)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode

from kenning import Memory
from kenning.server import ServerSettings
from tests.served import ADMIN, Served, serve

#: The operations of the spec (every /v1 route, the admin routes, health, readiness, metrics).
OPERATIONS = 45


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
