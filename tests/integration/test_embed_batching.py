"""The server's embedding queue: concurrent callers share model calls, each gets its own
vectors, one caller's failure stays its own, and closing embeds what is queued. The real
model throughout; the served test runs ``kenning serve`` as its own process."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest

from kenning import Client, Memory, Scope
from kenning.embed.base import DelegatingEmbedder, Matrix
from kenning.embed.batching import BatchingEmbedder
from kenning.embed.minilm import MiniLMEmbedder
from kenning.errors import InvalidInput
from kenning.settings import Settings
from kenning.store.open import open_store
from kenning.store.protocol import Store
from kenning.store.sqlite.store import SQLiteStore
from tests.processes import kenning, serving

TEXTS = [
    [f"order A-{n} of customer {n} arrived broken", f"please refund {n} euros"]
    for n in range(12)
] + [["a much longer message about the delivery of a standing desk " * (1 + n % 5)]
     for n in range(12)]  # fmt: skip


class _Slow(DelegatingEmbedder):
    """The real model, each call held back a little, so callers queue behind it."""

    def embed(self, texts: Sequence[str]) -> Matrix:
        time.sleep(0.05)
        return self.inner.embed(texts)


class _Poisoned(DelegatingEmbedder):
    """The real model, refusing any call that holds the text ``poison``."""

    def embed(self, texts: Sequence[str]) -> Matrix:
        if "poison" in texts:
            raise InvalidInput("this text cannot be embedded")
        return self.inner.embed(texts)


def _alone(minilm: MiniLMEmbedder, texts: list[str]) -> Matrix:
    return minilm.embed(texts)


def test_concurrent_callers_share_calls_and_get_their_own_vectors(
    minilm: MiniLMEmbedder,
) -> None:
    batching = BatchingEmbedder(_Slow(minilm), window_s=0.005, max_texts=64)
    try:
        with ThreadPoolExecutor(len(TEXTS)) as pool:
            got = list(pool.map(batching.embed, TEXTS))
    finally:
        batching.close()
    for texts, vectors in zip(TEXTS, got, strict=True):
        assert vectors.shape == (len(texts), 384)
        np.testing.assert_allclose(vectors, _alone(minilm, texts), atol=2e-5)
    assert batching.texts == sum(len(t) for t in TEXTS)
    assert batching.calls < len(TEXTS) / 2


def test_a_failing_caller_does_not_fail_the_others(minilm: MiniLMEmbedder) -> None:
    batching = BatchingEmbedder(_Slow(_Poisoned(minilm)), window_s=0.02, max_texts=64)
    requests = [["fine text one"], ["poison"], ["fine text two", "and three"]]
    try:
        with ThreadPoolExecutor(3) as pool:
            futures = [pool.submit(batching.embed, texts) for texts in requests]
            outcomes = [f.exception() or f.result() for f in futures]
    finally:
        batching.close()
    assert isinstance(outcomes[1], InvalidInput)
    for i in (0, 2):
        assert isinstance(outcomes[i], np.ndarray)
        np.testing.assert_allclose(outcomes[i], _alone(minilm, requests[i]), atol=2e-5)


def test_close_embeds_what_is_queued(minilm: MiniLMEmbedder) -> None:
    batching = BatchingEmbedder(_Slow(minilm), window_s=0, max_texts=2)
    results: dict[int, Matrix] = {}

    def call(i: int) -> None:
        results[i] = batching.embed(TEXTS[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.02)  # the first call runs; the others wait in the queue
    batching.close()
    for thread in threads:
        thread.join(30)
    assert sorted(results) == list(range(8))
    for i, vectors in results.items():
        np.testing.assert_allclose(vectors, _alone(minilm, TEXTS[i]), atol=2e-5)
    after = batching.embed(["after close"])  # inline once closed
    np.testing.assert_allclose(after, _alone(minilm, ["after close"]), atol=2e-5)


def test_bad_settings_are_refused(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(InvalidInput):
        BatchingEmbedder(minilm, window_s=-1)
    with pytest.raises(InvalidInput):
        BatchingEmbedder(minilm, max_texts=0)
    with pytest.raises(InvalidInput):
        BatchingEmbedder(minilm).embed("one string")


def _vectors(store: Store, scope: Scope) -> dict[str, Matrix]:
    exported = store.export_records(scope, vectors=True)
    return {
        str(r.data["hash"]): np.asarray(r.data["vec"], dtype=np.float32)
        for r in exported.records
        if r.kind == "vector"
    }


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_served_process_stores_each_request_its_own_vectors(
    tmp_path: Path, minilm: MiniLMEmbedder, backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        location, where = str(tmp_path / "served.db"), ["--db", str(tmp_path / "served.db")]
    else:
        location = request.getfixturevalue("pg_url")
        where = ["--store", location]
    made = subprocess.run(kenning("keys", "create", *where, "--tenant", "acme"),
                          capture_output=True, text=True, check=True)  # fmt: skip
    key = json.loads(made.stdout)["key"]
    scopes = [Scope("acme", f"u{i}", f"s{i}") for i in range(len(TEXTS))]
    with serving(*where, "--no-mcp", "--embed-window-ms", "20",
                 log=tmp_path / "server.log") as served:  # fmt: skip

        def append(i: int) -> None:
            with Client(served.url, api_key=key) as client:
                events = [{"role": "user", "content": text} for text in TEXTS[i]]
                written = client.add_events(scopes[i], events)
                assert len(written) == len(events)  # acknowledged after the commit

        with ThreadPoolExecutor(len(scopes)) as pool:
            list(pool.map(append, range(len(scopes))))
        scraped = httpx.get(f"{served.url}/metrics").text
    # One model call for the warm-up, then fewer calls than requests: they shared calls.
    calls = next(float(line.split()[-1]) for line in scraped.splitlines()
                 if line.startswith("kenning_embed_seconds_count"))  # fmt: skip
    assert calls - 1 < len(scopes) / 2
    # The same events written one call at a time, the model alone: the same vectors.
    reference = Memory(
        SQLiteStore(tmp_path / "alone.db"), embedder=minilm,
        settings=Settings(defer_vectors=False),
    )  # fmt: skip
    served_store = open_store(location)
    try:
        for i, scope in enumerate(scopes):
            reference.add_events(scope, [{"role": "user", "content": t} for t in TEXTS[i]])
            user = Scope(scope.tenant, scope.user)
            mine, alone = _vectors(served_store, user), _vectors(reference.store, user)
            assert mine and sorted(mine) == sorted(alone)
            for digest, vector in alone.items():
                np.testing.assert_allclose(mine[digest], vector, atol=2e-5)
    finally:
        reference.close()
        served_store.close()
