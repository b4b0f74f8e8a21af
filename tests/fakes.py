"""The one copy of each test double. Used only by pure unit tests of logic around a component,
never as the proof that a feature works (integration tests use the real model)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np

from kenning.compaction.body import SummaryBody, SummaryItem, SummaryResult
from kenning.compaction.summarizer import SummaryRequest
from kenning.embed.base import Matrix
from kenning.errors import ModelUnavailable
from kenning.records import Event, FactDraft


class HashEmbedder:
    """Deterministic bag-of-words vectors: texts sharing words get a positive cosine."""

    model_id = "test-hash-bow/64"
    dimension = 64
    max_tokens = 256

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dimension] += 1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out


class DownEmbedder(HashEmbedder):
    """An embedder whose model is unavailable (failure injection for degraded mode)."""

    def embed(self, texts: Sequence[str]) -> Matrix:
        raise ModelUnavailable("the embedding model is down (test double)")


class RecordingSummarizer:
    """A deterministic summarizer: one fixed fact over the whole range; records each request."""

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.requests.append(request)
        item = SummaryItem(
            text="recorded summary", first_seq=request.first_seq, last_seq=request.last_seq
        )
        return SummaryResult(body=SummaryBody(facts=(item,)), summarizer=self.name)


class KillingSummarizer:
    """Kills its own process with SIGKILL when asked to summarize: the crash between the pin
    write and the summary write, for the crash test (runs in a child process)."""

    name = "killing"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")  # pragma: no cover


class BlockingSummarizer:
    """The real extractive summarizer behind a gate: it reads its range, then waits (an LLM
    taking its time) until the test sets ``release``; ``started`` tells when it is waiting."""

    name = "extractive"

    def __init__(self) -> None:
        from kenning.compaction.extractive import ExtractiveSummarizer

        self.inner = ExtractiveSummarizer()
        self.started = threading.Event()
        self.release = threading.Event()

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.started.set()
        assert self.release.wait(30)
        return self.inner.summarize(request)


class BlockingExtractor:
    """The real rule extractor behind a gate: it reads its batch, then waits (an LLM extractor
    taking its time) until the test sets ``release``; ``started`` tells when it is waiting."""

    name = "rules"

    def __init__(self) -> None:
        from kenning.longterm.service import RuleExtractor

        self.inner = RuleExtractor()
        self.started = threading.Event()
        self.release = threading.Event()

    def extract(self, events: Sequence[Event]) -> list[FactDraft]:
        self.started.set()
        assert self.release.wait(30)
        return self.inner.extract(events)
