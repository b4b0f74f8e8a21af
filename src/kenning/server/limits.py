"""Per-tenant request rates and storage quotas (pure bookkeeping, thread-safe).

The rate is a token bucket per tenant in each worker process: with ``--workers N`` a tenant
may reach up to N times the rate when its requests spread over every process. Quotas read the
store's usage, cached for a second so a burst of appends costs one count.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from kenning.errors import QuotaExceeded, RateLimited
from kenning.records import TenantUsage

__all__ = ["QuotaGuard", "RateLimiter"]


class RateLimiter:
    """A token bucket per tenant: *rate* tokens a second, at most *burst* saved up."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, tenant: str) -> None:
        """Spend one token of *tenant*, or raise ``RateLimited`` with when one is back."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(tenant, (self._burst, now))
            tokens = min(self._burst, tokens + (now - last) * self._rate)
            if tokens < 1.0:
                self._buckets[tenant] = (tokens, now)
                wait = (1.0 - tokens) / self._rate
                raise RateLimited(
                    f"tenant {tenant!r} is over its rate of {self._rate:g} requests/s",
                    retry_after=float(max(1, math.ceil(wait))),
                )
            self._buckets[tenant] = (tokens - 1.0, now)


class QuotaGuard:
    """Refuses writes that would take a tenant past its stored events or characters."""

    def __init__(
        self,
        usage: Callable[[str], TenantUsage],
        *,
        max_events: int | None,
        max_chars: int | None,
        ttl_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._usage = usage
        self._max_events = max_events
        self._max_chars = max_chars
        self._ttl = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, TenantUsage]] = {}

    @property
    def enabled(self) -> bool:
        return self._max_events is not None or self._max_chars is not None

    def check(self, tenant: str, *, events: int, chars: int) -> None:
        """Raise ``QuotaExceeded`` if adding *events* of *chars* would pass a limit."""
        if not self.enabled:
            return
        now = self._clock()
        with self._lock:
            cached = self._cache.get(tenant)
        if cached is None or now - cached[0] > self._ttl:
            cached = (now, self._usage(tenant))
            with self._lock:
                self._cache[tenant] = cached
        used = cached[1]
        if self._max_events is not None and used.events + events > self._max_events:
            raise QuotaExceeded(
                f"tenant {tenant!r} stores {used.events} events; {events} more would pass its "
                f"quota of {self._max_events}: erase old sessions (forget) or raise the quota"
            )
        if self._max_chars is not None and used.content_chars + chars > self._max_chars:
            raise QuotaExceeded(
                f"tenant {tenant!r} stores {used.content_chars} characters; {chars} more would "
                f"pass its quota of {self._max_chars}"
            )

    def added(self, tenant: str, *, events: int, chars: int) -> None:
        """Count a write in the cached usage until the next refresh."""
        with self._lock:
            cached = self._cache.get(tenant)
            if cached is not None:
                used = cached[1]
                self._cache[tenant] = (
                    cached[0],
                    TenantUsage(used.events + events, used.content_chars + chars),
                )

    def forgot(self, tenant: str) -> None:
        with self._lock:
            self._cache.pop(tenant, None)
