"""The conformance suites run on every backend, the Citus cluster included."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.store.protocol import Store
from tests.conftest import BACKENDS, open_store

CONFORMANCE_BACKENDS = (*BACKENDS, "citus")
"""Every backend, the three-node Citus cluster (tests/citus.py) as the last."""


@pytest.fixture(params=CONFORMANCE_BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = open_store(request.param, tmp_path)
    yield s
    s.close()
