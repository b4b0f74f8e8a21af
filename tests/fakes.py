"""The one copy of each test double. Used only by pure unit tests of logic around a component,
never as the proof that a feature works (integration tests use the real model)."""

from __future__ import annotations

import hashlib
import itertools
import secrets
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np

from kenning.compaction.body import SummaryBody, SummaryItem, SummaryResult
from kenning.compaction.summarizer import SummaryRequest
from kenning.embed.base import Matrix
from kenning.errors import ModelUnavailable
from kenning.records import CompactionJob, Event, FactDraft, JobStatus, QueueStats, Scope


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


class MemoryJobQueue:
    """A compaction queue in a dict that implements :class:`~kenning.store.JobQueue` and no
    other store protocol: one open job per session, claims under a lease token, renew and
    finish only by the token's holder (the rules of the stores' queues)."""

    _OPEN = (JobStatus.PENDING, JobStatus.RUNNING)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._jobs: dict[int, CompactionJob] = {}
        self._until: dict[int, datetime] = {}

    def enqueue_compaction(
        self, scope: Scope, *, model: str, budget: int, reason: str, at: datetime
    ) -> CompactionJob | None:
        scope = scope.require_session()
        with self._lock:
            if any(j.scope == scope and j.status in self._OPEN for j in self._jobs.values()):
                return None
            job = CompactionJob(
                id=next(self._ids), scope=scope, model=model, budget=budget, reason=reason,
                status=JobStatus.PENDING, attempts=0, created_at=at,
            )  # fmt: skip
            self._jobs[job.id] = job
            return job

    def claim_compaction(self, *, at: datetime, lease_s: float) -> CompactionJob | None:
        with self._lock:
            for job in self._jobs.values():  # in insertion order: the oldest first
                expired = job.status is JobStatus.RUNNING and self._until[job.id] < at
                if job.status is JobStatus.PENDING or expired:
                    claimed = replace(
                        job, status=JobStatus.RUNNING, attempts=job.attempts + 1,
                        lease=secrets.token_hex(8),
                    )  # fmt: skip
                    self._jobs[job.id] = claimed
                    self._until[job.id] = _later(at, lease_s)
                    return claimed
            return None

    def renew_compaction(self, job_id: int, *, lease: str, at: datetime, lease_s: float) -> bool:
        with self._lock:
            if not self._holds(job_id, lease):
                return False
            self._until[job_id] = _later(at, lease_s)
            return True

    def finish_compaction(
        self,
        job_id: int,
        *,
        status: JobStatus,
        at: datetime,
        error: str | None = None,
        lease: str | None = None,
    ) -> bool:
        with self._lock:
            if job_id not in self._jobs or (lease is not None and not self._holds(job_id, lease)):
                return False
            self._jobs[job_id] = replace(self._jobs[job_id], status=status, error=error, lease=None)
            self._until.pop(job_id, None)
            return True

    def compaction_jobs(self, scope: Scope) -> list[CompactionJob]:
        with self._lock:
            return [j for j in self._jobs.values() if _within(j.scope, scope)]

    def pending_compactions(self) -> int:
        with self._lock:
            return sum(1 for j in self._jobs.values() if j.status in self._OPEN)

    def queue_stats(self) -> QueueStats:
        with self._lock:
            pending = [j for j in self._jobs.values() if j.status is JobStatus.PENDING]
            running = sum(1 for j in self._jobs.values() if j.status is JobStatus.RUNNING)
            oldest = min((j.created_at for j in pending), default=None)
            return QueueStats(pending=len(pending), running=running, oldest_pending=oldest)

    def _holds(self, job_id: int, lease: str) -> bool:
        job = self._jobs.get(job_id)
        return job is not None and job.status is JobStatus.RUNNING and job.lease == lease


def _later(at: datetime, seconds: float) -> datetime:
    return at + timedelta(seconds=seconds)


def _within(inner: Scope, outer: Scope) -> bool:
    """True when *inner* lies inside *outer* (same tenant; user and session where given)."""
    return (
        inner.tenant == outer.tenant
        and outer.user in (None, inner.user)
        and outer.session in (None, inner.session)
    )
