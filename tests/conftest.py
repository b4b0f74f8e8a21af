"""Shared fixtures: real stores (SQLite in memory and on disk, PostgreSQL) and the real
embedding model.

PostgreSQL is not optional: ``make test`` installs and starts it (``scripts/postgres-ci.sh``)
and a test that cannot reach it fails. ``KENNING_TEST_PG_URL`` names the database (its role
owns kenning's tables); ``KENNING_TEST_PG_APP_URL`` the same database logged in as the
application role, which the conformance suite uses.

Every test that reaches PostgreSQL (parametrized with the ``postgresql`` backend, or taking
``pg_url``) carries the ``postgres`` marker, so ``-m "not postgres"`` leaves it out; this
module imports the PostgreSQL store (and psycopg) only when such a test opens one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from kenning.embed.base import DelegatingEmbedder, Matrix
from kenning.embed.minilm import MiniLMEmbedder
from kenning.store.ann import AnnConfig
from kenning.store.protocol import Store
from kenning.store.sqlite.store import SQLiteStore

# Properties check results, not speed (speed is measured by `kenning bench`): a first example
# that loads an encoding or the model took over Hypothesis's 200 ms deadline on a busy
# machine and failed as flaky. Tests that set their own deadline keep it.
settings.register_profile("kenning", deadline=None)
settings.load_profile("kenning")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

BACKENDS = ("sqlite-memory", "sqlite-file", "sqlite-fts5", "sqlite-hnsw", "postgresql")
# Every partition gets an HNSW index at once (built in the calling thread) and every query,
# masked or not, goes through the graph: the conformance suite exercises the ANN path.
TINY_ANN = AnnConfig(enabled=True, min_rows=1, min_fraction=0.0, background=False)


class MemoEmbedder(DelegatingEmbedder):
    """The real MiniLM model with a per-test-session memo, so property tests stay fast.

    Vectors are the model's own; only repeated texts are served from the memo.
    """

    def __init__(self, inner: MiniLMEmbedder) -> None:
        super().__init__(inner)
        self._memo: dict[str, np.ndarray] = {}
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls += 1
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            self.texts_embedded += len(todo)
            for text, vec in zip(todo, self.inner.embed(todo), strict=True):
                self._memo[text] = vec
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts]).astype(np.float32)


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def real_embedder(minilm: MiniLMEmbedder) -> MemoEmbedder:
    return MemoEmbedder(minilm)


def open_store(
    backend: str, tmp_path: Path, *, reply_weight: float = 0.0, fresh: bool = True
) -> Store:
    """A store of *backend* (*fresh*: PostgreSQL emptied first; False opens a second store on
    the same database, as another process would)."""
    w = reply_weight
    if backend == "sqlite-memory":
        return SQLiteStore(":memory:", reply_weight=w)
    if backend == "sqlite-file":
        return SQLiteStore(tmp_path / "store.db", reply_weight=w)
    if backend == "sqlite-fts5":
        return SQLiteStore(tmp_path / "store.db", lexical="fts5", reply_weight=w)
    if backend == "sqlite-hnsw":
        return SQLiteStore(tmp_path / "store.db", ann=TINY_ANN, reply_weight=w)
    if backend == "postgresql":
        from kenning.store.postgres.store import PostgresStore
        from tests.pg import PG_APP_URL, fresh_postgres

        # Logged in as the application role: row-level security applies to every statement.
        if fresh:
            fresh_postgres()
        return PostgresStore(PG_APP_URL, ann=TINY_ANN, pool_size=4, reply_weight=w)
    if backend == "citus":
        from kenning.store.postgres.store import PostgresStore
        from tests.citus import citus_app_url, fresh_citus

        # The coordinator of a three-node cluster, as the application role.
        if fresh:
            fresh_citus()
        return PostgresStore(citus_app_url(), ann=TINY_ANN, pool_size=4, reply_weight=w)
    raise AssertionError(f"unknown backend {backend}")


@pytest.fixture
def citus_db() -> str:
    """The emptied database of the Citus cluster, as the coordinator URL of the tables' owner
    (skips without ``KENNING_TEST_CITUS_URL``, fails then under ``KENNING_REQUIRE_CITUS``)."""
    from tests.citus import fresh_citus

    return fresh_citus()


@pytest.fixture
def pg_url() -> str:
    """An emptied PostgreSQL database, as the URL of the role that owns its tables."""
    from tests.pg import PG_URL, fresh_postgres

    fresh_postgres()
    return PG_URL


def _backend_params(item: pytest.Item) -> list[str]:
    """*item*'s string parameters, also those inside tuple parameters (backend, mode)."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    flat = [v for p in params for v in (p if isinstance(p, tuple) else (p,))]
    return [value for value in flat if isinstance(value, str)]


def reaches_citus(item: pytest.Item) -> bool:
    """Whether *item* runs against the Citus cluster: a ``citus`` parameter or ``citus_db``."""
    fixtures = getattr(item, "fixturenames", ())
    return "citus" in _backend_params(item) or "citus_db" in fixtures


def reaches_postgres(item: pytest.Item) -> bool:
    """Whether *item* runs against PostgreSQL (one server or Citus): a ``postgresql`` or
    ``citus`` parameter, ``pg_url`` or ``citus_db``."""
    if "postgresql" in _backend_params(item) or reaches_citus(item):
        return True
    return "pg_url" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if reaches_postgres(item):
            item.add_marker(pytest.mark.postgres)
        if reaches_citus(item):
            item.add_marker(pytest.mark.citus)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = open_store(request.param, tmp_path)
    yield s
    s.close()
