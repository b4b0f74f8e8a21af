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
from typing import NamedTuple, TypeVar

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from kenning.embed.base import DelegatingEmbedder, Embedder, Matrix
from kenning.lease import LeasedPool
from kenning.memory import Memory
from kenning.records import QueueStats

__all__ = ["Metrics", "TimedEmbedder"]

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class _PoolNames(NamedTuple):
    """The four metric families of one leased queue and its pool: (name, help) each."""

    outcomes: tuple[str, str]
    depth: tuple[str, str]
    lag: tuple[str, str]
    busy: tuple[str, str]


_COMPACTION = _PoolNames(
    outcomes=("kenning_compactions", "Background compaction jobs by outcome"),
    depth=("kenning_queue_depth", "Compaction jobs in the queue"),
    lag=("kenning_queue_lag_seconds", "Age of the oldest pending compaction job"),
    busy=("kenning_compaction_workers_busy", "Compaction threads working now"),
)
_EXTRACTION = _PoolNames(
    outcomes=("kenning_extractions", "Sessions read for facts in the background, by outcome"),
    depth=("kenning_extraction_queue_depth", "Sessions with events not yet read for facts"),
    lag=("kenning_extraction_lag_seconds", "Age of the oldest event not yet read for facts"),
    busy=("kenning_extraction_workers_busy", "Fact-extraction threads working now"),
)
_Family = CounterMetricFamily | GaugeMetricFamily
_J = TypeVar("_J")


class _MemoryCollector(Collector):
    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def collect(self) -> Iterator[_Family]:
        pid = str(os.getpid())
        pressure = CounterMetricFamily(
            "kenning_pressure_events", "Windows assembled at each pressure level",
            labels=["level", "pid"],
        )  # fmt: skip
        for level in ("warn", "compact", "hard"):
            pressure.add_metric([level, pid], self._memory.context.pressure_events.get(level, 0))
        yield pressure
        store = self._memory.store
        yield from _pool(_COMPACTION, pid, self._memory.context.worker, store.queue_stats())
        yield from _pool(_EXTRACTION, pid, self._memory.extraction, store.extraction_stats())


def _pool(
    names: _PoolNames, pid: str, pool: LeasedPool[_J], stats: QueueStats
) -> Iterator[_Family]:
    """A background pool's jobs by outcome, its queue's depth and lag, and its busy threads."""
    outcomes = CounterMetricFamily(*names.outcomes, labels=["outcome", "pid"])
    outcomes.add_metric(["completed", pid], pool.completed)
    outcomes.add_metric(["failed", pid], pool.failed)
    outcomes.add_metric(["lost_lease", pid], pool.lost)
    yield outcomes
    depth = GaugeMetricFamily(*names.depth, labels=["state"])
    depth.add_metric(["pending"], stats.pending)
    depth.add_metric(["running"], stats.running)
    yield depth
    yield GaugeMetricFamily(*names.lag, value=stats.lag_s(datetime.now(UTC)))
    busy = GaugeMetricFamily(*names.busy, labels=["pid"])
    busy.add_metric([pid], pool.busy)
    yield busy


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
