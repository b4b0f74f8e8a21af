"""Prometheus metrics of one server process, in a registry of its own (nothing global).

Request latency is observed by the middleware; pressure events, compactions, fact
extractions, and both background queues' depth and lag are read from the memory when
``/metrics`` is scraped; embedding time is observed by the embedder wrapper the server opens
its memory with. With ``--workers N`` each process answers for itself (``/metrics`` shows the
process that served the scrape, labelled by ``pid``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from kenning.embed.base import DelegatingEmbedder, Embedder, Matrix
from kenning.memory import Memory

__all__ = ["Metrics", "TimedEmbedder"]

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class _MemoryCollector(Collector):
    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        pid = str(os.getpid())
        yield from self._compaction(pid)
        yield from self._extraction(pid)

    def _compaction(self, pid: str) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        """Windows by pressure level, compaction jobs by outcome, the queue and the pool."""
        pressure = CounterMetricFamily(
            "kenning_pressure_events", "Windows assembled at each pressure level",
            labels=["level", "pid"],
        )  # fmt: skip
        for level in ("warn", "compact", "hard"):
            pressure.add_metric([level, pid], self._memory.context.pressure_events.get(level, 0))
        yield pressure
        worker = self._memory.context.worker
        done = CounterMetricFamily(
            "kenning_compactions", "Background compaction jobs by outcome",
            labels=["outcome", "pid"],
        )  # fmt: skip
        done.add_metric(["completed", pid], worker.completed)
        done.add_metric(["failed", pid], worker.failed)
        done.add_metric(["lost_lease", pid], worker.lost)
        yield done
        stats = self._memory.store.queue_stats()
        depth = GaugeMetricFamily(
            "kenning_queue_depth", "Compaction jobs in the queue", labels=["state"]
        )
        depth.add_metric(["pending"], stats.pending)
        depth.add_metric(["running"], stats.running)
        yield depth
        yield GaugeMetricFamily(
            "kenning_queue_lag_seconds", "Age of the oldest pending compaction job",
            value=stats.lag_s(datetime.now(UTC)),
        )  # fmt: skip
        busy = GaugeMetricFamily(
            "kenning_compaction_workers_busy", "Compaction threads working now", labels=["pid"]
        )
        busy.add_metric([pid], worker.busy)
        yield busy

    def _extraction(self, pid: str) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        """Fact extraction: sessions read by outcome, the unread queue and the pool."""
        readers = self._memory.extraction
        extracted = CounterMetricFamily(
            "kenning_extractions", "Sessions read for facts in the background, by outcome",
            labels=["outcome", "pid"],
        )  # fmt: skip
        extracted.add_metric(["completed", pid], readers.completed)
        extracted.add_metric(["failed", pid], readers.failed)
        extracted.add_metric(["lost_lease", pid], readers.lost)
        yield extracted
        pending = self._memory.store.extraction_stats()
        waiting = GaugeMetricFamily(
            "kenning_extraction_queue_depth", "Sessions with events not yet read for facts",
            labels=["state"],
        )  # fmt: skip
        waiting.add_metric(["pending"], pending.pending)
        waiting.add_metric(["running"], pending.running)
        yield waiting
        yield GaugeMetricFamily(
            "kenning_extraction_lag_seconds", "Age of the oldest event not yet read for facts",
            value=pending.lag_s(datetime.now(UTC)),
        )  # fmt: skip
        reading = GaugeMetricFamily(
            "kenning_extraction_workers_busy", "Fact-extraction threads working now",
            labels=["pid"],
        )  # fmt: skip
        reading.add_metric([pid], readers.busy)
        yield reading


class Metrics:
    """The process's metrics registry and the instruments kenning observes into."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Histogram(
            "kenning_request_seconds", "Request latency by route",
            ["method", "route", "status"], registry=self.registry, buckets=_BUCKETS,
        )  # fmt: skip
        self.embed = Histogram(
            "kenning_embed_seconds", "Time to embed one batch of texts",
            registry=self.registry, buckets=_BUCKETS,
        )  # fmt: skip

    def watch(self, memory: Memory) -> None:
        """Read the memory's counters and queue at each scrape."""
        self.registry.register(_MemoryCollector(memory))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class TimedEmbedder(DelegatingEmbedder):
    """An embedder that observes each batch's time into ``kenning_embed_seconds``."""

    def __init__(self, inner: Embedder, histogram: Histogram) -> None:
        super().__init__(inner)
        self._histogram = histogram

    def embed(self, texts: Sequence[str]) -> Matrix:
        start = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self._histogram.observe(time.perf_counter() - start)
